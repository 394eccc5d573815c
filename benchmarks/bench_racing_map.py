"""One car on a ~1000 x 1000-cell track map at 5 cm: steps/s (prints figures; not a test).

Workload of F1TENTH gym: single-track model, RK4, dt = 10 ms, a 1080-beam 270 deg 30 m lidar
cast EVERY step, on a track map; the car laps with pure pursuit (computed outside the timed calls).
Timed: RaceCore.step (the compiled step: latency, servo, wheel loop, RK4, wall contact, lidar,
progress) and RaceEnv.step (the Gymnasium API on top: action checks, observation dict, reward).
Compare with benchmarks/bench_f1tenth_gym.py on the same map (target: >= 30x).

Run: python benchmarks/bench_racing_map.py [--map MAP.yaml] [--steps N] [--lidar-mode exact]
"""

from __future__ import annotations

import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from _racing_common import block_rates, common_args, f1tenth_params, load


def main() -> None:
    args = common_args(__doc__.split('\n')[0]).parse_args()
    from rc_sim_engine.racing.gym_env import RaceEnv
    from rc_sim_engine.racing.policies import pure_pursuit
    from rc_sim_engine.racing.race_core import RaceCore
    from rc_sim_engine.racing.race_kernels import OBS_LAPS, OBS_LAST_LAP, OBS_S, OBS_WALL_DEPTH

    params = f1tenth_params()
    track, t_load = load(args)
    h, w = track.occupancy.shape
    line = track.centerline
    wheelbase = params.geometry.wheelbase
    core = RaceCore(track, params, dt=0.01)

    def run_core(steps: int) -> tuple[list[float], int]:
        core.reset_cars([0], [track.start_pose])
        core.observe()
        times = []
        crashes = 0
        for _ in range(steps):
            a = pure_pursuit(line, core.base, core.obs[:, OBS_S], wheelbase=wheelbase,
                             lookahead=1.5, speed=4.0)
            t0 = time.perf_counter()
            core.step(a)
            times.append(time.perf_counter() - t0)
            if core.obs[0, OBS_WALL_DEPTH] > 0:
                crashes += 1
        return times, crashes

    run_core(200)  # load the compiled kernels
    times, crashes = run_core(args.steps)
    laps, lap = core.obs[0, OBS_LAPS], core.obs[0, OBS_LAST_LAP]
    env = RaceEnv(track, params, max_episode_time=1e9)
    obs, _ = env.reset(seed=0)
    times_env = []
    for _ in range(args.steps):
        a = pure_pursuit(line, obs['pose'][None].astype(float), obs['progress'][:1],
                         wheelbase=wheelbase, lookahead=1.5, speed=4.0)[0].astype(np.float32)
        t0 = time.perf_counter()
        obs, *_ = env.step(a)
        times_env.append(time.perf_counter() - t0)
    best, median = block_rates(times)
    best_env, median_env = block_rates(times_env)
    lidar = track.lidar
    print(f'racing map: {track.name} {w} x {h} cells at {track.occupancy.resolution:g} m, '
          f'lidar {lidar.mode} ({lidar.lut.shape[0]:,} rows x {lidar.lut.shape[1]} bins, '
          f'{lidar.nbytes / 2**20:.0f} MiB; track load {t_load:.1f} s)')
    print(f'  one car, dt 10 ms RK4, 1080-beam 270 deg lidar every step, {args.steps} steps')
    print(f'  RaceCore.step      {best:,.0f} steps/s best 500-step block '
          f'({1e6 / best:.1f} us/step), median block {median:,.0f}')
    print(f'  RaceEnv.step       {best_env:,.0f} steps/s best block ({1e6 / best_env:.1f} us/step,'
          f' Gymnasium API), median block {median_env:,.0f}')
    print(f'  sanity: {laps:.0f} laps at 4 m/s, last lap {lap:.2f} s (centre line '
          f'{line.length:.1f} m), {crashes} steps in wall contact')


if __name__ == '__main__':
    main()
