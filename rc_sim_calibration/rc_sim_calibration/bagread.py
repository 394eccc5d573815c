"""Read the roles of a bag for the calibrator: a recording description (or the default topic
names with ``--topic ROLE=/NAME``) -> per-role time series, plus what the bag says about where
the measured pose sits on the car (the Odometry ``child_frame_id`` and ``/tf_static``).

Times are seconds since the bag's first message; per message the header stamp when it is on the
bag's clock, else the log (receive) time (:func:`rc_sim_description.recording.extract`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
import math
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_calibration.errors import CalibrationError
from rc_sim_description.cli_support import split_key_value

__all__ = [
    'DEFAULT_TOPICS',
    'RawBag',
    'StaticTransform',
    'default_recording',
    'missing_topic_error',
    'parse_topic_overrides',
    'read_bag',
]

Array = np.ndarray

#: Role -> default topic (docs/conventions.md); ``--topic role=/name`` overrides one.
DEFAULT_TOPICS: dict[str, str] = {
    'steering': '/steering_angle',
    'wheel_speed': '/rear_wheel_speed',
    'cmd_vel': '/cmd_vel',
    'ackermann': '/ackermann_cmd',
    'odom': '/odom',
    'imu': '/imu',
    'joint_states': '/joint_states',
}

#: ``--topic`` role -> recording role (and kind): the legacy names keep their meaning
_LEGACY_ROLES: dict[str, tuple[str, str]] = {
    'steering': ('steering', 'angle'),
    'wheel_speed': ('drive', 'wheel_speed'),   # commanded rear wheel speed [rad/s]
    'cmd_vel': ('cmd_vel', ''),
    'ackermann': ('command', ''),
    'odom': ('odom', ''),
    'imu': ('imu', ''),
    'joint_states': ('joint_states', ''),
}
#: recording role -> series name of :class:`RawBag` (legacy names where the meaning is the same)
_SERIES = {'command': 'ackermann', 'wheel_speed': 'wheel_meas'}


def _topic_roles() -> list[str]:
    from rc_sim_description.recording import ROLE_TYPES

    return [*DEFAULT_TOPICS, *(r for r in ROLE_TYPES if r not in DEFAULT_TOPICS and r != 'scan')]


def parse_topic_overrides(items: Iterable[str]) -> dict[str, str]:
    """``['odom=/vicon/odom', ...]`` -> full role -> topic mapping (defaults for the others).

    Roles: the defaults' (``wheel_speed`` = commanded rear wheel speed [rad/s], ``ackermann``)
    and the recording roles ``pose``, ``drive``, ``command``, ``enable`` (default kinds).
    """
    topics = dict(DEFAULT_TOPICS)
    roles = _topic_roles()
    for item in items:
        expected = f'ROLE=/topic (roles: {", ".join(roles)})'
        role, topic = split_key_value(item, '--topic', expected, CalibrationError)
        if not topic.strip():
            raise CalibrationError(f'--topic {item!r}: expected {expected}')
        if role not in roles:
            raise CalibrationError(f'--topic {item!r}: unknown role {role!r} '
                                   f'(roles: {", ".join(roles)})')
        topic = topic.strip()
        topics[role] = topic if topic.startswith('/') else '/' + topic
    return topics


@dataclass(frozen=True)
class StaticTransform:
    """A planar static transform: ``child`` at (x, y, yaw) in ``parent`` (frames without '/')."""

    parent: str
    child: str
    x: float
    y: float
    yaw: float


@dataclass(frozen=True)
class RawBag:
    """The roles of one bag as arrays; times in s since the bag's first message.

    ``series`` keys: steering, wheel_speed (commanded [rad/s]), drive (other kinds), cmd_vel,
    ackermann, enable, odom (x, y, qx, qy, qz, qw, vx, vy, yaw_rate), pose (x, y, yaw, vx, vy,
    yaw_rate of the measured frame; NaN twist unless Odometry), imu, joint_states, wheel_meas.
    ``pose_frame`` is the measured frame's name when the bag says it (Odometry child frame, TF
    child), ``static_tf`` the planar transforms of ``/tf_static``; ``offset_declared`` is True
    when the recording description gave the pose offset.
    """

    path: str
    start_ns: int
    topics: dict[str, str]          # every topic of the bag -> message type
    roles: dict[str, str]           # series name -> topic actually read
    series: dict[str, dict[str, Array]]  # series name -> {'t': (K,) s, field: (K,)}
    kinds: dict[str, str] = field(default_factory=dict)  # series name -> kind
    pose_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    clocks: dict[str, str] = field(default_factory=dict)  # series name -> 'header' | 'log'
    pose_frame: str = ''
    static_tf: tuple[StaticTransform, ...] = ()
    offset_declared: bool = False


def missing_topic_error(bag: Any, topic: str, what: str) -> CalibrationError:
    """``<what>: topic T is not in bag B (did you mean ...?); it has: ...`` (exit status 2)."""
    from rc_sim_description.yamlio import did_you_mean

    listed = ', '.join(sorted(bag.topics)) or 'no topics'
    return CalibrationError(f'{what}: topic {topic} is not in bag {bag.path}'
                            f'{did_you_mean(topic, bag.topics)}; it has: {listed}')


def default_recording(bag: Any, topics: Mapping[str, str] | None = None,
                      named: Iterable[str] = ()) -> Any:
    """The recording a ``--topic`` mapping describes: each role whose topic is in the bag (a
    wrong type is an error naming the role); default names that are absent are left out, a
    topic the user ``named`` (``--topic ROLE=/NAME``) that is absent is an error (never
    silently replaced by another source)."""
    from rc_sim_description.recording import ROLE_TYPES, recording_from_mapping

    topics = dict(DEFAULT_TOPICS if topics is None else topics)
    for role in named:
        if topics[role] not in bag.topics:
            raise missing_topic_error(bag, topics[role], f'--topic {role}={topics[role]}')
    body: dict[str, dict[str, Any]] = {}
    for role, topic in topics.items():
        info = bag.topics.get(topic)
        if info is None:
            continue
        name, kind = _LEGACY_ROLES.get(role, (role, ''))
        if info.msgtype not in ROLE_TYPES[name]:
            raise CalibrationError(
                f'{bag.path}: topic {topic} has type {info.msgtype}, expected '
                f'{" or ".join(ROLE_TYPES[name])} for {role} (map another topic with --topic '
                f'{role}=NAME, or describe the recording with --recording)')
        body[name] = {'topic': topic, **({'kind': kind} if kind else {})}
    if ('steering' in body) != ('drive' in body):
        body.pop('steering', None)
        body.pop('drive', None)
    if not body:
        return None
    return recording_from_mapping(body, f'{bag.path} (topic names)')


def _yaw(q: Any) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def _static_transforms(bag: Any) -> tuple[StaticTransform, ...]:
    """Planar transforms of ``/tf_static`` (tf2_msgs/TFMessage); () when absent."""
    info = bag.topics.get('/tf_static')
    if info is None or not info.msgtype.endswith('TFMessage'):
        return ()
    out: dict[tuple[str, str], StaticTransform] = {}
    for msg in bag.read('/tf_static').messages:
        for tr in msg.transforms:
            p, q = tr.transform.translation, tr.transform.rotation
            parent = tr.header.frame_id.strip('/')
            child = tr.child_frame_id.strip('/')
            out[(parent, child)] = StaticTransform(parent, child, float(p.x), float(p.y),
                                                   _yaw(q))
    return tuple(out.values())


def _pose_frame(bag: Any, role: Any, msgtype: str) -> str:
    """Name of the measured frame: the TF child, an Odometry's child_frame_id, else ''."""
    if role.tf_child:
        return str(role.tf_child)
    if msgtype.endswith('Odometry'):
        got = bag.read(role.topic)
        if got.messages:
            return str(got.messages[0].child_frame_id).strip('/')
    return ''


