"""Simulator with 1, 2, 4, 8 cars and their lidars (each seeing the other cars): steps/s.

The general simulator (what ``rcsim run --cars N`` runs): dt 1 ms RK4 single-track model,
vehicle.yaml's lidar (1081 beams at 40 Hz) on every car, collision checks against the walls and
between the cars, on the shipped ``basic_track`` world. The cars stand in a grid on its long
straight (two columns) and play the ``line`` manoeuvre at the same speed, so every lidar sees the
cars around it all the time. Nothing is recorded (live mode), so the figure is the loop itself.
Figures are printed, not asserted; on a loaded machine they are noisy.

Run: python benchmarks/bench_run_multicar.py [--cars 1 2 4 8] [--duration 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def one(n_cars: int, duration: float) -> tuple[float, float, int]:
    """(steps/s, car-steps/s, collision events) of a run of ``duration`` simulated seconds."""
    from rc_sim_control.commands import manoeuvre
    from rc_sim_description.params import load_vehicle_params
    from rc_sim_description.paths import world_path
    from rc_sim_engine.sim.car_grid import check_starts, grid_starts
    from rc_sim_engine.sim.simulator import SimConfig, Simulator
    from rc_sim_engine.world.sdf import load_world

    params = load_vehicle_params()
    world = load_world(world_path('basic_track'))
    cars = [params] * n_cars
    columns = [grid_starts((0.5, y, 0.0), cars[: (n_cars + 1) // 2]) for y in (-1.6, -2.1)]
    starts = np.concatenate(columns)[:n_cars]  # two columns, facing +x along the straight
    check_starts(world, cars, starts)
    sim = Simulator(cars if n_cars > 1 else params, world, SimConfig(record=False),
                    start=starts if n_cars > 1 else starts[0])
    seq = manoeuvre('line', params, speed=0.3, duration=duration)
    sim.play(seq, duration=0.05)  # warm: kernels loaded, buffers touched
    sim.reset(starts if n_cars > 1 else starts[0])
    t0 = time.perf_counter()
    sim.play(seq, duration=duration)
    wall = time.perf_counter() - t0
    steps = duration / sim.config.dt
    return steps / wall, steps * n_cars / wall, len(sim.collisions)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--cars', type=int, nargs='+', default=[1, 2, 4, 8])
    ap.add_argument('--duration', type=float, default=5.0, help='simulated seconds per figure')
    args = ap.parse_args()
    print(f'Simulator, basic_track, dt 1 ms, lidar 40 Hz on every car, {args.duration:g} s '
          'simulated per figure (measured under load: noisy)')
    print(f'{"cars":>5} {"steps/s":>10} {"car-steps/s":>12} {"us/car-step":>12} {"vs 1 car":>9} {"collisions":>10}')
    base = None
    for n in args.cars:
        rate, car_rate, hits = one(n, args.duration)
        base = base or rate
        print(f'{n:>5} {rate:>10,.0f} {car_rate:>12,.0f} {1e6 / car_rate:>12.2f} '
              f'{rate / base:>8.1%} {hits:>10}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
