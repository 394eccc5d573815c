"""Real-car data from a bag: commands and measurements on one time grid, and the pose track.

The bag is read through a recording description (:mod:`rc_sim_description.recording`; built from
the default topic names and ``--topic ROLE=/NAME`` when no ``--recording`` is given), see
:mod:`rc_sim_calibration.bagread`. Pipeline: per-role time series -> outlier rejection (Hampel
filter) -> yaw unwrapping -> resampling onto one uniform grid -> gyro-bias estimate -> trimming of
idle segments. Commands stay an event series (zero-order held by the replay). The measured pose
stream is also kept as it is (``raw_track``, what the window protocol of
``docs/prediction_windows.md`` scores) and cleaned (``track``, what the fit's windows use).

Command sources, first present wins: steering + drive (std_msgs scalars with their kinds: angle
or normalised steering; speed, wheel speed or throttle drive), ``cmd_vel`` (geometry_msgs/Twist
through the control core's mapper), ``command`` (ackermann_msgs AckermannDrive[Stamped], wheel
speed = speed / wheel_radius); an ``enable`` deadman gates the drive command. Motion: ``pose``
(the measured frame) or ``odom`` (nav_msgs/Odometry; its child frame says where it is), ``imu``
(yaw rate minus gyro bias), ``wheel_speed`` or ``joint_states`` (measured rear wheel speed).
The measured frame's offset in base_link: :mod:`rc_sim_calibration.measured_point`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
import math
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_calibration.bagread import (
    DEFAULT_TOPICS,
    RawBag,
    clip_raw,
    parse_topic_overrides,
    read_bag,
)
from rc_sim_calibration.baselines import PoseTrack, make_pose_track
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.measured_point import resolve_offset
from rc_sim_description.frames import quaternion_to_yaw
from rc_sim_description.params import VehicleParams
from rc_sim_description.recording import base_link_pose

__all__ = [
    'DEFAULT_TOPICS',
    'Dataset',
    'DatasetOptions',
    'RawBag',
    'build_dataset',
    'gyro_time_shift',
    'hampel_mask',
    'load_dataset',
    'parse_topic_overrides',
    'read_bag',
    'yaw_from_quaternion',
]

Array = np.ndarray


# --------------------------------------------------------------------------- message fields
yaw_from_quaternion = quaternion_to_yaw  # the one helper (rc_sim_description.frames)


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


def _empty() -> Array:
    return np.zeros(0)


@dataclass(frozen=True)
class Dataset:
    """One bag on a uniform grid; t [s] from the bag's first message, pose in the odom frame.

    ``x, y, yaw, vx, vy`` are of base_link, derived from the measured frame with ``pose_offset``
    (the zero placeholder when the offset is unknown: ``offset_source == ''``); ``mvx, mvy`` are
    the measured point's velocity in its own axes (offset-free).
    """

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
    steering_cmd: Array  # steering command in steering_kind (angle [rad] or normalised)
    wheel_speed_cmd: Array  # commanded rear wheel speed [rad/s] (NaN for a throttle drive)
    gyro_bias: float = 0.0
    command_source: str = ''
    yaw_rate_source: str = ''
    notes: tuple[str, ...] = field(default_factory=tuple)
    steering_kind: str = 'angle'      # angle [rad] | normalised ([-1, 1] servo command)
    drive_kind: str = 'wheel_speed'   # wheel_speed [rad/s] (speed commands converted) | throttle
    #                                   | acceleration [m/s^2] (force commands converted)
    drive_cmd: Array = field(default_factory=_empty)  # drive values in drive_kind
    t_enable: Array = field(default_factory=_empty)   # deadman events [s]
    enable: Array = field(default_factory=_empty)     # 1 where commands act
    pose_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)  # measured frame in base_link
    pose_x: Array = field(default_factory=_empty)    # measured frame x [m]
    pose_y: Array = field(default_factory=_empty)    # measured frame y [m]
    pose_yaw: Array = field(default_factory=_empty)  # measured frame yaw [rad]
    offset_source: str = 'pose frame base_link'      # '' = offset unknown (fitted)
    mvx: Array = field(default_factory=_empty)       # measured point velocity, own axes [m/s]
    mvy: Array = field(default_factory=_empty)
    start_ns: int = 0                                # bag clock of t = 0 [ns]
    track: PoseTrack | None = None                   # cleaned measured pose samples (t [s])
    raw_track: PoseTrack | None = None               # every pose message (window protocol)
    imu_t: Array = field(default_factory=_empty)     # gyro samples on the pose clock [s]
    imu_yaw_rate: Array = field(default_factory=_empty)  # gyro z minus its bias [rad/s]
    imu_shift: float = 0.0                           # gyro stamp - pose clock [s]
    drive_command: str = 'wheel_speed'               # the car's own: wheel_speed|speed|throttle

    @property
    def duration(self) -> float:
        """Length of the grid [s]."""
        return float(self.t[-1] - self.t[0]) if self.t.size else 0.0

    @property
    def has_wheel_speed(self) -> bool:
        """True when the bag had rear wheel speeds."""
        return bool(np.isfinite(self.wheel_speed).any())

    @property
    def offset_known(self) -> bool:
        """True when the measured frame's offset was given or read from the bag."""
        return bool(self.offset_source)

    @property
    def kinds(self) -> tuple[str, str]:
        """(steering kind, drive kind)."""
        return self.steering_kind, self.drive_kind

    def enabled_at(self, t: Array) -> Array:
        """1 where the deadman lets commands act (zero-order held; 1 without a deadman)."""
        if not self.t_enable.size:
            return np.ones(np.shape(t))
        return (_zoh(self.t_enable, self.enable, t) != 0).astype(float)

    def commands_at(self, t: Array) -> tuple[Array, Array]:
        """Zero-order-held (steering, drive) commands at times ``t`` in their kinds (steering
        angle [rad] or normalised; wheel speed [rad/s] or duty); the drive is zero while the
        deadman is off (the car applies throttle x deadman)."""
        return (_zoh(self.t_cmd, self.steering_cmd, t),
                _zoh(self.t_cmd, self.drive_cmd, t) * self.enabled_at(t))

    def time_slice(self, t_start: float, t_end: float, name: str | None = None) -> Dataset:
        """Grid samples with t_start <= t <= t_end (commands kept whole for the history)."""
        keep = (self.t >= t_start) & (self.t <= t_end)
        arrays = {k: getattr(self, k)[keep] for k in
                  ('t', 'x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'wheel_speed', 'pose_x',
                   'pose_y', 'pose_yaw', 'mvx', 'mvy') if getattr(self, k).size == self.t.size}
        def cut(tr: PoseTrack | None) -> PoseTrack | None:
            if tr is None:
                return None
            sel = (tr.t >= t_start) & (tr.t <= t_end)
            return PoseTrack(tr.t[sel], tr.x[sel], tr.y[sel], tr.yaw[sel])

        return replace(self, name=name or self.name, track=cut(self.track),
                       raw_track=cut(self.raw_track), **arrays)


