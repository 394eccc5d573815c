"""rosbag2 output of a :class:`Trace` with the ``rosbags`` library (and a reader for the tests).

``rosbags.rosbag2.Writer(path, version=8, storage_plugin=StoragePlugin.SQLITE3 | MCAP)``: format
version 8 is what ROS 2 Humble reads (Jazzy reads it too); message definitions and type hashes
come from the Humble typestore (``get_typestore(Stores.ROS2_HUMBLE)``). Every connection carries
the QoS profile ``ros2 bag record`` stores for a reliable, volatile publisher. Messages are written
in log-time order. The bag directory is written atomically (``rc_sim_description.atomic``).
"""

from __future__ import annotations

from collections.abc import Iterator
import math
from pathlib import Path
from typing import Any

import numpy as np

from .trace import TopicSeries, Trace

__all__ = ['STORAGES', 'read_bag', 'write_bag']

STORAGES = ('sqlite3', 'mcap')


def _typestore() -> Any:
    from rosbags.typesys import Stores, get_typestore
    return get_typestore(Stores.ROS2_HUMBLE)


def _qos() -> list[Any]:
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )
    infinite = QosTime(sec=9223372036, nsec=854775807)
    return [Qos(history=QosHistory.UNKNOWN, depth=0, reliability=QosReliability.RELIABLE,
                durability=QosDurability.VOLATILE, deadline=infinite, lifespan=infinite,
                liveliness=QosLiveliness.AUTOMATIC, liveliness_lease_duration=infinite,
                avoid_ros_namespace_conventions=False)]


def _ns(start_ns: int, t: float) -> int:
    return start_ns + round(t * 1e9)


