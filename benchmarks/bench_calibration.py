"""Benchmark: wall and CPU time of the default fit of six ~15 s bags (target <= 60 s).

The six training bags of an independent reference car (``rc_sim_calibration/test/refcars``,
default ``esc_fiala`` seed 0: 92 s of driving, written by a plant that does not use the engine)
are fitted with the packaged default settings (config/fit_default.yaml: staged identification,
two candidate servo structures (first and second order, both with a fitted delay), selection on held-out windows, CMA-ES guard and least-squares
polish), structure selection included. Prints the time split (reading, staged identification +
candidates + final search), evaluations, engine throughput, and the errors of the identified
parameters against the car's truth.

    .venv/bin/python benchmarks/bench_calibration.py [--car esc_fiala] [--seed 0]

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--car', default='esc_fiala', choices=refcars.CAR_NAMES)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
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
