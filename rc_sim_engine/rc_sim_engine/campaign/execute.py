"""One campaign run: build it as ``rcsim run`` / ``rcsim track`` would, simulate, measure.

:func:`execute_run` is what a worker process (local pool or Dask) calls; it returns a plain
:class:`Outcome` (picklable) and never raises for a failing run: a user error or a degenerate
simulation becomes ``status='error'`` with its one-line message. Every random generator of the
run is seeded from it (:attr:`~rc_sim_engine.campaign.expand.Run.seed`): the simulator's lidar
errors and the ``rng`` a user controller or metric receives in its :class:`RunContext`.

User code: ``driver.controller: module:callable`` is a factory ``make(ctx) -> controller`` with
``controller(t, obs) -> (linear_x, angular_z)`` (``obs``: :class:`~rc_sim_engine.sim.sim_config.
Observation`, the scan included); a user metric is ``fn(result, ctx) -> float``. Modules are
imported with the spec's folder first on ``sys.path``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import importlib
import math
import os
from pathlib import Path
import sys
import tempfile
from typing import Any

import numpy as np

from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_engine.campaign.expand import Run, canonical_json
from rc_sim_engine.campaign.factors import lidar_config, resolve_path, vehicle_override_file
from rc_sim_engine.campaign.spec import CampaignSpec
from rc_sim_engine.sim.run_setup import world_source

__all__ = ['Outcome', 'RunContext', 'execute_run', 'import_callable', 'passed']


@dataclass
class RunContext:
    """What user code gets: the run, its seeded generator, the car and the world."""

    run_id: str
    seed: int
    factors: dict[str, Any]
    params: Any
    world: Any
    rng: np.random.Generator


@dataclass
class Outcome:
    """A run's result: ``status`` ok | error, metrics (None: not applicable / missing), the
    error line, the wall time [s] and whether a bag was kept."""

    run_id: str
    status: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    error: str = ''
    wall_s: float = 0.0
    bag: str = ''


def import_callable(name: str, folder: Path) -> Callable[..., Any]:
    """``module:callable`` imported with ``folder`` first on ``sys.path``; one ConfigError line
    when it cannot be."""
    module_name, _, attr = name.partition(':')
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    _forget_other_copies(module_name.split('.')[0], folder)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(f'{name}: cannot import {module_name!r} ({type(exc).__name__}: '
                          f'{exc})'.splitlines()[0]) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ConfigError(f'{name}: {module_name!r} has no callable {attr!r}')
    return fn  # type: ignore[no-any-return]


def _forget_other_copies(top: str, folder: Path) -> None:
    """Drop an already imported module ``top`` (and its submodules) that is not the one in the
    spec's ``folder``, so that two campaigns in one process with a ``drive.py`` each import
    their own."""
    here = [folder / f'{top}.py', folder / top / '__init__.py']
    mine = {p.resolve() for p in here if p.is_file()}
    loaded = sys.modules.get(top)
    origin = getattr(loaded, '__file__', None)
    if not mine or loaded is None or (origin is not None and Path(origin).resolve() in mine):
        return
    for name in [m for m in sys.modules if m == top or m.startswith(top + '.')]:
        del sys.modules[name]


#: Loaded worlds and vehicle parameters of this worker process (frozen objects), by their
#: files and modification times: the runs of a campaign share a few of each.
_LOADED: dict[tuple[Any, ...], Any] = {}


def _stamp(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _params(spec: CampaignSpec, values: dict[str, Any], tmp: Path) -> Any:
    from rc_sim_description.params import load_vehicle_params

    files = values.get('params')
    paths = [resolve_path(spec.folder, f) for f in
             ([] if files is None else files if isinstance(files, list) else [files])]
    key = ('params', *((p, _stamp(p)) for p in paths),
           canonical_json(values.get('vehicle') or {}))
    if key not in _LOADED:
        if values.get('vehicle'):
            paths.append(str(vehicle_override_file(values['vehicle'], tmp)))
        _LOADED[key] = load_vehicle_params(overrides=paths)
    return _LOADED[key]


def _world(spec: CampaignSpec, values: dict[str, Any]) -> tuple[Any, tuple[float, float, float]]:
    """(world, spawn pose) as ``rcsim run`` loads them (cached per process)."""
    name = world_source(resolve_path(spec.folder, str(values.get('world', 'basic_track'))))
    key = ('world', name, _stamp(name))
    if key not in _LOADED:
        _LOADED[key] = _load_world(name)
    world, spawn = _LOADED[key]
    return world, spawn


def _load_world(name: str) -> tuple[Any, tuple[float, float, float]]:
    from rc_sim_engine.sim.run_setup import load_any_world

    loaded = load_any_world(name)  # SDF elements the engine ignores: not repeated per run
    return loaded.world, loaded.spawn


def _sim_config(spec: CampaignSpec, values: dict[str, Any], seed: int, **extra: Any) -> Any:
    from rc_sim_engine.sim.simulator import SimConfig

    return SimConfig(model=values.get('model', 'single_track'),
                     lidar_errors=lidar_config(values.get('lidar_errors'), spec.folder),
                     seed=seed, **extra)


def _simulate(spec: CampaignSpec, run: Run, ctx: RunContext, spawn: tuple[float, float, float],
              sink: Any = None) -> tuple[Any, Any]:
    """(SimResult, tracking evaluation or None) of the run's driver."""
    from rc_sim_engine.sim.simulator import Simulator

    values, driver = run.values, spec.driver
    given = values.get('start')
    if driver.kind == 'tracker':
        from rc_sim_engine.scenarios.tracking import run_tracking

        settings = dict(driver.settings)
        settings['trajectory_type'] = values.get('trajectory', 'lemniscate')
        settings['controller'] = driver.controller
        if driver.duration_s is not None:
            settings['duration'] = driver.duration_s
        tracked = run_tracking(ctx.params, ctx.world, settings,
                               model=values.get('model', 'single_track'),
                               start=tuple(given) if given else spawn,
                               control_rate=driver.control_rate_hz, seed=ctx.seed)
        return tracked.result, tracked.evaluation
    if driver.kind == 'scenario':
        from rc_sim_engine.sim.run_setup import (
            RunSpec,
            choose_start_pose,
            command_sequence,
            played_part,
        )

        scenario = RunSpec(scenario=resolve_path(spec.folder, str(values['scenario'])),
                           duration_s=driver.duration_s)
        seq = command_sequence(scenario, ctx.params)  # alias notes: not repeated per run
        world_name = str(values.get('world', 'basic_track'))
        start, _ = choose_start_pose(
            ctx.world, ctx.params, played_part(seq, driver.duration_s), spawn,
            seq.name or 'scenario', world_name,
            given=(float(given[0]), float(given[1]), float(given[2])) if given else None)
        sim = Simulator(ctx.params, ctx.world, _sim_config(spec, values, ctx.seed), start=start)
        return sim.play(seq, driver.duration_s, sink=sink), None
    factory = import_callable(str(driver.controller), spec.folder)
    controller = factory(ctx)
    config = _sim_config(spec, values, ctx.seed, command_rate=driver.control_rate_hz,
                         mapper_mode=driver.mode)
    pose = (float(given[0]), float(given[1]), float(given[2])) if given else spawn
    sim = Simulator(ctx.params, ctx.world, config, start=pose)
    return sim.run(float(driver.duration_s or 0.0), controller, sink=sink), None


