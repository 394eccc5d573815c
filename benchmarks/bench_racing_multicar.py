"""N cars in one world on a track map, each lidar seeing the others: steps/s per car count.

Same workload as bench_racing_map.py (dt 10 ms RK4, 1080-beam 270 deg 30 m lidar every step,
1000 x 1000-cell map), N cars on a race grid lapping with pure pursuit at slightly different
speeds; every step checks car-to-car contacts and overlays the other cars on every scan. One
process per figure: with no --cars, the script runs itself once per car count (1, 2, 4, 8).
Target: 8 cars >= 25 % of the one-car rate (perfectly linear cost would give 12.5 %).

Run: python benchmarks/bench_racing_multicar.py [--cars N] [--steps N] [--map MAP.yaml]
     python benchmarks/bench_racing_multicar.py --rounds 5   (1 car and 8 cars alternating, a
     process each: the machine's state drifts between minutes, so paired rounds and their median
     ratio are the fair figure)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from _racing_common import block_rates, common_args, f1tenth_params, load


def one(n_cars: int, args: object) -> float:
    from rc_sim_engine.racing.policies import pure_pursuit
    from rc_sim_engine.racing.race_core import RaceCore
    from rc_sim_engine.racing.race_kernels import OBS_CAR_DEPTH, OBS_S, OBS_WALL_DEPTH

    params = f1tenth_params()
    track, _ = load(args)
    core = RaceCore(track, params, n_cars=n_cars, dt=0.01,
                    parallel=True if args.threads else None)
    line = track.centerline
    speed = 3.5 - 0.1 * np.arange(n_cars)  # the leader is fastest: the gaps grow
    steps = int(args.steps)

    def run(count: int) -> tuple[list[float], int, int]:
        core.reset_cars(np.arange(n_cars), track.grid_poses(n_cars))
        core.observe()
        times: list[float] = []
        walls = cars = 0
        for _ in range(count):
            a = pure_pursuit(line, core.base, core.obs[:, OBS_S],
                             wheelbase=params.geometry.wheelbase, lookahead=1.5, speed=speed)
            t0 = time.perf_counter()
            core.step(a)
            times.append(time.perf_counter() - t0)
            walls += int(np.sum(core.obs[:, OBS_WALL_DEPTH] > 0))
            cars += int(np.sum(core.obs[:, OBS_CAR_DEPTH] > 0))
        return times, walls, cars

    run(200)
    times, walls, cars = run(steps)
    best, median = block_rates(times)
    threads = 'threads' if core._threads else 'serial'
    print(f'  {n_cars} car(s): {best:,.0f} steps/s best 500-step block ({best * n_cars:,.0f} '
          f'car-steps/s, {1e6 / best:.1f} us/step, {threads}), median block {median:,.0f}; '
          f'{walls} car-steps on walls, {cars} in car contact')
    return best


def _rate(n: int, args: argparse.Namespace, echo: bool = False) -> float:
    """Best-block steps/s of ``n`` cars, measured in a process of its own."""
    cmd = [sys.executable, __file__, '--cars', str(n), '--steps', str(args.steps),
           '--lidar-mode', args.lidar_mode, *(['--threads'] if args.threads else [])]
    if args.map:
        cmd += ['--map', args.map]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    if echo:
        print(out.rstrip())
    return float(out.split(':')[1].split('steps/s')[0].replace(',', ''))


def main() -> None:
    parser = common_args(__doc__.split('\n')[0])
    parser.add_argument('--cars', type=int, help='one car count (default: 1, 2, 4, 8, each in '
                        'its own process)')
    parser.add_argument('--threads', action='store_true', help='numba threads over the cars '
                        '(default: threads from 8 cars)')
    parser.add_argument('--rounds', type=int, help='alternate 1 car and 8 cars this many times '
                        'and print the paired ratios')
    args = parser.parse_args()
    if args.cars:
        one(args.cars, args)
        return
    if args.rounds:
        ratios = []
        for k in range(args.rounds):
            one_car, eight = (_rate(n, args) for n in (1, 8))
            ratios.append(eight / one_car)
            print(f'round {k + 1}: 1 car {one_car:,.0f} steps/s, 8 cars {eight:,.0f} steps/s, '
                  f'{eight / one_car:.1%}', flush=True)
        print(f'8 cars / 1 car over {len(ratios)} rounds: median {statistics.median(ratios):.1%}, '
              f'{min(ratios):.1%}-{max(ratios):.1%} (target >= 25 %)')
        return
    print(f'N cars, lidar seeing each other, dt 10 ms RK4, 1080-beam lidar every step, '
          f'{args.steps} steps per count')
    rates = {}
    for n in (1, 2, 4, 8):
        rates[n] = _rate(n, args, echo=True)
    print(f'  8 cars / 1 car = {rates[8] / rates[1]:.1%} (target >= 25 %; linear cost 12.5 %)')


if __name__ == '__main__':
    main()
