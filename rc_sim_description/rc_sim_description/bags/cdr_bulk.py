"""Bulk CDR serialisation of fixed-layout ROS 2 messages with numpy (no per-message Python).

A message whose strings and sequence lengths are the same for every sample of a topic (frame ids,
joint names, beam counts) has one byte layout: constant parts (encapsulation header, string
lengths and characters, sequence counts, padding) and numeric fields at fixed offsets. A
:class:`Layout` builds that layout once with the alignment rules of CDR as ROS 2 uses it (OMG
XCDR version 1, little endian, encapsulation ``CDR_LE`` = ``00 01 00 00``; every primitive aligned
to its size relative to the start of the payload after the 4-byte encapsulation header; the
elements of a non-empty sequence aligned after its uint32 count; no padding after the last field),
and :meth:`Layout.pack` fills K messages at once as a ``(K, size)`` uint8 array whose row k is the
serialised message k. The message functions below (``clock``, ``odometry``, ``laser_scan``, ...)
build the types the engine writes; the tests compare them byte for byte with the ``rosbags``
serializer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    'ENCAPSULATION_CDR_LE',
    'Layout',
    'RawBatch',
    'clock',
    'float64',
    'imu',
    'joint_state',
    'laser_scan',
    'odometry',
    'stamps',
    'string',
    'tf_message',
    'transforms',
    'twist',
]

ENCAPSULATION_CDR_LE = b'\x00\x01\x00\x00'
_NS = 1_000_000_000
Rows = NDArray[np.uint8]


@dataclass(frozen=True)
class RawBatch:
    """K serialised messages of one topic: stamps ``t_ns`` (K,) and ``rows`` (K, size) uint8.

    ``order`` breaks ties between topics at equal stamps (lower first).
    """

    topic: str
    msgtype: str
    t_ns: NDArray[np.int64]
    rows: Rows
    order: int = 0

    def __len__(self) -> int:
        return len(self.t_ns)


class Layout:
    """Byte layout of one fixed-size CDR message; build it field by field in declaration order."""

    def __init__(self) -> None:
        self._template = bytearray(ENCAPSULATION_CDR_LE)
        self._fields: dict[str, tuple[str, int, tuple[int, ...]]] = {}
        self._packing: tuple[int, NDArray[np.uint8], np.dtype[Any] | None] | None = None

    @property
    def size(self) -> int:
        """Bytes of one serialised message (header included)."""
        return len(self._template)

    def _align(self, n: int) -> None:
        pad = -(len(self._template) - 4) % n  # relative to the payload start
        self._template.extend(b'\x00' * pad)

    def const(self, fmt: str, value: float) -> None:
        """A numeric field with the same value in every message (``fmt`` e.g. ``'<u4'``)."""
        dtype = np.dtype(fmt)
        self._align(dtype.itemsize)
        self._template.extend(np.array(value, dtype=dtype).tobytes())

    def field(self, name: str, fmt: str, count: int | None = None) -> None:
        """A numeric field (``count``: an array of that many) filled per message by
        :meth:`pack`."""
        dtype = np.dtype(fmt)
        self._align(dtype.itemsize)
        shape = () if count is None else (count,)
        self._fields[name] = (fmt, len(self._template), shape)
        self._template.extend(b'\x00' * (dtype.itemsize * (count or 1)))

    def string(self, text: str) -> None:
        """A constant string: uint32 length (with the terminating NUL), UTF-8 bytes, NUL."""
        data = text.encode()
        self.const('<u4', len(data) + 1)
        self._template.extend(data + b'\x00')

    def sequence(self, name: str, fmt: str, count: int) -> None:
        """A sequence of ``count`` numbers (the same count in every message)."""
        self.const('<u4', count)
        if count:
            self.field(name, fmt, count)

    def strings(self, texts: Sequence[str]) -> None:
        """A constant sequence of strings."""
        self.const('<u4', len(texts))
        for text in texts:
            self.string(text)

    def time(self, name: str) -> None:
        """A builtin_interfaces/Time: int32 ``<name>_sec``, uint32 ``<name>_nanosec``."""
        self.field(f'{name}_sec', '<i4')
        self.field(f'{name}_nanosec', '<u4')

    def pack(self, n: int, **values: ArrayLike) -> Rows:
        """(n, size) uint8: n copies of the layout with the named fields set (broadcast)."""
        if self._packing is None or self._packing[0] != self.size:  # built once per layout
            dtype = np.dtype({'names': list(self._fields),
                              'formats': [(f, s) if s else f for f, _, s in
                                          self._fields.values()],
                              'offsets': [o for _, o, _ in self._fields.values()],
                              'itemsize': self.size}) if self._fields else None
            self._packing = (self.size, np.frombuffer(bytes(self._template), dtype=np.uint8),
                             dtype)
        _, template, dtype = self._packing
        rows = np.empty((n, self.size), dtype=np.uint8)
        rows[:] = template
        missing = self._fields.keys() - values.keys()
        if missing:
            raise ValueError(f'cdr layout: no values for {sorted(missing)}')
        if n == 0 or dtype is None:
            return rows
        records = rows.view(dtype).reshape(n)
        for name, value in values.items():
            records[name] = value
        return rows


def stamps(t_ns: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(sec, nanosec) of builtin_interfaces/Time for integer nanoseconds (floor division)."""
    t = np.asarray(t_ns, dtype=np.int64)
    sec, nanosec = np.divmod(t, _NS)
    return sec, nanosec