def _min_wall_distance(result: Any, ctx: RunContext) -> float | None:
    from rc_sim_engine.world.collision import WorldArrays, clearance, footprint_from_params

    odom = result.streams['odom']
    if not len(odom.t):
        return None
    gap = clearance(odom['x'][:, 0], odom['y'][:, 0], odom['yaw'][:, 0],
                    footprint_from_params(ctx.params), WorldArrays.from_world(ctx.world))
    return max(gap, 0.0) if math.isfinite(gap) else None


def _progress(spec: CampaignSpec, values: dict[str, Any], result: Any, start: Any
              ) -> tuple[Any, Any, float] | None:
    """(t [s], net arc length [m] at t, lap length [m]) along the centre line of a track map
    (None for SDF worlds): the odometry projected on the line, steps unwrapped modulo the lap
    length."""
    from rc_sim_engine.world.centerline import extract_centerline, load_centerline_csv
    from rc_sim_engine.world.track_map import is_map_yaml, load_map

    name = world_source(resolve_path(spec.folder, str(values.get('world', 'basic_track'))))
    odom = result.streams['odom']
    if not is_map_yaml(name) or len(odom.t) < 2:
        return None
    occ = load_map(name)
    line = (load_centerline_csv(occ.spec.centerline) if occ.spec is not None
            and occ.spec.centerline is not None else extract_centerline(occ))
    line = line.oriented(start)
    s, _ = line.project(odom['x'][:, 0], odom['y'][:, 0])
    ds = np.diff(s)
    ds = (ds + 0.5 * line.length) % line.length - 0.5 * line.length
    return np.asarray(odom.t, dtype=float), np.concatenate(([0.0], np.cumsum(ds))), line.length


def _first_time(t: Any, reached: Any) -> float | None:
    """The first time where ``reached`` holds (None: never)."""
    hit = np.flatnonzero(reached)
    return float(t[hit[0]]) if hit.size else None


def _time_to_goal(values: dict[str, Any], result: Any) -> float | None:
    """First time base_link is within the goal factor's radius of its centre (None: never,
    or the run has no goal)."""
    goal = values.get('goal')
    odom = result.streams['odom']
    if not goal or not len(odom.t):
        return None
    gap = np.hypot(odom['x'][:, 0] - goal[0], odom['y'][:, 0] - goal[1])
    return _first_time(np.asarray(odom.t, dtype=float), gap <= goal[2])


