"""Benchmark: wall and CPU time of the default fit (target <= 60 s): a reference car, or the
shared real cars end to end (``--real``).

The six training bags of an independent reference car (``rc_sim_calibration/test/refcars``,
default ``esc_fiala`` seed 0: 92 s of driving, written by a plant that does not use the engine)
are fitted with the packaged default settings (config/fit_default.yaml: staged identification,
two candidate servo structures (first and second order, both with a fitted delay), selection on held-out windows, CMA-ES guard and least-squares
polish), structure selection included. Prints the time split (reading, staged identification +
candidates + final search), evaluations, engine throughput, and the errors of the identified
parameters against the car's truth.

    .venv/bin/python benchmarks/bench_calibration.py [--car esc_fiala] [--seed 0]
    .venv/bin/python benchmarks/bench_calibration.py --real [dart] [f1tenth]

``--real`` runs ``rcsim fit`` as a user does (a subprocess, ``CI=1`` so that it prints one line
per stage) on the shared real recordings (``$RC_SIM_REALDATA`` or /work/shared/realdata): the DART
car's two 4 September bags, the F1TENTH car's DS1-DS3, each with its recording description and
the builders' measured values; it prints the command's wall time (reading the bags included),
its stage lines and its verdict.

The machine is shared: the wall time depends on the load, the CPU time much less (both printed).
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys
import tempfile
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'rc_sim_calibration' / 'test'))

import refcars

from rc_sim_calibration.dataset import load_dataset
from rc_sim_calibration.fit import fit
from rc_sim_calibration.settings import load_fit_settings
from rc_sim_description.params import load_vehicle_params

#: real cars: bags, recording description and measured values (the builders' published ones)
REAL = {
    'dart': (['dart/4_sept_random_driving_fast.bag', 'dart/4_sept_random_driving_slow.bag'],
             'recordings/example_dart_fast.yaml',
             'geometry: {wheelbase: 0.1735, cg_to_front_axle: 0.0805, track_width: 0.08}\n'
             'mass_properties: {mass: 1.58, yaw_inertia: 0.00481}\n'),
    'f1tenth': ([f'frictionmaps/frictionmaps_DS{i}' for i in (1, 2, 3)],
                'recordings/example_frictionmaps.yaml',
                'geometry: {wheelbase: 0.32, cg_to_front_axle: 0.112, wheel_radius: 0.0508}\n'
                'mass_properties: {mass: 3.3325, yaw_inertia: 0.0687}\n'),
}


def real_fit(name: str) -> None:
    """``rcsim fit`` on a real car's recordings, timed end to end."""
    import os
    import subprocess

    root = Path(os.environ.get('RC_SIM_REALDATA', '/work/shared/realdata'))
    bags, rec, measured = REAL[name]
    with tempfile.TemporaryDirectory() as tmp:
        mfile = Path(tmp) / 'measured.yaml'
        mfile.write_text(measured)
        cmd = [sys.executable, '-m', 'rc_sim_engine', 'fit', '--bag',
               *(str(root / b) for b in bags), '--recording', str(root / rec), '--params',
               str(mfile), '--out', str(Path(tmp) / 'calibrated.yaml')]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              env={**os.environ, 'CI': '1'}, check=False)
        wall = time.perf_counter() - t0
    print(f'{name}: rcsim fit on {len(bags)} recordings: exit {proc.returncode}, {wall:.1f} s '
          'wall (reading included; target <= 60 s; measured under load)')
    for line in proc.stderr.splitlines():
        if line.startswith(('fit: stage', 'fit rejected', 'error')):
            print('  ' + line)
    for line in proc.stdout.splitlines():
        if line.startswith(('rc_sim_calibration fit:', 'verdict:', 'held out:')) or \
                ' windows): ' in line:
            print('  ' + line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--car', default='esc_fiala', choices=refcars.CAR_NAMES)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--real', nargs='*', choices=sorted(REAL), default=None,
                        help='time rcsim fit on the shared real recordings instead')
    args = parser.parse_args()
    if args.real is not None:
        for name in args.real or sorted(REAL):
            real_fit(name)
        return 0
    car = refcars.make_car(args.car, args.seed)
    truth = car.truth()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        bags = refcars.training_set(car, tmp)
        measured, _ = refcars.write_car_files(car, tmp)
        t_gen = time.perf_counter() - t0
        base = load_vehicle_params(overrides=[measured])
        settings = load_fit_settings()
        rec = None
        if truth['default_interface'] == 'normalised_throttle':
            rec = Path(tmp) / 'recording.yaml'
            rec.write_text('steering: {topic: /steering_norm, kind: normalised}\n'
                           'drive: {topic: /throttle, kind: throttle}\n'
                           'enable: {topic: /safety_value}\npose: {topic: /odom}\n')
        t0, c0 = time.perf_counter(), time.process_time()
        train = [load_dataset(b, base, settings.data, recording=rec) for b in bags]
        t_load, c_load = time.perf_counter() - t0, time.process_time() - c0
    data_s = sum(d.duration for d in train)
    result = fit(train, base, settings)
    steps = result.n_evals * data_s / settings.dt
    print(f'{args.car} seed {args.seed}: {len(train)} bags, {data_s:.1f} s of data; bags written '
          f'in {t_gen:.1f} s, read in {t_load:.1f} s wall / {c_load:.1f} s CPU')
    print(f'fit (default settings, structure selection included): {result.wall_time:.1f} s wall,'
          f' {result.cpu_time:.1f} s CPU (target <= 60 s); {result.n_evals} evaluations; '
          f'about {steps / result.wall_time / 1e6:.2f} M car-steps/s wall; measured under load')
    print(f'structure: {result.scores[result.chosen].candidate.label}')
    for s in result.scores:
        print(f'  candidate {s.candidate.label:52s} held-out cost {s.cost:.4g}')
    p = result.params
    rows = [('command_latency [ms]', 1e3 * p.timing.command_latency,
             1e3 * truth['command_latency'])]
    if truth['default_interface'] != 'normalised_throttle':
        rows += [('steering_gain', p.steering.steering_gain, truth['steering_gain']),
                 ('steering_offset [mrad]', 1e3 * p.steering.steering_offset,
                  1e3 * truth['steering_offset']),
                 ('effective radius [mm]', 1e3 * p.effective_wheel_radius,
                  1e3 * truth['effective_rolling_radius'])]
    for name, got, want in rows:
        print(f'  {name:24s} fitted {got:9.4f}  truth {want:9.4f}  error {got - want:+.4f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
