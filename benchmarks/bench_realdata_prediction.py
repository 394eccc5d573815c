"""Benchmark: 1 s-window open-loop prediction errors on real recordings, per predictor.

For each held-out recording (DART: ``4_sept_random_driving_slow`` when fitting on ``..._fast`` and
the reverse; F1TENTH: frictionmaps DS3 when fitting on DS1-DS2) every predictor writes the
prediction CSV of ``docs/prediction_windows.md`` and the independent evaluator
(``benchmarks/realdata/evaluate_predictions.py``) reads it back and prints the pooled position
RMSE and yaw-rate RMSE. Predictors: CTRV (``rc_sim_calibration.baselines``), for DART the builders'
published model (``benchmarks/realdata/dart_published_model.py``), and rc-sim: nominal (the
measured geometry only), calibrated (the default ``rcsim fit`` on the case's training
recordings; its fit time and verdict are printed with the row) and, for DART, calibrated with
the steering angles measured at standstill (``fit_measured_steering.yaml``).

    .venv/bin/python benchmarks/bench_realdata_prediction.py [--horizon 1.0] [--out DIR]
        [--csv 'NAME:CASE=pred.csv' ...] [--split 0.7] [--dart-csv DIR] [--frictionmaps DIR]

Two further tables: ``--split`` fits one model per car on the first part of all its recordings
and scores the rest; ``--dart-csv`` scores DART recordings of another day (the builders' logger
CSVs, converted by ``realdata/dart_csv_to_bag.py``) with rc-sim fitted on the 4 September bags;
``--frictionmaps`` scores the F1TENTH data sets after DS3 (``realdata/frictionmaps_csv_to_bag.py``).

HOOKS for the rc-sim predictions: either register a callable in ``EXTRA_PREDICTORS`` (signature
``(case, recording, windows) -> PredictionTable``, windows with the protocol's initial states), or
pass CSVs written elsewhere (e.g. by ``rcsim replay --horizon``) with ``--csv NAME:CASE=PATH``;
both go through :func:`score_predictor` / :func:`score_csv`. Data: ``$RC_SIM_REALDATA`` or
``/work/shared/realdata``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, replace
import math
import os
from pathlib import Path
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / 'realdata'))
from dart_published_model import predict_recording
from evaluate_predictions import (
    Recording,
    Score,
    protocol_truth,
    read_prediction_csv,
    read_recording,
    score,
)

from rc_sim_calibration.baselines import (
    PredictionTable,
    Windows,
    ctrv_predict,
    make_pose_track,
    make_windows,
    write_prediction_csv,
)


@dataclass(frozen=True)
class Case:
    """A held-out recording of the comparison."""

    key: str
    car: str
    bag: str          # relative to the real-data directory
    recording: str    # recording description, same
    fitted_on: str    # what the calibrated model of this row is fitted on


CASES = [
    Case('dart_slow', 'DART', 'dart/4_sept_random_driving_slow.bag',
         'recordings/example_dart_fast.yaml', 'dart fast'),
    Case('dart_fast', 'DART', 'dart/4_sept_random_driving_fast.bag',
         'recordings/example_dart_fast.yaml', 'dart slow'),
    Case('frictionmaps_DS3', 'F1TENTH', 'frictionmaps/frictionmaps_DS3',
         'recordings/example_frictionmaps.yaml', 'DS1+DS2'),
]

Predictor = Callable[[Case, Recording, Windows], PredictionTable]
PREDICTORS: dict[str, tuple[Predictor, tuple[str, ...]]] = {
    'CTRV': (lambda case, rec, win: ctrv_predict(win), ('DART', 'F1TENTH')),
    'DART published': (lambda case, rec, win: predict_recording(rec, win), ('DART',)),
}
# HOOK: further predictors go here, e.g.
#   EXTRA_PREDICTORS['my model'] = (my_predictor, ('DART', 'F1TENTH'))
# where my_predictor(case, recording, windows) runs a model from windows.x0 .. yaw_rate0 (the
# measured frame's state; see baselines.reference_from_measured) and returns a PredictionTable.
EXTRA_PREDICTORS: dict[str, tuple[Predictor, tuple[str, ...]]] = {}

#: what the cars' builders measured (their published numbers; docs/calibration.md)
MEASURED = {
    'DART': 'geometry: {wheelbase: 0.1735, cg_to_front_axle: 0.0805, track_width: 0.08}\n'
            'mass_properties: {mass: 1.58, yaw_inertia: 0.00481}\n',
    'F1TENTH': 'geometry: {wheelbase: 0.32, cg_to_front_axle: 0.112, wheel_radius: 0.0508}\n'
               'mass_properties: {mass: 3.3325, yaw_inertia: 0.0687}\n',
}
#: the training recordings of each held-out case
TRAINING = {'dart_slow': ['dart/4_sept_random_driving_fast.bag'],
            'dart_fast': ['dart/4_sept_random_driving_slow.bag'],
            'frictionmaps_DS3': ['frictionmaps/frictionmaps_DS1', 'frictionmaps/frictionmaps_DS2']}


#: steering angles a team measures at standstill (the fit_measured_steering.yaml recipe of
#: docs/calibration.md); DART: delta(0) = -0.014, delta(+1) = +0.320, delta(-1) = -0.403 rad
#: (the realdata README's values, from the builders' published map)
MEASURED_STEERING = {
    'DART': 'steering: {steering_offset: -0.014, steering_gain_left: 0.334, '
            'steering_gain_right: 0.389}\n',
}
FIT_MEASURED_STEERING = (Path(__file__).resolve().parents[1] / 'rc_sim_calibration' / 'config'
                         / 'fit_measured_steering.yaml')


def rcsim_csvs(case: Case, horizon: float, out: Path) -> dict[str, tuple[Path, str]]:
    """The rc-sim rows of ``case``: the default fit (``rc_sim_calibration.fit``, the program of
    ``rcsim fit``) on the case's training recordings, then the window predictions of the
    held-out recording (``rcsim replay --horizon``) with the nominal (measured) and the
    calibrated parameters; where MEASURED_STEERING has the car, also the fit with the measured
    steering angles and fit_measured_steering.yaml. Returns name -> (CSV, note)."""
    from rc_sim_calibration.dataset import load_dataset
    from rc_sim_calibration.settings import load_fit_settings
    from rc_sim_description.params import VehicleParams, load_vehicle_params

    root = realdata_dir()
    measured = out / f'{case.car}_measured.yaml'
    measured.write_text(MEASURED[case.car])
    base = load_vehicle_params(overrides=[measured])
    rec = root / case.recording
    variants = [('rc-sim calibrated', base, load_fit_settings())]
    if case.car in MEASURED_STEERING:
        lock = out / f'{case.car}_measured_steering.yaml'
        lock.write_text(MEASURED_STEERING[case.car])
        variants.append(('rc-sim cal.+lock', load_vehicle_params(overrides=[measured, lock]),
                         load_fit_settings(FIT_MEASURED_STEERING)))
    csvs: dict[str, tuple[Path, str]] = {}
    held = load_dataset(root / case.bag, base, variants[0][2].data, recording=rec)
    rows: list[tuple[str, VehicleParams, tuple[float, float, float] | None, str]] = [
        ('rc-sim nominal', base, None, 'measured geometry only')]
    for name, vbase, settings in variants:
        train = [load_dataset(root / b, vbase, settings.data, recording=rec)
                 for b in TRAINING[case.key]]
        result, note = _timed_fit(train, vbase, settings)
        rows.append((name, result.params, _fitted_offset(result), note))
    settings = variants[0][2]
    for name, params, offset, note in rows:
        ds = held if offset is None else load_dataset(root / case.bag, base, settings.data,
                                                      recording=rec, pose_offset=offset)
        path = out / f'{case.key}_{name.replace(" ", "_").replace("+", "_")}.csv'
        csvs[name] = (_replay_csv(params, ds, settings, horizon, path), note)
    return csvs


def cli_settings(measured: Path, base: Any) -> Any:
    """The fit settings ``rcsim fit --params measured`` uses (the packaged defaults, the
    measured values as priors)."""
    from rc_sim_calibration.cli import _measured
    from rc_sim_calibration.settings import load_fit_settings

    return replace(load_fit_settings(), measured=_measured([str(measured)], base))


def _timed_fit(train: list[Any], base: Any, settings: Any) -> tuple[Any, str]:
    """The default fit (``rc_sim_calibration.fit``) and a note: its wall and CPU time, the kept
    structure and its verdict on the held-out windows of the training recordings."""
    from rc_sim_calibration.fit import fit

    t0, c0 = time.perf_counter(), time.process_time()
    result = fit(train, base, settings)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    verdict = 'ok' if result.verdict.ok else 'REJECTED: ' + result.verdict.reason()
    label = result.scores[result.chosen].candidate.label
    return result, (f'fit {wall:.0f} s wall / {cpu:.0f} s CPU, {label}; verdict on held-out '
                    f'windows of the training recordings: {verdict}')


def _fitted_offset(result: Any) -> tuple[float, float, float] | None:
    """The measured point a fit found, None when the recording declared it."""
    return result.offset if result.offset_fitted else None


def _replay_csv(params: Any, ds: Any, settings: Any, horizon: float, path: Path) -> Path:
    """``rcsim replay --horizon``: the window predictions of ``ds`` written to ``path``."""
    from rc_sim_calibration.replay import replay_windows

    table, _ = replay_windows(params, ds, settings, horizon)
    write_prediction_csv(str(path), table)
    return path


def realdata_dir() -> Path:
    return Path(os.environ.get('RC_SIM_REALDATA', '/work/shared/realdata'))


def score_csv(case: Case, csv_path: Path, horizon: float, after: float | None = None) -> Score:
    """Score a prediction CSV of ``case`` with the independent evaluator (the CSV hook); with
    ``after`` [s, pose clock], only the windows that start at or after it."""
    root = realdata_dir()
    rec = read_recording(root / case.bag, root / case.recording)
    truth = protocol_truth(rec.t, rec.x, rec.y, rec.yaw, horizon)
    if after is not None:
        truth = replace(truth, windows=[w for w in truth.windows if w.start >= after - 1e-6])
    return score(truth, read_prediction_csv(csv_path), name=str(csv_path))


def score_predictor(case: Case, predictor: Predictor, horizon: float, csv_path: Path,
                    after: float | None = None) -> tuple[Score, float]:
    """Run ``predictor`` on ``case``, write its CSV, score the CSV; returns (score, seconds)."""
    root = realdata_dir()
    rec = read_recording(root / case.bag, root / case.recording, ('steering', 'drive', 'enable'))
    windows = make_windows(make_pose_track(rec.t, rec.x, rec.y, rec.yaw), horizon)
    start = time.perf_counter()
    table = predictor(case, rec, windows)
    elapsed = time.perf_counter() - start
    write_prediction_csv(str(csv_path), table)
    return score_csv(case, csv_path, horizon, after), elapsed


#: the time-split comparison: per car, the recordings whose first part trains one fit and whose
#: last part is held out (the case a team with several recordings of its car is in)
SPLIT_CASES = {
    'DART': [c for c in CASES if c.car == 'DART'],
    'F1TENTH': [Case(f'frictionmaps_{n}', 'F1TENTH', f'frictionmaps/frictionmaps_{n}',
                     'recordings/example_frictionmaps.yaml', 'DS1+DS2 (first part)')
                for n in ('DS1', 'DS2')],
}


def split_time(case: Case, horizon: float, fraction: float) -> float:
    """Start [s, pose clock] of the held-out part: ``fraction`` of the pose stream, rounded up
    to the evaluator's window grid (no held-out window overlaps the training part)."""
    root = realdata_dir()
    rec = read_recording(root / case.bag, root / case.recording)
    t0, t1 = float(rec.t.min()), float(rec.t.max())
    return t0 + math.ceil(fraction * (t1 - t0) / horizon) * horizon


