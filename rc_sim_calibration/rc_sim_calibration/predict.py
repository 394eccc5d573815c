"""Open-loop predictions of the protocol windows for a batch of parameter sets (one rollout).

For P parameter sets and W windows, ONE :func:`rc_sim_engine.vehicle.rollout.rollout` batch of P x
W cars gives every prediction. Per car and window:

* the commands (window-relative grid from ``-lookback``) are delayed by the set's
  ``command_latency`` here, as a fractional delay (a step edge is spread over one physics step,
  so the cost is continuous in the latency; the engine then runs with zero latency);
* the actuator states at the window start are computed from the delayed command history before
  it (the protocol: actuator states are not measured, a predictor derives them from the commands
  it knows): the servo target through the set's steering map and servo model (first order with
  slew limit; second order integrated semi-implicitly; the gz PD servo by its slow pole), the ESC
  duty through its lag; the rear wheel starts rolling (omega = vx / R);
* the measured initial state is moved to base_link with the measured frame's offset (known, or
  the set's fitted one), and the predicted base_link motion back to the measured frame
  (:func:`baselines.measured_from_reference`), then interpolated at the pose stamps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from typing import Any

import numpy as np

from rc_sim_calibration.baselines import measured_from_reference, reference_from_measured
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.windows import FitWindows
from rc_sim_description.errors import RcSimError
from rc_sim_description.params import VehicleParams

__all__ = ['Prediction', 'delayed_commands', 'first_order_final', 'normalised_map',
           'predict', 'servo_time_constant', 'steering_targets']

Array = np.ndarray
_K_SERIES = 1e-4
OUT_STEP = 0.01  # [s] output grid of the rollout, interpolated linearly to the pose stamps


@dataclass(frozen=True)
class Prediction:
    """Predicted measured-frame samples (P, S): x, y, yaw, vx, vy (own axes), yaw_rate; and the
    base_link grid outputs (P, W, K) at ``t_grid`` for plots (steering, wheel speed)."""

    x: Array
    y: Array
    yaw: Array
    vx: Array
    vy: Array
    yaw_rate: Array
    t_grid: Array
    steering: Array
    wheel_speed: Array
    speed_grid: Array


def delayed_commands(commands: Array, latency: Array, dt: float, n_back: int) -> Array:
    """Commands (N, C) on the step grid delayed by ``latency`` (N,) [s], fractional-delay form.

    With m = floor(L / dt) and a = L / dt - m, ``out[j] = (1 - a) c[j - m] + a c[j - m - 1]``:
    the pure delay of the engine, except that a step edge is spread linearly over one physics
    step, which makes the cost continuous in L. Samples before the lookback take the first
    command. Rows sharing a latency (a candidate's windows) are shifted together by slicing.
    """
    c = commands.shape[1]
    latency = np.asarray(latency, dtype=float)
    steps = latency / dt
    m_all = np.floor(steps).astype(int)
    if int(m_all.max(initial=0)) + 1 > n_back:
        raise CalibrationError(f'command latency {float(np.max(latency)):.3g} s exceeds the '
                               f'lookback of {n_back * dt:.3g} s')
    out = np.empty_like(commands, dtype=float)
    for value in np.unique(latency):
        rows = np.flatnonzero(latency == value)
        block = commands[rows]
        m = int(np.floor(value / dt))
        a = value / dt - m
        padded = np.concatenate([np.repeat(block[:, :1], m + 1, axis=1), block], axis=1)
        shifted = padded[:, 1:c + 1]                 # c[j - m]
        out[rows] = shifted if a == 0.0 else (1.0 - a) * shifted + a * padded[:, :c]
    return out


def first_order_final(u: Array, tau: Array, dt: float) -> Array:
    """Last value of a first-order lag y' = (u - y) / tau over the rows of u (N, C), y0 = u[:, 0].

    Exact for a zero-order-held input: y_k = a y_(k-1) + (1 - a) u_(k-1), a = exp(-dt / tau).
    """
    c = u.shape[1]
    a = np.exp(-dt / np.where(np.isfinite(tau) & (tau > 0), tau, np.inf))[:, None]
    powers = a ** np.arange(c - 2, -1, -1)[None, :]          # weight of u_k in y_(c-1)
    y = (a ** (c - 1))[:, 0] * u[:, 0] + np.sum((1.0 - a) * powers * u[:, :c - 1], axis=1)
    return np.asarray(y)


def servo_time_constant(p: VehicleParams) -> float:
    """Dominant time constant [s] of the servo: tau (first order), 2 zeta / wn (second order:
    the mean delay of its step response), or the slow pole of the gz hinge PD J s^2 + Kd s + Kp
    (over-damped: 2 J / (Kd - sqrt(Kd^2 - 4 J Kp)); under-damped: 2 J / Kd; no P gain: inf)."""
    from rc_sim_engine.vehicle.actuators import steering_hinge_inertia

    s = p.steering
    if s.servo_model == 'first_order':
        return float(s.servo_time_constant)
    if s.servo_model == 'second_order':
        return 2.0 * s.servo_damping_ratio / s.servo_natural_frequency
    j, kp, kd = steering_hinge_inertia(p), s.servo_p_gain, s.servo_d_gain
    if kp <= 0:
        return math.inf
    disc = kd * kd - 4.0 * j * kp
    if disc > 0:
        return 2.0 * j / (kd - math.sqrt(disc))
    return 2.0 * j / kd if kd > 0 else math.sqrt(j / kp)


def _shape(s: Array, k: float) -> Array:
    if k < _K_SERIES:
        return np.asarray(s * (1.0 + k * k * (1.0 - s * s) / 3.0))
    return np.asarray(np.tanh(k * s) / math.tanh(k))


def normalised_map(s: Array, p: VehicleParams) -> Array:
    """The engine's normalised steering map (``rc_sim_engine.vehicle.servo_models.steering_map``),
    vectorised: offset + g tanh(k s) / tanh(k) per side, saturated at max_steering_angle."""
    st = p.steering
    gl, gr = p.normalised_steering_gains
    s = np.clip(np.asarray(s, dtype=float), -1.0, 1.0)
    out = st.steering_offset + np.where(s >= 0.0, gl * _shape(s, st.steering_curvature_left),
                                        gr * _shape(s, st.steering_curvature_right))
    lim = st.max_steering_angle
    return np.asarray(np.clip(out, -lim, lim))


def steering_targets(commands: Array, p: VehicleParams, kind: str) -> Array:
    """Servo targets [rad] of steering commands (any shape) for one parameter set."""
    if kind == 'normalised':
        return normalised_map(commands, p)
    from rc_sim_engine.vehicle.actuators import trim_steering

    return trim_steering(commands, p)


def _servo_preroll(targets: Array, params: Sequence[VehicleParams], w: int, dt: float) -> Array:
    """Servo output at the end of the target history (P*W, C): each set's servo, started settled
    on the target 8 mean lags (at least 0.1 s) before the end, dead band and backlash left out.
    First order: the exact lag when the slew limit is never reached, else stepped with it;
    second order: semi-implicit steps (rate clamped)."""
    n, c = targets.shape
    mean_lag = [max(servo_time_constant(p), 1e-4) for p in params]
    span = min(c, max(round(8.0 * max(mean_lag) / dt), round(0.1 / dt)) + 1)
    targets = targets[:, c - span:]
    tau = np.repeat(mean_lag, w)
    rate = np.repeat([p.steering.max_steering_rate for p in params], w) * dt
    second = np.repeat([p.steering.servo_model == 'second_order' for p in params], w)
    if not second.any():
        exact = first_order_final(targets, tau, dt)
        gain = 1.0 - np.exp(-dt / tau)
        if np.all((targets.max(axis=1) - targets.min(axis=1)) * gain <= rate):
            return exact                   # |target - output| <= range: it never slews
    wn = np.repeat([p.steering.servo_natural_frequency for p in params], w)
    zeta = np.repeat([p.steering.servo_damping_ratio for p in params], w)
    gain = 1.0 - np.exp(-dt / tau)
    delta = targets[:, 0].copy()
    vel = np.zeros(n)
    # sub-steps keep the semi-implicit oscillator accurate (wn h <= 0.05)
    n_sub = max(1, math.ceil(float(np.max(wn, initial=0.0)) * dt / 0.05)) if second.any() else 1
    h = dt / n_sub
    for k in range(targets.shape[1] - 1):
        tgt = targets[:, k]
        first_step = np.clip((tgt - delta) * gain, -rate, rate)
        if second.any():
            d2, v2 = delta.copy(), vel.copy()
            for _ in range(n_sub):
                v2 = np.clip(v2 + h * (wn * wn * (tgt - d2) - 2.0 * zeta * wn * v2),
                             -rate / dt, rate / dt)
                d2 = d2 + h * v2
            delta = np.where(second, d2, delta + first_step)
            vel = np.where(second, v2, 0.0)
        else:
            delta = delta + first_step
    return delta


def predict(params: Sequence[VehicleParams], offsets: Array, win: FitWindows, *, dt: float,
            model: str = 'single_track', integrator: str = 'rk4',
            load_transfer: bool = False, drive_delay: Array | None = None) -> Prediction:
    """Measured-frame predictions (P, S) of every window for P parameter sets.

    ``offsets`` (P, 3): the measured frame in base_link per set, used for the datasets whose
    offset is unknown (the others use theirs). ``drive_delay`` (P,): the drive commands' delay
    beyond ``command_latency`` (identification only; the engine has one latency).
    """
    from rc_sim_engine.vehicle.rollout import InitialState, rollout

    p_count, w = len(params), win.n
    n_back = win.n_back
    latency = np.repeat([p.timing.command_latency for p in params], w)
    steer = delayed_commands(np.tile(win.steering_cmd, (p_count, 1)), latency, dt, n_back)
    extra = np.zeros(p_count) if drive_delay is None else np.asarray(drive_delay, dtype=float)
    drive = delayed_commands(np.tile(win.drive_cmd, (p_count, 1)),
                             np.maximum(latency + np.repeat(extra, w), 0.0), dt, n_back)
    zero_lat = [p.with_values(command_latency=0.0) if p.timing.command_latency else p
                for p in params]
    targets = np.vstack([steering_targets(steer[i * w:(i + 1) * w, :n_back + 1], p,
                                          win.steering_kind) for i, p in enumerate(params)])
    delta0 = _servo_preroll(targets, params, w, dt)
    duty0 = None
    if win.drive_kind == 'throttle':
        tau_d = np.repeat([p.drive.throttle_time_constant for p in params], w)
        duty0 = first_order_final(np.clip(drive[:, :n_back + 1], -1.0, 1.0), tau_d, dt)
    elif win.drive_kind == 'acceleration':  # the acceleration command's lag, as the duty's
        tau_a = np.repeat([p.drive.acceleration_time_constant for p in params], w)
        duty0 = first_order_final(drive[:, :n_back + 1], tau_a, dt)
    # offsets per (set, window): the known one of the window's dataset, else the set's
    known = np.array(win.offset_known)[win.bag]
    fixed = np.array(win.offsets, dtype=float).reshape(-1, 3)[win.bag]
    off = np.where(known[None, :, None], fixed[None], np.asarray(offsets, float)[:, None, :])
    off = off.reshape(p_count * w, 3)
    o: Any = (off[:, 0], off[:, 1], off[:, 2])       # per-car offsets (arrays)
    xb, yb, yawb, vxb, vyb, rb = reference_from_measured(
        np.tile(win.x0, p_count), np.tile(win.y0, p_count), np.tile(win.yaw0, p_count),
        np.tile(win.vx0, p_count), np.tile(win.vy0, p_count), np.tile(win.yaw_rate0, p_count),
        o)
    x0 = InitialState(x=xb, y=yb, yaw=yawb, vx=vxb, vy=vyb, yaw_rate=rb, steering=delta0,
                      duty=duty0)
    steps = max(1, round(OUT_STEP / dt))
    t_grid = np.arange(0.0, win.horizon + steps * dt + 1e-9, steps * dt)
    cars = [p for p in zero_lat for _ in range(w)]
    try:
        res = rollout(cars, win.t_cmd - 0.5 * dt, steer, drive, x0, t_out=t_grid, model=model,
                      integrator=integrator, dt=dt, steering_kind=win.steering_kind,
                      drive_kind=win.drive_kind, load_transfer=load_transfer)
    except RcSimError as exc:
        raise CalibrationError(f'simulation: {exc}') from None
    o_col: Any = tuple(c[:, None] for c in o)
    mx, my, myaw, mvx, mvy, mr = measured_from_reference(
        res.x, res.y, res.yaw, res.vx, res.vy, res.yaw_rate, o_col)
    # linear interpolation of the grid (P*W, K) at the samples' tau
    h = t_grid[1] - t_grid[0]
    pos = np.clip(win.tau / h, 0.0, t_grid.size - 1.000001)
    k = np.floor(pos).astype(int)
    frac = pos - k
    rows = (np.arange(p_count)[:, None] * w + win.sample_window[None, :])

    def at(grid: Array) -> Array:
        return np.asarray((1.0 - frac) * grid[rows, k] + frac * grid[rows, k + 1])

    shape = (p_count, w, t_grid.size)
    return Prediction(x=at(mx), y=at(my), yaw=at(myaw), vx=at(mvx), vy=at(mvy), yaw_rate=at(mr),
                      t_grid=t_grid, steering=res.steering.reshape(shape),
                      wheel_speed=res.wheel_speed.reshape(shape),
                      speed_grid=res.vx.reshape(shape))
