"""Shared set-up of the racing benchmarks (not a benchmark itself)."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
import tempfile
from typing import Any

from rc_sim_description.params import VehicleParams, load_vehicle_params

#: The F1TENTH gym lidar: 1080 beams over 270 degrees, 30 m.
F1TENTH_LIDAR = {'lidar_samples': 1080, 'lidar_fov': math.radians(270.0), 'lidar_range_max': 30.0}


def bench_map(path: str | None) -> Path:
    """The given map YAML, or the generated 1000 x 1000-cell ``bench_circuit`` (written once)."""
    if path:
        return Path(path)
    from rc_sim_engine.world.track_gen import TRACKS, write_track

    out = Path(tempfile.gettempdir()) / 'rc_sim_bench_maps'
    yaml_path = out / 'bench_circuit.yaml'
    if not yaml_path.is_file():
        write_track(TRACKS['bench_circuit'], out)
    return yaml_path


def cache_dir() -> Path:
    """Where lidar lookup tables are kept between benchmark processes."""
    return Path(os.environ.get('RC_SIM_CACHE', Path.home() / '.cache' / 'rc_sim')) / 'lut'


def f1tenth_params() -> VehicleParams:
    """vehicle.yaml with the F1TENTH lidar."""
    return load_vehicle_params().with_values(**F1TENTH_LIDAR)


def common_args(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--map', help='map YAML (default: the generated 1000 x 1000 bench_circuit)')
    parser.add_argument('--steps', type=int, default=20_000, help='timed steps')
    parser.add_argument('--lidar-mode', default='lut', choices=('lut', 'exact'))
    parser.add_argument('--stride', type=int, help='lookup table stride (default: automatic)')
    return parser


def load(args: Any) -> Any:
    import time

    from rc_sim_engine.world.track import load_track

    t0 = time.perf_counter()
    track = load_track(bench_map(args.map), lidar_mode=args.lidar_mode, range_cap=30.0,
                       lidar_stride=args.stride, cache_dir=cache_dir())
    return track, time.perf_counter() - t0


def block_rates(times: list[float], block: int = 500) -> tuple[float, float]:
    """(best, median) steps/s over consecutive blocks of ``block`` per-step times: the best
    block is the figure least disturbed by other processes on a shared machine."""
    import numpy as np

    t = np.asarray(times)
    n = len(t) // block
    sums = t[:n * block].reshape(n, block).sum(axis=1) if n else np.array([t.sum()])
    size = block if n else len(t)
    return float(size / sums.min()), float(size / np.median(sums))