def split_rows(car: str, horizon: float, fraction: float, out: Path) -> None:
    """Fit one model on the first ``fraction`` of every recording in SPLIT_CASES[car] together,
    then score every predictor on the last part of each; prints the rows."""
    from rc_sim_calibration.dataset import load_dataset
    from rc_sim_calibration.settings import load_fit_settings
    from rc_sim_description.params import load_vehicle_params

    root = realdata_dir()
    cases = SPLIT_CASES[car]
    measured = out / f'{car}_measured.yaml'
    measured.write_text(MEASURED[car])
    base = load_vehicle_params(overrides=[measured])
    settings = load_fit_settings()
    splits = {c.key: split_time(c, horizon, fraction) for c in cases}
    full = {c.key: load_dataset(root / c.bag, base, settings.data, recording=root / c.recording)
            for c in cases}
    train = [load_dataset(root / c.bag, base, settings.data, recording=root / c.recording,
                          span=(0.0, splits[c.key] - full[c.key].start_ns * 1e-9))
             for c in cases]
    result, note = _timed_fit(train, base, settings)
    print(f'{car}: one fit on the first {fraction:.0%} of {", ".join(c.key for c in cases)}: '
          f'{note}', flush=True)
    offset = _fitted_offset(result)
    for case in cases:
        after = splits[case.key]
        for name, (predictor, cars) in {**PREDICTORS, **EXTRA_PREDICTORS}.items():
            if car in cars:
                path = out / f'split_{case.key}_{name.replace(" ", "_")}.csv'
                s, _ = score_predictor(case, predictor, horizon, path, after)
                _print_row(case, f'{Path(case.bag).stem} (last {1 - fraction:.0%})', name, s)
        for name, params in (('rc-sim nominal', base), ('rc-sim calibrated', result.params)):
            ds = full[case.key] if offset is None or params is base else load_dataset(
                root / case.bag, base, settings.data, recording=root / case.recording,
                pose_offset=offset)
            path = _replay_csv(params, ds, settings, horizon,
                               out / f'split_{case.key}_{name.replace(" ", "_")}.csv')
            _print_row(case, f'{Path(case.bag).stem} (last {1 - fraction:.0%})', name,
                       score_csv(case, path, horizon, after))


