"""Steering servo models of real RC hardware and the normalised command map (``steering.*``).

``servo_model`` (vehicle.yaml) selects the dynamics of the servo output delta towards the target
delta* (the trimmed command after the dead band); every model is slew-limited to
``|d(delta)/dt| <= max_steering_rate`` and stops at ``|delta| <= max_steering_angle``:

* ``pd_joint``: the gz JointPositionController on the hinge inertia
  (:mod:`rc_sim_engine.vehicle.actuators`).
* ``first_order``: ``d(delta)/dt = clip((delta* - delta) / tau, +-r_max)``. Solved exactly per
  sub-step: a slew-limited ramp until ``|delta* - delta| = tau r_max``, then the exponential
  ``e(t) = e0 exp(-t / tau)`` (the exact discretisation of the linear part).
* ``second_order``: ``d2(delta)/dt2 = wn^2 (delta* - delta) - 2 zeta wn d(delta)/dt`` with the rate
  clamped at ``+-r_max`` (a rate saturation: while clamped, the servo slides at r_max until the
  linear acceleration turns back, at ``delta* - delta = 2 zeta r_max / wn``). The linear phases use
  the closed-form transition matrix of the damped oscillator (under-, critically and over-damped in
  one expression), the entry into the rate limit is located by a safeguarded Newton iteration, so
  any step is exact as long as the rate does not cross the limit twice within one sub-step (true
  when the sub-step is shorter than half a damped period, pi / wd).

Non-linear elements, both play (backlash) operators (Tao & Kokotovic, *Adaptive Control of Systems
with Actuator and Sensor Nonlinearities*, Wiley 1996, ch. 2), exact at the sample instants:

* dead band (``steering_dead_band``, total width 2b): the effective target follows the command
  with play b, so a command change smaller than 2b after a reversal does not move the servo and the
  servo rests within b of the command. Applied once per physics step (commands are held).
* backlash (``steering_backlash``, total width 2c): the wheel angle follows the servo output with
  play c (the wheels stay put until the servo has taken up the play). Applied after each sub-step;
  exact while the servo output is monotone within a sub-step.

Normalised commands (a PWM servo driven by s in [-1, 1]): ``delta* = steering_offset + g phi_k(s)``
with ``phi_k(s) = tanh(k s) / tanh(k)`` (``phi_0(s) = s``), gain g and shape k per side (left
s > 0, right s < 0). It is monotone for g > 0, k >= 0, continuous at s = 0, exact at the ends
(``delta(+1) = offset + g_left``, ``delta(-1) = offset - g_right``), and holds the tanh-blend map
published for the DART car (Lyons et al., 2024) within 1 mrad.
"""

from __future__ import annotations

import math

from numba import njit
import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.params import VehicleParams

__all__ = [
    'first_order_servo_substep',
    'inverse_normalised_steering',
    'normalised_steering',
    'play',
    'second_order_servo_substep',
    'second_order_transition',
    'steering_map',
]

#: Below this k the shape tanh(k s) / tanh(k) uses its series s (1 + k^2 (1 - s^2) / 3).
_K_SERIES = 1e-4


@njit(cache=True, error_model='numpy', inline='always')
def play(output: float, command: float, half_width: float) -> float:
    """Play (backlash) operator: ``output`` moves only when ``command`` leaves the band
    ``output +- half_width``, and then trails it by ``half_width``."""
    if command > output + half_width:
        return command - half_width
    if command < output - half_width:
        return command + half_width
    return output


@njit(cache=True, error_model='numpy', inline='always')
def _shape(s: float, k: float, tanh_k: float) -> float:
    if k < _K_SERIES:
        return s * (1.0 + k * k * (1.0 - s * s) / 3.0)
    return math.tanh(k * s) / tanh_k


@njit(cache=True, error_model='numpy', inline='always')
def normalised_steering(s: float, offset: float, gain_left: float, gain_right: float,
                        k_left: float, k_right: float, tanh_k_left: float,
                        tanh_k_right: float) -> float:
    """Wheel angle [rad] of a normalised command s (clipped to [-1, 1]); module docstring."""
    s = max(-1.0, min(1.0, s))
    if s >= 0.0:
        return offset + gain_left * _shape(s, k_left, tanh_k_left)
    return offset + gain_right * _shape(s, k_right, tanh_k_right)


