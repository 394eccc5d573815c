"""Vehicle parameters packed into float rows for the compiled kernels (one row per car).

The packing is the only place that reads :class:`VehicleParams` for the kernels; the named indices
below replace string keys inside numba code. Rows are built once per
:class:`~rc_sim_engine.vehicle.car.Car`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.errors import ConfigError
from rc_sim_description.param_sections import DRIVE_COMMANDS, DRIVE_COMMANDS_OF_MODEL
from rc_sim_description.params import VehicleParams
from rc_sim_engine.vehicle.actuators import (
    rear_wheel_inertia,
    servo_transition,
    steering_hinge_inertia,
)
from rc_sim_engine.vehicle.servo_models import second_order_transition
from rc_sim_engine.vehicle.tyres import TYRE_IDS

__all__ = ['DRIVE_KINDS', 'DRIVE_MODEL_IDS', 'N_PARAM', 'SERVO_MODEL_IDS',
           'STEERING_KINDS', 'STEER_ANGLE_TO_NORMALISED', 'drive_path', 'pack_params',
           'resolve_drive_kind', 'resolve_steering_kind', 'resolve_tyre_model',
           'steering_path']

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
# Actuator models of real RC hardware (servo_models.py, drive_models.py). Model ids are per car,
# so one batch may mix structures; P_SO_PHI is the first of 4 slots of the second-order servo's
# transition matrix over the sub-step; decays are exp(-h / tau) of the sub-step h.
(P_SERVO_MODEL, P_SERVO_TAU, P_SERVO_DECAY, P_SERVO_WN, P_SERVO_ZETA, P_SO_PHI) = range(52, 58)
(P_DEAD_BAND, P_BACKLASH, P_STEER_KIND, P_GAIN_LEFT, P_GAIN_RIGHT, P_K_LEFT, P_K_RIGHT,
 P_TANH_K_LEFT, P_TANH_K_RIGHT, P_DRIVE_MODEL, P_DRIVE_TAU, P_DRIVE_DECAY, P_DRIVE_ACC,
 P_DRIVE_BRAKE, P_CM1, P_CM2, P_CR0, P_CR1, P_CR2, P_DUTY_DEAD_BAND, P_DUTY_DECAY,
 P_GRIP_LONG, P_GZ_ACTUATORS) = range(61, 84)
#: Lateral relaxation lengths sigma [m] of the front and rear tyres (0: instantaneous slip).
(P_SIGMA_F, P_SIGMA_R) = range(84, 86)
#: Steering linkage map u + q u^2 + c u^3 of angle commands (steering.steering_linkage_*).
(P_LINK_Q, P_LINK_C) = range(86, 88)
#: 1: front and rear axles locked together (drive.driven_axles both_locked), 0: rear drive.
P_AWD = 88
#: Throttle drive: steering drag C_rd [N] (drive.steering_drag).
P_CRD = 89
#: How the kernels read drive commands: P_DRIVE_INPUT 1 = a wheel-speed target through the
#: speed controller (drive_models.speed_command), 0 = the drive model's own input; the command
#: is first multiplied by P_DRIVE_SCALE (1/R for speeds [m/s], 1/m for forces [N]).
(P_DRIVE_INPUT, P_DRIVE_SCALE) = range(90, 92)
#: Speed controller gains Kp [1/s], Ki [1/s^2]; acceleration drive: gain k, decay of the command
#: lag over the sub-step, limits [m/s^2] (speeding up, braking); mass [kg] at P_M.
(P_SPEED_KP, P_SPEED_KI, P_ACC_GAIN, P_ACC_DECAY, P_ACC_MAX, P_DEC_MAX) = range(92, 98)
N_PARAM = 98

#: steering.servo_model -> kernel id.
SERVO_MODEL_IDS = {'pd_joint': 0, 'first_order': 1, 'second_order': 2}
#: drive.drive_model -> kernel id.
DRIVE_MODEL_IDS = {'pd_joint': 0, 'first_order': 1, 'throttle': 2, 'acceleration': 3}
#: Steering command kinds: an angle [rad] (trim steering_gain, steering_offset) or a normalised
#: servo command s in [-1, 1] (the left/right tanh map). Kernel id 2 (:data:`STEER_ANGLE_TO_
#: NORMALISED`): an angle sent to a car whose own command is normalised, through the inverse of
#: its map (servo_models.inverse_normalised_steering), as the car's own code does.
STEERING_KINDS = {'angle': 0, 'normalised': 1}
STEER_ANGLE_TO_NORMALISED = 2
#: Drive command kinds: a rear wheel speed [rad/s], a speed [m/s], an ESC duty in [-1, 1], an
#: acceleration [m/s^2], a longitudinal force [N] (rc_sim_description DRIVE_COMMANDS).
DRIVE_KINDS = DRIVE_COMMANDS
#: What each kind is, for messages.
_KIND_TEXT = {'wheel_speed': 'wheel speeds [rad/s]', 'speed': 'speeds [m/s]',
              'throttle': 'duties in [-1, 1]', 'acceleration': 'accelerations [m/s^2]',
              'force': 'forces [N]'}


def resolve_tyre_model(name: str) -> int:
    """Kernel id of a lateral tyre law name; unknown name -> one-line :class:`ConfigError`."""
    if name not in TYRE_IDS:
        from rc_sim_description.yamlio import did_you_mean

        raise ConfigError(f'unknown tyre model {name!r}{did_you_mean(name, TYRE_IDS)} (choose '
                          f'from {", ".join(TYRE_IDS)})')
    return TYRE_IDS[name]


def resolve_steering_kind(kind: str) -> int:
    """Kernel id of a steering command kind; unknown kind -> one-line :class:`ConfigError`."""
    if kind not in STEERING_KINDS:
        from rc_sim_description.yamlio import did_you_mean

        raise ConfigError(f'unknown steering_kind {kind!r}{did_you_mean(kind, STEERING_KINDS)} '
                          f'(choose from {", ".join(STEERING_KINDS)})')
    return STEERING_KINDS[kind]


def steering_path(p: VehicleParams, kind: str) -> int:
    """Kernel steering id of ``kind`` commands to car ``p``: its own map for its own kind, an
    angle to a normalised car through the inverse of its map (:data:`STEER_ANGLE_TO_NORMALISED`);
    a normalised command drives any car through its map."""
    kind_id = resolve_steering_kind(kind)
    if kind == 'angle' and p.steering.steering_command == 'normalised':
        return STEER_ANGLE_TO_NORMALISED
    return kind_id


def drive_path(p: VehicleParams, kind: str) -> tuple[int, float]:
    """(P_DRIVE_INPUT, P_DRIVE_SCALE) of ``kind`` commands to car ``p``: the drive model's own
    input (scaled: speed / R, force / m), or a wheel speed / speed target through the speed
    controller of a throttle or acceleration car. Another mismatch is a one-line
    :class:`ConfigError` naming the car's file and key."""
    if kind not in DRIVE_KINDS:
        from rc_sim_description.yamlio import did_you_mean

        raise ConfigError(f'unknown drive command kind {kind!r}{did_you_mean(kind, DRIVE_KINDS)}'
                          f' (choose from {", ".join(DRIVE_KINDS)})')
    model = p.drive.drive_model
    scale = {'speed': 1.0 / p.effective_wheel_radius,
             'force': 1.0 / p.mass_properties.mass}.get(kind, 1.0)
    if kind in DRIVE_COMMANDS_OF_MODEL[model]:
        return 0, scale
    if kind in ('wheel_speed', 'speed') and model in ('throttle', 'acceleration'):
        return 1, scale
    takes = ' or '.join(_KIND_TEXT[k] for k in DRIVE_COMMANDS_OF_MODEL[model])
    needs = ' or '.join(m for m, kinds in DRIVE_COMMANDS_OF_MODEL.items() if kind in kinds)
    raise ConfigError(f'{p.source}: drive.drive_model {model!r} takes {takes} (or speeds '
                      f'through its speed controller), not {_KIND_TEXT[kind]}: {kind} commands '
                      f'need drive_model {needs}')


