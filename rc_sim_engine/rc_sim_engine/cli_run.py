"""``rcsim run``: simulate a scenario in a world with the embedded engine and write a bag + plots.

    rcsim run --world flat_track --scenario two_circles --out runs/eight

Scenarios: a named manoeuvre of :func:`rc_sim_control.commands.manoeuvre`, a scenario shipped in
``rc_sim_engine/config/scenarios/<name>.yaml`` (e.g. ``basic_track_lap``), a scenario YAML file
(:func:`rc_sim_control.commands.load_sequence`), or the ``/cmd_vel`` of an existing bag
(``--cmd-vel-bag``). The output directory is a rosbag2 bag (sqlite3 by default) that also holds
``trajectory.png``, ``signals.png``, ``summary.yaml``, ``index.html`` (summary and plots on one
page) and, with ``--animate``, ``animation.gif``; it appears only when the run succeeded.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
import sys
from typing import Any
import warnings

__all__ = ['command', 'input_files', 'register', 'scenario_path', 'sequence_from_bag']

WORLD_ORDER = ('basic_track', 'figure_eight', 'flat_track')  # suggestion order (walled first)


def register(subparsers: Any) -> None:
    """Add ``rcsim run`` to the top-level parser."""
    p = subparsers.add_parser(
        'run', help='simulate a scenario with the embedded engine; write a bag and plots',
        description='Simulate a scenario in a world with the embedded engine. The output '
        'directory is a rosbag2 bag (/clock, /cmd_vel, /steering_angle, /rear_wheel_speed, '
        '/joint_states, /odom, /tf, /imu, /scan, + /scan_raw with lidar errors) that also holds '
        'trajectory.png, signals.png, summary.yaml and index.html (everything on one page). A '
        "named manoeuvre starts at the world's spawn pose, or at the nearest pose inside the "
        'track where it stays clear of the walls; one that fits nowhere in the world is '
        'refused with a world that fits. Example: rcsim run --world basic_track '
        '--scenario basic_track_lap --out runs/lap')
    p.add_argument('--world', default='basic_track',
                   help='world name, SDF file or map_server track map YAML (default: '
                   'basic_track)')
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument('--scenario', help='manoeuvre name (line, circle_left, circle_right, '
                     'two_circles, steering_steps, speed_steps, slalom, steering_chirp), shipped '
                     'scenario name (basic_track_lap) or scenario YAML file (a YAML may drive '
                     'backwards: negative linear_x)')
    src.add_argument('--cmd-vel-bag', metavar='BAG', help='replay the /cmd_vel of this bag')
    p.add_argument('--out', required=True, help='output bag directory (missing parent '
                   'directories are created)')
    p.add_argument('--params', metavar='YAML', action='append', default=[],
                   help='vehicle override YAML (partial vehicle.yaml, e.g. a calibration '
                   'result) merged over vehicle.yaml; repeatable')
    p.add_argument('--duration', type=float, help='simulated time [s] (default: scenario end + '
                   '1 s to come to rest)')
    p.add_argument('--model', default='single_track',
                   help='vehicle model: single_track (default), kinematic or kinematic_4ws')
    p.add_argument('--tyre-model', help='lateral tyre model override (linear, fiala, '
                   'fiala_unsaturated, pacejka; default: vehicle.yaml)')
    p.add_argument('--lidar-errors', metavar='PRESET|YAML',
                   help='lidar error preset (ideal, hokuyo_ust10lx, ...) or YAML file')
    p.add_argument('--seed', type=int, default=0,
                   help='seed of every random generator (default: 0)')
    p.add_argument('--storage', choices=('sqlite3', 'mcap'), default='sqlite3',
                   help='bag storage (default: sqlite3, what Humble reads by default)')
    p.add_argument('--realtime-factor', type=float, default=0.0,
                   help='pace the loop at this multiple of real time (default 0: as fast as '
                   'possible)')
    p.add_argument('--start', nargs=3, type=float, metavar=('X', 'Y', 'YAW'), action='append',
                   help="base_link start pose in odom (default: the world's spawn pose, moved "
                   'to the nearest pose inside the track where the scenario stays clear of the '
                   'walls). With --cars N: give it once (car 0 there, the others lined up '
                   'behind it) or once per car, in car order')
    p.add_argument('--cars', type=int, default=1, metavar='N',
                   help='number of cars in the world (default 1). Every car plays the scenario; '
                   'cars collide with each other (--collision) and each lidar sees the other '
                   'cars. Without one --start per car, car i starts straight behind car i-1 '
                   'with half a metre free between them (all starts must be clear of the walls '
                   'and of each other). The bag '
                   "holds each car's topics under /car_<i>/ and frames car_<i>/...")
    p.add_argument('--car-params', metavar='I=YAML', action='append', default=[],
                   help='vehicle override YAML for car I only, merged after --params; '
                   'repeatable (e.g. --car-params 1=heavy.yaml)')
    p.add_argument('--speed', type=float, help='manoeuvre speed [m/s], > 0 (named manoeuvres '
                   'drive forwards)')
    p.add_argument('--radius', type=float, help='manoeuvre radius [m] (circles, two_circles; '
                   'at least the minimum turning radius)')
    p.add_argument('--mode', default='yaw_rate', choices=('curvature', 'radius',
                                                          'steering_angle', 'yaw_rate'),
                   help='mapper mode of the /cmd_vel in --cmd-vel-bag (default: yaw_rate)')
    p.add_argument('--collision', default='stop', choices=('stop', 'bounce', 'ignore'),
                   help='response when a car touches an obstacle or another car (default: '
                   'stop; bounce between cars is the impact of two point masses)')
    p.add_argument('--no-plots', action='store_true', help='skip the PNG plots')
    p.add_argument('--animate', action='store_true', help='also write animation.gif: walls, '
                   'car footprint, trail and lidar scan (at most 300 frames at 10 fps; a few '
                   'seconds)')
    p.add_argument('--force', action='store_true', help='overwrite an existing output')
    p.set_defaults(func=command)


def scenario_path(name: str) -> Path | None:
    """Shipped scenario file ``config/scenarios/<name>.yaml`` of rc_sim_engine, if any."""
    from rc_sim_description.errors import ConfigError
    from rc_sim_description.paths import share_path

    try:
        path = share_path(f'config/scenarios/{name}.yaml', package='rc_sim_engine')
    except ConfigError:
        return None
    return path if path.is_file() else None


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


def _sequence(args: argparse.Namespace, params: Any) -> Any:
    from rc_sim_control.commands import (
        MANOEUVRE_ALIASES,
        MANOEUVRES,
        canonical_manoeuvre,
        load_sequence,
        manoeuvre,
    )
    from rc_sim_description.errors import ConfigError

    if args.cmd_vel_bag:
        return sequence_from_bag(args.cmd_vel_bag, args.mode)
    name = args.scenario
    kwargs = {key: getattr(args, key) for key in ('speed', 'radius')
              if getattr(args, key) is not None}
    canonical, note = canonical_manoeuvre(name)
    if note:
        print(f'note: {note}', file=sys.stderr)
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

    shipped_names = _shipped_scenarios()
    hint = did_you_mean(name, [*MANOEUVRES, *MANOEUVRE_ALIASES, *shipped_names])
    raise ConfigError(f'unknown scenario {name!r}{hint}'
                      f' (a manoeuvre: {", ".join(MANOEUVRES)}; a shipped scenario: '
                      f'{", ".join(shipped_names) or "none"}; or a scenario YAML file)')


def _shipped_scenarios() -> list[str]:
    """Names of the scenario files shipped in ``rc_sim_engine/config/scenarios``."""
    from rc_sim_description.errors import ConfigError
    from rc_sim_description.paths import share_path

    try:
        folder = share_path('config/scenarios', package='rc_sim_engine')
    except ConfigError:
        return []
    return sorted(p.stem for p in folder.glob('*.yaml'))


def _lidar_errors(spec: str | None) -> Any:
    if spec is None:
        return None
    from rc_sim_sensors.lidar_config import PRESETS, LidarErrorConfig

    if spec in PRESETS:
        return LidarErrorConfig.from_preset(spec)
    if not Path(spec).is_file():
        from rc_sim_description.errors import ConfigError
        from rc_sim_description.yamlio import did_you_mean

        hint = did_you_mean(spec, PRESETS)
        raise ConfigError(f'--lidar-errors: {spec!r} is neither a preset{hint} '
                          f'({", ".join(PRESETS)}) nor a YAML file')
    return LidarErrorConfig.from_yaml(spec)


def _positive(name: str, value: float | None) -> None:
    from rc_sim_description.errors import ConfigError

    if value is not None and not (math.isfinite(value) and value > 0):
        raise ConfigError(f'{name}: must be a finite number > 0, got {value!r}')


def command(args: argparse.Namespace) -> int:
    """Run ``rcsim run``; returns the exit status (user errors raise RcSimError)."""
    import time

    from rc_sim_description.atomic import check_output_path
    from rc_sim_description.errors import ConfigError
    from rc_sim_engine._jit_cache import start_numba_without_blas
    from rc_sim_engine.plot_worker import PlotWorker

    wall0 = time.perf_counter()
    _positive('--duration', args.duration)
    _positive('--speed', args.speed)
    _positive('--radius', args.radius)
    if not (math.isfinite(args.realtime_factor) and args.realtime_factor >= 0):
        raise ConfigError(f'--realtime-factor: must be >= 0, got {args.realtime_factor!r}')
    if args.seed < 0:
        raise ConfigError(f'--seed: must be >= 0, got {args.seed}')
    _check_cars(args)
    # never over an input (with or without --force); also probes that new entries can be made
    check_output_path(args.out, force=args.force, kind='bag', inputs=input_files(args))
    worker = None if args.no_plots else PlotWorker()  # plots drawn on another core meanwhile
    start_numba_without_blas()  # this process runs the engine's kernels only
    try:
        return _run(args, worker, wall0)
    finally:
        if worker is not None:
            worker.close()


def _run(args: argparse.Namespace, worker: Any, wall0: float) -> int:
    """The run itself (see :func:`command`)."""
    import time

    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_description.cli_support import progress
    from rc_sim_description.errors import ConfigError, DegenerateError
    from rc_sim_description.frames import car_namespaces
    from rc_sim_description.limits import MAX_DURATION_S
    from rc_sim_description.paths import world_path
    from rc_sim_description.worlds import SpawnPose, spawn_pose
    from rc_sim_description.yamlio import dump_yaml
    from rc_sim_engine.bagio import SimBagStream
    from rc_sim_engine.car_grid import load_car_params, parse_car_options
    from rc_sim_engine.map_world import load_map_world
    from rc_sim_engine.recorder import ThreadedSink
    from rc_sim_engine.run_limits import check_bag, check_start, check_world
    from rc_sim_engine.simulator import SETTLE_TIME, SimConfig, Simulator
    from rc_sim_engine.track_map import is_map_yaml
    from rc_sim_engine.warmup import ensure_compiled
    from rc_sim_engine.world import SdfWarning, load_world

    n = args.cars
    cars = load_car_params(n, args.params, parse_car_options(args.car_params, n,
                                                             '--car-params'))
    params = cars[0]
    map_spawn = None
    if is_map_yaml(args.world):  # a map_server track map (YAML + image)
        wpath = Path(args.world)
        world, map_spawn = load_map_world(wpath)
    else:
        wpath = world_path(args.world)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always', SdfWarning)
            world = load_world(wpath)
        for w in caught:
            print(f'warning: {w.message}', file=sys.stderr)
    check_world(world)
    seq = _sequence(args, params)
    label = seq.name or 'scenario'
    duration = args.duration
    total = duration if duration is not None else float(seq.t[-1]) + SETTLE_TIME
    MAX_DURATION_S.check(total, '--duration' if duration is not None else
                         f'scenario {label!r} (ends at {float(seq.t[-1]):g} s)')
    config = SimConfig(model=args.model, tyre_model=args.tyre_model,
                       lidar_errors=_lidar_errors(args.lidar_errors), seed=args.seed,
                       realtime_factor=args.realtime_factor, collision_response=args.collision)
    compile_s = ensure_compiled(lambda m: print(m, file=sys.stderr, flush=True),
                                lidar_errors=config.lidar_errors is not None)
    given = args.start or []
    for pose in given:
        if not all(math.isfinite(v) for v in pose):
            raise ConfigError(f'--start: must be finite numbers, got {pose}')
        check_start([pose])
    if given:
        start = tuple(given[0])
        note = ''
        if n == 1:  # several cars: checked with the others (_car_starts)
            _check_given_start(world, params, start, args.world)
    else:
        spawn = spawn_pose(wpath) if map_spawn is None else SpawnPose(*map_spawn)
        check_start([(spawn.x, spawn.y, spawn.yaw)])
        start, note = _place(world, params, _played(seq, args.duration),
                             (spawn.x, spawn.y, spawn.yaw), label, args.world)
    starts = _car_starts(world, cars, given, start)
    sim = Simulator(cars if n > 1 else params, world, config,
                    start=starts if n > 1 else start)
    check_bag(sim, total)
    title = f'{world.name}: {label}'
    with BagWriter(args.out, storage=args.storage, force=args.force, finite=True) as bag:
        # the bag is written by a thread while the loop runs (chunk by chunk, bounded memory)
        with ThreadedSink(SimBagStream(bag, sim.params, lidar=config.lidar)) as sink:
            with progress(f'simulating {label}', total=total) as bar:
                result = sim.play(seq, duration, progress=bar.update, sink=sink)
            if worker is not None:
                worker.start(result, bag.directory, title)
        summary = result.summary()
        summary.update({'world': str(wpath), 'scenario': label, 'model': args.model,
                        'seed': args.seed, 'start': [float(v) for v in start],
                        'collision_events': [
                            {'t': e.t, 'obstacle': e.obstacle, 'speed': e.speed,
                             **({'car': e.car} if n > 1 else {})}
                            for e in result.collisions]})
        if not math.isfinite(summary.get('realtime_factor', 0.0)):
            summary['realtime_factor'] = None  # a loop too fast to time: not measurable
        if n > 1:
            summary['cars'] = n
            summary['starts'] = starts.tolist()
            summary['namespaces'] = car_namespaces(n)
        (bag.directory / 'summary.yaml').write_text(
            dump_yaml(summary, f'{args.out}/summary.yaml', error=DegenerateError,
                      hint=' (the run degenerated: nothing was written)'), encoding='utf-8')
        bag.finish_storage()  # indexes and metadata while the plots are drawn
        plots = [] if worker is None else worker.finish()
        if args.animate:
            from rc_sim_engine.animation import write_animation

            plots.insert(0, write_animation(result, bag.directory / 'animation.gif', title).name)
        counts = dict(bag.counts)
        from rc_sim_engine.index_page import write_index

        # inside the bag before it is renamed into place: a full disk leaves no bag without it
        write_index(bag.directory, f'rcsim run: {title}', summary,
                    notes=[f'start pose{f" of car_{i}" if n > 1 else ""} {p[0]:.3f}, '
                           f'{p[1]:.3f}, {p[2]:.3f}{note if i == 0 else ""}'
                           for i, p in enumerate(starts)])
    _print_summary(args, result, summary, counts, plots, starts, note,
                   time.perf_counter() - wall0 - compile_s, compile_s)
    return 0


def input_files(args: argparse.Namespace) -> dict[str, list[str]]:
    """The files ``rcsim run`` reads, by flag: its output must overlap none of them."""
    from rc_sim_engine.cli_map import map_inputs
    from rc_sim_engine.track_map import is_map_yaml

    def files(value: str | None) -> list[str]:
        return [value] if value and Path(value).is_file() else []

    world: list[str] = []
    if Path(args.world).exists():
        world = ([str(p) for p in map_inputs(args.world)] if is_map_yaml(args.world)
                 else [args.world])
    return {'--params': list(args.params),
            '--car-params': [spec.partition('=')[2] for spec in args.car_params],
            '--scenario': files(args.scenario), '--cmd-vel-bag': [args.cmd_vel_bag or ''],
            '--world': world, '--lidar-errors': files(args.lidar_errors)}


def _check_cars(args: argparse.Namespace) -> None:
    """--cars and the number of --start poses, before anything is loaded."""
    from rc_sim_description.errors import ConfigError
    from rc_sim_engine.run_limits import check_cars

    n = args.cars
    if n < 1:
        raise ConfigError(f'--cars: must be an integer >= 1, got {n}')
    check_cars(n)
    given = len(args.start or [])
    if given not in (0, 1, n):
        raise ConfigError(f'--start given {given} times for --cars {n}: give it once (car 0 '
                          f'there, the others lined up behind) or once per car')


def _check_given_start(world: Any, params: Any, start: tuple[float, ...], world_name: str
                       ) -> None:
    """A --start whose car footprint touches an obstacle is refused, naming the obstacle."""
    from rc_sim_description.errors import ConfigError
    from rc_sim_engine.start_pose import touched_obstacle

    hit = touched_obstacle(world, params, (start[0], start[1], start[2]))
    if hit is not None:
        raise ConfigError(f'--start {start[0]:g} {start[1]:g} {start[2]:g}: the car touches '
                          f'{hit!r} of {world_name} there; give a start pose clear of the '
                          'walls')


def _car_starts(world: Any, cars: list[Any], given: list[list[float]],
                first: tuple[float, ...]) -> Any:
    """(N, 3) start poses: one --start per car, or a grid behind ``first``; for several cars
    checked clear of the walls and of each other."""
    import numpy as np

    from rc_sim_engine.car_grid import check_starts, grid_starts

    if len(cars) == 1:
        return np.array([first], dtype=np.float64)
    starts = (np.array(given, dtype=np.float64) if len(given) == len(cars)
              else grid_starts(first, cars))
    check_starts(world, cars, starts)
    return starts


def _played(seq: Any, duration: float | None) -> Any:
    """The part of ``seq`` a run of ``duration`` seconds plays (all of it when None)."""

    from rc_sim_control.commands import CommandSequence

    if duration is None or duration >= float(seq.t[-1]):
        return seq
    keep = seq.t <= duration
    keep[0] = True
    return CommandSequence(seq.t[keep], seq.linear_x[keep], seq.angular_z[keep], seq.mode,
                           seq.name, seq.description)


def _place(world: Any, params: Any, seq: Any, spawn: tuple[float, float, float], label: str,
           world_name: str) -> tuple[tuple[float, float, float], str]:
    """Start pose for ``seq``: the spawn pose, the nearest pose inside the track where the
    predicted path stays clear, or a one-line refusal naming a world where it fits."""
    from rc_sim_description.errors import ConfigError
    from rc_sim_engine.collision import footprint_from_params
    from rc_sim_engine.start_pose import choose_start, enclosure, path_extent

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
    from rc_sim_description.errors import ConfigError
    from rc_sim_description.paths import world_path
    from rc_sim_description.worlds import spawn_pose
    from rc_sim_engine.start_pose import choose_start
    from rc_sim_engine.world import load_world

    for name in WORLD_ORDER:
        if name == exclude:
            continue
        try:
            path = world_path(name)
            spawn = spawn_pose(path)
            world = load_world(path)
        except ConfigError:
            continue
        if choose_start(world, params, seq, (spawn.x, spawn.y, spawn.yaw)).fits:
            return name
    return None


def _factor(value: float) -> str:
    return f'{value:.0f}x' if value >= 10 else f'{value:.2g}x'


def _print_summary(args: argparse.Namespace, result: Any, summary: dict[str, Any],
                   counts: dict[str, int], plots: list[str], starts: Any, note: str,
                   wall: float, compile_s: float = 0.0) -> None:
    out = Path(args.out)
    n = len(starts)
    lines = [f'rcsim run: {result.world.name} / {summary["scenario"]} -> {out}'
             + (f' ({n} cars)' if n > 1 else '')]
    for i, start in enumerate(starts):
        lines.append(('  start pose          ' if n == 1 else f'  car_{i:<16}')
                     + f'x={start[0]:.3f} m, y={start[1]:.3f} m, yaw={start[2]:.3f} rad'
                     + (note if i == 0 else ''))
    lines.append(f'  simulated           {result.sim_time:.2f} s (model {args.model}, dt '
                 f'{result.config.dt * 1e3:g} ms)')
    for key, label, fmt in (('distance_m', 'distance', '{:.2f} m'),
                            ('max_lateral_acceleration_mps2', 'max lateral accel',
                             '{:.2f} m/s^2'),
                            ('collisions', 'collisions', '{}')):
        values = ', '.join(fmt.format(v) for v in summary[key][:n])
        lines.append(f'  {label:<20}{values}' + (' (per car)' if n > 1 else ''))
    lines += [
        f'  real-time factor    {_factor(result.realtime_factor)} (loop), '
        f'{_factor(result.sim_time / wall)} (whole command, {wall:.2f} s'
        + (f', without the one-time kernel compile of {compile_s:.0f} s)' if compile_s else ')'),
        f'  bag                 {out} ({args.storage}, {sum(counts.values())} messages on '
        f'{len(counts)} topics' + (', /car_<i>/...' if n > 1 else '') + ')',
    ]
    for e in result.collisions[:5]:
        who = f'of car_{e.car} ' if n > 1 else ''
        lines.append(f'  collision at t={e.t:.2f} s {who}with {e.obstacle} at '
                     f'{abs(e.speed):.2f} m/s')
    if plots:
        lines.append(f'  plots               {", ".join(str(out / p) for p in plots)}')
    lines.append(f'  summary page        {out / "index.html"}')
    print('\n'.join(lines))
