"""A fit problem: free parameters in unit coordinates, windows, and the batch cost.

Search coordinates: each free parameter maps onto u in [0, 1], linearly, or logarithmically when
its bounds are positive and span a factor >= 3 (stiffnesses, inertias, gains). A population of P
points is ONE batch prediction (:func:`rc_sim_calibration.predict.predict`).

Channels at the scored samples of the window protocol: position of the measured point (its x and
y errors), its speed along its own x axis, and the yaw rate (both against the local-fit truth;
samples where that fit is not valid are left out of those two channels).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rc_sim_calibration.cost import CostConfig, residuals, scalar_cost
from rc_sim_calibration.predict import Prediction, predict
from rc_sim_calibration.settings import (
    DRIVE_DELAY,
    OFFSET_NAMES,
    FitSettings,
    FreeParameter,
    apply_values,
)
from rc_sim_calibration.windows import FitWindows
from rc_sim_description.errors import RcSimError
from rc_sim_description.params import VehicleParams

__all__ = ['CHANNEL_UNITS', 'Problem', 'channel_rmse', 'sample_errors']

Array = np.ndarray
CHANNEL_UNITS = {'position': 'm', 'speed': 'm/s', 'yaw_rate': 'rad/s'}
ALL_UNITS = {**CHANNEL_UNITS, 'yaw': 'rad'}


def sample_errors(pred: Prediction, win: FitWindows) -> dict[str, Array]:
    """Errors (P, S) per channel (NaN where the truth is missing): position distance, its x/y
    components (P, S, 2), heading, speed, yaw rate."""
    dx, dy = pred.x - win.x[None], pred.y - win.y[None]
    return {'position': np.hypot(dx, dy), 'position_xy': np.stack([dx, dy], axis=-1),
            'yaw': pred.yaw - win.yaw[None], 'speed': pred.vx - win.vx[None],
            'yaw_rate': pred.yaw_rate - win.yaw_rate[None],
            'gyro': pred.yaw_rate - win.gyro[None]}


def sample_masks(win: FitWindows) -> dict[str, Array]:
    """Masks (S,) of the samples each channel scores."""
    scored = win.scored()
    return {'position': scored, 'yaw': scored, 'speed': scored & np.isfinite(win.vx),
            'yaw_rate': scored & np.isfinite(win.yaw_rate),
            'gyro': scored & np.isfinite(win.gyro)}


def channel_rmse(errs: dict[str, Array], win: FitWindows) -> dict[str, Array]:
    """Pooled RMSE (P,) per channel over the scored samples (the evaluator's figure)."""
    masks = sample_masks(win)
    out = {}
    for ch, m in masks.items():
        if ch not in errs:
            continue
        e = errs[ch][:, m]
        out[ch] = np.sqrt(np.mean(e * e, axis=1)) if e.shape[1] else np.full(e.shape[0], np.nan)
    return out


class Problem:
    """Free parameters, windows and settings: batch cost and residuals over unit coordinates."""

    def __init__(self, base: VehicleParams, free: Sequence[FreeParameter], win: FitWindows,
                 settings: FitSettings, offset0: tuple[float, float, float] = (0.0, 0.0, 0.0)
                 ) -> None:
        self.base, self.free, self.win, self.settings = base, list(free), win, settings
        self.names = tuple(f.name for f in self.free)
        self.offset0 = offset0
        lo = np.array([f.lower for f in self.free])
        hi = np.array([f.upper for f in self.free])
        self.log = (lo > 0) & (hi / np.where(lo > 0, lo, 1.0) >= 3.0)
        self.lo = np.where(self.log, np.log(np.where(self.log, lo, 1.0)), lo)
        self.hi = np.where(self.log, np.log(np.where(self.log, hi, 1.0)), hi)
        self.prior_idx = np.array([i for i, f in enumerate(self.free) if f.prior_std is not None],
                                  dtype=int)
        self.offset_idx = [(self.names.index(n) if n in self.names else -1) for n in OFFSET_NAMES]
        self.n_evals = 0
        self.best_cost = np.inf          # lowest cost seen (progress display)
        self.window_weight = np.ones(win.n)

    # --- coordinates
    def to_values(self, u: Array) -> Array:
        """Unit coordinates (..., n) -> parameter values."""
        z = self.lo + np.clip(u, 0.0, 1.0) * (self.hi - self.lo)
        return np.where(self.log, np.exp(z), z)

    def to_unit(self, values: Array) -> Array:
        """Parameter values (..., n) -> unit coordinates."""
        v = np.asarray(values, dtype=float)
        z = np.where(self.log, np.log(np.where(self.log, np.maximum(v, 1e-300), 1.0)), v)
        return (z - self.lo) / (self.hi - self.lo)

    def dvalue_du(self, u: Array) -> Array:
        """Derivative of the values with respect to the unit coordinates (n,)."""
        span = self.hi - self.lo
        return np.where(self.log, self.to_values(u) * span, span)

    @property
    def start_unit(self) -> Array:
        """Unit coordinates of the start values."""
        return self.to_unit(np.array([f.start for f in self.free]))

    # --- evaluation
    def params_for(self, values: Array) -> list[VehicleParams | None]:
        """Validated parameter sets (None where a combination is physically invalid)."""
        out: list[VehicleParams | None] = []
        for row in np.atleast_2d(values):
            try:
                out.append(apply_values(self.base, self.names, row))
            except RcSimError:
                out.append(None)
        return out

    def offsets_for(self, values: Array) -> Array:
        """(P, 3) measured-frame offsets (fitted ones where free, else the start offset)."""
        values = np.atleast_2d(values)
        out = np.tile(np.asarray(self.offset0, dtype=float), (values.shape[0], 1))
        for k, i in enumerate(self.offset_idx):
            if i >= 0:
                out[:, k] = values[:, i]
        return out

    def predict(self, values: Array, win: FitWindows | None = None
                ) -> tuple[Prediction | None, list[int]]:
        """Prediction of the valid sets and their row numbers."""
        win = win or self.win
        values = np.atleast_2d(values)
        plist = self.params_for(values)
        rows = [i for i, p in enumerate(plist) if p is not None]
        self.n_evals += len(plist)
        if not rows:
            return None, rows
        ok = [p for p in plist if p is not None]
        extra = values[rows, self.names.index(DRIVE_DELAY)] if DRIVE_DELAY in self.names \
            else None
        pred = predict(ok, self.offsets_for(values)[rows], win, dt=self.settings.dt,
                       drive_delay=extra,
                       model=self.settings.model, integrator=self.settings.integrator,
                       load_transfer=self.settings.load_transfer)
        return pred, rows

    def errors(self, values: Array, win: FitWindows | None = None) -> dict[str, Array]:
        """Channel errors (P, S) of each parameter set (NaN rows for invalid ones)."""
        win = win or self.win
        values = np.atleast_2d(values)
        p_count, s = values.shape[0], win.tau.size
        errs: dict[str, np.ndarray[Any, Any]] = {ch: np.full((p_count, s), np.nan)
                                                 for ch in ('position', 'yaw', 'speed',
                                                            'yaw_rate', 'gyro')}
        errs['position_xy'] = np.full((p_count, s, 2), np.nan)
        pred, rows = self.predict(values, win)
        if pred is not None:
            sub = sample_errors(pred, win)
            for ch in errs:
                errs[ch][rows] = sub[ch]
        return errs

    def _prior(self, values: Array) -> Array:
        """Prior z-scores ((theta - mu) / sigma), scaled by sqrt(N S / (H W)) so that the cost
        adds (S / H) sum z^2 / W: the samples of one window share one smooth model error, so
        the number of windows W, not the number of samples N, counts the independent
        observations, and the priors weigh as much as S / H windows, i.e. S seconds of driving
        (``cost.prior_strength``; the cost module divides the prior term by N)."""
        if not self.prior_idx.size:
            return np.zeros((values.shape[0], 0))
        mu = np.array([self.free[i].prior_mean for i in self.prior_idx], dtype=float)
        sd = np.array([self.free[i].prior_std for i in self.prior_idx], dtype=float)
        masks = sample_masks(self.win)
        n = max(int(m.sum()) for ch, m in masks.items() if self.settings.cost.weight(ch) > 0)
        # prior_strength [s of driving] / horizon [s] = the windows the priors weigh as
        strength = self.settings.prior_strength / self.settings.horizon
        scale = np.sqrt(max(n, 1) * strength / max(self.win.n, 1))
        return np.asarray((values[:, self.prior_idx] - mu) / sd * scale)

    def _shaped(self, errs: dict[str, Array], win: FitWindows
                ) -> tuple[dict[str, Array], dict[str, Array]]:
        """Errors (P, 1, S) with NaN truth zeroed, scaled by the square root of their window's
        robust weight (fit windows only), and masks (1, S) for :mod:`cost`."""
        masks = sample_masks(win)
        scale = np.sqrt(self.window_weight)[win.sample_window] if win is self.win else \
            np.ones(win.tau.size)
        out = {}
        for ch, e in errs.items():
            key = 'position' if ch == 'position_xy' else ch
            m = masks[key] if ch != 'position_xy' else masks['position'][:, None]
            s = scale * self.noise_factor(key, win)
            if ch == 'position_xy':
                s = s[:, None]
            out[ch] = np.where(m[None], e * s, 0.0)[:, None]
        return out, {ch: m[None] for ch, m in masks.items()}

    def noise_factor(self, channel: str, win: FitWindows) -> Array:
        """Per-sample factor s / sqrt(s^2 + sigma^2): the channel's cost scale s against the
        truth's own noise sigma (:func:`rc_sim_calibration.windows.truth_noise`)."""
        s = self.settings.cost.scale(channel)
        sigma = win.noise_of(channel)
        return np.asarray(s / np.sqrt(s * s + sigma * sigma))

    def window_costs(self, values: Array) -> Array:
        """Mean normalised squared error of each fit window (W,) for one parameter set."""
        errs = self.errors(np.atleast_2d(values)[:1])
        masks = sample_masks(self.win)
        cfg = self.settings.cost
        total = np.zeros(self.win.n)
        count = np.maximum(np.bincount(self.win.sample_window, minlength=self.win.n), 1)
        for ch, m in masks.items():
            w = cfg.weight(ch)
            if w <= 0:
                continue
            f = self.noise_factor(ch, self.win)
            e2 = np.where(m, np.nan_to_num(errs[ch][0] * f) ** 2, 0.0) * w / cfg.scale(ch) ** 2
            total += np.bincount(self.win.sample_window, e2, minlength=self.win.n) / count
        return total

    def set_robust_weights(self, values: Array, spread: float = 3.0) -> Array:
        """Cauchy weights of the fit windows, w = 1 / (1 + c / (spread median c)), from the
        window costs c at ``values`` (iteratively reweighted least squares; Holland & Welsch
        1977): windows the model class cannot follow weigh less, instead of pulling every
        parameter towards them."""
        c = self.window_costs(values)
        med = float(np.median(c[c > 0])) if np.any(c > 0) else 1.0
        self.window_weight = 1.0 / (1.0 + c / (spread * med))
        return self.window_weight

    def cost_of(self, values: Array, win: FitWindows | None = None,
                config: CostConfig | None = None, with_prior: bool = True) -> Array:
        """Scalar cost (P,) of parameter values on ``win`` (default: the fit windows)."""
        win = win or self.win
        values = np.atleast_2d(values)
        errs, masks = self._shaped(self.errors(values, win), win)
        prior = self._prior(values) if with_prior else np.zeros((values.shape[0], 0))
        cfg = config or self.settings.cost
        dt = float(np.median(np.diff(win.tau[win.scored()]))) if win.tau.size > 2 else 0.01
        return scalar_cost(errs, masks, win.tau, cfg,
                           np.sum(prior ** 2, axis=1) if prior.size else None,
                           sample_dt=abs(dt) or 0.01, n_windows=win.n)

    def cost(self, u: Array) -> Array:
        """Scalar cost (P,) for unit points (P, n)."""
        c = self.cost_of(self.to_values(np.atleast_2d(u)))
        self._record(c)
        return c

    def _record(self, costs: Array) -> None:
        finite = costs[np.isfinite(costs)]
        if finite.size:
            self.best_cost = min(self.best_cost, float(finite.min()))

    def residuals(self, u: Array) -> Array:
        """Least-squares residuals (P, M) for unit points (P, n) (always the MSE form)."""
        values = self.to_values(np.atleast_2d(u))
        errs, masks = self._shaped(self.errors(values), self.win)
        r = residuals(errs, masks, self.settings.cost, self._prior(values))
        self._record(np.sum(r * r, axis=1))
        return r
