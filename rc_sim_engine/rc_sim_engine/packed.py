"""Vehicle parameters packed into float rows for the compiled kernels (one row per car).

The packing is the only place that reads :class:`VehicleParams` for the kernels; the named indices
below replace string keys inside numba code. Rows are built once per
:class:`~rc_sim_engine.car.Car`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams
from rc_sim_engine.actuators import rear_wheel_inertia, servo_transition, steering_hinge_inertia
from rc_sim_engine.tyres import TYRE_IDS

__all__ = ['GRAVITY', 'N_PARAM', 'pack_params', 'resolve_tyre_model']

#: Gravity [m/s^2] (the value CommonRoad uses; gz worlds use 9.8, 0.1 % apart).
GRAVITY = 9.81

(P_L, P_LF, P_LR, P_M, P_IZ, P_H, P_R, P_TRACK, P_CF, P_CR, P_MU_LAT, P_MU_LONG,
 P_LAT_B, P_LAT_C, P_LAT_D, P_LAT_E, P_LON_B, P_LON_C, P_LON_D, P_LON_E, P_TYRE, P_LOAD_TRANSFER,
 P_J_HINGE, P_SERVO_KP, P_SERVO_KI, P_SERVO_KD, P_SERVO_IMAX, P_SERVO_TMAX, P_MAX_STEER,
 P_MAX_STEER_RATE, P_STEER_GAIN, P_STEER_OFFSET, P_J_REAR, P_WHEEL_KP, P_WHEEL_KI, P_WHEEL_KD,
 P_WHEEL_IMAX, P_WHEEL_TMAX, P_MAX_WHEEL_SPEED, P_G, P_FZ_FRONT, P_FZ_REAR) = range(42)
#: First of 9 slots: row-major exact servo transition matrix of the sub-step
#: (actuators.servo_transition).
P_SERVO_PHI = 42
#: Rear steering ratio k of the kinematic_4ws model (steering.rear_steering_ratio).
P_REAR_STEER = 51
N_PARAM = 52


def resolve_tyre_model(name: str) -> int:
    """Kernel id of a lateral tyre law name; unknown name -> one-line :class:`ConfigError`."""
    if name not in TYRE_IDS:
        from rc_sim_description.yamlio import did_you_mean

        raise ConfigError(f'unknown tyre model {name!r}{did_you_mean(name, TYRE_IDS)} (choose '
                          f'from {", ".join(TYRE_IDS)})')
    return TYRE_IDS[name]


def pack_params(params: Sequence[VehicleParams], *, tyre_model: str | None = None,
                load_transfer: bool = False, substep: float = 1e-3) -> NDArray[np.float64]:
    """(N, N_PARAM) rows; ``tyre_model`` overrides ``params.tyres.tyre_model`` for every car;
    ``substep`` [s] is the internal step the servo transition matrix is computed for."""
    rows = np.empty((len(params), N_PARAM))
    for i, p in enumerate(params):
        g, m, s, d, t = p.geometry, p.mass_properties, p.steering, p.drive, p.tyres
        row = rows[i]
        row[P_L] = g.wheelbase
        row[P_LF] = g.cg_to_front_axle
        row[P_LR] = g.cg_to_rear_axle
        row[P_M] = m.mass
        row[P_IZ] = m.yaw_inertia
        row[P_H] = g.cg_height
        row[P_R] = g.wheel_radius
        row[P_TRACK] = g.track_width
        row[P_CF] = t.cornering_stiffness_front
        row[P_CR] = t.cornering_stiffness_rear
        row[P_MU_LAT] = p.friction.mu2
        row[P_MU_LONG] = p.friction.mu1
        lat, lon = t.pacejka_lateral, t.pacejka_longitudinal
        row[P_LAT_B:P_LAT_E + 1] = (lat.B, lat.C, lat.D, lat.E)
        row[P_LON_B:P_LON_E + 1] = (lon.B, lon.C, lon.D, lon.E)
        row[P_TYRE] = resolve_tyre_model(tyre_model if tyre_model is not None else t.tyre_model)
        row[P_LOAD_TRANSFER] = 1.0 if load_transfer else 0.0
        row[P_J_HINGE] = steering_hinge_inertia(p)
        row[P_SERVO_KP] = s.servo_p_gain
        row[P_SERVO_KI] = s.servo_i_gain
        row[P_SERVO_KD] = s.servo_d_gain
        row[P_SERVO_IMAX] = s.servo_i_max
        row[P_SERVO_TMAX] = s.servo_max_torque
        row[P_MAX_STEER] = s.max_steering_angle
        row[P_MAX_STEER_RATE] = s.max_steering_rate
        row[P_STEER_GAIN] = s.steering_gain
        row[P_STEER_OFFSET] = s.steering_offset
        row[P_J_REAR] = 2.0 * rear_wheel_inertia(p)
        row[P_WHEEL_KP] = d.wheel_p_gain
        row[P_WHEEL_KI] = d.wheel_i_gain
        row[P_WHEEL_KD] = d.wheel_d_gain
        row[P_WHEEL_IMAX] = d.wheel_i_max
        row[P_WHEEL_TMAX] = d.wheel_max_torque
        row[P_MAX_WHEEL_SPEED] = d.max_wheel_speed
        row[P_G] = GRAVITY
        # static axle loads m g lr / L, m g lf / L (precomputed: the kernels read them per stage)
        row[P_FZ_FRONT] = m.mass * GRAVITY * g.cg_to_rear_axle / g.wheelbase
        row[P_FZ_REAR] = m.mass * GRAVITY * g.cg_to_front_axle / g.wheelbase
        row[P_SERVO_PHI:P_SERVO_PHI + 9] = servo_transition(p, substep).ravel()
        row[P_REAR_STEER] = s.rear_steering_ratio
    return rows
