"""Fixed-step integrators of the chassis ODE, chosen by name (:data:`INTEGRATORS`).

* ``rk4``: classical 4th-order Runge-Kutta (Hairer, Norsett & Wanner, *Solving ODEs I*, §II.1).
* ``semi_implicit_euler``: symplectic Euler: velocities (VX, VY, YAW_RATE) first from f(x_n), then
  the pose (X, Y with the heading at the start of the step, YAW) from the updated velocities
  (Hairer, Lubich & Wanner, *Geometric Numerical Integration*, §VI.3).

The actuator states (servo, wheel spin, PID integrals) are advanced by their own sub-steps in
:mod:`rc_sim_engine.actuators` (exact servo, backward-Euler wheel); the chassis step holds the
steering angle and wheel speed at their sub-step midpoint values (operator splitting).
"""

from __future__ import annotations

import math

from numba import njit
import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_engine.models import velocity_rates
from rc_sim_engine.state import ALPHA_FRONT, ALPHA_REAR, VX, VY, YAW, YAW_RATE, X, Y

__all__ = ['INTEGRATORS', 'MAX_SUBSTEP', 'get_integrator', 'integrate_chassis', 'rotate',
           'substeps']

#: name -> kernel id.
INTEGRATORS: dict[str, int] = {'rk4': 0, 'semi_implicit_euler': 1}

#: Largest internal step [s]: a physics step dt is split into ceil(dt / MAX_SUBSTEP) equal
#: sub-steps
#: (stability of the explicit chassis step: |lambda| h stays below 1 for the stiffest tyre mode).
MAX_SUBSTEP = 2.5e-3


def get_integrator(name: str) -> int:
    """Kernel id of an integrator name; unknown name -> one-line :class:`ConfigError`."""
    try:
        return INTEGRATORS[name]
    except KeyError:
        raise ConfigError(f'unknown integrator {name!r} (choose from '
                          f'{", ".join(INTEGRATORS)})') from None


def substeps(dt: float) -> int:
    """Number of internal sub-steps of a physics step ``dt`` [s]."""
    if not (dt > 0 and np.isfinite(dt)):
        raise ConfigError(f'physics step dt must be a finite number > 0 s, got {dt!r}')
    return max(1, int(np.ceil(dt / MAX_SUBSTEP - 1e-9)))


@njit(cache=True, error_model='numpy')
def rotate(c: float, s: float, angle: float) -> tuple[float, float]:
    """(cos(a + angle), sin(a + angle)) from (cos a, sin a); Taylor series below 0.05 rad (error
    < 1e-15), so the RK4 stages need no extra cos/sin."""
    if abs(angle) < 0.05:
        a2 = angle * angle
        ce = 1.0 - a2 / 2.0 * (1.0 - a2 / 12.0 * (1.0 - a2 / 30.0 * (1.0 - a2 / 56.0)))
        se = angle * (1.0 - a2 / 6.0 * (1.0 - a2 / 20.0 * (1.0 - a2 / 42.0 * (1.0 - a2 / 72.0))))
    else:
        ce, se = math.cos(angle), math.sin(angle)
    return c * ce - s * se, s * ce + c * se


@njit(cache=True, error_model='numpy')
def integrate_chassis(model_id: int, integ_id: int, x: NDArray[np.float64],
                      p: NDArray[np.float64], h: float, cd: float, sd: float,
                      td: float, omega: float) -> None:
    """Advance the chassis fields of ``x`` (pose, body velocities, transient slip angles) in
    place by ``h`` (steering and wheel speed held).

    ``cd, sd, td`` are cos, sin, tan of the held steering angle and ``omega`` the held rear wheel
    speed (the stepper passes their sub-step midpoint values).

    The right-hand side is :func:`rc_sim_engine.models.model_rhs` (pose from the body velocities,
    body velocity rates from :func:`~rc_sim_engine.models.velocity_rates`), written out per stage.
    """
    vx, vy, r, yaw = x[VX], x[VY], x[YAW_RATE], x[YAW]
    af, ar = x[ALPHA_FRONT], x[ALPHA_REAR]
    c0, s0 = math.cos(yaw), math.sin(yaw)
    if integ_id == 0:
        ax1, ay1, ar1, kf1, kr1 = velocity_rates(model_id, vx, vy, r, cd, sd, td, omega, af, ar,
                                                 p)
        hh = 0.5 * h
        vx2, vy2, r2 = vx + hh * ax1, vy + hh * ay1, r + hh * ar1
        c2, s2 = rotate(c0, s0, hh * r)
        ax2, ay2, ar2, kf2, kr2 = velocity_rates(model_id, vx2, vy2, r2, cd, sd, td, omega,
                                                 af + hh * kf1, ar + hh * kr1, p)
        vx3, vy3, r3 = vx + hh * ax2, vy + hh * ay2, r + hh * ar2
        c3, s3 = rotate(c0, s0, hh * r2)
        ax3, ay3, ar3, kf3, kr3 = velocity_rates(model_id, vx3, vy3, r3, cd, sd, td, omega,
                                                 af + hh * kf2, ar + hh * kr2, p)
        vx4, vy4, r4 = vx + h * ax3, vy + h * ay3, r + h * ar3
        c4, s4 = rotate(c0, s0, h * r3)
        ax4, ay4, ar4, kf4, kr4 = velocity_rates(model_id, vx4, vy4, r4, cd, sd, td, omega,
                                                 af + h * kf3, ar + h * kr3, p)
        h6 = h / 6.0
        x[X] += h6 * ((vx * c0 - vy * s0) + 2.0 * (vx2 * c2 - vy2 * s2)
                      + 2.0 * (vx3 * c3 - vy3 * s3) + (vx4 * c4 - vy4 * s4))
        x[Y] += h6 * ((vx * s0 + vy * c0) + 2.0 * (vx2 * s2 + vy2 * c2)
                      + 2.0 * (vx3 * s3 + vy3 * c3) + (vx4 * s4 + vy4 * c4))
        x[YAW] += h6 * (r + 2.0 * r2 + 2.0 * r3 + r4)
        x[VX] += h6 * (ax1 + 2.0 * ax2 + 2.0 * ax3 + ax4)
        x[VY] += h6 * (ay1 + 2.0 * ay2 + 2.0 * ay3 + ay4)
        x[YAW_RATE] += h6 * (ar1 + 2.0 * ar2 + 2.0 * ar3 + ar4)
        x[ALPHA_FRONT] += h6 * (kf1 + 2.0 * kf2 + 2.0 * kf3 + kf4)
        x[ALPHA_REAR] += h6 * (kr1 + 2.0 * kr2 + 2.0 * kr3 + kr4)
    else:
        ax1, ay1, ar1, kf1, kr1 = velocity_rates(model_id, vx, vy, r, cd, sd, td, omega, af, ar,
                                                 p)
        vx, vy, r = vx + h * ax1, vy + h * ay1, r + h * ar1
        x[VX], x[VY], x[YAW_RATE] = vx, vy, r
        x[ALPHA_FRONT] = af + h * kf1   # monotone: the relaxation rate is capped at 1 / h_max
        x[ALPHA_REAR] = ar + h * kr1
        x[X] += h * (vx * c0 - vy * s0)
        x[Y] += h * (vx * s0 + vy * c0)
        x[YAW] += h * r
