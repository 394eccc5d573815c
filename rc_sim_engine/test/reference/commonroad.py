"""CommonRoad's ST and STD models (``vehiclemodels``; Althoff & Wuersching, *CommonRoad: Vehicle
Models*, 2020) with our car's parameters, integrating their OWN speed.

- ST (single track, §5 of the CommonRoad documentation): linear tyres ``Fy = mu C_S Fz alpha``
  with one C_S for both axles, small-angle slip angles, inputs steering rate and longitudinal
  acceleration. Our use: the acceleration input is 0 and ST keeps its own constant speed.
- STD (single track drift, §6): Pacejka tyres on both axles with combined slip, a spinning front
  and rear wheel ``I_w d(omega)/dt = -R Fx + T``, inputs steering rate and an acceleration that
  CommonRoad turns into the drive/brake torque ``T = m R u``. Our use: ``u = 2 tau / (m R)``
  with ``tau`` the documented speed-loop torque computed from STD's OWN rear wheel speed, all
  torque on the rear axle (``T_se = T_sb = 0``); so STD integrates its own wheel spin and speed
  from the same torque law as the engine.

Both get the steering rate from the documented hinge servo (``J_h d2(delta)/dt2 = Kp (delta* -
delta) - Kd d(delta)/dt``) integrated alongside as one extra state, so CommonRoad integrates its
own steering angle too.

Parameter mapping: CommonRoad's Magic Formula ``D sin(C atan(B k - E (B k - atan(B k))))`` with
``B = K / (C D)``, ``K = Fz p_k1``: ``p_kx1 = B C D`` (ours), ``p_ky1 = -B C D`` (CommonRoad's
slip angle is the opposite of ours), shifts and camber terms 0, and the combined-slip weights
set to 1 (``r_bx1 = r_by1 = 0``, ``r_vy1 = 0``): the engine has no combined slip.

Known model differences (tolerances in the tests are derived from them):

- STD's front wheel has the spin inertia ``I_y_w`` too (the engine's front wheels roll without
  inertia): under a longitudinal acceleration a it brakes the car by ``I_y_w a / R^2``, i.e. STD's
  speed changes are smaller by the factor ``m / (m + I_y_w / R^2)`` (2.6 % for our car);
- STD's load transfer uses the drive torque ``T / (m R)`` as acceleration, the engine
  ``Fx_r / m``: equal while the wheel does not accelerate (``I_y_w d(omega)/dt << R Fx``);
- ST linearises the slip angles and drops ``cos(delta)``: relative force errors below
  ``delta^2 / 2 + beta^2``.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from types import SimpleNamespace

import numpy as np
from scipy.integrate import solve_ivp
import vehiclemodels.vehicle_dynamics_st as _st_module
import vehiclemodels.vehicle_dynamics_std as _std_module

from .single_track import G, RefParams


def _at_gravity(module: object, name: str, g: float) -> object:
    """CommonRoad's function ``name`` with its local ``g = 9.81`` set to ``g`` (the engine and
    this reference use the standard 9.80665): the published equations unchanged otherwise,
    compiled from the installed package's own source in its own module namespace."""
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(getattr(module, name)))
    if source.count('g = 9.81') != 1:
        raise RuntimeError(f'{name}: expected one "g = 9.81" in CommonRoad\'s source')
    namespace = dict(vars(module))
    exec(compile(source.replace('g = 9.81', f'g = {g!r}'), inspect.getfile(module), 'exec'),
         namespace)
    return namespace[name]


vehicle_dynamics_st = _at_gravity(_st_module, 'vehicle_dynamics_st', G)
vehicle_dynamics_std = _at_gravity(_std_module, 'vehicle_dynamics_std', G)

FloatArray = np.ndarray
WIDE = 1e6  # "no constraint" for CommonRoad's steering and acceleration limits


def _common(p: RefParams, h_s: float) -> SimpleNamespace:
    steering = SimpleNamespace(min=-math.pi / 2, max=math.pi / 2, v_min=-WIDE, v_max=WIDE)
    longitudinal = SimpleNamespace(a_max=WIDE, v_switch=WIDE, v_min=-WIDE, v_max=WIDE)
    return SimpleNamespace(a=p.lf, b=p.lr, m=p.m, I_z=p.iz, h_s=h_s, steering=steering,
                           longitudinal=longitudinal)


def st_parameters(p: RefParams, c_s: float) -> SimpleNamespace:
    """ST parameters: mu = friction mu2, one normalised cornering stiffness ``c_s`` [1/rad]."""
    cr = _common(p, 0.0)
    cr.tire = SimpleNamespace(p_dy1=p.mu_lat, p_ky1=-c_s * p.mu_lat)
    return cr


