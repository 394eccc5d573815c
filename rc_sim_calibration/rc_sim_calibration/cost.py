"""Fit costs: MSE, RMSE and ITAE of position, speed, yaw rate and wheel speed errors.

Errors come as arrays ``(P, W, K)``: P parameter sets, W re-initialised windows (each starting
from the measured state, so drift over a long bag does not dominate), K samples per window at
window-relative times ``t_rel`` (K,); ``mask`` (W, K) marks valid samples. Position error is
the Euclidean distance between predicted and measured base_link positions.

Per channel c:
    MSE_c  = mean_valid(e^2)
    RMSE_c = sqrt(MSE_c)
    ITAE_c = mean over windows of  sum_k t_rel_k |e_k| dt     (integral of time-weighted |error|)
Scalar cost with weights w_c and scales s_c (the noise level that makes channels comparable):
    mse:  J = sum_c w_c MSE_c / s_c^2          (= sum of squares of :func:`residuals`)
    rmse: J = sum_c w_c RMSE_c / s_c
    itae: J = sum_c w_c ITAE_c / (s_c H^2 / 2) (H = window length; |e| = s_c everywhere gives 1)
plus the Gaussian prior term sum_k ((theta_k - mu_k) / sigma_k)^2 / N (MAP with N data samples).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from rc_sim_calibration.errors import CalibrationError

__all__ = ['CHANNELS', 'METRICS', 'CostConfig', 'channel_metrics', 'residuals', 'scalar_cost']

Array = np.ndarray

CHANNELS: tuple[str, ...] = ('position', 'yaw', 'speed', 'yaw_rate', 'gyro', 'wheel_speed')
METRICS: tuple[str, ...] = ('mse', 'rmse', 'itae')


def _default_weights() -> dict[str, float]:
    return {'position': 1.0, 'yaw': 0.0, 'speed': 1.0, 'yaw_rate': 1.0, 'gyro': 0.0,
            'wheel_speed': 0.0}


def _default_scales() -> dict[str, float]:
    return {'position': 0.05, 'yaw': 0.02, 'speed': 0.1, 'yaw_rate': 0.1, 'gyro': 0.1,
            'wheel_speed': 2.0}


@dataclass(frozen=True)
class CostConfig:
    """Channel weights (dimensionless), scales (units of the channel) and the metric."""

    weights: dict[str, float] = field(default_factory=_default_weights)
    scales: dict[str, float] = field(default_factory=_default_scales)
    metric: str = 'mse'

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise CalibrationError(f'cost metric {self.metric!r} unknown (use one of '
                                   f'{", ".join(METRICS)})')
        for key, table, positive in (('weights', self.weights, False),
                                     ('scales', self.scales, True)):
            for ch, v in table.items():
                if ch not in CHANNELS:
                    raise CalibrationError(f'cost {key}.{ch}: unknown channel (use one of '
                                           f'{", ".join(CHANNELS)})')
                ok = np.isfinite(v) and (v > 0 if positive else v >= 0)
                if not ok:
                    raise CalibrationError(f'cost {key}.{ch}: must be '
                                           f'{"> 0" if positive else ">= 0"}, got {v!r}')
        if not any(self.weights.get(c, 0.0) > 0 for c in CHANNELS):
            raise CalibrationError('cost weights: at least one channel needs a weight > 0')

    def weight(self, channel: str) -> float:
        """Weight of a channel (0 when not listed)."""
        return float(self.weights.get(channel, 0.0))

    def scale(self, channel: str) -> float:
        """Scale of a channel (1 when not listed)."""
        return float(self.scales.get(channel, 1.0))


def channel_metrics(errors: Mapping[str, Array], masks: Mapping[str, Array],
                    t_rel: Array, *, sample_dt: float | None = None,
                    n_windows: int | None = None) -> dict[str, dict[str, Array]]:
    """Per channel ``{'mse','rmse','itae'}`` arrays (P,) from errors (P, W, K) and masks (W, K).

    Samples of the window protocol come as one row (P, 1, S) with ``t_rel`` the time since each
    sample's window start, their interval ``sample_dt`` and the number of windows ``n_windows``.
    """
    dt = sample_dt if sample_dt is not None else (
        float(t_rel[1] - t_rel[0]) if t_rel.size > 1 else 0.0)
    out: dict[str, dict[str, Array]] = {}
    for ch, err in errors.items():
        if ch not in masks:
            continue
        mask = masks[ch]
        n = int(mask.sum())
        if n == 0:
            continue
        e = np.where(mask[None], err, 0.0)
        mse = np.sum(e * e, axis=(1, 2)) / n
        n_win = n_windows or max(int(mask.any(axis=1).sum()), 1)
        itae = np.sum(np.abs(e) * t_rel[None, None, :], axis=(1, 2)) * dt / n_win
        out[ch] = {'mse': mse, 'rmse': np.sqrt(mse), 'itae': itae}
    return out


def scalar_cost(errors: Mapping[str, Array], masks: Mapping[str, Array], t_rel: Array,
                config: CostConfig, prior_sq: Array | None = None, *,
                sample_dt: float | None = None, n_windows: int | None = None) -> Array:
    """Cost J (P,) of each parameter set (see module docstring); NaN errors give +inf."""
    metrics = channel_metrics(errors, masks, t_rel, sample_dt=sample_dt, n_windows=n_windows)
    horizon = float(np.max(t_rel) - np.min(t_rel)) if t_rel.size > 1 else 1.0
    total: Array | None = None
    n_data = 0
    for ch, m in metrics.items():
        w, s = config.weight(ch), config.scale(ch)
        if w <= 0:
            continue
        n_data = max(n_data, int(masks[ch].sum()))
        if config.metric == 'mse':
            term = w * m['mse'] / s ** 2
        elif config.metric == 'rmse':
            term = w * m['rmse'] / s
        else:
            term = w * m['itae'] / (s * 0.5 * horizon ** 2)
        total = term if total is None else total + term
    if total is None:
        raise CalibrationError('no measured channel has a weight > 0 (check the cost weights '
                               'and the topics of the bags)')
    if prior_sq is not None:
        total = total + prior_sq / max(n_data, 1)
    return np.where(np.isfinite(total), total, np.inf)


def residuals(errors: Mapping[str, Array], masks: Mapping[str, Array], config: CostConfig,
              prior_res: Array | None = None) -> Array:
    """Residual vectors r (P, M) with sum(r^2) = the 'mse' cost J (weighted least squares form).

    r = sqrt(w_c / n_c) e / s_c on the valid samples of each weighted channel (position as its x
    and y components when ``errors['position_xy']`` (P, W, K, 2) is given: same sum of squares,
    but smooth at zero), then the prior residuals (theta - mu) / (sigma sqrt(N)). NaN errors
    become a large finite value (1e6).
    """
    parts: list[Array] = []
    n_data = 0
    for ch in CHANNELS:
        if ch not in errors or config.weight(ch) <= 0:
            continue
        mask = masks[ch]
        n = int(mask.sum())
        if n == 0:
            continue
        n_data = max(n_data, n)
        factor = np.sqrt(config.weight(ch) / n) / config.scale(ch)
        if ch == 'position' and 'position_xy' in errors:  # smooth: components, same squares
            xy = errors['position_xy'][:, mask]
            parts.append(xy.reshape(xy.shape[0], -1) * factor)
        else:
            parts.append(errors[ch][:, mask] * factor)
    if not parts:
        raise CalibrationError('no measured channel has a weight > 0 (check the cost weights '
                               'and the topics of the bags)')
    if prior_res is not None and prior_res.shape[1]:
        parts.append(prior_res / np.sqrt(max(n_data, 1)))
    r = np.concatenate(parts, axis=1)
    return np.where(np.isfinite(r), r, 1e6)
