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

__all__ = ['propose_recording', 'summary_lines']

_SCALARS = ('std_msgs/msg/Float32', 'std_msgs/msg/Float64')
_ARRAYS = ('std_msgs/msg/Float32MultiArray', 'std_msgs/msg/Float64MultiArray')
_POSE_NAMES = re.compile(r'vicon|mocap|optitrack|qualisys|ground_truth|gt|pf|pose|amcl|slam',
                         re.IGNORECASE)


def summary_lines(bag: Any) -> list[str]:
    """Storage, versions, start, duration and one line per topic (type, count, rate)."""
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
    width = max((len(t) for t in bag.topics), default=5)
    tw = max((len(i.msgtype) for i in bag.topics.values()), default=4)
    lines.append(f'  {"topic":<{width}}  {"type":<{tw}}  {"count":>7}  {"rate":>9}')
    for name, info in bag.topics.items():
        rate = f'{info.rate_hz:.2f} Hz' if info.rate_hz > 0 else 'n/a'
        conns = f'  ({len(info.connections)} connections)' if len(info.connections) > 1 else ''
        lines.append(f'  {name:<{width}}  {info.msgtype:<{tw}}  {info.count:>7}  {rate:>9}{conns}')
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
