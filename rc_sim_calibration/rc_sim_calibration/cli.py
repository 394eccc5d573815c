"""``rcsim fit``, ``rcsim replay``, ``rcsim protocol`` and the ``fit`` console script.

``ros2 run rc_sim_calibration fit --bag real.db3`` and ``rcsim fit --bag real.db3`` run the same
:func:`fit_command`. Heavy imports stay inside the command functions (fast ``rcsim --help``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import json
import math
from pathlib import Path
import sys
from typing import Any

__all__ = ['add_fit_arguments', 'fit_command', 'fit_main', 'protocol_command', 'register',
           'replay_command']


FIT_EPILOG = '''\
try it without a car (about two minutes): the engine driving a different car stands in for the
real one, and the fit should recover that car's steering trim, tyres, yaw inertia and latency:
  rcsim protocol --out runs/protocol
  for s in runs/protocol/*.yaml; do rcsim run --world flat_track --scenario "$s" --no-plots \\
    --params rc_sim_calibration/config/example_different_car.yaml \\
    --out "runs/bags/$(basename "$s" .yaml)"; done
  rcsim fit --bag runs/bags/* --out runs/calibrated.yaml --report runs/report
then open runs/report/index.html and compare runs/calibrated.yaml with the example car.

with a real car (docs/calibration.md): record one bag per scenario of `rcsim protocol` (see its
PROTOCOL.md), write what you measured into measured.yaml, describe the topics (rcsim inspect
--write-recording), then
  rcsim fit --bag bags/* --recording car.yaml --params measured.yaml --out calibrated.yaml \\
    --report report/
each session (else each bag) is predicted by a fit on the others; the written model uses them
all. Exit 0: the twin predicts every held-out bag at least as well as the uncalibrated car;
3: rejected (one line says why; --accept-worse writes calibrated.yaml anyway); 2: bad input.'''


# --------------------------------------------------------------------------- defaults
#: command-line flag -> (section, key) of config/fit_default.yaml: the one source of the
#: defaults --help prints (docs/calibration.md is tested against the same table)
FLAG_DEFAULTS: dict[str, tuple[str, str]] = {
    '--dt': ('simulation', 'dt'),
    '--cmd-vel-mode': ('data', 'cmd_vel_mode'),
    '--optimizer': ('optimizer', 'name'),
    '--budget': ('optimizer', 'budget'),
    '--seed': ('optimizer', 'seed'),
    '--horizon': ('cost', 'horizon'),
    '--metric': ('cost', 'metric'),
    '--prior-strength': ('cost', 'prior_strength'),
}


def packaged_default(flag: str) -> Any:
    """The default of ``flag`` in the packaged config/fit_default.yaml (:data:`FLAG_DEFAULTS`)."""
    section, key = FLAG_DEFAULTS[flag]
    return _packaged_yaml().get(section, {}).get(key)


def _packaged_yaml() -> dict[str, Any]:
    import yaml

    from rc_sim_description.paths import share_path

    if not _YAML_CACHE:
        path = share_path('config/fit_default.yaml', 'rc_sim_calibration')
        _YAML_CACHE.append(yaml.safe_load(path.read_text(encoding='utf-8')) or {})
    return _YAML_CACHE[0]


_YAML_CACHE: list[dict[str, Any]] = []


def _default(flag: str) -> str:
    """``(default: V, section.key of the fit YAML)`` for a --help text."""
    section, key = FLAG_DEFAULTS[flag]
    return f'(default: {packaged_default(flag)}, {section}.{key} of the fit YAML)'


# --------------------------------------------------------------------------- arguments
def _common_data_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument('--params', metavar='YAML', action='append', default=[],
                   help='vehicle override YAML(s) merged over vehicle.yaml (the base / nominal '
                   'parameters; repeatable)')
    p.add_argument('--recording', metavar='YAML', default=None,
                   help='recording description: what each topic means (roles, kinds, pose '
                   'offset, deadman; docs/recordings.md; rcsim inspect proposes one)')
    p.add_argument('--topic', metavar='ROLE=/NAME', action='append', default=[],
                   help='shorthand for a recording description: map a role (steering, '
                   'wheel_speed = commanded wheel speed [rad/s], cmd_vel, ackermann, odom, imu, '
                   'joint_states, pose, drive, command, enable) to a topic; repeatable')
    p.add_argument('--skip-corrupt', action='store_true',
                   help='read past corrupt or undecodable messages with a warning (default: '
                   'they are an error)')
    p.add_argument('--cmd-vel-mode', default=None,
                   choices=('curvature', 'radius', 'steering_angle', 'yaw_rate'),
                   help='mapper mode the real car used for /cmd_vel ' + _default('--cmd-vel-mode'))
    p.add_argument('--mapper', metavar='KEY=VALUE', action='append', default=[],
                   help="parameter of the real car's /cmd_vel mapper (MapperConfig field, e.g. "
                   'wheelbase=0.32); repeatable')
    p.add_argument('--config', metavar='YAML', default=None,
                   help='fit settings merged over the packaged config/fit_default.yaml (e.g. '
                        'config/fit_measured_steering.yaml when --params holds steering angles '
                        'measured at standstill)')
    p.add_argument('--dt', type=float, default=None,
                   help='physics step of the replay [s] ' + _default('--dt'))
    p.add_argument('--odom-offset', metavar='X,Y[,YAW]', default=None,
                   help='where the pose of the recording is measured: x, y [m] (and yaw [rad]) '
                   'of the measured frame (mocap body, tracked point) in base_link, the rear-axle '
                   "centre; default: the recording's pose offset, /tf_static, or (fit) fitted")


def add_fit_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``fit`` (shared by ``rcsim fit`` and the console script)."""
    p.add_argument('--bag', metavar='BAG', nargs='+', action='append', required=True,
                   help='training bag(s): rosbag2 directory, .db3/.mcap file or ROS 1 .bag')
    p.add_argument('--validate', metavar='BAG', nargs='+', action='append', default=[],
                   help='held-out bag(s) the fit does not see (default: with two or more '
                   'training bags, each session, else each bag, is predicted by a fit on the '
                   'others; the written model uses them all)')
    p.add_argument('--no-split', action='store_true',
                   help='judge on held-out windows of each training bag instead of whole '
                   'bags (faster: no fits without a bag; weaker)')
    p.add_argument('--prior-strength', metavar='SECONDS', type=float, default=None,
                   help='how much the priors (the measured values and the plausible ranges of '
                   'the fit YAML) weigh, in seconds of driving: recordings much longer than '
                   'this override them ' + _default('--prior-strength'))
    _common_data_arguments(p)
    p.add_argument('--free', metavar='A,B,...', default=None,
                   help='comma-separated free parameters (vehicle.yaml leaf names or '
                   'pacejka_lateral.B ...); default: the fit YAML free set')
    p.add_argument('--optimizer', choices=('cma', 'bayes', 'grid'), default=None,
                   help='global optimiser ' + _default('--optimizer'))
    p.add_argument('--budget', type=int, default=None,
                   help='evaluations of the global search on the chosen structure ' +
                   _default('--budget'))
    p.add_argument('--popsize', type=int, default=None,
                   help='CMA-ES population / bayes batch size (default: automatic)')
    p.add_argument('--horizon', type=float, default=None,
                   help='window length of the window protocol [s] ' + _default('--horizon'))
    p.add_argument('--metric', choices=('mse', 'rmse', 'itae'), default=None,
                   help='cost of the windowed errors ' + _default('--metric'))
    p.add_argument('--no-polish', action='store_true', help='skip the least-squares polish')
    p.add_argument('--seed', type=int, default=None,
                   help='seed of the optimiser ' + _default('--seed'))
    p.add_argument('--out', metavar='YAML', default='calibrated.yaml',
                   help='calibrated override file (default: calibrated.yaml)')
    p.add_argument('--report', metavar='DIR', default=None,
                   help='write PNG figures and summary.md into DIR')
    p.add_argument('--force', action='store_true', help='overwrite --out / --report')
    p.add_argument('--accept-worse', action='store_true',
                   help='write --out even when the held-out error rose (the exit status is then '
                   f'{EXIT_WORSE} all the same)')


