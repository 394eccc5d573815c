"""Windowed open-loop prediction: the window protocol, the measured point, and the CTRV baseline.

numpy only (the product's report may import it). Everything here works on the MEASURED pose
stream of a recording: header stamps ``t`` [s], position ``x, y`` [m] and yaw [rad] of the
recording's pose frame (e.g. a mocap marker body) in the recording's world frame.

Window protocol (horizon ``H`` seconds; ``docs/prediction_windows.md`` says it with the reasons)
-----------------------------------------------------------------------------------------------
1. Samples: the pose messages sorted by header stamp; repeated stamps keep the first message.
   Yaw is unwrapped along the stream.
2. Tiling: sample ``i`` belongs to window ``k = floor((t_i - t_0) / H)``, ``t_0`` the first stamp.
   Windows ``k = 0 .. K-1`` with ``K = floor((t_last - t_0) / H)`` are complete and used; the
   remainder shorter than ``H`` at the end is not scored. Windows keep their grid number ``k``
   whether or not earlier ones are skipped.
3. Local fit (the measured state): at a sample time ``t_c``, a least-squares quadratic in
   ``tau = t - t_c`` is fitted to each of x, y and unwrapped yaw over the samples with
   ``|tau| <= w``, ``w = max(0.1 s, 4.5 * median sample interval)``. Its value and slope are the
   smoothed pose and its rate (a Savitzky-Golay-type estimate, centred; Savitzky & Golay 1964).
   The fit is valid when it has at least 2 samples with ``tau < 0`` and 2 with ``tau > 0``.
4. Initial state of window ``k`` at its first sample ``t_s``: pose = fitted (x, y, yaw) at ``t_s``;
   yaw rate = fitted yaw slope; body velocity ``(vx, vy)`` = fitted world velocity rotated by
   ``-yaw`` into the measured frame's axes. The same for every predictor.
5. Skips, in this order: ``gap`` when the window has no sample or a hole in the pose stream longer
   than ``g = max(0.25 s, 5 * median interval)`` (between samples, or from the window's grid start
   to its first sample, or from its last sample to its grid end); ``state`` when the local fit at
   ``t_s`` is not valid; ``standing`` when over the whole window the fitted position stays within
   ``0.05 m/s * H`` of its start and the fitted yaw within ``0.05 rad/s * H``.
6. Predictions: at every sample of a used window (its first sample included, where the prediction
   is the initial state), open loop from the initial state and the recorded commands. The CSV has
   the columns ``window,t,x,y,yaw,vx,vy,yaw_rate`` (``t`` float seconds on the header-stamp clock;
   pose of the measured frame in the world frame; ``vx, vy`` the velocity of the measured point in
   the measured frame's axes; ``yaw`` continuous, not wrapped).
7. Scoring (the independent evaluator, ``benchmarks/realdata/evaluate_predictions.py``): samples
   with ``t > t_s``; truth position = the raw measured position; truth yaw rate = the fitted yaw
   slope at that sample (samples whose fit is not valid are left out of the yaw-rate figure only).
   RMSEs are pooled: square root of the mean over all scored samples of all used windows.

CTRV: constant turn rate and velocity, i.e. the body twist ``(vx, vy, yaw_rate)`` of the window's
initial state held constant (Schubert, Richter & Wanielik 2008, "Comparison and evaluation of
advanced motion models for vehicle tracking"; with ``vy = 0`` it is their CTRV model; with the
measured ``vy`` it holds for any point of the rigid body, so no reference point is needed).
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

__all__ = [
    'CSV_COLUMNS', 'PoseTrack', 'PredictionTable', 'Windows', 'ctrv_predict', 'fit_half_width',
    'gap_tolerance', 'local_quadratic_fit', 'make_pose_track', 'make_windows',
    'measured_from_reference', 'reference_from_measured', 'write_prediction_csv',
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

CSV_COLUMNS = ('window', 't', 'x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate')
MIN_HALF_WIDTH = 0.1          # [s] local-fit half width, lower bound
HALF_WIDTH_INTERVALS = 4.5    # local-fit half width in median sample intervals
MIN_GAP = 0.25                # [s] pose-stream hole that skips a window, lower bound
GAP_INTERVALS = 5.0           # same, in median sample intervals
STANDING_SPEED = 0.05         # [m/s] a window is standing below this mean displacement rate
STANDING_YAW_RATE = 0.05      # [rad/s] and this yaw change rate
MIN_SIDE_SAMPLES = 2          # samples needed on each side of a local fit's centre


@dataclass(frozen=True)
class PoseTrack:
    """Measured pose samples: header stamps [s] (strictly increasing), x, y [m], unwrapped yaw."""

    t: FloatArray
    x: FloatArray
    y: FloatArray
    yaw: FloatArray


def make_pose_track(t: FloatArray, x: FloatArray, y: FloatArray, yaw: FloatArray) -> PoseTrack:
    """Sort by stamp, keep the first of repeated stamps, unwrap yaw (protocol step 1)."""
    t = np.asarray(t, dtype=float)
    order = np.argsort(t, kind='stable')
    t_sorted = t[order]
    keep = np.concatenate(([True], np.diff(t_sorted) > 0.0))
    idx = order[keep]
    return PoseTrack(t=t[idx], x=np.asarray(x, dtype=float)[idx],
                     y=np.asarray(y, dtype=float)[idx],
                     yaw=np.unwrap(np.asarray(yaw, dtype=float)[idx]))


def fit_half_width(t: FloatArray) -> float:
    """Local-fit half width w = max(0.1 s, 4.5 median intervals) [s]."""
    return max(MIN_HALF_WIDTH, HALF_WIDTH_INTERVALS * float(np.median(np.diff(t))))


def gap_tolerance(t: FloatArray) -> float:
    """Longest tolerated hole in the pose stream, g = max(0.25 s, 5 median intervals) [s]."""
    return max(MIN_GAP, GAP_INTERVALS * float(np.median(np.diff(t))))


def local_quadratic_fit(t: FloatArray, values: FloatArray, half_width: float
                        ) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    """Centred least-squares quadratic over |t_j - t_i| <= half_width, at every sample i.

    ``values`` has shape (n, m) (m signals sharing the stamps). Returns the fitted values (n, m),
    slopes (n, m) and the validity mask (n,) (>= 2 samples each side; invalid rows are NaN).
    Batched normal equations on padded neighbourhoods; times are centred per sample.
    """
    n = t.size
    values = np.asarray(values, dtype=float).reshape(n, -1)
    lo = np.searchsorted(t, t - half_width, side='left')
    hi = np.searchsorted(t, t + half_width, side='right')
    idx_self = np.arange(n)
    valid = ((idx_self - lo) >= MIN_SIDE_SAMPLES) & ((hi - idx_self - 1) >= MIN_SIDE_SAMPLES)
    width = int((hi - lo).max()) if n else 0
    cols = lo[:, None] + np.arange(width)[None, :]
    mask = cols < hi[:, None]
    cols = np.minimum(cols, n - 1)
    tau = np.where(mask, t[cols] - t[:, None], 0.0)
    weight = mask.astype(float)
    design = np.stack([weight, tau * weight, tau * tau * weight], axis=-1)  # (n, W, 3)
    normal = np.einsum('nwi,nwj->nij', design, design)
    normal[~valid] = np.eye(3)
    rhs = np.einsum('nwi,nwm->nim', design, values[cols] * weight[..., None])
    coef = np.linalg.solve(normal, rhs)  # (n, 3, m)
    fitted = coef[:, 0, :]
    slope = coef[:, 1, :]
    fitted[~valid] = np.nan
    slope[~valid] = np.nan
    return fitted, slope, valid


@dataclass(frozen=True)
class Windows:
    """Used windows of a pose track and their measured initial states (protocol steps 2-5).

    Per used window (arrays of length n_windows): ``index`` (grid number k), ``start`` (stamp of
    its first sample), initial state ``x0, y0, yaw0, vx0, vy0, yaw_rate0`` of the measured point
    (velocity in the measured frame's axes). Per predicted sample (length n_samples, window
    order then time): ``sample_window`` (position in the used-window arrays) and ``sample_t``.
    ``skipped`` maps each reason to the grid numbers of the windows skipped for it.
    """

    horizon: float
    index: IntArray
    start: FloatArray
    x0: FloatArray
    y0: FloatArray
    yaw0: FloatArray
    vx0: FloatArray
    vy0: FloatArray
    yaw_rate0: FloatArray
    sample_window: IntArray
    sample_t: FloatArray
    skipped: dict[str, list[int]]

    @property
    def tau(self) -> FloatArray:
        """Time since the window's first sample [s], per predicted sample."""
        return self.sample_t - self.start[self.sample_window]