#: the DART fit of the other-day comparison (issue 27 item 4): label -> training bags
DART_FITS = {'fast+slow': ['dart/4_sept_random_driving_fast.bag',
                           'dart/4_sept_random_driving_slow.bag']}


def other_day_rows(csv_dir: Path, horizon: float, out: Path) -> None:
    """DART recordings of another day: each builders' logger CSV in ``csv_dir``
    (``car_1_Datarecording_*.csv``, e.g. ``91_free_driving_16_sept_2024`` of Lorenzo-Lyons/DART)
    becomes a bag (``realdata/dart_csv_to_bag.py``); every predictor is scored on it, rc-sim
    fitted on the 4 September bags (fast, slow, both). Prints the rows."""
    from dart_csv_to_bag import convert

    csvs = sorted(csv_dir.glob('car_1_Datarecording_*.csv'))
    if not csvs:
        raise SystemExit(f'error: no car_1_Datarecording_*.csv in {csv_dir}')
    description = 'recordings/example_dart_fast.yaml'
    cases = []
    for csv in csvs:
        bag = out / f'bag_{csv.stem}'
        if not bag.exists():
            convert(csv, bag)
        cases.append(Case(f'dart_{csv.stem[-19:]}', 'DART', str(bag), description, ''))
    score_converted(cases, DART_FITS, horizon, out)