def std_parameters(p: RefParams, load_transfer: bool) -> SimpleNamespace:
    """STD parameters: our Magic Formulas, rear-wheel drive and brakes, wheel inertia 2 J_w."""
    b_x, c_x, d_x, e_x = p.longitudinal
    b_y, c_y, d_y, e_y = p.lateral
    tire = SimpleNamespace(
        p_cx1=c_x, p_dx1=d_x, p_dx3=0.0, p_ex1=e_x, p_kx1=b_x * c_x * d_x, p_hx1=0.0, p_vx1=0.0,
        r_bx1=0.0, r_bx2=0.0, r_cx1=1.0, r_ex1=0.0, r_hx1=0.0,
        p_cy1=c_y, p_dy1=d_y, p_dy3=0.0, p_ey1=e_y, p_ky1=-b_y * c_y * d_y, p_hy1=0.0,
        p_hy3=0.0, p_vy1=0.0, p_vy3=0.0, r_by1=0.0, r_by2=0.0, r_by3=0.0, r_cy1=1.0,
        r_ey1=0.0, r_hy1=0.0, r_vy1=0.0, r_vy3=0.0, r_vy4=0.0, r_vy5=0.0, r_vy6=0.0)
    cr = _common(p, p.h if load_transfer else 0.0)
    cr.tire = tire
    cr.R_w = p.radius
    cr.I_y_w = 2 * p.j_wheel  # the two rear wheels, lumped as in the engine
    cr.T_sb = 0.0
    cr.T_se = 0.0
    return cr


@dataclass(frozen=True)
class CommonRoadRun:
    """CommonRoad histories at ``t``: CG position, steering, speed |v|, yaw, yaw rate, sideslip."""

    t: FloatArray
    x: FloatArray
    y: FloatArray
    steer: FloatArray
    speed: FloatArray
    yaw: FloatArray
    yaw_rate: FloatArray
    sideslip: FloatArray
    rear_wheel_speed: FloatArray | None = None


def _servo(p: RefParams, delta: float, rate: float, delta_cmd: float) -> float:
    target = min(max(p.steering_gain * delta_cmd + p.steering_offset, -p.max_steering_angle),
                 p.max_steering_angle)
    if p.servo_ki != 0.0:
        raise ValueError('the CommonRoad runs model a PD servo (servo_ki = 0)')
    return (p.servo_kp * (target - delta) - p.servo_kd * rate) / p.j_hinge


def simulate_st(p: RefParams, c_s: float, speed: float, delta_cmd: object,
                t_out: FloatArray) -> CommonRoadRun:
    """ST at constant speed (acceleration input 0), steering through the servo."""
    cr = st_parameters(p, c_s)

    def fun(t: float, s: FloatArray) -> list[float]:
        x, rate = list(s[:7]), s[7]
        f = vehicle_dynamics_st(x, [rate, 0.0], cr)
        return [*f, _servo(p, s[2], rate, delta_cmd(t))]  # type: ignore[operator]

    s0 = [p.lr, 0.0, 0.0, speed, 0.0, 0.0, 0.0, 0.0]
    sol = solve_ivp(fun, (t_out[0], t_out[-1]), s0, method='Radau', t_eval=t_out, rtol=1e-9,
                    atol=1e-10)
    if not sol.success:
        raise RuntimeError(sol.message)
    y = sol.y
    return CommonRoadRun(t=sol.t, x=y[0], y=y[1], steer=y[2], speed=y[3], yaw=y[4],
                         yaw_rate=y[5], sideslip=y[6])


def simulate_std(p: RefParams, load_transfer: bool, speed: float, delta_cmd: object,
                 omega_cmd: object, t_out: FloatArray) -> CommonRoadRun:
    """STD driven by the speed-loop torque of its own rear wheel, steering through the servo."""
    cr = std_parameters(p, load_transfer)
    if p.wheel_ki != 0.0:
        raise ValueError('the CommonRoad runs model a proportional speed loop (wheel_ki = 0)')

    def fun(t: float, s: FloatArray) -> list[float]:
        x, rate = list(s[:9]), s[9]
        target = min(max(omega_cmd(t), -p.max_wheel_speed), p.max_wheel_speed)  # type: ignore[operator]
        tau = min(max(p.wheel_kp * (target - s[8]), -p.wheel_max_torque), p.wheel_max_torque)
        f = vehicle_dynamics_std(x, [rate, 2 * tau / (p.m * p.radius)], cr)
        return [*f, _servo(p, s[2], rate, delta_cmd(t))]  # type: ignore[operator]

    w0 = speed / p.radius
    s0 = [p.lr, 0.0, 0.0, speed, 0.0, 0.0, 0.0, w0, w0, 0.0]
    sol = solve_ivp(fun, (t_out[0], t_out[-1]), s0, method='Radau', t_eval=t_out, rtol=1e-8,
                    atol=1e-9)
    if not sol.success:
        raise RuntimeError(sol.message)
    y = sol.y
    return CommonRoadRun(t=sol.t, x=y[0], y=y[1], steer=y[2], speed=y[3], yaw=y[4],
                         yaw_rate=y[5], sideslip=y[6], rear_wheel_speed=y[8])