def make_windows(track: PoseTrack, horizon: float) -> Windows:
    """Tile ``track`` into windows of ``horizon`` s, skip as the protocol says, estimate states."""
    if not (math.isfinite(horizon) and horizon > 0.0):
        raise ValueError(f'horizon must be a positive number of seconds, got {horizon}')
    t = track.t
    if t.size < 2 * MIN_SIDE_SAMPLES + 1:
        raise ValueError(f'{t.size} pose samples are too few for windowed prediction')
    w = fit_half_width(t)
    g = gap_tolerance(t)
    fitted, slope, valid = local_quadratic_fit(t, np.stack([track.x, track.y, track.yaw], 1), w)
    rel = t - t[0]
    member = np.floor(rel / horizon).astype(np.int64)
    n_grid = math.floor((t[-1] - t[0]) / horizon)
    bounds = np.searchsorted(member, np.arange(n_grid + 1))
    skipped: dict[str, list[int]] = {'gap': [], 'state': [], 'standing': []}
    used: list[tuple[int, int, int]] = []
    for k in range(n_grid):
        a, b = int(bounds[k]), int(bounds[k + 1])
        if b <= a:
            skipped['gap'].append(k)
            continue
        edges = np.concatenate(([k * horizon], rel[a:b], [(k + 1) * horizon]))
        if float(np.max(np.diff(edges))) > g:
            skipped['gap'].append(k)
            continue
        if not valid[a]:
            skipped['state'].append(k)
            continue
        ok = valid[a:b]
        moved = np.hypot(fitted[a:b, 0][ok] - fitted[a, 0], fitted[a:b, 1][ok] - fitted[a, 1])
        turned = np.abs(fitted[a:b, 2][ok] - fitted[a, 2])
        if moved.max() < STANDING_SPEED * horizon and turned.max() < STANDING_YAW_RATE * horizon:
            skipped['standing'].append(k)
            continue
        used.append((k, a, b))
    first = np.array([a for _, a, _ in used], dtype=np.int64)
    yaw0 = fitted[first, 2]
    vxw, vyw = slope[first, 0], slope[first, 1]
    cos0, sin0 = np.cos(yaw0), np.sin(yaw0)
    counts = np.array([b - a for _, a, b in used], dtype=np.int64)
    rows = np.concatenate([np.arange(a, b) for _, a, b in used]) if used else np.zeros(0, int)
    return Windows(
        horizon=float(horizon), index=np.array([k for k, _, _ in used], dtype=np.int64),
        start=t[first], x0=fitted[first, 0], y0=fitted[first, 1], yaw0=yaw0,
        vx0=cos0 * vxw + sin0 * vyw, vy0=-sin0 * vxw + cos0 * vyw, yaw_rate0=slope[first, 2],
        sample_window=np.repeat(np.arange(len(used), dtype=np.int64), counts),
        sample_t=t[rows], skipped=skipped)


