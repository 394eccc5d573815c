"""Recording descriptions (``--recording R.yaml``): what each topic of a real recording means.

A description maps roles to topics (docs/recordings.md)::

    steering: {topic: /steering_1, kind: normalised}   # angle [rad] | normalised ([-1, 1])
    drive:    {topic: /throttle_1, kind: throttle}     # speed | wheel_speed | throttle |
                                                       # acceleration [m/s^2] | force [N]
    command:  {topic: /drive}                          # ackermann_msgs AckermannDrive[Stamped]
    cmd_vel:  {topic: /cmd_vel}                        # geometry_msgs/Twist[Stamped]
    pose:     {topic: /vicon/jetracer1, offset: [0.115, -0.01, -0.00769]}  # or {tf: child_frame}
    enable:   {topic: /safety_value}                   # deadman: commands act while non-zero
    odom:     {topic: /odom}                           # nav_msgs/Odometry (pose + twist)
    imu:      {topic: /imu}                            # sensor_msgs/Imu (yaw rate)
    wheel_speed: {topic: /arduino_data_1, index: 3, kind: speed}  # measured; speed | wheel_speed
    joint_states: {topic: /joint_states}               # measured rear wheel joint speeds
    scan:     {topic: /scan}                           # sensor_msgs/LaserScan

Scalars are std_msgs Float32/Float64 (``data``) or Float32/Float64MultiArray (``data[index]``).
:func:`load_recording` validates the structure (one-line :class:`ConfigError`);
:func:`check_recording` checks it against a bag's topics and types; :func:`extract` reads the
time series of every role (see :class:`Channel` for the clock each uses).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import math
import os
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_description.errors import ConfigError
from rc_sim_description.frames import quaternion_to_yaw

__all__ = ['KINDS', 'ROLE_KEYS', 'ROLE_TYPES', 'Channel', 'Recording', 'Role', 'base_link_pose',
           'check_recording',
           'extract', 'load_recording', 'recording_from_mapping', 'recording_yaml']

FloatArray = npt.NDArray[np.float64]

_FLOATS = ('std_msgs/msg/Float32', 'std_msgs/msg/Float64')
_ARRAYS = ('std_msgs/msg/Float32MultiArray', 'std_msgs/msg/Float64MultiArray')
_POSES = ('nav_msgs/msg/Odometry', 'geometry_msgs/msg/PoseStamped',
          'geometry_msgs/msg/PoseWithCovarianceStamped')
_TF = ('tf2_msgs/msg/TFMessage', 'tf/msg/tfMessage')

#: role -> accepted message types (ROS 1 names normalised to pkg/msg/Type)
ROLE_TYPES: dict[str, tuple[str, ...]] = {
    'steering': _FLOATS + _ARRAYS,
    'drive': _FLOATS + _ARRAYS,
    'enable': _FLOATS + _ARRAYS,
    'wheel_speed': _FLOATS + _ARRAYS,
    'command': ('ackermann_msgs/msg/AckermannDriveStamped', 'ackermann_msgs/msg/AckermannDrive'),
    'cmd_vel': ('geometry_msgs/msg/Twist', 'geometry_msgs/msg/TwistStamped'),
    'pose': _POSES + _TF,
    'odom': ('nav_msgs/msg/Odometry',),
    'imu': ('sensor_msgs/msg/Imu',),
    'joint_states': ('sensor_msgs/msg/JointState',),
    'scan': ('sensor_msgs/msg/LaserScan',),
}
#: role -> allowed kinds (first = default)
KINDS: dict[str, tuple[str, ...]] = {
    'steering': ('angle', 'normalised'),
    'drive': ('speed', 'wheel_speed', 'throttle', 'acceleration', 'force'),
    'wheel_speed': ('speed', 'wheel_speed'),
}
#: role -> allowed keys
ROLE_KEYS: dict[str, tuple[str, ...]] = {
    role: ('topic', 'index', 'kind', 'note') if role in ('steering', 'drive', 'wheel_speed',
                                                         'enable') else ('topic', 'note')
    for role in ROLE_TYPES}
ROLE_KEYS['pose'] = ('topic', 'tf', 'frame', 'offset', 'note')
REAR_WHEEL_JOINTS = ('rear_left_wheel_joint', 'rear_right_wheel_joint')
_CLOCK_MISMATCH_NS = 1_000_000_000  # header stamps this far from log times are another clock


@dataclass(frozen=True)
class Role:
    """One role: its topic (or TF child frame for ``pose``), kind, array index and offset;
    ``offset_declared``: the description gives the offset (a declared ``[0, 0, 0]`` is a value:
    the pose is base_link's, not of an unknown frame)."""

    name: str
    topic: str
    kind: str = ''
    index: int | None = None
    tf_child: str = ''
    tf_parent: str = ''
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    offset_declared: bool = False


@dataclass(frozen=True)
class Recording:
    """A validated recording description (role name -> :class:`Role`)."""

    roles: dict[str, Role]
    source: str = '<recording>'

    def topics(self) -> dict[str, str]:
        """role -> topic."""
        return {name: r.topic for name, r in self.roles.items()}


@dataclass(frozen=True)
class Channel:
    """Time series of one role. ``t_ns`` is the header stamp when the message has one on the
    bag's clock, else the bag's log (receive) time; ``clock`` says which ('header'/'log')."""

    role: str
    topic: str
    msgtype: str
    clock: str
    t_ns: npt.NDArray[np.int64]
    values: dict[str, FloatArray] = field(default_factory=dict)


# --------------------------------------------------------------------------- loading
def _did_you_mean(key: str, candidates: Iterable[str]) -> str:
    from rc_sim_description.yamlio import did_you_mean

    return did_you_mean(key, candidates)


def _finite(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(float(value)):
        raise ConfigError(f'{where}: must be a finite number, got {value!r}')
    return float(value)


def _role(name: str, body: Any, source: str) -> Role:
    where = f'{source}: {name}'
    if isinstance(body, str):
        body = {'topic': body}
    if not isinstance(body, Mapping):
        raise ConfigError(f'{where}: expected a mapping such as {{topic: /name}}')
    for key in body:
        if key not in ROLE_KEYS[name]:
            hint = _did_you_mean(str(key), ROLE_KEYS[name])
            raise ConfigError(f'{where}: unknown key {key!r}{hint}'
                              f' (keys: {", ".join(ROLE_KEYS[name])})')
    topic = body.get('topic', '')
    tf_child = body.get('tf', '')
    if name == 'pose' and tf_child:
        if not isinstance(tf_child, str):
            raise ConfigError(f'{where}.tf: must be a frame name')
        topic = topic or '/tf'
    if not isinstance(topic, str) or not topic.strip():
        raise ConfigError(f'{where}: needs a topic (e.g. {{topic: /name}})')
    kind = body.get('kind', KINDS[name][0] if name in KINDS else '')
    if name in KINDS and kind not in KINDS[name]:
        hint = _did_you_mean(str(kind), KINDS[name])
        raise ConfigError(f'{where}.kind: unknown kind {kind!r}{hint}'
                          f' (kinds: {", ".join(KINDS[name])})')
    index = body.get('index')
    if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
        raise ConfigError(f'{where}.index: must be an integer >= 0, got {index!r}')
    offset = body.get('offset', (0.0, 0.0, 0.0))
    if not isinstance(offset, (list, tuple)) or len(offset) != 3:
        raise ConfigError(f'{where}.offset: must be [x, y, yaw] (m, m, rad) of the measured frame '
                          'in base_link')
    x, y, yaw = (_finite(v, f'{where}.offset') for v in offset)
    parent = body.get('frame', '')
    return Role(name=name, topic=topic.strip(), kind=str(kind), index=index,
                tf_child=str(tf_child).strip('/'), tf_parent=str(parent).strip('/'),
                offset=(x, y, yaw), offset_declared='offset' in body)


def recording_from_mapping(data: Any, source: str = '<recording>') -> Recording:
    """Validate a parsed description (role -> body); one-line ConfigError naming the culprit."""
    if not isinstance(data, Mapping) or not data:
        raise ConfigError(f'{source}: a recording description maps roles to topics (e.g. '
                          'pose: {topic: /odom})')
    roles = {}
    for name, body in data.items():
        if name not in ROLE_TYPES:
            hint = _did_you_mean(str(name), ROLE_TYPES)
            raise ConfigError(f'{source}: unknown role {name!r}{hint}'
                              f' (roles: {", ".join(ROLE_TYPES)})')
        roles[str(name)] = _role(str(name), body, source)
    if ('steering' in roles) != ('drive' in roles):
        missing = 'drive' if 'steering' in roles else 'steering'
        raise ConfigError(f'{source}: steering and drive go together ({missing} is missing)')
    return Recording(roles=roles, source=source)


def load_recording(path: str | os.PathLike[str]) -> Recording:
    """Read and validate a recording description YAML file."""
    from rc_sim_description.yamlio import read_yaml

    return recording_from_mapping(read_yaml(path, ConfigError, 'recording '),
                                  f'recording {path}')


def recording_yaml(recording: Recording, comments: Mapping[str, str] | None = None) -> str:
    """The description as YAML text (one flow mapping per role, optional trailing comments)."""
    lines = []
    for name, r in recording.roles.items():
        body: dict[str, Any] = {'tf': r.tf_child} if r.tf_child else {'topic': r.topic}
        if r.tf_child and r.topic != '/tf':
            body['topic'] = r.topic
        if r.kind and name in KINDS:
            body['kind'] = r.kind
        if r.index is not None:
            body['index'] = r.index
        if any(r.offset) or r.offset_declared:  # a declared zero is a value
            body['offset'] = list(r.offset)
        text = ', '.join(f'{k}: {v}' for k, v in body.items())
        note = (comments or {}).get(name, '')
        lines.append(f'{name}: {{{text}}}' + (f'  # {note}' if note else ''))
    return '\n'.join(lines) + '\n'


def base_link_pose(x: FloatArray, y: FloatArray, yaw: FloatArray,
                   offset: tuple[float, float, float]
                   ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """base_link pose from the pose of a frame mounted at ``offset`` = (ox, oy, oyaw) in
    base_link: yaw_b = yaw - oyaw, p_b = p - R(yaw_b) (ox, oy) (planar rigid transform)."""
    ox, oy, oyaw = offset
    yaw_b = yaw - oyaw
    c, s = np.cos(yaw_b), np.sin(yaw_b)
    return x - (c * ox - s * oy), y - (s * ox + c * oy), yaw_b


# --------------------------------------------------------------------------- against a bag
def check_recording(recording: Recording, bag: Any) -> None:
    """Every topic of the description exists in ``bag`` with a type its role accepts."""
    from rc_sim_description.bags import BagError

    for name, role in recording.roles.items():
        info = bag.topics.get(role.topic)
        if info is None:
            listed = ', '.join(bag.topics) or 'none'
            raise BagError(f'{recording.source}: {name}: topic {role.topic} not in bag '
                           f'{bag.path} (it has: {listed})')
        if info.msgtype not in ROLE_TYPES[name]:
            raise BagError(f'{recording.source}: {name}: topic {role.topic} has type '
                           f'{info.msgtype}, expected {" or ".join(ROLE_TYPES[name])}')
        if role.index is not None and info.msgtype not in _ARRAYS:
            raise BagError(f'{recording.source}: {name}: index given but {role.topic} is '
                           f'{info.msgtype}, not a MultiArray')
        if role.index is None and info.msgtype in _ARRAYS:
            raise BagError(f'{recording.source}: {name}: {role.topic} is {info.msgtype}; give '
                           'the element with index: N')


def _yaw(q: Any) -> float:
    """Yaw of a quaternion message (:func:`rc_sim_description.frames.quaternion_to_yaw`)."""
    return float(quaternion_to_yaw(q.x, q.y, q.z, q.w))


def _stamp_ns(header: Any) -> int:
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


def _scalar(msg: Any, role: Role) -> float:
    if role.index is None:
        return float(msg.data)
    data = msg.data
    return float(data[role.index]) if role.index < len(data) else math.nan


def _rows(role: Role, msgtype: str, msg: Any) -> list[tuple[Any, tuple[float, ...]]]:
    """(header or None, values) of one message; several rows for a TF message."""
    name = role.name
    if name in ('steering', 'drive', 'enable', 'wheel_speed'):
        return [(None, (_scalar(msg, role),))]
    if name == 'command':
        drive = getattr(msg, 'drive', msg)
        return [(getattr(msg, 'header', None), (float(drive.steering_angle), float(drive.speed)))]
    if name == 'cmd_vel':
        twist = getattr(msg, 'twist', msg)
        return [(getattr(msg, 'header', None), (float(twist.linear.x), float(twist.angular.z)))]
    if name == 'imu':
        return [(msg.header, (float(msg.angular_velocity.z),))]
    if name == 'joint_states':
        names, vel = list(msg.name), list(msg.velocity)
        out = tuple(float(vel[names.index(j)]) if j in names and names.index(j) < len(vel)
                    else math.nan for j in REAR_WHEEL_JOINTS)
        return [(msg.header, out)]
    if msgtype in _TF:
        rows: list[tuple[Any, tuple[float, ...]]] = []
        for tr in msg.transforms:
            if tr.child_frame_id.strip('/') != role.tf_child:
                continue
            if role.tf_parent and tr.header.frame_id.strip('/') != role.tf_parent:
                continue
            p, q = tr.transform.translation, tr.transform.rotation
            rows.append((tr.header, (float(p.x), float(p.y), _yaw(q), math.nan, math.nan,
                                     math.nan)))
        return rows
    pose = msg.pose.pose if hasattr(msg.pose, 'pose') else msg.pose
    p = pose.position
    twist = (float(msg.twist.twist.linear.x), float(msg.twist.twist.linear.y),
             float(msg.twist.twist.angular.z)) if msgtype.endswith('Odometry') else \
        (math.nan, math.nan, math.nan)
    return [(msg.header, (float(p.x), float(p.y), _yaw(pose.orientation), *twist))]


_FIELDS: dict[str, tuple[str, ...]] = {
    'steering': ('value',), 'drive': ('value',), 'enable': ('value',), 'wheel_speed': ('value',),
    'command': ('steering_angle', 'speed'), 'cmd_vel': ('linear_x', 'angular_z'),
    'imu': ('yaw_rate',), 'joint_states': ('rear_left', 'rear_right'),
    'pose': ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate'),
    'odom': ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate'),
}


def extract(recording: Recording, bag: Any, roles: Iterable[str] | None = None
            ) -> dict[str, Channel]:
    """Time series of ``roles`` (default: every role but ``scan``) from an open bag.

    Header stamps are used when the message has a header and its stamps are non-zero and on the
    bag's clock (median |stamp - log time| < 1 s); otherwise the log time. Stamps with
    nanosec >= 1e9 are corrupt (BagError naming the topic and count; dropped with a warning under
    ``skip_corrupt``).
    """
    from rc_sim_description.bags import BagError
    from rc_sim_description.bags.errors import warn

    check_recording(recording, bag)
    wanted = [r for r in (roles or recording.roles) if r != 'scan' and r in recording.roles]
    out: dict[str, Channel] = {}
    for name in wanted:
        role = recording.roles[name]
        got = bag.read(role.topic)
        log: list[int] = []
        stamps: list[int] = []
        values: list[tuple[float, ...]] = []
        bad = 0
        for t_log, msg in zip(got.t_ns.tolist(), got.messages):
            for header, row in _rows(role, got.msgtype, msg):
                stamp = 0
                if header is not None:
                    if header.stamp.nanosec >= 1_000_000_000 or header.stamp.sec < 0:
                        bad += 1
                        continue
                    stamp = _stamp_ns(header)
                log.append(int(t_log))
                stamps.append(stamp)
                values.append(row)
        if bad:
            message = f'{bag.path}: {role.topic}: {bad} messages have invalid header stamps'
            if not bag.skip_corrupt:
                raise BagError(message + ' (--skip-corrupt drops them)')
            warn(message + '; dropped')
        if role.tf_child and not values:
            raise BagError(f'{bag.path}: {role.topic} has no transform to child frame '
                           f'{role.tf_child!r}')
        t_log = np.asarray(log, dtype=np.int64)
        t_stamp = np.asarray(stamps, dtype=np.int64)
        use_stamp = bool(t_stamp.size and np.all(t_stamp > 0) and
                         np.median(np.abs(t_stamp - t_log)) < _CLOCK_MISMATCH_NS)
        t = t_stamp if use_stamp else t_log
        order = np.argsort(t, kind='stable')
        table = np.asarray(values, dtype=np.float64).reshape(len(values), len(_FIELDS[name]))
        out[name] = Channel(role=name, topic=role.topic, msgtype=got.msgtype,
                            clock='header' if use_stamp else 'log', t_ns=t[order],
                            values={f: table[order, i] for i, f in enumerate(_FIELDS[name])})
    return out
