"""The vehicle parameter sections: frozen dataclasses whose fields carry unit, meaning and range.

One dataclass per section of ``config/vehicle.yaml`` (``geometry``, ``mass_properties``, ...);
every field is declared with :func:`rc_sim_description.param_schema.param`, so the loader, the
documentation and the override writer share one schema. Leaf key names are unique across
sections; :func:`leaf_keys`, :func:`section_of` and :func:`param_range` look them up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
import math
from typing import Any

from rc_sim_description.errors import VehicleParamsError
from rc_sim_description.param_schema import Range, one_of, unit_vector3
from rc_sim_description.param_schema import param as _p
from rc_sim_description.yamlio import did_you_mean

__all__ = [
    'DRIVEN_AXLES',
    'DRIVE_COMMANDS',
    'DRIVE_COMMANDS_OF_MODEL',
    'DRIVE_MODELS',
    'SECTIONS',
    'SERVO_MODELS',
    'STEERING_COMMANDS',
    'TYRE_MODELS',
    'DriveParams',
    'FrictionParams',
    'GeometryParams',
    'MassParams',
    'PacejkaCoefficients',
    'SensorParams',
    'SteeringParams',
    'TimingParams',
    'TyreParams',
    'leaf_keys',
    'param_range',
    'section_of',
]

TYRE_MODELS = ('linear', 'fiala', 'pacejka')
#: Steering servo models (``steering.servo_model``): the gz JointPositionController PID on the
#: hinge inertia, a first-order lag, a second-order (natural frequency, damping) response.
SERVO_MODELS = ('pd_joint', 'first_order', 'second_order')
#: Rear drive models (``drive.drive_model``): the gz JointController wheel PID, a speed-loop ESC
#: (first-order wheel-speed lag with acceleration/braking limits), an ESC + DC motor (duty).
DRIVE_MODELS = ('pd_joint', 'first_order', 'throttle', 'acceleration')
#: What the car's own steering command is (``steering.steering_command``): an angle [rad], or a
#: normalised servo command in [-1, 1] (a PWM servo).
STEERING_COMMANDS = ('angle', 'normalised')
#: What the car's own drive command is (``drive.drive_command``): a rear wheel speed [rad/s], a
#: speed [m/s] (both to a speed loop), an ESC duty in [-1, 1], an acceleration [m/s^2] or a
#: longitudinal force [N] (both to an acceleration drive).
DRIVE_COMMANDS = ('wheel_speed', 'speed', 'throttle', 'acceleration', 'force')
#: drive.drive_model -> the drive commands it takes (the first is the default of a null
#: drive.drive_command).
DRIVE_COMMANDS_OF_MODEL: dict[str, tuple[str, ...]] = {
    'pd_joint': ('wheel_speed', 'speed'), 'first_order': ('wheel_speed', 'speed'),
    'throttle': ('throttle',), 'acceleration': ('acceleration', 'force')}
#: Driven axles (``drive.driven_axles``): the rear wheels, or both axles locked together.
DRIVEN_AXLES = ('rear', 'both_locked')

# --------------------------------------------------------------------------- valid ranges
# Generous bounds for any real 1:5 to 1:43 RC car (reasons: docs/limits.md, section "Vehicle and
# configuration ranges"); R(lo, hi) is closed, the flags open an end.
R = Range
_HALF_PI = R(0.0, math.pi / 2, lo_open=True, hi_open=True)
_GAIN_P = R(0.0, 1e4)  # PID gains and clamps of the gz controllers (N m per unit error)
_GAIN_I = R(0.0, 1e5)
_GAIN_D = R(0.0, 100.0)
_CLAMP = R(0.0, 1e3)
_TORQUE = R(0.0, 1e3, lo_open=True)
_MOUNT_XY = R(-2.0, 2.0)
_MOUNT_Z = R(-1.0, 2.0)
_YAW = R(-math.pi, math.pi)


# --------------------------------------------------------------------------- sections
@dataclass(frozen=True)
class GeometryParams:
    """Chassis and wheel geometry; base_link is the rear axle centre at axle height (REP 103)."""

    wheelbase: float = _p('m', 'Front to rear axle distance L = lf + lr.', R(0.02, 2.0))
    cg_to_front_axle: float = _p(
        'm', 'lf: centre of mass to front axle (lr = L - lf); each axle carries at least 5 % '
        'of the weight: 0.05 L <= lf <= 0.95 L.', R(0.001, 1.9))
    cg_height: float = _p('m', 'Centre of mass height above the ground.', R(0.001, 1.0))
    track_width: float = _p('m', 'Distance between left and right wheel centres W.',
                            R(0.02, 2.0))
    wheel_radius: float = _p('m', 'Wheel radius r.', R(0.003, 0.5))
    wheel_width: float = _p('m', 'Wheel width.', R(0.001, 0.5))
    chassis_length: float = _p('m', 'Chassis box length (x).', R(0.01, 4.0))
    chassis_width: float = _p('m', 'Chassis box width (y).', R(0.005, 2.0))
    chassis_height: float = _p('m', 'Chassis box height (z).', R(0.001, 1.0))
    chassis_ground_clearance: float = _p('m', 'Bottom of the chassis box above the ground.',
                                         R(0.0, 0.5))

    @property
    def cg_to_rear_axle(self) -> float:
        """lr = L - lf [m]."""
        return self.wheelbase - self.cg_to_front_axle


@dataclass(frozen=True)
class MassParams:
    """Masses and principal inertias about the centre of mass."""

    mass: float = _p('kg', 'Total vehicle mass m.', R(0.01, 100.0))
    yaw_inertia: float = _p(
        'kg m^2', 'Whole-vehicle Izz about the centre of mass; at most m (X^2 + Y^2) with X, Y '
        'the length and width of the car (wheels or chassis box).', R(1e-7, 50.0))
    roll_inertia: float | None = _p(
        'kg m^2', 'Ixx about the centre of mass; null: chassis box scaled to yaw_inertia.',
        R(1e-7, 50.0), nullable=True)
    pitch_inertia: float | None = _p(
        'kg m^2', 'Iyy about the centre of mass; null: chassis box scaled to yaw_inertia.',
        R(1e-7, 50.0), nullable=True)
    wheel_mass: float = _p('kg', 'Mass of one wheel (part of mass).', R(1e-4, 10.0))
    steering_hinge_mass: float = _p('kg', 'Mass of one steering knuckle (part of mass).',
                                    R(1e-5, 5.0))


@dataclass(frozen=True)
class FrictionParams:
    """Ground contact friction of the wheels (gz/ODE-style mu1, mu2, fdir1)."""

    mu1: float = _p('-', 'Friction coefficient along fdir1.', R(0.01, 5.0))
    mu2: float = _p('-', 'Friction coefficient perpendicular to fdir1.', R(0.01, 5.0))
    fdir1: tuple[float, float, float] = _p('-', 'First friction direction in the wheel frame.',
                                           R(-1.0, 1.0), unit_vector3)


@dataclass(frozen=True)
class SteeringParams:
    """Front steering: limits, trim, servo models (gz JointPositionController), command map."""

    max_steering_angle: float = _p('rad', 'Mechanical steering limit |delta|.', _HALF_PI)
    max_steering_rate: float = _p('rad/s', 'Servo slew-rate limit.', R(0.1, 200.0))
    rear_steering_ratio: float = _p(
        '-', 'k: rear wheels steer k * delta in counter-phase (4WS; 0 = front only); '
        'used by the engine model kinematic_4ws.', R(-1.0, 1.0))
    steering_gain: float = _p('-', 'Trim: delta = steering_gain * delta_cmd + steering_offset.',
                              R(0.1, 10.0))
    steering_offset: float = _p('rad', 'Trim offset added to the commanded angle; its magnitude '
                                'stays below max_steering_angle.', R(-0.5, 0.5))
    steering_linkage_quadratic: float = _p(
        '1/rad', 'Angle commands: the linkage maps the trimmed angle u to the wheels as '
        'u + q u^2 + c u^3 (q: this key; its third-order expansion; engine only); it must rise '
        'over +-max_steering_angle.', R(-2.0, 2.0))
    steering_linkage_cubic: float = _p('1/rad^2', 'Angle commands: c of the linkage map (c < 0: '
                                       'it softens towards full lock).', R(-5.0, 5.0))
    servo_p_gain: float = _p('N m/rad', 'Hinge position PID proportional gain; pd_joint needs '
                             '> 0.', _GAIN_P)
    servo_i_gain: float = _p('N m/(rad s)', 'Hinge position PID integral gain; pd_joint needs '
                             'servo_d_gain * servo_p_gain > J_h * servo_i_gain (Routh-Hurwitz).',
                             _GAIN_I)
    servo_d_gain: float = _p('N m s/rad', 'Hinge position PID derivative gain; pd_joint needs '
                             '> 0.', _GAIN_D)
    servo_i_max: float = _p('N m', 'Hinge PID integrator clamp.', _CLAMP)
    servo_max_torque: float = _p('N m', 'Hinge PID output saturation and joint effort limit.',
                                 _TORQUE)
    servo_model: str = _p(
        '-', 'Steering servo dynamics: pd_joint (the hinge PID above on the hinge inertia, as gz '
        'simulates it), first_order (time constant) or second_order (natural frequency, '
        'damping); all with the slew, dead band, backlash and angle limits.',
        None, one_of(SERVO_MODELS))
    servo_time_constant: float = _p(
        's', 'first_order servo: time constant tau of d(delta)/dt = (delta* - delta) / tau.',
        R(0.005, 2.0))
    servo_natural_frequency: float = _p(
        'rad/s', 'second_order servo: natural frequency wn of '
        'd2(delta)/dt2 = wn^2 (delta* - delta) - 2 zeta wn d(delta)/dt.', R(1.0, 1000.0))
    servo_damping_ratio: float = _p('-', 'second_order servo: damping ratio zeta.',
                                    R(0.05, 10.0))
    steering_dead_band: float = _p(
        'rad', 'Total width of the servo dead band: a target change smaller than it after a '
        'reversal does not move the servo, which rests within half of it of the target '
        '(play operator on the target; every servo_model).', R(0.0, 0.5))
    steering_backlash: float = _p(
        'rad', 'Total free play between servo and wheels: the wheels follow the servo output '
        'only after it has taken up the play (play operator; engine only, gz has none).',
        R(0.0, 0.5))
    steering_gain_left: float | None = _p(
        'rad', 'Normalised commands: wheel angle change from s = 0 to s = +1 (left); null: '
        'max_steering_angle.', _HALF_PI, nullable=True)
    steering_gain_right: float | None = _p(
        'rad', 'Normalised commands: wheel angle change from s = -1 (right) to s = 0; null: '
        'max_steering_angle.', _HALF_PI, nullable=True)
    steering_curvature_left: float = _p(
        '-', 'Normalised commands, s > 0: shape k of delta = steering_offset + gain '
        'tanh(k s) / tanh(k); 0 is linear, larger saturates towards full lock.', R(0.0, 20.0))
    steering_curvature_right: float = _p('-', 'Normalised commands, s < 0: shape k as for the '
                                         'left side.', R(0.0, 20.0))
    steering_command: str = _p(
        '-', "The car's own steering command: angle (an angle [rad], through the trim and the "
        'linkage) or normalised (a servo command in [-1, 1], through the left/right map). '
        'Steering angles sent to a normalised car (/cmd_vel, /ackermann_cmd, scenarios, '
        "trackers) go through the inverse of its map, as the car's own code does.", None,
        one_of(STEERING_COMMANDS))


@dataclass(frozen=True)
class DriveParams:
    """Rear drive: wheel speed limit, rolling radius, drive models (gz JointController gains)."""

    max_wheel_speed: float = _p('rad/s', 'Rear wheel angular speed limit; the top speed '
                                'max_wheel_speed * wheel_radius is at most 150 m/s.',
                                R(0.1, 1e4))
    wheel_p_gain: float = _p('N m s/rad', 'Wheel speed PID proportional gain; pd_joint needs '
                             '> 0.', _GAIN_P)
    wheel_i_gain: float = _p('N m/rad', 'Wheel speed PID integral gain.', _GAIN_I)
    wheel_d_gain: float = _p('N m s^2/rad', 'Wheel speed PID derivative gain.', _GAIN_D)
    wheel_i_max: float = _p('N m', 'Wheel PID integrator clamp.', _CLAMP)
    wheel_max_torque: float = _p('N m', 'Wheel PID output saturation and joint effort limit.',
                                 _TORQUE)
    drive_model: str = _p(
        '-', 'Rear drive: pd_joint (the wheel PID above, as gz simulates it), first_order '
        '(speed-loop ESC: first-order wheel-speed lag with acceleration and braking limits), '
        'throttle (ESC + DC motor driven by a duty in [-1, 1]) or acceleration (a low-level '
        'controller that takes an acceleration [m/s^2]: lag, gain and limits).', None,
        one_of(DRIVE_MODELS))
    drive_command: str | None = _p(
        '-', "The car's own drive command: wheel_speed [rad/s] or speed [m/s] (pd_joint, "
        'first_order), throttle (a duty; drive_model throttle), acceleration [m/s^2] or force '
        '[N] (drive_model acceleration; a force is divided by mass); null: the first of these '
        'for the drive_model. Speeds sent to a throttle or acceleration car (/cmd_vel, '
        'scenarios, trackers) go through the speed controller below.', None,
        one_of(DRIVE_COMMANDS), nullable=True)
    driven_axles: str = _p(
        '-', 'rear, or both_locked: front and rear wheels turn at the same speed (a locked '
        'centre: spool or belt, the usual 1:10 touring-car layout), so in a turn the front '
        'wheels brake and the rear ones push (engine single_track; a throttle drive shares its '
        'motor force by the axle loads; the pd_joint wheel loop counts the rear reaction only; '
        'gz drives the rear wheels).', None,
        one_of(DRIVEN_AXLES))
    effective_wheel_radius: float | None = _p(
        'm', 'Effective rolling radius R (speed = R omega when rolling without slip); null: '
        'wheel_radius. Engine slip and kinematics and the gz collision cylinders use it; '
        'within 20 % of wheel_radius.', R(0.0024, 0.6), nullable=True)
    drive_time_constant: float = _p(
        's', 'first_order drive: time constant of d(omega)/dt = (omega* - omega) / tau.',
        R(0.005, 5.0))
    max_acceleration: float = _p(
        'm/s^2', 'first_order drive: largest rolling acceleration R d(omega)/dt while the wheel '
        'speeds up; acceleration drive: largest drive acceleration (force / mass) while the '
        'car speeds up or starts.', R(0.1, 100.0))
    max_deceleration: float = _p(
        'm/s^2', 'first_order drive: largest rolling deceleration while the wheel slows down '
        '(braking); acceleration drive: largest braking acceleration of the drive.',
        R(0.1, 100.0))
    acceleration_gain: float = _p(
        '-', 'acceleration drive: k, drive force m k a_f for the lagged acceleration command '
        'a_f (1: the controller delivers what it is told).', R(0.05, 20.0))
    acceleration_time_constant: float = _p(
        's', 'acceleration drive: first-order lag of the acceleration command (the low-level '
        'controller and the motor current); 0: none.', R(0.0, 2.0))
    motor_force_gain: float = _p(
        'N', 'throttle drive: C_m1, force per unit duty at standstill.', R(0.0, 1e4))
    motor_back_emf_gain: float = _p(
        'N s/m', 'throttle drive: C_m2, force lost per unit duty and unit wheel speed R omega '
        '(back-EMF).', R(0.0, 1e3))
    rolling_resistance: float = _p(
        'N', 'throttle and acceleration drives: C_r0, Coulomb rolling and drivetrain '
        'resistance (holds a stopped car; never pushes it).', R(0.0, 1e3))
    viscous_resistance: float = _p(
        'N s/m', 'throttle and acceleration drives: C_r1, resistance per unit speed.',
        R(0.0, 1e3))
    drag_coefficient: float = _p(
        'N s^2/m^2', 'throttle and acceleration drives: C_r2, aerodynamic drag per unit '
        'speed squared.', R(0.0, 10.0))
    steering_drag: float = _p(
        'N', 'throttle and acceleration drives: C_rd, resistance that grows with the steered '
        'angle, C_rd sin^2(delta), opposing the motion (tyre scrub); single-track model.',
        R(0.0, 1e3))
    throttle_dead_band: float = _p(
        '-', 'throttle drive: duty d0 the ESC ignores; d_eff = sign(d) max(abs(d) - d0, 0).',
        R(0.0, 0.9))
    throttle_time_constant: float = _p(
        's', 'throttle drive: first-order lag of the duty (ESC and motor current); 0: none.',
        R(0.0, 2.0))
    speed_controller_p_gain: float = _p(
        '1/s', 'throttle and acceleration drives driven by speeds (/cmd_vel, scenarios, '
        'trackers): the off-board speed loop, a* = Kp (v* - v) + Ki integral(v* - v) dt, turned '
        "into the car's command through the inverse of the fitted drive model (feedforward of "
        'the resistances at v*); Kp: acceleration demanded per m/s of speed error.',
        R(0.0, 1000.0))
    speed_controller_i_gain: float = _p(
        '1/s^2', 'throttle and acceleration drives: Ki of the speed loop (anti-windup: the '
        'integral stops while the command saturates).', R(0.0, 10000.0))


@dataclass(frozen=True)
class TimingParams:
    """Pure delays of the command chain."""

    command_latency: float = _p('s', 'Pure delay between a command and the actuators.',
                                R(0.0, 1.0))


@dataclass(frozen=True)
class PacejkaCoefficients:
    """Magic Formula y = D sin(C atan(B x - E (B x - atan(B x)))), force = Fz * y (D is a mu)."""

    B: float = _p('-', 'Stiffness factor.', R(0.1, 100.0))
    C: float = _p('-', 'Shape factor (C <= 2 keeps the force sign at large slip).',
                  R(0.1, 2.0))
    D: float = _p('-', 'Peak factor (friction coefficient; peak force = Fz * D).',
                  R(0.01, 5.0))
    E: float = _p('-', 'Curvature factor (E <= 1).', R(-10.0, 1.0))


@dataclass(frozen=True)
class TyreParams:
    """Tyre model of the embedded single-track engine."""

    tyre_model: str = _p('-', 'Lateral tyre model: linear | fiala | pacejka.', None,
                         one_of(TYRE_MODELS))
    cornering_stiffness_front: float = _p('N/rad', 'Front axle cornering stiffness C_f.',
                                          R(0.01, 1e5))
    cornering_stiffness_rear: float = _p('N/rad', 'Rear axle cornering stiffness C_r.',
                                         R(0.01, 1e5))
    pacejka_lateral: PacejkaCoefficients = _p('-', 'Magic Formula on the slip angle [rad].')
    pacejka_longitudinal: PacejkaCoefficients = _p('-', 'Magic Formula on the slip ratio [-].')
    relaxation_length_front: float = _p(
        'm', 'Front lateral relaxation length sigma: the force follows the slip angle with the '
        'lag sigma / |v_x| (Pacejka 2012, 7.2); 0: instantaneous (engine only, gz has none).',
        R(0.0, 2.0))
    relaxation_length_rear: float = _p('m', 'Rear lateral relaxation length; as the front.',
                                       R(0.0, 2.0))


@dataclass(frozen=True)
class SensorParams:
    """2D lidar and IMU: mount poses in base_link and sensor specs."""

    lidar_mount_x: float = _p('m', 'Lidar origin x in base_link.', _MOUNT_XY)
    lidar_mount_y: float = _p('m', 'Lidar origin y in base_link.', _MOUNT_XY)
    lidar_mount_z: float = _p('m', 'Lidar origin z in base_link.', _MOUNT_Z)
    lidar_mount_yaw: float = _p('rad', 'Lidar yaw in base_link.', _YAW)
    lidar_samples: int = _p('-', 'Beams per scan.', R(1, 20000))
    lidar_fov: float = _p('rad', 'Field of view, centred on the lidar x axis.',
                          R(0.0, 2 * math.pi, lo_open=True))
    lidar_range_min: float = _p('m', 'Minimum range.', R(0.0, 100.0))
    lidar_range_max: float = _p('m', 'Maximum range.', R(0.0, 1000.0, lo_open=True))
    lidar_range_resolution: float = _p('m', 'Range resolution.', R(0.0, 1.0))
    lidar_update_rate: float = _p('Hz', 'Scan rate.', R(0.1, 500.0))
    imu_mount_x: float = _p('m', 'IMU origin x in base_link.', _MOUNT_XY)
    imu_mount_y: float = _p('m', 'IMU origin y in base_link.', _MOUNT_XY)
    imu_mount_z: float = _p('m', 'IMU origin z in base_link.', _MOUNT_Z)
    imu_update_rate: float = _p('Hz', 'IMU rate.', R(0.1, 10000.0))

    @property
    def lidar_angle_min(self) -> float:
        """First beam angle in the lidar frame [rad]."""
        return -0.5 * self.lidar_fov

    @property
    def lidar_angle_max(self) -> float:
        """Last beam angle in the lidar frame [rad]."""
        return 0.5 * self.lidar_fov

    @property
    def lidar_angle_increment(self) -> float:
        """Angle between beams, fov / (samples - 1) as gz computes it [rad]."""
        return self.lidar_fov / max(self.lidar_samples - 1, 1)


SECTIONS: dict[str, type] = {
    'geometry': GeometryParams,
    'mass_properties': MassParams,
    'friction': FrictionParams,
    'steering': SteeringParams,
    'drive': DriveParams,
    'timing': TimingParams,
    'tyres': TyreParams,
    'sensors': SensorParams,
}


# --------------------------------------------------------------------------- schema helpers
def leaf_keys() -> dict[str, str]:
    """Mapping leaf key -> section name for every parameter."""
    return {f.name: s for s, cls in SECTIONS.items() for f in fields(cls)}


def section_of(key: str) -> str:
    """Section of a leaf key; raises :class:`VehicleParamsError` for an unknown key."""
    keys = leaf_keys()
    if key not in keys:
        raise VehicleParamsError(f'unknown vehicle parameter {key!r}{did_you_mean(key, keys)}')
    return keys[key]


def param_range(key: str) -> Range:
    """Valid range of a numeric leaf key (e.g. for the nodes' parameter descriptors)."""
    cls = SECTIONS[section_of(key)]
    valid = next(f.metadata['range'] for f in fields(cls) if f.name == key)
    if valid is None:
        raise VehicleParamsError(f'vehicle parameter {key!r} is not a number')
    return valid


def _nest(leaf_values: Mapping[str, Any], source: str) -> dict[str, Any]:
    nested: dict[str, dict[str, Any]] = {}
    for key, value in leaf_values.items():
        try:
            nested.setdefault(section_of(key), {})[key] = value
        except VehicleParamsError as exc:
            raise VehicleParamsError(f'{source}: {exc}') from None
    return nested
