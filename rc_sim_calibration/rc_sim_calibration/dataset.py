"""Real-car data from a bag: commands and measurements on one time grid.

The bag is read through a recording description (:mod:`rc_sim_description.recording`; built from
the default topic names and ``--topic ROLE=/NAME`` when no ``--recording`` is given). Pipeline:
per-role time series (header stamp when on the bag's clock, else log time) -> outlier rejection
(Hampel filter) -> yaw unwrapping -> resampling onto one uniform grid -> gyro-bias estimate ->
trimming of idle segments. Commands stay an event series (zero-order held by the replay).

Command sources, first present wins: steering + drive (std_msgs scalars, with their kinds),
``cmd_vel`` (geometry_msgs/Twist through the control core's mapper), ``command`` (ackermann_msgs
AckermannDrive[Stamped], wheel speed = speed / wheel_radius); an ``enable`` deadman gates the drive
command. Motion: ``pose`` (the measured frame, with its offset in base_link) or ``odom``
(nav_msgs/Odometry of base_link; twist if non-zero, else differentiated pose), ``imu`` (yaw rate
minus gyro bias), ``wheel_speed`` or ``joint_states`` (measured rear wheel speed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
import math
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_calibration.errors import CalibrationError
from rc_sim_description.cli_support import split_key_value
from rc_sim_description.frames import quaternion_to_yaw
from rc_sim_description.params import VehicleParams
from rc_sim_description.recording import base_link_pose

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


# --------------------------------------------------------------------------- message fields
yaw_from_quaternion = quaternion_to_yaw  # the one helper (rc_sim_description.frames)


# --------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class RawBag:
    """The roles of one bag as arrays; times in s since the bag's first message.

    ``series`` keys: steering, wheel_speed (commanded [rad/s]), drive (other kinds), cmd_vel,
    ackermann, enable, odom (x, y, qx, qy, qz, qw, vx, vy, yaw_rate), pose (x, y, yaw, vx, vy,
    yaw_rate of the measured frame; NaN twist unless Odometry), imu, joint_states, wheel_meas.
    """

    path: str
    start_ns: int
    topics: dict[str, str]          # every topic of the bag -> message type
    roles: dict[str, str]           # series name -> topic actually read
    series: dict[str, dict[str, Array]]  # series name -> {'t': (K,) s, field: (K,)}
    kinds: dict[str, str] = field(default_factory=dict)  # series name -> kind
    pose_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    clocks: dict[str, str] = field(default_factory=dict)  # series name -> 'header' | 'log'


def default_recording(bag: Any, topics: Mapping[str, str] | None = None) -> Any:
    """The recording a ``--topic`` mapping describes: each role whose topic is in the bag (a
    wrong type is an error naming the role); default names that are absent are left out."""
    from rc_sim_description.recording import ROLE_TYPES, recording_from_mapping

    topics = dict(DEFAULT_TOPICS if topics is None else topics)
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


def read_bag(path: str | Path, topics: Mapping[str, str] | None = None, *,
             recording: Any = None, skip_corrupt: bool = False) -> RawBag:
    """Read the roles of a bag (directory, .db3, .mcap or ROS 1 .bag) described by
    ``recording`` (a Recording or a YAML path), else by the ``topics`` role mapping.

    Per message, the time is the header stamp when the message has a non-zero one on the same
    clock as the log times (within 1 s), else the log (receive) time.
    """
    from rc_sim_description.bags import open_bag
    from rc_sim_description.recording import Recording, extract, load_recording

    bag_path = Path(path)
    with open_bag(bag_path, skip_corrupt=skip_corrupt) as bag:
        rec = recording
        if rec is not None and not isinstance(rec, Recording):
            rec = load_recording(rec)
        if rec is None:
            rec = default_recording(bag, topics)
        channels = extract(rec, bag) if rec is not None else {}
        start_ns = bag.start_ns
        available = {name: info.msgtype for name, info in bag.topics.items()}
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
    return RawBag(path=str(bag_path), start_ns=int(start_ns), topics=available, roles=roles,
                  series=series, kinds=kinds, pose_offset=offset, clocks=clocks)


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
    steering_kind: str = 'angle'      # angle [rad] | normalised ([-1, 1] servo command)
    drive_kind: str = 'wheel_speed'   # wheel_speed [rad/s] (speed commands converted) | throttle
    drive_cmd: Array = field(default_factory=lambda: np.zeros(0))  # drive values in drive_kind
    t_enable: Array = field(default_factory=lambda: np.zeros(0))   # deadman events [s]
    enable: Array = field(default_factory=lambda: np.zeros(0))     # 1 where commands act
    pose_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)  # measured frame in base_link
    pose_x: Array = field(default_factory=lambda: np.zeros(0))    # measured frame x [m]
    pose_y: Array = field(default_factory=lambda: np.zeros(0))    # measured frame y [m]
    pose_yaw: Array = field(default_factory=lambda: np.zeros(0))  # measured frame yaw [rad]

    @property
    def duration(self) -> float:
        """Length of the grid [s]."""
        return float(self.t[-1] - self.t[0]) if self.t.size else 0.0

    @property
    def has_wheel_speed(self) -> bool:
        """True when the bag had rear wheel speeds."""
        return bool(np.isfinite(self.wheel_speed).any())

    @property
    def fit_supported(self) -> str:
        """'' when the fit can replay these commands, else why not (one line)."""
        if self.steering_kind != 'angle':
            return (f'{self.name}: steering kind {self.steering_kind!r} is not supported by the '
                    'fit yet (it replays steering angles in rad)')
        if self.drive_kind == 'throttle':
            return (f'{self.name}: drive kind {self.drive_kind!r} is not supported by the fit '
                    'yet (it replays speed or wheel-speed commands)')
        return ''

    def enabled_at(self, t: Array) -> Array:
        """1 where the deadman lets commands act (zero-order held; 1 without a deadman)."""
        if not self.t_enable.size:
            return np.ones(np.shape(t))
        return (_zoh(self.t_enable, self.enable, t) != 0).astype(float)

    def commands_at(self, t: Array) -> tuple[Array, Array]:
        """Zero-order-held (steering [rad], wheel speed [rad/s]) commands at times ``t``; the
        wheel speed is zero while the deadman is off. CalibrationError for kinds the fit does
        not replay yet (normalised steering, throttle)."""
        problem = self.fit_supported
        if problem:
            raise CalibrationError(problem)
        return (_zoh(self.t_cmd, self.steering_cmd, t),
                _zoh(self.t_cmd, self.wheel_speed_cmd, t) * self.enabled_at(t))

    def time_slice(self, t_start: float, t_end: float, name: str | None = None) -> Dataset:
        """Grid samples with t_start <= t <= t_end (commands kept whole for the history)."""
        keep = (self.t >= t_start) & (self.t <= t_end)
        arrays = {k: getattr(self, k)[keep] for k in
                  ('t', 'x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'wheel_speed', 'pose_x',
                   'pose_y', 'pose_yaw') if getattr(self, k).size == self.t.size}
        return replace(self, name=name or self.name, **arrays)


def _commands(raw: RawBag, params: VehicleParams, opts: DatasetOptions,
              topics: Mapping[str, str]) -> tuple[Array, Array, Array, Array, str, str, str]:
    """(t, steering, wheel speed [rad/s] (NaN for throttle), drive in its kind, steering kind,
    drive kind, source)."""
    s = raw.series
    drive_key = 'wheel_speed' if 'wheel_speed' in s else 'drive'
    if 'steering' in s and drive_key in s:
        t = np.union1d(s['steering']['t'], s[drive_key]['t'])
        steer = _zoh(s['steering']['t'], s['steering']['value'], t)
        drive = _zoh(s[drive_key]['t'], s[drive_key]['value'], t)
        kind = raw.kinds.get(drive_key, 'wheel_speed')
        wheel = {'wheel_speed': drive, 'speed': drive / params.geometry.wheel_radius}.get(
            kind, np.full_like(drive, np.nan))
        return (t, steer, wheel, drive, raw.kinds.get('steering', 'angle'),
                'throttle' if kind == 'throttle' else 'wheel_speed',
                f'{raw.roles["steering"]} + {raw.roles[drive_key]} ({kind})')
    if 'cmd_vel' in s:
        from rc_sim_control.ackermann import MapperConfig, map_sequence

        config = MapperConfig.from_vehicle(params, mode=opts.cmd_vel_mode,
                                           **dict(opts.mapper_overrides))
        mapped = map_sequence(s['cmd_vel']['t'], s['cmd_vel']['linear_x'],
                              s['cmd_vel']['angular_z'], config)
        wheel = np.asarray(mapped.wheel_speed, dtype=float)
        return (s['cmd_vel']['t'], np.asarray(mapped.steering_angle, dtype=float), wheel, wheel,
                'angle', 'wheel_speed',
                f'{raw.roles["cmd_vel"]} (mapper mode {opts.cmd_vel_mode})')
    if 'ackermann' in s:
        a = s['ackermann']
        wheel = a['speed'] / params.geometry.wheel_radius
        return (a['t'], a['steering_angle'].copy(), wheel, wheel, 'angle', 'wheel_speed',
                f'{raw.roles["ackermann"]} (ackermann_msgs)')
    raise CalibrationError(
        f'{raw.path}: no command topics ({topics["steering"]} + {topics["wheel_speed"]}, '
        f'{topics["cmd_vel"]} or {topics["ackermann"]}); the bag has: '
        f'{_topic_list(raw)}; map them with --topic steering=NAME --topic wheel_speed=NAME, '
        f'--topic cmd_vel=NAME or --topic ackermann=NAME, or describe the recording with '
        f'--recording')


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
    """Commands and measurements of ``raw`` on one uniform grid, trimmed to the active part.

    The motion source is the ``pose`` series (measured frame; base_link pose = measured pose
    moved by the declared offset, see :func:`base_link_pose`) or else ``odom`` (base_link).
    """
    opts = options or DatasetOptions()
    topics = dict(DEFAULT_TOPICS if topics is None else topics)
    source = 'pose' if 'pose' in raw.series else 'odom'
    if source not in raw.series:
        raise CalibrationError(
            f'{raw.path}: no odometry topic {topics["odom"]} (nav_msgs/Odometry) and no pose; '
            f'the bag has: {_topic_list(raw)}; map one with --topic odom=NAME or --topic '
            'pose=NAME, or describe the recording with --recording')
    t_cmd, steer_cmd, wheel_cmd, drive_cmd, steer_kind, drive_kind, cmd_source = _commands(
        raw, params, opts, topics)
    notes: list[str] = []
    motion = raw.series[source]
    offset = raw.pose_offset if source == 'pose' else (0.0, 0.0, 0.0)
    if source == 'pose':
        yaw_m = np.unwrap(motion['yaw'])
    else:
        yaw_m = np.unwrap(yaw_from_quaternion(motion['qx'], motion['qy'], motion['qz'],
                                              motion['qw']))
    cols = {'x': motion['x'], 'y': motion['y'], 'yaw': yaw_m}
    keep = _clean(motion['t'], cols, opts)
    if keep.sum() < 10:
        raise CalibrationError(f'{raw.path}: {raw.roles[source]} has fewer than 10 usable '
                               'messages')
    n_out = int((~keep).sum())
    if n_out:
        notes.append(f'{n_out} pose samples rejected (non-finite, out of order or outliers)')
    t_o = motion['t'][keep]
    t0 = max(float(t_o[0]), float(t_cmd[0]) if t_cmd.size else float(t_o[0]))
    t_end = float(t_o[-1])
    if t_end - t0 < 1.0:
        raise CalibrationError(f'{raw.path}: less than 1 s of pose data overlaps the commands')
    grid = t0 + np.arange(int(np.floor((t_end - t0) * opts.rate_hz)) + 1) / opts.rate_hz
    x_m = np.interp(grid, t_o, motion['x'][keep])
    y_m = np.interp(grid, t_o, motion['y'][keep])
    yaw_mg = np.interp(grid, t_o, np.unwrap(yaw_m[keep]))
    x, y, yaw_g = base_link_pose(x_m, y_m, yaw_mg, offset)
    twist = np.stack([motion['vx'][keep], motion['vy'][keep], motion['yaw_rate'][keep]])
    if np.all(np.isfinite(twist)) and np.any(np.abs(twist) > 1e-9):
        tw_keep = _clean(t_o, {'vx': twist[0], 'vy': twist[1], 'wz': twist[2]}, opts)
        vx_m, vy_m, wz_odom = (np.interp(grid, t_o[tw_keep], row[tw_keep]) for row in twist)
        ox, oy, oyaw = offset  # twist of the measured frame -> base_link: v_b = R v_m - w x r
        c, s_ = math.cos(oyaw), math.sin(oyaw)
        vx = c * vx_m - s_ * vy_m + wz_odom * oy
        vy = s_ * vx_m + c * vy_m - wz_odom * ox
        vel_source = f'{raw.roles[source]} twist'
    else:
        vx, vy, wz_odom = _pose_derivatives(grid, x, y, yaw_g)
        vel_source = f'{raw.roles[source]} pose (differentiated)'
        notes.append('no twist in the pose source: velocities differentiated from the pose')

    t_en = raw.series['enable']['t'] if 'enable' in raw.series else np.zeros(0)
    en = (raw.series['enable']['value'] != 0).astype(float) if 'enable' in raw.series \
        else np.zeros(0)
    gate = (_zoh(t_en, en, grid) != 0).astype(float) if t_en.size else np.ones_like(grid)
    drive_g = np.nan_to_num(_zoh(t_cmd, drive_cmd, grid)) * gate
    # activity from a 0.2 s moving average of the speed: sensor noise alone never counts as motion
    n_avg = max(1, round(0.2 * opts.rate_hz))
    speed = np.convolve(np.hypot(vx, vy), np.ones(n_avg) / n_avg, mode='same')
    stationary = (np.abs(drive_g) < 1e-6) & (speed < opts.idle_speed)

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
    if 'wheel_meas' in raw.series:
        wm = raw.series['wheel_meas']
        scale = 1.0 / params.geometry.wheel_radius if raw.kinds.get('wheel_meas') == 'speed' \
            else 1.0
        wk = _clean(wm['t'], {'w': wm['value']}, opts)
        if wk.sum() >= 10:
            wheel_meas = np.interp(grid, wm['t'][wk], wm['value'][wk] * scale)
    elif 'joint_states' in raw.series:
        js = raw.series['joint_states']
        w = 0.5 * (js['rear_left'] + js['rear_right'])
        jk = _clean(js['t'], {'w': w}, opts)
        if jk.sum() >= 10:
            wheel_meas = np.interp(grid, js['t'][jk], w[jk])

    active = (np.abs(drive_g) > 1e-6) | (speed > opts.idle_speed)
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
                   notes=tuple(notes), steering_kind=steer_kind, drive_kind=drive_kind,
                   drive_cmd=drive_cmd, t_enable=t_en, enable=en, pose_offset=offset,
                   pose_x=x_m[sel], pose_y=y_m[sel], pose_yaw=yaw_mg[sel])


def load_dataset(path: str | Path, params: VehicleParams, options: DatasetOptions | None = None,
                 topic_overrides: Sequence[str] = (), *, recording: Any = None,
                 skip_corrupt: bool = False) -> Dataset:
    """Read and preprocess one bag (see :func:`read_bag` and :func:`build_dataset`);
    ``recording`` (a Recording or a YAML path) replaces the topic-name mapping."""
    topics = parse_topic_overrides(topic_overrides)
    if recording is not None and topic_overrides:
        raise CalibrationError('give either --recording or --topic, not both')
    return build_dataset(read_bag(path, topics, recording=recording, skip_corrupt=skip_corrupt),
                         params, options, topics)