@njit(cache=True, error_model='numpy', inline='always')
def _inverse_shape(u: float, k: float, tanh_k: float) -> float:
    """s in [0, 1] with ``_shape(s) = u`` for u in [0, 1]."""
    if u >= 1.0:
        return 1.0
    if k < _K_SERIES:  # invert the series form by Newton from its first-order inverse
        c = k * k / 3.0
        s = u - c * (u - u * u * u)
        for _ in range(3):
            f = s * (1.0 + c * (1.0 - s * s)) - u
            s -= f / (1.0 + c * (1.0 - 3.0 * s * s))
        return max(0.0, min(1.0, s))
    return math.atanh(u * tanh_k) / k


@njit(cache=True, error_model='numpy')
def inverse_normalised_steering(delta: float, offset: float, gain_left: float,
                                gain_right: float, k_left: float, k_right: float,
                                tanh_k_left: float, tanh_k_right: float) -> float:
    """The normalised command s in [-1, 1] whose wheel angle is ``delta`` [rad]
    (:func:`normalised_steering` inverted; an angle beyond the map's ends gives +-1): what a
    car's own code sends for a steering angle."""
    if delta >= offset:
        u = min((delta - offset) / gain_left, 1.0)
        return _inverse_shape(u, k_left, tanh_k_left)
    u = min((offset - delta) / gain_right, 1.0)
    return -_inverse_shape(u, k_right, tanh_k_right)


def steering_map(s: ArrayLike, p: VehicleParams) -> NDArray[np.float64]:
    """Normalised command -> servo target [rad], saturated at ``+-max_steering_angle`` (numpy).

    ``delta = clip(steering_offset + g phi_k(clip(s, -1, 1)), +-max_steering_angle)`` with the
    left/right gains and shapes of ``p.steering`` (module docstring).
    """
    st = p.steering
    gl, gr = p.normalised_steering_gains
    kl, kr = st.steering_curvature_left, st.steering_curvature_right
    tl, tr = math.tanh(kl), math.tanh(kr)
    flat = np.asarray(s, dtype=np.float64).ravel()
    out = np.array([normalised_steering(float(v), st.steering_offset, gl, gr, kl, kr, tl, tr)
                    for v in flat])
    lim = st.max_steering_angle
    return np.clip(out, -lim, lim).reshape(np.shape(s))


# --------------------------------------------------------------------------- first order
@njit(cache=True, error_model='numpy')
def first_order_servo_substep(delta: float, target: float, h: float, tau: float, decay: float,
                              max_rate: float, max_angle: float) -> tuple[float, float]:
    """One step ``h`` of ``d(delta)/dt = clip((target - delta) / tau, +-max_rate)``; exact.

    ``decay = exp(-h / tau)`` (precomputed). Returns (delta, d(delta)/dt at the end of the step).
    """
    e = delta - target
    band = tau * max_rate  # beyond this error the slew limit binds
    if abs(e) > band:
        sgn = 1.0 if e > 0.0 else -1.0
        t_sat = (abs(e) - band) / max_rate
        if t_sat >= h:
            new_delta = delta - sgn * max_rate * h
            rate = -sgn * max_rate
            if abs(new_delta) > max_angle:
                return math.copysign(max_angle, new_delta), 0.0
            return new_delta, rate
        e = sgn * band * math.exp(-(h - t_sat) / tau)
    else:
        e = e * decay
    new_delta = target + e
    if abs(new_delta) > max_angle:
        return math.copysign(max_angle, new_delta), 0.0
    return new_delta, -e / tau