#: the F1TENTH fit of the other-data-set comparison (issue 27 item 4: all three, no hold-out)
F1TENTH_FITS = {'DS1-DS3': ['frictionmaps/frictionmaps_DS1', 'frictionmaps/frictionmaps_DS2',
                            'frictionmaps/frictionmaps_DS3']}
#: ForzaETH's published single-track model of the F1TENTH car on DS4 and DS5, as issue 27 quotes
#: it (position RMSE [m], yaw-rate RMSE [rad/s], 1 s windows); not recomputed here
PUBLISHED_F1TENTH = {'frictionmaps_DS4': (0.312, 0.565), 'frictionmaps_DS5': (0.214, 0.398)}


def other_set_rows(datasets: Path, horizon: float, out: Path) -> None:
    """F1TENTH data sets beyond DS1-DS3: each ``DS<n>`` folder of the FrictionMaps
    ``DataSets`` directory ``datasets`` (n >= 4) becomes a bag
    (``realdata/frictionmaps_csv_to_bag.py``); CTRV and rc-sim (nominal; fitted on DS1+DS2 and
    on DS1-DS3) are scored on it. Prints the rows."""
    from frictionmaps_csv_to_bag import convert

    folders = sorted((d for d in datasets.glob('DS*') if d.is_dir() and d.name[2:].isdigit()
                      and int(d.name[2:]) >= 4), key=lambda d: int(d.name[2:]))
    if not folders:
        raise SystemExit(f'error: no DS4, DS5, ... folders in {datasets}')
    cases = []
    for folder in folders:
        bag = out / f'bag_frictionmaps_{folder.name}'
        if not bag.exists():
            convert(folder, bag)
        cases.append(Case(f'frictionmaps_{folder.name}', 'F1TENTH', str(bag),
                          'recordings/example_frictionmaps.yaml', ''))
    score_converted(cases, F1TENTH_FITS, horizon, out)


