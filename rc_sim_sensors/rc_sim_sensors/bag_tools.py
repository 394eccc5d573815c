"""Offline lidar tools on rosbag2 bags (db3 or mcap) with the ``rosbags`` library, no ROS needed.

``apply_errors_to_bag`` copies a bag, running one ``sensor_msgs/msg/LaserScan`` topic through
the error model and every other topic through untouched (raw CDR bytes); ``scan_statistics``
summarises a scan topic (validity, REP 117 special values, a noise estimate for static scenes).
Bag problems raise
:class:`LidarBagError` with one line naming the bag and the topic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_description.atomic import atomic_output_dir, check_output_path, rename_bag_storage
from rc_sim_description.errors import RcSimError
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel
from rc_sim_sensors.scan_io import beam_angles, delayed_stamp, reported_limits, stamp_seconds

__all__ = ['LASER_SCAN', 'STORAGES', 'ApplyReport', 'LidarBagError', 'ScanStats',
           'apply_errors_to_bag', 'bag_storage', 'message_count', 'read_scans',
           'scan_statistics']

LASER_SCAN = 'sensor_msgs/msg/LaserScan'
STORAGES = ('sqlite3', 'mcap')
_ZERO_HASH = 'RIHS01_' + '0' * 64  # placeholder for types a Humble bag stores without definition


class LidarBagError(RcSimError):
    """A bag is missing, corrupted or lacks the requested LaserScan topic."""


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
            f'  noise estimate {self.noise_estimate * 1000:.2f} mm (1.4826 MAD of scan-to-scan '
            'differences / sqrt 2; valid for a static scene)',
            f'  range p1 {self.range_p01:.3f} m   median {self.range_median:.3f} m   '
            f'p99 {self.range_p99:.3f} m',
        ]


# --------------------------------------------------------------------------- bag access
def bag_storage(bag: Path) -> str:
    """Storage id of a bag directory: 'mcap' or 'sqlite3' (from the storage files present)."""
    if any(bag.glob('*.mcap')):
        return 'mcap'
    if any(bag.glob('*.db3')):
        return 'sqlite3'
    raise LidarBagError(f'{bag}: no .db3 or .mcap storage file in the bag directory')


def _check_bag(bag: Path) -> None:
    if not bag.exists():
        raise LidarBagError(f'bag {bag} not found')
    if not (bag / 'metadata.yaml').is_file():
        raise LidarBagError(f'{bag}: not a rosbag2 directory (no metadata.yaml)')


def _open_reader(bag: Path) -> Any:
    from rosbags.rosbag2 import Reader

    _check_bag(bag)
    try:
        reader = Reader(bag)
        reader.open()
    except Exception as exc:
        raise LidarBagError(f'{bag}: cannot read bag ({_one_line(exc)})') from None
    return reader


def message_count(bag: str | os.PathLike[str]) -> int:
    """Number of messages in a bag (all topics)."""
    reader = _open_reader(Path(bag))
    try:
        return int(reader.message_count)
    finally:
        reader.close()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _scan_connection(reader: Any, bag: Path, topic: str) -> Any:
    conns = [c for c in reader.connections if c.topic == topic]
    scans = sorted({c.topic for c in reader.connections if c.msgtype == LASER_SCAN})
    if not conns:
        have = ', '.join(scans) if scans else 'none'
        raise LidarBagError(f'{bag}: no topic {topic!r} (LaserScan topics in the bag: {have})')
    if conns[0].msgtype != LASER_SCAN:
        raise LidarBagError(f'{bag}: topic {topic!r} is {conns[0].msgtype}, not {LASER_SCAN}')
    return conns[0]


def _typestore() -> Any:
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_HUMBLE)


# --------------------------------------------------------------------------- apply
def apply_errors_to_bag(
    bag: str | os.PathLike[str], out: str | os.PathLike[str], config: LidarErrorConfig, *,
    topic: str = '/scan', seed: int | None = None, storage: str | None = None,
    force: bool = False, on_progress: Callable[[int], None] | None = None,
) -> ApplyReport:
    """Copy ``bag`` to ``out`` with the error model applied to the LaserScan ``topic``.

    Other topics are copied byte for byte. A lost scan (``scan_loss_probability``) is left out;
    the latency delays both the header stamp and the bag timestamp; finite ``range_min`` /
    ``range_max`` of the config replace the message's limits. The output is written atomically
    (rosbag2 format version 8, readable by Humble), in the input's storage unless ``storage``.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer

    bag_path, out_path = Path(bag), Path(out)
    _check_bag(bag_path)
    if out_path.resolve() == bag_path.resolve():
        raise LidarBagError(f'{out_path}: the output must differ from the input bag')
    check_output_path(out_path, force=force)
    if storage is not None and storage not in STORAGES:
        raise LidarBagError(f'unknown storage {storage!r} (known: {", ".join(STORAGES)})')
    reader = _open_reader(bag_path)
    try:
        scan_conn = _scan_connection(reader, bag_path, topic)
        out_storage = storage or bag_storage(bag_path)
        plugin = StoragePlugin.MCAP if out_storage == 'mcap' else StoragePlugin.SQLITE3
        store = _typestore()
        model = LidarErrorModel(config, seed)
        latency_ns = round(config.latency * 1e9)
        scans_in = scans_out = others = 0
        with atomic_output_dir(out_path, force=force) as tmp:
            try:
                writer = Writer(tmp, version=8, storage_plugin=plugin)
                writer.open()
            except Exception as exc:
                raise LidarBagError(f'{out_path}: cannot write bag ({_one_line(exc)})') from None
            try:
                mapping = {c.id: _add_connection(writer, c, store) for c in reader.connections}
                done = 0
                for conn, stamp_ns, raw in _messages(reader, bag_path):
                    done += 1
                    if on_progress is not None and done % 64 == 0:
                        on_progress(done)
                    if conn.id != scan_conn.id:
                        writer.write(mapping[conn.id], stamp_ns, raw)
                        others += 1
                        continue
                    scans_in += 1
                    msg = _deserialize(store, raw, bag_path, topic, stamp_ns)
                    if not _corrupt_message(msg, model, config):
                        continue
                    writer.write(mapping[conn.id], stamp_ns + latency_ns,
                                 store.serialize_cdr(msg, LASER_SCAN))
                    scans_out += 1
            finally:
                writer.close()
            rename_bag_storage(tmp, out_path.name)
            if on_progress is not None:
                on_progress(scans_in + others)
    finally:
        reader.close()
    return ApplyReport(out_path, out_storage, scans_in, scans_out, others)




