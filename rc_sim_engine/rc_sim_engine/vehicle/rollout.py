"""Open-loop rollouts of N parameter sets on recorded commands: the calibrator's fast path.

The simulation starts at ``t_out[0]`` in the state ``x0``. At physics step k (time ``t_k = t_out[0]
+ k dt``) car i applies the command recorded at ``t_k - command_latency_i``, zero-order held on
``t_cmd`` (commands before ``t_cmd[0]`` equal the first one), through the same actuators and model
as :class:`~rc_sim_engine.vehicle.car.Car`. Outputs are sampled at the physics step nearest to each
``t_out``.

Every parameter set has its own row of packed parameters, so a batch may differ in any vehicle
number, including the servo and drive parameters and even their model structure; the batch runs
in one compiled call spread over threads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams
from rc_sim_engine.vehicle import _kernels
from rc_sim_engine.vehicle.car import as_param_list, batch_array
from rc_sim_engine.vehicle.integrators import get_integrator, substeps
from rc_sim_engine.vehicle.models import get_model, steady_slip_states
from rc_sim_engine.vehicle.packed import P_DRIVE_SCALE, P_LR, P_R, pack_params, resolve_drive_kind
from rc_sim_engine.vehicle.state import (
    DUTY,
    N_STATE,
    SERVO_ANGLE,
    SERVO_TARGET,
    SPEED_REFERENCE,
    STEER,
    VX,
    VY,
    WHEEL_SPEED,
    YAW,
    YAW_RATE,
    X,
    Y,
)

__all__ = ['InitialState', 'RolloutResult', 'rollout']

FloatArray = NDArray[np.float64]

#: Commands stamped up to this long [s] after a physics step already apply on that step.
TIME_EPS = 1e-9


@dataclass(frozen=True)
class InitialState:
    """Initial base_link pose in odom and twist in base_link; scalars or (N,) arrays.

    ``wheel_speed=None`` means rolling without slip (vx / R, R the effective rolling radius);
    steering is the actual wheel angle [rad] (the servo output and its dead-band target start
    there too); ``duty`` is the ESC duty (throttle drive) or acceleration command
    (acceleration drive) after its lag, None: the first command applied (settled).
    """

    x: ArrayLike = 0.0
    y: ArrayLike = 0.0
    yaw: ArrayLike = 0.0
    vx: ArrayLike = 0.0
    vy: ArrayLike = 0.0
    yaw_rate: ArrayLike = 0.0
    steering: ArrayLike = 0.0
    wheel_speed: ArrayLike | None = None
    duty: ArrayLike | None = None


@dataclass(frozen=True)
class RolloutResult:
    """Arrays (N, len(t_out)) of base_link quantities; ``states`` is (N, len(t_out), N_STATE)."""

    t: FloatArray
    x: FloatArray
    y: FloatArray
    yaw: FloatArray
    vx: FloatArray
    vy: FloatArray
    yaw_rate: FloatArray
    speed: FloatArray
    steering: FloatArray
    wheel_speed: FloatArray
    states: FloatArray


def _times(value: ArrayLike, name: str) -> FloatArray:
    t = np.asarray(value, dtype=np.float64)
    if t.ndim != 1 or t.size == 0:
        raise ConfigError(f'{name}: expected a non-empty 1-D array of times, got shape {t.shape}')
    if not np.all(np.isfinite(t)):
        raise ConfigError(f'{name}: times must be finite')
    if np.any(np.diff(t) < 0):
        raise ConfigError(f'{name}: times must be non-decreasing')
    return t


def _commands(value: ArrayLike, n: int, n_t: int, name: str) -> FloatArray:
    c = np.asarray(value, dtype=np.float64)
    if c.shape == (n_t,):
        c = c[None, :]
    elif c.shape != (n, n_t):
        raise ConfigError(f'{name}: expected shape ({n_t},) or ({n}, {n_t}), got {c.shape}')
    if not np.all(np.isfinite(c)):
        raise ConfigError(f'{name}: commands must be finite (NaN or inf found)')
    return np.ascontiguousarray(c)


def initial_states(x0: InitialState | None, packed: FloatArray) -> FloatArray:
    """(N, N_STATE) engine states (CG based) from a base_link initial state; the transient
    slip angles at their steady state."""
    n = packed.shape[0]
    x0 = x0 or InitialState()
    lr, radius = packed[:, P_LR], packed[:, P_R]
    yaw = batch_array(x0.yaw, n, 'x0.yaw')
    r = batch_array(x0.yaw_rate, n, 'x0.yaw_rate')
    vx = batch_array(x0.vx, n, 'x0.vx')
    s = np.zeros((n, N_STATE))
    s[:, X] = batch_array(x0.x, n, 'x0.x') + lr * np.cos(yaw)
    s[:, Y] = batch_array(x0.y, n, 'x0.y') + lr * np.sin(yaw)
    s[:, YAW] = yaw
    s[:, VX] = vx
    s[:, SPEED_REFERENCE] = vx
    s[:, VY] = batch_array(x0.vy, n, 'x0.vy') + lr * r
    s[:, YAW_RATE] = r
    s[:, STEER] = batch_array(x0.steering, n, 'x0.steering')
    s[:, SERVO_ANGLE] = s[:, STEER]
    s[:, SERVO_TARGET] = s[:, STEER]
    if x0.duty is not None:
        s[:, DUTY] = batch_array(x0.duty, n, 'x0.duty')
    s[:, WHEEL_SPEED] = (vx / radius if x0.wheel_speed is None
                         else batch_array(x0.wheel_speed, n, 'x0.wheel_speed'))
    steady_slip_states(s, packed)  # the tyres' transient slip starts settled
    return s


def rollout(params: Sequence[VehicleParams] | VehicleParams, t_cmd: ArrayLike,
            steering_cmd: ArrayLike, wheel_speed_cmd: ArrayLike, x0: InitialState | None, *,
            t_out: ArrayLike, model: str = 'single_track', integrator: str = 'rk4',
            dt: float = 1e-3, tyre_model: str | None = None,
            load_transfer: bool = False, steering_kind: str = 'angle',
            drive_kind: str = 'wheel_speed') -> RolloutResult:
    """Simulate every parameter set on the commands; see the module docstring for timing.

    Args:
        params: N parameter sets (or one).
        t_cmd: (T,) command times [s]; steering_cmd and wheel_speed_cmd are (T,) shared or
            (N, T) per car (by default the mapper outputs /steering_angle [rad] and
            /rear_wheel_speed [rad/s]).
        x0: initial state at ``t_out[0]`` (None: at rest at the origin).
        t_out: (M,) non-decreasing output times [s].
        steering_kind: ``'angle'`` [rad] or ``'normalised'`` (servo command in [-1, 1] through
            the left/right map of vehicle.yaml).
        drive_kind: ``'wheel_speed'`` [rad/s], ``'speed'`` [m/s], ``'throttle'`` (ESC duty in
            [-1, 1], needs ``drive.drive_model: throttle``), ``'acceleration'`` [m/s^2] or
            ``'force'`` [N] (``drive_model: acceleration``); as
            :class:`~rc_sim_engine.vehicle.car.Car`.
    """
    plist = as_param_list(params)
    drive = resolve_drive_kind(plist, drive_kind)
    n = len(plist)
    tc = _times(t_cmd, 't_cmd')
    to = _times(t_out, 't_out')
    steer = _commands(steering_cmd, n, tc.size, 'steering_cmd')
    wheel = _commands(wheel_speed_cmd, n, tc.size, 'wheel_speed_cmd')
    if steer.shape != wheel.shape:  # one shared, one per car: give both a row per car
        steer = np.ascontiguousarray(np.broadcast_to(steer, (n, tc.size)))
        wheel = np.ascontiguousarray(np.broadcast_to(wheel, (n, tc.size)))
    mdl = get_model(model)
    integ_id = get_integrator(integrator)
    n_sub = substeps(dt)
    packed = pack_params(plist, tyre_model=tyre_model, load_transfer=load_transfer,
                         substep=float(dt) / n_sub, steering_kind=steering_kind,
                         drive_kind=drive)
    states = initial_states(x0, packed)
    latency = np.array([p.timing.command_latency for p in plist])
    if (x0 is None or x0.duty is None) and drive in ('throttle', 'acceleration', 'force'):
        # the duty's (acceleration's) lag settled on the first command
        first = np.searchsorted(tc, to[0] - latency + TIME_EPS, side='right') - 1
        rows = wheel[np.arange(n) if wheel.shape[0] == n else np.zeros(n, dtype=np.int64)]
        u = rows[np.arange(n), np.maximum(first, 0)] * packed[:, P_DRIVE_SCALE]
        states[:, DUTY] = np.clip(u, -1.0, 1.0) if drive == 'throttle' else u

    record_after = np.rint((to - to[0]) / dt).astype(np.int64)
    n_steps = int(record_after[-1])

    out = np.empty((n, to.size, N_STATE))
    _kernels.rollout_cars(states, packed, tc, steer, wheel, latency, float(to[0]), float(dt),
                          n_steps, n_sub, mdl.kernel_id, integ_id, mdl.project_kinematic,
                          record_after, out, TIME_EPS)
    lr = packed[:, P_LR, None]
    yaw = out[:, :, YAW]
    vx, vy_cg, r = out[:, :, VX], out[:, :, VY], out[:, :, YAW_RATE]
    return RolloutResult(
        t=to.copy(),
        x=out[:, :, X] - lr * np.cos(yaw),
        y=out[:, :, Y] - lr * np.sin(yaw),
        yaw=yaw.copy(),
        vx=vx.copy(),
        vy=vy_cg - lr * r,
        yaw_rate=r.copy(),
        speed=np.copysign(np.hypot(vx, vy_cg - lr * r), vx),
        steering=out[:, :, STEER].copy(),
        wheel_speed=out[:, :, WHEEL_SPEED].copy(),
        states=out,
    )
