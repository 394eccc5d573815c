"""Offline lidar tools on any bag the bag layer reads (rosbag2 directory, .db3, .mcap, ROS 1
.bag), no ROS needed.

``apply_errors_to_bag`` copies a bag into a rosbag2 bag, running one ``sensor_msgs/msg/LaserScan``
topic through the error model and every other topic through untouched (raw CDR bytes; ROS 1
messages are converted to the ROS 2 layout); every scan keeps its own geometry (beam count,
angle_min, angle_increment may change from scan to scan). ``read_scan_series`` reads a scan topic
as validated :class:`~rc_sim_sensors.scan_geometry.Scan` objects; ``scan_statistics`` summarises
it (:mod:`rc_sim_sensors.scan_stats`). Bag problems and unusable scans raise
:class:`~rc_sim_description.bags.BagError` with one line naming the bag, the topic and the
message index (0-based, in reading order); ``skip_corrupt`` skips them with a warning and a count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import os
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_description.atomic import check_output_path
from rc_sim_description.bags import Bag, BagError, Connection, open_bag
from rc_sim_description.bags.errors import warn
from rc_sim_description.bags.typestore import decode_errors
from rc_sim_description.bags.writer import STORAGES, BagWriter, parse_qos
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel
from rc_sim_sensors.scan_geometry import Scan, scan_from_message
from rc_sim_sensors.scan_io import delayed_stamp, model_input, reported_limits
from rc_sim_sensors.scan_stats import ScanStats, scan_stats

__all__ = ['LASER_SCAN', 'ApplyReport', 'ScanSeries', 'ScanStats', 'apply_errors_to_bag',
           'message_count', 'read_scan_series', 'scan_statistics']

LASER_SCAN = 'sensor_msgs/msg/LaserScan'
_BATCH_SCANS = 64      # consecutive scans of one geometry run through the model together
_BATCH_MESSAGES = 4096  # messages held back at most while a batch fills


@dataclass(frozen=True)
class ApplyReport:
    """What ``apply_errors_to_bag`` did."""

    output: Path
    storage: str
    scans_in: int
    scans_out: int
    other_messages: int
    skipped: int = 0


@dataclass(frozen=True)
class ScanSeries:
    """The usable scans of one topic in log-time order; ``skipped`` unusable ones were left out
    (only with ``skip_corrupt``)."""

    path: Path
    topic: str
    scans: list[Scan]
    skipped: int


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


def _unusable(path: Path, topic: str, index: int, seconds: float, problem: str) -> BagError:
    return BagError(f'{path}: {topic}: message {index} ({seconds:.3f} s into the bag): '
                    f'{problem} (--skip-corrupt skips such scans)')


def read_scan_series(bag: str | os.PathLike[str], topic: str = '/scan', *,
                     skip_corrupt: bool = False) -> ScanSeries:
    """Every LaserScan of ``topic`` as a validated :class:`Scan` (log-time order).

    Raises:
        BagError: missing topic, no messages, or (unless ``skip_corrupt``) a message that does
            not decode or whose fields cannot be used (one line with the message index).
    """
    with open_bag(bag, skip_corrupt=skip_corrupt) as reader:
        _scan_topic(reader, topic)
        got = reader.read(topic)
        path = reader.path
        start = reader.start_ns or 0
    if not got.messages:
        raise BagError(f'{path}: topic {topic!r} has no messages')
    scans: list[Scan] = []
    skipped, first = 0, ''
    for index, (t_ns, msg) in enumerate(zip(got.t_ns.tolist(), got.messages)):
        scan = scan_from_message(msg)
        if isinstance(scan, str):
            if not skip_corrupt:
                raise _unusable(path, topic, index, (t_ns - start) * 1e-9, scan)
            skipped += 1
            first = first or f'message {index}: {scan}'
            continue
        scans.append(scan)
    if skipped:
        warn(f'{path}: {topic}: {skipped} of {len(got.messages)} scans skipped ({first})')
    if not scans:
        raise BagError(f'{path}: {topic}: no usable scan')
    return ScanSeries(Path(path), topic, scans, skipped)


def scan_statistics(bag: str | os.PathLike[str], topic: str = '/scan', *,
                    skip_corrupt: bool = False) -> ScanStats:
    """:func:`~rc_sim_sensors.scan_stats.scan_stats` of a bag's LaserScan topic."""
    series = read_scan_series(bag, topic, skip_corrupt=skip_corrupt)
    return scan_stats(series.scans, topic, skipped=series.skipped)