def resolve_drive_kind(params: Sequence[VehicleParams], kind: str) -> str:
    """``kind`` checked against every car (:func:`drive_path`); returns it."""
    for p in params:
        drive_path(p, kind)
    return kind


def pack_params(params: Sequence[VehicleParams], *, tyre_model: str | None = None,
                load_transfer: bool = False, substep: float = 1e-3,
                steering_kind: str = 'angle', drive_kind: str = 'wheel_speed'
                ) -> NDArray[np.float64]:
    """(N, N_PARAM) rows; ``tyre_model`` overrides ``params.tyres.tyre_model`` for every car;
    ``substep`` [s] is the internal step the actuator transition matrices are computed for;
    ``steering_kind`` and ``drive_kind`` say what the commands are (:data:`STEERING_KINDS`,
    :data:`DRIVE_KINDS`; by default the mapper's steering angle and wheel speed, which a
    normalised or throttle car takes through its own code's chain: :func:`steering_path`,
    :func:`drive_path`). A parameter object repeated in ``params`` is packed once (a calibrator
    batch repeats each candidate for every window)."""
    resolve_steering_kind(steering_kind)
    rows = np.empty((len(params), N_PARAM))
    done: dict[int, int] = {}
    for i, p in enumerate(params):
        if id(p) in done:
            rows[i] = rows[done[id(p)]]
            continue
        done[id(p)] = i
        if tyre_model is not None and tyre_model != p.tyres.tyre_model:
            _check_tyre_override(p, tyre_model)
        kind_id = steering_path(p, steering_kind)
        g, m, s, d, t = p.geometry, p.mass_properties, p.steering, p.drive, p.tyres
        row = rows[i]
        row[P_L] = g.wheelbase
        row[P_LF] = g.cg_to_front_axle
        row[P_LR] = g.cg_to_rear_axle
        row[P_M] = m.mass
        row[P_IZ] = m.yaw_inertia
        row[P_H] = g.cg_height
        row[P_R] = p.effective_wheel_radius  # rolling: slip, speed <-> wheel speed
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
        row[P_LINK_Q] = s.steering_linkage_quadratic
        row[P_LINK_C] = s.steering_linkage_cubic
        row[P_J_REAR] = 2.0 * rear_wheel_inertia(p)
        row[P_WHEEL_KP] = d.wheel_p_gain
        row[P_WHEEL_KI] = d.wheel_i_gain
        row[P_WHEEL_KD] = d.wheel_d_gain
        row[P_WHEEL_IMAX] = d.wheel_i_max
        row[P_WHEEL_TMAX] = d.wheel_max_torque
        row[P_MAX_WHEEL_SPEED] = d.max_wheel_speed
        row[P_G] = GRAVITY_MPS2
        # static axle loads m g lr / L, m g lf / L (precomputed: the kernels read them per stage)
        row[P_FZ_FRONT] = m.mass * GRAVITY_MPS2 * g.cg_to_rear_axle / g.wheelbase
        row[P_FZ_REAR] = m.mass * GRAVITY_MPS2 * g.cg_to_front_axle / g.wheelbase
        row[P_SERVO_PHI:P_SERVO_PHI + 9] = servo_transition(p, substep).ravel()
        row[P_REAR_STEER] = s.rear_steering_ratio
        row[P_SIGMA_F] = t.relaxation_length_front
        row[P_SIGMA_R] = t.relaxation_length_rear
        _pack_actuators(row, p, substep, kind_id)
        row[P_DRIVE_INPUT], row[P_DRIVE_SCALE] = drive_path(p, drive_kind)
    return rows


