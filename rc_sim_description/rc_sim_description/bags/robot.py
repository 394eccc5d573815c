"""The car model in a bag: ``/tf_static`` and ``/robot_description`` as robot_state_publisher
publishes them, so RViz and Foxglove place the sensor frames and draw the car from a bag alone.

``/tf_static`` (tf2_msgs/TFMessage) holds one transform per fixed URDF joint (parent link ->
child link at the joint origin: ``base_link -> chassis_link``, ``chassis_link -> imu_link``,
``chassis_link -> laser``); ``/robot_description`` (std_msgs/String) the expanded URDF. Both are
written once at the first time stamp with latched QoS (transient local).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
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
    """Write ``/tf_static`` (fixed joints of ``urdf``) and the URDF on ``description_topic``
    (serialised by :mod:`rc_sim_description.bags.cdr_bulk`)."""
    from rc_sim_description.bags import cdr_bulk

    joints = fixed_joint_transforms(urdf, prefix)
    tf_static = cdr_bulk.transforms(t_ns, [j[0] for j in joints], [j[1] for j in joints],
                                    [j[2] for j in joints], [j[3] for j in joints])
    bag.add_topic('/tf_static', 'tf2_msgs/msg/TFMessage', qos=latched_qos())
    bag.write_raw('/tf_static', t_ns, tf_static[0].tobytes())
    bag.add_topic(description_topic, 'std_msgs/msg/String', qos=latched_qos())
    bag.write_raw(description_topic, t_ns, cdr_bulk.string(urdf)[0].tobytes())


def car_urdf(params: Any, lidar: bool = True) -> str:
    """Expanded URDF of the car with ``params`` (a VehicleParams): its values are written to a
    temporary override file that xacro reads, as ``params_file:=`` does.

    The expansion (xacro, a few tenths of a second) is cached on disk under the SHA-256 of its
    inputs (the override values, the ``lidar`` flag, the xacro files and vehicle.yaml, the xacro
    version): ``$RC_SIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/rc_sim`` or ``~/.cache/rc_sim``; an
    unwritable cache is simply not used.
    """
    import tempfile

    from rc_sim_description.params import dump_override
    from rc_sim_description.urdf import expand_car

    with tempfile.TemporaryDirectory(prefix='rc_sim_urdf_') as tmp:
        override = f'{tmp}/params.yaml'
        dump_override(params.leaf_values(), override)
        key = _urdf_key(Path(override).read_bytes(), lidar)
        cached = _cache_file(key)
        if cached is not None and cached.is_file():
            try:
                return cached.read_text(encoding='utf-8')
            except OSError:
                pass
        urdf = expand_car(override, lidar=lidar)
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp_file = cached.with_name(f'.{cached.name}.{os.getpid()}.tmp')
            tmp_file.write_text(urdf, encoding='utf-8')
            tmp_file.replace(cached)
        except OSError:
            pass
    return urdf


def _urdf_key(override: bytes, lidar: bool) -> str:
    """SHA-256 of everything an expansion of the car reads."""
    import hashlib
    from importlib.metadata import PackageNotFoundError, version

    from rc_sim_description.urdf import car_xacro, vehicle_yaml_of

    source = car_xacro()
    h = hashlib.sha256(override + b'\0' + (b'lidar' if lidar else b'no-lidar'))
    for path in [*sorted(source.parent.glob('*.xacro')), vehicle_yaml_of(source)]:
        h.update(path.name.encode() + b'\0' + path.read_bytes() + b'\0')
    try:
        h.update(version('xacro').encode())
    except PackageNotFoundError:
        h.update(b'xacro')
    return h.hexdigest()


def _cache_file(key: str) -> Path | None:
    root = os.environ.get('RC_SIM_CACHE_DIR')
    if not root:
        base = os.environ.get('XDG_CACHE_HOME') or str(Path.home() / '.cache')
        root = str(Path(base) / 'rc_sim')
    return Path(root) / 'urdf' / f'{key}.urdf'
