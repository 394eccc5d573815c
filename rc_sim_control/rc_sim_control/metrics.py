"""Tracking metrics: centre-of-mass error, RMSE and ISE.

e(t) = q(t) - q_ref(t) with q the centre-of-mass position (the heading is not scored: under
feedback linearisation it is not controlled directly).
RMSE = sqrt(mean_t e^T e); ISE = integral e^T e dt (trapezoidal rule on the sample times).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
import math

import numpy as np
import numpy.typing as npt

from rc_sim_description.errors import ConfigError

__all__ = ['TrackingMetrics', 'cg_positions', 'compute_metrics', 'path_distance_errors',
           'tracking_errors']

FloatArray = npt.NDArray[np.float64]


def cg_positions(x: npt.ArrayLike, y: npt.ArrayLike, yaw: npt.ArrayLike,
                 cg_to_rear_axle: float) -> tuple[FloatArray, FloatArray]:
    """Centre of mass from base_link (rear axle) poses: c = p + lr (cos yaw, sin yaw)."""
    yaw_a = np.asarray(yaw, dtype=float)
    return (np.asarray(x, float) + cg_to_rear_axle * np.cos(yaw_a),
            np.asarray(y, float) + cg_to_rear_axle * np.sin(yaw_a))


def tracking_errors(t: npt.ArrayLike, x: npt.ArrayLike, y: npt.ArrayLike,
                    t_ref: npt.ArrayLike, x_ref: npt.ArrayLike,
                    y_ref: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(t, ex, ey): e = q - q_ref with the reference linearly interpolated at the times ``t``.

    Samples outside the reference time span are dropped (no extrapolation).
    """
    tt, tr = np.asarray(t, float), np.asarray(t_ref, float)
    if tr.size < 2 or np.any(np.diff(tr) <= 0):
        raise ConfigError('reference: needs >= 2 samples with strictly increasing times')
    keep = (tt >= tr[0]) & (tt <= tr[-1])
    tt = tt[keep]
    ex = np.asarray(x, float)[keep] - np.interp(tt, tr, np.asarray(x_ref, float))
    ey = np.asarray(y, float)[keep] - np.interp(tt, tr, np.asarray(y_ref, float))
    return tt, ex, ey


def path_distance_errors(x: npt.ArrayLike, y: npt.ArrayLike, x_path: npt.ArrayLike,
                         y_path: npt.ArrayLike, chunk: int = 256) -> tuple[FloatArray, FloatArray]:
    """(ex, ey) from the nearest point of the polyline (x_path, y_path) to each (x, y).

    For references without timing: the error is the distance to the path (cross-track), not to
    a moving set-point. Vectorized over points (in chunks) and segments.
    """
    px, py = np.asarray(x, float), np.asarray(y, float)
    ax, ay = np.asarray(x_path, float), np.asarray(y_path, float)
    if ax.size < 2:
        raise ConfigError('reference path: needs >= 2 points')
    x0, y0, dx, dy = ax[:-1], ay[:-1], np.diff(ax), np.diff(ay)
    len2 = np.maximum(dx * dx + dy * dy, 1e-18)
    ex, ey = np.empty_like(px), np.empty_like(py)
    for i in range(0, px.size, chunk):
        qx, qy = px[i:i + chunk, None], py[i:i + chunk, None]
        u = np.clip(((qx - x0) * dx + (qy - y0) * dy) / len2, 0.0, 1.0)
        cx, cy = x0 + u * dx, y0 + u * dy
        j = np.argmin((qx - cx) ** 2 + (qy - cy) ** 2, axis=1)
        rows = np.arange(j.size)
        ex[i:i + chunk] = qx[:, 0] - cx[rows, j]
        ey[i:i + chunk] = qy[:, 0] - cy[rows, j]
    return ex, ey


@dataclass(frozen=True)
class TrackingMetrics:
    """RMSE [m], ISE [m^2 s], max and final error [m] over [t_start, t_end] [s], sample count."""

    rmse: float
    ise: float
    max_error: float
    final_error: float
    t_start: float
    t_end: float
    samples: int

    def as_dict(self) -> dict[str, float]:
        """Plain mapping (for JSON/CSV reports)."""
        return {k: float(v) for k, v in asdict(self).items()}

    def summary(self) -> str:
        """One line: 'RMSE 1.23 cm, ISE 4.560e-03 m^2 s, max 2.00 cm (t in [5.0, 20.0] s, ...)'."""
        window = f'[{self.t_start:.1f}, {self.t_end:.1f}]'
        return (f'RMSE {100 * self.rmse:.2f} cm, ISE {self.ise:.3e} m^2 s, '
                f'max {100 * self.max_error:.2f} cm (t in {window} s, {self.samples} samples)')


def compute_metrics(t: npt.ArrayLike, ex: npt.ArrayLike, ey: npt.ArrayLike,
                    t_start: float | None = None) -> TrackingMetrics:
    """RMSE/ISE metrics of the error samples at or after ``t_start`` (all when None)."""
    tt, exa, eya = (np.asarray(a, dtype=float) for a in (t, ex, ey))
    if t_start is not None:
        keep = tt >= t_start
        tt, exa, eya = tt[keep], exa[keep], eya[keep]
    if tt.size < 2:
        raise ConfigError('tracking metrics: fewer than 2 error samples in the scored window')
    sq = exa ** 2 + eya ** 2
    ise = float(np.sum(0.5 * (sq[1:] + sq[:-1]) * np.diff(tt)))
    return TrackingMetrics(rmse=math.sqrt(float(np.mean(sq))), ise=ise,
                           max_error=float(np.sqrt(np.max(sq))),
                           final_error=float(np.sqrt(sq[-1])),
                           t_start=float(tt[0]), t_end=float(tt[-1]), samples=int(tt.size))