# --------------------------------------------------------------------------- apply
class _Batcher:
    """Holds consecutive scans of one geometry (and the other messages between them) and runs
    them through the model as one batch, bit-identical to scan-by-scan calls; writes every
    message in its original order."""

    def __init__(self, writer: BagWriter, reader: Bag, model: LidarErrorModel, topic: str,
                 latency_ns: int) -> None:
        self.writer, self.reader, self.model = writer, reader, model
        self.topic, self.latency_ns = topic, latency_ns
        self.items: list[tuple[str, int, Any, Connection | None, Scan | None]] = []
        self.key: tuple[Any, ...] | None = None
        self.scans = 0
        self.scans_out = 0

    def other(self, topic: str, stamp_ns: int, cdr: Any) -> None:
        self.items.append((topic, stamp_ns, cdr, None, None))
        if len(self.items) >= _BATCH_MESSAGES:
            self.flush()

    def scan(self, conn: Connection, stamp_ns: int, msg: Any, scan: Scan) -> None:
        key = (*scan.geometry, scan.intensities is not None)
        if key != self.key:
            self.flush()
            self.key = key
        self.items.append((self.topic, stamp_ns, msg, conn, scan))
        self.scans += 1
        if self.scans >= _BATCH_SCANS:
            self.flush()

    def flush(self) -> None:
        config = self.model.config
        batch = [(item[2], item[4]) for item in self.items if item[4] is not None]
        lost: list[bool] = []
        if batch:
            inputs = [model_input(scan, config) for _, scan in batch]
            first = batch[0][1]
            intensities = None
            if first.intensities is not None:
                intensities = np.stack([s.intensities for _, s in batch if s.intensities
                                        is not None])
            incidence = None if inputs[0][1] is None else np.stack(
                [inc for _, inc in inputs if inc is not None])
            out = self.model.apply(np.stack([r for r, _ in inputs]), first.angles,
                                   np.array([s.stamp for _, s in batch]), intensities,
                                   incidence)
            lost_flags = np.atleast_1d(out.lost)
            for k, (msg, _) in enumerate(batch):
                lost.append(bool(lost_flags[k]))
                msg.ranges = np.ascontiguousarray(out.ranges[k], dtype=np.float32)
                if out.intensities is not None:
                    msg.intensities = np.ascontiguousarray(out.intensities[k],
                                                           dtype=np.float32)
                stamp = msg.header.stamp
                stamp.sec, stamp.nanosec = delayed_stamp(stamp.sec, stamp.nanosec,
                                                         config.latency)
                msg.range_min, msg.range_max = reported_limits(msg.range_min, msg.range_max,
                                                               config)
        k = 0
        for topic, stamp_ns, payload, conn, scan in self.items:
            if scan is None:
                self.writer.write_raw(topic, stamp_ns, payload)
                continue
            if not lost[k]:
                assert conn is not None
                self.writer.write_raw(topic, stamp_ns + self.latency_ns,
                                      self.reader.message_to_cdr(conn, payload))
                self.scans_out += 1
            k += 1
        self.items, self.key, self.scans = [], None, 0


def apply_errors_to_bag(
    bag: str | os.PathLike[str], out: str | os.PathLike[str], config: LidarErrorConfig, *,
    topic: str = '/scan', seed: int | None = None, storage: str | None = None,
    force: bool = False, on_progress: Callable[[int], None] | None = None,
    skip_corrupt: bool = False,
) -> ApplyReport:
    """Copy ``bag`` to ``out`` with the error model applied to the LaserScan ``topic``.

    Other topics are copied byte for byte (ROS 1 input: converted to ROS 2 CDR). Every scan keeps
    its geometry; consecutive scans of one geometry run through the model as a batch (same
    result as one by one). Readings the input marks invalid (0, below its range_min, above its
    range_max) enter the model as "no return" (:func:`~rc_sim_sensors.scan_io.model_input`). A
    lost scan (``scan_loss_probability``) is left out; the latency delays both the header stamp
    and the bag timestamp; finite ``range_min`` / ``range_max`` of the config replace the
    message's limits. The output is written atomically (rosbag2 format version 8, readable by
    Humble), in the input's storage unless ``storage`` (sqlite3 for a ROS 1 input).
    """
    bag_path, out_path = Path(bag), Path(out)
    # never over (or around, or inside) the input bag, with or without --force
    check_output_path(out_path, force=force, kind='bag', inputs={'--bag': bag_path})
    if storage is not None and storage not in STORAGES:
        raise BagError(f'unknown storage {storage!r} (known: {", ".join(STORAGES)})')
    with open_bag(bag_path, skip_corrupt=skip_corrupt) as reader:
        _scan_topic(reader, topic)
        out_storage = storage or (reader.storage if reader.storage in STORAGES else 'sqlite3')
        model = LidarErrorModel(config, seed)
        start = reader.start_ns or 0
        scans_in = others = bad = 0
        first_problem = ''
        with BagWriter(out_path, storage=out_storage, force=force, finite=True) as writer:
            for name, info in reader.topics.items():
                writer.add_topic(name, info.connections[0].msgtype,
                                 typestore=reader.ros2_typestore,
                                 qos=parse_qos(info.connections[0].qos))
            batcher = _Batcher(writer, reader, model, topic, round(config.latency * 1e9))
            done = 0
            undecodable: tuple[type[BaseException], ...] = (BagError, *decode_errors())
            for conn, stamp_ns, raw in reader.messages():
                done += 1
                if on_progress is not None and done % 64 == 0:
                    on_progress(done)
                if conn.topic != topic:
                    batcher.other(conn.topic, stamp_ns, reader.to_cdr(conn, raw))
                    others += 1
                    continue
                index = scans_in
                scans_in += 1
                try:
                    msg = reader.decode(conn, raw)
                except undecodable as exc:
                    problem = f'does not decode as LaserScan ({type(exc).__name__})'
                else:
                    scan = scan_from_message(msg)
                    if not isinstance(scan, str):
                        batcher.scan(conn, stamp_ns, msg, scan)
                        continue
                    problem = scan
                if not skip_corrupt:
                    raise _unusable(bag_path, topic, index, (stamp_ns - start) * 1e-9, problem)
                bad += 1
                first_problem = first_problem or f'message {index}: {problem}'
            batcher.flush()
            if bad:
                warn(f'{bag_path}: {topic}: {bad} of {scans_in} scans skipped ({first_problem})')
            if on_progress is not None:
                on_progress(scans_in + others)
    return ApplyReport(out_path, out_storage, scans_in, batcher.scans_out, others, bad)