def read_bag(path: str | Path, topics: Mapping[str, str] | None = None, *,
             recording: Any = None, skip_corrupt: bool = False,
             named: Iterable[str] = ()) -> RawBag:
    """Read the roles of a bag (directory, .db3, .mcap or ROS 1 .bag) described by
    ``recording`` (a Recording or a YAML path), else by the ``topics`` role mapping (``named``:
    the roles the user mapped, which must exist)."""
    from rc_sim_description.bags import open_bag
    from rc_sim_description.recording import Recording, extract, load_recording

    bag_path = Path(path)
    declared = False
    rec = recording
    if rec is not None and not isinstance(rec, Recording):
        declared = declared_pose_offset(rec) is not None
        rec = load_recording(rec)
    elif rec is not None:
        pose_role = rec.roles.get('pose')
        declared = pose_role is not None and pose_role.offset_declared
    with open_bag(bag_path, skip_corrupt=skip_corrupt) as bag:
        if rec is None:
            rec = default_recording(bag, topics, named)
        else:
            for name, role in rec.roles.items():
                if name != 'scan' and role.topic not in bag.topics:
                    raise missing_topic_error(bag, role.topic, f'{rec.source}: {name}')
        channels = extract(rec, bag) if rec is not None else {}
        start_ns = bag.start_ns
        available = {name: info.msgtype for name, info in bag.topics.items()}
        frame = ''
        for name in ('pose', 'odom'):
            if name in channels:
                frame = _pose_frame(bag, rec.roles[name], channels[name].msgtype)
                break
        static = _static_transforms(bag)
    if not available or start_ns is None:
        raise CalibrationError(f'{bag_path}: the bag is empty (no topics or no messages)')
    series: dict[str, dict[str, Array]] = {}
    roles: dict[str, str] = {}
    kinds: dict[str, str] = {}
    clocks: dict[str, str] = {}
    offset = (0.0, 0.0, 0.0)
    for name, ch in channels.items():
        role = rec.roles[name]
        key = _SERIES.get(name, name)
        if name == 'drive' and role.kind == 'wheel_speed':
            key = 'wheel_speed'
        entry: dict[str, Array] = {'t': (ch.t_ns - start_ns) * 1e-9}
        if name == 'odom':
            yaw = ch.values['yaw']
            entry.update(x=ch.values['x'], y=ch.values['y'], qx=0 * yaw, qy=0 * yaw,
                         qz=np.sin(0.5 * yaw), qw=np.cos(0.5 * yaw), vx=ch.values['vx'],
                         vy=ch.values['vy'], yaw_rate=ch.values['yaw_rate'])
        else:
            entry.update(ch.values)
        if name == 'pose':
            offset = role.offset
        series[key], roles[key], clocks[key] = entry, role.topic, ch.clock
        if role.kind:
            kinds[key] = role.kind
    for key in list(series):
        series[key] = sanitise_series(series[key], key, f'{bag_path}: {roles[key]}')
    return RawBag(path=str(bag_path), start_ns=int(start_ns), topics=available, roles=roles,
                  series=series, kinds=kinds, pose_offset=offset, clocks=clocks,
                  pose_frame=frame, static_tf=static, offset_declared=declared)


