"""Fixed-step integrators of the chassis ODE, chosen by name (:data:`INTEGRATORS`).

* ``rk4``: classical 4th-order Runge-Kutta (Hairer, Norsett & Wanner, *Solving ODEs I*, §II.1).
* ``semi_implicit_euler``: symplectic Euler: velocities (VX, VY, YAW_RATE) first from f(x_n), then
  the pose (X, Y with the heading at the start of the step, YAW) from the updated velocities
  (Hairer, Lubich & Wanner, *Geometric Numerical Integration*, §VI.3).

The actuator states (servo, wheel spin, PID integrals) are advanced by their own sub-steps in
:mod:`rc_sim_engine.vehicle.actuators` (exact servo, backward-Euler wheel); the chassis step holds
the steering angle and wheel speed at their sub-step midpoint values (operator splitting).
"""

from __future__ import annotations

import math

from numba import njit
import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_engine.vehicle.models import velocity_rates
from rc_sim_engine.vehicle.state import ALPHA_FRONT, ALPHA_REAR, VX, VY, YAW, YAW_RATE, X, Y

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

    The right-hand side is :func:`rc_sim_engine.vehicle.models.model_rhs` (pose from the body
    velocities, body velocity rates from :func:`~rc_sim_engine.vehicle.models.velocity_rates`),
    written out per stage.
    """
    vx, vy, r, yaw = x[VX], x[VY], x[YAW_RATE], x[YAW]
    af, ar = x[ALPHA_FRONT], x[ALPHA_REAR]
    c0, s0 = math.cos(yaw), math.sin(yaw)
    # The stages run in a loop with ONE call site of velocity_rates for both integrators (the
    # model is inlined: every call site is a copy of it, slow to compile and to reload). RK4
    # accumulates its weighted sums in the order of the closed form h/6 (k1 + 2 k2 + 2 k3 + k4);
    # the semi-implicit Euler step takes the first stage's rates: results are bit for bit those
    # of a call per stage.
    rk4 = integ_id == 0
    hh = 0.5 * h
    vxs, vys, rs, afs, ars, cs, ss = vx, vy, r, af, ar, c0, s0  # inputs of the stage
    sx = sy = syaw = svx = svy = sr = saf = sar = 0.0
    axs = ays = ars_ = kfs = krs = 0.0
    for stage in range(4 if rk4 else 1):
        axs, ays, ars_, kfs, krs = velocity_rates(model_id, vxs, vys, rs, cd, sd, td, omega,
                                                  afs, ars, p)
        if not rk4:
            break
        w = 2.0 if stage == 1 or stage == 2 else 1.0
        sx = sx + w * (vxs * cs - vys * ss)
        sy = sy + w * (vxs * ss + vys * cs)
        syaw = syaw + w * rs
        svx = svx + w * axs
        svy = svy + w * ays
        sr = sr + w * ars_
        saf = saf + w * kfs
        sar = sar + w * krs
        if stage < 3:  # the next stage's inputs: half steps, then a whole one
            cn = hh if stage < 2 else h
            cs, ss = rotate(c0, s0, cn * rs)
            vxs, vys, rs = vx + cn * axs, vy + cn * ays, r + cn * ars_
            afs, ars = af + cn * kfs, ar + cn * krs
    if rk4:
        h6 = h / 6.0
        x[X] += h6 * sx
        x[Y] += h6 * sy
        x[YAW] += h6 * syaw
        x[VX] += h6 * svx
        x[VY] += h6 * svy
        x[YAW_RATE] += h6 * sr
        x[ALPHA_FRONT] += h6 * saf
        x[ALPHA_REAR] += h6 * sar
    else:
        vx, vy, r = vx + h * axs, vy + h * ays, r + h * ars_
        x[VX], x[VY], x[YAW_RATE] = vx, vy, r
        x[ALPHA_FRONT] = af + h * kfs   # monotone: the relaxation rate is capped at 1 / h_max
        x[ALPHA_REAR] = ar + h * krs
        x[X] += h * (vx * c0 - vy * s0)
        x[Y] += h * (vx * s0 + vy * c0)
        x[YAW] += h * r
