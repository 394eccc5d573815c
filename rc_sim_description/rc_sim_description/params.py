"""Typed, validated vehicle parameters from ``config/vehicle.yaml`` (the one source of truth).

The YAML has one mapping per section (``geometry``, ``mass_properties``, ...); each section maps
onto a frozen dataclass below. Every field carries its unit, meaning and valid range in its
metadata (:mod:`rc_sim_description.param_schema`), so the loader, the documentation
(``docs/vehicle_parameters.md``, ``docs/limits.md``) and the override writer share one schema.
Values outside the ranges, and combinations that make the physics meaningless (cross-field
checks of :mod:`rc_sim_description.plausibility`), are refused at load.
Leaf key names are unique across sections, so a parameter can be named by its leaf alone
(``wheelbase``, ``steering_gain``) on command lines and in calibration results.

Errors are one line: ``<file>: <section>.<key>: <problem>`` (:class:`VehicleParamsError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
import math
import os
from pathlib import Path
import sys
from typing import Any, TypeVar

import yaml

from rc_sim_description.errors import VehicleParamsError
from rc_sim_description.param_schema import Range, one_of, unit_vector3
from rc_sim_description.param_schema import param as _p
from rc_sim_description.paths import share_path
from rc_sim_description.plausibility import check_vehicle
from rc_sim_description.yamlio import did_you_mean, number_hint, read_yaml

__all__ = [
    'DriveParams',
    'FrictionParams',
    'GeometryParams',
    'MassParams',
    'PacejkaCoefficients',
    'SensorParams',
    'SteeringParams',
    'TimingParams',
    'TyreParams',
    'VehicleParams',
    'default_vehicle_yaml',
    'dump_override',
    'leaf_keys',
    'load_vehicle_params',
    'param_range',
    'section_of',
]

TYRE_MODELS = ('linear', 'fiala', 'pacejka')
#: Steering servo models (``steering.servo_model``): the gz JointPositionController PID on the
#: hinge inertia, a first-order lag, a second-order (natural frequency, damping) response.
SERVO_MODELS = ('pd_joint', 'first_order', 'second_order')
#: Rear drive models (``drive.drive_model``): the gz JointController wheel PID, a speed-loop ESC
#: (first-order wheel-speed lag with acceleration/braking limits), an ESC + DC motor (duty).
DRIVE_MODELS = ('pd_joint', 'first_order', 'throttle')

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
        '(speed-loop ESC: first-order wheel-speed lag with acceleration and braking limits) or '
        'throttle (ESC + DC motor driven by a duty in [-1, 1]).', None, one_of(DRIVE_MODELS))
    effective_wheel_radius: float | None = _p(
        'm', 'Effective rolling radius R (speed = R omega when rolling without slip); null: '
        'wheel_radius. Engine slip and kinematics and the gz collision cylinders use it; '
        'within 20 % of wheel_radius.', R(0.0024, 0.6), nullable=True)
    drive_time_constant: float = _p(
        's', 'first_order drive: time constant of d(omega)/dt = (omega* - omega) / tau.',
        R(0.005, 5.0))
    max_acceleration: float = _p(
        'm/s^2', 'first_order drive: largest rolling acceleration R d(omega)/dt while the wheel '
        'speeds up.', R(0.1, 100.0))
    max_deceleration: float = _p(
        'm/s^2', 'first_order drive: largest rolling deceleration while the wheel slows down '
        '(braking).', R(0.1, 100.0))
    motor_force_gain: float = _p(
        'N', 'throttle drive: C_m1, force per unit duty at standstill.', R(0.0, 1e4))
    motor_back_emf_gain: float = _p(
        'N s/m', 'throttle drive: C_m2, force lost per unit duty and unit wheel speed R omega '
        '(back-EMF).', R(0.0, 1e3))
    rolling_resistance: float = _p(
        'N', 'throttle drive: C_r0, Coulomb rolling and drivetrain resistance (holds a stopped '
        'car; never pushes it).', R(0.0, 1e3))
    viscous_resistance: float = _p('N s/m', 'throttle drive: C_r1, resistance per unit speed.',
                                   R(0.0, 1e3))
    drag_coefficient: float = _p(
        'N s^2/m^2', 'throttle drive: C_r2, aerodynamic drag per unit speed squared.',
        R(0.0, 10.0))
    throttle_dead_band: float = _p(
        '-', 'throttle drive: duty d0 the ESC ignores; d_eff = sign(d) max(abs(d) - d0, 0).',
        R(0.0, 0.9))
    throttle_time_constant: float = _p(
        's', 'throttle drive: first-order lag of the duty (ESC and motor current); 0: none.',
        R(0.0, 2.0))


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


@dataclass(frozen=True)
class VehicleParams:
    """The whole vehicle; ``source`` names the file(s) it came from."""

    geometry: GeometryParams
    mass_properties: MassParams
    friction: FrictionParams
    steering: SteeringParams
    drive: DriveParams
    timing: TimingParams
    tyres: TyreParams
    sensors: SensorParams
    source: str = 'vehicle.yaml'

    # --- derived quantities (one formula each, used by every package)
    @property
    def min_turning_radius(self) -> float:
        """Rear-axle turning radius at full lock, R_min = L / tan(delta_max) [m]."""
        return self.geometry.wheelbase / math.tan(self.steering.max_steering_angle)

    @property
    def max_wheel_steering_angle(self) -> float:
        """Inner wheel angle at full lock, atan(L / (R_min - W/2)) (Ackermann geometry) [rad].

        The hinge joints of the URDF need this limit, not the bicycle angle max_steering_angle.
        """
        t = math.tan(self.steering.max_steering_angle)
        a = self.geometry.track_width / (2.0 * self.geometry.wheelbase)
        return math.atan(t / (1.0 - a * t))

    @property
    def max_wheel_steering_rate(self) -> float:
        """Inner hinge rate at full lock when the bicycle angle moves at max_steering_rate [rad/s].

        With t = tan(delta) and a = W / (2L):
        d(delta_in)/d(delta) = (1 + t^2) / ((1 - a t)^2 + t^2), largest at full lock.
        """
        t = math.tan(self.steering.max_steering_angle)
        a = self.geometry.track_width / (2.0 * self.geometry.wheelbase)
        return self.steering.max_steering_rate * (1.0 + t * t) / ((1.0 - a * t) ** 2 + t * t)

    @property
    def effective_wheel_radius(self) -> float:
        """Rolling radius R of the engine and the gz collision cylinders [m]:
        drive.effective_wheel_radius, or geometry.wheel_radius when that is null."""
        r = self.drive.effective_wheel_radius
        return self.geometry.wheel_radius if r is None else r

    @property
    def normalised_steering_gains(self) -> tuple[float, float]:
        """(left, right) gains of the normalised steering map [rad]; a null gain is
        max_steering_angle."""
        s = self.steering
        left = s.max_steering_angle if s.steering_gain_left is None else s.steering_gain_left
        right = s.max_steering_angle if s.steering_gain_right is None else s.steering_gain_right
        return left, right

    @property
    def max_speed(self) -> float:
        """Speed at the wheel speed limit, v_max = omega_max * r [m/s]."""
        return self.drive.max_wheel_speed * self.geometry.wheel_radius

    @property
    def chassis_mass(self) -> float:
        """Mass of the chassis link: m - 4 m_wheel - 2 m_hinge [kg]."""
        m = self.mass_properties
        return m.mass - 4.0 * m.wheel_mass - 2.0 * m.steering_hinge_mass

    @property
    def principal_inertias(self) -> tuple[float, float, float]:
        """(Ixx, Iyy, Izz) of the whole vehicle about its centre of mass [kg m^2].

        Missing roll/pitch inertias come from the chassis box (l, w, h) with its length and
        width scaled by s so that m s^2 (l^2 + w^2) / 12 equals yaw_inertia:
        Ixx = m (s^2 w^2 + h^2) / 12, Iyy = m (s^2 l^2 + h^2) / 12; a real box, so the triple is
        physically valid.
        """
        return _principal_inertias(self.geometry, self.mass_properties)

    @property
    def steering_hinge_inertia(self) -> float:
        """Inertia J_h of one steered wheel assembly about the vertical hinge axis [kg m^2].

        ``J_h = m_w (3 r^2 + w^2) / 12 + (2/5) m_k (w/2)^2``: the front wheel (solid cylinder of
        radius r, width w, about a diameter through its centre, which lies on the hinge axis)
        plus the knuckle as a solid sphere of diameter w. Default car: 8.5e-5 kg m^2.
        """
        g, m = self.geometry, self.mass_properties
        r, w = g.wheel_radius, g.wheel_width
        return (m.wheel_mass * (3.0 * r * r + w * w) / 12.0
                + 0.4 * m.steering_hinge_mass * (0.5 * w) ** 2)

    @property
    def chassis_link_inertia(self) -> tuple[float, float, float]:
        """(Ixx, Iyy, Izz) of the URDF chassis link: vehicle inertias * chassis_mass / mass."""
        k = self.chassis_mass / self.mass_properties.mass
        ixx, iyy, izz = self.principal_inertias
        return ixx * k, iyy * k, izz * k

    def to_dict(self) -> dict[str, Any]:
        """Nested plain-data mapping with the YAML layout."""
        return {f.name: _section_to_dict(getattr(self, f.name)) for f in fields(self)
                if f.name != 'source'}

    def leaf_values(self) -> dict[str, Any]:
        """Flat mapping leaf key -> value (leaf names are unique across sections)."""
        out: dict[str, Any] = {}
        for section in self.to_dict().values():
            out.update(section)
        return out

    def with_values(self, **leaf_values: Any) -> VehicleParams:
        """Copy with some leaf values replaced (validated like a file override)."""
        return _build(_merge(self.to_dict(), _nest(leaf_values, f'{self.source} (override)')),
                      f'{self.source} (override)')


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


def _principal_inertias(g: GeometryParams, m: MassParams) -> tuple[float, float, float]:
    izz = m.yaw_inertia
    box_izz = m.mass * (g.chassis_length ** 2 + g.chassis_width ** 2) / 12.0
    s2 = izz / box_izz
    ixx = m.roll_inertia if m.roll_inertia is not None else (
        m.mass * (s2 * g.chassis_width ** 2 + g.chassis_height ** 2) / 12.0)
    iyy = m.pitch_inertia if m.pitch_inertia is not None else (
        m.mass * (s2 * g.chassis_length ** 2 + g.chassis_height ** 2) / 12.0)
    return ixx, iyy, izz


def _section_to_dict(section: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(section):
        v = getattr(section, f.name)
        if isinstance(v, PacejkaCoefficients):
            v = {k.name: getattr(v, k.name) for k in fields(v)}
        elif isinstance(v, tuple):
            v = list(v)
        out[f.name] = v
    return out


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


# --------------------------------------------------------------------------- loading
def default_vehicle_yaml() -> Path:
    """Installed (or source-tree) ``config/vehicle.yaml``; ``RC_SIM_VEHICLE_YAML`` overrides it."""
    env = os.environ.get('RC_SIM_VEHICLE_YAML')
    if env:
        return Path(env)
    return share_path('config/vehicle.yaml')


def _read_yaml(path: Path) -> dict[str, Any]:
    data = read_yaml(path, VehicleParamsError)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise VehicleParamsError(f'{path}: top level must be a mapping of sections, '
                                 f'got {type(data).__name__}')
    return data


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _check_known(data: Mapping[str, Any], source: str, *, require_all: bool) -> None:
    for section, body in data.items():
        if section not in SECTIONS:
            raise VehicleParamsError(f'{source}: unknown section {section!r}'
                                     f'{did_you_mean(str(section), SECTIONS)}')
        if not isinstance(body, dict):
            raise VehicleParamsError(f'{source}: {section}: must be a mapping, '
                                     f'got {type(body).__name__}')
        names = {f.name for f in fields(SECTIONS[section])}
        for key in body:
            if key not in names:
                where = leaf_keys().get(str(key))
                hint = (f' (it belongs in section {where!r})' if where
                        else did_you_mean(str(key), names))
                raise VehicleParamsError(f'{source}: {section}.{key}: unknown key{hint}')
    if require_all:
        for section in SECTIONS:
            if section not in data:
                raise VehicleParamsError(f'{source}: {section}: missing section')


_T = TypeVar('_T')


def _convert(value: Any, annotation: str, where: str) -> Any:
    ann = annotation.replace(' ', '')
    nullable = ann.endswith('|None')
    base = ann.removesuffix('|None')
    if value is None:
        if nullable:
            return None
        raise VehicleParamsError(f'{where}: must be a number, got null')
    if base == 'float':
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise VehicleParamsError(f'{where}: must be a number, got {type(value).__name__} '
                                     f'{value!r}{number_hint(value)}')
        if isinstance(value, int) and abs(value) > sys.float_info.max:
            raise VehicleParamsError(f'{where}: must be a number of magnitude below 1.8e308, '
                                     f'got an integer of {len(str(abs(value)))} digits')
        if not math.isfinite(value):
            raise VehicleParamsError(f'{where}: must be finite, got {value!r}')
        return float(value)
    if base == 'int':
        if isinstance(value, bool) or not isinstance(value, int):
            raise VehicleParamsError(f'{where}: must be an integer, got {type(value).__name__} '
                                     f'{value!r}')
        return value
    if base == 'str':
        if not isinstance(value, str):
            raise VehicleParamsError(f'{where}: must be a string, got {type(value).__name__}')
        return value
    if base.startswith('tuple['):
        if not isinstance(value, (list, tuple)):
            raise VehicleParamsError(f'{where}: must be a list of numbers, '
                                     f'got {type(value).__name__}')
        return tuple(_convert(v, 'float', f'{where}[{i}]') for i, v in enumerate(value))
    if base == 'PacejkaCoefficients':
        if not isinstance(value, dict):
            raise VehicleParamsError(f'{where}: must be a mapping with keys B, C, D, E')
        return _build_section(PacejkaCoefficients, value, where)
    raise AssertionError(f'unsupported annotation {annotation}')  # pragma: no cover


def _field_problem(meta: Mapping[str, Any], value: Any) -> str | None:
    """Range (of a number, or of each number of a list) then the extra check of one field."""
    valid: Range | None = meta.get('range')
    if valid is not None:
        for i, v in enumerate(value if isinstance(value, tuple) else (value,)):
            if isinstance(v, (int, float)) and not valid.contains(v):
                where = f'[{i}]: ' if isinstance(value, tuple) else ''
                return f'{where}{valid.problem(v, meta.get("unit", ""))}'
    check = meta.get('check')
    return check(value) if check is not None else None


def _build_section(cls: type[_T], body: Mapping[str, Any], where: str) -> _T:
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    for key in body:
        if key not in names:
            raise VehicleParamsError(f'{where}.{key}: unknown key{did_you_mean(str(key), names)}')
    kwargs: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        key_where = f'{where}.{f.name}'
        if f.name not in body:
            raise VehicleParamsError(f'{key_where}: missing key')
        value = _convert(body[f.name], str(f.type), key_where)
        if value is not None:
            problem = _field_problem(f.metadata, value)
            if problem:
                raise VehicleParamsError(f'{key_where}: {problem}')
        kwargs[f.name] = value
    return cls(**kwargs)


def _build(data: Mapping[str, Any], source: str) -> VehicleParams:
    _check_known(data, source, require_all=True)
    sections: dict[str, Any] = {name: _build_section(cls, data[name], f'{source}: {name}')
                for name, cls in SECTIONS.items()}
    params = VehicleParams(source=source, **sections)
    check_vehicle(params)
    return params


def load_vehicle_params(path: str | os.PathLike[str] | None = None,
                        overrides: Iterable[str | os.PathLike[str]] = ()) -> VehicleParams:
    """Load and validate vehicle parameters.

    Args:
        path: full vehicle.yaml (default: the installed one, see :func:`default_vehicle_yaml`).
        overrides: partial YAML files with the same sections, merged in order over ``path``.

    Raises:
        VehicleParamsError: one line naming the file and the key.
    """
    base = Path(path) if path is not None else default_vehicle_yaml()
    data = _read_yaml(base)
    source = str(base)
    _check_known(data, source, require_all=True)
    for over in overrides:
        over_path = Path(over)
        over_data = _read_yaml(over_path)
        _check_known(over_data, str(over_path), require_all=False)
        # Validate each override value in its own file's name before merging.
        for section, body in over_data.items():
            merged = _merge(data[section], body)
            _build_section(SECTIONS[section], merged, f'{over_path}: {section}')
        data = _merge(data, over_data)
        source = f'{source} + {over_path}'
    return _build(data, source)


def dump_override(values: Mapping[str, Any], path: str | os.PathLike[str],
                  header: str = '') -> None:
    """Write a partial vehicle.yaml holding only ``values`` (leaf key -> value), atomically.

    ``header`` lines are written as YAML comments on top (e.g. calibration metrics).
    The file loads back through :func:`load_vehicle_params` ``overrides`` and the xacro
    ``params_file`` argument.
    """
    from rc_sim_description.atomic import atomic_write_text

    nested = _nest(values, str(path))
    plain = {s: {k: (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and
                     k != 'lidar_samples' else v) for k, v in body.items()}
             for s, body in nested.items()}
    comment = ''.join(f'# {line}\n' if line else '#\n' for line in header.splitlines())
    atomic_write_text(path, comment + yaml.safe_dump(plain, sort_keys=False))
