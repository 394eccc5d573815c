"""Gymnasium vector env: 256 worlds x 1 car stepped by one compiled call: env-steps/s.

RaceVectorEnv on the 1000 x 1000-cell map (dt 10 ms RK4), random starts, pure pursuit actions
(computed outside the timed calls), next-step autoreset of crashed / truncated cars included.
Each figure runs in its own process: with / without the 1080-beam lidar, serial / numba threads.

Run: python benchmarks/bench_racing_vector.py [--envs 256] [--steps N] [--no-lidar] [--threads]
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from _racing_common import block_rates, common_args, f1tenth_params, load


def one(args: object) -> None:
    from rc_sim_engine.racing.gym_env import RaceVectorEnv
    from rc_sim_engine.racing.policies import pure_pursuit

    params = f1tenth_params()
    track, _ = load(args)
    lidar = not args.no_lidar
    n = int(args.envs)
    env = RaceVectorEnv(track, params, n_worlds=n, lidar=lidar, random_start=True,
                        max_episode_time=30.0, parallel=bool(args.threads))
    obs, _ = env.reset(seed=0)
    line = track.centerline
    times: list[float] = []
    ends = 0
    for k in range(int(args.steps) + 50):
        a = pure_pursuit(line, obs['pose'].astype(float), obs['progress'][:, 0].astype(float),
                         wheelbase=params.geometry.wheelbase, lookahead=1.5,
                         speed=3.0).astype(np.float32)
        t0 = time.perf_counter()
        obs, _, term, trunc, _ = env.step(a)
        if k >= 50:  # the first steps load the compiled kernels
            times.append(time.perf_counter() - t0)
            ends += int(np.sum(term | trunc))
    best, median = block_rates(times, block=20)
    what = 'lidar' if lidar else 'no lidar'
    how = 'threads' if args.threads else 'serial'
    print(f'  {n} envs x 1 car, {what}, {how}: {best * n:,.0f} env-steps/s best 20-step block '
          f'({best:,.0f} vector steps/s), median {median * n:,.0f}; {ends} episode ends')


def main() -> None:
    parser = common_args(__doc__.split('\n')[0])
    parser.add_argument('--envs', type=int, default=256)
    parser.add_argument('--no-lidar', action='store_true')
    parser.add_argument('--threads', action='store_true', help='numba threads over the cars')
    parser.add_argument('--all', action='store_true', help='every variant, one process each')
    parser.set_defaults(steps=400)
    args = parser.parse_args()
    if not args.all:
        one(args)
        return
    print(f'RaceVectorEnv.step, {args.envs} envs, dt 10 ms RK4, {args.steps} vector steps')
    for flags in ([], ['--no-lidar'], ['--threads'], ['--no-lidar', '--threads']):
        cmd = [sys.executable, __file__, '--envs', str(args.envs), '--steps', str(args.steps),
               *flags]
        print(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.rstrip())


if __name__ == '__main__':
    main()