def _measure(spec: CampaignSpec, result: Any, evaluation: Any, ctx: RunContext
             ) -> dict[str, float | None]:
    summary = result.summary()
    hits = sorted(e.t for e in result.collisions)
    along = (_progress(spec, ctx.factors, result, _start_pose(result))
             if {'progress_m', 'lap_time_s'} & set(spec.metrics) else None)
    builtin: dict[str, Callable[[], float | None]] = {
        'collisions': lambda: float(len(hits)),
        'first_contact_s': lambda: float(hits[0]) if hits else None,
        'min_wall_distance_m': lambda: _min_wall_distance(result, ctx),
        'distance_m': lambda: float(summary['distance_m'][0]),
        'progress_m': lambda: None if along is None else float(along[1][-1]),
        'lap_time_s': lambda: None if along is None else _first_time(along[0],
                                                                      along[1] >= along[2]),
        'time_to_goal_s': lambda: _time_to_goal(ctx.factors, result),
        'max_speed_mps': lambda: float(summary['max_speed_mps'][0]),
        'max_lateral_acceleration_mps2':
            lambda: float(summary['max_lateral_acceleration_mps2'][0]),
        'tracking_rmse_m': lambda: float(evaluation.metrics.rmse) if evaluation else None,
        'tracking_ise_m2s': lambda: float(evaluation.metrics.ise) if evaluation else None,
    }
    out = {name: builtin[name]() for name in spec.metrics}
    for name, target in spec.user_metrics:
        value = import_callable(target, spec.folder)(result, ctx)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating,
                                                             np.integer)):
            raise ConfigError(f'user metric {name} ({target}) returned {value!r}, not a number')
        if not math.isfinite(float(value)):
            raise ConfigError(f'user metric {name} ({target}) returned {value!r}')
        out[name] = float(value)
    return out


def _start_pose(result: Any) -> tuple[float, float, float]:
    odom = result.streams['odom']
    return (float(odom['x'][0, 0]), float(odom['y'][0, 0]), float(odom['yaw'][0, 0]))


def passed(spec: CampaignSpec, outcome: Outcome) -> bool:
    """An ok run whose metrics satisfy every pass rule."""
    return outcome.status == 'ok' and all(rule.holds(outcome.metrics.get(rule.metric))
                                          for rule in spec.pass_rules)


def _context(spec: CampaignSpec, run: Run, tmp: Path) -> tuple[RunContext, Any]:
    params = _params(spec, run.values, tmp)
    world, spawn = _world(spec, run.values)
    rng = np.random.default_rng(run.seed)
    return RunContext(run.run_id, run.seed, run.values, params, world, rng), spawn


def execute_run(spec: CampaignSpec, run: Run, out_dir: str | None = None) -> Outcome:
    """Simulate ``run`` and measure it; keeps its bag in ``out_dir/bags/<id>`` when the spec's
    ``keep.bags`` asks (``all``, or ``failures`` and the run failed)."""
    import time

    t0 = time.perf_counter()
    outcome = Outcome(run.run_id, 'ok')
    try:
        with tempfile.TemporaryDirectory(prefix='rcsim-run-') as tmp:
            ctx, spawn = _context(spec, run, Path(tmp))
            if spec.driver.kind == 'ros_launch':  # the user's ROS 2 stack (rclpy there only)
                from rc_sim_engine.campaign.ros_run import execute_ros_run

                result, evaluation = execute_ros_run(spec, run, ctx, spawn, Path(tmp)), None
            else:
                result, evaluation = _simulate(spec, run, ctx, spawn)
            outcome.metrics = _measure(spec, result, evaluation, ctx)
    except RcSimError as exc:
        outcome = Outcome(run.run_id, 'error', error=str(exc))
    except Exception as exc:
        outcome = Outcome(run.run_id, 'error',
                          error=f'{type(exc).__name__}: {exc}'.splitlines()[0])
    outcome.wall_s = time.perf_counter() - t0
    keep = spec.keep_bags == 'all' or (spec.keep_bags == 'failures' and not passed(spec, outcome))
    if keep and out_dir is not None and outcome.status == 'ok':
        try:
            outcome.bag = write_bag(spec, run, Path(out_dir) / 'bags' / run.run_id)
        except RcSimError as exc:
            outcome.error = f'bag not kept: {exc}'
    return outcome


def write_bag(spec: CampaignSpec, run: Run, dest: Path) -> str:
    """Simulate ``run`` again (bit-identical) into a rosbag2 bag at ``dest``; returns its path."""
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_engine.output.bags import SimBagStream
    from rc_sim_engine.sim.recorder import ThreadedSink

    with tempfile.TemporaryDirectory(prefix='rcsim-run-') as tmp:
        ctx, spawn = _context(spec, run, Path(tmp))
        with BagWriter(dest, storage='sqlite3', force=True, finite=True) as bag:
            from rc_sim_engine.sim.simulator import SimConfig

            with ThreadedSink(SimBagStream(bag, [ctx.params], lidar=SimConfig().lidar)) as sink:
                _simulate(spec, run, ctx, spawn, sink=sink)
            bag.finish_storage()
    return str(dest)
