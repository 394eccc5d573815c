"""Drive laps through the Gymnasium interface and print the lap times.

A pure pursuit on the map's centre line (or a reactive follow-the-gap on the lidar alone) drives
``RaceEnv`` on the shipped chicane_track (or any map_server map); then a 4-world x 2-car
``RaceVectorEnv`` runs pure pursuit batched (one compiled call per step), the car starting
behind on the grid driving slower so that the two cars of a world never touch.

Run: python examples/gym_lap_times.py [--map MAP.yaml] [--policy pursuit|gap] [--laps 3]
"""

from __future__ import annotations

import argparse

import numpy as np

from rc_sim_engine.racing.gym_env import RaceEnv, RaceVectorEnv
from rc_sim_engine.racing.policies import follow_the_gap, pure_pursuit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--map', default='chicane_track', help='map YAML or shipped map name')
    parser.add_argument('--policy', choices=('pursuit', 'gap'), default='pursuit')
    parser.add_argument('--laps', type=int, default=3)
    parser.add_argument('--speed', type=float, default=3.0, help='target speed [m/s]')
    args = parser.parse_args()

    env = RaceEnv(args.map, max_episode_time=600.0)
    track = env.track
    wheelbase = env.core.params[0].geometry.wheelbase
    angles = env.core.angles
    obs, info = env.reset(seed=0)
    print(f'{track.name}: centre line {track.centerline.length:.2f} m, policy {args.policy}, '
          f'{args.speed:g} m/s')
    laps, total_reward, steps = 0, 0.0, 0
    while laps < args.laps:
        if args.policy == 'pursuit':
            action = pure_pursuit(track.centerline, obs['pose'][None].astype(float),
                                  obs['progress'][:1].astype(float), wheelbase=wheelbase,
                                  lookahead=1.0, speed=args.speed)[0]
        else:
            action = follow_the_gap(obs['scan'][None], angles, speed=args.speed)[0]
        obs, reward, terminated, truncated, info = env.step(action.astype(np.float32))
        total_reward += reward
        steps += 1
        if info['laps'] > laps:
            laps = info['laps']
            kind = 'from the standing start' if laps == 1 else 'line to line'
            print(f'  lap {laps}: {info["last_lap_time"]:.2f} s ({kind})')
        if terminated or truncated:
            print(f'  episode ended after {info["time"]:.2f} s (wall {info["wall_collision"]}, '
                  f'car {info["car_collision"]})')
            break
    print(f'  {steps} steps, return {total_reward:.2f} (metres of progress)')

    vec = RaceVectorEnv(track, n_worlds=4, n_cars=2, max_episode_time=120.0)
    obs, info = vec.reset(seed=1)
    speeds = np.tile([args.speed, 0.8 * args.speed], 4)  # the car in front is faster
    best = np.full(vec.num_envs, np.inf)
    for _ in range(int(2 * track.centerline.length / (0.8 * args.speed) / 0.01)):
        actions = pure_pursuit(track.centerline, obs['pose'].astype(float),
                               obs['progress'][:, 0].astype(float), wheelbase=wheelbase,
                               lookahead=1.0, speed=speeds).astype(np.float32)
        obs, reward, terminated, truncated, info = vec.step(actions)
        done = info['laps'] > 0
        best[done] = np.minimum(best[done], info['last_lap_time'][done])
    print(f'RaceVectorEnv 4 worlds x 2 cars: best lap per car [s] '
          f'{np.array2string(best, precision=2)}')


if __name__ == '__main__':
    main()
