"""What a bag holds, and a proposed recording description (roles guessed from types and names).

Used by ``rcsim inspect``; the guess is a starting point to check, not a fact: scalar command
topics are recognised by their names (``steer``, ``throttle``, ``speed``, ``safety``), poses by
their types (mocap / particle-filter names preferred); a pose offset is never guessed.
"""

from __future__ import annotations

from datetime import datetime, timezone
import re
from typing import Any

from rc_sim_description.recording import Recording, recording_from_mapping

__all__ = ['MIN_RATE_MESSAGES', 'MIN_RATE_SPAN_S', 'propose_recording', 'summary_lines',
           'table_lines', 'topic_rate']

_SCALARS = ('std_msgs/msg/Float32', 'std_msgs/msg/Float64')
_ARRAYS = ('std_msgs/msg/Float32MultiArray', 'std_msgs/msg/Float64MultiArray')
_POSE_NAMES = re.compile(r'vicon|mocap|optitrack|qualisys|ground_truth|gt|pf|pose|amcl|slam',
                         re.IGNORECASE)


#: A rate is shown for a topic with at least this many messages ...
MIN_RATE_MESSAGES = 3
#: ... logged over at least this span [s] (a burst logged at one time has no rate).
MIN_RATE_SPAN_S = 0.05


def topic_rate(count: int, first_ns: int | None, last_ns: int | None) -> tuple[str, str]:
    """(rate text, note) of a topic: the mean rate (count - 1) / span of its log times, only
    where that means something (:data:`MIN_RATE_MESSAGES` messages over at least
    :data:`MIN_RATE_SPAN_S`); otherwise ``'-'`` and why."""
    if count == 0:
        return '-', 'no messages'
    if count < MIN_RATE_MESSAGES or first_ns is None or last_ns is None:
        return '-', f'too few messages for a rate ({count})'
    span_s = (last_ns - first_ns) * 1e-9
    if span_s <= 0:
        return '-', f'all {count} logged at one time'
    if span_s < MIN_RATE_SPAN_S:
        return '-', f'all {count} logged within {span_s * 1e3:.2g} ms'
    rate = (count - 1) / span_s
    return (f'{rate:,.0f} Hz' if rate >= 100 else f'{rate:.3g} Hz'), ''