def score_converted(cases: list[Case], fits: dict[str, list[str]], horizon: float,
                    out: Path) -> None:
    """Score the predictors of the cases' car and rc-sim (nominal, and fitted on each training
    set of ``fits``: label -> realdata bags) on every case (one car, one recording description);
    prints the rows."""
    from rc_sim_calibration.dataset import load_dataset
    from rc_sim_description.params import VehicleParams, load_vehicle_params

    root = realdata_dir()
    car, rec = cases[0].car, root / cases[0].recording
    measured = out / f'{car}_measured.yaml'
    measured.write_text(MEASURED[car])
    base = load_vehicle_params(overrides=[measured])
    settings = cli_settings(measured, base)
    models: dict[str, tuple[VehicleParams, tuple[float, float, float] | None]] = {
        'rc-sim nominal': (base, None)}
    for label, bags in fits.items():
        train = [load_dataset(root / b, base, settings.data, recording=rec) for b in bags]
        result, note = _timed_fit(train, base, settings)
        print(f'{car} fit on {label}: {note}', flush=True)
        for line in result.verdict.lines():
            print(f'    {line}', flush=True)
        models[f'rc-sim cal. {label}'] = (result.params, _fitted_offset(result))
    for case in cases:
        for name, (predictor, cars) in {**PREDICTORS, **EXTRA_PREDICTORS}.items():
            if car in cars:
                path = out / f'{case.key}_{name.replace(" ", "_")}.csv'
                _print_row(case, case.key, name,
                           score_predictor(case, predictor, horizon, path)[0])
        for name, (params, offset) in models.items():
            held = load_dataset(case.bag, base, settings.data, recording=rec, pose_offset=offset)
            path = _replay_csv(params, held, settings, horizon, out / (
                f'{case.key}_{name.replace(" ", "_").replace("+", "_")}.csv'))
            _print_row(case, case.key, name, score_csv(case, path, horizon))
        if case.key in PUBLISHED_F1TENTH:
            pos, yaw = PUBLISHED_F1TENTH[case.key]
            print(f'{case.car:8} {case.key:36} {"ForzaETH (issue)":16} {"-":>7} {"-":>7} '
                  f'{pos:12.3f} {yaw:21.3f}', flush=True)


