"""Real-car data from a ros2 (or ROS 1) bag: commands and measurements on one time grid.

Pipeline (issue 6 item 1): read the mapped topics -> per-message time (header stamp, else
receive time) -> outlier rejection (Hampel filter) -> yaw unwrapping -> resampling onto one uniform
grid -> gyro-bias estimate -> trimming of idle segments. Commands stay an event series (zero-order
held by the replay).

Command sources, first present wins: ``/steering_angle`` + ``/rear_wheel_speed``
(std_msgs/Float64), ``/cmd_vel`` (geometry_msgs/Twist through the control core's mapper with its
own configuration), ``/ackermann_cmd`` (ackermann_msgs AckermannDrive[Stamped], wheel speed =
speed / wheel_radius). Measurements: ``/odom`` (pose; twist if non-zero, else differentiated
pose), ``/imu`` (yaw rate minus gyro bias), ``/joint_states`` (rear wheel speeds).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
import math
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_calibration.errors import CalibrationError
from rc_sim_description.params import VehicleParams

__all__ = [
    'DEFAULT_TOPICS',
    'Dataset',
    'DatasetOptions',
    'RawBag',
    'build_dataset',
    'hampel_mask',
    'load_dataset',
    'parse_topic_overrides',
    'read_bag',
    'yaw_from_quaternion',
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

REAR_WHEEL_JOINTS = ('rear_left_wheel_joint', 'rear_right_wheel_joint')
_HEADER_CLOCK_MISMATCH_S = 1.0  # header stamps this far from receive times are on another clock


def parse_topic_overrides(items: Iterable[str]) -> dict[str, str]:
    """``['odom=/vicon/odom', ...]`` -> full role -> topic mapping (defaults for the others)."""
    topics = dict(DEFAULT_TOPICS)
    for item in items:
        role, sep, topic = item.partition('=')
        role = role.strip()
        if not sep or not topic.strip():
            raise CalibrationError(f'--topic {item!r}: expected ROLE=/topic '
                                   f'(roles: {", ".join(DEFAULT_TOPICS)})')
        if role not in DEFAULT_TOPICS:
            raise CalibrationError(f'--topic {item!r}: unknown role {role!r} '
                                   f'(roles: {", ".join(DEFAULT_TOPICS)})')
        topic = topic.strip()
        topics[role] = topic if topic.startswith('/') else '/' + topic
    return topics


# --------------------------------------------------------------------------- message fields
def yaw_from_quaternion(qx: Array, qy: Array, qz: Array, qw: Array) -> Array:
    """Yaw of a unit quaternion, psi = atan2(2(w z + x y), 1 - 2(y^2 + z^2)) (ZYX convention)."""
    return np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))


def _stamp_ns(msg: Any) -> int:
    header = getattr(msg, 'header', None)
    if header is None:
        return 0
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


def _fields(msgtype: str, msg: Any) -> tuple[float, ...]:
    """Numbers extracted from one message (order per type, see ``_FIELD_NAMES``)."""
    if msgtype.endswith('Float64') or msgtype.endswith('Float32'):
        return (float(msg.data),)
    if msgtype.endswith('/Twist'):
        return (float(msg.linear.x), float(msg.angular.z))
    if msgtype.endswith('/TwistStamped'):
        return (float(msg.twist.linear.x), float(msg.twist.angular.z))
    if msgtype.endswith('AckermannDriveStamped'):
        return (float(msg.drive.steering_angle), float(msg.drive.speed))
    if msgtype.endswith('AckermannDrive'):
        return (float(msg.steering_angle), float(msg.speed))
    if msgtype.endswith('Odometry'):
        p, q, v = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
        return (float(p.x), float(p.y), float(q.x), float(q.y), float(q.z), float(q.w),
                float(v.linear.x), float(v.linear.y), float(v.angular.z))
    if msgtype.endswith('/Imu'):
        return (float(msg.angular_velocity.z),)
    if msgtype.endswith('JointState'):
        names = list(msg.name)
        vel = np.asarray(msg.velocity, dtype=float)
        out = []
        for joint in REAR_WHEEL_JOINTS:
            out.append(float(vel[names.index(joint)])
                       if joint in names and names.index(joint) < vel.size else math.nan)
        return tuple(out)
    raise CalibrationError(f'unsupported message type {msgtype}')


_FIELD_NAMES: dict[str, tuple[str, ...]] = {
    'steering': ('value',),
    'wheel_speed': ('value',),
    'cmd_vel': ('linear_x', 'angular_z'),
    'ackermann': ('steering_angle', 'speed'),
    'odom': ('x', 'y', 'qx', 'qy', 'qz', 'qw', 'vx', 'vy', 'yaw_rate'),
    'imu': ('yaw_rate',),
    'joint_states': ('rear_left', 'rear_right'),
}

_EXPECTED_TYPES: dict[str, tuple[str, ...]] = {
    'steering': ('std_msgs/msg/Float64', 'std_msgs/msg/Float32'),
    'wheel_speed': ('std_msgs/msg/Float64', 'std_msgs/msg/Float32'),
    'cmd_vel': ('geometry_msgs/msg/Twist', 'geometry_msgs/msg/TwistStamped'),
    'ackermann': ('ackermann_msgs/msg/AckermannDriveStamped', 'ackermann_msgs/msg/AckermannDrive'),
    'odom': ('nav_msgs/msg/Odometry',),
    'imu': ('sensor_msgs/msg/Imu',),
    'joint_states': ('sensor_msgs/msg/JointState',),
}


def _normalise_type(msgtype: str) -> str:
    """ROS 1 ``pkg/Type`` -> ROS 2 ``pkg/msg/Type``."""
    parts = msgtype.split('/')
    return f'{parts[0]}/msg/{parts[1]}' if len(parts) == 2 else msgtype


# --------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class RawBag:
    """The mapped topics of one bag as arrays; times in ns since the bag's first message."""

    path: str
    start_ns: int
    topics: dict[str, str]          # every topic of the bag -> message type
    roles: dict[str, str]           # role -> topic actually read
    series: dict[str, dict[str, Array]]  # role -> {'t': (K,) s, field: (K,)}