def _check_tyre_override(p: VehicleParams, tyre_model: str) -> None:
    """The chassis step limit (rc_sim_description.plausibility) with the tyre law a run
    overrides (the vehicle file is checked with its own)."""
    from rc_sim_description.plausibility import (
        CHASSIS_STEP_LIMIT,
        ENGINE_MAX_SUBSTEP,
        chassis_mode_rate,
    )

    law = 'pacejka' if tyre_model == 'pacejka' else 'linear'
    rate, which = chassis_mode_rate(p, law)
    if rate * ENGINE_MAX_SUBSTEP > CHASSIS_STEP_LIMIT:
        raise ConfigError(f'tyre model {tyre_model}: with {p.source} the stiffest lateral/yaw '
                          f'mode decays at {rate:.4g} 1/s, too fast for the engine step (|lambda| '
                          f'h = {rate * ENGINE_MAX_SUBSTEP:.3g} > {CHASSIS_STEP_LIMIT:g}): lower '
                          f'tyres.{which}, raise yaw_inertia, or keep tyre_model '
                          f'{p.tyres.tyre_model}')


def _pack_actuators(row: NDArray[np.float64], p: VehicleParams, h: float, kind_id: int) -> None:
    """Servo and drive model slots of one row (sub-step ``h``)."""
    s, d = p.steering, p.drive
    row[P_SERVO_MODEL] = SERVO_MODEL_IDS[s.servo_model]
    row[P_SERVO_TAU] = s.servo_time_constant
    row[P_SERVO_DECAY] = np.exp(-h / s.servo_time_constant)
    row[P_SERVO_WN] = s.servo_natural_frequency
    row[P_SERVO_ZETA] = s.servo_damping_ratio
    row[P_SO_PHI:P_SO_PHI + 4] = second_order_transition(
        s.servo_natural_frequency, s.servo_damping_ratio, h)
    row[P_DEAD_BAND] = 0.5 * s.steering_dead_band  # half widths of the play operators
    row[P_BACKLASH] = 0.5 * s.steering_backlash
    row[P_STEER_KIND] = kind_id
    row[P_GAIN_LEFT], row[P_GAIN_RIGHT] = p.normalised_steering_gains
    row[P_K_LEFT] = s.steering_curvature_left
    row[P_K_RIGHT] = s.steering_curvature_right
    row[P_TANH_K_LEFT] = np.tanh(s.steering_curvature_left)
    row[P_TANH_K_RIGHT] = np.tanh(s.steering_curvature_right)
    radius = p.effective_wheel_radius
    row[P_DRIVE_MODEL] = DRIVE_MODEL_IDS[d.drive_model]
    row[P_AWD] = float(d.driven_axles == 'both_locked')
    row[P_DRIVE_TAU] = d.drive_time_constant
    row[P_DRIVE_DECAY] = np.exp(-h / d.drive_time_constant)
    row[P_DRIVE_ACC] = d.max_acceleration / radius
    row[P_DRIVE_BRAKE] = d.max_deceleration / radius
    row[P_CM1] = d.motor_force_gain
    row[P_CM2] = d.motor_back_emf_gain
    row[P_CR0] = d.rolling_resistance
    row[P_CR1] = d.viscous_resistance
    row[P_CR2] = d.drag_coefficient
    row[P_CRD] = d.steering_drag
    row[P_DUTY_DEAD_BAND] = d.throttle_dead_band
    tau_d = d.throttle_time_constant
    row[P_DUTY_DECAY] = np.exp(-h / tau_d) if tau_d > 0.0 else 0.0
    row[P_SPEED_KP] = d.speed_controller_p_gain
    row[P_SPEED_KI] = d.speed_controller_i_gain
    row[P_ACC_GAIN] = d.acceleration_gain
    tau_a = d.acceleration_time_constant
    row[P_ACC_DECAY] = np.exp(-h / tau_a) if tau_a > 0.0 else 0.0
    row[P_ACC_MAX] = d.max_acceleration
    row[P_DEC_MAX] = d.max_deceleration
    lon = p.tyres.pacejka_longitudinal  # peak of D sin(C atan(.)): D, or D sin(C pi/2) for C < 1
    row[P_GRIP_LONG] = lon.D * (1.0 if lon.C >= 1.0 else np.sin(0.5 * np.pi * lon.C))
    # 1: the gz actuators alone (pd_joint servo and drive, no dead band or backlash): the
    # kernels' branch-free path of the default car
    row[P_GZ_ACTUATORS] = float(s.servo_model == 'pd_joint' and d.drive_model == 'pd_joint'
                                and s.steering_dead_band == 0.0 and s.steering_backlash == 0.0)
