"""One way in for a run: a validated :class:`RunSpec` -> a ready :class:`PreparedRun`.

``rcsim run``, the campaign runner's scenario runs and (through :func:`load_any_world` and
:func:`lidar_error_config`) ``sim_node``, ``rcsim track`` and the campaign's other drivers set a
run up here, so that they load worlds, resolve scenarios, check the documented limits and choose
start poses the same way. The callers only parse, call and print.

A run's command sequence is a named manoeuvre (:func:`rc_sim_control.commands.manoeuvre`), a
scenario shipped in ``rc_sim_engine/config/scenarios/<name>.yaml``, a scenario YAML file, or
the ``/cmd_vel`` of a bag. Its world is a shipped world name, an SDF file or a ``map_server``
track map (YAML + image). Errors name the culprit as the ``rcsim run`` option that holds it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any
import warnings

from rc_sim_description.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

__all__ = ['WORLD_ORDER', 'LoadedWorld', 'PreparedRun', 'RunSpec', 'choose_start_pose',
           'command_sequence', 'lidar_error_config', 'load_any_world', 'played_part',
           'prepare_run', 'scenario_path', 'sequence_from_bag', 'shipped_scenarios',
           'world_source']

WORLD_ORDER = ('basic_track', 'figure_eight', 'flat_track')  # suggestion order (walled first)

Notify = Callable[[str], None]


def _quiet(_line: str) -> None:
    """Drop a note or warning line."""


@dataclass(frozen=True)
class RunSpec:
    """Everything a simulated run is made of (the options of ``rcsim run``; SI units).

    ``scenario`` and ``cmd_vel_bag``: exactly one. ``start``: none (the world's spawn pose,
    moved to where the scenario stays clear), one (car 0; the others lined up behind) or one
    per car. ``duration_s``: None plays the scenario to its end plus a settling second.
    """

    world: str = 'basic_track'
    scenario: str | None = None
    cmd_vel_bag: str | None = None
    mapper_mode: str = 'yaw_rate'
    speed_mps: float | None = None
    radius_m: float | None = None
    duration_s: float | None = None
    params: tuple[str, ...] = ()
    car_params: tuple[str, ...] = ()
    cars: int = 1
    start: tuple[tuple[float, float, float], ...] = ()
    model: str = 'single_track'
    tyre_model: str | None = None
    lidar_errors: str | None = None
    seed: int = 0
    realtime_factor: float = 0.0
    collision: str = 'stop'

    def __post_init__(self) -> None:
        for name, value in (('--duration', self.duration_s), ('--speed', self.speed_mps),
                            ('--radius', self.radius_m)):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ConfigError(f'{name}: must be a finite number > 0, got {value!r}')
        if not (math.isfinite(self.realtime_factor) and self.realtime_factor >= 0):
            raise ConfigError(f'--realtime-factor: must be >= 0, got {self.realtime_factor!r}')
        if self.seed < 0:
            raise ConfigError(f'--seed: must be >= 0, got {self.seed}')
        if (self.scenario is None) == (self.cmd_vel_bag is None):
            raise ConfigError('a run needs exactly one of --scenario and --cmd-vel-bag')
        from rc_sim_engine.sim.run_limits import check_cars, check_start

        if self.cars < 1:
            raise ConfigError(f'--cars: must be an integer >= 1, got {self.cars}')
        check_cars(self.cars)
        if len(self.start) not in (0, 1, self.cars):
            raise ConfigError(f'--start given {len(self.start)} times for --cars {self.cars}: '
                              'give it once (car 0 there, the others lined up behind) or once '
                              'per car')
        for pose in self.start:
            if not all(math.isfinite(v) for v in pose):
                raise ConfigError(f'--start: must be finite numbers, got {list(pose)}')
            check_start([pose])

    @classmethod
    def default(cls, name: str) -> Any:
        """The default of field ``name`` (for the command-line help: one source)."""
        return next(f.default for f in fields(cls) if f.name == name)


@dataclass(frozen=True)
class LoadedWorld:
    """A world as the engine uses it, the file it came from and its spawn pose (x, y, yaw)."""

    world: Any
    path: Path
    spawn: tuple[float, float, float]


@dataclass
class PreparedRun:
    """A run ready to play: ``simulator.play(sequence, spec.duration_s, ...)``."""

    spec: RunSpec
    simulator: Any
    world: LoadedWorld
    sequence: Any
    label: str            # the scenario's name
    total_s: float        # simulated time the run will cover
    starts: np.ndarray    # (cars, 3) start poses
    start_note: str = ''  # why car 0 does not start at the spawn pose ('' when it does)
    compile_s: float = 0.0
    cars: list[Any] = field(default_factory=list)


def world_source(name: str) -> str:
    """``name`` itself, or the YAML of the track map shipped as ``name``
    (``rc_sim_engine/config/maps/<name>.yaml``, e.g. ``chicane_track``) when ``name`` is
    neither a file nor a shipped SDF world."""
    from rc_sim_description.paths import share_path

    if Path(name).suffix or Path(name).exists():
        return name
    try:
        share_path(f'worlds/{name}.sdf').resolve(strict=True)
        return name
    except (ConfigError, OSError):
        pass
    try:
        track = share_path(f'config/maps/{name}.yaml', package='rc_sim_engine')
    except ConfigError:
        return name
    return str(track) if track.is_file() else name


def load_any_world(name: str, warn: Notify = _quiet) -> LoadedWorld:
    """A shipped world name, an SDF file, a ``map_server`` track map YAML or the name of a
    shipped track map (:func:`world_source`); SDF elements the engine ignores go to ``warn``
    (one line each)."""
    from rc_sim_description.paths import world_path
    from rc_sim_description.worlds import spawn_pose
    from rc_sim_engine.world.map_world import load_map_world
    from rc_sim_engine.world.sdf import SdfWarning, load_world
    from rc_sim_engine.world.track_map import is_map_yaml

    name = world_source(name)
    if is_map_yaml(name):
        world, spawn = load_map_world(Path(name))
        return LoadedWorld(world, Path(name), (float(spawn[0]), float(spawn[1]),
                                               float(spawn[2])))
    path = world_path(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', SdfWarning)
        world = load_world(path)
    for w in caught:
        warn(f'warning: {w.message}')
    pose = spawn_pose(path)
    return LoadedWorld(world, path, (pose.x, pose.y, pose.yaw))


def lidar_error_config(spec: str | None, label: str = '--lidar-errors') -> Any:
    """A lidar error preset name or YAML file -> LidarErrorConfig (None: no errors)."""
    if not spec:
        return None
    from rc_sim_sensors.lidar_config import PRESETS, LidarErrorConfig

    if spec in PRESETS:
        return LidarErrorConfig.from_preset(spec)
    if not Path(spec).is_file():
        from rc_sim_description.yamlio import did_you_mean

        hint = did_you_mean(spec, PRESETS)
        raise ConfigError(f'{label}: {spec!r} is neither a preset{hint} '
                          f'({", ".join(PRESETS)}) nor a YAML file')
    return LidarErrorConfig.from_yaml(spec)


def scenario_path(name: str) -> Path | None:
    """Shipped scenario file ``config/scenarios/<name>.yaml`` of rc_sim_engine, if any."""
    from rc_sim_description.paths import share_path

    try:
        path = share_path(f'config/scenarios/{name}.yaml', package='rc_sim_engine')
    except ConfigError:
        return None
    return path if path.is_file() else None


def shipped_scenarios() -> list[str]:
    """Names of the scenario files shipped in ``rc_sim_engine/config/scenarios``."""
    from rc_sim_description.paths import share_path

    try:
        folder = share_path('config/scenarios', package='rc_sim_engine')
    except ConfigError:
        return []
    return sorted(p.stem for p in folder.glob('*.yaml'))


def sequence_from_bag(path: str, mode: str) -> Any:
    """CommandSequence from the ``/cmd_vel`` (geometry_msgs/Twist) of a bag; time 0 = first one."""
    import numpy as np

    from rc_sim_control.commands import CommandSequence
    from rc_sim_description.bags import BagError, open_bag, read_topic, require_topics

    with open_bag(path) as reader:
        types = require_topics(reader, ['/cmd_vel'], path)
        if types['/cmd_vel'] not in ('geometry_msgs/msg/Twist', 'geometry_msgs/msg/TwistStamped'):
            raise BagError(f'{path}: /cmd_vel has type {types["/cmd_vel"]}, expected '
                           'geometry_msgs/msg/Twist')
        t_ns, msgs = read_topic(reader, '/cmd_vel')
    twists = [getattr(m, 'twist', m) for m in msgs]
    t = (t_ns - t_ns[0]) * 1e-9
    v = np.array([tw.linear.x for tw in twists], dtype=np.float64)
    w = np.array([tw.angular.z for tw in twists], dtype=np.float64)
    keep = np.append(np.diff(t) > 0, True)  # equal receive times: the last message wins
    return CommandSequence(t[keep], v[keep], w[keep], mode, name=Path(path).name,
                           description=f'/cmd_vel of {path}', _source=f'{path}: /cmd_vel')


def command_sequence(spec: RunSpec, params: Any, note: Notify = _quiet) -> Any:
    """The CommandSequence of ``spec`` (its scenario or the /cmd_vel of its bag); a manoeuvre
    alias's note goes to ``note``."""
    from rc_sim_control.commands import (
        MANOEUVRE_ALIASES,
        MANOEUVRES,
        canonical_manoeuvre,
        load_sequence,
        manoeuvre,
    )

    if spec.cmd_vel_bag:
        return sequence_from_bag(spec.cmd_vel_bag, spec.mapper_mode)
    name = str(spec.scenario)
    kwargs = {key: value for key, value in (('speed', spec.speed_mps), ('radius', spec.radius_m))
              if value is not None}
    canonical, alias_note = canonical_manoeuvre(name)
    if alias_note:
        note(f'note: {alias_note}')
    if canonical in MANOEUVRES:
        return manoeuvre(canonical, params, **kwargs)
    if kwargs:
        raise ConfigError(f'--speed/--radius apply to named manoeuvres, not to {name!r}')
    path = Path(name)
    if path.suffix in ('.yaml', '.yml') or path.is_file():
        return load_sequence(path)
    shipped = scenario_path(name)
    if shipped is not None:
        return load_sequence(shipped)
    from rc_sim_description.yamlio import did_you_mean

    shipped_names = shipped_scenarios()
    hint = did_you_mean(name, [*MANOEUVRES, *MANOEUVRE_ALIASES, *shipped_names])
    raise ConfigError(f'unknown scenario {name!r}{hint}'
                      f' (a manoeuvre: {", ".join(MANOEUVRES)}; a shipped scenario: '
                      f'{", ".join(shipped_names) or "none"}; or a scenario YAML file)')


