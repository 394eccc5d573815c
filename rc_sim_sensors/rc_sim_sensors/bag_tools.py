"""Offline lidar tools on any bag the bag layer reads (rosbag2 directory, .db3, .mcap, ROS 1
.bag), no ROS needed.

``apply_errors_to_bag`` copies a bag into a rosbag2 bag, running one ``sensor_msgs/msg/LaserScan``
topic through the error model and every other topic through untouched (raw CDR bytes; ROS 1
messages are converted to the ROS 2 layout); ``scan_statistics`` summarises a scan topic
(validity, REP 117 special values, a noise estimate for static scenes). Bag problems raise
:class:`~rc_sim_description.bags.BagError` with one line naming the bag and the topic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_description.atomic import check_output_path
from rc_sim_description.bags import Bag, BagError, Connection, open_bag
from rc_sim_description.bags.writer import STORAGES, BagWriter, parse_qos
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel
from rc_sim_sensors.scan_io import beam_angles, delayed_stamp, reported_limits, stamp_seconds

__all__ = ['LASER_SCAN', 'ApplyReport', 'ScanStats', 'apply_errors_to_bag', 'message_count',
           'read_scans', 'scan_statistics']

LASER_SCAN = 'sensor_msgs/msg/LaserScan'


@dataclass(frozen=True)
class ApplyReport:
    """What ``apply_errors_to_bag`` did."""

    output: Path
    storage: str
    scans_in: int
    scans_out: int
    other_messages: int


@dataclass(frozen=True)
class ScanStats:
    """Summary of one LaserScan topic (fractions are over all readings)."""

    topic: str
    scans: int
    beams: int
    rate_hz: float
    finite_fraction: float
    pos_inf_fraction: float
    neg_inf_fraction: float
    nan_fraction: float
    dropout_estimate: float
    noise_estimate: float
    range_p01: float
    range_median: float
    range_p99: float

    def lines(self) -> list[str]:
        """Human-readable report."""
        return [
            f'topic {self.topic}: {self.scans} scans x {self.beams} beams, {self.rate_hz:.2f} Hz',
            f'  finite {self.finite_fraction:.4%}   +inf {self.pos_inf_fraction:.4%}   '
            f'-inf {self.neg_inf_fraction:.4%}   nan {self.nan_fraction:.4%}',
            (f'  dropout estimate {self.dropout_estimate:.4%} (non-finite readings on beams '
             'whose median is finite)' if math.isfinite(self.dropout_estimate) else
             '  dropout estimate n/a (no beam is finite in most scans)'),
            (f'  noise estimate {self.noise_estimate * 1000:.2f} mm (1.4826 MAD of scan-to-scan '
             'differences / sqrt 2; valid for a static scene)'
             if math.isfinite(self.noise_estimate) else
             '  noise estimate n/a (needs two scans with common finite beams)'),
            (f'  range p1 {self.range_p01:.3f} m   median {self.range_median:.3f} m   '
             f'p99 {self.range_p99:.3f} m' if math.isfinite(self.range_median) else
             '  range n/a (no finite reading)'),
        ]


# --------------------------------------------------------------------------- bag access
def message_count(bag: str | os.PathLike[str], *, skip_corrupt: bool = False) -> int:
    """Number of messages in a bag (all topics)."""
    with open_bag(bag, skip_corrupt=skip_corrupt, allow_empty=True) as b:
        return b.message_count


def _scan_topic(bag: Bag, topic: str) -> Connection:
    scans = sorted(t for t, info in bag.topics.items() if info.msgtype == LASER_SCAN)
    info = bag.topics.get(topic)
    if info is None:
        have = ', '.join(scans) if scans else 'none'
        raise BagError(f'{bag.path}: no topic {topic!r} (LaserScan topics in the bag: {have})')
    if info.msgtype != LASER_SCAN:
        raise BagError(f'{bag.path}: topic {topic!r} is {info.msgtype}, not {LASER_SCAN}')
    return info.connections[0]


# --------------------------------------------------------------------------- apply
def apply_errors_to_bag(
    bag: str | os.PathLike[str], out: str | os.PathLike[str], config: LidarErrorConfig, *,
    topic: str = '/scan', seed: int | None = None, storage: str | None = None,
    force: bool = False, on_progress: Callable[[int], None] | None = None,
    skip_corrupt: bool = False,
) -> ApplyReport:
    """Copy ``bag`` to ``out`` with the error model applied to the LaserScan ``topic``.

    Other topics are copied byte for byte (ROS 1 input: converted to ROS 2 CDR). A lost scan
    (``scan_loss_probability``) is left out; the latency delays both the header stamp and the
    bag timestamp; finite ``range_min`` / ``range_max`` of the config replace the message's
    limits. The output is written atomically (rosbag2 format version 8, readable by Humble), in
    the input's storage unless ``storage`` (sqlite3 for a ROS 1 input).
    """
    bag_path, out_path = Path(bag), Path(out)
    if out_path.resolve() == bag_path.resolve():
        raise BagError(f'{out_path}: the output must differ from the input bag')
    check_output_path(out_path, force=force)
    if storage is not None and storage not in STORAGES:
        raise BagError(f'unknown storage {storage!r} (known: {", ".join(STORAGES)})')
    with open_bag(bag_path, skip_corrupt=skip_corrupt) as reader:
        _scan_topic(reader, topic)
        out_storage = storage or (reader.storage if reader.storage in STORAGES else 'sqlite3')
        model = LidarErrorModel(config, seed)
        latency_ns = round(config.latency * 1e9)
        scans_in = scans_out = others = bad = 0
        with BagWriter(out_path, storage=out_storage, force=force) as writer:
            for name, info in reader.topics.items():
                writer.add_topic(name, info.connections[0].msgtype,
                                 typestore=reader.ros2_typestore,
                                 qos=parse_qos(info.connections[0].qos))
            done = 0
            for conn, stamp_ns, raw in reader.messages():
                done += 1
                if on_progress is not None and done % 64 == 0:
                    on_progress(done)
                if conn.topic != topic:
                    writer.write_raw(conn.topic, stamp_ns, reader.to_cdr(conn, raw))
                    others += 1
                    continue
                scans_in += 1
                try:
                    msg = reader.decode(conn, raw)
                except Exception as exc:
                    if not skip_corrupt:
                        raise BagError(f'{bag_path}: {topic}: LaserScan at t={stamp_ns} ns does '
                                       f'not decode ({type(exc).__name__}; --skip-corrupt '
                                       'skips it)') from None
                    bad += 1
                    continue
                if not _corrupt_message(msg, model, config):
                    continue
                writer.write_raw(topic, stamp_ns + latency_ns, reader.message_to_cdr(conn, msg))
                scans_out += 1
            if bad:
                from rc_sim_description.bags.errors import warn

                warn(f'{bag_path}: {topic}: {bad} of {scans_in} scans do not decode; skipped')
            if on_progress is not None:
                on_progress(scans_in + others)
    return ApplyReport(out_path, out_storage, scans_in, scans_out, others)


def _corrupt_message(msg: Any, model: LidarErrorModel, config: LidarErrorConfig) -> bool:
    """Apply the model to a deserialized LaserScan in place; False when the scan is lost."""
    ranges = np.asarray(msg.ranges, dtype=np.float32)
    beams = ranges.shape[0]
    intensities = None
    if len(msg.intensities) == beams and beams:
        intensities = np.asarray(msg.intensities, dtype=np.float32)
    stamp = msg.header.stamp
    out = model.apply(ranges, beam_angles(msg.angle_min, msg.angle_increment, beams),
                      stamp_seconds(stamp.sec, stamp.nanosec), intensities)
    if out.lost:
        return False
    msg.ranges = np.ascontiguousarray(out.ranges, dtype=np.float32)
    if intensities is not None and out.intensities is not None:
        msg.intensities = np.ascontiguousarray(out.intensities, dtype=np.float32)
    stamp.sec, stamp.nanosec = delayed_stamp(stamp.sec, stamp.nanosec, config.latency)
    msg.range_min, msg.range_max = reported_limits(msg.range_min, msg.range_max, config)
    return True


# --------------------------------------------------------------------------- stats
def read_scans(bag: str | os.PathLike[str], topic: str = '/scan', *, skip_corrupt: bool = False,
               ) -> tuple[np.ndarray, np.ndarray]:
    """All ranges of a LaserScan topic as (S, B) float32 and header stamps [s] as (S,)."""
    with open_bag(bag, skip_corrupt=skip_corrupt) as reader:
        _scan_topic(reader, topic)
        got = reader.read(topic)
        path = reader.path
    if not got.messages:
        raise BagError(f'{path}: topic {topic!r} has no messages')
    rows = [np.asarray(m.ranges, dtype=np.float32) for m in got.messages]
    stamps = np.array([stamp_seconds(m.header.stamp.sec, m.header.stamp.nanosec)
                       for m in got.messages])
    if not np.all(np.isfinite(stamps)) or any(m.header.stamp.nanosec >= 1_000_000_000
                                               for m in got.messages):
        raise BagError(f'{path}: {topic}: invalid header stamps (nanosec >= 1e9)')
    beams = {r.shape[0] for r in rows}
    if len(beams) != 1:
        raise BagError(f'{path}: {topic}: beam count changes between scans '
                       f'({sorted(beams)})')
    return np.vstack(rows), stamps


def scan_statistics(bag: str | os.PathLike[str], topic: str = '/scan', *,
                    skip_corrupt: bool = False) -> ScanStats:
    """Statistics of a LaserScan topic.

    The noise estimate is sigma ~ 1.4826 MAD(r_k+1 - r_k) / sqrt(2) over beams finite in both
    scans (the difference of two independent readings has variance 2 sigma^2; MAD makes it
    robust to moving objects), so it holds for a static scene. The dropout estimate counts
    non-finite readings on beams whose median reading is finite.
    """
    ranges, stamps = read_scans(bag, topic, skip_corrupt=skip_corrupt)
    scans, beams = ranges.shape
    n = ranges.size
    finite = np.isfinite(ranges)
    rate = (scans - 1) / (stamps[-1] - stamps[0]) if scans > 1 and stamps[-1] > stamps[0] else 0.0
    # a non-finite reading counts as +inf in the median: a beam is usually valid when more than
    # half of its readings are finite (nanmedian would accept a beam finite in a single scan)
    median = np.median(np.where(finite, ranges, np.inf), axis=0)
    usually_valid = np.isfinite(median)
    dropout = float((~finite[:, usually_valid]).mean()) if usually_valid.any() else math.nan
    noise = math.nan
    if scans > 1:
        both = finite[1:] & finite[:-1]
        diff = ranges[1:][both].astype(np.float64) - ranges[:-1][both]
        if diff.size:
            mad = np.median(np.abs(diff - np.median(diff)))
            noise = float(1.4826 * mad / math.sqrt(2.0))
    values = ranges[finite]
    pct = np.percentile(values, [1, 50, 99]) if values.size else [math.nan] * 3
    return ScanStats(
        topic=topic, scans=scans, beams=beams, rate_hz=float(rate),
        finite_fraction=float(finite.mean()) if n else 0.0,
        pos_inf_fraction=float(np.isposinf(ranges).sum() / n),
        neg_inf_fraction=float(np.isneginf(ranges).sum() / n),
        nan_fraction=float(np.isnan(ranges).sum() / n), dropout_estimate=dropout,
        noise_estimate=noise, range_p01=float(pct[0]), range_median=float(pct[1]),
        range_p99=float(pct[2]))