#: Series that hold their value until the next message (commands, deadman): a clipped bag keeps
#: the value in force at its start.
HELD_SERIES = ('steering', 'wheel_speed', 'drive', 'cmd_vel', 'ackermann', 'enable')
#: the fields of each series that must be finite (a pose's twist may be NaN: it is then derived)
FINITE_FIELDS = {'pose': ('x', 'y', 'yaw'), 'odom': ('x', 'y', 'qz', 'qw'),
                 'cmd_vel': ('linear_x', 'angular_z'), 'ackermann': ('steering_angle', 'speed'),
                 'imu': ('yaw_rate',), 'joint_states': ('rear_left', 'rear_right')}
#: [s] a hole in a topic's stamps longer than this separates clusters of stamps: a stamp far
#: from the rest of its topic (a clock jump, a corrupt stamp) is not part of the recording
STAMP_CLUSTER_GAP = 600.0
#: the largest share of a topic's messages that may be dropped as bad before the bag is refused
MAX_DROPPED_SHARE = 0.5


def _stamp_outliers(t: Array) -> Array:
    """Mask of stamps outside the topic's main cluster (clusters split at holes longer than
    :data:`STAMP_CLUSTER_GAP`; the cluster with the most messages is the recording)."""
    if t.size < 2:
        return np.zeros(t.size, dtype=bool)
    order = np.argsort(t, kind='stable')
    cluster = np.concatenate([[0], np.cumsum(np.diff(t[order]) > STAMP_CLUSTER_GAP)])
    main = np.bincount(cluster).argmax()
    out = np.zeros(t.size, dtype=bool)
    out[order] = cluster != main
    return out


