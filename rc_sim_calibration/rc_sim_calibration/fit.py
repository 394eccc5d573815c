"""Fit vehicle parameters to recorded data by replaying the recorded commands in the engine.

Each bag is cut into consecutive windows of ``horizon`` seconds. Every window is replayed
open-loop from the measured state at its start (pose, body velocities, yaw rate; steering at the
trimmed delayed command, wheels rolling without slip) with the recorded commands, including the
commands issued up to ``lookback`` seconds before the window so a command latency draws on the real
history. For P candidate parameter sets and W windows, ONE batch rollout of P x W cars
(:func:`rc_sim_engine.rollout.rollout`) gives every prediction of a population.

Search coordinates: each free parameter maps onto u in [0, 1], linearly, or logarithmically when
its bounds are positive and span a factor >= 3 (stiffnesses, inertias, gains).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
import math
import time
from typing import Any

import numpy as np

from rc_sim_calibration.cost import CHANNELS, channel_metrics, residuals, scalar_cost
from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.identifiability import Identifiability, analyse
from rc_sim_calibration.optimizers import OptimResult, optimise, polish
from rc_sim_calibration.settings import FitSettings, FreeParameter, apply_values, resolve_free
from rc_sim_description.errors import RcSimError
from rc_sim_description.params import SECTIONS, VehicleParams

__all__ = [
    'FitResult',
    'Problem',
    'Windows',
    'bag_metrics',
    'fit',
    'make_windows',
    'parameter_unit',
    'predict_windows',
]

Array = np.ndarray
ProgressFn = Callable[[int], None]

_MIN_WINDOW_SPEED = 0.1  # [m/s] windows slower than this everywhere carry no information


@dataclass(frozen=True)
class Windows:
    """W re-initialised windows over one or more datasets (see the module docstring)."""

    bag: Array            # (W,) dataset index of each window
    t0: Array             # (W,) start time in its bag [s]
    t_rel: Array          # (K,) window-relative output times [s]
    meas: dict[str, Array]  # x, y, vx, yaw_rate, wheel_speed: (W, K)
    x0: dict[str, Array]  # x, y, yaw, vx, vy, yaw_rate: (W,)
    t_cmd: Array          # (C,) window-relative command times [s], from -lookback
    steering_cmd: Array   # (W, C)
    wheel_speed_cmd: Array  # (W, C)
    names: tuple[str, ...]  # dataset names

    @property
    def n(self) -> int:
        """Number of windows."""
        return int(self.bag.size)

    def masks(self) -> dict[str, Array]:
        """Valid-sample masks (W, K) per channel (wheel speed only where measured)."""
        full = np.ones((self.n, self.t_rel.size), dtype=bool)
        return {'position': full, 'speed': full, 'yaw_rate': full,
                'wheel_speed': np.isfinite(self.meas['wheel_speed'])}

    def subset(self, keep: Array) -> Windows:
        """Windows selected by a boolean mask (W,)."""
        return Windows(bag=self.bag[keep], t0=self.t0[keep], t_rel=self.t_rel,
                       meas={k: v[keep] for k, v in self.meas.items()},
                       x0={k: v[keep] for k, v in self.x0.items()}, t_cmd=self.t_cmd,
                       steering_cmd=self.steering_cmd[keep],
                       wheel_speed_cmd=self.wheel_speed_cmd[keep], names=self.names)


def _initial_state_signals(ds: Dataset) -> dict[str, Array]:
    """Signals the windows start from: the pose as measured, velocities Savitzky-Golay smoothed.

    The noise of a single velocity sample would enter every window's initial state (an
    errors-in-variables bias of the transient parameters); a centred quadratic fit over 7 samples
    (0.14 s at 50 Hz) removes most of it and keeps ramps unbiased.
    """
    from scipy.signal import savgol_filter

    out = {k: np.asarray(getattr(ds, k)) for k in ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate')}
    if ds.t.size >= 7:
        for k in ('vx', 'vy', 'yaw_rate'):
            out[k] = savgol_filter(out[k], 7, 2)
    return out


def make_windows(datasets: Sequence[Dataset], horizon: float | None, *, lookback: float,
                 command_dt: float) -> Windows:
    """Cut every dataset into windows of ``horizon`` s (a shorter remainder is dropped).

    ``horizon=None`` makes one window of the whole first dataset (open-loop replay).
    """
    if not datasets:
        raise CalibrationError('no datasets to fit')
    rate = 1.0 / float(np.median(np.diff(datasets[0].t)))
    if horizon is None:
        datasets = datasets[:1]
        horizon = (datasets[0].t.size - 1) / rate
    k = round(horizon * rate) + 1
    t_rel = np.arange(k) / rate
    n_back = math.ceil(lookback / command_dt)
    t_cmd = (np.arange(n_back + math.ceil(horizon / command_dt) + 2) - n_back) * command_dt
    t_cmd[n_back] = 0.0
    rows: dict[str, list[Array]] = {key: [] for key in
                                    ('x', 'y', 'vx', 'yaw_rate', 'wheel_speed')}
    x0: dict[str, list[float]] = {key: [] for key in
                                  ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate')}
    bag: list[int] = []
    t0: list[float] = []
    steer: list[Array] = []
    wheel: list[Array] = []
    for i, ds in enumerate(datasets):
        init = _initial_state_signals(ds)
        starts = range(0, ds.t.size - k + 1, k - 1)
        for s in starts:
            sl = slice(s, s + k)
            cmd_s, cmd_w = ds.commands_at(ds.t[s] + t_cmd)
            if (k < ds.t.size and np.abs(ds.vx[sl]).max() < _MIN_WINDOW_SPEED and
                    not np.any(cmd_w)):
                continue
            bag.append(i)
            t0.append(float(ds.t[s]))
            for key in rows:
                rows[key].append(getattr(ds, key)[sl])
            for key in x0:
                x0[key].append(float(init[key][s]))
            steer.append(cmd_s)
            wheel.append(cmd_w)
    if not bag:
        names = ', '.join(ds.name for ds in datasets)
        raise CalibrationError(f'no {horizon:g} s window with motion in {names} '
                               '(bags too short or the car never moved)')
    return Windows(bag=np.array(bag), t0=np.array(t0), t_rel=t_rel,
                   meas={k_: np.array(v) for k_, v in rows.items()},
                   x0={k_: np.array(v) for k_, v in x0.items()}, t_cmd=t_cmd,
                   steering_cmd=np.array(steer), wheel_speed_cmd=np.array(wheel),
                   names=tuple(ds.name for ds in datasets))


def delayed_commands(commands: Array, latency: Array, dt: float, n_back: int) -> Array:
    """Commands (N, C) on the step grid delayed by ``latency`` (N,) [s], fractional-delay form.

    With m = floor(L / dt) and a = L / dt - m, ``out[j] = (1 - a) c[j - m] + a c[j - m - 1]``:
    the pure delay of the engine (``rc_sim_engine.rollout``), except that a step edge is spread
    linearly over one physics step, which makes the cost continuous in L (the engine quantises L
    to whole steps). Samples before the lookback take the first command.
    """
    n, c = commands.shape
    steps = latency / dt
    m = np.floor(steps).astype(int)
    a = (steps - m)[:, None]
    j = np.arange(c)[None, :]
    lo = np.clip(j - m[:, None], 0, c - 1)
    lo2 = np.clip(j - m[:, None] - 1, 0, c - 1)
    rows = np.arange(n)[:, None]
    out = (1.0 - a) * commands[rows, lo] + a * commands[rows, lo2]
    if int(m.max(initial=0)) + 1 > n_back:
        raise CalibrationError(f'command latency {float(latency.max()):.3g} s exceeds the '
                               f'lookback of {n_back * dt:.3g} s')
    return np.asarray(out)


def servo_time_constant(p: VehicleParams) -> float:
    """Dominant time constant [s] of the hinge servo J s^2 + Kd s + Kp (engine actuators).

    Over-damped: tau = 2 J / (Kd - sqrt(Kd^2 - 4 J Kp)) (slow pole); under-damped: the envelope
    2 J / Kd; no P gain: inf. J from :func:`rc_sim_engine.actuators.steering_hinge_inertia`.
    """
    from rc_sim_engine.actuators import steering_hinge_inertia

    j, kp, kd = steering_hinge_inertia(p), p.steering.servo_p_gain, p.steering.servo_d_gain
    if kp <= 0:
        return math.inf
    disc = kd * kd - 4.0 * j * kp
    if disc > 0:
        return 2.0 * j / (kd - math.sqrt(disc))
    return 2.0 * j / kd if kd > 0 else math.sqrt(j / kp)


def first_order_final(u: Array, tau: Array, dt: float) -> Array:
    """Last value of a first-order lag y' = (u - y) / tau over the rows of u (N, C), y0 = u[:, 0].

    Exact for a zero-order-held input: y_k = a y_(k-1) + (1 - a) u_(k-1), a = exp(-dt / tau).
    """
    c = u.shape[1]
    a = np.exp(-dt / np.where(np.isfinite(tau) & (tau > 0), tau, np.inf))[:, None]
    powers = a ** np.arange(c - 2, -1, -1)[None, :]          # weight of u_k in y_(c-1)
    y = (a ** (c - 1))[:, 0] * u[:, 0] + np.sum((1.0 - a) * powers * u[:, :c - 1], axis=1)
    return np.asarray(y)


def predict_windows(params: Sequence[VehicleParams], win: Windows, settings: FitSettings
                    ) -> dict[str, Array]:
    """Predictions (P, W, K) of x, y, vx, yaw_rate, wheel_speed for P parameter sets.

    The latency is applied here (:func:`delayed_commands`), so the engine runs with zero latency.
    """
    from rc_sim_engine.rollout import InitialState, rollout

    p_count, w = len(params), win.n
    dt = settings.dt
    n_back = int(np.sum(win.t_cmd < -1e-9 * dt))
    latency = np.repeat([p.timing.command_latency for p in params], w)
    steer = delayed_commands(np.tile(win.steering_cmd, (p_count, 1)), latency, dt, n_back)
    wheel = delayed_commands(np.tile(win.wheel_speed_cmd, (p_count, 1)), latency, dt, n_back)
    plist = [p.with_values(command_latency=0.0) if p.timing.command_latency else p
             for p in params]
    plist = [p for p in plist for _ in range(w)]
    # Initial steering: the trimmed, delayed command history through the servo's dominant lag.
    gain = np.repeat([p.steering.steering_gain for p in params], w)
    offset = np.repeat([p.steering.steering_offset for p in params], w)
    limit = np.repeat([p.steering.max_steering_angle for p in params], w)
    tau = np.repeat([servo_time_constant(p) for p in params], w)
    target = np.clip(gain[:, None] * steer[:, :n_back + 1] + offset[:, None], -limit[:, None],
                     limit[:, None])
    delta0 = first_order_final(target, tau, dt)
    x0 = InitialState(**{k: np.tile(v, p_count) for k, v in win.x0.items()}, steering=delta0)
    # Step k of the engine (time k dt) looks up the last t_cmd <= k dt: label the samples half a
    # step early so float rounding cannot pick the neighbour.
    t_lookup = win.t_cmd - 0.5 * dt
    try:
        res = rollout(plist, t_lookup, steer, wheel, x0, t_out=win.t_rel, model=settings.model,
                      integrator=settings.integrator, dt=dt)
    except RcSimError as exc:
        raise CalibrationError(f'simulation: {exc}') from None
    shape = (p_count, w, win.t_rel.size)
    return {'x': res.x.reshape(shape), 'y': res.y.reshape(shape), 'yaw': res.yaw.reshape(shape),
            'vx': res.vx.reshape(shape), 'vy': res.vy.reshape(shape),
            'yaw_rate': res.yaw_rate.reshape(shape),
            'wheel_speed': res.wheel_speed.reshape(shape),
            'steering': res.steering.reshape(shape)}


def window_errors(pred: dict[str, Array], win: Windows) -> dict[str, Array]:
    """Channel errors (P, W, K): position distance, speed, yaw rate, wheel speed."""
    m = win.meas
    dx, dy = pred['x'] - m['x'][None], pred['y'] - m['y'][None]
    return {'position': np.hypot(dx, dy), 'position_xy': np.stack([dx, dy], axis=-1),
            'speed': pred['vx'] - m['vx'][None],
            'yaw_rate': pred['yaw_rate'] - m['yaw_rate'][None],
            'wheel_speed': np.where(np.isfinite(m['wheel_speed'])[None],
                                    pred['wheel_speed'] - np.nan_to_num(m['wheel_speed'])[None],
                                    0.0)}


class Problem:
    """Free parameters, windows and settings: batch cost and residuals over unit coordinates."""

    def __init__(self, base: VehicleParams, free: Sequence[FreeParameter], win: Windows,
                 settings: FitSettings) -> None:
        self.base, self.free, self.win, self.settings = base, list(free), win, settings
        self.names = tuple(f.name for f in self.free)
        lo = np.array([f.lower for f in self.free])
        hi = np.array([f.upper for f in self.free])
        self.log = (lo > 0) & (hi / np.where(lo > 0, lo, 1.0) >= 3.0)
        self.lo = np.where(self.log, np.log(np.where(self.log, lo, 1.0)), lo)
        self.hi = np.where(self.log, np.log(np.where(self.log, hi, 1.0)), hi)
        self.masks = win.masks()
        self.prior_idx = np.array([i for i, f in enumerate(self.free) if f.prior_std is not None],
                                  dtype=int)
        self.n_evals = 0

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

    def errors(self, values: Array, win: Windows | None = None) -> dict[str, Array]:
        """Channel errors (P, W, K) of each parameter set (NaN rows for invalid ones)."""
        win = win or self.win
        plist = self.params_for(values)
        ok = [p for p in plist if p is not None]
        p_count = len(plist)
        shape = (p_count, win.n, win.t_rel.size)
        errs: dict[str, np.ndarray[Any, Any]] = {ch: np.full(shape, np.nan) for ch in CHANNELS}
        errs['position_xy'] = np.full((*shape, 2), np.nan)
        if ok:
            pred = predict_windows(ok, win, self.settings)
            sub = window_errors(pred, win)
            rows = [i for i, p in enumerate(plist) if p is not None]
            for ch in errs:
                errs[ch][rows] = sub[ch]
        self.n_evals += p_count
        return errs

    def _prior(self, values: Array) -> Array:
        if not self.prior_idx.size:
            return np.zeros((values.shape[0], 0))
        mu = np.array([self.free[i].prior_mean for i in self.prior_idx], dtype=float)
        sd = np.array([self.free[i].prior_std for i in self.prior_idx], dtype=float)
        return np.asarray((values[:, self.prior_idx] - mu) / sd)

    def cost(self, u: Array) -> Array:
        """Scalar cost (P,) for unit points (P, n)."""
        values = self.to_values(np.atleast_2d(u))
        errs = self.errors(values)
        prior = self._prior(values)
        return scalar_cost(errs, self.masks, self.win.t_rel, self.settings.cost,
                           np.sum(prior ** 2, axis=1) if prior.size else None)

    def residuals(self, u: Array) -> Array:
        """Least-squares residuals (P, M) for unit points (P, n) (always the MSE form)."""
        values = self.to_values(np.atleast_2d(u))
        return residuals(self.errors(values), self.masks, self.settings.cost,
                         self._prior(values))

    def mse_cost(self, u: Array) -> Array:
        """The MSE-form cost (sum of squared residuals) of unit points."""
        r = self.residuals(u)
        return np.asarray(np.sum(r * r, axis=1))


# --------------------------------------------------------------------------- metrics
def bag_metrics(errs: dict[str, Array], win: Windows) -> list[dict[str, dict[str, float]]]:
    """Per dataset, per channel {'rmse', 'mse', 'itae'} of the first parameter set."""
    masks = win.masks()
    out: list[dict[str, dict[str, float]]] = []
    for b in range(len(win.names)):
        sel = win.bag == b
        if not sel.any():
            out.append({})
            continue
        sub = {ch: e[:, sel] for ch, e in errs.items() if ch in masks}
        m = channel_metrics(sub, {ch: masks[ch][sel] for ch in sub}, win.t_rel)
        out.append({ch: {k: float(v[0]) for k, v in d.items()} for ch, d in m.items()})
    return out


@dataclass
class FitResult:
    """Outcome of :func:`fit` (values, metrics, optimiser trace, identifiability)."""

    names: tuple[str, ...]
    start: Array
    values: Array
    lower: Array
    upper: Array
    params: VehicleParams
    cost_start: float
    cost_final: float
    n_evals: int
    wall_time: float
    global_result: OptimResult
    polish_result: OptimResult | None
    identifiability: Identifiability
    train_names: tuple[str, ...]
    validate_names: tuple[str, ...]
    train_metrics: dict[str, list[dict[str, dict[str, float]]]]  # 'nominal'/'calibrated' -> bags
    validate_metrics: dict[str, list[dict[str, dict[str, float]]]]
    validate_cost: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        """Header lines for the calibrated YAML (fit metrics)."""
        lines = [f'rc_sim_calibration fit: {len(self.train_names)} training bag(s), '
                 f'{len(self.validate_names)} validation bag(s), {self.n_evals} evaluations, '
                 f'{self.wall_time:.1f} s',
                 f'training cost {self.cost_start:.4g} (nominal) -> {self.cost_final:.4g}']
        for label, table in (('train', self.train_metrics), ('validate', self.validate_metrics)):
            for ch in ('position', 'speed', 'yaw_rate'):
                before = _mean_metric(table.get('nominal', []), ch)
                after = _mean_metric(table.get('calibrated', []), ch)
                if before is not None and after is not None:
                    lines.append(f'{label} {ch} RMSE: {before:.4g} -> {after:.4g} '
                                 f'{_CHANNEL_UNITS[ch]}')
        for i, name in enumerate(self.names):
            se = self.identifiability.std_errors[i]
            unit = parameter_unit(name)
            lines.append(f'{name}: {self.start[i]:.6g} -> {self.values[i]:.6g} {unit} '
                         f'(se {se:.3g})')
        lines += [f'warning: {w}' for w in self.warnings]
        return lines


_CHANNEL_UNITS = {'position': 'm', 'speed': 'm/s', 'yaw_rate': 'rad/s'}


def parameter_unit(name: str) -> str:
    """Unit of a free parameter from the vehicle.yaml schema ('-' for Pacejka coefficients)."""
    for cls in SECTIONS.values():
        for f in fields(cls):
            if f.name == name:
                return str(f.metadata.get('unit', '-'))
    return '-'


def _mean_metric(bags: list[dict[str, dict[str, float]]], ch: str) -> float | None:
    vals = [b[ch]['mse'] for b in bags if ch in b]
    return math.sqrt(sum(vals) / len(vals)) if vals else None


def fit(train: Sequence[Dataset], base: VehicleParams, settings: FitSettings, *,
        validate: Sequence[Dataset] = (), progress: ProgressFn | None = None) -> FitResult:
    """Fit the free parameters of ``settings`` on ``train``; report on ``validate`` too."""
    started = time.perf_counter()
    free = resolve_free(settings, base)
    lat_hi = max([f.upper for f in free if f.name == 'command_latency'] +
                 [base.timing.command_latency])
    lookback = lat_hi + 2 * settings.dt
    win = make_windows(train, settings.horizon, lookback=lookback, command_dt=settings.dt)
    problem = Problem(base, free, win, settings)
    u0 = problem.to_unit(np.array([f.start for f in free]))
    rng = np.random.default_rng(settings.seed)
    tick = progress or (lambda _: None)

    result = optimise(settings.optimizer, problem.cost, u0, rng, budget=settings.budget,
                      popsize=settings.popsize, sigma0=settings.sigma0, progress=tick)
    cost_start = float(result.history_best[0]) if settings.optimizer == 'cma' else \
        float(problem.cost(u0[None])[0])
    u_best = result.u
    polish_res: OptimResult | None = None
    if settings.polish:
        polish_res, r, jac_u = polish(problem.residuals, u_best,
                                      max_nfev=settings.polish_max_nfev, progress=tick)
        if float(problem.cost(polish_res.u[None])[0]) <= result.cost:
            u_best = polish_res.u
    if polish_res is None or not np.array_equal(u_best, polish_res.u):
        _, r, jac_u = polish(problem.residuals, u_best, max_nfev=1, progress=tick)
    values = problem.to_values(u_best)
    jac = jac_u / problem.dvalue_du(u_best)[None, :]
    ident = analyse(jac, r, problem.names, values,
                    ranges=np.array([f.span for f in free]))
    params = apply_values(base, problem.names, values)
    cost_final = float(problem.cost(u_best[None])[0])

    train_metrics, val_metrics, val_cost, warnings = _report_metrics(
        problem, values, u0, train, validate, settings, lookback)
    if cost_final > cost_start:
        warnings.append('the fit did not improve on the nominal parameters')
    for i, f in enumerate(free):
        if min(u_best[i], 1.0 - u_best[i]) < 1e-3:
            side = 'lower' if u_best[i] < 0.5 else 'upper'
            warnings.append(f'{f.name} ended at its {side} bound ({values[i]:.6g}): widen the '
                            'bounds or fix the parameter')
    return FitResult(
        names=problem.names, start=np.array([f.start for f in free]), values=values,
        lower=np.array([f.lower for f in free]), upper=np.array([f.upper for f in free]),
        params=params, cost_start=cost_start, cost_final=cost_final,
        n_evals=problem.n_evals, wall_time=time.perf_counter() - started,
        global_result=result, polish_result=polish_res, identifiability=ident,
        train_names=tuple(d.name for d in train), validate_names=tuple(d.name for d in validate),
        train_metrics=train_metrics, validate_metrics=val_metrics, validate_cost=val_cost,
        warnings=warnings + list(ident.flags))


def _report_metrics(problem: Problem, values: Array, u0: Array, train: Sequence[Dataset],
                    validate: Sequence[Dataset], settings: FitSettings, lookback: float
                    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, float], list[str]]:
    both = np.vstack([problem.to_values(u0), values])
    errs = problem.errors(both)
    train_m = {'nominal': bag_metrics({k: v[:1] for k, v in errs.items()}, problem.win),
               'calibrated': bag_metrics({k: v[1:] for k, v in errs.items()}, problem.win)}
    val_m: dict[str, Any] = {}
    val_cost: dict[str, float] = {}
    warnings: list[str] = []
    if validate:
        vwin = make_windows(validate, settings.horizon, lookback=lookback,
                            command_dt=settings.dt)
        verrs = problem.errors(both, vwin)
        val_m = {'nominal': bag_metrics({k: v[:1] for k, v in verrs.items()}, vwin),
                 'calibrated': bag_metrics({k: v[1:] for k, v in verrs.items()}, vwin)}
        vc = scalar_cost(verrs, vwin.masks(), vwin.t_rel, settings.cost)
        tc = scalar_cost(errs, problem.masks, problem.win.t_rel, settings.cost)
        val_cost = {'nominal': float(vc[0]), 'calibrated': float(vc[1])}
        if vc[1] > vc[0] and tc[1] < tc[0]:
            warnings.append(f'validation cost rose ({vc[0]:.4g} -> {vc[1]:.4g}) while the '
                            f'training cost fell ({tc[0]:.4g} -> {tc[1]:.4g}): over-fitting '
                            'or manoeuvres the training bags do not cover')
    return train_m, val_m, val_cost, warnings
