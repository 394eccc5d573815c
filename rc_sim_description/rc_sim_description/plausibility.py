"""Cross-field checks of the vehicle parameters: combinations that make the physics meaningless.

Each key's own range is checked by :mod:`rc_sim_description.param_schema`; the rules here relate
several keys (docs/limits.md, section "Vehicle and configuration ranges", gives the reasons):

* geometry: the centre of mass lies inside the wheelbase with a share of at least
  :data:`MIN_AXLE_LOAD_FRACTION` of the weight on each axle (the Fiala tyre divides by the
  axle load); full lock turns wider than half the track; the effective rolling radius is
  within 20 % of the wheel radius;
* mass: the chassis keeps a positive mass after the wheels and knuckles; the yaw inertia is at
  most ``m (X^2 + Y^2)`` (no point of the car is farther from its centre of mass than the
  diagonal of its footprint X by Y); the principal inertias obey the triangle inequality;
* steering: trim offset, dead band and backlash below the steering limit; the ``pd_joint`` hinge
  servo ``J_h s^3 + Kd s^2 + Kp s + Ki`` is stable (Routh-Hurwitz: Kp > 0, Kd > 0,
  Kd Kp > J_h Ki). The engine advances it with its exact transition matrix
  ``expm(A h)``, whose eigenvalues ``exp(p h)`` lie inside the unit circle at every sub-step
  ``h`` exactly when the poles ``p`` have negative real parts, so Hurwitz stability is the
  condition at the engine's sub-step;
* drive: a top speed ``max_wheel_speed * wheel_radius`` of at most :data:`MAX_TOP_SPEED` m/s;
* chassis: the stiffest lateral/yaw mode of the single-track model at the lowest speed where the
  engine uses it, ``|lambda|``, times the engine's largest sub-step
  :data:`ENGINE_MAX_SUBSTEP` stays within :data:`CHASSIS_STEP_LIMIT` (the real-axis stability
  limit of the explicit Euler step; RK4's is 2.785). Beyond it the explicit chassis step
  oscillates and diverges (a car with a far too small yaw inertia for its tyres).
* sensors: lidar range_min < range_max, resolution below the span; Pacejka E <= 1.

Errors are one line naming the file and the key the user most likely has to change.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
import math
from typing import Any

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.errors import VehicleParamsError
from rc_sim_description.param_sections import DRIVE_COMMANDS_OF_MODEL

# The checks take a rc_sim_description.params.VehicleParams; params imports this module, so the
# type is spelled here without importing it back (no import circle).
VehicleParams = Any

__all__ = [
    'CHASSIS_STEP_LIMIT',
    'ENGINE_BLEND_SPEEDS',
    'ENGINE_KINEMATIC_RELAXATION',
    'ENGINE_MAX_SUBSTEP',
    'MAX_TOP_SPEED',
    'MIN_AXLE_LOAD_FRACTION',
    'chassis_mode_rate',
    'check_vehicle',
    'problems',
]

#: The embedded engine's numerical constants these checks depend on
#: (rc_sim_engine.vehicle.integrators MAX_SUBSTEP, rc_sim_engine.vehicle.models
#: V_BLEND_LOW/V_BLEND_HIGH and KINEMATIC_RELAXATION,
#: rc_sim_engine/test/test_vehicle_ranges_engine.py holds them equal): largest internal step
#: [s], ...
ENGINE_MAX_SUBSTEP = 2.5e-3
#: ... speeds [m/s] between which the single track blends from kinematic to dynamic, ...
ENGINE_BLEND_SPEEDS = (0.5, 1.0)
#: ... time constant [s] of the kinematic relaxation.
ENGINE_KINEMATIC_RELAXATION = 0.02
#: Largest |lambda| h of the explicit chassis step (explicit Euler's real-axis limit).
CHASSIS_STEP_LIMIT = 2.0
#: Top speed limit [m/s]: the fastest RC cars reach about 100 m/s.
MAX_TOP_SPEED = 150.0
#: Least share of the weight on each axle.
MIN_AXLE_LOAD_FRACTION = 0.05



def linkage_min_slope(q: float, c: float, u_max: float) -> float:
    """Smallest slope 1 + 2 q u + 3 c u^2 of the steering linkage map over |u| <= u_max."""
    cands = [-u_max, u_max]
    if c != 0.0 and abs(q / (3.0 * c)) <= u_max:
        cands.append(-q / (3.0 * c))
    return min(1.0 + 2.0 * q * u + 3.0 * c * u * u for u in cands)


def _blend_weight(v: float) -> float:
    lo, hi = ENGINE_BLEND_SPEEDS
    s = (v - lo) / (hi - lo)
    return 0.0 if s <= 0.0 else 1.0 if s >= 1.0 else s * s * (3.0 - 2.0 * s)


def _spectral_radius(a: float, b: float, c: float, d: float) -> float:
    """Largest |eigenvalue| of [[a, b], [c, d]]."""
    half_trace = 0.5 * (a + d)
    det = a * d - b * c
    disc = half_trace * half_trace - det
    if disc >= 0.0:
        return abs(half_trace) + math.sqrt(disc)
    return math.sqrt(det)


def chassis_mode_rate(p: VehicleParams, tyre_model: str | None = None) -> tuple[float, str]:
    """(largest |lambda| [1/s], the stiffness set it comes from) of the lateral/yaw dynamics
    with the tyre law ``tyre_model`` (default: the car's ``tyres.tyre_model``).

    Linearised dynamic single track at speed v (Rajamani, *Vehicle Dynamics and Control*, 2nd
    ed., eq. 2.31) on (vy, r)::

        A = [[-(Cf + Cr)/(m v),            -v + (Cr lr - Cf lf)/(m v)],
             [(Cr lr - Cf lf)/(Iz v),      -(Cf lf^2 + Cr lr^2)/(Iz v)]]

    blended with the kinematic relaxation ``-1/tau`` by the engine's weight w(v), maximised over
    speeds from the start of the blend up; the axle stiffnesses are the linear/Fiala
    ``cornering_stiffness_*``, or for the Magic Formula its slope ``Fz B C D`` (a run that
    overrides the tyre law checks the law it runs: ``rc_sim_engine.vehicle.packed.pack_params``).
    """
    g, m = p.geometry, p.mass_properties
    length, lf = g.wheelbase, g.cg_to_front_axle
    lr = length - lf
    mass, iz = m.mass, m.yaw_inertia
    lat = p.tyres.pacejka_lateral
    slope = lat.B * lat.C * lat.D
    law = p.tyres.tyre_model if tyre_model is None else tyre_model
    sets = ({'pacejka_lateral': (mass * GRAVITY_MPS2 * lr / length * slope,
                                 mass * GRAVITY_MPS2 * lf / length * slope)}
            if law == 'pacejka' else
            {'cornering_stiffness': (p.tyres.cornering_stiffness_front,
                                     p.tyres.cornering_stiffness_rear)})
    lo, hi = ENGINE_BLEND_SPEEDS
    relax = -1.0 / ENGINE_KINEMATIC_RELAXATION
    worst, which = 0.0, 'cornering_stiffness'
    for name, (cf, cr) in sets.items():
        for k in range(97):
            v = lo + (4.0 * hi - lo) * k / 96
            w = _blend_weight(v)
            a = -(cf + cr) / (mass * v)
            b = -v + (cr * lr - cf * lf) / (mass * v)
            c = (cr * lr - cf * lf) / (iz * v)
            d = -(cf * lf * lf + cr * lr * lr) / (iz * v)
            rate = _spectral_radius(w * a + (1 - w) * relax, w * b, w * c,
                                    w * d + (1 - w) * relax)
            if rate > worst:
                worst, which = rate, name
    return worst, which


def problems(p: VehicleParams) -> Iterator[tuple[str, str]]:
    """Every (key, problem) of the cross-field rules, in the order of the module docstring."""
    g, m, st, dr, s = p.geometry, p.mass_properties, p.steering, p.drive, p.sensors
    # geometry
    lo_frac, hi_frac = MIN_AXLE_LOAD_FRACTION, 1.0 - MIN_AXLE_LOAD_FRACTION
    lo_lf, hi_lf = lo_frac * g.wheelbase, hi_frac * g.wheelbase
    if not lo_lf <= g.cg_to_front_axle <= hi_lf:
        yield ('geometry.cg_to_front_axle',
               f'must be in [{lo_frac:g}, {hi_frac:g}] * wheelbase = [{lo_lf:.4g}, '
               f'{hi_lf:.4g}] m (centre of mass inside the wheelbase, '
               f'>= {100 * lo_frac:g} % of the weight on each axle), got {g.cg_to_front_axle!r}')
    if not g.cg_height < g.chassis_ground_clearance + g.chassis_height + 1.0:
        yield 'geometry.cg_height', f'implausibly high ({g.cg_height} m)'
    if p.min_turning_radius <= 0.5 * g.track_width:
        yield ('steering.max_steering_angle', f'full lock turns tighter '
               f'(R = {p.min_turning_radius:.4g} m) than half the track width')
    r_eff = dr.effective_wheel_radius
    if r_eff is not None and not 0.8 * g.wheel_radius <= r_eff <= 1.2 * g.wheel_radius:
        yield ('drive.effective_wheel_radius',
               f'must be within 20 % of wheel_radius ({g.wheel_radius}), got {r_eff}')
    # mass
    if p.chassis_mass <= 0:
        yield ('mass_properties.mass',
               f'must exceed 4*wheel_mass + 2*steering_hinge_mass, got {m.mass}')
    length_x = max(g.chassis_length, g.wheelbase + 2.0 * g.wheel_radius)
    width_y = max(g.chassis_width, g.track_width + g.wheel_width)
    iz_max = m.mass * (length_x ** 2 + width_y ** 2)
    if m.yaw_inertia > iz_max:
        yield ('mass_properties.yaw_inertia',
               f'must be at most mass * (length^2 + width^2) = {iz_max:.4g} kg m^2 for a car of '
               f'{length_x:.3g} m by {width_y:.3g} m, got {m.yaw_inertia!r}')
    ixx, iyy, izz = p.principal_inertias
    for name, a, b, c in (('roll_inertia', ixx, iyy, izz), ('pitch_inertia', iyy, ixx, izz),
                          ('yaw_inertia', izz, ixx, iyy)):
        if a > b + c + 1e-12:
            yield (f'mass_properties.{name}',
                   f'violates the triangle inequality ({a:.6g} > {b:.6g} + {c:.6g})')
    # steering
    if abs(st.steering_offset) >= st.max_steering_angle:
        yield 'steering.steering_offset', 'magnitude must be below max_steering_angle'
    for key in ('steering_dead_band', 'steering_backlash'):
        if getattr(st, key) >= st.max_steering_angle:
            yield f'steering.{key}', 'must be below max_steering_angle'
    slope = linkage_min_slope(st.steering_linkage_quadratic, st.steering_linkage_cubic,
                              st.max_steering_angle)
    if slope <= 0.05:
        yield ('steering.steering_linkage_quadratic',
               f'with steering_linkage_cubic the linkage map u + q u^2 + c u^3 must rise over '
               f'+-max_steering_angle (its smallest slope there is {slope:.3g}, needs > 0.05)')
    if st.servo_model == 'pd_joint':
        yield from _servo_problems(p)
    # drive
    takes = DRIVE_COMMANDS_OF_MODEL[dr.drive_model]
    if dr.drive_command is not None and dr.drive_command not in takes:
        yield ('drive.drive_command',
               f'{dr.drive_command!r} is not a command of drive_model {dr.drive_model!r} (it '
               f'takes {" or ".join(takes)}; a {dr.drive_command} command needs drive_model '
               f'{_model_taking(dr.drive_command)})')
    if p.max_speed > MAX_TOP_SPEED:
        yield ('drive.max_wheel_speed',
               f'gives a top speed max_wheel_speed * wheel_radius = {p.max_speed:.4g} m/s, above '
               f'{MAX_TOP_SPEED:g} m/s (the fastest RC cars reach about 100 m/s)')
    # chassis
    rate, which = chassis_mode_rate(p)
    if rate * ENGINE_MAX_SUBSTEP > CHASSIS_STEP_LIMIT:
        key = ('tyres.pacejka_lateral' if which == 'pacejka_lateral'
               else 'mass_properties.yaw_inertia')
        yield (key, f'the stiffest lateral/yaw mode decays at {rate:.4g} 1/s at low speed, too '
               f'fast for the engine step: |lambda| h = {rate * ENGINE_MAX_SUBSTEP:.3g} > '
               f'{CHASSIS_STEP_LIMIT:g} at h = {ENGINE_MAX_SUBSTEP * 1e3:g} ms (raise yaw_inertia '
               f'or mass, or lower the tyre stiffness {which})')
    # sensors and tyres
    if not s.lidar_range_min < s.lidar_range_max:
        yield 'sensors.lidar_range_min', f'must be < lidar_range_max ({s.lidar_range_max})'
    elif s.lidar_range_resolution >= s.lidar_range_max - s.lidar_range_min:
        yield 'sensors.lidar_range_resolution', 'must be smaller than the range span'


def _servo_problems(p: VehicleParams) -> Iterator[tuple[str, str]]:
    st = p.steering
    kp, ki, kd = st.servo_p_gain, st.servo_i_gain, st.servo_d_gain
    if not kp > 0:
        yield ('steering.servo_p_gain', f'must be > 0 for servo_model pd_joint (no restoring '
               f'torque: the hinge never reaches its target), got {kp!r}')
    elif not kd > 0:
        yield ('steering.servo_d_gain', f'must be > 0 for servo_model pd_joint (an undamped '
               f'hinge oscillates for ever), got {kd!r}')
    else:
        j = p.steering_hinge_inertia
        if not ki * j < kp * kd:
            yield ('steering.servo_i_gain',
                   f'makes the pd_joint hinge servo unstable: Routh-Hurwitz needs servo_i_gain '
                   f'* J_h < servo_p_gain * servo_d_gain ({ki * j:.4g} >= {kp * kd:.4g}, '
                   f'J_h = {j:.3g} kg m^2)')


def _model_taking(command: str) -> str:
    return ' or '.join(m for m, kinds in DRIVE_COMMANDS_OF_MODEL.items() if command in kinds)


#: Measured quantities a calibration result is fitted over (a fit writes only what it fitted).
MEASURED_KEYS = ('mass', 'wheelbase', 'cg_to_front_axle', 'yaw_inertia')
_UNITS = {'mass': 'kg', 'wheelbase': 'm', 'cg_to_front_axle': 'm', 'yaw_inertia': 'kg m^2'}


def check_vehicle(p: VehicleParams, origins: Mapping[str, str] | None = None,
                  base: str = '') -> None:
    """Raise :class:`VehicleParamsError` ``<file>: <key>: <problem>`` for the first problem.

    ``origins`` (leaf key -> the file that set it; ``base`` = the full vehicle.yaml): the error
    names the file that set the key, and, when that is an override file while measured
    quantities (:data:`MEASURED_KEYS`) are still the defaults of ``base``, says so and how to
    load the measured values under it.
    """
    for key, problem in problems(p):
        leaf = key.split('.')[-1]
        if not origins or origins.get(leaf, base) == base:
            raise VehicleParamsError(f'{p.source}: {key}: {problem}')
        where = origins[leaf]
        defaults = [k for k in MEASURED_KEYS if origins.get(k, base) == base and k != leaf]
        hint = ''
        if defaults:
            values = ', '.join(f'{k} {_leaf(p, k):g} {_UNITS[k]}' for k in defaults)
            hint = (f' [{values} are the defaults of {base}: if {where} is a calibration, load '
                    f'it over the measured values it was fitted with: --params measured.yaml '
                    f'--params {where}]')
        raise VehicleParamsError(f'{where}: {key}: {problem}{hint}')


def _leaf(p: VehicleParams, key: str) -> float:
    for section in ('geometry', 'mass_properties'):
        value = getattr(getattr(p, section), key, None)
        if value is not None:
            return float(value)
    return math.nan