_LAYOUTS: dict[tuple[Any, ...], Layout] = {}


def _layout(key: tuple[Any, ...], build: Callable[[Layout], None]) -> Layout:
    """The layout ``build`` makes, built once per ``key`` (the message kind and every constant
    that shapes it: frame ids, names, counts); live publishing packs a few messages at a time."""
    layout = _LAYOUTS.get(key)
    if layout is None:
        if len(_LAYOUTS) >= 1024:  # bounded: keys come from a run's topics, frames and beams
            _LAYOUTS.clear()
        layout = Layout()
        build(layout)
        _LAYOUTS[key] = layout
    return layout


def _header(layout: Layout, frame_id: str) -> None:
    layout.time('stamp')
    layout.string(frame_id)


def _stamp_values(t_ns: ArrayLike) -> dict[str, NDArray[np.int64]]:
    sec, nanosec = stamps(t_ns)
    return {'stamp_sec': sec, 'stamp_nanosec': nanosec}


def _rows3(values: ArrayLike, n: int, width: int) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    return np.broadcast_to(arr, (n, width))


def clock(t_ns: ArrayLike) -> Rows:
    """rosgraph_msgs/msg/Clock."""
    layout = _layout(('clock',), lambda lay: lay.time('clock'))
    sec, nanosec = stamps(t_ns)
    return layout.pack(len(sec), clock_sec=sec, clock_nanosec=nanosec)


def float64(data: ArrayLike) -> Rows:
    """std_msgs/msg/Float64."""
    values = np.asarray(data, dtype=np.float64).reshape(-1)
    layout = _layout(('float64',), lambda lay: lay.field('data', '<f8'))
    return layout.pack(len(values), data=values)


def string(text: str) -> Rows:
    """std_msgs/msg/String (one message)."""
    layout = Layout()
    layout.string(text)
    return layout.pack(1)


def twist(linear: ArrayLike, angular: ArrayLike) -> Rows:
    """geometry_msgs/msg/Twist from (K, 3) linear and angular velocities."""
    lin = np.asarray(linear, dtype=np.float64).reshape(-1, 3)

    def build(lay: Layout) -> None:
        lay.field('linear', '<f8', 3)
        lay.field('angular', '<f8', 3)

    layout = _layout(('twist',), build)
    return layout.pack(len(lin), linear=lin, angular=_rows3(angular, len(lin), 3))


