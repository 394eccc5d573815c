"""Engine-specific bag helpers on top of the bag layer (:mod:`rc_sim_description.bags`).

* message builders for the topic contract of docs/conventions.md (``clock_msg``, ``odometry_msg``,
  ...), built with the layer's base typestore (ROS 2 Humble + ackermann_msgs);
* :func:`write_sim_result`: every stream of a simulation into a
  :class:`~rc_sim_description.bags.BagWriter`, plus ``/tf_static`` and ``/robot_description``
  of the simulated car(s).

Reading and writing bags (``open_bag``, ``BagWriter``, ``BagError``) live in the bag layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_description.bags.typestore import base_typestore
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.errors import ConfigError

__all__ = [
    'clock_msg',
    'float64_msg',
    'imu_msg',
    'joint_state_msg',
    'laser_scan_msg',
    'odometry_msg',
    'path_msg',
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
def write_sim_result(bag: BagWriter, result: Any, *, namespaces: Sequence[str] | None = None,
                     extra: Iterable[tuple[str, str, int, Any]] = (),
                     robot_model: bool = True) -> None:
    """Write every stream of a :class:`~rc_sim_engine.simulator.SimResult` in time order.

    Topics (docs/conventions.md): /clock, /cmd_vel, /steering_angle, /rear_wheel_speed,
    /joint_states, /odom, /tf, /imu, /scan (+ /scan_raw with an error model). With several cars,
    car i's topics and frames get the prefix ``namespaces[i]`` (default ``car_<i>``). ``extra``
    adds caller messages ``(topic, msgtype, t_ns, msg)`` (e.g. ``/reference_path``).
    ``robot_model`` adds ``/tf_static`` (the URDF's fixed joints: base_link -> chassis_link ->
    imu_link, laser) and ``/robot_description`` (the expanded URDF) at the first stamp, per car
    (``/<ns>/robot_description``, frames prefixed ``<ns>/``).
    """
    from rc_sim_engine.sensors import JOINT_NAMES

    n = result.n_cars
    if namespaces is None:
        namespaces = [''] if n == 1 else [f'car_{i}' for i in range(n)]
    if len(namespaces) != n:
        raise ConfigError(f'write_sim_result: {len(namespaces)} namespaces for {n} cars')
    # (stamp, order within a stamp, topic, type, message factory): messages are built lazily
    items: list[tuple[int, int, str, str, Callable[[], Any]]] = []

    def add(t_ns: int, order: int, topic: str, msgtype: str, build: Callable[[], Any]) -> None:
        items.append((int(t_ns), order, topic, msgtype, build))

    s = result.streams
    for t_ns in s['clock']['t_ns']:
        add(t_ns, 0, '/clock', 'rosgraph_msgs/msg/Clock', partial(clock_msg, int(t_ns)))
    sens = result.params[0].sensors
    for i, ns in enumerate(namespaces):
        def top(name: str, ns: str = ns) -> str:
            return f'/{ns}/{name}' if ns else f'/{name}'

        def frame(name: str, ns: str = ns) -> str:
            return f'{ns}/{name}' if ns else name

        c = s['commands']
        for k, t_ns in enumerate(c['t_ns']):
            v, w = float(c['linear_x'][k, i]), float(c['angular_z'][k, i])
            if math.isfinite(v) and math.isfinite(w):
                add(t_ns, 1, top('cmd_vel'), 'geometry_msgs/msg/Twist', partial(twist_msg, v, w))
            if bool(c['accepted'][k, i]):
                add(t_ns, 2, top('steering_angle'), 'std_msgs/msg/Float64',
                    partial(float64_msg, float(c['steering_angle'][k, i])))
                add(t_ns, 3, top('rear_wheel_speed'), 'std_msgs/msg/Float64',
                    partial(float64_msg, float(c['wheel_speed'][k, i])))
        o = s['odom']
        odom_frame, base = frame('odom'), frame('base_link')
        for k, t_ns in enumerate(o['t_ns']):
            x, y, yaw, vx, vy, r = (float(o[key][k, i])
                                    for key in ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate'))
            add(t_ns, 4, top('odom'), 'nav_msgs/msg/Odometry',
                partial(odometry_msg, int(t_ns), x, y, yaw, vx, vy, r, frame_id=odom_frame,
                        child_frame_id=base))
            add(t_ns, 5, '/tf', 'tf2_msgs/msg/TFMessage',
                partial(tf_msg, int(t_ns), x, y, yaw, frame_id=odom_frame, child_frame_id=base))
        m = s['imu']
        for k, t_ns in enumerate(m['t_ns']):
            yaw, r, fx, fy, fz = (float(m[key][k, i])
                                  for key in ('yaw', 'yaw_rate', 'fx', 'fy', 'fz'))
            add(t_ns, 6, top('imu'), 'sensor_msgs/msg/Imu',
                partial(imu_msg, int(t_ns), yaw, r, fx, fy, fz, frame_id=frame('imu_link')))
        j = s['joints']
        for k, t_ns in enumerate(j['t_ns']):
            add(t_ns, 7, top('joint_states'), 'sensor_msgs/msg/JointState',
                partial(joint_state_msg, int(t_ns), JOINT_NAMES, j['position'][k, i],
                        j['velocity'][k, i]))
        sc = s['scan']
        if len(sc.get('t_ns', ())):
            fan: dict[str, Any] = {
                'angle_min': sens.lidar_angle_min, 'angle_increment': sens.lidar_angle_increment,
                'range_min': sens.lidar_range_min, 'range_max': sens.lidar_range_max,
                'scan_time': 1.0 / sens.lidar_update_rate, 'frame_id': frame('laser')}
            for k, t_ns in enumerate(sc['t_ns']):
                if 'raw' in sc:
                    add(t_ns, 8, top('scan_raw'), 'sensor_msgs/msg/LaserScan',
                        partial(laser_scan_msg, int(t_ns), sc['raw'][k, i], **fan))
                if not bool(sc['lost'][k, i]):
                    stamp_ns = int(sc['stamp_ns'][k, i])
                    add(max(int(t_ns), stamp_ns), 9, top('scan'), 'sensor_msgs/msg/LaserScan',
                        partial(laser_scan_msg, stamp_ns, sc['ranges'][k, i], **fan))
    for order, (topic, msgtype, t_ns, msg) in enumerate(extra):
        add(t_ns, 10 + order, topic, msgtype, partial(_identity, msg))
    items.sort(key=lambda it: (it[0], it[1]))
    if robot_model and items:
        from rc_sim_description.bags.robot import car_urdf, write_robot_model

        lidar = bool(len(s['scan'].get('t_ns', ())))
        for i, ns in enumerate(namespaces):
            topic = f'/{ns}/robot_description' if ns else '/robot_description'
            write_robot_model(bag, car_urdf(result.params[i], lidar=lidar), items[0][0],
                              prefix=ns, description_topic=topic)
    for t_ns, _, topic, msgtype, build in items:
        bag.write(topic, msgtype, t_ns, build())


def _identity(msg: Any) -> Any:
    return msg
