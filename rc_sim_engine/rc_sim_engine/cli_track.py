"""``rcsim track`` / ``rcsim evaluate``: closed-loop trajectory tracking, seed-002 metrics.

``rcsim track --trajectory figure_eight --controller fl --world flat_track --out DIR`` runs the
tracking controller of :mod:`rc_sim_control.tracking` (the same :class:`TrackerSession` as the
``trajectory_tracker`` node) against the engine: controller -> ``/cmd_vel`` (steering_angle mode)
-> command mapper -> actuators -> vehicle model. It writes a rosbag2 bag (the standard topics plus
``/reference_path`` with one stamped pose per reference time and ``/tracking_error``), prints RMSE
and ISE of the centre-of-mass error (whole run and after the start transient) and plots actual vs
reference (2D, x(t), y(t), error) like the seed's ``analyze_bag.py``.

``rcsim evaluate --bag B`` computes the same metrics and plots from any bag holding ``/odom``
and ``/reference_path`` (engine, gz or real car). Path poses with increasing stamps give the
time-indexed error of seed 002; a path without timing gives the distance to the path instead.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_description.errors import ConfigError

__all__ = [
    'EvaluatedRun',
    'TrackingRun',
    'evaluate_arrays',
    'load_evaluation',
    'plot_parking',
    'plot_tracking',
    'register',
    'run_tracking',
    'write_run_bag',
]

FloatArray = npt.NDArray[np.float64]
DEFAULT_TRANSIENT = 3.0  # [s] excluded from the "after transient" metrics (car starts at rest)


# --------------------------------------------------------------------------- core
@dataclass
class TrackingRun:
    """A closed-loop run: the simulator result, the placed reference and the CoM error metrics."""

    result: Any  # rc_sim_engine.simulator.SimResult
    trajectory: Any  # rc_sim_control.trajectories.Trajectory (placed in odom)
    controller: str
    duration: float
    # published reference paths: (t_pub_ns, t [s], x, y, yaw)
    paths: list[tuple[int, FloatArray, FloatArray, FloatArray, FloatArray]]
    evaluation: EvaluatedRun


def _pose(obs: Any, i: int = 0) -> Any:
    from rc_sim_control.tracking import MeasuredPose

    return MeasuredPose(float(obs.x[i]), float(obs.y[i]), float(obs.yaw[i]), float(obs.vx[i]))


def run_tracking(params: Any, world: Any, values: dict[str, Any], *, model: str = 'single_track',
                 tyre_model: str | None = None, start: tuple[float, float, float] | None = None,
                 control_rate: float = 50.0, transient: float = DEFAULT_TRANSIENT,
                 seed: int = 0, lidar: bool = False,
                 offset: tuple[float, float, float] = (0.0, 0.0, 0.0),
                 progress: Callable[[float], None] | None = None) -> TrackingRun:
    """Track the trajectory of tracker ``values`` (see ``TRACKER_DEFAULTS``) from ``start``.

    The trajectory is placed so that it begins at the centre of mass of a car at ``start``
    (base_link x, y, yaw) with its heading; the car starts at rest at ``start`` moved by
    ``offset`` (forward [m], left [m], yaw [rad] in the start frame) to test convergence.
    """
    from rc_sim_control.tracking import TrackerSession, twist_from_command
    from rc_sim_engine.simulator import SimConfig, Simulator

    session = TrackerSession(params, values)
    config = SimConfig(model=model, tyre_model=tyre_model, lidar=lidar, seed=seed,
                       command_rate=control_rate, mapper_mode='steering_angle')
    x0, y0, yaw0 = start or (0.0, 0.0, 0.0)
    sim = Simulator(params, world, config, start=(x0, y0, yaw0))
    trajectory = session.activate(0.0, _pose(sim.observe()))
    if any(offset):
        c, s = math.cos(yaw0), math.sin(yaw0)
        sim.reset((x0 + c * offset[0] - s * offset[1], y0 + s * offset[0] + c * offset[1],
                   yaw0 + offset[2]))
    t_path, x_path, y_path, yaw_path = session.reference_path()
    wheelbase = params.geometry.wheelbase

    def controller(t: float, obs: Any) -> tuple[float, float]:
        step = session.step(t, _pose(obs))
        if step is None:
            return 0.0, 0.0
        return twist_from_command(step.command, wheelbase, 'steering_angle')

    result = sim.run(session.duration, controller, progress=progress)
    paths = [(0, t_path, x_path, y_path, yaw_path)]
    evaluation = evaluate_result(result, paths, params, transient)
    return TrackingRun(result, trajectory, session.controller.name, session.duration, paths,
                       evaluation)


@dataclass
class EvaluatedRun:
    """CoM trajectory, reference and errors of one car, with the seed-002 metrics."""

    t: FloatArray
    cx: FloatArray
    cy: FloatArray
    t_ref: FloatArray
    x_ref: FloatArray
    y_ref: FloatArray
    t_err: FloatArray
    ex: FloatArray
    ey: FloatArray
    timed: bool
    metrics: Any  # rc_sim_control.metrics.TrackingMetrics (whole run)
    metrics_after: Any | None  # after the transient (None if too short)
    transient: float

    def report(self) -> dict[str, Any]:
        """JSON-ready summary."""
        out: dict[str, Any] = {'error': 'time-indexed' if self.timed else 'distance to path',
                               'transient_s': self.transient,
                               'whole_run': self.metrics.as_dict()}
        if self.metrics_after is not None:
            out['after_transient'] = self.metrics_after.as_dict()
        return out

    def lines(self) -> list[str]:
        """Printable summary lines."""
        kind = '' if self.timed else ' (no path timing: distance to the path)'
        out = [f'CoM error{kind}, whole run: {self.metrics.summary()}']
        if self.metrics_after is not None:
            out.append(f'CoM error after the {self.transient:g} s transient: '
                       f'{self.metrics_after.summary()}')
        return out


def _combine_paths(paths: Sequence[tuple[int, FloatArray, FloatArray, FloatArray, FloatArray]]
                   ) -> tuple[FloatArray, FloatArray, FloatArray, bool]:
    """Merge published paths (stamps [s]): each one is valid from its publication time on."""
    pieces: list[tuple[FloatArray, FloatArray, FloatArray]] = []
    timed = True
    ordered = sorted(paths, key=lambda p: p[0])
    for k, (t_pub, t, x, y, _) in enumerate(ordered):
        t, x, y = (np.asarray(a, dtype=float) for a in (t, x, y))
        if t.size < 2 or np.any(np.diff(t) <= 0):
            timed = False
        t_end = ordered[k + 1][0] * 1e-9 if k + 1 < len(ordered) else math.inf
        keep = (t >= t_pub * 1e-9 - 1e-9) & (t < t_end)
        if k + 1 == len(ordered) or not timed:
            keep = t >= t_pub * 1e-9 - 1e-9
        pieces.append((t[keep], x[keep], y[keep]))
    if not timed:
        _, t, x, y, _ = ordered[-1]
        return np.asarray(t, float), np.asarray(x, float), np.asarray(y, float), False
    t = np.concatenate([p[0] for p in pieces])
    x = np.concatenate([p[1] for p in pieces])
    y = np.concatenate([p[2] for p in pieces])
    order = np.argsort(t, kind='stable')
    t, x, y = t[order], x[order], y[order]
    keep = np.concatenate([[True], np.diff(t) > 0])
    return t[keep], x[keep], y[keep], True


def evaluate_arrays(t: FloatArray, x: FloatArray, y: FloatArray, yaw: FloatArray,
                    paths: Sequence[tuple[int, FloatArray, FloatArray, FloatArray, FloatArray]],
                    cg_to_rear_axle: float, transient: float) -> EvaluatedRun:
    """Seed-002 metrics of base_link poses against published reference paths."""
    from rc_sim_control.metrics import (
        cg_positions,
        compute_metrics,
        path_distance_errors,
        tracking_errors,
    )

    if not paths:
        raise ConfigError('no reference path to evaluate against')
    cx, cy = cg_positions(x, y, yaw, cg_to_rear_axle)
    t_ref, x_ref, y_ref, timed = _combine_paths(paths)
    if timed:
        t_err, ex, ey = tracking_errors(t, cx, cy, t_ref, x_ref, y_ref)
    else:
        t_err = np.asarray(t, float)
        ex, ey = path_distance_errors(cx, cy, x_ref, y_ref)
    metrics = compute_metrics(t_err, ex, ey)
    after = None
    if t_err.size and np.count_nonzero(t_err >= t_err[0] + transient) >= 2:
        after = compute_metrics(t_err, ex, ey, t_start=float(t_err[0]) + transient)
    return EvaluatedRun(np.asarray(t, float), cx, cy, t_ref, x_ref, y_ref, t_err, ex, ey, timed,
                        metrics, after, transient)


def evaluate_result(result: Any, paths: Sequence[Any], params: Any,
                    transient: float) -> EvaluatedRun:
    """:func:`evaluate_arrays` on car 0 of a simulator result (odometry stream)."""
    odom = result.streams['odom']
    return evaluate_arrays(odom.t, odom['x'][:, 0], odom['y'][:, 0], odom['yaw'][:, 0], paths,
                           params.geometry.cg_to_rear_axle, transient)


# --------------------------------------------------------------------------- bag I/O
def _path_message(t_pub_ns: int, t: FloatArray, x: FloatArray, y: FloatArray,
                  yaw: FloatArray) -> Any:
    """nav_msgs/Path whose poses carry their own reference time stamps (as the node publishes)."""
    from rc_sim_engine import bagio

    types = bagio.typestore().types
    header, pose_t, point, quat = (types['std_msgs/msg/Header'], types['geometry_msgs/msg/Pose'],
                                   types['geometry_msgs/msg/Point'],
                                   types['geometry_msgs/msg/Quaternion'])
    poses = [types['geometry_msgs/msg/PoseStamped'](
        header=header(stamp=bagio.stamp(round(ti * 1e9)), frame_id='odom'),
        pose=pose_t(position=point(x=float(xi), y=float(yi), z=0.0),
                    orientation=quat(x=0.0, y=0.0, z=math.sin(0.5 * yi_), w=math.cos(0.5 * yi_))))
        for ti, xi, yi, yi_ in zip(t, x, y, (float(a) for a in yaw))]
    return types['nav_msgs/msg/Path'](header=header(stamp=bagio.stamp(t_pub_ns), frame_id='odom'),
                                      poses=poses)


def write_run_bag(bag: Any, result: Any, paths: Sequence[Any],
                  evaluation: EvaluatedRun | None = None) -> None:
    """The simulator's standard topics (:func:`bagio.write_sim_result`) plus ``/reference_path``
    (one message per published reference) and ``/tracking_error`` (Vector3Stamped: ex, ey, |e|)."""
    from rc_sim_engine import bagio

    types = bagio.typestore().types
    extra: list[tuple[str, str, int, Any]] = [
        ('/reference_path', 'nav_msgs/msg/Path', int(t_pub), _path_message(int(t_pub), *rest))
        for t_pub, *rest in paths]
    if evaluation is not None and evaluation.timed:
        header, vec = types['std_msgs/msg/Header'], types['geometry_msgs/msg/Vector3']
        for ti, ex, ey in zip(evaluation.t_err, evaluation.ex, evaluation.ey):
            t_ns = round(ti * 1e9)
            extra.append(('/tracking_error', 'geometry_msgs/msg/Vector3Stamped', t_ns,
                          types['geometry_msgs/msg/Vector3Stamped'](
                              header=header(stamp=bagio.stamp(t_ns), frame_id='odom'),
                              vector=vec(x=float(ex), y=float(ey),
                                         z=float(math.hypot(ex, ey))))))
    bagio.write_sim_result(bag, result, extra=extra)


def _stamp_s(stamp: Any) -> float:
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


def load_evaluation(bag_path: str | Path, params: Any, transient: float, *,
                    recording: str | None = None, skip_corrupt: bool = False) -> EvaluatedRun:
    """Read the pose (``/odom``, or the pose/odom role of ``recording``) and
    ``/reference_path`` from a bag and evaluate (one-line errors)."""
    from rc_sim_description.bags import BagError, open_bag, read_topic, require_topics
    from rc_sim_description.recording import (
        base_link_pose,
        extract,
        load_recording,
        recording_from_mapping,
    )

    rec = (load_recording(recording) if recording is not None else
           recording_from_mapping({'odom': {'topic': '/odom'}}, str(bag_path)))
    role = 'pose' if 'pose' in rec.roles else 'odom'
    if role not in rec.roles:
        raise BagError(f'{recording}: evaluate needs a pose or odom role')
    with open_bag(bag_path, skip_corrupt=skip_corrupt) as reader:
        require_topics(reader, [rec.roles[role].topic, '/reference_path'], bag_path)
        pose = extract(rec, reader, [role])[role]
        t_pub, path_msgs = read_topic(reader, '/reference_path')
    t = np.asarray(pose.t_ns * 1e-9, dtype=np.float64)
    x, y, yaw = base_link_pose(pose.values['x'], pose.values['y'], pose.values['yaw'],
                               rec.roles[role].offset)
    paths = []
    for t_ns, msg in zip(t_pub, path_msgs):
        if not msg.poses:
            continue
        pt = np.array([_stamp_s(p.header.stamp) for p in msg.poses])
        px = np.array([p.pose.position.x for p in msg.poses], dtype=float)
        py = np.array([p.pose.position.y for p in msg.poses], dtype=float)
        pub = round(_stamp_s(msg.header.stamp) * 1e9) or int(t_ns)
        paths.append((pub, pt, px, py, np.zeros_like(px)))
    if not paths:
        raise BagError(f'{bag_path}: /reference_path holds no poses')
    if t.size < 2 or not np.all(np.isfinite(x) & np.isfinite(y)):
        raise BagError(f'{bag_path}: /odom needs >= 2 finite poses')
    try:
        return evaluate_arrays(t, x, y, yaw, paths, params.geometry.cg_to_rear_axle, transient)
    except ConfigError as exc:
        raise BagError(f'{bag_path}: {exc}') from None


# --------------------------------------------------------------------------- plots
def plot_tracking(ev: EvaluatedRun, path: str | Path, title: str,
                  world: Any | None = None) -> None:
    """Seed-002 figure: 2D CoM path vs reference, x(t), y(t), and |e|(t); PNG, atomic."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from rc_sim_description.atomic import atomic_output_file

    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    ax = axes[0, 0]
    if world is not None and len(world.boxes):
        for corners in world.box_corners():
            ring = np.vstack([corners, corners[:1]])
            ax.fill(ring[:, 0], ring[:, 1], color='0.6', lw=0)
    ax.plot(ev.cx, ev.cy, color='tab:blue', lw=1.5, label='actual (CoM)')
    ax.plot(ev.x_ref, ev.y_ref, ':', color='tab:orange', lw=2, label='reference')
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.legend(loc='best', fontsize=8)
    ax.set_title('trajectory (odom)')
    if ev.timed:
        for axis, actual, ref, name in ((axes[0, 1], ev.cx, ev.x_ref, 'x'),
                                        (axes[1, 0], ev.cy, ev.y_ref, 'y')):
            axis.plot(ev.t, actual, color='tab:blue', label=f'actual {name}')
            axis.plot(ev.t_ref, ref, ':', color='tab:orange', lw=2, label=f'reference {name}')
            axis.set_xlabel('t [s]')
            axis.set_ylabel(f'{name} [m]')
            axis.legend(loc='best', fontsize=8)
    else:
        axes[0, 1].axis('off')
        axes[1, 0].axis('off')
    ax = axes[1, 1]
    ax.plot(ev.t_err, 100 * np.hypot(ev.ex, ev.ey), color='tab:red')
    ax.axvline(ev.t_err[0] + ev.transient, color='0.5', ls='--', lw=1)
    ax.set_xlabel('t [s]')
    ax.set_ylabel('|e| [cm]')
    m = ev.metrics_after or ev.metrics
    span = (f'after {ev.transient:g} s' if ev.metrics_after is not None else 'whole run')
    ax.set_title(f'CoM error ({span}): RMSE {100 * m.rmse:.2f} cm, ISE {m.ise:.2e} m²s',
                 fontsize=10)
    fig.suptitle(title)
    fig.tight_layout()
    with atomic_output_file(path) as tmp:
        fig.savefig(tmp, format='png', dpi=110)
    plt.close(fig)