#: exit status of ``fit`` when the held-out error rose (2 = bad input); see verdict.py
EXIT_WORSE = 3
#: what ``fit --report`` writes (``--force`` replaces only such a directory)
REPORT_FILES = ('*.png', '*.md')


def register(subparsers: Any) -> None:
    """Add ``fit``, ``replay`` and ``protocol`` to the ``rcsim`` parser."""
    p = subparsers.add_parser('fit', help='fit vehicle parameters to real-car bags',
                              description=fit_command.__doc__, epilog=FIT_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    add_fit_arguments(p)
    p.set_defaults(func=fit_command)

    r = subparsers.add_parser('replay', help="predict a bag's windows open-loop from its commands",
                              description=replay_command.__doc__)
    r.add_argument('--bag', required=True, metavar='BAG',
                   help='rosbag2 directory, .db3/.mcap file or ROS 1 .bag')
    r.add_argument('--out', required=True, metavar='CSV',
                   help='prediction CSV window,t,x,y,yaw,vx,vy,yaw_rate '
                   '(docs/prediction_windows.md)')
    r.add_argument('--horizon', type=float, default=None,
                   help='window length H [s] ' + _default('--horizon'))
    r.add_argument('--force', action='store_true', help='overwrite --out')
    _common_data_arguments(r)
    r.set_defaults(func=replay_command)

    q = subparsers.add_parser('protocol', help='write the acquisition protocol scenarios',
                              description=protocol_command.__doc__)
    q.add_argument('--out', required=True, metavar='DIR',
                   help='new directory for the scenario YAMLs and PROTOCOL.md')
    q.add_argument('--params', metavar='YAML', action='append', default=[],
                   help='vehicle override YAML(s) (limits and turning radius)')
    q.add_argument('--speed', type=float, default=1.0,
                   help='base speed [m/s] (circles are also driven at twice it)')
    q.add_argument('--force', action='store_true', help='overwrite DIR')
    q.set_defaults(func=protocol_command)


# --------------------------------------------------------------------------- helpers
def _settings(args: argparse.Namespace, free: Sequence[str] | None = None) -> Any:
    from rc_sim_calibration.settings import MAX_EVALUATIONS, count_in, load_fit_settings

    over: dict[str, dict[str, Any]] = {}
    for flag, low in (('budget', 1), ('popsize', 2), ('seed', 0)):
        value = getattr(args, flag, None)
        if value is not None:  # named as the user typed it, before the config merge
            count_in(value, low, MAX_EVALUATIONS if flag != 'seed' else 2 ** 32 - 1,
                     f'--{flag}')
    strength = getattr(args, 'prior_strength', None)
    if strength is not None and not (math.isfinite(strength) and strength > 0):
        from rc_sim_calibration.errors import CalibrationError

        raise CalibrationError(f'--prior-strength: must be a positive number of seconds, got '
                               f'{strength}')

    def put(section: str, key: str, value: Any) -> None:
        if value is not None:
            over.setdefault(section, {})[key] = value

    put('simulation', 'dt', getattr(args, 'dt', None))
    put('data', 'cmd_vel_mode', getattr(args, 'cmd_vel_mode', None))
    put('optimizer', 'name', getattr(args, 'optimizer', None))
    put('optimizer', 'budget', getattr(args, 'budget', None))
    put('optimizer', 'popsize', getattr(args, 'popsize', None))
    put('optimizer', 'seed', getattr(args, 'seed', None))
    put('cost', 'horizon', getattr(args, 'horizon', None))
    put('cost', 'metric', getattr(args, 'metric', None))
    put('cost', 'prior_strength', getattr(args, 'prior_strength', None))
    if getattr(args, 'no_split', False):
        put('verdict', 'hold_out', 'windows')
    if getattr(args, 'no_polish', False):
        put('optimizer', 'polish', False)
    settings = load_fit_settings(args.config, free=free, overrides=over)
    if args.mapper:
        from dataclasses import replace

        settings = replace(settings, data=replace(settings.data,
                                                  mapper_overrides=_mapper_items(args.mapper)))
    return settings


def _mapper_items(items: Sequence[str]) -> tuple[tuple[str, float], ...]:
    from dataclasses import fields

    from rc_sim_calibration.errors import CalibrationError
    from rc_sim_control.ackermann import MapperConfig
    from rc_sim_description.cli_support import split_key_value
    from rc_sim_description.yamlio import did_you_mean

    known = [f.name for f in fields(MapperConfig) if f.name not in ('mode',
                                                                     'electronic_differential')]
    out = []
    for item in items:
        key, value = split_key_value(item, '--mapper', 'KEY=NUMBER', CalibrationError)
        try:
            number = float(value)
        except ValueError:
            number = float('nan')
        if not number == number:
            raise CalibrationError(f'--mapper {item!r}: expected KEY=NUMBER')
        if key not in known:
            raise CalibrationError(f'--mapper {item!r}: unknown mapper parameter {key!r}'
                                   f'{did_you_mean(key, known)}; known: {", ".join(known)} '
                                   '(the mode is --cmd-vel-mode)')
        out.append((key, number))
    return tuple(out)


def _recording(args: argparse.Namespace) -> Any:
    """The --recording description (validated before any bag is read), or None."""
    if args.recording is None:
        return None
    from rc_sim_description.recording import load_recording

    return load_recording(args.recording)


def _base_params(args: argparse.Namespace) -> Any:
    from rc_sim_description.params import load_vehicle_params

    return load_vehicle_params(overrides=args.params)


def _flatten(groups: Sequence[Sequence[str]]) -> list[str]:
    return [b for g in groups for b in g]


# --------------------------------------------------------------------------- commands
def _offset(args: argparse.Namespace) -> tuple[float, float, float] | None:
    if getattr(args, 'odom_offset', None) is None:
        return None
    from rc_sim_calibration.measured_point import parse_offset

    return parse_offset(args.odom_offset)


def _measured(paths: Sequence[str], base: Any) -> dict[str, Any]:
    """The vehicle keys the user's --params files set (what was measured or is known about the
    car) with their values in ``base``."""
    from rc_sim_description.errors import ConfigError
    from rc_sim_description.yamlio import read_yaml

    leaves = base.leaf_values()
    out: dict[str, Any] = {}
    for path in paths:
        data = read_yaml(path, ConfigError, 'vehicle override ')
        for body in (data or {}).values():
            if isinstance(body, dict):
                out.update({k: leaves[k] for k in body if k in leaves})
    return out


def fit_command(args: argparse.Namespace) -> int:
    """Fit the simulator's vehicle parameters to real-car bags and write calibrated.yaml.

    Exit status 0 when the calibrated model predicts every held-out recording at least as well
    as the nominal one, 3 when it is rejected (worse than nominal on a held-out recording, or
    most free parameters not determined by the recordings; calibrated.yaml is then not written
    unless --accept-worse), 2 on bad input.
    """
    from dataclasses import replace

    from rc_sim_calibration.dataset import load_dataset
    from rc_sim_calibration.errors import CalibrationError
    from rc_sim_calibration.fit import check_finite, check_kinds, check_settings, fit
    from rc_sim_calibration.progress import FitProgress
    from rc_sim_description.atomic import atomic_output_dir, check_output_path
    from rc_sim_description.params import dump_override

    # outputs never over an input, with or without --force (rc_sim_description.atomic)
    inputs = {'--bag': _flatten(args.bag), '--validate': _flatten(args.validate),
              '--params': args.params, '--recording': args.recording, '--config': args.config}
    out = check_output_path(args.out, force=args.force, kind='file', inputs=inputs)
    if args.report is not None:
        check_output_path(args.report, force=args.force, kind='dir', label='--report',
                          names=REPORT_FILES, inputs={**inputs, '--out': args.out})
    free = None
    if args.free is not None:
        free = [f.strip() for f in args.free.split(',') if f.strip()]
        if not free:
            raise CalibrationError('--free: give at least one parameter name')
    settings = _settings(args, free)
    base = _base_params(args)
    settings = replace(settings, measured=_measured(args.params, base))
    check_settings(settings, base)  # name and bound errors before reading any bag
    from rc_sim_engine.sim.warmup import ensure_compiled

    ensure_compiled(lambda m: print(m, file=sys.stderr, flush=True), 'fit')  # once: one line
    offset = _offset(args)
    bags, held = _flatten(args.bag), _flatten(args.validate)
    recording = _recording(args)
    with FitProgress(_fit_budget(settings, len(bags))) as reporter:
        reporter.stage(f'reading {len(bags) + len(held)} recording(s)')
        train = [load_dataset(b, base, settings.data, args.topic, recording=recording,
                              skip_corrupt=args.skip_corrupt, pose_offset=offset) for b in bags]
        validate = [load_dataset(b, base, settings.data, args.topic, recording=recording,
                                 skip_corrupt=args.skip_corrupt, pose_offset=offset)
                    for b in held]
        check_kinds(train, validate)
        result = fit(train, base, settings, validate=validate, reporter=reporter)
        values = result.complete_values()
        check_finite([k for k, v in values.items() if isinstance(v, float)],
                     [v for v in values.values() if isinstance(v, float)])
        write_yaml = result.verdict.ok or args.accept_worse
        header = '\n'.join(result.summary_lines())
        if args.report is not None:
            from rc_sim_calibration.report import write_report

            reporter.stage('report')
            import shlex

            command = shlex.join(['rcsim', *sys.argv[1:]]) if sys.argv[1:2] == ['fit'] else \
                shlex.join(['fit', *sys.argv[1:]])
            with atomic_output_dir(args.report, force=args.force, names=REPORT_FILES) as tmp:
                tmp.mkdir()
                write_report(tmp, result, settings, train, validate, command=command)
                if write_yaml:
                    dump_override(values, out, header=header)
        elif write_yaml:
            dump_override(values, out, header=header)
    print(header)
    written = [str(out)] if write_yaml else []
    written += [f'the report {args.report}'] if args.report else []
    if written:
        print('wrote ' + ' and '.join(written))
    if not result.verdict.ok:
        action = 'written anyway (--accept-worse)' if args.accept_worse else \
            'not written (--accept-worse writes it)'
        print(f'fit rejected: {result.verdict.reason()}; {out.name} {action}', file=sys.stderr)
        return EXIT_WORSE
    return 0


def _fit_budget(settings: Any, n_bags: int) -> int:
    """Evaluations a fit announces up front (the stages refine it)."""
    n_cand = 1 if not settings.free_auto else \
        len(settings.servo_models) * len(settings.delay_options) * len(settings.relax_options)
    folds = min(n_bags, 5) if n_bags >= 2 and settings.hold_out == 'recordings' else 0
    return (settings.budget + settings.stage_budget * (2 * n_cand + 4 * folds) +
            (settings.polish_max_nfev * 40 if settings.polish else 0))


def replay_command(args: argparse.Namespace) -> int:
    """Predict a recording's windows open loop from its commands (the window protocol of
    docs/prediction_windows.md): consecutive H-second windows, each started from the measured
    state at its first pose sample; CSV rows at every pose stamp, of the measured frame in the
    recording's world frame. Prints the pooled RMSEs as JSON."""
    from rc_sim_calibration.dataset import load_dataset
    from rc_sim_calibration.replay import replay_windows
    from rc_sim_description.atomic import check_output_path

    if args.horizon is not None and not (args.horizon > 0 and math.isfinite(args.horizon)):
        from rc_sim_calibration.errors import CalibrationError

        raise CalibrationError(f'--horizon: must be a positive number of seconds, got '
                               f'{args.horizon}')
    out = check_output_path(args.out, force=args.force, kind='file', inputs={
        '--bag': args.bag, '--params': args.params, '--recording': args.recording,
        '--config': args.config})
    settings = _settings(args)
    params = _base_params(args)
    horizon = settings.horizon
    ds = load_dataset(args.bag, params, settings.data, args.topic, recording=_recording(args),
                      skip_corrupt=args.skip_corrupt, pose_offset=_offset(args))
    table, metrics = replay_windows(params, ds, settings, horizon)
    from rc_sim_calibration.baselines import write_prediction_csv

    write_prediction_csv(str(out), table)
    for note in metrics.pop('notes', []):
        print(f'note: {note}', file=sys.stderr)
    print(json.dumps(metrics, indent=2))
    print(f'wrote {out}', file=sys.stderr)  # stdout stays pure JSON (pipe it to jq)
    return 0


def protocol_command(args: argparse.Namespace) -> int:
    """Write the recommended acquisition protocol (scenario YAMLs + PROTOCOL.md) into DIR."""
    from rc_sim_calibration.errors import CalibrationError
    from rc_sim_calibration.protocol import write_protocol
    from rc_sim_description.atomic import check_output_path
    from rc_sim_description.params import load_vehicle_params

    if not args.speed > 0:
        raise CalibrationError(f'--speed: must be > 0 m/s, got {args.speed}')
    check_output_path(args.out, force=args.force, kind='dir', names=('*.yaml', 'PROTOCOL.md'),
                      inputs={'--params': args.params})
    params = load_vehicle_params(overrides=args.params)
    paths = write_protocol(args.out, params, speed=args.speed, force=args.force)
    print(f'wrote {len(paths)} files into {args.out} (see {Path(args.out) / "PROTOCOL.md"})')
    return 0


def fit_main(argv: Sequence[str] | None = None) -> int:
    """Console script ``fit`` (``ros2 run rc_sim_calibration fit --bag real.db3``)."""
    from rc_sim_description.cli_support import OneLineErrorParser, run_cli

    parser = OneLineErrorParser(prog='fit', description=fit_command.__doc__, epilog=FIT_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_fit_arguments(parser)
    args = parser.parse_args(argv)
    return run_cli(lambda: fit_command(args))


if __name__ == '__main__':
    sys.exit(fit_main())
