"""Reference car ``awd_relax``: single track, all-wheel drive, tyres with relaxation length.

Structure (mocap body frame offset in x and y; commands /steering_angle + /rear_wheel_speed or
/cmd_vel):

* Servo: transport delay T, then a rate-limited servo on the horn angle u (bicycle units),
  du/dt = rho tanh((u_t - u) / (rho tau)) (proportional with time constant tau for small errors,
  slewing at rho for large ones), u_t = g delta_cmd + trim; an asymmetric, softening steering
  linkage delta = u + q u^2 + c u^3 (four-bar linkages are not symmetric when the servo horn is
  not centred; e.g. Milliken & Milliken 1995 on steering geometry), clipped at +-delta_max.
* Drive: four-wheel drive through a locked centre (spool): all wheels turn at omega; the ESC is a
  first-order wheel-speed lag whose acceleration limit falls linearly with speed (DC-motor torque
  line), a_acc(v) = a_0 (1 - omega r_eff / v_nl), and a braking limit.
* Tyres: Magic Formula per axle, lateral on the transient slip angle of a first-order
  relaxation-length model (Pacejka 2012 ch. 7-8): sigma d(alpha')/dt + |v_x| alpha' = -v_y in
  the wheel frame, |v_x| regularised as sqrt(v_x^2 + 0.1^2) (low-speed damping); load-sensitive
  cornering stiffness; longitudinal MF on the slip ratio of each axle (the front and rear
  wheels roll on paths of different length in a turn: the spool makes them fight); friction
  circle per axle.
* Loads: quasi-static longitudinal load transfer (Rajamani 2012 ch. 4), lagged.
* Body: nonlinear single track with front-axle drive force turned by delta (Rajamani 2012 ch. 3).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from .base import GRAVITY, RefCar
from .integrate import Deriv
from .tyres import friction_circle, load_sensitive_stiffness, magic_formula

__all__ = ['AwdRelaxCar']

V_EPS_SLIP = 0.3   # m/s, slip-ratio denominator floor
V_DAMP = 0.1       # m/s, low-speed regularisation of |v_x| in the relaxation equation
V_ROLL = 0.05      # m/s


class AwdRelaxCar(RefCar):
    """Single track + relaxation-length MF tyres + AWD spool ESC + rate-limited servo linkage."""

    name: ClassVar[str] = 'awd_relax'
    default_interface: ClassVar[str] = 'steering_wheel'

    def linkage(self, u: np.ndarray | float) -> np.ndarray:
        """Bicycle steering angle [rad] for servo horn angle ``u`` (bicycle units)."""
        q, c = self.params['linkage_quadratic'], self.params['linkage_cubic']
        u = np.asarray(u, dtype=float)
        return np.clip(u + q * u * u + c * u ** 3, -self.delta_max, self.delta_max)

    def _make_deriv(self) -> Deriv:
        p = self.params
        m, Iz, L, lf, lr, h = self.m, self.Iz, self.L, self.lf, self.lr, self.h
        mu, r_eff, dmax, g = self.mu, self.r_eff, self.delta_max, GRAVITY
        gain, trim = p['steering_gain'], p['steering_trim']
        tau_s, rho = p['servo_time_constant'], p['servo_max_rate']
        q, c3 = p['linkage_quadratic'], p['linkage_cubic']
        tau_e, v_nl = p['esc_time_constant'], p['no_load_speed']
        acc0, brk = p['esc_max_accel'] / r_eff, p['esc_max_brake'] / r_eff
        sig_f, sig_r = p['relaxation_length_front'], p['relaxation_length_rear']
        eps, cy, cx, ck = (p['load_sensitivity'], p['mf_shape_lateral'], p['mf_shape_long'],
                           p['c_kappa'])
        caf, car_ = p['c_alpha_front'], p['c_alpha_front'] * p['c_alpha_ratio']
        crr, cd, tau_z = p['rolling_resistance'], p['drag'], p['suspension_lag']
        fzf0, fzr0 = self.fz_front, self.fz_rear
        tanh, cos, sin, sqrt = math.tanh, math.cos, math.sin, math.sqrt
        vd2 = V_DAMP * V_DAMP

        def deriv(x: list[float], u: tuple[float, ...]) -> list[float]:
            _, _, yaw, vx, vy, r, horn, omega, alf, alr, axf = x
            target = min(max(gain * u[0] + trim, -dmax), dmax)
            dhorn = rho * tanh((target - horn) / (rho * tau_s))
            delta = min(max(horn + q * horn * horn + c3 * horn ** 3, -dmax), dmax)
            e = (u[1] - omega) / tau_e
            if e > 0.0:
                domega = min(e, max(acc0 * (1.0 - omega * r_eff / v_nl), 0.0))
            else:
                domega = max(e, -brk)
            fzf = max(m * (g * lr - h * axf) / L, 0.0)
            fzr = max(m * (g * lf + h * axf) / L, 0.0)
            cdl, sdl = cos(delta), sin(delta)
            vyf_b = vy + lf * r
            vxw_f = vx * cdl + vyf_b * sdl
            vyw_f = -vx * sdl + vyf_b * cdl
            vxw_r, vyw_r = vx, vy - lr * r
            dalf = (-vyw_f - sqrt(vxw_f * vxw_f + vd2) * alf) / sig_f
            dalr = (-vyw_r - sqrt(vxw_r * vxw_r + vd2) * alr) / sig_r
            fyf = magic_formula(alf, load_sensitive_stiffness(caf, fzf, fzf0, eps), cy,
                                mu * fzf, 0.0)
            fyr = magic_formula(alr, load_sensitive_stiffness(car_, fzr, fzr0, eps), cy,
                                mu * fzr, 0.0)
            wr = omega * r_eff
            fxf = magic_formula((wr - vxw_f) / max(abs(vxw_f), V_EPS_SLIP), ck * fzf, cx,
                                mu * fzf, 0.0)
            fxr = magic_formula((wr - vxw_r) / max(abs(vxw_r), V_EPS_SLIP), ck * fzr, cx,
                                mu * fzr, 0.0)
            fxf, fyf = friction_circle(fxf, fyf, mu * fzf)
            fxr, fyr = friction_circle(fxr, fyr, mu * fzr)
            roll = crr * tanh(vx / V_ROLL)
            fxf -= roll * fzf
            fxr -= roll * fzr
            fx = fxr + fxf * cdl - fyf * sdl - cd * vx * abs(vx)
            fy = fyr + fyf * cdl + fxf * sdl
            mz = lf * (fyf * cdl + fxf * sdl) - lr * fyr
            cyaw, syaw = cos(yaw), sin(yaw)
            return [vx * cyaw - vy * syaw, vx * syaw + vy * cyaw, r, fx / m + vy * r,
                    fy / m - vx * r, mz / Iz, dhorn, domega, dalf, dalr, (fx / m - axf) / tau_z]
        return deriv

    def known_layout(self) -> list[str]:
        """A four-wheel-drive car with a locked centre: its team knows it."""
        return ['drive:', '  driven_axles: both_locked']

    def _initial_state(self, x: float, y: float, yaw: float) -> list[float]:
        return [x + self.lr * math.cos(yaw), y + self.lr * math.sin(yaw), yaw,
                0.0, 0.0, 0.0, self.params['steering_trim'], 0.0, 0.0, 0.0, 0.0]

    def _extra_outputs(self, X: np.ndarray, Xdot: np.ndarray) -> dict[str, np.ndarray]:
        return {'delta': self.linkage(X[:, 6]), 'servo_horn': X[:, 6],
                'wheel_speed_left': X[:, 7], 'wheel_speed_right': X[:, 7]}

    def steady_steering(self, command: np.ndarray) -> np.ndarray:
        """delta = linkage(clip(g delta_cmd + trim)): the steady servo has no error."""
        p = self.params
        target = np.clip(p['steering_gain'] * np.asarray(command, dtype=float)
                         + p['steering_trim'], -self.delta_max, self.delta_max)
        return self.linkage(target)

    def axle_cornering_stiffness(self) -> tuple[float, float]:
        p = self.params
        return (p['c_alpha_front'] * self.fz_front,
                p['c_alpha_front'] * p['c_alpha_ratio'] * self.fz_rear)

    def _truth_extra(self) -> dict[str, Any]:
        p = self.params
        slope0 = p['steering_gain'] * (1 + 2 * p['linkage_quadratic'] * p['steering_trim']
                                       + 3 * p['linkage_cubic'] * p['steering_trim'] ** 2)
        return {
            'structure': 'single track, all-wheel drive (spool), Magic Formula tyres with '
                         'relaxation length and longitudinal load transfer, speed-dependent '
                         'ESC limit, delay + rate-limited servo with an asymmetric nonlinear '
                         'linkage, mocap offset',
            'steering_servo': {'model': 'rate_limited', 'time_constant': p['servo_time_constant'],
                               'max_rate': p['servo_max_rate'],
                               'linkage_quadratic': p['linkage_quadratic'],
                               'linkage_cubic': p['linkage_cubic'],
                               'firmware_gain': p['steering_gain'],
                               'firmware_trim': p['steering_trim']},
            'max_steering_rate': p['servo_max_rate'],
            'steering_gain_at_zero': slope0,
            'steering_offset_at_zero': float(self.steady_steering(np.array([0.0]))[0]),
            'drive': {'model': 'esc_first_order_awd', 'time_constant': p['esc_time_constant'],
                      'max_accel': p['esc_max_accel'], 'max_brake': p['esc_max_brake'],
                      'no_load_speed': p['no_load_speed']},
            'tyres': {'model': 'magic_formula_relaxation', 'c_alpha_front': p['c_alpha_front'],
                      'c_alpha_rear': p['c_alpha_front'] * p['c_alpha_ratio'],
                      'load_sensitivity': p['load_sensitivity'], 'C': p['mf_shape_lateral'],
                      'C_long': p['mf_shape_long'], 'c_kappa': p['c_kappa'],
                      'relaxation_length_front': p['relaxation_length_front'],
                      'relaxation_length_rear': p['relaxation_length_rear'],
                      'rolling_resistance': p['rolling_resistance'], 'drag': p['drag'],
                      'suspension_lag': p['suspension_lag']},
        }