def odometry(t_ns: ArrayLike, frame_id: str, child_frame_id: str, position: ArrayLike,
             orientation: ArrayLike, linear: ArrayLike, angular: ArrayLike,
             pose_covariance: ArrayLike | None = None,
             twist_covariance: ArrayLike | None = None) -> Rows:
    """nav_msgs/msg/Odometry: position (K, 3), orientation (K, 4) xyzw, twist (K, 3) + (K, 3),
    covariances (36,) or (K, 36) (default zeros)."""
    t = np.asarray(t_ns, dtype=np.int64).reshape(-1)
    n = len(t)

    def build(lay: Layout) -> None:
        _header(lay, frame_id)
        lay.string(child_frame_id)
        lay.field('position', '<f8', 3)
        lay.field('orientation', '<f8', 4)
        lay.field('pose_covariance', '<f8', 36)
        lay.field('linear', '<f8', 3)
        lay.field('angular', '<f8', 3)
        lay.field('twist_covariance', '<f8', 36)

    layout = _layout(('odometry', frame_id, child_frame_id), build)
    zeros = np.zeros(36)
    return layout.pack(
        n, **_stamp_values(t), position=_rows3(position, n, 3),
        orientation=_rows3(orientation, n, 4), linear=_rows3(linear, n, 3),
        angular=_rows3(angular, n, 3),
        pose_covariance=_rows3(zeros if pose_covariance is None else pose_covariance, n, 36),
        twist_covariance=_rows3(zeros if twist_covariance is None else twist_covariance, n, 36))


def tf_message(t_ns: ArrayLike, frame_id: str, child_frame_id: str, translation: ArrayLike,
               rotation: ArrayLike) -> Rows:
    """tf2_msgs/msg/TFMessage with one TransformStamped: translation (K, 3), rotation (K, 4)."""
    t = np.asarray(t_ns, dtype=np.int64).reshape(-1)
    n = len(t)

    def build(lay: Layout) -> None:
        lay.const('<u4', 1)  # transforms: one element
        _header(lay, frame_id)
        lay.string(child_frame_id)
        lay.field('translation', '<f8', 3)
        lay.field('rotation', '<f8', 4)

    layout = _layout(('tf_message', frame_id, child_frame_id), build)
    return layout.pack(n, **_stamp_values(t), translation=_rows3(translation, n, 3),
                       rotation=_rows3(rotation, n, 4))


def transforms(t_ns: int, parents: Sequence[str], children: Sequence[str],
               translation: ArrayLike, rotation: ArrayLike) -> Rows:
    """One tf2_msgs/msg/TFMessage holding M transforms (e.g. ``/tf_static``): parent and child
    frames, translation (M, 3), rotation (M, 4) xyzw, all stamped ``t_ns``."""
    xyz = np.asarray(translation, dtype=np.float64).reshape(-1, 3)
    q = np.asarray(rotation, dtype=np.float64).reshape(-1, 4)
    layout = Layout()
    layout.const('<u4', len(xyz))
    values: dict[str, ArrayLike] = {}
    sec, nanosec = stamps([t_ns])
    for j, (parent, child) in enumerate(zip(parents, children)):
        layout.const('<i4', int(sec[0]))
        layout.const('<u4', int(nanosec[0]))
        layout.string(parent)
        layout.string(child)
        layout.field(f'translation_{j}', '<f8', 3)
        layout.field(f'rotation_{j}', '<f8', 4)
        values[f'translation_{j}'] = xyz[j:j + 1]
        values[f'rotation_{j}'] = q[j:j + 1]
    return layout.pack(1, **values)