def _print_row(case: Case, label: str, name: str, s: Score, note: str = '') -> None:
    print(f'{case.car:8} {label:36} {name:16} {s.windows:7d} {s.samples:7d} '
          f'{s.pos_rmse:12.3f} {s.yaw_rate_rmse:21.3f}{note}', flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--horizon', type=float, default=1.0, help='window length H [s]')
    parser.add_argument('--out', type=Path, help='keep the prediction CSVs in this directory')
    parser.add_argument('--csv', action='append', default=[], metavar='NAME:CASE=PATH',
                        help=f'score an external CSV too; CASE in {[c.key for c in CASES]}')
    parser.add_argument('--no-rcsim', action='store_true',
                        help='skip the rc-sim rows (their fits take about a minute per case)')
    parser.add_argument('--only-other-days', action='store_true',
                        help='only the --dart-csv and --frictionmaps tables (issue 27 item 4)')
    parser.add_argument('--dart-csv', type=Path, metavar='DIR',
                        help="also score DART recordings of another day: the builders' logger "
                             'CSVs in DIR (e.g. Lorenzo-Lyons/DART System_identification/Data/'
                             '91_free_driving_16_sept_2024)')
    parser.add_argument('--frictionmaps', type=Path, metavar='DIR',
                        help='also score the F1TENTH data sets DS4, DS5, ... of a FrictionMaps '
                             'DataSets folder (AhmadAmine998/FrictionMaps)')
    parser.add_argument('--split', type=float, default=0.7, metavar='FRACTION',
                        help='time-split table: one fit per car on the first FRACTION of its '
                             'recordings, scored on the rest (0 skips it; default 0.7)')
    args = parser.parse_args()
    if not 0.0 <= args.split < 1.0:
        print(f'error: --split {args.split}: expected a fraction in [0, 1)', file=sys.stderr)
        return 2
    if not realdata_dir().is_dir():
        print(f'error: real-data directory {realdata_dir()} not found (set RC_SIM_REALDATA)',
              file=sys.stderr)
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix='realdata_pred_'))
    out.mkdir(parents=True, exist_ok=True)
    print(f'H = {args.horizon} s windows; CSVs in {out}; times measured under load')
    header = (f'{"car":8} {"held-out recording":36} {"predictor":16} {"windows":>7} '
              f'{"samples":>7} {"pos RMSE [m]":>12} {"yaw-rate RMSE [rad/s]":>21} {"time [s]":>8}')
    print(header)
    by_key = {c.key: c for c in CASES}
    for case in ([] if args.only_other_days else CASES):
        for name, (predictor, cars) in {**PREDICTORS, **EXTRA_PREDICTORS}.items():
            if case.car not in cars:
                continue
            csv_path = out / f'{case.key}_{name.replace(" ", "_")}.csv'
            s, secs = score_predictor(case, predictor, args.horizon, csv_path)
            print(f'{case.car:8} {Path(case.bag).stem:36} {name:16} {s.windows:7d} '
                  f'{s.samples:7d} {s.pos_rmse:12.3f} {s.yaw_rate_rmse:21.3f} {secs:8.2f}')
        if not args.no_rcsim:
            for name, (path, note) in rcsim_csvs(case, args.horizon, out).items():
                s = score_csv(case, path, args.horizon)
                print(f'{case.car:8} {Path(case.bag).stem:36} {name:16} {s.windows:7d} '
                      f'{s.samples:7d} {s.pos_rmse:12.3f} {s.yaw_rate_rmse:21.3f} {"-":>8}  '
                      f'({note})', flush=True)
    if args.split > 0 and not args.no_rcsim and not args.only_other_days:
        print(f'\ntime split: fitted on the first {args.split:.0%} of each recording, scored on '
              'the rest')
        print(header)
        for car in SPLIT_CASES:
            split_rows(car, args.horizon, args.split, out)
    if args.dart_csv is not None and not args.no_rcsim:
        print('\nDART recordings of another day (rc-sim fitted on the 4 September bags)')
        print(header)
        other_day_rows(args.dart_csv, args.horizon, out)
    if args.frictionmaps is not None and not args.no_rcsim:
        print('\nF1TENTH data sets beyond DS3 (rc-sim fitted on DS1-DS3)')
        print(header)
        other_set_rows(args.frictionmaps, args.horizon, out)
    for spec in args.csv:
        name, _, rest = spec.partition(':')
        key, _, path = rest.partition('=')
        if key not in by_key or not path:
            print(f'error: --csv {spec!r}: expected NAME:CASE=PATH, CASE in {list(by_key)}',
                  file=sys.stderr)
            return 2
        case = by_key[key]
        s = score_csv(case, Path(path), args.horizon)
        print(f'{case.car:8} {Path(case.bag).stem:36} {name:16} {s.windows:7d} '
              f'{s.samples:7d} {s.pos_rmse:12.3f} {s.yaw_rate_rmse:21.3f} {"-":>8}')
    return 0


if __name__ == '__main__':
    from rc_sim_description.cli_support import run_cli

    sys.exit(run_cli(main))