class _Builder:
    """Message objects of the typestore for each supported type."""

    def __init__(self, store: Any) -> None:
        self.T = store.types

    def time(self, ns: int) -> Any:
        return self.T['builtin_interfaces/msg/Time'](sec=ns // 1_000_000_000,
                                                      nanosec=ns % 1_000_000_000)

    def header(self, ns: int, frame: str) -> Any:
        return self.T['std_msgs/msg/Header'](stamp=self.time(ns), frame_id=frame)

    def vec(self, x: float, y: float, z: float) -> Any:
        return self.T['geometry_msgs/msg/Vector3'](x=float(x), y=float(y), z=float(z))

    def quat_yaw(self, yaw: float) -> Any:
        return self.T['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=math.sin(yaw / 2),
                                                      w=math.cos(yaw / 2))

    def messages(self, s: TopicSeries, start_ns: int) -> Iterator[tuple[int, Any]]:
        """(log time [ns], message) of every sample of ``s``."""
        T, f, n = self.T, s.fields, len(s)
        stamp = s.stamp if s.stamp is not None else s.log_time
        for k in range(n):
            log_ns, st_ns = _ns(start_ns, float(s.log_time[k])), _ns(start_ns, float(stamp[k]))
            if s.msgtype in ('std_msgs/msg/Float64', 'std_msgs/msg/Float32'):
                msg = T[s.msgtype](data=float(f['data'][k]))
            elif s.msgtype == 'geometry_msgs/msg/Twist':
                msg = T[s.msgtype](linear=self.vec(f['linear_x'][k], 0, 0),
                                   angular=self.vec(0, 0, f['angular_z'][k]))
            elif s.msgtype == 'nav_msgs/msg/Odometry':
                msg = self._odometry(s, k, st_ns)
            elif s.msgtype == 'sensor_msgs/msg/Imu':
                msg = self._imu(s, k, st_ns)
            elif s.msgtype == 'sensor_msgs/msg/JointState':
                msg = T[s.msgtype](header=self.header(st_ns, ''), name=list(s.constants['name']),
                                   position=np.asarray(f['position'][k], dtype=np.float64),
                                   velocity=np.asarray(f['velocity'][k], dtype=np.float64),
                                   effort=np.zeros(0, dtype=np.float64))
            elif s.msgtype == 'tf2_msgs/msg/TFMessage':
                msg = self._tf(s, k, st_ns)
            else:
                raise ValueError(f'{s.topic}: no writer for {s.msgtype}')
            yield log_ns, msg

    def _odometry(self, s: TopicSeries, k: int, st_ns: int) -> Any:
        T, f, c = self.T, s.fields, s.constants
        pose = T['geometry_msgs/msg/Pose'](
            position=T['geometry_msgs/msg/Point'](x=float(f['x'][k]), y=float(f['y'][k]), z=0.0),
            orientation=self.quat_yaw(float(f['yaw'][k])))
        twist = T['geometry_msgs/msg/Twist'](linear=self.vec(f['vx'][k], f['vy'][k], 0.0),
                                             angular=self.vec(0.0, 0.0, f['wz'][k]))
        return T['nav_msgs/msg/Odometry'](
            header=self.header(st_ns, str(c['frame_id'])), child_frame_id=str(c['child_frame_id']),
            pose=T['geometry_msgs/msg/PoseWithCovariance'](
                pose=pose, covariance=np.asarray(c['pose_covariance'], dtype=np.float64)),
            twist=T['geometry_msgs/msg/TwistWithCovariance'](
                twist=twist, covariance=np.asarray(c['twist_covariance'], dtype=np.float64)))

    def _imu(self, s: TopicSeries, k: int, st_ns: int) -> Any:
        T, f, c = self.T, s.fields, s.constants
        no_orientation = np.zeros(9)
        no_orientation[0] = -1.0  # sensor_msgs/Imu: no orientation estimate
        gyro = (np.eye(3) * float(c['gyro_var'])).ravel()
        acc = (np.eye(3) * float(c['accel_var'])).ravel()
        return T['sensor_msgs/msg/Imu'](
            header=self.header(st_ns, str(c['frame_id'])),
            orientation=T['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0),
            orientation_covariance=no_orientation,
            angular_velocity=self.vec(0.0, 0.0, f['wz'][k]), angular_velocity_covariance=gyro,
            linear_acceleration=self.vec(f['ax'][k], f['ay'][k], f['az'][k]),
            linear_acceleration_covariance=acc)

    def _tf(self, s: TopicSeries, k: int, st_ns: int) -> Any:
        T, f, c = self.T, s.fields, s.constants
        transform = T['geometry_msgs/msg/Transform'](
            translation=self.vec(f['x'][k], f['y'][k], 0.0),
            rotation=self.quat_yaw(float(f['yaw'][k])))
        stamped = T['geometry_msgs/msg/TransformStamped'](
            header=self.header(st_ns, str(c['frame_id'])),
            child_frame_id=str(c['child_frame_id']), transform=transform)
        return T['tf2_msgs/msg/TFMessage'](transforms=[stamped])


def write_bag(trace: Trace, path: str | Path, *, storage: str = 'sqlite3',
              interface: str | None = None, force: bool = False) -> Path:
    """Write ``trace`` as a rosbag2 directory at ``path`` (format version 8, Humble types).

    ``storage``: ``sqlite3`` or ``mcap``. ``interface``, when given, must be the trace's (the
    commands are decided when the car is simulated). Returns the bag directory.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer

    from rc_sim_description.atomic import atomic_output_dir, rename_bag_storage

    if storage not in STORAGES:
        raise ValueError(f'storage {storage!r}: use one of {", ".join(STORAGES)}')
    if interface is not None and interface != trace.interface:
        raise ValueError(f'trace was simulated with interface {trace.interface!r}, not '
                         f'{interface!r}: pass interface= to car.simulate()')
    plugin = StoragePlugin.SQLITE3 if storage == 'sqlite3' else StoragePlugin.MCAP
    store = _typestore()
    builder = _Builder(store)
    out = Path(path)
    with atomic_output_dir(out, force=force) as tmp:
        writer = Writer(tmp, version=8, storage_plugin=plugin)
        writer.open()
        try:
            records: list[tuple[int, int, Any, str]] = []
            for order, s in enumerate(trace.series):
                conn = writer.add_connection(s.topic, s.msgtype, typestore=store,
                                             offered_qos_profiles=_qos())
                records.extend((ns, order, (conn, msg), s.msgtype)
                               for ns, msg in builder.messages(s, trace.start_time_ns))
            records.sort(key=lambda rec: (rec[0], rec[1]))
            for ns, _, (conn, msg), msgtype in records:
                writer.write(conn, ns, bytes(store.serialize_cdr(msg, msgtype)))
        finally:
            writer.close()
        rename_bag_storage(tmp, out.name)
    return out


def read_bag(path: str | Path) -> dict[str, dict[str, Any]]:
    """Read a bag back (rosbags' Reader): per topic its type, log times [ns] and the messages;
    ``bag['__metadata__']`` holds ``metadata.yaml`` (rosbag2_bagfile_information)."""
    from rosbags.rosbag2 import Reader
    import yaml

    store = _typestore()
    out: dict[str, dict[str, Any]] = {}
    with Reader(Path(path)) as reader:
        for conn in reader.connections:
            out[conn.topic] = {'msgtype': conn.msgtype, 'log_ns': [], 'messages': []}
        for conn, ns, raw in reader.messages():
            entry = out[conn.topic]
            entry['log_ns'].append(ns)
            entry['messages'].append(store.deserialize_cdr(raw, conn.msgtype))
    meta = yaml.safe_load((Path(path) / 'metadata.yaml').read_text(encoding='utf-8'))
    out['__metadata__'] = meta['rosbag2_bagfile_information']
    return out
