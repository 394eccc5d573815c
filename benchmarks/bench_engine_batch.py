"""Benchmark of the embedded engine physics (prints figures; not a test).

1. Batch: 64 parameter sets x 1 kHz single-track RK4 steps on a sine-steer manoeuvre, stepped by
   Car.step(n_steps=10) at 100 Hz and by rollout(): car-steps per second (target >= 5,000,000).
   Best of 5 runs (the machine is shared; figures vary with its load).
2. Single car: single-track RK4 at dt = 10 ms through Car.step(n_steps=1) (per-call overhead
   included) and Car.step(n_steps=1000): steps per second.

Run: /work/venv/bin/python benchmarks/bench_engine_batch.py
"""

from __future__ import annotations

import time

import numpy as np

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.rollout import InitialState, rollout


def _best(fn, repeat: int = 5) -> float:
    best = float('inf')
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    base = load_vehicle_params()
    rng = np.random.default_rng(0)
    params = [base.with_values(cornering_stiffness_front=float(c), steering_gain=float(g))
              for c, g in zip(rng.uniform(70, 120, 64), rng.uniform(0.9, 1.1, 64))]
    n_steps = 20_000

    # Manoeuvre: sine steering (+-0.25 rad, 0.08 Hz) at 3 m/s, commands changed every 10 ms
    # (100 Hz, a typical controller), 20 s = 20,000 steps of 1 ms per car.
    t_cmd = np.arange(0.0, 20.0, 0.01)
    steer_cmd = 0.25 * np.sin(0.5 * t_cmd)
    wheel_cmd = np.full_like(t_cmd, 60.0)
    phase = np.linspace(0.0, 1.0, 64)

    car = Car(params, dt=1e-3)
    car.step(0.1, 60.0, 10)  # compile / load cache

    def run_car() -> None:
        car.reset(speed=3.0)
        for k in range(len(t_cmd)):
            car.step(steer_cmd[k] + 0.05 * phase, 60.0, 10)

    t = _best(run_car)
    print(f'batch Car.step: 64 cars x {n_steps} steps (1 kHz, single_track, rk4, sine steer, '
          f'commands at 100 Hz): {64 * n_steps / t / 1e6:.2f} M car-steps/s')

    t_out = np.arange(0.0, 20.0, 0.02)
    rollout(params, t_cmd, steer_cmd, wheel_cmd, InitialState(vx=3.0), t_out=t_out[:5])
    t = _best(lambda: rollout(params, t_cmd, steer_cmd, wheel_cmd, InitialState(vx=3.0),
                              t_out=t_out))
    print(f'batch rollout: 64 sets x {n_steps} steps (1 kHz, same manoeuvre): '
          f'{64 * n_steps / t / 1e6:.2f} M car-steps/s')

    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    t = _best(lambda: rollout(params, t_cmd, steer_cmd, wheel_cmd, InitialState(vx=3.0),
                              t_out=t_out), repeat=3)
    numba.set_num_threads(threads)
    print(f'batch rollout on 1 thread (of {threads}): {64 * n_steps / t / 1e6:.2f} M car-steps/s')

    single = Car(base, dt=0.01)
    single.step(0.1, 60.0, 1)
    n = 20_000

    def run_single_calls() -> None:
        single.reset(speed=3.0)
        for _ in range(n):
            single.step(0.047, 60.0)

    t = _best(run_single_calls)
    print(f'single car, dt = 10 ms, Car.step() per step: {n / t:,.0f} steps/s '
          f'({t / n * 1e6:.2f} us/step incl. Python call)')

    def run_single_block() -> None:
        single.reset(speed=3.0)
        single.step(0.047, 60.0, n)

    t = _best(run_single_block)
    print(f'single car, dt = 10 ms, Car.step(n_steps={n}): {n / t:,.0f} steps/s '
          f'({t / n * 1e6:.3f} us/step)')


if __name__ == '__main__':
    main()