def imu(t_ns: ArrayLike, frame_id: str, orientation: ArrayLike, angular_velocity: ArrayLike,
        linear_acceleration: ArrayLike, orientation_covariance: ArrayLike | None = None,
        angular_velocity_covariance: ArrayLike | None = None,
        linear_acceleration_covariance: ArrayLike | None = None) -> Rows:
    """sensor_msgs/msg/Imu: orientation (K, 4) xyzw, rates and accelerations (K, 3),
    covariances (9,) or (K, 9) (default zeros)."""
    t = np.asarray(t_ns, dtype=np.int64).reshape(-1)
    n = len(t)

    def build(lay: Layout) -> None:
        _header(lay, frame_id)
        lay.field('orientation', '<f8', 4)
        lay.field('orientation_covariance', '<f8', 9)
        lay.field('angular_velocity', '<f8', 3)
        lay.field('angular_velocity_covariance', '<f8', 9)
        lay.field('linear_acceleration', '<f8', 3)
        lay.field('linear_acceleration_covariance', '<f8', 9)

    layout = _layout(('imu', frame_id), build)
    zeros = np.zeros(9)

    def cov(value: ArrayLike | None) -> NDArray[np.float64]:
        return _rows3(zeros if value is None else value, n, 9)

    return layout.pack(
        n, **_stamp_values(t), orientation=_rows3(orientation, n, 4),
        angular_velocity=_rows3(angular_velocity, n, 3),
        linear_acceleration=_rows3(linear_acceleration, n, 3),
        orientation_covariance=cov(orientation_covariance),
        angular_velocity_covariance=cov(angular_velocity_covariance),
        linear_acceleration_covariance=cov(linear_acceleration_covariance))


def joint_state(t_ns: ArrayLike, frame_id: str, names: Sequence[str], position: ArrayLike,
                velocity: ArrayLike | None = None, effort: ArrayLike | None = None) -> Rows:
    """sensor_msgs/msg/JointState: position (K, J); velocity/effort (K, J) or None (empty)."""
    t = np.asarray(t_ns, dtype=np.int64).reshape(-1)
    n, j = len(t), len(names)

    def build(lay: Layout) -> None:
        _header(lay, frame_id)
        lay.strings(names)
        lay.sequence('position', '<f8', j)
        for name, value in (('velocity', velocity), ('effort', effort)):
            lay.sequence(name, '<f8', 0 if value is None else j)

    layout = _layout(('joint_state', frame_id, tuple(names), velocity is None, effort is None),
                     build)
    values: dict[str, ArrayLike] = {'position': _rows3(position, n, j)}
    for name, value in (('velocity', velocity), ('effort', effort)):
        if value is not None:
            values[name] = _rows3(value, n, j)
    if j == 0:
        values = {}
    return layout.pack(n, **_stamp_values(t), **values)


def laser_scan(t_ns: ArrayLike, frame_id: str, angle_min: float, angle_max: float,
               angle_increment: float, time_increment: float, scan_time: float,
               range_min: float, range_max: float, ranges: ArrayLike,
               intensities: ArrayLike | None = None) -> Rows:
    """sensor_msgs/msg/LaserScan: ranges (K, B) (float32), intensities (K, I) or None."""
    t = np.asarray(t_ns, dtype=np.int64).reshape(-1)
    if len(t) == 0:  # no scan (e.g. every one of a short chunk lost): no message, no layout
        return np.zeros((0, 0), dtype=np.uint8)
    r = np.asarray(ranges, dtype=np.float32).reshape(len(t), -1)
    values: dict[str, ArrayLike] = {'ranges': r} if r.shape[1] else {}
    n_inten = 0
    if intensities is not None:
        inten = np.asarray(intensities, dtype=np.float32).reshape(len(t), -1)
        n_inten = inten.shape[1]
        if n_inten:
            values['intensities'] = inten
    fan = (angle_min, angle_max, angle_increment, time_increment, scan_time, range_min,
           range_max)

    def build(lay: Layout) -> None:
        _header(lay, frame_id)
        for value in fan:
            lay.const('<f4', value)
        lay.sequence('ranges', '<f4', r.shape[1])
        lay.sequence('intensities', '<f4', n_inten)

    layout = _layout(('laser_scan', frame_id, *(float(v) for v in fan), r.shape[1], n_inten),
                     build)
    return layout.pack(len(t), **_stamp_values(t), **values)
