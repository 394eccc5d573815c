"""``rcsim track``, ``rcsim evaluate`` and ``rcsim manoeuvre``: argument parsing and printing.

The cores live in ROS-free modules: the closed-loop run in :mod:`rc_sim_engine.scenarios.tracking`,
the evaluation in :mod:`rc_sim_control.evaluation`, the bag I/O in
:mod:`rc_sim_engine.output.tracking_bag`, the figures in
:mod:`rc_sim_engine.output.tracking_plots`, the manoeuvres in
:mod:`rc_sim_engine.scenarios.manoeuvres`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import math
from pathlib import Path
import sys
from typing import Any

from rc_sim_control.evaluation import DEFAULT_TRANSIENT
from rc_sim_description.errors import ConfigError, RcSimError

__all__ = ['register']


# --------------------------------------------------------------------------- CLI


def _check_control(rate_hz: float, duration_s: float) -> None:
    """The controller runs at most once per physics step, and its calls (duration x rate) stay
    within :data:`~rc_sim_description.limits.MAX_CONTROL_TICKS` (checked before the run)."""
    from rc_sim_description.limits import MAX_CONTROL_TICKS, MAX_DURATION_S
    from rc_sim_engine.sim.simulator import SimConfig

    physics_hz = 1.0 / SimConfig().dt
    if rate_hz > physics_hz * (1 + 1e-9):
        raise ConfigError(f'--control-rate: {rate_hz:g} Hz exceeds the physics rate of '
                          f'{physics_hz:g} Hz (the controller runs at most once per step)')
    MAX_DURATION_S.check(duration_s, 'the tracking run')
    MAX_CONTROL_TICKS.check(duration_s * rate_hz, f'--control-rate {rate_hz:g} Hz over '
                                                  f'{duration_s:g} s')


def _check_transient(value: float) -> None:
    if not (math.isfinite(value) and value >= 0.0):
        raise ConfigError(f'--transient must be >= 0 s, got {value!r}')


def _load_params(overrides: Sequence[str]) -> Any:
    from rc_sim_description.params import load_vehicle_params

    return load_vehicle_params(overrides=list(overrides))


def _world(name: str) -> tuple[Any, tuple[float, float, float]]:
    from rc_sim_engine.sim.run_setup import load_any_world

    loaded = load_any_world(name, lambda line: print(line, file=sys.stderr))
    return loaded.world, loaded.spawn


def command_track(args: argparse.Namespace) -> int:
    """``rcsim track``."""
    from rc_sim_control.tracking import SIZE_KEYS, TrackerSession, reference_limits
    from rc_sim_control.trajectories import (
        TRAJECTORY_ALIASES,
        TRAJECTORY_NAMES,
        canonical_trajectory,
    )
    from rc_sim_description.atomic import check_output_path
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_description.cli_support import progress
    from rc_sim_description.yamlio import did_you_mean
    from rc_sim_engine.output.tracking_bag import write_run_bag
    from rc_sim_engine.output.tracking_plots import plot_tracking
    from rc_sim_engine.scenarios.tracking import run_tracking, tracker_settings

    names = [*TRAJECTORY_NAMES, 'waypoints']
    if args.trajectory not in names and args.trajectory not in TRAJECTORY_ALIASES:
        hint = did_you_mean(args.trajectory, [*names, *TRAJECTORY_ALIASES])
        raise ConfigError(f'--trajectory: unknown trajectory {args.trajectory!r}{hint} '
                          f'(choose from {", ".join(names)})')
    trajectory_name, renamed = canonical_trajectory(args.trajectory)
    if renamed:
        print(f'note: {renamed}', file=sys.stderr)
    check_output_path(args.out, force=args.force, kind='bag', inputs={
        '--params': args.params, '--waypoints': args.waypoints,
        '--world': [args.world] if Path(args.world).is_file() else []})
    _check_transient(args.transient)
    if not (math.isfinite(args.control_rate) and args.control_rate > 0):
        raise ConfigError(f'--control-rate: must be a finite number > 0 Hz, '
                          f'got {args.control_rate!r}')
    if args.seed < 0:
        raise ConfigError(f'--seed: must be >= 0, got {args.seed}')
    if (trajectory_name == 'waypoints') != (args.waypoints is not None):
        raise ConfigError('--trajectory waypoints needs --waypoints CSV' if args.waypoints is None
                          else '--waypoints applies to --trajectory waypoints only')
    if args.duration is not None and not (math.isfinite(args.duration) and args.duration > 0):
        raise ConfigError(f'--duration: must be a finite number > 0 s, got {args.duration!r}')
    params = _load_params(args.params)
    values = tracker_settings(args.set)
    values['trajectory_type'] = trajectory_name
    values['controller'] = args.controller
    if args.waypoints is not None:
        values['waypoints_file'] = args.waypoints
    if args.duration is not None:
        values['duration'] = args.duration
    world, spawn = _world(args.world)
    session = TrackerSession(params, values)
    trajectory = session.activate(0.0, _pose_tuple(spawn))
    limits = reference_limits(trajectory, session.duration, params)
    size_key = SIZE_KEYS.get(trajectory_name)
    if limits.speed > limits.max_speed:  # the car cannot: refuse (the others only degrade)
        raise ConfigError(f"reference speed {limits.speed:.2f} m/s exceeds the car's max_speed "
                          f'{limits.max_speed:.2f} m/s')
    for problem in limits.problems(size_key, session.values.get(size_key or '')):
        print(f'note: {problem}', file=sys.stderr)
    _check_control(args.control_rate, session.duration)
    _compile_kernels('track')
    with progress(f'track {trajectory_name}', session.duration) as bar:
        run = run_tracking(params, world, values, model=args.model, tyre_model=args.tyre_model,
                           start=spawn, control_rate=args.control_rate,
                           transient=args.transient, seed=args.seed,
                           progress=lambda t: bar.update(t))
    title = (f'{trajectory_name} / {run.controller} / {args.model}'
             f'{"" if args.tyre_model is None else " " + args.tyre_model} on {world.name}')
    report = {'trajectory': trajectory_name, 'controller': run.controller,
              'model': args.model, 'tyre_model': args.tyre_model or params.tyres.tyre_model,
              'world': world.name, 'duration_s': run.duration,
              'reference': {'max_speed_mps': limits.speed,
                            'max_curvature_per_m': limits.curvature,
                            'max_lateral_acceleration_mps2': limits.lateral_acceleration},
              'collisions': len(run.result.collisions), **run.evaluation.report()}
    metrics = _metrics_json(report, f'{args.out}/metrics.json')
    with BagWriter(args.out, storage=args.storage, force=args.force, finite=True) as bag:
        write_run_bag(bag, run.result, run.paths, run.evaluation)
        (bag.directory / 'metrics.json').write_text(metrics)
        if not args.no_plots:
            plot_tracking(run.evaluation, bag.directory / 'tracking.png', title, world)
        if args.animate:
            _animate(run.result, bag.directory, title)
        bag.finish_storage()  # the storage file's final name, for the page's file list
        _index(bag.directory, f'rcsim track: {title}', report, run.evaluation.lines())
    print(f'{title}: {run.duration:.1f} s simulated, {len(run.result.collisions)} collision(s)')
    for line in run.evaluation.lines():
        print(line)
    print(f'wrote {args.out} (summary page: {Path(args.out) / "index.html"})')
    return 0


def _metrics_json(report: dict[str, Any], where: str, hint: str = '',
                  error: type[RcSimError] | None = None) -> str:
    """metrics.json text; a NaN or infinite metric is a one-line error (by default exit 3: the
    run or its evaluation degenerated), never the invalid JSON token ``NaN``."""
    from rc_sim_description.errors import DegenerateError
    from rc_sim_description.finite import finite_json

    return finite_json(report, where, error=error or DegenerateError, indent=2,
                       hint=hint or ' (the evaluation degenerated: nothing was written)') + '\n'


#: what rcsim evaluate writes into --out (--force replaces only such a directory)
EVALUATE_FILES = ('metrics.json', 'tracking.png', 'index.html')


def _compile_kernels(command: str) -> None:
    from rc_sim_engine.sim.warmup import ensure_compiled

    ensure_compiled(lambda m: print(m, file=sys.stderr, flush=True), command)


def _animate(result: Any, directory: Path, title: str) -> None:
    from rc_sim_engine.output.animation import write_animation

    write_animation(result, directory / 'animation.gif', title)


def _index(out: str | Path, title: str, report: dict[str, Any], notes: Sequence[str]) -> None:
    from rc_sim_engine.output.index_page import write_index

    write_index(out, title, report, notes=notes)


def _pose_tuple(spawn: tuple[float, float, float]) -> Any:
    from rc_sim_control.tracking import MeasuredPose

    return MeasuredPose(spawn[0], spawn[1], spawn[2], 0.0)


def command_evaluate(args: argparse.Namespace) -> int:
    """``rcsim evaluate``."""
    from rc_sim_description.atomic import atomic_output_dir, check_output_path
    from rc_sim_description.bags import BagError
    from rc_sim_engine.output.tracking_bag import load_evaluation
    from rc_sim_engine.output.tracking_plots import plot_tracking

    _check_transient(args.transient)
    params = _load_params(args.params)
    if args.out is not None:
        check_output_path(args.out, force=args.force, kind='dir', names=EVALUATE_FILES,
                          inputs={'--bag': args.bag, '--recording': args.recording,
                                  '--params': args.params})
    ev = load_evaluation(args.bag, params, args.transient, recording=args.recording,
                         skip_corrupt=args.skip_corrupt)
    for line in ev.lines():
        print(line)
    if ev.metrics_after is None:
        print(f'note: the run is too short for metrics after the {args.transient:g} s transient '
              '(see --transient)')
    if args.out is not None:
        metrics = _metrics_json({'bag': str(args.bag), **ev.report()},
                                f'{args.out}/metrics.json',
                                f' (from {args.bag}: check its /odom and /reference_path)',
                                BagError)
        with atomic_output_dir(args.out, force=args.force, names=EVALUATE_FILES) as tmp:
            tmp.mkdir()
            (tmp / 'metrics.json').write_text(metrics)
            plot_tracking(ev, tmp / 'tracking.png', f'evaluate {Path(args.bag).name}')
            _index(tmp, f'rcsim evaluate: {Path(args.bag).name}', {'bag': str(args.bag),
                                                                   **ev.report()}, ev.lines())
        print(f'wrote {args.out}')
    return 0


MANOEUVRES = ('avoid', 'avoid_late', 'park')


def command_manoeuvre(args: argparse.Namespace) -> int:
    """``rcsim manoeuvre``: obstacle avoidance and parallel parking."""
    from rc_sim_description.atomic import check_output_path
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_description.cli_support import progress
    from rc_sim_engine.output.tracking_bag import write_run_bag
    from rc_sim_engine.output.tracking_plots import plot_parking, plot_stop, plot_tracking
    from rc_sim_engine.scenarios import manoeuvres as scenarios

    check_output_path(args.out, force=args.force, kind='bag', inputs={'--params': args.params})
    params = _load_params(args.params)
    _compile_kernels('manoeuvre')
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
    metrics = _metrics_json(report, f'{args.out}/metrics.json')
    with BagWriter(args.out, storage=args.storage, force=args.force, finite=True) as bag:
        write_run_bag(bag, result, paths, evaluation)
        (bag.directory / 'metrics.json').write_text(metrics)
        if not args.no_plots:
            title = f'{args.name} ({args.model})'
            if args.name == 'park':
                plot_parking(park, bag.directory / 'manoeuvre.png', title)
            elif evaluation is not None:
                plot_tracking(evaluation, bag.directory / 'manoeuvre.png', title, av.world)
            else:
                plot_stop(av, bag.directory / 'manoeuvre.png', title)
        if args.animate:
            _animate(result, bag.directory, f'{args.name} ({args.model})')
        bag.finish_storage()  # the storage file's final name, for the page's file list
        _index(bag.directory, f'rcsim manoeuvre {args.name} ({args.model})', report, lines)
    for line in lines:
        print(line)
    print(f'wrote {args.out} (summary page: {Path(args.out) / "index.html"})')
    return 0


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
    parser.add_argument('--animate', action='store_true', help='also write animation.gif: walls, '
                        'car footprint, trail and lidar scan (at most 300 frames at 10 fps; a '
                        'few seconds)')
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
        'bag (standard topics + /reference_path + /tracking_error) holding metrics.json, '
        'tracking.png and index.html, and prints the RMSE and ISE of the centre-of-mass error '
        '(whole run and after the start transient). The reference is checked against the '
        "car's limits (steering curvature, max_speed, mu g); the default shapes stay inside "
        "the default car's. Example: rcsim track --trajectory lemniscate --controller fl "
        '--world flat_track --out runs/track')
    p.add_argument('--trajectory', default='lemniscate', metavar='NAME',
                   help=f'reference shape: {", ".join(TRAJECTORY_NAMES)} or waypoints '
                   '(default: lemniscate, the figure eight x = a sin wt, y = a sin wt cos wt)')
    p.add_argument('--waypoints', metavar='CSV', help='waypoint file for --trajectory waypoints '
                   '(columns t,x,y, or x,y with --set waypoints_speed=V); like every shape, the '
                   'spline is moved and rotated to start at the car with its heading')
    p.add_argument('--controller', default='fl', choices=['fl', 'kanayama', 'pure_pursuit'],
                   help='fl: feedback linearisation, kanayama, pure_pursuit (default: fl)')
    p.add_argument('--world', default='flat_track', help='world name or SDF path; the car starts '
                   'at its spawn pose (default: flat_track)')
    p.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                   help='tracker parameter (shape, gains; as the trajectory_tracker node), '
                   'e.g. amplitude=5 angular_speed=0.4 kp=3')
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
        description='Tracking metrics (RMSE and ISE of the centre-of-mass error) and plots from '
        'a bag with /odom and /reference_path (engine, gz or real car).')
    e.add_argument('--bag', required=True, help='rosbag2 directory, .db3/.mcap file, or .bag')
    e.add_argument('--recording', metavar='YAML', default=None,
                   help='recording description whose pose (or odom) role replaces /odom '
                   '(docs/recordings.md)')
    e.add_argument('--skip-corrupt', action='store_true',
                   help='read past corrupt or undecodable messages with a warning')
    e.add_argument('--params', action='append', default=[], metavar='YAML',
                   help='vehicle override YAML (lr places the centre of mass); repeatable')
    e.add_argument('--transient', type=float, default=DEFAULT_TRANSIENT,
                   help='start time [s] excluded from the "after transient" metrics '
                   f'(default: {DEFAULT_TRANSIENT:g})')
    e.add_argument('--out', default=None, help='new directory for metrics.json, '
                   'tracking.png and index.html (default: print the metrics only)')
    e.add_argument('--force', action='store_true', help='overwrite an existing output')
    e.set_defaults(func=command_evaluate)

    m = subparsers.add_parser(
        'manoeuvre', help='obstacle avoidance (lane shift or stop) and parallel parking',
        description='avoid: basic_track with a box on the racing line, detected by the lidar '
        '(detection range 2.5 m) and passed by a quintic lane shift (W. Nelson, IEEE ICRA '
        '1989) when the shortest shift the car can steer fits before the box; avoid_late: '
        'detection range only 1.2 m, the shift does not fit and the car stops; park: parallel '
        'parking between two boxes with the open-loop steering and speed profile of Paromtchik '
        'and Laugier (IEEE Intelligent Vehicles Symposium 1996), its duration and steering '
        'amplitude found by a search.')
    m.add_argument('name', choices=MANOEUVRES, help='scenario')
    _add_engine_run_options(m, 'manoeuvre.png')
    m.set_defaults(func=command_manoeuvre)