def _commands(raw: RawBag, params: VehicleParams, opts: DatasetOptions,
              topics: Mapping[str, str]) -> tuple[Array, Array, Array, Array, str, str, str, str]:
    """(t, steering, wheel speed [rad/s] (NaN for throttle and acceleration), drive in its kind
    (an acceleration [m/s^2] for force commands too), steering kind, drive kind, source, the
    car's own drive command: wheel_speed, speed, throttle, acceleration or force)."""
    s = raw.series
    drive_key = 'wheel_speed' if 'wheel_speed' in s else 'drive'
    if 'steering' in s and drive_key in s:
        t = np.union1d(s['steering']['t'], s[drive_key]['t'])
        steer = _zoh(s['steering']['t'], s['steering']['value'], t)
        drive = _zoh(s[drive_key]['t'], s[drive_key]['value'], t)
        kind = raw.kinds.get(drive_key, 'wheel_speed')
        wheel = {'wheel_speed': drive, 'speed': drive / params.geometry.wheel_radius}.get(
            kind, np.full_like(drive, np.nan))
        source = f'{raw.roles["steering"]} + {raw.roles[drive_key]} ({kind})'
        if kind in ('acceleration', 'force'):  # an acceleration drive (a force: / the mass)
            acc = drive / params.mass_properties.mass if kind == 'force' else drive
            return (t, steer, wheel, acc, raw.kinds.get('steering', 'angle'), 'acceleration',
                    source, kind)
        return (t, steer, wheel, drive if kind == 'throttle' else wheel,
                raw.kinds.get('steering', 'angle'),
                'throttle' if kind == 'throttle' else 'wheel_speed', source, kind)
    if 'cmd_vel' in s:
        from rc_sim_control.ackermann import MapperConfig, map_sequence

        config = MapperConfig.from_vehicle(params, mode=opts.cmd_vel_mode,
                                           **dict(opts.mapper_overrides))
        mapped = map_sequence(s['cmd_vel']['t'], s['cmd_vel']['linear_x'],
                              s['cmd_vel']['angular_z'], config)
        wheel = np.asarray(mapped.wheel_speed, dtype=float)
        return (s['cmd_vel']['t'], np.asarray(mapped.steering_angle, dtype=float), wheel, wheel,
                'angle', 'wheel_speed',
                f'{raw.roles["cmd_vel"]} (mapper mode {opts.cmd_vel_mode})', 'wheel_speed')
    if 'ackermann' in s:
        a = s['ackermann']
        wheel = a['speed'] / params.geometry.wheel_radius
        return (a['t'], a['steering_angle'].copy(), wheel, wheel, 'angle', 'wheel_speed',
                f'{raw.roles["ackermann"]} (ackermann_msgs)', 'speed')
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