def plot_parking(outcome: Any, path: str | Path, title: str) -> None:
    """Parking figure: boxes, slot, rear-axle path and footprints; speed and steering vs time."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from rc_sim_description.atomic import atomic_output_file
    from rc_sim_engine.collision import footprint_from_params
    from rc_sim_engine.scenarios import footprint_corners

    res = outcome.result
    odom, cmds = res.streams['odom'], res.streams['commands']
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={'width_ratios': [3, 2]})
    for k, corners in enumerate(outcome.world.box_corners()):
        ring = np.vstack([corners, corners[:1]])
        ax.fill(ring[:, 0], ring[:, 1], color='0.6', lw=0, label='parked cars' if k == 0 else None)
    x0, x1, y0, y1 = outcome.config.slot_rect()
    ax.plot([x0, x1, x1, x0, x0], [y0, y0, y1, y1, y0], '--', color='tab:green', lw=1,
            label='slot')
    ax.plot(odom['x'][:, 0], odom['y'][:, 0], color='tab:blue', label='base_link path')
    foot = footprint_from_params(res.params[0])
    idx = np.linspace(0, len(odom['x']) - 1, 7).astype(int)
    for k in idx:
        c = footprint_corners(odom['x'][k, 0], odom['y'][k, 0], odom['yaw'][k, 0], foot)
        ring = np.vstack([c, c[:1]])
        ax.plot(ring[:, 0], ring[:, 1], color='tab:orange' if k == idx[-1] else '0.3',
                lw=1.5 if k == idx[-1] else 0.6,
                label='final footprint' if k == idx[-1] else
                ('footprints' if k == idx[0] else None))
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.legend(loc='upper left', fontsize=8)
    ax.set_title(f'in slot: {outcome.in_slot}, collisions: {len(res.collisions)}')
    t = cmds.t
    ax2.plot(t, cmds['linear_x'][:, 0], label='v command [m/s]')
    ax2.plot(t, cmds['angular_z'][:, 0], label='delta command [rad]')
    ax2.plot(odom.t, odom['speed'][:, 0], ':', label='v actual [m/s]')
    ax2.plot(odom.t, odom['steering'][:, 0], ':', label='delta actual [rad]')
    ax2.set_xlabel('t [s]')
    ax2.set_ylabel('speed [m/s], steering angle [rad]')
    ax2.legend(loc='best', fontsize=8)
    ax2.set_title('seed 004 eq. 15-17 profile')
    fig.suptitle(title)
    fig.tight_layout()
    with atomic_output_file(path) as tmp:
        fig.savefig(tmp, format='png', dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------- CLI
# tracker parameters that have their own option (a --set would be overwritten by it)
_OPTION_KEYS = {'trajectory_type': '--trajectory', 'controller': '--controller',
                'waypoints_file': '--waypoints', 'duration': '--duration'}


def _parse_set(items: Sequence[str]) -> dict[str, Any]:
    from rc_sim_control.tracking import TRACKER_DEFAULTS
    from rc_sim_description.yamlio import did_you_mean

    settable = sorted(k for k in TRACKER_DEFAULTS if k not in _OPTION_KEYS)
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition('=')
        key = key.strip()
        if key in _OPTION_KEYS:
            raise ConfigError(f'--set {item!r}: use {_OPTION_KEYS[key]} instead')
        if not sep:
            raise ConfigError(f'--set {item!r}: expected KEY=VALUE')
        if key not in TRACKER_DEFAULTS:
            raise ConfigError(f'--set {item!r}: unknown tracker parameter {key!r}'
                              f'{did_you_mean(key, settable)}; known: {", ".join(settable)}')
        default = TRACKER_DEFAULTS[key]
        try:
            if isinstance(default, bool):
                if raw.lower() not in ('true', 'false', '1', '0'):
                    raise ValueError(raw)
                out[key] = raw.lower() in ('true', '1')
            elif isinstance(default, float):
                out[key] = float(raw)
            else:
                out[key] = raw
        except ValueError:
            raise ConfigError(f'--set {item!r}: {raw!r} is not a valid '
                              f'{type(default).__name__}') from None
    return out


def _check_transient(value: float) -> None:
    if not (math.isfinite(value) and value >= 0.0):
        raise ConfigError(f'--transient must be >= 0 s, got {value!r}')


def _load_params(overrides: Sequence[str]) -> Any:
    from rc_sim_description.params import load_vehicle_params

    return load_vehicle_params(overrides=list(overrides))


def _world(name: str) -> tuple[Any, tuple[float, float, float]]:
    from rc_sim_description.paths import world_path
    from rc_sim_description.worlds import spawn_pose
    from rc_sim_engine.world import load_world

    path = world_path(name)
    spawn = spawn_pose(path)
    return load_world(path), (spawn.x, spawn.y, spawn.yaw)


def command_track(args: argparse.Namespace) -> int:
    """``rcsim track``."""
    from rc_sim_control.trajectories import trajectory_limits
    from rc_sim_description.atomic import check_output_path
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_description.cli_support import progress

    check_output_path(args.out, force=args.force)
    _check_transient(args.transient)
    if not (math.isfinite(args.control_rate) and args.control_rate > 0):
        raise ConfigError(f'--control-rate: must be a finite number > 0 Hz, '
                          f'got {args.control_rate!r}')
    if args.seed < 0:
        raise ConfigError(f'--seed: must be >= 0, got {args.seed}')
    if (args.trajectory == 'waypoints') != (args.waypoints is not None):
        raise ConfigError('--trajectory waypoints needs --waypoints CSV' if args.waypoints is None
                          else '--waypoints applies to --trajectory waypoints only')
    if args.duration is not None and not (math.isfinite(args.duration) and args.duration > 0):
        raise ConfigError(f'--duration: must be a finite number > 0 s, got {args.duration!r}')
    params = _load_params(args.params)
    values = _parse_set(args.set)
    values['trajectory_type'] = args.trajectory
    values['controller'] = args.controller
    if args.waypoints is not None:
        values['waypoints_file'] = args.waypoints
    if args.duration is not None:
        values['duration'] = args.duration
    world, spawn = _world(args.world)
    from rc_sim_control.tracking import TrackerSession

    session = TrackerSession(params, values)
    trajectory = session.activate(0.0, _pose_tuple(spawn))
    v_max, k_max = trajectory_limits(trajectory, session.duration)
    k_car = 1.0 / params.min_turning_radius
    if k_max > k_car:
        print(f"note: the reference curvature reaches {k_max:.2f} 1/m, beyond the car's "
              f'{k_car:.2f} 1/m (R_min = {params.min_turning_radius:.2f} m): steering saturates')
    if v_max > params.max_speed:
        raise ConfigError(f"reference speed {v_max:.2f} m/s exceeds the car's max_speed "
                          f'{params.max_speed:.2f} m/s')
    with progress(f'track {args.trajectory}', session.duration) as bar:
        run = run_tracking(params, world, values, model=args.model, tyre_model=args.tyre_model,
                           start=spawn, control_rate=args.control_rate,
                           transient=args.transient, seed=args.seed,
                           progress=lambda t: bar.update(t))
    title = (f'{args.trajectory} / {run.controller} / {args.model}'
             f'{"" if args.tyre_model is None else " " + args.tyre_model} on {world.name}')
    with BagWriter(args.out, storage=args.storage, force=args.force) as bag:
        write_run_bag(bag, run.result, run.paths, run.evaluation)
        report = {'trajectory': args.trajectory, 'controller': run.controller,
                  'model': args.model, 'tyre_model': args.tyre_model or params.tyres.tyre_model,
                  'world': world.name, 'duration_s': run.duration,
                  'collisions': len(run.result.collisions), **run.evaluation.report()}
        (bag.directory / 'metrics.json').write_text(json.dumps(report, indent=2) + '\n')
        if not args.no_plots:
            plot_tracking(run.evaluation, bag.directory / 'tracking.png', title, world)
    print(f'{title}: {run.duration:.1f} s simulated, {len(run.result.collisions)} collision(s)')
    for line in run.evaluation.lines():
        print(line)
    print(f'wrote {args.out}')
    return 0


def _pose_tuple(spawn: tuple[float, float, float]) -> Any:
    from rc_sim_control.tracking import MeasuredPose

    return MeasuredPose(spawn[0], spawn[1], spawn[2], 0.0)


def command_evaluate(args: argparse.Namespace) -> int:
    """``rcsim evaluate``."""
    from rc_sim_description.atomic import atomic_output_dir, check_output_path

    _check_transient(args.transient)
    params = _load_params(args.params)
    if args.out is not None:
        check_output_path(args.out, force=args.force)
    ev = load_evaluation(args.bag, params, args.transient, recording=args.recording,
                         skip_corrupt=args.skip_corrupt)
    for line in ev.lines():
        print(line)
    if ev.metrics_after is None:
        print(f'note: the run is too short for metrics after the {args.transient:g} s transient '
              '(see --transient)')
    if args.out is not None:
        with atomic_output_dir(args.out, force=args.force) as tmp:
            tmp.mkdir()
            (tmp / 'metrics.json').write_text(json.dumps(
                {'bag': str(args.bag), **ev.report()}, indent=2) + '\n')
            plot_tracking(ev, tmp / 'tracking.png', f'evaluate {Path(args.bag).name}')
        print(f'wrote {args.out}')
    return 0


MANOEUVRES = ('avoid', 'avoid_late', 'park')


def command_manoeuvre(args: argparse.Namespace) -> int:
    """``rcsim manoeuvre``: the seed-004 scenarios."""
    from rc_sim_description.atomic import check_output_path
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_description.cli_support import progress
    from rc_sim_engine import scenarios

    check_output_path(args.out, force=args.force)
    params = _load_params(args.params)
    report: dict[str, Any] = {'manoeuvre': args.name, 'model': args.model}
    if args.name == 'park':
        cfg = scenarios.ParkingConfig()
        with progress('parking', 10.0) as bar:
            park = scenarios.run_parking(params, cfg, model=args.model,
                                         tyre_model=args.tyre_model,
                                         progress=lambda t: bar.update(t))
        prof = park.plan.profile
        lines = [f'search: {park.plan.feasible} of {park.plan.candidates} (T, delta_max) pairs '
                 f'park without contact; chose T = {prof.duration:.2f} s, T* = '
                 f'{prof.steer_time:.2f} s, delta_max = {prof.max_steering:.3f} rad',
                 f'final pose x = {park.final[0]:.3f} m, y = {park.final[1]:.3f} m, yaw = '
                 f'{math.degrees(park.final[2]):.2f} deg (predicted {park.plan.final[0]:.3f}, '
                 f'{park.plan.final[1]:.3f}); inside the slot: {park.in_slot}; collisions: '
                 f'{len(park.result.collisions)}']
        report.update(T=prof.duration, T_star=prof.steer_time, delta_max=prof.max_steering,
                      final=list(park.final), predicted=list(park.plan.final),
                      in_slot=park.in_slot, collisions=len(park.result.collisions))
        result, paths, evaluation = park.result, [], None
    else:
        cfg_a = scenarios.AvoidanceConfig(detection_range=1.2 if args.name == 'avoid_late'
                                          else scenarios.AvoidanceConfig().detection_range)
        with progress('avoidance', 16.0) as bar:
            av = scenarios.run_avoidance(params, cfg_a, model=args.model,
                                         tyre_model=args.tyre_model,
                                         progress=lambda t: bar.update(t))
        pl = av.planner
        lines = [f'obstacle detected {pl.gap_at_detection + pl.margin:.2f} m ahead of the car '
                 f'front (free distance {pl.gap_at_detection:.2f} m after the {pl.margin:g} m '
                 f'margin); S_T,min = {pl.s_t_min:.2f} m -> {pl.decision}',
                 f'collisions: {len(av.result.collisions)}']
        if pl.decision == 'stop':
            lines.append(f'stopped {av.stop_distance:.2f} m before the obstacle')
        if av.evaluation is not None:
            lines += av.evaluation.lines()
        report.update(decision=pl.decision, s_t_min=pl.s_t_min,
                      gap_at_detection=pl.gap_at_detection,
                      stop_distance=None if math.isnan(av.stop_distance) else av.stop_distance,
                      collisions=len(av.result.collisions),
                      **(av.evaluation.report() if av.evaluation is not None else {}))
        result, paths, evaluation = av.result, av.paths, av.evaluation
    with BagWriter(args.out, storage=args.storage, force=args.force) as bag:
        write_run_bag(bag, result, paths, evaluation)
        (bag.directory / 'metrics.json').write_text(json.dumps(report, indent=2) + '\n')
        if not args.no_plots:
            title = f'{args.name} ({args.model})'
            if args.name == 'park':
                plot_parking(park, bag.directory / 'manoeuvre.png', title)
            elif evaluation is not None:
                plot_tracking(evaluation, bag.directory / 'manoeuvre.png', title, av.world)
            else:
                _plot_stop(av, bag.directory / 'manoeuvre.png', title)
    for line in lines:
        print(line)
    print(f'wrote {args.out}')
    return 0


def _plot_stop(outcome: Any, path: str | Path, title: str) -> None:
    """Avoidance that ended in a stop: the track, the obstacle and the driven path."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from rc_sim_description.atomic import atomic_output_file

    odom = outcome.result.streams['odom']
    fig, ax = plt.subplots(figsize=(7, 5))
    for corners in outcome.world.box_corners():
        ring = np.vstack([corners, corners[:1]])
        ax.fill(ring[:, 0], ring[:, 1], color='0.6', lw=0)
    ax.plot(odom['x'][:, 0], odom['y'][:, 0], color='tab:blue', label='base_link')
    ax.plot(*outcome.obstacle_xy, 'rx', label='obstacle')
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_xlabel('x [m] (odom)')
    ax.set_ylabel('y [m] (odom)')
    ax.legend(loc='best', fontsize=8)
    ax.set_title(f'{title}: stopped {outcome.stop_distance:.2f} m before the obstacle')
    with atomic_output_file(path) as tmp:
        fig.savefig(tmp, format='png', dpi=110)
    plt.close(fig)