@dataclass(frozen=True)
class PredictionTable:
    """Predicted samples in the CSV's columns (``window`` is the grid number k)."""

    window: IntArray
    t: FloatArray
    x: FloatArray
    y: FloatArray
    yaw: FloatArray
    vx: FloatArray
    vy: FloatArray
    yaw_rate: FloatArray

    def to_csv_text(self) -> str:
        """The prediction CSV: header ``window,t,x,y,yaw,vx,vy,yaw_rate``, one row per sample."""
        cols = [self.x, self.y, self.yaw, self.vx, self.vy, self.yaw_rate]
        lines = [','.join(CSV_COLUMNS)]
        for i in range(self.window.size):
            rest = ','.join(f'{c[i]:.6f}' for c in cols)
            lines.append(f'{int(self.window[i])},{self.t[i]:.6f},{rest}')
        return '\n'.join(lines) + '\n'


def _rotate(cos_a: FloatArray, sin_a: FloatArray, vx: FloatArray, vy: FloatArray
            ) -> tuple[FloatArray, FloatArray]:
    return cos_a * vx - sin_a * vy, sin_a * vx + cos_a * vy


def ctrv_predict(windows: Windows) -> PredictionTable:
    """Constant body twist from each window's initial state, closed form (exact on circles).

    p(tau) = p0 + R(yaw0) [A vx - B vy, B vx + A vy], yaw = yaw0 + r tau, with
    A = sin(r tau)/r = tau sinc(r tau/pi), B = (1 - cos(r tau))/r = tau (r tau/2) sinc(r tau/2pi)^2
    (np.sinc(x) = sin(pi x)/(pi x)), finite at r = 0 (a straight line).
    """
    j = windows.sample_window
    tau = windows.tau
    r = windows.yaw_rate0[j]
    vx, vy = windows.vx0[j], windows.vy0[j]
    turn = r * tau
    a = tau * np.sinc(turn / np.pi)
    b = tau * (turn / 2.0) * np.sinc(turn / (2.0 * np.pi)) ** 2
    dx_body, dy_body = a * vx - b * vy, b * vx + a * vy
    yaw0 = windows.yaw0[j]
    dx, dy = _rotate(np.cos(yaw0), np.sin(yaw0), dx_body, dy_body)
    return PredictionTable(window=windows.index[j], t=windows.sample_t.copy(),
                           x=windows.x0[j] + dx, y=windows.y0[j] + dy, yaw=yaw0 + turn,
                           vx=vx.copy(), vy=vy.copy(), yaw_rate=r.copy())


