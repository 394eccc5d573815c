"""Actuators as gz has them: hinge servo, rear wheel speed loop, trim, saturation, latency.

Steering servo (gz ``JointPositionController``): a PID on the hinge
angle error gives a joint torque, clamped to ``servo_max_torque``, acting on the hinge inertia
``J_h``::

    tau = Kp (delta* - delta) + Ki int(delta* - delta) dt - Kd d(delta)/dt,  |tau| <= tau_max,
    J_h d2(delta)/dt2 = tau,   |d(delta)/dt| <= max_steering_rate,   |delta| <= max_steering_angle.

The D term acts on the measured rate (gz differentiates the error; both agree while the target is
held, gz adds a one-step derivative kick on target jumps). ``J_h`` is derived from existing keys:
the wheel turning about its vertical diameter plus the knuckle, see :func:`steering_hinge_inertia`.
With the default gains the hinge is over-damped (poles near -43 and -542 1/s) and the slew is rate
limited.

Rear wheel speed loop (gz ``JointController`` in force mode, reference §4.1), per rear wheel::

    tau = Kp (omega* - omega) + Ki int(omega* - omega) dt,  |tau| <= wheel_max_torque,
    J_w d(omega)/dt = tau - r Fx / 2      (two rear wheels share the axle force Fx).

``J_w = m_w r^2 / 2`` (solid cylinder). The wheel D gain adds ``Kd`` to the inertia (D on
measurement).

Both loops are stiff (time constants of 0.1-2 ms), so they are advanced apart from the chassis ODE
(operator splitting, see docs/engine.md): the servo by its exact linear transition matrix
(:func:`servo_transition`) followed by the limits, the wheel by backward (implicit) Euler. Trim:
``delta* = clip(steering_gain delta_cmd + steering_offset, +-max_steering_angle)``; ``omega* =
clip(omega_cmd, +-max_wheel_speed)``. ``command_latency`` is a pure delay of the commands.
"""

from __future__ import annotations

import math
from typing import Any, cast

from numba import njit
import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.params import VehicleParams

__all__ = [
    'expm',
    'latency_steps',
    'linkage',
    'rear_wheel_inertia',
    'servo_substep',
    'servo_transition',
    'steering_hinge_inertia',
    'trim_steering',
    'wheel_substep',
]


def steering_hinge_inertia(p: VehicleParams) -> float:
    """Inertia J_h of one steered wheel assembly about the vertical hinge axis [kg m^2]
    (:attr:`rc_sim_description.params.VehicleParams.steering_hinge_inertia`: the wheel as a
    solid cylinder about a diameter plus the knuckle, a cylinder about the hinge axis as in the
    URDF; default car 8.7e-5 kg m^2)."""
    return p.steering_hinge_inertia


def rear_wheel_inertia(p: VehicleParams) -> float:
    """Spin inertia of one rear wheel, solid cylinder ``m_w r^2 / 2`` [kg m^2]."""
    return 0.5 * p.mass_properties.wheel_mass * p.geometry.wheel_radius ** 2


@njit(cache=True, error_model='numpy', inline='always')
def linkage(u: float, q: float, c: float) -> float:
    """Wheel angle ``u + q u^2 + c u^3`` [rad] of the trimmed angle ``u`` (the third-order
    expansion of a steering linkage's map; Milliken & Milliken, *Race Car Vehicle Dynamics*
    1995, on steering systems)."""
    return u + u * u * (q + c * u)


def trim_steering(delta_cmd: ArrayLike, p: VehicleParams) -> NDArray[np.float64]:
    """Servo target ``clip(L(steering_gain delta_cmd + steering_offset), +-max_steering_angle)``
    [rad], L the linkage map :func:`linkage`."""
    s = p.steering
    u = s.steering_gain * np.asarray(delta_cmd, dtype=float) + s.steering_offset
    elementwise = cast(Any, linkage)  # the compiled map also takes arrays
    return np.clip(elementwise(u, s.steering_linkage_quadratic, s.steering_linkage_cubic),
                   -s.max_steering_angle, s.max_steering_angle)


def latency_steps(latency: float, dt: float) -> int:
    """Whole physics steps of the pure delay: ``round(latency / dt)`` (exact when dt divides
    it)."""
    return round(latency / dt)


# --------------------------------------------------------------------------- compiled sub-steps
def servo_transition(p: VehicleParams, h: float) -> NDArray[np.float64]:
    """Exact transition matrix ``Phi = expm(A h)`` (3, 3) of the unsaturated hinge servo.

    State ``s = (delta - delta*, d(delta)/dt, I)`` with ``I = int(delta* - delta) dt`` and
    ``ds/dt = A s``, ``A = [[0, 1, 0], [-Kp/J, -Kd/J, Ki/J], [-1, 0, 0]]`` for a held target: the
    linear PID + inertia is then integrated exactly for any step ``h`` (no discretisation error).
    """
    s = p.steering
    J = steering_hinge_inertia(p)
    a = np.array([[0.0, 1.0, 0.0],
                  [-s.servo_p_gain / J, -s.servo_d_gain / J, s.servo_i_gain / J],
                  [-1.0, 0.0, 0.0]])
    return expm(a * h)


def expm(m: NDArray[np.float64]) -> NDArray[np.float64]:
    """Matrix exponential by scaling and squaring of an 18-term Taylor series (Moler & Van Loan,
    *Nineteen dubious ways*, method 3); the scaled matrix has norm <= 0.5, series error < 1e-20."""
    m = np.asarray(m, dtype=np.float64)
    norm = float(np.abs(m).sum(axis=1).max())
    squarings = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0.5 else 0
    x = m / 2.0 ** squarings
    term = np.eye(m.shape[0])
    out = term.copy()
    for k in range(1, 19):
        term = term @ x / k
        out = out + term
    for _ in range(squarings):
        out = out @ out
    return out