def _add_connection(writer: Any, conn: Any, store: Any) -> Any:
    msgdef, digest = conn.msgdef.data, conn.digest
    if not msgdef or not digest:
        try:
            msgdef, _ = store.generate_msgdef(conn.msgtype, ros_version=2)
            digest = store.hash_rihs01(conn.msgtype)
        except Exception:
            digest = digest or _ZERO_HASH
    return writer.add_connection(conn.topic, conn.msgtype, msgdef=msgdef, rihs01=digest,
                                 serialization_format=conn.ext.serialization_format,
                                 offered_qos_profiles=conn.ext.offered_qos_profiles)


def _messages(reader: Any, bag: Path) -> Any:
    try:
        yield from reader.messages()
    except LidarBagError:
        raise
    except Exception as exc:
        raise LidarBagError(f'{bag}: corrupted bag ({_one_line(exc)})') from None


def _deserialize(store: Any, raw: bytes, bag: Path, topic: str, stamp_ns: int) -> Any:
    try:
        return store.deserialize_cdr(raw, LASER_SCAN)
    except Exception as exc:
        raise LidarBagError(f'{bag}: {topic}: corrupted LaserScan at t={stamp_ns} ns '
                            f'({_one_line(exc)})') from None


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
def read_scans(bag: str | os.PathLike[str], topic: str = '/scan',
               ) -> tuple[np.ndarray, np.ndarray]:
    """All ranges of a LaserScan topic as (S, B) float32 and header stamps [s] as (S,)."""
    bag_path = Path(bag)
    reader = _open_reader(bag_path)
    try:
        conn = _scan_connection(reader, bag_path, topic)
        store = _typestore()
        rows: list[np.ndarray] = []
        stamps: list[float] = []
        for _, stamp_ns, raw in _messages_of(reader, conn, bag_path):
            msg = _deserialize(store, raw, bag_path, topic, stamp_ns)
            rows.append(np.asarray(msg.ranges, dtype=np.float32))
            stamps.append(stamp_seconds(msg.header.stamp.sec, msg.header.stamp.nanosec))
    finally:
        reader.close()
    if not rows:
        raise LidarBagError(f'{bag_path}: topic {topic!r} has no messages')
    beams = {r.shape[0] for r in rows}
    if len(beams) != 1:
        raise LidarBagError(f'{bag_path}: {topic}: beam count changes between scans '
                            f'({sorted(beams)})')
    return np.vstack(rows), np.asarray(stamps)


def _messages_of(reader: Any, conn: Any, bag: Path) -> Any:
    try:
        yield from reader.messages(connections=[conn])
    except LidarBagError:
        raise
    except Exception as exc:
        raise LidarBagError(f'{bag}: corrupted bag ({_one_line(exc)})') from None


def scan_statistics(bag: str | os.PathLike[str], topic: str = '/scan') -> ScanStats:
    """Statistics of a LaserScan topic.

    The noise estimate is sigma ~ 1.4826 MAD(r_k+1 - r_k) / sqrt(2) over beams finite in both
    scans (the difference of two independent readings has variance 2 sigma^2; MAD makes it
    robust to moving objects), so it holds for a static scene. The dropout estimate counts
    non-finite readings on beams whose median reading is finite.
    """
    ranges, stamps = read_scans(bag, topic)
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
        finite_fraction=float(finite.mean()),
        pos_inf_fraction=float(np.isposinf(ranges).sum() / n),
        neg_inf_fraction=float(np.isneginf(ranges).sum() / n),
        nan_fraction=float(np.isnan(ranges).sum() / n), dropout_estimate=dropout,
        noise_estimate=noise, range_p01=float(pct[0]), range_median=float(pct[1]),
        range_p99=float(pct[2]))
