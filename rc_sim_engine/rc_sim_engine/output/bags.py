"""Engine-specific bag helpers on top of the bag layer (:mod:`rc_sim_description.bags`).

* message builders for the topic contract of docs/conventions.md (``clock_msg``, ``odometry_msg``,
  ...), built with the layer's base typestore (ROS 2 Humble + ackermann_msgs);
* :func:`write_sim_result`: every stream of a simulation into a
  :class:`~rc_sim_description.bags.BagWriter`, plus ``/tf_static`` and ``/robot_description``
  of the simulated car(s); :class:`SimBagStream` does the same chunk by chunk for a run streamed
  with bounded memory. Both serialise the fixed-layout messages in bulk with numpy
  (:mod:`rc_sim_description.bags.cdr_bulk`) and write many messages per storage call.

Reading and writing bags (``open_bag``, ``BagWriter``, ``BagError``) live in the bag layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_description.bags import cdr_bulk as cdr
from rc_sim_description.bags.cdr_bulk import RawBatch
from rc_sim_description.bags.typestore import base_typestore
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.errors import ConfigError
from rc_sim_description.frames import car_namespaces, yaw_to_quaternion

__all__ = [
    'SimBagStream',
    'clock_msg',
    'float64_msg',
    'imu_msg',
    'joint_state_msg',
    'laser_scan_msg',
    'odometry_msg',
    'path_msg',
    'sim_batches',
    'stamp',
    'tf_msg',
    'twist_msg',
    'typestore',
    'write_sim_result',
]


def typestore() -> Any:
    """The typestore messages are built with (the bag layer's base store)."""
    return base_typestore()


# --------------------------------------------------------------------------- message builders
def _t(name: str) -> Any:
    return typestore().types[name]


def stamp(t_ns: int) -> Any:
    """builtin_interfaces/Time of a time in integer nanoseconds."""
    sec, nanosec = divmod(int(t_ns), 1_000_000_000)
    return _t('builtin_interfaces/msg/Time')(sec=sec, nanosec=nanosec)


def _header(t_ns: int, frame_id: str) -> Any:
    return _t('std_msgs/msg/Header')(stamp=stamp(t_ns), frame_id=frame_id)


def _quaternion_yaw(yaw: float) -> Any:
    return _t('geometry_msgs/msg/Quaternion')(x=0.0, y=0.0, z=math.sin(0.5 * yaw),
                                             w=math.cos(0.5 * yaw))


def _vec(x: float, y: float, z: float) -> Any:
    return _t('geometry_msgs/msg/Vector3')(x=float(x), y=float(y), z=float(z))


def clock_msg(t_ns: int) -> Any:
    """rosgraph_msgs/Clock."""
    return _t('rosgraph_msgs/msg/Clock')(clock=stamp(t_ns))


def float64_msg(value: float) -> Any:
    """std_msgs/Float64."""
    return _t('std_msgs/msg/Float64')(data=float(value))


def twist_msg(linear_x: float, angular_z: float) -> Any:
    """geometry_msgs/Twist with linear.x and angular.z."""
    return _t('geometry_msgs/msg/Twist')(linear=_vec(linear_x, 0.0, 0.0),
                                        angular=_vec(0.0, 0.0, angular_z))


def odometry_msg(t_ns: int, x: float, y: float, yaw: float, vx: float, vy: float,
                 yaw_rate: float, frame_id: str = 'odom', child_frame_id: str = 'base_link',
                 pose_covariance: npt.ArrayLike | None = None,
                 twist_covariance: npt.ArrayLike | None = None) -> Any:
    """nav_msgs/Odometry: pose in ``frame_id``, twist in ``child_frame_id`` (REP 105)."""
    pose = _t('geometry_msgs/msg/Pose')(
        position=_t('geometry_msgs/msg/Point')(x=float(x), y=float(y), z=0.0),
        orientation=_quaternion_yaw(float(yaw)))
    pc = np.zeros(36) if pose_covariance is None else np.asarray(pose_covariance, np.float64)
    tc = np.zeros(36) if twist_covariance is None else np.asarray(twist_covariance, np.float64)
    return _t('nav_msgs/msg/Odometry')(
        header=_header(t_ns, frame_id), child_frame_id=child_frame_id,
        pose=_t('geometry_msgs/msg/PoseWithCovariance')(pose=pose, covariance=pc),
        twist=_t('geometry_msgs/msg/TwistWithCovariance')(
            twist=_t('geometry_msgs/msg/Twist')(linear=_vec(vx, vy, 0.0),
                                               angular=_vec(0.0, 0.0, yaw_rate)),
            covariance=tc))


def tf_msg(t_ns: int, x: float, y: float, yaw: float, frame_id: str = 'odom',
           child_frame_id: str = 'base_link') -> Any:
    """tf2_msgs/TFMessage with one planar transform."""
    transform = _t('geometry_msgs/msg/Transform')(
        translation=_vec(x, y, 0.0), rotation=_quaternion_yaw(float(yaw)))
    stamped = _t('geometry_msgs/msg/TransformStamped')(
        header=_header(t_ns, frame_id), child_frame_id=child_frame_id, transform=transform)
    return _t('tf2_msgs/msg/TFMessage')(transforms=[stamped])


def imu_msg(t_ns: int, yaw: float, yaw_rate: float, accel_x: float, accel_y: float,
            accel_z: float, frame_id: str = 'imu_link') -> Any:
    """sensor_msgs/Imu: orientation (yaw only), angular velocity, specific force [m/s^2]."""
    cov = np.zeros(9)
    return _t('sensor_msgs/msg/Imu')(
        header=_header(t_ns, frame_id), orientation=_quaternion_yaw(float(yaw)),
        orientation_covariance=cov, angular_velocity=_vec(0.0, 0.0, yaw_rate),
        angular_velocity_covariance=cov, linear_acceleration=_vec(accel_x, accel_y, accel_z),
        linear_acceleration_covariance=cov)


def joint_state_msg(t_ns: int, names: Sequence[str], position: npt.ArrayLike,
                    velocity: npt.ArrayLike) -> Any:
    """sensor_msgs/JointState (effort left empty)."""
    return _t('sensor_msgs/msg/JointState')(
        header=_header(t_ns, ''), name=list(names),
        position=np.asarray(position, dtype=np.float64),
        velocity=np.asarray(velocity, dtype=np.float64), effort=np.zeros(0))


def laser_scan_msg(t_ns: int, ranges: npt.ArrayLike, angle_min: float, angle_increment: float,
                   range_min: float, range_max: float, scan_time: float,
                   intensities: npt.ArrayLike | None = None, frame_id: str = 'laser') -> Any:
    """sensor_msgs/LaserScan (float32 ranges; +-inf per REP 117)."""
    r = np.asarray(ranges, dtype=np.float32)
    inten = np.zeros(0, np.float32) if intensities is None else np.asarray(intensities, np.float32)
    return _t('sensor_msgs/msg/LaserScan')(
        header=_header(t_ns, frame_id), angle_min=float(angle_min),
        angle_max=float(angle_min + angle_increment * (len(r) - 1)),
        angle_increment=float(angle_increment), time_increment=0.0, scan_time=float(scan_time),
        range_min=float(range_min), range_max=float(range_max), ranges=r, intensities=inten)


def path_msg(t_ns: int, x: npt.ArrayLike, y: npt.ArrayLike, yaw: npt.ArrayLike,
             frame_id: str = 'odom') -> Any:
    """nav_msgs/Path of planar poses (e.g. ``/reference_path``)."""
    poses = [_t('geometry_msgs/msg/PoseStamped')(
        header=_header(t_ns, frame_id),
        pose=_t('geometry_msgs/msg/Pose')(
            position=_t('geometry_msgs/msg/Point')(x=float(px), y=float(py), z=0.0),
            orientation=_quaternion_yaw(float(pyaw))))
        for px, py, pyaw in zip(np.ravel(x), np.ravel(y), np.ravel(yaw))]
    return _t('nav_msgs/msg/Path')(header=_header(t_ns, frame_id), poses=poses)


# --------------------------------------------------------------------------- simulation results
def _frames(namespaces: Sequence[str], i: int
            ) -> tuple[Callable[[str], str], Callable[[str], str]]:
    ns = namespaces[i]

    def top(name: str) -> str:
        return f'/{ns}/{name}' if ns else f'/{name}'

    def frame(name: str) -> str:
        return f'{ns}/{name}' if ns else name

    return top, frame


def sim_batches(streams: dict[str, Any], params: Any, namespaces: Sequence[str]) -> list[RawBatch]:
    """The messages of (a chunk of) simulation streams as bulk-serialised batches.

    Topics (docs/conventions.md) and their order at equal stamps: /clock, /cmd_vel,
    /steering_angle, /rear_wheel_speed, /odom, /tf, /imu, /joint_states, /scan_raw, /scan; with
    several cars each car's topics and frames get the prefix of its namespace. LaserScan fields
    come from the first car's vehicle.yaml. A corrupted scan is written at ``max(sample time,
    header stamp)`` (the error model's latency); lost scans are not written.
    """
    from rc_sim_engine.sim.sensors import JOINT_NAMES

    out: list[RawBatch] = []
    clock = np.asarray(streams['clock']['t_ns'], dtype=np.int64)
    out.append(RawBatch('/clock', 'rosgraph_msgs/msg/Clock', clock, cdr.clock(clock), 0))
    sens = params[0].sensors
    c, o, m, j = (streams[k] for k in ('commands', 'odom', 'imu', 'joints'))
    sc = streams['scan']
    for i in range(len(namespaces)):
        top, frame = _frames(namespaces, i)
        if len(c.get('t_ns', ())):
            t = np.asarray(c['t_ns'], dtype=np.int64)
            v, w = c['linear_x'][:, i], c['angular_z'][:, i]
            ok = np.isfinite(v) & np.isfinite(w)
            zero = np.zeros(int(ok.sum()))
            out.append(RawBatch(top('cmd_vel'), 'geometry_msgs/msg/Twist', t[ok], cdr.twist(
                np.stack([v[ok], zero, zero], axis=-1), np.stack([zero, zero, w[ok]], axis=-1)),
                1))
            acc = np.asarray(c['accepted'][:, i], dtype=bool)
            out.append(RawBatch(top('steering_angle'), 'std_msgs/msg/Float64', t[acc],
                                cdr.float64(c['steering_angle'][acc, i]), 2))
            out.append(RawBatch(top('rear_wheel_speed'), 'std_msgs/msg/Float64', t[acc],
                                cdr.float64(c['wheel_speed'][acc, i]), 3))
        t = np.asarray(o['t_ns'], dtype=np.int64)
        zero = np.zeros(len(t))
        q = yaw_to_quaternion(o['yaw'][:, i])
        xyz = np.stack([o['x'][:, i], o['y'][:, i], zero], axis=-1)
        out.append(RawBatch(top('odom'), 'nav_msgs/msg/Odometry', t, cdr.odometry(
            t, frame('odom'), frame('base_link'), xyz, q,
            np.stack([o['vx'][:, i], o['vy'][:, i], zero], axis=-1),
            np.stack([zero, zero, o['yaw_rate'][:, i]], axis=-1)), 4))
        out.append(RawBatch('/tf', 'tf2_msgs/msg/TFMessage', t, cdr.tf_message(
            t, frame('odom'), frame('base_link'), xyz, q), 5))
        t = np.asarray(m['t_ns'], dtype=np.int64)
        zero = np.zeros(len(t))
        out.append(RawBatch(top('imu'), 'sensor_msgs/msg/Imu', t, cdr.imu(
            t, frame('imu_link'), yaw_to_quaternion(m['yaw'][:, i]),
            np.stack([zero, zero, m['yaw_rate'][:, i]], axis=-1),
            np.stack([m['fx'][:, i], m['fy'][:, i], m['fz'][:, i]], axis=-1)), 6))
        t = np.asarray(j['t_ns'], dtype=np.int64)
        out.append(RawBatch(top('joint_states'), 'sensor_msgs/msg/JointState', t,
                            cdr.joint_state(t, '', JOINT_NAMES, j['position'][:, i],
                                            j['velocity'][:, i]), 7))
        if len(sc.get('t_ns', ())):
            t = np.asarray(sc['t_ns'], dtype=np.int64)
            fan = (frame('laser'), sens.lidar_angle_min,
                   sens.lidar_angle_min + sens.lidar_angle_increment
                   * (sc['ranges'].shape[-1] - 1), sens.lidar_angle_increment, 0.0,
                   1.0 / sens.lidar_update_rate, sens.lidar_range_min, sens.lidar_range_max)
            if 'raw' in sc:
                out.append(RawBatch(top('scan_raw'), 'sensor_msgs/msg/LaserScan', t,
                                    cdr.laser_scan(t, *fan, sc['raw'][:, i]), 8))
            lost = np.asarray(sc['lost'][:, i], dtype=bool)
            keep = slice(None) if not lost.any() else ~lost  # a view when nothing is lost
            stamp = np.asarray(sc['stamp_ns'][keep, i], dtype=np.int64)
            out.append(RawBatch(top('scan'), 'sensor_msgs/msg/LaserScan',
                                np.maximum(t[keep], stamp),
                                cdr.laser_scan(stamp, *fan, sc['ranges'][keep, i]), 9))
    return out


def extra_batches(extra: Iterable[tuple[str, str, int, Any]]) -> list[RawBatch]:
    """Caller messages ``(topic, msgtype, t_ns, msg)`` (typestore messages) as batches, ordered
    after the simulation's topics at equal stamps; a NaN or infinite field is a BagError naming
    the topic and time."""
    from rc_sim_description.bags import BagError
    from rc_sim_description.finite import non_finite_field

    out = []
    for order, (topic, msgtype, t_ns, msg) in enumerate(extra):
        bad = non_finite_field(msg)
        if bad is not None:  # e.g. a reference path of a degenerate trajectory
            raise BagError(f'{topic} at t = {int(t_ns) * 1e-9:.3f} s: {bad} ({msgtype}): a bag '
                           'never holds NaN or infinite values (nothing was written)')
        store = typestore()
        data = np.frombuffer(bytes(store.serialize_cdr(msg, msgtype)), dtype=np.uint8)
        out.append(RawBatch(topic, msgtype, np.array([int(t_ns)], dtype=np.int64),
                            data.reshape(1, -1), 10 + order))
    return out


class SimBagStream:
    """A simulation's streams into a :class:`BagWriter`, chunk after chunk (a
    :class:`~rc_sim_engine.sim.recorder.StreamSink`): bulk CDR, many messages per storage call.

    The first chunk also writes ``/tf_static`` and ``/robot_description`` of every car at its
    first stamp (see :func:`write_sim_result`). Messages stamped after the end of their chunk
    (scans delayed by the error model's latency) wait for the next chunk, so the bag stays in
    time order.
    """

    def __init__(self, bag: BagWriter, params: Sequence[Any], *,
                 namespaces: Sequence[str] | None = None, robot_model: bool = True,
                 lidar: bool = True, extra: Iterable[tuple[str, str, int, Any]] = ()) -> None:
        n = len(params)
        if namespaces is None:
            namespaces = car_namespaces(n)
        if len(namespaces) != n:
            raise ConfigError(f'write_sim_result: {len(namespaces)} namespaces for {n} cars')
        self.bag, self.params, self.namespaces = bag, list(params), list(namespaces)
        self.robot_model, self.lidar = robot_model, lidar
        self._extra = extra_batches(extra)
        self._carry: list[RawBatch] = []
        self._started = False

    def write_chunk(self, streams: dict[str, Any], final: bool,
                    until_ns: int | None = None) -> None:
        """Write one chunk; messages stamped after ``until_ns`` wait for the next one."""
        batches = self._carry + sim_batches(streams, self.params, self.namespaces)
        if self._extra:
            batches += self._extra
            self._extra = []
        self._carry = []
        if not final and until_ns is not None:
            now, later = [], []
            for b in batches:
                late = b.t_ns > until_ns
                if late.any():
                    later.append(RawBatch(b.topic, b.msgtype, b.t_ns[late], b.rows[late],
                                          b.order))
                    b = RawBatch(b.topic, b.msgtype, b.t_ns[~late], b.rows[~late], b.order)
                now.append(b)
            batches, self._carry = now, later
        if not self._started:
            stamps = [int(b.t_ns.min()) for b in batches if len(b)]
            if stamps and self.robot_model:
                from rc_sim_description.bags.robot import car_urdf, write_robot_model

                for i, ns in enumerate(self.namespaces):
                    topic = f'/{ns}/robot_description' if ns else '/robot_description'
                    write_robot_model(self.bag, car_urdf(self.params[i], lidar=self.lidar),
                                      min(stamps), prefix=ns, description_topic=topic)
            self._started = bool(stamps)
        self.bag.write_batches(batches)


def write_sim_result(bag: BagWriter, result: Any, *, namespaces: Sequence[str] | None = None,
                     extra: Iterable[tuple[str, str, int, Any]] = (),
                     robot_model: bool = True) -> None:
    """Write every stream of a :class:`~rc_sim_engine.sim.streams.SimResult` in time order.

    Topics (docs/conventions.md): /clock, /cmd_vel, /steering_angle, /rear_wheel_speed,
    /joint_states, /odom, /tf, /imu, /scan (+ /scan_raw with an error model). With several cars,
    car i's topics and frames get the prefix ``namespaces[i]`` (default ``car_<i>``). ``extra``
    adds caller messages ``(topic, msgtype, t_ns, msg)`` (e.g. ``/reference_path``).
    ``robot_model`` adds ``/tf_static`` (the URDF's fixed joints: base_link -> chassis_link ->
    imu_link, laser) and ``/robot_description`` (the expanded URDF) at the first stamp, per car
    (``/<ns>/robot_description``, frames prefixed ``<ns>/``). Messages are serialised in bulk
    (:mod:`rc_sim_description.bags.cdr_bulk`).
    """
    if getattr(result, 'decimated', False):
        raise ConfigError('write_sim_result: this result keeps decimated streams only (it was '
                          'streamed to a sink); stream it to the bag with SimBagStream instead')
    lidar = bool(len(result.streams['scan'].get('t_ns', ())))
    stream = SimBagStream(bag, result.params, namespaces=namespaces, robot_model=robot_model,
                          lidar=lidar, extra=extra)
    stream.write_chunk(result.streams, final=True)
