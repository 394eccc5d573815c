"""The car model in a bag: ``/tf_static`` and ``/robot_description`` as robot_state_publisher
publishes them, so RViz and Foxglove place the sensor frames and draw the car from a bag alone.

``/tf_static`` (tf2_msgs/TFMessage) holds one transform per fixed URDF joint (parent link ->
child link at the joint origin: ``base_link -> chassis_link``, ``chassis_link -> imu_link``,
``chassis_link -> laser``); ``/robot_description`` (std_msgs/String) the expanded URDF. Both are
written once at the first time stamp with latched QoS (transient local).
"""

from __future__ import annotations

import math
from typing import Any

from rc_sim_description.bags.writer import BagWriter, latched_qos

__all__ = ['car_urdf', 'fixed_joint_transforms', 'write_robot_model']


def fixed_joint_transforms(urdf: str, prefix: str = '') -> list[tuple[str, str, tuple[float, ...],
                                                                      tuple[float, ...]]]:
    """(parent, child, xyz [m], quaternion xyzw) of every fixed joint of a URDF; frame names get
    ``prefix`` + '/' (several cars in one bag)."""
    from rc_sim_description.urdf import parse_urdf

    model = parse_urdf(urdf, 'robot_description')
    out: list[tuple[str, str, tuple[float, ...], tuple[float, ...]]] = []
    for j in model.joints:
        if j.type != 'fixed':
            continue
        parent, child = (f'{prefix}/{f}' if prefix else f for f in (j.parent, j.child))
        out.append((parent, child, j.xyz, _quaternion_rpy(*j.rpy)))
    return out


def _quaternion_rpy(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """Quaternion (x, y, z, w) of URDF fixed-axis roll, pitch, yaw (R = Rz(yaw) Ry(pitch) Rx(roll),
    REP 103)."""
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)


def write_robot_model(bag: BagWriter, urdf: str, t_ns: int, *, prefix: str = '',
                      description_topic: str = '/robot_description') -> None:
    """Write ``/tf_static`` (fixed joints of ``urdf``) and the URDF on ``description_topic``."""
    from rc_sim_description.bags.typestore import base_typestore

    types = base_typestore().types
    sec, nanosec = divmod(int(t_ns), 1_000_000_000)
    stamp = types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec)
    transforms: list[Any] = []
    for parent, child, xyz, q in fixed_joint_transforms(urdf, prefix):
        transforms.append(types['geometry_msgs/msg/TransformStamped'](
            header=types['std_msgs/msg/Header'](stamp=stamp, frame_id=parent),
            child_frame_id=child,
            transform=types['geometry_msgs/msg/Transform'](
                translation=types['geometry_msgs/msg/Vector3'](x=xyz[0], y=xyz[1], z=xyz[2]),
                rotation=types['geometry_msgs/msg/Quaternion'](x=q[0], y=q[1], z=q[2], w=q[3]))))
    bag.add_topic('/tf_static', 'tf2_msgs/msg/TFMessage', qos=latched_qos())
    bag.write('/tf_static', 'tf2_msgs/msg/TFMessage', t_ns,
              types['tf2_msgs/msg/TFMessage'](transforms=transforms))
    bag.add_topic(description_topic, 'std_msgs/msg/String', qos=latched_qos())
    bag.write(description_topic, 'std_msgs/msg/String', t_ns,
              types['std_msgs/msg/String'](data=urdf))


def car_urdf(params: Any, lidar: bool = True) -> str:
    """Expanded URDF of the car with ``params`` (a VehicleParams): its values are written to a
    temporary override file that xacro reads, as ``params_file:=`` does."""
    import tempfile

    from rc_sim_description.params import dump_override
    from rc_sim_description.urdf import expand_car

    with tempfile.TemporaryDirectory(prefix='rc_sim_urdf_') as tmp:
        override = f'{tmp}/params.yaml'
        dump_override(params.leaf_values(), override)
        return expand_car(override, lidar=lidar)