def played_part(seq: Any, duration_s: float | None) -> Any:
    """The part of ``seq`` a run of ``duration_s`` seconds plays (all of it when None)."""
    from rc_sim_control.commands import CommandSequence

    if duration_s is None or duration_s >= float(seq.t[-1]):
        return seq
    keep = seq.t <= duration_s
    keep[0] = True
    return CommandSequence(seq.t[keep], seq.linear_x[keep], seq.angular_z[keep], seq.mode,
                           seq.name, seq.description)


def _check_given_start(world: Any, params: Any, start: tuple[float, ...], world_name: str
                       ) -> None:
    """A given start whose car footprint touches an obstacle is refused, naming the obstacle."""
    from rc_sim_engine.world.start_pose import touched_obstacle

    hit = touched_obstacle(world, params, (start[0], start[1], start[2]))
    if hit is not None:
        raise ConfigError(f'--start {start[0]:g} {start[1]:g} {start[2]:g}: the car touches '
                          f'{hit!r} of {world_name} there; give a start pose clear of the '
                          'walls')


def choose_start_pose(world: Any, params: Any, seq: Any, spawn: tuple[float, float, float],
                      label: str, world_name: str,
                      given: tuple[float, float, float] | None = None
                      ) -> tuple[tuple[float, float, float], str]:
    """(start pose, note) for playing ``seq``: ``given`` (checked clear of the walls), else the
    spawn pose or the nearest pose inside the track where the predicted path stays clear
    (note: why it moved), or a one-line refusal naming a world where it fits."""
    from rc_sim_engine.world.collision import footprint_from_params
    from rc_sim_engine.world.start_pose import choose_start, enclosure, path_extent

    if given is not None:
        _check_given_start(world, params, given, world_name)
        return given, ''
    choice = choose_start(world, params, seq, spawn)
    if choice.fits:
        note = (f' (moved from the spawn pose {spawn[0]:g}, {spawn[1]:g}, {spawn[2]:g}: the '
                f'scenario does not fit there)' if choice.moved else '')
        return (choice.x, choice.y, choice.yaw), note
    enclosed = enclosure(world, (spawn[0], spawn[1]))
    foot = footprint_from_params(params)
    car_l, car_w = 2 * foot.half_length, 2 * foot.half_width
    where = (f'the free space around the spawn pose ({spawn[0]:g}, {spawn[1]:g}) is about '
             f'{enclosed.length:.2f} m x {enclosed.width:.2f} m, enclosed by '
             f'{enclosed.text(4)}' if enclosed is not None and enclosed.walls else '')
    if enclosed is not None and (min(enclosed.length, enclosed.width) < car_w
                                 or max(enclosed.length, enclosed.width) < car_l):
        raise ConfigError(f'no start pose in {world_name} is clear of the walls: {where}, '
                          f'too small for the car ({car_l:.2f} m x {car_w:.2f} m); fix the '
                          'world or give another --world')
    length, width = path_extent(seq, params)
    other = _fitting_world(params, seq, exclude=world.name)
    hint = f'try --world {other}' if other else 'try a shorter or tighter scenario'
    raise ConfigError(f'scenario {label!r} does not fit in {world_name}: it sweeps about '
                      f'{length:.1f} m x {width:.1f} m and no start pose inside the track keeps '
                      f'it clear of the walls{f" ({where})" if where else ""}; {hint} (or give '
                      '--start X Y YAW)')


