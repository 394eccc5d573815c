"""Benchmark: the default ``rcsim fit`` on the independent reference cars, against their truth.

For each car and seed: the six training bags and the two held-out bags of
``rc_sim_calibration/test/refcars`` (written by that package, whose plants do not use the
engine), then ``rcsim fit --bag <training> --validate <held-out> --params measured.yaml`` with the
default settings, then ``rcsim replay --horizon 1`` of the held-out bags with the nominal
parameters and with the calibrated ones. Prints per car and seed: held-out yaw-rate RMSE ratio
(calibrated / nominal) per held-out bag, and the errors of the command latency, steering gain and
trim (for normalised steering: of the least-squares line of the map over s in [-0.5, 0.5], the
truth's definition), and of the effective rolling radius; the fit's wall and CPU time.

    .venv/bin/python benchmarks/bench_refcar_fits.py [--cars a,b] [--seeds 0,1,2] [--keep DIR]

The acceptance bounds (docs/calibration.md): ratio <= 0.40 on every held-out bag, latency
+-15 ms, gain +-4 %, trim +-0.005 rad, radius +-1.5 %.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import sys
import tempfile
import time
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'rc_sim_calibration' / 'test'))

import refcars

#: what `rcsim inspect --write-recording` proposes for a normalised-servo + ESC car's bag
RECORDING_NORMALISED = '''steering: {topic: /steering_norm, kind: normalised}
drive: {topic: /throttle, kind: throttle}
enable: {topic: /safety_value}
pose: {topic: /odom}
'''
BOUNDS = {'ratio': 0.40, 'latency': 0.015, 'gain': 0.04, 'trim': 0.005, 'radius': 0.015}


def _rcsim(argv: list[str]) -> tuple[int, str]:
    """Run ``rcsim`` in-process; (exit status, stdout)."""
    import contextlib
    import io

    from rc_sim_engine.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def map_line(cal: Any, kind: str, s_range: float) -> tuple[float, float]:
    """(gain, trim) of the least-squares line through the calibrated steering map (command kind
    ``kind``) over [-s_range, s_range] (the reference cars' definition)."""
    from rc_sim_calibration.predict import steering_targets

    s = np.linspace(-s_range, s_range, 401)
    gain, trim = np.polyfit(s, steering_targets(s, cal, kind), 1)
    return float(gain), float(trim)


def evaluate_car(name: str, seed: int, root: Path) -> dict[str, Any]:
    """Write the bags, fit, replay; the figures of one car and seed."""
    from rc_sim_description.params import load_vehicle_params

    car = refcars.make_car(name, seed)
    out = root / f'{name}_{seed}'
    train = refcars.training_set(car, out, force=True)
    held = refcars.held_out_set(car, out, force=True)
    refcars.write_car_files(car, out)
    truth = car.truth()
    measured = out / 'measured.yaml'
    cal = out / 'calibrated.yaml'
    rec: list[str] = []
    if truth['default_interface'] == 'normalised_throttle':  # no default topic names for these
        (out / 'recording.yaml').write_text(RECORDING_NORMALISED)
        rec = ['--recording', str(out / 'recording.yaml')]
    t0, c0 = time.perf_counter(), time.process_time()
    code, text = _rcsim(['fit', '--bag', *map(str, train), '--validate', *map(str, held),
                         '--params', str(measured), '--out', str(cal), '--force', *rec])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    row: dict[str, Any] = {'car': name, 'seed': seed, 'exit': code, 'wall_s': wall,
                           'cpu_s': cpu}
    offset = None
    for line in text.splitlines():
        if '--odom-offset' in line:
            offset = line.split('--odom-offset ')[1].split()[0]
    ratios = []
    for bag in held:
        extra = ['--odom-offset', offset] if offset else []
        rm = {}
        for label, params in (('nominal', [str(measured)]), ('calibrated',
                                                            [str(measured), str(cal)])):
            argv = ['replay', '--bag', str(bag), '--horizon', '1', '--out',
                    str(out / f'{bag.name}_{label}.csv'), '--force']
            for p in params:
                argv += ['--params', p]
            code_r, js = _rcsim(argv + rec + (extra if label == 'calibrated' else []))
            rm[label] = json.loads(js)['yaw_rate_rmse_radps'] if code_r == 0 else float('nan')
        ratios.append(rm['calibrated'] / rm['nominal'])
    row['ratios'] = ratios
    p = load_vehicle_params(overrides=[measured, cal]) if cal.exists() else None
    if p is not None:
        row['latency_err'] = p.timing.command_latency - truth['command_latency']
        if truth['default_interface'] == 'normalised_throttle':
            g, t = map_line(p, 'normalised', 0.5)
        else:
            g, t = map_line(p, 'angle', truth['steering_fit_range'])
        row['gain_err'] = g / truth['steering_gain'] - 1.0
        row['trim_err'] = t - truth['steering_offset']
        row['radius_err'] = (p.effective_wheel_radius / truth['effective_rolling_radius'] - 1.0
                             if truth['default_interface'] != 'normalised_throttle'
                             else float('nan'))
        row['structure'] = f'{p.steering.servo_model}/{p.drive.drive_model}'
    return row


def passes(row: dict[str, Any]) -> bool:
    """All acceptance bounds met."""
    checks = [max(row['ratios']) <= BOUNDS['ratio'],
              abs(row.get('latency_err', 1.0)) <= BOUNDS['latency'],
              abs(row.get('gain_err', 1.0)) <= BOUNDS['gain'],
              abs(row.get('trim_err', 1.0)) <= BOUNDS['trim']]
    if np.isfinite(row.get('radius_err', np.nan)):
        checks.append(abs(row['radius_err']) <= BOUNDS['radius'])
    return bool(row['exit'] == 0 and all(checks))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--cars', default=','.join(refcars.CAR_NAMES))
    parser.add_argument('--seeds', default='0')
    parser.add_argument('--keep', type=Path, help='keep the bags and fits in this directory')
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix='refcar_fits_'))
    print('car              seed exit  ratios (held-out yaw rate)  latency[ms] gain[%] '
          'trim[mrad] radius[%] structure              wall[s] cpu[s] pass')
    rows = []
    for name in args.cars.split(','):
        for seed in (int(s) for s in args.seeds.split(',')):
            row = evaluate_car(name, seed, root)
            rows.append(row)
            ratios = ' '.join(f'{r:.3f}' for r in row['ratios'])
            print(f'{name:16s} {seed:4d} {row["exit"]:4d}  {ratios:26s}  '
                  f'{1e3 * row.get("latency_err", np.nan):+9.1f} '
                  f'{100 * row.get("gain_err", np.nan):+7.2f} '
                  f'{1e3 * row.get("trim_err", np.nan):+9.2f} '
                  f'{100 * row.get("radius_err", np.nan):+8.2f} '
                  f'{row.get("structure", "-"):22s} {row["wall_s"]:7.1f} {row["cpu_s"]:6.1f} '
                  f'{"yes" if passes(row) else "NO"}', flush=True)
    print(f'{sum(passes(r) for r in rows)}/{len(rows)} pass; bags and fits in {root} '
          '(times measured under load)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
