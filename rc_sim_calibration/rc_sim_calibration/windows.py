"""The fit's and the replay's windows: the window protocol of ``docs/prediction_windows.md``.

Each recording's pose stream is tiled into windows of H seconds (:func:`baselines.make_windows`);
every used window starts from the measured state of the measured frame at its first sample (the
local quadratic fit), and is predicted open loop from the recorded commands at every pose stamp
of the window. The fit scores exactly these predictions, so its cost and ``rcsim replay
--horizon`` (checked by the independent evaluator) are one computation.

Per window this module holds the truth at the samples (raw measured position; velocity of the
measured point in its own axes and yaw rate from the local fit, NaN where the fit is not valid)
and the commands on the physics-step grid from ``lookback`` seconds before the window start to
its end (the history sets the actuator states and feeds the transport delay). The fit's windows
leave out those whose truth is physically implausible (:data:`MAX_TRUTH_ACCELERATION`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
import math

import numpy as np

from rc_sim_calibration.baselines import (
    PoseTrack,
    Windows,
    fit_half_width,
    local_quadratic_fit,
    make_windows,
)
from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_description.constants import GRAVITY_MPS2

__all__ = ['MAX_TRUTH_ACCELERATION', 'FitWindows', 'build_windows']

Array = np.ndarray
#: [m/s^2] a window whose measured truth accelerates beyond this is left out of the fit (3 g:
#: three times what tyres with a friction coefficient of 1 can give)
MAX_TRUTH_ACCELERATION = 3.0 * GRAVITY_MPS2
ACCELERATION_BASELINE = 0.2  # [s] over which the truth's acceleration is measured


@dataclass(frozen=True)
class FitWindows:
    """W protocol windows over one or more datasets, with S scored samples.

    Per window (W,): ``bag`` (dataset index), ``index`` (grid number k), ``start`` (first stamp,
    s on the dataset clock), measured-frame initial state ``x0 y0 yaw0 vx0 vy0 yaw_rate0``.
    Per sample (S,): ``sample_window`` (window position), ``tau`` (time since the window's
    start), truth ``x y yaw`` (raw), ``vx vy yaw_rate`` (local fit), ``gyro`` (the IMU's yaw rate
    on the pose clock, NaN without one) and ``first`` (the window's
    first sample, which is the initial state and not scored). Commands: ``t_cmd`` (C,) relative
    to the window start, from ``-lookback``; ``steering_cmd``/``drive_cmd`` (W, C) in the
    datasets' kinds (drive gated by the deadman).
    """

    horizon: float
    bag: Array
    index: Array
    start: Array
    x0: Array
    y0: Array
    yaw0: Array
    vx0: Array
    vy0: Array
    yaw_rate0: Array
    sample_window: Array
    tau: Array
    x: Array
    y: Array
    yaw: Array
    vx: Array
    vy: Array
    yaw_rate: Array
    gyro: Array
    first: Array
    t_cmd: Array
    steering_cmd: Array
    drive_cmd: Array
    steering_kind: str
    drive_kind: str
    names: tuple[str, ...]
    offset_known: tuple[bool, ...]
    offsets: tuple[tuple[float, float, float], ...]
    start_ns: tuple[int, ...]
    skipped: tuple[dict[str, list[int]], ...]
    noise: tuple[dict[str, float], ...] = ()

    @property
    def n(self) -> int:
        """Number of windows."""
        return int(self.bag.size)

    @property
    def n_back(self) -> int:
        """Command samples before the window start."""
        return int(np.sum(self.t_cmd < -1e-12))

    def scored(self) -> Array:
        """Mask (S,) of the scored samples (every sample after its window's first)."""
        return ~self.first

    def subset(self, keep: Array) -> FitWindows:
        """The windows selected by a boolean mask (W,), with their samples."""
        keep = np.asarray(keep, dtype=bool)
        new_pos = np.cumsum(keep) - 1
        s_keep = keep[self.sample_window]
        per_w = {k: getattr(self, k)[keep] for k in
                 ('bag', 'index', 'start', 'x0', 'y0', 'yaw0', 'vx0', 'vy0', 'yaw_rate0',
                  'steering_cmd', 'drive_cmd')}
        per_s = {k: getattr(self, k)[s_keep] for k in
                 ('tau', 'x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'gyro', 'first')}
        return FitWindows(horizon=self.horizon, sample_window=new_pos[self.sample_window][s_keep],
                          t_cmd=self.t_cmd, steering_kind=self.steering_kind,
                          drive_kind=self.drive_kind, names=self.names,
                          offset_known=self.offset_known, offsets=self.offsets,
                          start_ns=self.start_ns, skipped=self.skipped, noise=self.noise,
                          **per_w, **per_s)

    def noise_of(self, channel: str) -> Array:
        """Per-sample noise level (S,) of a channel's truth (0 when not estimated)."""
        if not self.noise:
            return np.zeros(self.tau.size)
        per_bag = np.array([n.get(channel, 0.0) for n in self.noise])
        return np.asarray(per_bag[self.bag[self.sample_window]])

    def of_bag(self, b: int) -> FitWindows:
        """The windows of dataset ``b``."""
        return self.subset(self.bag == b)


def _local_fit(track: PoseTrack) -> tuple[Array, Array, Array]:
    """(fitted, slope, valid) of the protocol's local quadratic fit of x, y and yaw."""
    return local_quadratic_fit(track.t, np.stack([track.x, track.y, track.yaw], 1),
                               fit_half_width(track.t))


def _truth(fit: tuple[Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
    """Per sample: body velocity of the measured point in its axes and yaw rate from the local
    fit (:func:`_local_fit`), and the validity mask."""
    fitted, slope, valid = fit
    yaw = fitted[:, 2]
    c, s = np.cos(yaw), np.sin(yaw)
    vx = c * slope[:, 0] + s * slope[:, 1]
    vy = -s * slope[:, 0] + c * slope[:, 1]
    return vx, vy, slope[:, 2], valid


def truth_noise(track: PoseTrack) -> dict[str, float]:
    """Noise levels of the truth channels of a pose stream: the robust standard deviation
    (1.4826 MAD) of the position and yaw residuals of the protocol's local quadratic fit, and
    what it gives the fitted slopes (speed, yaw rate), sigma / sqrt(sum tau^2) for a symmetric
    neighbourhood of n = 2m + 1 samples at the median interval h (sum tau^2 = h^2 m (m+1)(2m+1)/3).
    A sensor's jitter (a particle filter's several centimetres) thereby weighs less in the cost
    than the same error on motion-capture data."""
    w = fit_half_width(track.t)
    fitted, _, valid = local_quadratic_fit(track.t, np.stack([track.x, track.y, track.yaw], 1), w)
    if valid.sum() < 10:
        return {}
    h = float(np.median(np.diff(track.t)))
    m = max(int(w / h), 2)
    n = 2 * m + 1
    res = np.stack([track.x, track.y, track.yaw], 1)[valid] - fitted[valid]

    def robust(e: Array) -> float:
        return float(1.4826 * np.median(np.abs(e - np.median(e))) * math.sqrt(n / (n - 3)))

    sp = math.hypot(robust(res[:, 0]), robust(res[:, 1])) / math.sqrt(2.0)
    sy = robust(res[:, 2])
    sum_tau2 = h * h * m * (m + 1) * (2 * m + 1) / 3.0
    return {'position': sp * math.sqrt(2.0), 'yaw': sy, 'speed': sp / math.sqrt(sum_tau2),
            'yaw_rate': sy / math.sqrt(sum_tau2)}


def _gyro_at(ds: Dataset, t: Array) -> Array:
    """The bias-free gyro yaw rate on the pose clock at ``t`` (NaN without a gyro or outside its
    samples)."""
    if ds.imu_t.size < 10:
        return np.full(t.shape, np.nan)
    inside = (t >= ds.imu_t[0]) & (t <= ds.imu_t[-1])
    return np.where(inside, np.interp(t, ds.imu_t, ds.imu_yaw_rate), np.nan)


def gyro_noise(ds: Dataset) -> dict[str, float]:
    """Noise level of the gyro: 1.4826 MAD of successive differences / sqrt 2."""
    if ds.imu_t.size < 10:
        return {}
    d = np.diff(ds.imu_yaw_rate)
    return {'gyro': float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2.0))}


def command_grid(horizon: float, lookback: float, dt: float) -> Array:
    """Window-relative command times [s]: from -lookback to past the horizon on the dt grid."""
    n_back = math.ceil(lookback / dt - 1e-9)
    t = (np.arange(n_back + math.ceil(horizon / dt - 1e-9) + 2) - n_back) * dt
    t[n_back] = 0.0
    return t


def _truth_acceleration(t_all: Array, fit: tuple[Array, Array, Array]) -> Array:
    """|v_world(t + b/2) - v_world(t - b/2)| / b per sample [m/s^2], b = ACCELERATION_BASELINE,
    of the local-fit velocity (:func:`_local_fit`; valid fits only, 0 where there is none): over
    0.2 s a pose source's jitter moves it by a few m/s^2, a jump of the pose by tens."""
    _, slope, valid = fit
    t = t_all[valid]
    if t.size < 2:
        return np.zeros(t_all.size)
    h = 0.5 * ACCELERATION_BASELINE
    dv = [np.interp(t_all + h, t, slope[valid, i]) - np.interp(t_all - h, t, slope[valid, i])
          for i in (0, 1)]
    return np.hypot(dv[0], dv[1]) / ACCELERATION_BASELINE


def _drop_implausible(win: Windows, accel: Array, rows: Array) -> Windows:
    """``win`` without the windows whose truth accelerates beyond MAX_TRUTH_ACCELERATION
    (listed under ``skipped['implausible']``)."""
    peak = np.zeros(win.index.size)
    np.maximum.at(peak, win.sample_window, accel[rows])
    keep = peak <= MAX_TRUTH_ACCELERATION
    if keep.all():
        return replace(win, skipped={**win.skipped, 'implausible': []})
    new_index = np.cumsum(keep) - 1
    sample_keep = keep[win.sample_window]
    per_window = {k: getattr(win, k)[keep] for k in
                  ('index', 'start', 'x0', 'y0', 'yaw0', 'vx0', 'vy0', 'yaw_rate0')}
    return replace(win, **per_window, sample_window=new_index[win.sample_window[sample_keep]],
                   sample_t=win.sample_t[sample_keep],
                   skipped={**win.skipped, 'implausible': [int(k) for k in win.index[~keep]]})


def build_windows(datasets: Sequence[Dataset], horizon: float, *, lookback: float, dt: float,
                  raw: bool = False) -> FitWindows:
    """Protocol windows of ``datasets`` (their cleaned pose tracks, or every pose message with
    ``raw=True`` as the evaluator reads them). CalibrationError when no window is usable.

    The fit's windows (not ``raw``) also leave out those whose measured truth accelerates beyond
    :data:`MAX_TRUTH_ACCELERATION` (``skipped['implausible']``): a pose source that jumps (a
    particle filter relocalising) gives a speed no car reaches, which no model predicts and
    which would otherwise decide the fit and its verdict."""
    if not datasets:
        raise CalibrationError('no datasets to fit')
    kinds = {ds.kinds for ds in datasets}
    if len(kinds) > 1:
        listed = '; '.join(f'{ds.name}: {ds.steering_kind} + {ds.drive_kind}' for ds in datasets)
        raise CalibrationError(f'the bags mix command kinds ({listed}): fit one kind at a time')
    t_cmd = command_grid(horizon, lookback, dt)
    per_w: dict[str, list[Array]] = {k: [] for k in
                                     ('bag', 'index', 'start', 'x0', 'y0', 'yaw0', 'vx0', 'vy0',
                                      'yaw_rate0', 'steering_cmd', 'drive_cmd')}
    per_s: dict[str, list[Array]] = {k: [] for k in
                                     ('sample_window', 'tau', 'x', 'y', 'yaw', 'vx', 'vy',
                                      'yaw_rate', 'gyro', 'first')}
    skipped: list[dict[str, list[int]]] = []
    noise: list[dict[str, float]] = []
    n_w = 0
    for b, ds in enumerate(datasets):
        track = ds.raw_track if raw else ds.track
        if track is None or track.t.size < 5:
            raise CalibrationError(f'{ds.name}: the pose stream has too few usable samples')
        try:
            win = make_windows(track, horizon)
        except ValueError as exc:
            raise CalibrationError(f'{ds.name}: {exc}') from None
        fit = _local_fit(track)
        if not raw and win.index.size:
            win = _drop_implausible(win, _truth_acceleration(track.t, fit),
                                    np.searchsorted(track.t, win.sample_t))
        skipped.append(win.skipped)
        noise.append({**truth_noise(track), **gyro_noise(ds)})
        if not win.index.size:
            continue
        vx_t, vy_t, r_t, valid = _truth(fit)
        rows = np.searchsorted(track.t, win.sample_t)
        steer, drive = ds.commands_at(win.start[:, None] + t_cmd[None, :])
        w = win.index.size
        per_w['bag'].append(np.full(w, b))
        per_w['index'].append(win.index)
        per_w['start'].append(win.start)
        for key in ('x0', 'y0', 'yaw0', 'vx0', 'vy0', 'yaw_rate0'):
            per_w[key].append(getattr(win, key))
        per_w['steering_cmd'].append(steer)
        per_w['drive_cmd'].append(drive)
        first = np.concatenate(([True], np.diff(win.sample_window) != 0))
        per_s['sample_window'].append(win.sample_window + n_w)
        per_s['tau'].append(win.tau)
        per_s['x'].append(track.x[rows])
        per_s['y'].append(track.y[rows])
        per_s['yaw'].append(track.yaw[rows])
        per_s['vx'].append(np.where(valid[rows], vx_t[rows], np.nan))
        per_s['vy'].append(np.where(valid[rows], vy_t[rows], np.nan))
        per_s['yaw_rate'].append(np.where(valid[rows], r_t[rows], np.nan))
        per_s['gyro'].append(_gyro_at(ds, win.sample_t))
        per_s['first'].append(first)
        n_w += w
    if not n_w:
        names = ', '.join(ds.name for ds in datasets)
        raise CalibrationError(f'no {horizon:g} s window with motion in {names} '
                               '(recordings too short, pose gaps, or the car never moved)')
    cat = {k: np.concatenate(v) for k, v in {**per_w, **per_s}.items()
           if k not in ('steering_cmd', 'drive_cmd')}
    return FitWindows(horizon=float(horizon), t_cmd=t_cmd,
                      steering_cmd=np.vstack(per_w['steering_cmd']),
                      drive_cmd=np.vstack(per_w['drive_cmd']),
                      steering_kind=datasets[0].steering_kind,
                      drive_kind=datasets[0].drive_kind,
                      names=tuple(ds.name for ds in datasets),
                      offset_known=tuple(ds.offset_known for ds in datasets),
                      offsets=tuple(ds.pose_offset for ds in datasets),
                      start_ns=tuple(ds.start_ns for ds in datasets),
                      skipped=tuple(skipped), noise=tuple(noise), **cat)
