"""Vehicle models: pure right-hand sides ``dx = f(x, p)`` of the chassis ODE; registry MODELS.

The model inputs are the actuator outputs held in the state (``STEER`` = actual bicycle angle
delta, ``WHEEL_SPEED`` = rear wheel spin omega); the actuators
(:mod:`rc_sim_engine.vehicle.actuators`) move them. Each right-hand side fills the derivative of
the chassis fields X, Y, YAW, VX, VY, YAW_RATE; the other fields get 0 (actuators are advanced by
their own sub-steps, the wheel joint angles by :func:`wheel_joint_rates` once per sub-step, which
is plenty for /joint_states).

**single_track** (dynamic bicycle at the CG; Rajamani, *Vehicle Dynamics and Control* §2.5),
body frame, front wheel free rolling, rear wheel driven by slip::

    alpha_f = -atan2(v_fy, |v_fx|)  with (v_fx, v_fy) the front contact velocity in the wheel frame
    alpha_r = -atan2(vy - lr r, |vx|)
    kappa   = (R omega - vx) / max(|vx|, V_EPS),   Fx_r = Fz_r MF_long(kappa)
    m (dvx/dt - vy r) = Fx_r - Fy_f sin(delta)
    m (dvy/dt + vx r) = Fy_r + Fy_f cos(delta)
    Iz dr/dt          = lf Fy_f cos(delta) - lr Fy_r

with Fy from :mod:`rc_sim_engine.vehicle.tyres` (linear | fiala | fiala_unsaturated | pacejka).
With a tyre relaxation length sigma > 0 the axle's force takes the transient slip angle alpha'
(state ALPHA_FRONT / ALPHA_REAR) instead, ``d(alpha')/dt = lambda (alpha_V - alpha')`` (alpha_V:
the slip angle with |v_x| floored at V_EPS, so alpha' settles at rest), ``lambda =
min(max(|v_x|, V_EPS) / sigma, RELAX_RATE_MAX)`` (Pacejka, *Tire and Vehicle Dynamics* 2012, 7.2,
first-order transient model with the atan2 slip angle). With both axles locked together
(``drive.driven_axles: both_locked``) the front axle adds ``Fx_f = Fz_f MF_long(kappa_f)`` along
its wheel, ``kappa_f = (R omega - v_fx) / max(|v_fx|, V_EPS)``; a throttle drive's motor force
F (capped at ``D (Fz_f + Fz_r)``) is shared ``Fx_f = F Fz_f / (Fz_f + Fz_r)`` along the front
wheel, the rest at the rear. Axle loads
are static ``Fz_f = m g lr / L``, ``Fz_r = m g lf / L`` or, with load transfer, shifted by ``m ax h
/ L`` (ax estimated as the drive force / m at static loads: Fx_r, plus Fx_f cos(delta) with both
axles locked). Below ``V_BLEND_LOW`` the derivative is the
kinematic one, above ``V_BLEND_HIGH`` the dynamic one, with a C1 smoothstep weight in between: no
1/v anywhere, so standstill and reverse are NaN-free.

**kinematic** (bicycle with no tyre slip, reference at the CG): yaw rate ``r* = vx tan(delta) /
L``, lateral CG velocity ``vy* = lr r*``, ``dvx/dt = Fx_r / m`` (same rear slip drive). VY and
YAW_RATE relax to their constrained values with time constant ``KINEMATIC_RELAXATION``; the stepper
projects them exactly after every step of the pure kinematic model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math

from numba import njit
import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_engine.vehicle.drive_models import (
    acceleration_force,
    dead_band_duty,
    limited_acceleration,
    steering_drag,
    throttle_force,
)
from rc_sim_engine.vehicle.four_wheel_steering import rear_contact_speed, velocity_rates_4ws
from rc_sim_engine.vehicle.packed import (
    P_ACC_GAIN,
    P_ACC_MAX,
    P_AWD,
    P_CF,
    P_CM1,
    P_CM2,
    P_CR,
    P_CR0,
    P_CR1,
    P_CR2,
    P_CRD,
    P_DEC_MAX,
    P_DRIVE_MODEL,
    P_DUTY_DEAD_BAND,
    P_FZ_FRONT,
    P_FZ_REAR,
    P_GRIP_LONG,
    P_H,
    P_IZ,
    P_L,
    P_LAT_B,
    P_LAT_C,
    P_LAT_D,
    P_LAT_E,
    P_LF,
    P_LOAD_TRANSFER,
    P_LON_B,
    P_LON_C,
    P_LON_D,
    P_LON_E,
    P_LR,
    P_M,
    P_MU_LAT,
    P_R,
    P_REAR_STEER,
    P_SIGMA_F,
    P_SIGMA_R,
    P_TRACK,
    P_TYRE,
)
from rc_sim_engine.vehicle.state import (
    ALPHA_FRONT,
    ALPHA_REAR,
    DUTY,
    N_STATE,
    STEER,
    VX,
    VY,
    WHEEL_SPEED,
    YAW,
    YAW_RATE,
    X,
    Y,
)
from rc_sim_engine.vehicle.tyres import lateral_force, mf_shape

__all__ = [
    'KINEMATIC_RELAXATION',
    'MODELS',
    'RELAX_RATE_MAX',
    'V_BLEND_HIGH',
    'V_BLEND_LOW',
    'V_EPS',
    'VehicleModel',
    'drive_input',
    'force_drive',
    'force_drive_at_rest',
    'get_model',
    'kinematic_4ws_model_rates',
    'kinematic_4ws_rhs',
    'kinematic_rhs',
    'model_rhs',
    'single_track_forces',
    'single_track_rhs',
    'slip_angles',
    'steady_slip_states',
    'velocity_rates',
    'wheel_joint_rates',
]

#: Below this |vx| [m/s] the single-track derivative is purely kinematic.
V_BLEND_LOW = 0.5
#: Above this |vx| [m/s] it is purely dynamic (smoothstep blend in between).
V_BLEND_HIGH = 1.0
#: Floor of the slip-ratio denominator [m/s] (keeps kappa finite at standstill).
V_EPS = 0.2
#: Time constant [s] pulling VY, YAW_RATE onto the kinematic constraint.
KINEMATIC_RELAXATION = 0.02
#: Cap [1/s] of the tyre relaxation rate |v_x| / sigma: 1 / (the largest sub-step, 2.5 ms), so
#: the explicit steps stay monotone (lambda h <= 1); a shorter lag is not visible at that step.
RELAX_RATE_MAX = 400.0


@njit(cache=True, error_model='numpy', inline='always')
def axle_loads(p: NDArray[np.float64], fx: float) -> tuple[float, float]:
    """(Fz_front, Fz_rear) [N]: static ``m g lr / L, m g lf / L``, shifted by ``Fx h / L``
    (= m ax h / L) when load transfer is on; ``fx`` the drive force along the car [N]."""
    fz_f = p[P_FZ_FRONT]
    fz_r = p[P_FZ_REAR]
    if p[P_LOAD_TRANSFER] > 0.5:
        shift = fx * p[P_H] / p[P_L]
        shift = max(-0.9 * fz_r, min(0.9 * fz_f, shift))
        fz_f -= shift
        fz_r += shift
    return fz_f, fz_r


@njit(cache=True, error_model='numpy', inline='always')
def rear_drive_force(vx: float, omega: float, p: NDArray[np.float64], fz_rear: float) -> float:
    """``Fx_r = Fz_r MF_long(kappa)``, ``kappa = (R omega - vx) / max(|vx|, V_EPS)`` [N].

    ``omega`` is the drive input: the rear wheel speed [rad/s], or for a force drive (throttle,
    acceleration) its input, whose force comes from :func:`force_drive`.
    """
    if p[P_DRIVE_MODEL] > 1.5:
        return force_drive(vx, omega, fz_rear, p)
    return slip_drive_force(vx, omega, p, fz_rear)


@njit(cache=True, error_model='numpy', inline='always')
def force_drive(vx: float, u: float, fz: float, p: NDArray[np.float64]) -> float:
    """Force [N] of the throttle drive (``u`` the effective duty,
    :func:`rc_sim_engine.vehicle.drive_models.throttle_force`) or of the acceleration drive (``u``
    the lagged acceleration command,
    :func:`rc_sim_engine.vehicle.drive_models.acceleration_force`), capped
    at the grip of the axle load ``fz``."""
    if p[P_DRIVE_MODEL] > 2.5:
        return acceleration_force(vx, u, fz, p[P_GRIP_LONG], p[P_M], p[P_ACC_GAIN],
                                  p[P_ACC_MAX], p[P_DEC_MAX], p[P_CR0], p[P_CR1], p[P_CR2])
    return throttle_force(vx, u, fz, p[P_GRIP_LONG], p[P_CM1], p[P_CM2], p[P_CR0], p[P_CR1],
                          p[P_CR2])


@njit(cache=True, error_model='numpy', inline='always')
def force_drive_at_rest(u: float, p: NDArray[np.float64]) -> float:
    """Drive force [N] of a force drive at rest, before the resistances: ``C_m1 d`` or
    ``m clip(k a)`` (the static friction rule of
    :func:`rc_sim_engine.vehicle.drive_models.sticks`)."""
    if p[P_DRIVE_MODEL] > 2.5:
        return p[P_M] * limited_acceleration(0.0, u, p[P_ACC_GAIN], p[P_ACC_MAX], p[P_DEC_MAX])
    return p[P_CM1] * u


@njit(cache=True, error_model='numpy', inline='always')
def throttle_total(vx: float, duty: float, p: NDArray[np.float64], fz_f: float, fz_r: float
                   ) -> float:
    """Force drive [N] of a locked four-wheel drive: the motor drives both axles, so the
    grip cap is that of both (``D (Fz_f + Fz_r)``); :func:`single_track_forces` shares it by
    the axle loads."""
    return force_drive(vx, duty, fz_f + fz_r, p)


@njit(cache=True, error_model='numpy', inline='always')
def slip_drive_force(v_along: float, omega: float, p: NDArray[np.float64], fz: float) -> float:
    """``Fz MF_long(kappa)``, ``kappa = (R omega - v) / max(|v|, V_EPS)`` [N] of a wheel
    turning at ``omega`` whose contact point moves at ``v_along`` along it."""
    kappa = (p[P_R] * omega - v_along) / max(abs(v_along), V_EPS)
    return fz * mf_shape(kappa, p[P_LON_B], p[P_LON_C], p[P_LON_D], p[P_LON_E])


@njit(cache=True, error_model='numpy', inline='always')
def blend_weight(speed: float) -> float:
    """C1 smoothstep 0 -> 1 of |vx| between V_BLEND_LOW and V_BLEND_HIGH."""
    s = (abs(speed) - V_BLEND_LOW) / (V_BLEND_HIGH - V_BLEND_LOW)
    if s <= 0.0:
        return 0.0
    if s >= 1.0:
        return 1.0
    return s * s * (3.0 - 2.0 * s)


@njit(cache=True, error_model='numpy', inline='always')
def kinematic_rates(vx: float, vy: float, r: float, tan_delta: float, fx_r: float,
                    p: NDArray[np.float64]) -> tuple[float, float, float]:
    """(dvx, dvy, dr) of the kinematic bicycle, relaxed onto ``r* = vx tan(delta)/L, vy* = lr
    r*``."""
    L, lr = p[P_L], p[P_LR]
    dvx = fx_r / p[P_M]
    r_star = vx * tan_delta / L
    dr = dvx * tan_delta / L + (r_star - r) / KINEMATIC_RELAXATION
    dvy = lr * dvx * tan_delta / L + (lr * r_star - vy) / KINEMATIC_RELAXATION
    return dvx, dvy, dr


@njit(cache=True, error_model='numpy', inline='always')
def slip_angles(vx: float, vy: float, r: float, cos_delta: float, sin_delta: float,
                p: NDArray[np.float64], v_floor: float = 0.0) -> tuple[float, float, float]:
    """(alpha_front, alpha_rear, v_fx): slip angles [rad] and the front contact velocity along
    the wheel [m/s]: ``alpha_f = -atan2(v_fy, max(|v_fx|, v_floor))``, ``alpha_r = -atan2(vy -
    lr r, max(|vx|, v_floor))`` (``v_floor`` 0: the geometric angles)."""
    vfy_body = vy + p[P_LF] * r
    v_fx = vx * cos_delta + vfy_body * sin_delta
    v_fy = -vx * sin_delta + vfy_body * cos_delta
    return (-math.atan2(v_fy, max(abs(v_fx), v_floor)),
            -math.atan2(vy - p[P_LR] * r, max(abs(vx), v_floor)), v_fx)


@njit(cache=True, error_model='numpy', inline='always')
def relaxation_rate(v_long: float, sigma: float) -> float:
    """lambda = min(max(|v_x|, V_EPS) / sigma, RELAX_RATE_MAX) [1/s] of a transient slip."""
    return min(max(abs(v_long), V_EPS) / sigma, RELAX_RATE_MAX)


@njit(cache=True, error_model='numpy', inline='always')
def single_track_forces(vx: float, vy: float, r: float, cos_delta: float, sin_delta: float,
                        omega: float, alf: float, alr: float, p: NDArray[np.float64]
                        ) -> tuple[float, float, float, float, float, float]:
    """(Fy_front, Fy_rear, Fx_rear, Fx_front, d(alpha'_front)/dt, d(alpha'_rear)/dt) of the
    dynamic single track [N, rad/s]; ``alf, alr`` are the transient slip angles, used where the
    relaxation length is > 0 (else the geometric angles, and their rate is 0). Fx_front (along
    the front wheel) is 0 but with both axles locked to ``omega`` and a slip-driven drive:
    ``Fz_f MF_long((R omega - v_fx) / max(|v_fx|, V_EPS))``. A throttle drive's Fx_rear includes
    the steering drag (:func:`rc_sim_engine.vehicle.drive_models.steering_drag`)."""
    fz_f, fz_r = p[P_FZ_FRONT], p[P_FZ_REAR]
    awd_throttle = p[P_AWD] > 0.5 and p[P_DRIVE_MODEL] > 1.5
    fx_r = throttle_total(vx, omega, p, fz_f, fz_r) if awd_throttle else \
        rear_drive_force(vx, omega, p, fz_r)
    cf, cr = p[P_CF], p[P_CR]
    alpha_f, alpha_r, v_fx = slip_angles(vx, vy, r, cos_delta, sin_delta, p)
    slip_awd = p[P_AWD] > 0.5 and not awd_throttle
    if p[P_LOAD_TRANSFER] > 0.5:
        fx_total = fx_r  # at static loads; with both axles locked the front's share too
        if slip_awd:
            fx_total += slip_drive_force(v_fx, omega, p, fz_f) * cos_delta
        fz_f, fz_r = axle_loads(p, fx_total)
        fx_r = throttle_total(vx, omega, p, fz_f, fz_r) if awd_throttle else \
            rear_drive_force(vx, omega, p, fz_r)
        cf *= fz_f / p[P_FZ_FRONT]
        cr *= fz_r / p[P_FZ_REAR]
    if p[P_DRIVE_MODEL] > 1.5 and p[P_CRD] > 0.0:  # throttle drive: drag of the steered car
        fx_r -= steering_drag(vx, sin_delta, p[P_CRD])
    target_f, target_r = alpha_f, alpha_r
    if p[P_SIGMA_F] > 0.0 or p[P_SIGMA_R] > 0.0:  # the transient slips' targets: floored speed
        target_f, target_r, _ = slip_angles(vx, vy, r, cos_delta, sin_delta, p, V_EPS)
    fx_f = 0.0
    if awd_throttle:  # the locked drivetrain shares the motor's force by the axle loads
        fx_f = fx_r * fz_f / (fz_f + fz_r)
        fx_r -= fx_f
    elif slip_awd:
        fx_f = slip_drive_force(v_fx, omega, p, fz_f)
    dalf = dalr = 0.0
    if p[P_SIGMA_F] > 0.0:
        dalf = relaxation_rate(v_fx, p[P_SIGMA_F]) * (target_f - alf)
        alpha_f = alf
    if p[P_SIGMA_R] > 0.0:
        dalr = relaxation_rate(vx, p[P_SIGMA_R]) * (target_r - alr)
        alpha_r = alr
    tyre = int(p[P_TYRE])
    mu = p[P_MU_LAT]
    B, C, D, E = p[P_LAT_B], p[P_LAT_C], p[P_LAT_D], p[P_LAT_E]
    fy_f = lateral_force(tyre, alpha_f, cf, mu, fz_f, B, C, D, E)
    fy_r = lateral_force(tyre, alpha_r, cr, mu, fz_r, B, C, D, E)
    return fy_f, fy_r, fx_r, fx_f, dalf, dalr


@njit(cache=True, error_model='numpy', inline='always')
def single_track_rates(vx: float, vy: float, r: float, cos_delta: float, sin_delta: float,
                       tan_delta: float, omega: float, alf: float, alr: float,
                       p: NDArray[np.float64]) -> tuple[float, float, float, float, float]:
    """(dvx, dvy, dr, d(alpha'_f), d(alpha'_r)): dynamic single track blended with the kinematic
    one at low |vx| (the transient slip angles follow theirs at every speed)."""
    w = blend_weight(vx)
    fy_f, fy_r, fx_r, fx_f, dalf, dalr = single_track_forces(vx, vy, r, cos_delta, sin_delta,
                                                             omega, alf, alr, p)
    dvx = dvy = dr = 0.0
    if w > 0.0:
        m = p[P_M]
        # front axle force in the body frame: lateral Fy_f and drive Fx_f along the wheel
        fxb_f = fx_f * cos_delta - fy_f * sin_delta
        fyb_f = fy_f * cos_delta + fx_f * sin_delta
        dvx = w * ((fx_r + fxb_f) / m + vy * r)
        dvy = w * ((fy_r + fyb_f) / m - vx * r)
        dr = w * (p[P_LF] * fyb_f - p[P_LR] * fy_r) / p[P_IZ]
    if w < 1.0:
        kx, ky, kr = kinematic_rates(vx, vy, r, tan_delta, fx_r + fx_f, p)
        dvx += (1.0 - w) * kx
        dvy += (1.0 - w) * ky
        dr += (1.0 - w) * kr
    return dvx, dvy, dr, dalf, dalr


@njit(cache=True, error_model='numpy', inline='always')
def kinematic_model_rates(vx: float, vy: float, r: float, cos_delta: float, sin_delta: float,
                          tan_delta: float, omega: float, p: NDArray[np.float64]
                          ) -> tuple[float, float, float]:
    """(dvx, dvy, dr) of the kinematic model with the rear slip drive at static load."""
    return kinematic_rates(vx, vy, r, tan_delta, rear_drive_force(vx, omega, p, p[P_FZ_REAR]),
                           p)


@njit(cache=True, error_model='numpy')
def kinematic_4ws_model_rates(vx: float, vy: float, r: float, cos_delta: float, sin_delta: float,
                              tan_delta: float, omega: float, p: NDArray[np.float64]
                              ) -> tuple[float, float, float]:
    """(dVX, dVY, dr) of the engine model ``kinematic_4ws`` (see four_wheel_steering.py),
    same signature as :func:`velocity_rates`: rear slip drive at static load along the rear
    wheel, relaxation onto the 4WS constraint."""
    phi = math.atan2(sin_delta, cos_delta)
    k, L, lr = p[P_REAR_STEER], p[P_L], p[P_LR]
    v_rear = rear_contact_speed(vx, vy, r, phi, k, lr)
    _, fz_r = axle_loads(p, 0.0)
    dv_rear = rear_drive_force(v_rear, omega, p, fz_r) / p[P_M]
    return velocity_rates_4ws(vx, vy, r, phi, k, dv_rear, L, lr, KINEMATIC_RELAXATION)


@njit(cache=True, error_model='numpy', inline='always')
def velocity_rates(model_id: int, vx: float, vy: float, r: float, cos_delta: float,
                   sin_delta: float, tan_delta: float, omega: float, alf: float, alr: float,
                   p: NDArray[np.float64]) -> tuple[float, float, float, float, float]:
    """Body-frame (dvx, dvy, dr) of model ``model_id`` (0 kinematic, 1 single track, 2 4WS) and
    the rates of the transient slip angles ``alf, alr`` (0 but in the single track)."""
    if model_id == 0:
        dvx, dvy, dr = kinematic_model_rates(vx, vy, r, cos_delta, sin_delta, tan_delta, omega,
                                             p)
        return dvx, dvy, dr, 0.0, 0.0
    if model_id == 2:
        dvx, dvy, dr = kinematic_4ws_model_rates(vx, vy, r, cos_delta, sin_delta, tan_delta,
                                                 omega, p)
        return dvx, dvy, dr, 0.0, 0.0
    return single_track_rates(vx, vy, r, cos_delta, sin_delta, tan_delta, omega, alf, alr, p)


@njit(cache=True, error_model='numpy')
def steady_slip_states(state: NDArray[np.float64], packed: NDArray[np.float64]) -> None:
    """Set ALPHA_FRONT, ALPHA_REAR of (N, N_STATE) ``state`` in place to the slip angles of its
    velocities and steering with the V_EPS speed floor (the relaxation's steady state)."""
    for i in range(state.shape[0]):
        x = state[i]
        d = x[STEER]
        x[ALPHA_FRONT], x[ALPHA_REAR], _ = slip_angles(x[VX], x[VY], x[YAW_RATE], math.cos(d),
                                                       math.sin(d), packed[i], V_EPS)


@njit(cache=True, error_model='numpy')
def wheel_joint_rates(x: NDArray[np.float64], p: NDArray[np.float64], tan_delta: float
                      ) -> tuple[float, float, float]:
    """Spin rates [rad/s] of the rear, front-left and front-right wheel joints.

    Front wheels roll freely at (lf, +-W/2) from the CG, steered by the Ackermann hinge angles
    ``tan(delta_l,r) = L tan(delta) / (L -+ W/2 tan(delta))``
    (rc_sim_control.ackermann.ackermann_split): rate = (v_wheel . heading) / R,
    with cos, sin of the hinge angle from its tangent.
    """
    vx, vy, r = x[VX], x[VY], x[YAW_RATE]
    L, lf, half, radius = p[P_L], p[P_LF], 0.5 * p[P_TRACK], p[P_R]
    vyw = vy + r * lf
    # heading (cos, sin) = (d, L tan) / hypot, d = L -+ W/2 tan > 0 within the steering range
    t = L * tan_delta
    dl = L - half * tan_delta
    dr = L + half * tan_delta
    fl = ((vx - r * half) * dl + vyw * t) / (math.sqrt(dl * dl + t * t) * radius)
    fr = ((vx + r * half) * dr + vyw * t) / (math.sqrt(dr * dr + t * t) * radius)
    return x[WHEEL_SPEED], fl, fr


@njit(cache=True, error_model='numpy', inline='always')
def drive_input(x: NDArray[np.float64], p: NDArray[np.float64]) -> float:
    """The model's drive input from the state: wheel speed, effective duty (throttle), or the
    lagged acceleration command (acceleration)."""
    if p[P_DRIVE_MODEL] > 2.5:
        return x[DUTY]
    if p[P_DRIVE_MODEL] > 1.5:
        return dead_band_duty(x[DUTY], p[P_DUTY_DEAD_BAND])
    return x[WHEEL_SPEED]


@njit(cache=True, error_model='numpy')
def model_rhs(model_id: int, x: NDArray[np.float64], p: NDArray[np.float64],
              out: NDArray[np.float64]) -> None:
    """``out = f(x, p)`` for the built-in model ``model_id``: pose, body velocity and transient
    slip-angle rates."""
    out[:] = 0.0
    yaw, vx, vy, r, delta = x[YAW], x[VX], x[VY], x[YAW_RATE], x[STEER]
    c, s = math.cos(yaw), math.sin(yaw)
    out[X] = vx * c - vy * s
    out[Y] = vx * s + vy * c
    out[YAW] = r
    dvx, dvy, dr, dalf, dalr = velocity_rates(model_id, vx, vy, r, math.cos(delta),
                                              math.sin(delta), math.tan(delta),
                                              drive_input(x, p), x[ALPHA_FRONT], x[ALPHA_REAR],
                                              p)
    out[VX] = dvx
    out[VY] = dvy
    out[YAW_RATE] = dr
    out[ALPHA_FRONT] = dalf
    out[ALPHA_REAR] = dalr


@njit(cache=True, error_model='numpy')
def kinematic_rhs(x: NDArray[np.float64], p: NDArray[np.float64],
                  out: NDArray[np.float64]) -> None:
    """Kinematic bicycle ``out = f(x, p)`` (module docstring)."""
    model_rhs(0, x, p, out)


@njit(cache=True, error_model='numpy')
def kinematic_4ws_rhs(x: NDArray[np.float64], p: NDArray[np.float64],
                      out: NDArray[np.float64]) -> None:
    """Four-wheel-steering kinematic bicycle ``out = f(x, p)`` (module four_wheel_steering)."""
    model_rhs(2, x, p, out)


@njit(cache=True, error_model='numpy')
def single_track_rhs(x: NDArray[np.float64], p: NDArray[np.float64],
                     out: NDArray[np.float64]) -> None:
    """Dynamic single track ``out = f(x, p)`` (module docstring)."""
    model_rhs(1, x, p, out)


@dataclass(frozen=True)
class VehicleModel:
    """A registered model: ``rhs(x, p, out)`` is a numba function filling ``out`` (N_STATE,).

    ``kernel_id`` selects the compiled (cached) fast path; ``project_kinematic`` makes the stepper
    put VY and YAW_RATE exactly on the kinematic constraint after every step.
    """

    name: str
    rhs: Callable[[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]], None]
    kernel_id: int
    project_kinematic: bool
    doc: str

    def derivative(self, x: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
        """``dx = f(x, p)`` for one state row ``x`` and one packed parameter row ``p``."""
        out = np.zeros(N_STATE)
        self.rhs(np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(p, dtype=float), out)
        return out


#: name -> model. To add one: write its ``rhs`` in its own module and add one line here (and a
#: dispatch branch in :func:`model_rhs` for the compiled path).
MODELS: dict[str, VehicleModel] = {
    'kinematic': VehicleModel('kinematic', kinematic_rhs, 0, True,
                              'kinematic bicycle, rear slip drive'),
    'single_track': VehicleModel('single_track', single_track_rhs, 1, False,
                                 'dynamic single track, tyre law from vehicle.yaml'),
    'kinematic_4ws': VehicleModel('kinematic_4ws', kinematic_4ws_rhs, 2, False,
                                  'four-wheel-steering kinematic bicycle'),
}


def get_model(name: str) -> VehicleModel:
    """Registered model by name; unknown name -> one-line :class:`ConfigError`."""
    try:
        return MODELS[name]
    except KeyError:
        from rc_sim_description.yamlio import did_you_mean

        raise ConfigError(f'unknown vehicle model {name!r}{did_you_mean(name, MODELS)} (choose '
                          f'from {", ".join(MODELS)})') from None