def table_lines(header: list[str], rows: list[list[str]], right: set[int],
                indent: str = '  ') -> list[str]:
    """Columns aligned whatever the cell lengths (``right``: right-aligned column indices);
    trailing blanks removed."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = []
    for row in [header, *rows]:
        cells = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        out.append((indent + '  '.join(cells)).rstrip())
    return out


def summary_lines(bag: Any) -> list[str]:
    """Storage, versions, start, duration and a table of the topics (type, count, rate)."""
    start = bag.start_ns
    when = 'n/a' if start is None else datetime.fromtimestamp(
        start * 1e-9, tz=timezone.utc).isoformat(timespec='milliseconds')
    meta = f'metadata version {bag.metadata_version}' if bag.metadata_version is not None else \
        'no metadata.yaml'
    lines = [f'bag       {bag.path}',
             f'storage   {bag.storage} ({bag.storage_version}; {meta}'
             + (f'; ros_distro {bag.ros_distro}' if bag.ros_distro else '') + ')',
             f'files     {len(bag.files)}',
             f'start     {when} ({start if start is not None else "n/a"} ns)',
             f'duration  {bag.duration:.3f} s',
             f'messages  {bag.message_count} on {len(bag.topics)} topics']
    rows = []
    for name, info in bag.topics.items():
        rate, note = topic_rate(info.count, info.first_ns, info.last_ns)
        if len(info.connections) > 1:
            note = '; '.join(filter(None, [note, f'{len(info.connections)} connections']))
        rows.append([name, info.msgtype, f'{info.count:,}', rate, note])
    if rows:
        lines += table_lines(['topic', 'type', 'count', 'rate', ''], rows, right={2, 3})
    return lines


def _pick(candidates: list[str], prefer: re.Pattern[str] | None = None) -> str:
    if not candidates:
        return ''
    if prefer is not None:
        preferred = [c for c in candidates if prefer.search(c)]
        if preferred:
            return sorted(preferred, key=len)[0]
    return sorted(candidates, key=len)[0]


def propose_recording(bag: Any) -> tuple[Recording | None, dict[str, str]]:
    """A recording description for ``bag`` and a comment per role (why it was chosen)."""
    by_type: dict[str, list[str]] = {}
    for name, info in bag.topics.items():
        if info.count:
            by_type.setdefault(info.msgtype, []).append(name)

    def of(*types: str) -> list[str]:
        return [t for ty in types for t in by_type.get(ty, [])]

    body: dict[str, dict[str, Any]] = {}
    notes: dict[str, str] = {}
    scalars = of(*_SCALARS)
    throttle = [t for t in scalars if re.search(r'throttle|duty|esc', t, re.I)]
    steer = [t for t in scalars if re.search(r'steer|servo', t, re.I)]
    speed = [t for t in scalars if re.search(r'wheel_speed|rear_wheel|speed|v_ref|velocity', t,
                                             re.I) and t not in throttle]
    ackermann = of('ackermann_msgs/msg/AckermannDriveStamped', 'ackermann_msgs/msg/AckermannDrive')
    twist = [t for t in of('geometry_msgs/msg/Twist', 'geometry_msgs/msg/TwistStamped')
             if 'cmd_vel' in t]
    if steer and (throttle or speed):
        if throttle:
            drive, kind = _pick(throttle), 'throttle'
            notes['drive'] = 'normalised ESC throttle (guessed from the name)'
        else:
            drive = _pick(speed, re.compile('wheel'))
            kind = 'wheel_speed' if 'wheel' in drive else 'speed'
            notes['drive'] = f'{kind} command (guessed from the name)'
        no_angle = [t for t in steer if 'angle' not in t]
        if throttle and no_angle:
            body['steering'] = {'topic': _pick(no_angle), 'kind': 'normalised'}
            notes['steering'] = 'normalised servo command in [-1, 1] (guessed from the name)'
        else:
            choice = _pick(steer, re.compile('angle'))
            skind = 'angle' if 'angle' in choice else 'normalised'
            body['steering'] = {'topic': choice, 'kind': skind}
            notes['steering'] = f'{skind} (guessed from the name)'
        body['drive'] = {'topic': drive, 'kind': kind}
    elif ackermann:
        body['command'] = {'topic': _pick(ackermann, re.compile('drive|ackermann'))}
        notes['command'] = 'Ackermann steering angle [rad] + speed [m/s]'
    elif twist:
        body['cmd_vel'] = {'topic': _pick(twist)}
        notes['cmd_vel'] = 'Twist; give the mapper mode with --cmd-vel-mode'
    enable = [t for t in scalars if re.search(r'safety|deadman|enable|arm', t, re.I)]
    if enable:
        body['enable'] = {'topic': _pick(enable)}
        notes['enable'] = 'deadman: commands act while non-zero (guessed from the name)'
    poses = of('geometry_msgs/msg/PoseWithCovarianceStamped', 'geometry_msgs/msg/PoseStamped')
    odoms = of('nav_msgs/msg/Odometry')
    mocap_odom = [t for t in odoms if _POSE_NAMES.search(t) and 'odom' not in t.lower()]
    if poses or mocap_odom:
        body['pose'] = {'topic': _pick(poses + mocap_odom, _POSE_NAMES)}
        notes['pose'] = ('measured frame; add offset: [x, y, yaw] of it in base_link (rear-axle '
                         'centre) if it is not there')
    if odoms:
        body['odom'] = {'topic': _pick(odoms, re.compile('odom'))}
        notes['odom'] = 'nav_msgs/Odometry of base_link'
    imus = of('sensor_msgs/msg/Imu')
    if imus:
        body['imu'] = {'topic': _pick(imus, re.compile('imu'))}
        notes['imu'] = 'yaw rate = angular_velocity.z (check the mounting)'
    joints = of('sensor_msgs/msg/JointState')
    if joints:
        body['joint_states'] = {'topic': _pick(joints)}
    scans = of('sensor_msgs/msg/LaserScan')
    if scans:
        body['scan'] = {'topic': _pick(scans, re.compile(r'^/?scan$'))}
    if not body:
        return None, {}
    return recording_from_mapping(body, f'{bag.path} (proposed)'), notes
