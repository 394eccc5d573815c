"""Benchmark: 1 s-window open-loop prediction errors on real recordings, per predictor.

For each held-out recording (DART: ``4_sept_random_driving_slow`` when fitting on ``..._fast`` and
the reverse; F1TENTH: frictionmaps DS3 when fitting on DS1-DS2) every predictor writes the
prediction CSV of ``docs/prediction_windows.md`` and the independent evaluator
(``benchmarks/realdata/evaluate_predictions.py``) reads it back and prints the pooled position
RMSE and yaw-rate RMSE. Predictors today: CTRV (``rc_sim_calibration.baselines``) and, for DART,
the builders' published model (``benchmarks/realdata/dart_published_model.py``).

    .venv/bin/python benchmarks/bench_realdata_prediction.py [--horizon 1.0] [--out DIR]
        [--csv 'NAME:CASE=pred.csv' ...]

HOOKS for the rc-sim predictions: either register a callable in ``EXTRA_PREDICTORS`` (signature
``(case, recording, windows) -> PredictionTable``, windows with the protocol's initial states), or
pass CSVs written elsewhere (e.g. by ``rcsim replay --horizon``) with ``--csv NAME:CASE=PATH``;
both go through :func:`score_predictor` / :func:`score_csv`. Data: ``$RC_SIM_REALDATA`` or
``/work/shared/realdata``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
import os
from pathlib import Path
import sys
import tempfile
import time

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
# HOOK: the rc-sim predictors go here, e.g.
#   EXTRA_PREDICTORS['rc-sim calibrated'] = (my_predictor, ('DART', 'F1TENTH'))
# where my_predictor(case, recording, windows) runs the engine from windows.x0 .. yaw_rate0 (the
# measured frame's state; see baselines.reference_from_measured) and returns a PredictionTable.
EXTRA_PREDICTORS: dict[str, tuple[Predictor, tuple[str, ...]]] = {}


def realdata_dir() -> Path:
    return Path(os.environ.get('RC_SIM_REALDATA', '/work/shared/realdata'))


def score_csv(case: Case, csv_path: Path, horizon: float) -> Score:
    """Score a prediction CSV of ``case`` with the independent evaluator (the CSV hook)."""
    root = realdata_dir()
    rec = read_recording(root / case.bag, root / case.recording)
    truth = protocol_truth(rec.t, rec.x, rec.y, rec.yaw, horizon)
    return score(truth, read_prediction_csv(csv_path), name=str(csv_path))


def score_predictor(case: Case, predictor: Predictor, horizon: float, csv_path: Path
                    ) -> tuple[Score, float]:
    """Run ``predictor`` on ``case``, write its CSV, score the CSV; returns (score, seconds)."""
    root = realdata_dir()
    rec = read_recording(root / case.bag, root / case.recording, ('steering', 'drive', 'enable'))
    windows = make_windows(make_pose_track(rec.t, rec.x, rec.y, rec.yaw), horizon)
    start = time.perf_counter()
    table = predictor(case, rec, windows)
    elapsed = time.perf_counter() - start
    write_prediction_csv(str(csv_path), table)
    return score_csv(case, csv_path, horizon), elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--horizon', type=float, default=1.0, help='window length H [s]')
    parser.add_argument('--out', type=Path, help='keep the prediction CSVs in this directory')
    parser.add_argument('--csv', action='append', default=[], metavar='NAME:CASE=PATH',
                        help=f'score an external CSV too; CASE in {[c.key for c in CASES]}')
    args = parser.parse_args()
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
    for case in CASES:
        for name, (predictor, cars) in {**PREDICTORS, **EXTRA_PREDICTORS}.items():
            if case.car not in cars:
                continue
            csv_path = out / f'{case.key}_{name.replace(" ", "_")}.csv'
            s, secs = score_predictor(case, predictor, args.horizon, csv_path)
            print(f'{case.car:8} {Path(case.bag).stem:36} {name:16} {s.windows:7d} '
                  f'{s.samples:7d} {s.pos_rmse:12.3f} {s.yaw_rate_rmse:21.3f} {secs:8.2f}')
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
