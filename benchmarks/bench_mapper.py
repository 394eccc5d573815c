"""Throughput of the vectorized command mapper (rc_sim_control.ackermann.map_twist).

Maps 1e6 random (linear_x, angular_z) commands per mode and prints commands/s (best of N repeats;
target >= 5e6 commands/s so the calibrator can map batch rollouts). Also times map_sequence (hold +
rate limit, a sequential loop) and CommandMapper.update for scale.

    /work/venv/bin/python benchmarks/bench_mapper.py [--n 1000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rc_sim_control.ackermann import (
    MAPPER_MODES,
    CommandMapper,
    MapperConfig,
    map_sequence,
    map_twist,
)
from rc_sim_description.params import load_vehicle_params


def best_time(fn, repeats: int) -> float:
    best = float('inf')
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--n', type=int, default=1_000_000)
    parser.add_argument('--repeats', type=int, default=5)
    args = parser.parse_args()
    params = load_vehicle_params()
    rng = np.random.default_rng(0)
    v = rng.uniform(-1.2, 1.2, args.n) * params.max_speed
    z_by_mode = {'curvature': rng.uniform(-5, 5, args.n), 'radius': rng.uniform(-10, 10, args.n),
                 'steering_angle': rng.uniform(-0.6, 0.6, args.n),
                 'yaw_rate': rng.uniform(-6, 6, args.n)}
    print(f'map_twist, {args.n:.0e} commands, best of {args.repeats}:')
    for mode in MAPPER_MODES:
        cfg = MapperConfig.from_vehicle(params, mode=mode)
        z = z_by_mode[mode]
        dt = best_time(lambda cfg=cfg, z=z: map_twist(v, z, cfg), args.repeats)
        print(f'  {mode:15s} {dt * 1e3:8.1f} ms  {args.n / dt:10.3g} commands/s')
    cfg = MapperConfig.from_vehicle(params, mode='yaw_rate')
    n_seq = 100_000
    t = np.arange(n_seq) * 0.01
    dt = best_time(lambda: map_sequence(t, v[:n_seq], z_by_mode['yaw_rate'][:n_seq], cfg), 1)
    print(f'map_sequence (hold + rate limit), {n_seq:.0e} samples: {n_seq / dt:10.3g} samples/s')
    batch = 1000
    tb = np.arange(1000) * 0.01
    vb = v[:batch * 1000].reshape(batch, 1000)
    zb = z_by_mode['yaw_rate'][:batch * 1000].reshape(batch, 1000)
    dt = best_time(lambda: map_sequence(tb, vb, zb, cfg), 1)
    print(f'map_sequence, {batch} rollouts x 1000 samples: {batch * 1000 / dt:10.3g} samples/s')
    mapper = CommandMapper(cfg)
    n_stream = 20_000
    zs = z_by_mode['yaw_rate']

    def stream() -> None:
        for k in range(n_stream):
            mapper.update(float(v[k]), float(zs[k]), k * 0.01)
    dt = best_time(stream, 1)
    print(f'CommandMapper.update (per message, nodes): {n_stream / dt:10.3g} messages/s')


if __name__ == '__main__':
    main()