@njit(cache=True, error_model='numpy')
def servo_substep(delta: float, rate: float, integral: float, target: float, h: float,
                  phi: NDArray[np.float64], J: float, kp: float, ki: float, kd: float,
                  i_max: float, tau_max: float, max_rate: float,
                  max_angle: float) -> tuple[float, float, float]:
    """One step ``h`` of the hinge servo; returns (delta, rate, integral).

    Exact linear step ``s' = Phi s`` (``phi`` = :func:`servo_transition` flattened, row major),
    then the limits: a torque beyond ``tau_max`` at the start of the step is replaced by the
    saturated torque held over the step; the mean slew ``(delta' - delta)/h`` is clamped to
    ``max_rate``; the mechanical stop; the integrator clamp ``|Ki I| <= i_max``.
    """
    e = delta - target
    tau = -kp * e - kd * rate + ki * integral
    if abs(tau) > tau_max:
        tau_sat = math.copysign(tau_max, tau)
        new_rate = rate + h * tau_sat / J
        new_delta = delta + 0.5 * h * (rate + new_rate)
        new_integral = integral - h * e
    else:
        new_e = phi[0] * e + phi[1] * rate + phi[2] * integral
        new_rate = phi[3] * e + phi[4] * rate + phi[5] * integral
        new_integral = phi[6] * e + phi[7] * rate + phi[8] * integral
        new_delta = target + new_e
    mean_rate = (new_delta - delta) / h
    if mean_rate > max_rate:
        new_delta = delta + h * max_rate
        new_rate = max_rate
    elif mean_rate < -max_rate:
        new_delta = delta - h * max_rate
        new_rate = -max_rate
    elif new_rate > max_rate:
        new_rate = max_rate
    elif new_rate < -max_rate:
        new_rate = -max_rate
    if new_delta > max_angle:
        new_delta = max_angle
        new_rate = 0.0
    elif new_delta < -max_angle:
        new_delta = -max_angle
        new_rate = 0.0
    if ki > 0.0:
        lim = i_max / ki
        new_integral = max(-lim, min(lim, new_integral))
    return new_delta, new_rate, new_integral


@njit(cache=True, error_model='numpy')
def _slip(omega: float, vx: float, radius: float, v_eps: float) -> tuple[float, float]:
    den = max(abs(vx), v_eps)
    return (radius * omega - vx) / den, radius / den


@njit(cache=True, error_model='numpy')
def wheel_substep(omega: float, integral: float, target: float, vx: float, fz_rear: float,
                  h: float, J2: float, radius: float, kp: float, ki: float, kd: float,
                  i_max: float, tau_max: float, B: float, C: float, D: float, E: float,
                  v_eps: float) -> tuple[float, float]:
    """One backward-Euler step of the two rear wheels (lumped, inertia ``J2 = 2 J_w``).

    Solves ``(J2 + 2 Kd)(w' - w) = h (2 tau(w') - r Fz MF(kappa(w', vx)))`` (vx held over the
    sub-step, slip ``kappa = (r w - vx) / max(|vx|, v_eps)``) by Newton iterations safeguarded by
    bisection on a bracket that provably holds a root (Press et al., *Numerical Recipes* §9.4,
    rtsafe). Returns (omega, integral).
    """
    i_term = ki * integral
    if i_term > i_max:
        i_term = i_max
    elif i_term < -i_max:
        i_term = -i_max
    J = J2 + 2.0 * kd
    # |2 tau - r Fx| <= 2 tau_max + r Fz D bounds the step: the root lies in [omega -+ span].
    span = h * (2.0 * tau_max + radius * fz_rear * abs(D)) / J + 1e-12
    lo, hi = omega - span, omega + span
    w = omega
    for _ in range(40):
        tau = kp * (target - w) + i_term
        dtau = -kp
        if tau > tau_max:
            tau = tau_max
            dtau = 0.0
        elif tau < -tau_max:
            tau = -tau_max
            dtau = 0.0
        kappa, dkappa = _slip(w, vx, radius, v_eps)
        bx = B * kappa
        if E == 0.0:
            phi = bx
            dphi = B
        else:
            phi = bx - E * (bx - math.atan(bx))
            dphi = B * (1.0 - E) + E * B / (1.0 + bx * bx)
        angle = C * math.atan(phi)
        fx = fz_rear * D * math.sin(angle)
        dfx = fz_rear * D * math.cos(angle) * C * dphi / (1.0 + phi * phi) * dkappa
        g = J * (w - omega) - h * (2.0 * tau - radius * fx)
        if g == 0.0:
            break
        dg = J - h * (2.0 * dtau - radius * dfx)
        if g > 0.0:
            hi = w
        else:
            lo = w
        w_new = w - g / dg if dg > 0.0 else 0.5 * (lo + hi)
        if not lo <= w_new <= hi:  # safeguarded Newton: bisect when Newton leaves the bracket
            w_new = 0.5 * (lo + hi)
        if abs(w_new - w) < 1e-7 * (1.0 + abs(w)):  # quadratic: error now ~1e-14
            w = w_new
            break
        w = w_new
    new_integral = integral + h * (target - w)
    if ki > 0.0:
        lim = i_max / ki
        new_integral = max(-lim, min(lim, new_integral))
    return w, new_integral