def _fitting_world(params: Any, seq: Any, exclude: str) -> str | None:
    """The first shipped world (walled tracks first) where ``seq`` fits, or None."""
    from rc_sim_engine.world.start_pose import choose_start

    for name in WORLD_ORDER:
        if name == exclude:
            continue
        try:
            loaded = load_any_world(name)
        except ConfigError:
            continue
        if choose_start(loaded.world, params, seq, loaded.spawn).fits:
            return name
    return None


def _car_starts(world: Any, cars: list[Any], given: tuple[tuple[float, float, float], ...],
                first: tuple[float, ...]) -> np.ndarray:
    """(N, 3) start poses: one given start per car, or a grid behind ``first``; for several
    cars checked clear of the walls and of each other."""
    import numpy as np

    from rc_sim_engine.sim.car_grid import check_starts, grid_starts

    if len(cars) == 1:
        return np.array([first], dtype=np.float64)
    starts = (np.array(given, dtype=np.float64) if len(given) == len(cars)
              else grid_starts(first, cars))
    check_starts(world, cars, starts)
    return starts


def prepare_run(spec: RunSpec, notify: Notify = _quiet, compile_kernels: bool = True,
                vehicle: Any = None) -> PreparedRun:
    """Load, resolve and check everything ``spec`` names and build its Simulator.

    ``notify``: notes, warnings and compile progress (one line each). ``compile_kernels``:
    compile the kernels the run needs first (timed: ``compile_s``). ``vehicle``: VehicleParams
    already loaded for car 0 (else from ``spec.params``).
    """
    from rc_sim_description.limits import MAX_DURATION_S
    from rc_sim_engine.sim.car_grid import load_car_params, parse_car_options
    from rc_sim_engine.sim.run_limits import check_start, check_world
    from rc_sim_engine.sim.simulator import SETTLE_TIME, SimConfig, Simulator

    n = spec.cars
    if vehicle is not None and n == 1 and not spec.params:
        cars = [vehicle]
    else:
        cars = load_car_params(n, list(spec.params),
                               parse_car_options(list(spec.car_params), n, '--car-params'))
    params = cars[0]
    loaded = load_any_world(spec.world, notify)
    world = loaded.world
    check_world(world)
    seq = command_sequence(spec, params, notify)
    label = seq.name or 'scenario'
    total = spec.duration_s if spec.duration_s is not None else float(seq.t[-1]) + SETTLE_TIME
    MAX_DURATION_S.check(total, '--duration' if spec.duration_s is not None else
                         f'scenario {label!r} (ends at {float(seq.t[-1]):g} s)')
    config = SimConfig(model=spec.model, tyre_model=spec.tyre_model,
                       lidar_errors=lidar_error_config(spec.lidar_errors), seed=spec.seed,
                       realtime_factor=spec.realtime_factor,
                       collision_response=spec.collision)
    compile_s = 0.0
    if compile_kernels:
        from rc_sim_engine.sim.warmup import ensure_compiled

        compile_s = ensure_compiled(notify, lidar_errors=config.lidar_errors is not None)
    if spec.start:
        first = spec.start[0]
        start, note = ((first, '') if n > 1 else  # several cars: checked with the others
                       choose_start_pose(world, params, seq, loaded.spawn, label, spec.world,
                                         given=first))
    else:
        check_start([loaded.spawn])
        start, note = choose_start_pose(world, params, played_part(seq, spec.duration_s),
                                        loaded.spawn, label, spec.world)
    starts = _car_starts(world, cars, spec.start, start)
    sim = Simulator(cars if n > 1 else params, world, config,
                    start=starts if n > 1 else start)
    return PreparedRun(spec, sim, loaded, seq, label, float(total), starts, note, compile_s,
                       cars)