def read_bag(path: str | Path, topics: Mapping[str, str] | None = None) -> RawBag:
    """Read the mapped topics of a bag (directory, .db3, .mcap or ROS 1 .bag).

    Per message, the time is the header stamp when the message has a non-zero one on the same clock
    as the receive times (within 1 s), else the receive time.
    """
    topics = dict(DEFAULT_TOPICS if topics is None else topics)
    bag_path = Path(path)
    wanted = {t: r for r, t in topics.items()}
    raw: dict[str, list[tuple[int, int, tuple[float, ...]]]] = {}
    from rc_sim_engine.bagio import open_bag

    with open_bag(bag_path) as reader:
        available = {c.topic: _normalise_type(c.msgtype) for c in reader.connections}
        conns = [c for c in reader.connections if c.topic in wanted]
        for conn in conns:
            role = wanted[conn.topic]
            msgtype = _normalise_type(conn.msgtype)
            if msgtype not in _EXPECTED_TYPES[role]:
                raise CalibrationError(
                    f'{bag_path}: topic {conn.topic} has type {msgtype}, expected '
                    f'{" or ".join(_EXPECTED_TYPES[role])} for {role} (map another topic with '
                    f'--topic {role}=NAME)')
        start_ns = None
        try:
            for conn, t_ns, rawdata in reader.messages(connections=conns):
                msgtype = _normalise_type(conn.msgtype)
                msg = reader.deserialize(rawdata, conn.msgtype)
                raw.setdefault(wanted[conn.topic], []).append(
                    (int(t_ns), _stamp_ns(msg), _fields(msgtype, msg)))
            start_ns = int(reader.start_time)
        except CalibrationError:
            raise
        except Exception as exc:  # any storage/serde failure: a corrupt bag
            raise CalibrationError(f'{bag_path}: cannot read messages '
                                   f'({type(exc).__name__}: {_one_line(exc)})') from None
    if not available or start_ns is None or start_ns >= 2**62:
        raise CalibrationError(f'{bag_path}: the bag is empty (no topics or no messages)')
    series: dict[str, dict[str, Array]] = {}
    for role, rows in raw.items():
        recv = np.array([r[0] for r in rows], dtype=np.int64)
        stamp = np.array([r[1] for r in rows], dtype=np.int64)
        values = np.array([r[2] for r in rows], dtype=float)
        use_stamp = bool(np.all(stamp > 0) and
                         np.median(np.abs(stamp - recv)) < _HEADER_CLOCK_MISMATCH_S * 1e9)
        t_ns = stamp if use_stamp else recv
        order = np.argsort(t_ns, kind='stable')
        entry = {'t': (t_ns[order] - start_ns) * 1e-9}
        for i, name in enumerate(_FIELD_NAMES[role]):
            entry[name] = values[order, i]
        series[role] = entry
    return RawBag(path=str(bag_path), start_ns=start_ns, topics=available,
                  roles={r: topics[r] for r in series}, series=series)