def sanitise_series(entry: dict[str, Array], key: str, where: str) -> dict[str, Array]:
    """One role's series without messages a fit cannot use, sorted by time: non-finite values
    or stamps, stamps far from the rest of the topic (:func:`_stamp_outliers`), repeated stamps
    (a command keeps the last message of a stamp, a measurement the first). What was dropped is
    one warning counting each kind (with the time of the first); more than
    :data:`MAX_DROPPED_SHARE` of the messages dropped is a one-line CalibrationError naming the
    topic (``where``) and the time [s since the bag's first message]."""
    from rc_sim_description.bags.errors import warn

    t = np.asarray(entry['t'], dtype=float)
    n = t.size
    if n == 0:
        return entry
    fields = FINITE_FIELDS.get(key, ('value',) if 'value' in entry else ())
    finite = np.isfinite(t)
    for name in fields:
        finite &= np.isfinite(np.asarray(entry[name], dtype=float))
    far = np.zeros(n, dtype=bool)
    idx = np.flatnonzero(finite)
    far[idx] = _stamp_outliers(t[idx])
    keep = finite & ~far
    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(t[idx], kind='stable')]
    ts = t[idx]
    if key in HELD_SERIES:      # the last message of a stamp is the command in force
        unique = np.concatenate([np.diff(ts) > 0, [True]]) if ts.size else ts.astype(bool)
    else:
        unique = np.concatenate([[True], np.diff(ts) > 0]) if ts.size else ts.astype(bool)
    repeated = int((~unique).sum())
    idx = idx[unique]
    dropped = n - idx.size
    if not dropped:
        return entry
    parts = []
    if (~finite).any():
        first = t[np.flatnonzero(~finite)[0]]
        at = f'first at t = {first:.3f} s' if math.isfinite(first) else 'first with a ' \
            'non-finite stamp'
        parts.append(f'{int((~finite).sum())} with NaN or infinite values ({at})')
    if far.any():
        parts.append(f'{int(far.sum())} stamped far from the rest of the topic (t = '
                     f'{t[np.flatnonzero(far)[0]]:.6g} s; more than {STAMP_CLUSTER_GAP:g} s '
                     'apart)')
    if repeated:
        parts.append(f'{repeated} with a repeated stamp')
    text = f'{where}: {dropped} of {n} messages unusable: ' + '; '.join(parts)
    if idx.size < (1.0 - MAX_DROPPED_SHARE) * n or idx.size < 2:
        raise CalibrationError(text + ' (too many to drop: clean the recording)')
    warn(text + '; dropped')
    return {name: np.asarray(values)[idx] for name, values in entry.items()}


def clip_raw(raw: RawBag, t_from: float, t_to: float) -> RawBag:
    """The part ``t_from <= t < t_to`` [s since the bag's first message] of every series; a
    held series (:data:`HELD_SERIES`) also keeps its last message before ``t_from``, moved to
    ``t_from`` (the command in force there). One-line error when no pose is left."""
    if not (math.isfinite(t_from) and t_from < t_to):
        raise CalibrationError(f'{raw.path}: time span {t_from:g}:{t_to:g} s is empty')
    series: dict[str, dict[str, Array]] = {}
    for key, entry in raw.series.items():
        t = entry['t']
        keep = (t >= t_from) & (t < t_to)
        if key in HELD_SERIES:
            before = np.flatnonzero(t < t_from)
            if before.size:
                keep[before[-1]] = True
        part = {name: np.asarray(values)[keep] for name, values in entry.items()}
        part['t'] = np.maximum(part['t'], t_from)
        series[key] = part
    for key in ('pose', 'odom'):
        if key in series and series[key]['t'].size < 2:
            raise CalibrationError(f'{raw.path}: fewer than two {key} messages in the time span '
                                   f'{t_from:g}:{t_to:g} s')
    return replace(raw, series=series)


def declared_pose_offset(path: Any) -> tuple[float, float, float] | None:
    """The ``pose.offset`` a recording description YAML declares (None when it has none)."""
    from rc_sim_description.errors import ConfigError
    from rc_sim_description.yamlio import read_yaml

    data = read_yaml(path, ConfigError, 'recording ')
    pose = data.get('pose') if isinstance(data, dict) else None
    if not isinstance(pose, dict) or 'offset' not in pose:
        return None
    from rc_sim_description.recording import recording_from_mapping

    role = recording_from_mapping({'pose': pose}, f'recording {path}').roles['pose']
    return role.offset
