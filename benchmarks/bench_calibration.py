"""Benchmark (issue 6 item 10): fit the default free set on six synthetic 15 s bags.

Six protocol manoeuvres (~15 s each) are driven by hidden parameters through the engine and
recorded with realistic noise (rc_sim_calibration.synthetic), then fitted with the packaged
default settings (config/fit_default.yaml: CMA-ES + least-squares polish). Prints the wall time,
evaluations/s, the recovered parameters and the yaw-rate RMSE on a seventh, held-out bag.
Target: fit wall time <= 60 s on a 2-core machine.

    /work/venv/bin/python benchmarks/bench_calibration.py
"""

from __future__ import annotations

from pathlib import Path
import tempfile
import time

import numpy as np

from rc_sim_calibration.dataset import load_dataset
from rc_sim_calibration.fit import Problem, fit, make_windows
from rc_sim_calibration.replay import replay_metrics
from rc_sim_calibration.settings import load_fit_settings, resolve_free
from rc_sim_calibration.synthetic import write_synthetic_bag
from rc_sim_control.commands import manoeuvre
from rc_sim_description.params import load_vehicle_params

HIDDEN = {
    'steering_gain': 0.9, 'steering_offset': -0.012, 'cornering_stiffness_front': 75.0,
    'cornering_stiffness_rear': 130.0, 'yaw_inertia': 0.06, 'command_latency': 0.035,
    'max_steering_rate': 2.5, 'wheel_max_torque': 1.2,
}
TRAIN = {
    'slalom': ('slalom', {'speed': 1.5, 'duration': 15.0, 'amplitude': 0.6}),
    'steering_steps': ('steering_steps', {'speed': 1.2, 'step_duration': 0.85}),
    'circle_left': ('circle_left', {'speed': 2.0, 'duration': 15.0}),
    'figure_eight': ('figure_eight', {'speed': 1.5, 'duration': 15.0}),
    'speed_steps': ('speed_steps', {'levels': (0.1, 0.2, 0.3), 'step_duration': 2.1}),
    'steering_chirp': ('steering_chirp', {'speed': 1.5, 'duration': 15.0}),
}
HELD_OUT = ('circle_right', {'speed': 1.5, 'duration': 15.0})


def main() -> None:
    nominal = load_vehicle_params()
    truth = nominal.with_values(**HIDDEN)
    rng = np.random.default_rng(42)
    settings = load_fit_settings()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        paths = [write_synthetic_bag(Path(tmp) / name, manoeuvre(m, nominal, **kw), truth,
                                     nominal, rng) for name, (m, kw) in TRAIN.items()]
        held = write_synthetic_bag(Path(tmp) / 'held_out', manoeuvre(HELD_OUT[0], nominal,
                                                                      **HELD_OUT[1]),
                                   truth, nominal, rng)
        t_gen = time.perf_counter() - t0
        t0 = time.perf_counter()
        train = [load_dataset(p, nominal, settings.data) for p in paths]
        val = load_dataset(held, nominal, settings.data)
        t_load = time.perf_counter() - t0
    data_s = sum(d.duration for d in train)
    t0 = time.perf_counter()
    result = fit(train, nominal, settings)
    t_fit = time.perf_counter() - t0
    print(f'bags: {len(train)} x ~15 s ({data_s:.1f} s of data); generated in {t_gen:.1f} s, '
          f'read in {t_load:.2f} s')
    print(f'fit: {settings.optimizer} budget {settings.budget} + polish, dt {settings.dt} s, '
          f'horizon {settings.horizon} s')
    print(f'fit wall time: {t_fit:.1f} s (target <= 60 s); evaluations: {result.n_evals}; '
          f'{result.n_evals / t_fit:.1f} evaluations/s; '
          f'{result.n_evals * data_s / settings.dt / t_fit:.3g} car-steps/s')
    win = make_windows(train, settings.horizon, lookback=0.25, command_dt=settings.dt)
    problem = Problem(nominal, resolve_free(settings, nominal), win, settings)
    hidden_cost = float(problem.cost(problem.to_unit(np.array([HIDDEN[n] for n in
                                                                problem.names]))[None])[0])
    print(f'cost {result.cost_start:.4g} (nominal) -> {result.cost_final:.4g} (fitted); '
          f'at the hidden parameters: {hidden_cost:.4g}')
    print(f'{"parameter":28s} {"nominal":>10s} {"hidden":>10s} {"fitted":>10s} {"error":>8s}')
    for i, name in enumerate(result.names):
        err = (result.values[i] - HIDDEN[name]) / (abs(HIDDEN[name]) or 1.0)
        print(f'{name:28s} {result.start[i]:10.5g} {HIDDEN[name]:10.5g} '
              f'{result.values[i]:10.5g} {100 * err:+7.1f}%')
    for flag in result.identifiability.flags:
        print(f'flag: {flag}')
    before = replay_metrics(nominal, val, settings)['windowed']['yaw_rate_rmse_radps']
    after = replay_metrics(result.params, val, settings)['windowed']['yaw_rate_rmse_radps']
    print(f'held-out {HELD_OUT[0]} yaw-rate RMSE: nominal {before:.4f} rad/s -> calibrated '
          f'{after:.4f} rad/s ({100 * (1 - after / before):.0f} % lower)')


if __name__ == '__main__':
    main()
