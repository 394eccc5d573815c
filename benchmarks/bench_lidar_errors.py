"""Throughput of the lidar error model: 1081-beam scans per second, every effect on, batches of 1000.

Run: ``python benchmarks/bench_lidar_errors.py [--scans 1000] [--repeats 7] [--bag-scans 1000]``.
Prints wall-clock (median, best) and CPU-time (best) figures for the batch call, for a float32
batch, for scan-by-scan calls through ``LidarErrorModel.apply`` (what the node does), and for
``lidar apply`` end to end on generated bags (sqlite3, read + model + write): a fixed-geometry
1081-beam bag (batched per geometry) and a 360 deg bag whose beam count (224/225/226) and
angle_min change every scan. On a shared machine the CPU-time figure is the one to compare.
Target: >= 20,000 scans/s for the batch (500x a 40 Hz sensor).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
import statistics
import tempfile
import time
from typing import Any

import numpy as np

from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel, LidarErrorState, apply_lidar_errors
from rc_sim_sensors.scene import room_scan

BEAMS = 1081
FOV = np.deg2rad(270.0)

# every effect on (harsh preset plus the effects it leaves off)
EVERY_EFFECT = {
    'noise_mean': 0.002, 'noise_stddev': 0.02, 'noise_stddev_per_meter': 0.005, 'bias_initial': 0.01,
    'bias_walk_stddev': 0.001, 'bias_markov_stddev': 0.01, 'bias_correlation_time': 2.0,
    'dropout_probability': 0.05, 'scan_loss_probability': 0.01, 'range_min': 0.06, 'range_max': 10.0,
    'range_resolution': 0.001, 'angle_resolution': np.deg2rad(0.25), 'azimuth_jitter_stddev': 0.001,
    'mount_yaw_offset': 0.01, 'latency': 0.02, 'spurious_probability': 0.01, 'mixed_pixel_probability': 0.5,
    'incidence_dropout_probability': 0.5, 'intensity_dropout_probability': 0.3,
}


def _inputs(scans: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    angles = np.linspace(-FOV / 2, FOV / 2, BEAMS)
    ranges, incidence = room_scan(angles)
    ranges = np.tile(ranges, (scans, 1))
    incidence = np.tile(incidence, (scans, 1))
    intensities = 2.0 * np.cos(incidence) / (1.0 + 0.2 * ranges)
    stamps = np.arange(scans) / 40.0
    return angles, ranges, incidence, intensities, stamps


def _time(fn: Callable[[], None], repeats: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (process) seconds of each call; CPU time is robust to a shared machine."""
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return wall, cpu


def main() -> None:
    """Print scans/s for the batch, float32 batch and per-scan paths."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scans', type=int, default=1000)
    parser.add_argument('--repeats', type=int, default=7)
    parser.add_argument('--bag-scans', type=int, default=1000)
    args = parser.parse_args()
    config = LidarErrorConfig.from_mapping(EVERY_EFFECT, 'benchmark')
    angles, ranges, incidence, intensities, stamps = _inputs(args.scans)
    ranges32, intensities32 = ranges.astype(np.float32), intensities.astype(np.float32)

    def batch() -> None:
        apply_lidar_errors(ranges, angles, stamps, config, LidarErrorState(),
                           np.random.default_rng(1), intensities, incidence)

    def batch32() -> None:
        apply_lidar_errors(ranges32, angles, stamps, config, LidarErrorState(),
                           np.random.default_rng(1), intensities32, incidence)

    def per_scan() -> None:
        model = LidarErrorModel(config, 1)
        for k in range(args.scans):
            model.apply(ranges32[k], angles, stamps[k], intensities32[k], incidence[k])

    for warm_up in (batch, batch32, per_scan):  # compile
        warm_up()
    print(f'lidar error model, {BEAMS} beams, every effect on, batch of {args.scans} scans')
    for name, fn in (('batch float64', batch), ('batch float32', batch32),
                     ('scan by scan (LidarErrorModel.apply)', per_scan)):
        wall, cpu = _time(fn, args.repeats)
        med, best = statistics.median(wall), min(wall)
        print(f'  {name:38s} wall median {args.scans / med:7.0f} scans/s, best '
              f'{args.scans / best:7.0f}; CPU best {args.scans / min(cpu):7.0f} scans/s '
              f'({min(cpu) * 1e3:.1f} ms CPU per batch)')
    print(f'lidar apply end to end (read, model, write), {args.bag_scans} scans, harsh preset')
    bag_figures(args.bag_scans, 3)

def _bag(path: Path, scans: int, varying: bool) -> None:
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    scan_type = 'sensor_msgs/msg/LaserScan'
    header, stamp, laser = (store.types[n] for n in (
        'std_msgs/msg/Header', 'builtin_interfaces/msg/Time', scan_type))
    rng = np.random.default_rng(0)
    with Writer(path, version=8, storage_plugin=StoragePlugin.SQLITE3) as w:
        conn = w.add_connection('/scan', scan_type, typestore=store)
        for k in range(scans):
            if varying:
                beams = (224, 225, 226)[k % 3]
                inc = 2 * np.pi / beams
                amin = -np.pi + rng.uniform(0, inc)
            else:
                beams, inc, amin = BEAMS, FOV / (BEAMS - 1), -FOV / 2
            ranges, _ = room_scan(amin + inc * np.arange(beams))
            t = 10**18 + k * 25_000_000
            msg = laser(header=header(stamp=stamp(sec=t // 10**9, nanosec=t % 10**9),
                                      frame_id='laser'),
                        angle_min=amin, angle_max=amin + inc * (beams - 1), angle_increment=inc,
                        time_increment=0.0, scan_time=0.025, range_min=0.06, range_max=30.0,
                        ranges=ranges.astype(np.float32),
                        intensities=np.full(beams, 1.0, np.float32))
            w.write(conn, t, store.serialize_cdr(msg, scan_type))


def bag_figures(scans: int, repeats: int) -> None:
    """``apply_errors_to_bag`` end to end, fixed and varying geometry."""
    from rc_sim_sensors.bag_tools import apply_errors_to_bag

    config = LidarErrorConfig.from_preset('harsh')
    with tempfile.TemporaryDirectory() as tmp:
        for name, varying in (('bag, fixed 1081-beam grid', False),
                              ('bag, 224-226 beams, angle_min varies', True)):
            bag = Path(tmp) / f'in_{varying}'
            _bag(bag, scans, varying)
            outs = iter(range(repeats + 1))

            def run(bag: Path = bag, tag: bool = varying, count: Any = outs) -> None:
                apply_errors_to_bag(bag, Path(tmp) / f'out_{tag}_{next(count)}', config,
                                    topic='/scan', seed=1)

            wall, cpu = _time(run, repeats)
            print(f'  {name:38s} wall median {scans / statistics.median(wall):7.0f} scans/s, '
                  f'best {scans / min(wall):7.0f}; CPU best {scans / min(cpu):7.0f} scans/s')


if __name__ == '__main__':
    main()