def _add_engine_run_options(parser: Any, plot_name: str) -> None:
    """Options shared by the subcommands that run the engine and write a bag (track, manoeuvre)."""
    parser.add_argument('--model', default='single_track', help='vehicle model: single_track '
                        '(default), kinematic or kinematic_4ws')
    parser.add_argument('--tyre-model', default=None, help='lateral tyre model override '
                        '(linear, fiala, fiala_unsaturated, pacejka; default: vehicle.yaml)')
    parser.add_argument('--params', action='append', default=[], metavar='YAML',
                        help='vehicle override YAML (partial vehicle.yaml) merged over '
                        'vehicle.yaml; repeatable')
    parser.add_argument('--storage', default='sqlite3', choices=['sqlite3', 'mcap'],
                        help='bag storage (default: sqlite3)')
    parser.add_argument('--no-plots', action='store_true', help=f'skip {plot_name}')
    parser.add_argument('--force', action='store_true', help='overwrite an existing output')
    parser.add_argument('--out', required=True, help='output bag directory (missing parent '
                        'directories are created)')


def register(subparsers: Any) -> None:
    """Add ``rcsim track``, ``rcsim evaluate`` and ``rcsim manoeuvre``."""
    from rc_sim_control.trajectories import TRAJECTORY_NAMES

    p = subparsers.add_parser(
        'track', help='closed-loop trajectory tracking in the engine (bag, RMSE/ISE, plots)',
        description='Run a trajectory-tracking controller (the same TrackerSession as the '
        'trajectory_tracker node) against the embedded engine: controller -> /cmd_vel '
        '(steering_angle mode) -> command mapper -> actuators -> vehicle model. Writes a rosbag2 '
        'bag (standard topics + /reference_path + /tracking_error) holding metrics.json and '
        'tracking.png, and prints the RMSE and ISE of the centre-of-mass error (whole run and '
        'after the start transient). Example: rcsim track --trajectory figure_eight '
        '--controller fl --world flat_track --out runs/track')
    p.add_argument('--trajectory', default='figure_eight',
                   choices=[*TRAJECTORY_NAMES, 'waypoints'],
                   help='reference shape (seed 002; default: figure_eight)')
    p.add_argument('--waypoints', metavar='CSV', help='waypoint file for --trajectory waypoints '
                   '(columns t,x,y, or x,y with --set waypoints_speed=V); like every shape, the '
                   'spline is moved and rotated to start at the car with its heading')
    p.add_argument('--controller', default='fl', choices=['fl', 'kanayama', 'pure_pursuit'],
                   help='fl: feedback linearisation, kanayama, pure_pursuit (default: fl)')
    p.add_argument('--world', default='flat_track', help='world name or SDF path; the car starts '
                   'at its spawn pose (default: flat_track)')
    p.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                   help='tracker parameter (shape, gains; as the trajectory_tracker node), '
                   'e.g. amplitude=2.5 angular_speed=0.4 kp=3')
    p.add_argument('--duration', type=float, default=None, help='run length [s] (default: one '
                   'period of the trajectory)')
    p.add_argument('--transient', type=float, default=DEFAULT_TRANSIENT,
                   help='start time [s] excluded from the "after transient" metrics '
                   f'(default: {DEFAULT_TRANSIENT:g})')
    p.add_argument('--control-rate', type=float, default=50.0,
                   help='controller rate [Hz] (default: 50)')
    p.add_argument('--seed', type=int, default=0,
                   help='seed of every random generator (default: 0)')
    _add_engine_run_options(p, 'tracking.png')
    p.set_defaults(func=command_track)

    e = subparsers.add_parser(
        'evaluate', help='RMSE/ISE and plots of /odom vs /reference_path in any bag',
        description='Seed-002 metrics (centre-of-mass error RMSE and ISE) and plots from a bag '
        'with /odom and /reference_path (engine, gz or real car).')
    e.add_argument('--bag', required=True, help='rosbag2 directory, .db3/.mcap file, or .bag')
    e.add_argument('--params', action='append', default=[], metavar='YAML',
                   help='vehicle override YAML (lr places the centre of mass); repeatable')
    e.add_argument('--recording', metavar='YAML', default=None,
                   help='recording description whose pose (or odom) role replaces /odom '
                   '(docs/recordings.md)')
    e.add_argument('--skip-corrupt', action='store_true',
                   help='read past corrupt or undecodable messages with a warning')
    e.add_argument('--transient', type=float, default=DEFAULT_TRANSIENT,
                   help='start time [s] excluded from the "after transient" metrics '
                   f'(default: {DEFAULT_TRANSIENT:g})')
    e.add_argument('--out', default=None, help='new directory for metrics.json and '
                   'tracking.png (default: print the metrics only)')
    e.add_argument('--force', action='store_true', help='overwrite an existing output')
    e.set_defaults(func=command_evaluate)

    m = subparsers.add_parser(
        'manoeuvre', help='seed-004 scenarios: obstacle avoidance (lane shift / stop), parking',
        description='avoid: basic_track with a box on the racing line, detected by the lidar '
        '(detection range 2.5 m) and passed by a quintic lane shift; avoid_late: detection '
        'range only 1.2 m, '
        'S_T,min does not fit and the car stops; park: parallel parking between two boxes with '
        'the seed-004 open-loop profile after the (T, delta_max) search.')
    m.add_argument('name', choices=MANOEUVRES, help='scenario')
    _add_engine_run_options(m, 'manoeuvre.png')
    m.set_defaults(func=command_manoeuvre)