def _one_line(exc: BaseException) -> str:
    text = ' '.join(str(exc).split())
    return text[:200] if text else 'no detail'


# --------------------------------------------------------------------------- signal helpers
def hampel_mask(values: Array, window: int = 7, k: float = 5.0) -> Array:
    """True where a sample is an outlier: |x - median_w(x)| > k * 1.4826 * MAD_w(x).

    Hampel identifier (Pearson 2002) over a centred window of ``window`` samples; the MAD has a
    floor of 1e-9 times the signal scale so flat segments do not flag rounding noise.
    """
    values = np.asarray(values, dtype=float)
    if values.size < window or k <= 0:
        return np.zeros(values.shape, dtype=bool)
    half = window // 2
    padded = np.pad(values, half, mode='edge')
    win = np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1)
    med = np.median(win, axis=1)
    mad = np.median(np.abs(win - med[:, None]), axis=1)
    floor = 1e-9 * max(float(np.max(np.abs(values))), 1.0)
    return np.abs(values - med) > k * 1.4826 * np.maximum(mad, floor)


def _zoh(t_src: Array, v_src: Array, t: Array) -> Array:
    """Zero-order hold of an event series onto ``t`` (0 before the first event)."""
    idx = np.searchsorted(t_src, t, side='right') - 1
    out = np.where(idx >= 0, v_src[np.clip(idx, 0, None)], 0.0)
    return np.asarray(out, dtype=float)


# --------------------------------------------------------------------------- dataset
@dataclass(frozen=True)
class DatasetOptions:
    """Preprocessing settings (defaults documented in docs/calibration.md)."""

    rate_hz: float = 50.0            # resampling grid
    idle_speed: float = 0.05         # [m/s] below this (and zero command) the car is idle
    idle_margin: float = 0.5         # [s] kept around the active part when trimming
    outlier_k: float = 5.0           # Hampel threshold in robust sigmas (0 disables)
    outlier_window: int = 7          # Hampel window [samples]
    cmd_vel_mode: str = 'yaw_rate'   # mapper mode of /cmd_vel on the real car
    mapper_overrides: tuple[tuple[str, float], ...] = ()  # MapperConfig fields of the real car
    use_imu: bool = True             # yaw rate from the IMU when present