def measured_from_reference(x: FloatArray, y: FloatArray, yaw: FloatArray, vx: FloatArray,
                            vy: FloatArray, yaw_rate: FloatArray,
                            offset: tuple[float, float, float]
                            ) -> tuple[FloatArray, ...]:
    """Pose and body velocity of the measured frame from those of a reference frame (rigid body).

    ``offset`` = (ox, oy, oyaw): the measured frame's pose in the reference frame (e.g. a mocap
    marker in base_link). yaw_m = yaw + oyaw; p_m = p + R(yaw) o; the measured point's velocity
    in reference axes is v + r x o = (vx - r oy, vy + r ox), rotated by -oyaw into its own axes.
    """
    ox, oy, oyaw = offset
    c, s = np.cos(yaw), np.sin(yaw)
    xm, ym = x + c * ox - s * oy, y + s * ox + c * oy
    vxr, vyr = vx - yaw_rate * oy, vy + yaw_rate * ox
    vxm, vym = _rotate(np.cos(-oyaw), np.sin(-oyaw), vxr, vyr)
    return xm, ym, yaw + oyaw, vxm, vym, np.asarray(yaw_rate, dtype=float).copy()


def reference_from_measured(x: FloatArray, y: FloatArray, yaw: FloatArray, vx: FloatArray,
                            vy: FloatArray, yaw_rate: FloatArray,
                            offset: tuple[float, float, float]
                            ) -> tuple[FloatArray, ...]:
    """Inverse of :func:`measured_from_reference` (same ``offset`` convention)."""
    ox, oy, oyaw = offset
    yaw_ref = yaw - oyaw
    c, s = np.cos(yaw_ref), np.sin(yaw_ref)
    xr, yr = x - (c * ox - s * oy), y - (s * ox + c * oy)
    vxr, vyr = _rotate(np.cos(oyaw), np.sin(oyaw), vx, vy)
    return (xr, yr, yaw_ref, vxr + yaw_rate * oy, vyr - yaw_rate * ox,
            np.asarray(yaw_rate, dtype=float).copy())


def write_prediction_csv(path: str, table: PredictionTable) -> None:
    """Write ``table`` atomically (nothing is left behind when writing fails)."""
    from rc_sim_description.atomic import atomic_write_text

    atomic_write_text(path, table.to_csv_text())