# --------------------------------------------------------------------------- second order
@njit(cache=True, error_model='numpy')
def second_order_transition(wn: float, zeta: float, t: float
                            ) -> tuple[float, float, float, float]:
    """Transition matrix (row major) of ``e' = v, v' = -wn^2 e - 2 zeta wn v`` over time t.

    With ``sigma = zeta wn``, ``q = wn^2 (1 - zeta^2)``, ``C = cos(sqrt(q) t)``,
    ``S = sin(sqrt(q) t) / sqrt(q)`` (cosh, sinh for q < 0, the series for q t^2 -> 0)::

        e(t) = exp(-sigma t) ((C + sigma S) e0 + S v0)
        v(t) = exp(-sigma t) (-wn^2 S e0 + (C - sigma S) v0)
    """
    sigma = zeta * wn
    q = wn * wn * (1.0 - zeta * zeta)
    qt2 = q * t * t
    if abs(qt2) < 1e-4:
        c = 1.0 - qt2 / 2.0 + qt2 * qt2 / 24.0
        s = t * (1.0 - qt2 / 6.0 + qt2 * qt2 / 120.0)
        a = math.exp(-sigma * t)
        c *= a
        s *= a
    elif q > 0.0:
        w = math.sqrt(q)
        a = math.exp(-sigma * t)
        c = a * math.cos(w * t)
        s = a * math.sin(w * t) / w
    else:  # over-damped: exp(-sigma t) cosh(w t) without overflow
        w = math.sqrt(-q)
        up = math.exp((w - sigma) * t)
        down = math.exp(-(w + sigma) * t)
        c = 0.5 * (up + down)
        s = 0.5 * (up - down) / w
    return c + sigma * s, s, -wn * wn * s, c - sigma * s


@njit(cache=True, error_model='numpy')
def _rate_limit_entry(e0: float, v0: float, v_lim: float, t_max: float, wn: float,
                      zeta: float) -> tuple[float, float]:
    """First time t in (0, t_max] where the free response reaches ``v(t) = v_lim``, and e(t).

    ``v(0)`` is inside the limit and ``v(t_max)`` beyond it. Newton on v(t) (``dv/dt`` is the
    acceleration), safeguarded by bisection on the bracket (Press et al., *Numerical Recipes*,
    rtsafe).
    """
    lo, hi = 0.0, t_max
    t = 0.5 * t_max
    e = e0
    for _ in range(60):
        p00, p01, p10, p11 = second_order_transition(wn, zeta, t)
        e = p00 * e0 + p01 * v0
        v = p10 * e0 + p11 * v0
        g = (v - v_lim) * math.copysign(1.0, v_lim)  # < 0 before the limit, > 0 after
        if g < 0.0:
            lo = t
        else:
            hi = t
        dg = (-wn * wn * e - 2.0 * zeta * wn * v) * math.copysign(1.0, v_lim)
        t_new = t - g / dg if dg > 0.0 else 0.5 * (lo + hi)
        if not lo < t_new < hi:
            t_new = 0.5 * (lo + hi)
        if abs(t_new - t) <= 1e-15 * t_max or hi - lo <= 1e-15 * t_max:
            t = t_new
            break
        t = t_new
    p00, p01, _, _ = second_order_transition(wn, zeta, t)
    return t, p00 * e0 + p01 * v0


@njit(cache=True, error_model='numpy')
def second_order_servo_substep(delta: float, rate: float, target: float, h: float,
                               phi: NDArray[np.float64], wn: float, zeta: float,
                               max_rate: float, max_angle: float) -> tuple[float, float]:
    """One step ``h`` of the rate-limited second-order servo; returns (delta, rate).

    ``phi`` is :func:`second_order_transition` at ``h`` (precomputed, 4 values). The step is
    split at the events where the rate reaches its limit and where a slide at the limit ends
    (module docstring).
    """
    e = delta - target
    v = rate
    t_left = h
    whole = True  # t_left == h: the precomputed transition applies
    for _ in range(8):
        if abs(v) >= max_rate:
            v = math.copysign(max_rate, v)
            if (-wn * wn * e - 2.0 * zeta * wn * v) * v >= 0.0:  # pushed further out: slide
                e_exit = -2.0 * zeta * v / wn
                t_exit = (e_exit - e) / v
                if t_exit >= t_left:
                    e += v * t_left
                    break
                e = e_exit
                t_left -= t_exit
                whole = False
        if whole:
            p00, p01, p10, p11 = phi[0], phi[1], phi[2], phi[3]
        else:
            p00, p01, p10, p11 = second_order_transition(wn, zeta, t_left)
        e1 = p00 * e + p01 * v
        v1 = p10 * e + p11 * v
        if abs(v1) <= max_rate * (1.0 + 1e-12):  # (rounding at a slide's exit point)
            e, v = e1, max(-max_rate, min(max_rate, v1))
            break
        v_lim = math.copysign(max_rate, v1)
        t1, e = _rate_limit_entry(e, v, v_lim, t_left, wn, zeta)
        v = v_lim
        t_left -= t1
        whole = False
    new_delta = target + e
    if abs(new_delta) > max_angle:
        return math.copysign(max_angle, new_delta), 0.0
    return new_delta, v