@dataclass(frozen=True)
class Dataset:
    """One bag on a uniform grid; t [s] from the bag's first message, pose in the odom frame."""

    name: str
    t: Array          # (K,) [s]
    x: Array          # base_link x [m]
    y: Array          # base_link y [m]
    yaw: Array        # unwrapped [rad]
    vx: Array         # body longitudinal speed [m/s]
    vy: Array         # body lateral speed [m/s]
    yaw_rate: Array   # [rad/s], gyro bias removed
    wheel_speed: Array  # measured rear wheel speed [rad/s] (NaN when /joint_states is absent)
    t_cmd: Array      # (C,) command event times [s]
    steering_cmd: Array  # commanded bicycle steering angle [rad]
    wheel_speed_cmd: Array  # commanded rear wheel speed [rad/s]
    gyro_bias: float = 0.0
    command_source: str = ''
    yaw_rate_source: str = ''
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def duration(self) -> float:
        """Length of the grid [s]."""
        return float(self.t[-1] - self.t[0]) if self.t.size else 0.0

    @property
    def has_wheel_speed(self) -> bool:
        """True when the bag had rear wheel speeds."""
        return bool(np.isfinite(self.wheel_speed).any())

    def commands_at(self, t: Array) -> tuple[Array, Array]:
        """Zero-order-held (steering [rad], wheel speed [rad/s]) commands at times ``t``."""
        return (_zoh(self.t_cmd, self.steering_cmd, t), _zoh(self.t_cmd, self.wheel_speed_cmd, t))

    def time_slice(self, t_start: float, t_end: float, name: str | None = None) -> Dataset:
        """Grid samples with t_start <= t <= t_end (commands kept whole for the history)."""
        keep = (self.t >= t_start) & (self.t <= t_end)
        arrays = {k: getattr(self, k)[keep] for k in
                  ('t', 'x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'wheel_speed')}
        return replace(self, name=name or self.name, **arrays)


def _commands(raw: RawBag, params: VehicleParams, opts: DatasetOptions,
              topics: Mapping[str, str]) -> tuple[Array, Array, Array, str]:
    s = raw.series
    if 'steering' in s and 'wheel_speed' in s:
        t = np.union1d(s['steering']['t'], s['wheel_speed']['t'])
        return (t, _zoh(s['steering']['t'], s['steering']['value'], t),
                _zoh(s['wheel_speed']['t'], s['wheel_speed']['value'], t),
                f'{raw.roles["steering"]} + {raw.roles["wheel_speed"]}')
    if 'cmd_vel' in s:
        from rc_sim_control.ackermann import MapperConfig, map_sequence

        config = MapperConfig.from_vehicle(params, mode=opts.cmd_vel_mode,
                                           **dict(opts.mapper_overrides))
        mapped = map_sequence(s['cmd_vel']['t'], s['cmd_vel']['linear_x'],
                              s['cmd_vel']['angular_z'], config)
        return (s['cmd_vel']['t'], np.asarray(mapped.steering_angle, dtype=float),
                np.asarray(mapped.wheel_speed, dtype=float),
                f'{raw.roles["cmd_vel"]} (mapper mode {opts.cmd_vel_mode})')
    if 'ackermann' in s:
        a = s['ackermann']
        return (a['t'], a['steering_angle'].copy(), a['speed'] / params.geometry.wheel_radius,
                f'{raw.roles["ackermann"]} (ackermann_msgs)')
    raise CalibrationError(
        f'{raw.path}: no command topics ({topics["steering"]} + {topics["wheel_speed"]}, '
        f'{topics["cmd_vel"]} or {topics["ackermann"]}); the bag has: '
        f'{_topic_list(raw)}; map them with --topic steering=NAME --topic wheel_speed=NAME, '
        f'--topic cmd_vel=NAME or --topic ackermann=NAME')


def _topic_list(raw: RawBag) -> str:
    return ', '.join(sorted(raw.topics)) or 'no topics'


def _clean(t: Array, columns: Mapping[str, Array], opts: DatasetOptions) -> Array:
    """Mask of samples to keep: finite, strictly increasing time, not a Hampel outlier."""
    keep = np.isfinite(t)
    for v in columns.values():
        keep &= np.isfinite(v)
    keep &= np.concatenate([[True], np.diff(t) > 0])
    if opts.outlier_k > 0:
        idx = np.flatnonzero(keep)
        for v in columns.values():
            bad = hampel_mask(v[idx], opts.outlier_window, opts.outlier_k)
            keep[idx[bad]] = False
    return keep


def _pose_derivatives(t: Array, x: Array, y: Array, yaw: Array) -> tuple[Array, Array, Array]:
    """Body velocities from the pose: Savitzky-Golay derivative (order 2, ~0.25 s window)."""
    from scipy.signal import savgol_filter

    dt = float(np.median(np.diff(t)))
    win = max(5, round(0.25 / dt) | 1)
    if win > t.size:
        win = t.size if t.size % 2 else t.size - 1
    if win < 3:
        zero = np.zeros_like(t)
        return zero, zero, zero
    dx, dy, dyaw = (savgol_filter(v, win, 2, deriv=1, delta=dt) for v in (x, y, yaw))
    c, s = np.cos(yaw), np.sin(yaw)
    return c * dx + s * dy, -s * dx + c * dy, dyaw


def build_dataset(raw: RawBag, params: VehicleParams, options: DatasetOptions | None = None,
                  topics: Mapping[str, str] | None = None) -> Dataset:
    """Commands and measurements of ``raw`` on one uniform grid, trimmed to the active part."""
    opts = options or DatasetOptions()
    topics = dict(DEFAULT_TOPICS if topics is None else topics)
    if 'odom' not in raw.series:
        raise CalibrationError(
            f'{raw.path}: no odometry topic {topics["odom"]} (nav_msgs/Odometry); the bag has: '
            f'{_topic_list(raw)}; map one with --topic odom=NAME')
    t_cmd, steer_cmd, wheel_cmd, cmd_source = _commands(raw, params, opts, topics)
    notes: list[str] = []

    odom = raw.series['odom']
    yaw = np.unwrap(yaw_from_quaternion(odom['qx'], odom['qy'], odom['qz'], odom['qw']))
    cols = {'x': odom['x'], 'y': odom['y'], 'yaw': yaw}
    keep = _clean(odom['t'], cols, opts)
    if keep.sum() < 10:
        raise CalibrationError(f'{raw.path}: {raw.roles["odom"]} has fewer than 10 usable '
                               'messages')
    n_out = int((~keep).sum())
    if n_out:
        notes.append(f'{n_out} odometry samples rejected (non-finite, out of order or outliers)')
    t_o = odom['t'][keep]
    t0 = max(float(t_o[0]), float(t_cmd[0]) if t_cmd.size else float(t_o[0]))
    t_end = float(t_o[-1])
    if t_end - t0 < 1.0:
        raise CalibrationError(f'{raw.path}: less than 1 s of odometry overlaps the commands')
    grid = t0 + np.arange(int(np.floor((t_end - t0) * opts.rate_hz)) + 1) / opts.rate_hz
    x = np.interp(grid, t_o, odom['x'][keep])
    y = np.interp(grid, t_o, odom['y'][keep])
    yaw_g = np.interp(grid, t_o, np.unwrap(yaw[keep]))
    twist = np.stack([odom['vx'][keep], odom['vy'][keep], odom['yaw_rate'][keep]])
    if np.any(np.abs(twist) > 1e-9):
        tw_keep = _clean(t_o, {'vx': twist[0], 'vy': twist[1], 'wz': twist[2]}, opts)
        vx, vy, wz_odom = (np.interp(grid, t_o[tw_keep], row[tw_keep]) for row in twist)
        vel_source = f'{raw.roles["odom"]} twist'
    else:
        vx, vy, wz_odom = _pose_derivatives(grid, x, y, yaw_g)
        vel_source = f'{raw.roles["odom"]} pose (differentiated)'
        notes.append('odometry twist is zero: velocities differentiated from the pose')

    wheel_g = _zoh(t_cmd, wheel_cmd, grid)
    # activity from a 0.2 s moving average of the speed: sensor noise alone never counts as motion
    n_avg = max(1, round(0.2 * opts.rate_hz))
    speed = np.convolve(np.hypot(vx, vy), np.ones(n_avg) / n_avg, mode='same')
    stationary = (np.abs(wheel_g) < 1e-6) & (speed < opts.idle_speed)

    yaw_rate, yaw_source, bias = wz_odom, vel_source, 0.0
    if opts.use_imu and 'imu' in raw.series:
        imu = raw.series['imu']
        ik = _clean(imu['t'], {'wz': imu['yaw_rate']}, opts)
        if ik.sum() >= 10:
            gyro = np.interp(grid, imu['t'][ik], imu['yaw_rate'][ik])
            if stationary.sum() >= 0.5 * opts.rate_hz:
                bias = float(np.mean(gyro[stationary]))
                how = 'mean at standstill'
            else:
                bias = float(np.median(gyro - wz_odom))
                how = f'median against {vel_source}'
            yaw_rate = gyro - bias
            yaw_source = f'{raw.roles["imu"]} (gyro bias {bias:+.4f} rad/s, {how})'

    wheel_meas = np.full_like(grid, np.nan)
    if 'joint_states' in raw.series:
        js = raw.series['joint_states']
        w = 0.5 * (js['rear_left'] + js['rear_right'])
        jk = _clean(js['t'], {'w': w}, opts)
        if jk.sum() >= 10:
            wheel_meas = np.interp(grid, js['t'][jk], w[jk])

    active = (np.abs(wheel_g) > 1e-6) | (speed > opts.idle_speed)
    moved = float(np.hypot(x - x[0], y - y[0]).max())
    if not active.any() or (float(speed.max()) < opts.idle_speed and moved < 0.05):
        raise CalibrationError(
            f'{raw.path}: no motion in the data (max speed {float(speed.max()):.3f} m/s, '
            f'max displacement {moved:.3f} m)')
    first = float(grid[np.argmax(active)]) - opts.idle_margin
    last = float(grid[len(active) - 1 - np.argmax(active[::-1])]) + opts.idle_margin
    sel = (grid >= first) & (grid <= last)
    if (~sel).any():
        notes.append(f'trimmed {float((~sel).sum()) / opts.rate_hz:.1f} s of idle data')
    return Dataset(name=raw.path, t=grid[sel], x=x[sel], y=y[sel], yaw=yaw_g[sel], vx=vx[sel],
                   vy=vy[sel], yaw_rate=yaw_rate[sel], wheel_speed=wheel_meas[sel],
                   t_cmd=t_cmd, steering_cmd=steer_cmd, wheel_speed_cmd=wheel_cmd,
                   gyro_bias=bias, command_source=cmd_source, yaw_rate_source=yaw_source,
                   notes=tuple(notes))


def load_dataset(path: str | Path, params: VehicleParams, options: DatasetOptions | None = None,
                 topic_overrides: Sequence[str] = ()) -> Dataset:
    """Read and preprocess one bag (see :func:`read_bag` and :func:`build_dataset`)."""
    topics = parse_topic_overrides(topic_overrides)
    return build_dataset(read_bag(path, topics), params, options, topics)
