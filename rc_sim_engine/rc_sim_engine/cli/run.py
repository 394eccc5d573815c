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

__all__ = ['command', 'input_files', 'register', 'run_spec']


def register(subparsers: Any) -> None:
    """Add ``rcsim run`` to the top-level parser."""
    from rc_sim_engine.sim.run_setup import RunSpec

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
    p.add_argument('--world', default=RunSpec.default('world'),
                   help='world name, SDF file, map_server track map YAML or the name of a '
                   'shipped track map (chicane_track) (default: %(default)s)')
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
    p.add_argument('--model', default=RunSpec.default('model'),
                   help='vehicle model: single_track, kinematic or kinematic_4ws (default: '
                   '%(default)s)')
    p.add_argument('--tyre-model', help='lateral tyre model override (linear, fiala, '
                   'fiala_unsaturated, pacejka; default: vehicle.yaml)')
    p.add_argument('--lidar-errors', metavar='PRESET|YAML',
                   help='lidar error preset (ideal, hokuyo_ust10lx, ...) or YAML file')
    p.add_argument('--seed', type=int, default=RunSpec.default('seed'),
                   help='seed of every random generator (default: %(default)s)')
    p.add_argument('--storage', choices=('sqlite3', 'mcap'), default='sqlite3',
                   help='bag storage (default: sqlite3, what Humble reads by default)')
    p.add_argument('--realtime-factor', type=float,
                   default=RunSpec.default('realtime_factor'),
                   help='pace the loop at this multiple of real time (default %(default)s: as '
                   'fast as possible)')
    p.add_argument('--start', nargs=3, type=float, metavar=('X', 'Y', 'YAW'), action='append',
                   help="base_link start pose in odom (default: the world's spawn pose, moved "
                   'to the nearest pose inside the track where the scenario stays clear of the '
                   'walls). With --cars N: give it once (car 0 there, the others lined up '
                   'behind it) or once per car, in car order')
    p.add_argument('--cars', type=int, default=RunSpec.default('cars'), metavar='N',
                   help='number of cars in the world (default %(default)s). Every car plays the '
                   'scenario; '
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
    p.add_argument('--mode', default=RunSpec.default('mapper_mode'),
                   choices=('curvature', 'radius', 'steering_angle', 'yaw_rate'),
                   help='mapper mode of the /cmd_vel in --cmd-vel-bag (default: %(default)s)')
    p.add_argument('--collision', default=RunSpec.default('collision'),
                   choices=('stop', 'bounce', 'ignore'),
                   help='response when a car touches an obstacle or another car (default: '
                   '%(default)s; bounce between cars is the impact of two point masses)')
    p.add_argument('--no-plots', action='store_true', help='skip the PNG plots')
    p.add_argument('--animate', action='store_true', help='also write animation.gif: walls, '
                   'car footprint, trail and lidar scan (at most 300 frames at 10 fps; a few '
                   'seconds)')
    p.add_argument('--force', action='store_true', help='overwrite an existing output')
    p.set_defaults(func=command)


def run_spec(args: argparse.Namespace) -> Any:
    """The RunSpec of the parsed options (checked: one line naming the option if bad)."""
    from rc_sim_engine.sim.run_setup import RunSpec

    return RunSpec(world=args.world, scenario=args.scenario, cmd_vel_bag=args.cmd_vel_bag,
                   mapper_mode=args.mode, speed_mps=args.speed, radius_m=args.radius,
                   duration_s=args.duration, params=tuple(args.params),
                   car_params=tuple(args.car_params), cars=args.cars,
                   start=tuple((p[0], p[1], p[2]) for p in args.start or ()),
                   model=args.model, tyre_model=args.tyre_model,
                   lidar_errors=args.lidar_errors, seed=args.seed,
                   realtime_factor=args.realtime_factor, collision=args.collision)


def command(args: argparse.Namespace) -> int:
    """Run ``rcsim run``; returns the exit status (user errors raise RcSimError)."""
    import time

    from rc_sim_description.atomic import check_output_path
    from rc_sim_engine.compiled.cache import start_numba_without_blas
    from rc_sim_engine.output.plot_worker import PlotWorker

    wall0 = time.perf_counter()
    spec = run_spec(args)
    # never over an input (with or without --force); also probes that new entries can be made
    check_output_path(args.out, force=args.force, kind='bag', inputs=input_files(args))
    worker = None if args.no_plots else PlotWorker()  # plots drawn on another core meanwhile
    start_numba_without_blas()  # this process runs the engine's kernels only
    try:
        return _run(args, spec, worker, wall0)
    finally:
        if worker is not None:
            worker.close()


def _run(args: argparse.Namespace, spec: Any, worker: Any, wall0: float) -> int:
    """The run itself (see :func:`command`)."""
    import time

    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_description.cli_support import progress
    from rc_sim_description.errors import DegenerateError
    from rc_sim_description.frames import car_namespaces
    from rc_sim_description.yamlio import dump_yaml
    from rc_sim_engine.output.bags import SimBagStream
    from rc_sim_engine.sim.recorder import ThreadedSink
    from rc_sim_engine.sim.run_limits import check_bag
    from rc_sim_engine.sim.run_setup import prepare_run

    run = prepare_run(spec, lambda line: print(line, file=sys.stderr, flush=True))
    sim, label, starts, note, n = run.simulator, run.label, run.starts, run.start_note, spec.cars
    check_bag(sim, run.total_s)
    title = f'{run.world.world.name}: {label}'
    with BagWriter(args.out, storage=args.storage, force=args.force, finite=True) as bag:
        # the bag is written by a thread while the loop runs (chunk by chunk, bounded memory)
        with ThreadedSink(SimBagStream(bag, sim.params, lidar=sim.config.lidar)) as sink:
            with progress(f'simulating {label}', total=run.total_s) as bar:
                result = sim.play(run.sequence, spec.duration_s, progress=bar.update,
                                  sink=sink)
            if worker is not None:
                worker.start(result, bag.directory, title)
        summary = result.summary()
        summary.update({'world': str(run.world.path), 'scenario': label, 'model': spec.model,
                        'seed': spec.seed, 'start': [float(v) for v in starts[0]],
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
            from rc_sim_engine.output.animation import write_animation

            plots.insert(0, write_animation(result, bag.directory / 'animation.gif', title).name)
        counts = dict(bag.counts)
        from rc_sim_engine.output.index_page import write_index

        # inside the bag before it is renamed into place: a full disk leaves no bag without it
        write_index(bag.directory, f'rcsim run: {title}', summary,
                    notes=[f'start pose{f" of car_{i}" if n > 1 else ""} {p[0]:.3f}, '
                           f'{p[1]:.3f}, {p[2]:.3f}{note if i == 0 else ""}'
                           for i, p in enumerate(starts)])
    _print_summary(args, result, summary, counts, plots, starts, note,
                   time.perf_counter() - wall0 - run.compile_s, run.compile_s)
    return 0


def input_files(args: argparse.Namespace) -> dict[str, list[str]]:
    """The files ``rcsim run`` reads, by flag: its output must overlap none of them."""
    from rc_sim_engine.cli.maps import map_inputs
    from rc_sim_engine.world.track_map import is_map_yaml

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
