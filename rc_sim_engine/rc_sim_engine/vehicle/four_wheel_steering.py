"""Four-wheel-steering kinematic bicycle (a car like the INRIA Cycab), engine ``kinematic_4ws``.

The rear wheels steer by ``k`` times the front angle phi (``steering.rear_steering_ratio``; the
Cycab has k = 0.69, our car k = 0 = front steering only). With k > 0 the rear wheels turn the
other way (counter-phase): the instantaneous centre of rotation G projects on the car axis at H
between the rear axle centre R and the front axle centre F, and (L = wheelbase):

    RH = L cos(phi) sin(k phi) / sin((1 + k) phi)     HF = L cos(k phi) sin(phi) / sin((1 + k) phi)
    rho_R = L cos(phi) / |sin((1 + k) phi)|         rho_F = L cos(k phi) / |sin((1 + k) phi)|
    v_R = v_F cos(phi) / cos(k phi)
    dx_R/dt = v_R cos(theta - k phi),  dy_R/dt = v_R sin(theta - k phi)
    dtheta/dt = v_R sin((1 + k) phi) / (L cos(phi))

(texts that count the rear angle positive the other way write theta + k phi). k = 0 gives the
ordinary kinematic bicycle, rho_R = L / tan(phi).

In the engine the state is at the centre of mass (lr ahead of R,
:mod:`rc_sim_engine.vehicle.state`): the rear contact speed v_R is driven by the same slip-based
rear drive as the 2WS kinematic model (``Fx = Fz_r MF_long(kappa)``), and VX, VY, YAW_RATE relax
with ``KINEMATIC_RELAXATION`` onto the constraint VX = v_R cos(k phi), VY = -v_R sin(k phi) + lr r,
r = v_R sin((1+k)phi)/(L cos phi) (``kinematic_4ws_model_rates`` in
:mod:`rc_sim_engine.vehicle.models`; this module imports nothing of it).
"""

from __future__ import annotations

import math

from numba import njit
import numpy as np
import numpy.typing as npt

__all__ = [
    'icr_projection',
    'kinematic_4ws_rates',
    'rear_speed_from_front',
    'turning_radii',
]

FloatArray = npt.NDArray[np.float64]


def icr_projection(phi: npt.ArrayLike, wheelbase: float,
                   k: float) -> tuple[FloatArray, FloatArray]:
    """(RH, HF) [m], the foot H of the rotation centre from R and from F."""
    p = np.asarray(phi, dtype=float)
    den = np.sin((1.0 + k) * p)
    return (wheelbase * np.cos(p) * np.sin(k * p) / den,
            wheelbase * np.cos(k * p) * np.sin(p) / den)


def turning_radii(phi: npt.ArrayLike, wheelbase: float,
                  k: float) -> tuple[FloatArray, FloatArray]:
    """(rho_R, rho_F) [m], turning radii of the rear and front axle centres."""
    p = np.asarray(phi, dtype=float)
    den = np.abs(np.sin((1.0 + k) * p))
    return wheelbase * np.cos(p) / den, wheelbase * np.cos(k * p) / den


def rear_speed_from_front(v_front: npt.ArrayLike, phi: npt.ArrayLike, k: float) -> FloatArray:
    """v_R = v_F cos(phi) / cos(k phi) [m/s]."""
    p = np.asarray(phi, dtype=float)
    return np.asarray(v_front, dtype=float) * np.cos(p) / np.cos(k * p)


def kinematic_4ws_rates(theta: npt.ArrayLike, v_rear: npt.ArrayLike, phi: npt.ArrayLike,
                        wheelbase: float, k: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(dx_R/dt, dy_R/dt, dtheta/dt) of the rear axle centre (vectorized)."""
    th, v, p = (np.asarray(a, dtype=float) for a in (theta, v_rear, phi))
    return (v * np.cos(th - k * p), v * np.sin(th - k * p),
            v * np.sin((1.0 + k) * p) / (wheelbase * np.cos(p)))


@njit(cache=True)
def constrained_velocity(v_rear: float, phi: float, k: float, wheelbase: float,
                         cg_to_rear_axle: float) -> tuple[float, float, float]:
    """(VX, VY, YAW_RATE) at the centre of mass for rear contact speed ``v_rear`` (module doc)."""
    r = v_rear * math.sin((1.0 + k) * phi) / (wheelbase * math.cos(phi))
    return (v_rear * math.cos(k * phi), -v_rear * math.sin(k * phi) + cg_to_rear_axle * r, r)


@njit(cache=True)
def rear_contact_speed(vx: float, vy: float, r: float, phi: float, k: float,
                       cg_to_rear_axle: float) -> float:
    """Speed of R along the rear wheel direction (-k phi in the body frame) [m/s]."""
    vy_rear = vy - cg_to_rear_axle * r
    return vx * math.cos(k * phi) - vy_rear * math.sin(k * phi)


@njit(cache=True)
def velocity_rates_4ws(vx: float, vy: float, r: float, phi: float, k: float, dv_rear: float,
                       wheelbase: float, cg_to_rear_axle: float,
                       relaxation: float) -> tuple[float, float, float]:
    """(dVX, dVY, dr): the constrained velocity's rate for dv_R/dt plus relaxation onto it."""
    v_rear = rear_contact_speed(vx, vy, r, phi, k, cg_to_rear_axle)
    vx_c, vy_c, r_c = constrained_velocity(v_rear, phi, k, wheelbase, cg_to_rear_axle)
    dx_c, dy_c, dr_c = constrained_velocity(dv_rear, phi, k, wheelbase, cg_to_rear_axle)
    return (dx_c + (vx_c - vx) / relaxation, dy_c + (vy_c - vy) / relaxation,
            dr_c + (r_c - r) / relaxation)