def gyro_time_shift(t_imu: Array, gyro: Array, grid: Array, wz_pose: Array,
                    max_shift: float = 0.1) -> float:
    """Clock offset s [s] of the gyro against the pose: gyro(t + s) best matches the pose's yaw
    rate (the lag of the cross-correlation maximum over |s| <= max_shift, 2.5 ms steps; a sensor
    stamping its data late or early is common: the F1TENTH VESC IMU leads its particle filter by
    about 30 ms), refined by a parabola through the peak. 0 when the correlation is weak
    (< 0.8), the yaw rate hardly varies, or the offset is below 5 ms."""
    shifts = np.arange(-max_shift, max_shift + 1e-9, 0.0025)
    keep = (grid > t_imu[0] + max_shift) & (grid < t_imu[-1] - max_shift)
    if keep.sum() < 50 or float(np.std(wz_pose[keep])) < 0.05:
        return 0.0
    ref = wz_pose[keep] - np.mean(wz_pose[keep])
    corr = []
    for s in shifts:
        g = np.interp(grid[keep] + s, t_imu, gyro)
        g = g - np.mean(g)
        corr.append(float(ref @ g) / float(np.linalg.norm(ref) * np.linalg.norm(g) or 1.0))
    best = int(np.argmax(corr))
    if corr[best] < 0.8:
        return 0.0
    shift = float(shifts[best])
    if 0 < best < len(corr) - 1:             # parabolic refinement of the peak
        c0, c1, c2 = corr[best - 1], corr[best], corr[best + 1]
        den = c0 - 2.0 * c1 + c2
        if den < 0:
            shift += 0.0025 * 0.5 * (c0 - c2) / den
    return shift if abs(shift) >= 0.005 else 0.0   # within a few ms: same clock


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
                  topics: Mapping[str, str] | None = None, *,
                  pose_offset: tuple[float, float, float] | None = None) -> Dataset:
    """Commands and measurements of ``raw`` on one uniform grid, trimmed to the active part.

    The motion source is the ``pose`` series (measured frame) or else ``odom`` (an Odometry whose
    child frame is base_link unless it says otherwise). base_link pose = measured pose moved by
    the offset (:func:`base_link_pose`); ``pose_offset`` (``--odom-offset``) overrides what the
    recording and the bag say (:func:`rc_sim_calibration.measured_point.resolve_offset`).
    """
    opts = options or DatasetOptions()
    topics = dict(DEFAULT_TOPICS if topics is None else topics)
    source = 'pose' if 'pose' in raw.series else 'odom'
    if source not in raw.series:
        raise CalibrationError(
            f'{raw.path}: no odometry topic {topics["odom"]} (nav_msgs/Odometry) and no pose; '
            f'the bag has: {_topic_list(raw)}; map one with --topic odom=NAME or --topic '
            'pose=NAME, or describe the recording with --recording')
    t_cmd, steer_cmd, wheel_cmd, drive_cmd, steer_kind, drive_kind, cmd_source, drive_command \
        = _commands(raw, params, opts, topics)
    notes: list[str] = []
    motion = raw.series[source]
    frame = raw.pose_frame or ('base_link' if source == 'odom' else '')
    info = resolve_offset(explicit=pose_offset, declared=raw.offset_declared or (
        source == 'pose' and any(raw.pose_offset)), recording_offset=raw.pose_offset,
        frame=frame, static_tf=raw.static_tf)
    offset = info.offset
    if not info.known:
        notes.append(f'the pose of {raw.roles[source]} is of frame {frame or "(unnamed)"} at an '
                     'unknown offset from base_link: the fit estimates it')
    if source == 'pose':
        yaw_m = np.unwrap(motion['yaw'])
    else:
        yaw_m = np.unwrap(yaw_from_quaternion(motion['qx'], motion['qy'], motion['qz'],
                                              motion['qw']))
    raw_track = make_pose_track(motion['t'], motion['x'], motion['y'], yaw_m) \
        if np.all(np.isfinite(np.stack([motion['t'], motion['x'], motion['y'], yaw_m]))) \
        else None
    cols = {'x': motion['x'], 'y': motion['y'], 'yaw': yaw_m}
    keep = _clean(motion['t'], cols, opts)
    if keep.sum() < 10:
        raise CalibrationError(f'{raw.path}: {raw.roles[source]} has fewer than 10 usable '
                               'messages')
    n_out = int((~keep).sum())
    if n_out:
        notes.append(f'{n_out} pose samples rejected (non-finite, out of order or outliers)')
    t_o = motion['t'][keep]
    track = make_pose_track(t_o, motion['x'][keep], motion['y'][keep], yaw_m[keep])
    t0 = max(float(t_o[0]), float(t_cmd[0]) if t_cmd.size else float(t_o[0]))
    t_end = float(t_o[-1])
    if t_end - t0 < 1.0:
        raise CalibrationError(f'{raw.path}: less than 1 s of pose data overlaps the commands')
    from rc_sim_description.limits import MAX_DURATION_S

    MAX_DURATION_S.check(t_end - t0, f'{raw.path}: the pose and command messages span')
    grid = t0 + np.arange(int(np.floor((t_end - t0) * opts.rate_hz)) + 1) / opts.rate_hz
    x_m = np.interp(grid, t_o, motion['x'][keep])
    y_m = np.interp(grid, t_o, motion['y'][keep])
    yaw_mg = np.interp(grid, t_o, np.unwrap(yaw_m[keep]))
    x, y, yaw_g = base_link_pose(x_m, y_m, yaw_mg, offset)
    twist = np.stack([motion['vx'][keep], motion['vy'][keep], motion['yaw_rate'][keep]])
    if np.all(np.isfinite(twist)) and np.any(np.abs(twist) > 1e-9):
        tw_keep = _clean(t_o, {'vx': twist[0], 'vy': twist[1], 'wz': twist[2]}, opts)
        vx_m, vy_m, wz_odom = (np.interp(grid, t_o[tw_keep], row[tw_keep]) for row in twist)
        vel_source = f'{raw.roles[source]} twist'
    else:
        vx_m, vy_m, wz_odom = _pose_derivatives(grid, x_m, y_m, yaw_mg)
        vel_source = f'{raw.roles[source]} pose (differentiated)'
        notes.append('no twist in the pose source: velocities differentiated from the pose')
    ox, oy, oyaw = offset  # velocity of the measured point -> base_link: v_b = R v_m - w x r
    c, s_ = math.cos(oyaw), math.sin(oyaw)
    vx = c * vx_m - s_ * vy_m + wz_odom * oy
    vy = s_ * vx_m + c * vy_m - wz_odom * ox

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
    imu_t, imu_r, shift = np.zeros(0), np.zeros(0), 0.0
    if opts.use_imu and 'imu' in raw.series:
        imu = raw.series['imu']
        ik = _clean(imu['t'], {'wz': imu['yaw_rate']}, opts)
        if ik.sum() >= 10:
            _, _, wz_pose = _pose_derivatives(grid, x_m, y_m, yaw_mg)
            shift = gyro_time_shift(imu['t'][ik], imu['yaw_rate'][ik], grid, wz_pose)
            imu_t = imu['t'][ik] - shift          # on the pose clock
            gyro = np.interp(grid, imu_t, imu['yaw_rate'][ik])
            if stationary.sum() >= 0.5 * opts.rate_hz:
                bias = float(np.mean(gyro[stationary]))
                how = 'mean at standstill'
            else:
                bias = float(np.median(gyro - wz_pose))
                how = 'median against the pose'
            yaw_rate = gyro - bias
            imu_r = imu['yaw_rate'][ik] - bias
            yaw_source = (f'{raw.roles["imu"]} (gyro bias {bias:+.4f} rad/s, {how}; '
                          f'{-1e3 * shift:+.1f} ms to the pose clock)')
            if abs(shift) > 0.005:
                notes.append(f'the gyro leads the pose stamps by {-1e3 * shift:.0f} ms '
                             '(cross-correlation): its samples are moved onto the pose clock')

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
                   drive_command=drive_command,
                   drive_cmd=drive_cmd, t_enable=t_en, enable=en, pose_offset=offset,
                   pose_x=x_m[sel], pose_y=y_m[sel], pose_yaw=yaw_mg[sel],
                   offset_source=info.source, mvx=vx_m[sel], mvy=vy_m[sel],
                   start_ns=raw.start_ns, track=track, raw_track=raw_track, imu_t=imu_t,
                   imu_yaw_rate=imu_r, imu_shift=shift)


def load_dataset(path: str | Path, params: VehicleParams, options: DatasetOptions | None = None,
                 topic_overrides: Sequence[str] = (), *, recording: Any = None,
                 skip_corrupt: bool = False,
                 pose_offset: tuple[float, float, float] | None = None,
                 span: tuple[float, float] | None = None) -> Dataset:
    """Read and preprocess one bag (see :func:`read_bag` and :func:`build_dataset`);
    ``recording`` (a Recording or a YAML path) replaces the topic-name mapping; ``pose_offset``
    is the measured frame in base_link when given on the command line; ``span`` keeps only
    ``t_from <= t < t_to`` [s since the bag's first message] (:func:`clip_raw`)."""
    topics = parse_topic_overrides(topic_overrides)
    if recording is not None and topic_overrides:
        raise CalibrationError('give either --recording or --topic, not both')
    named = [item.partition('=')[0].strip() for item in topic_overrides]
    raw = read_bag(path, topics, recording=recording, skip_corrupt=skip_corrupt, named=named)
    if span is not None:
        raw = clip_raw(raw, *span)
    return build_dataset(raw, params, options, topics, pose_offset=pose_offset)
