"""Reference car ``esc_fiala``: single track, Fiala tyres with longitudinal load transfer.

Structure (pose at the rear-axle centre; commands /steering_angle + /rear_wheel_speed or /cmd_vel):

* Servo: transport delay T, then first-order lag with slew limit on the bicycle angle,
  d(delta)/dt = clip((delta_t - delta) / tau_s, -rho, rho), delta_t = clip(g delta_cmd + trim,
  +-delta_max) (first-order actuator with rate saturation; RC servo data sheets give the
  slew as s/60 deg).
* Drive: ESC speed loop as a first-order lag of the rear wheel speed with acceleration and
  braking limits, d(omega)/dt = clip((omega_cmd - omega) / tau_e, -a_brake / r_eff,
  a_acc / r_eff); omega_cmd = (delayed) /rear_wheel_speed in rad/s of the nominal radius, the wheel
  rolls on r_eff.
* Tyres: Fiala brush model per axle with load-proportional cornering stiffness C = c_alpha Fz
  (F1TENTH-style C = C_S mu Fz, O'Kelly et al. 2020); driven rear axle: slip ratio
  kappa = (omega r_eff - vx) / max(|vx|, 0.3 m/s), Fx = mu Fz tanh(c_kappa kappa / mu) (a
  saturating brush-like law), friction circle; rolling resistance c_rr Fz; drag c_d vx^2.
* Loads: Fz_f = m (g lr - h a_x) / L, Fz_r = m (g lf + h a_x) / L with a_x lagged by the
  suspension time constant (quasi-static longitudinal load transfer, Rajamani 2012 ch. 4).
* Body: nonlinear single track (Rajamani 2012 sec. 2.3 / ch. 3):
  m (dvx - vy r) = Fxr + Fxf cos(d) - Fyf sin(d) - F_drag,
  m (dvy + vx r) = Fyr + Fyf cos(d) + Fxf sin(d), Iz dr = lf (Fyf cos(d) + Fxf sin(d)) - lr Fyr.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from .base import GRAVITY, KIN_RELAX, RefCar, blend_weight
from .integrate import Deriv
from .tyres import fiala_lateral, friction_circle

__all__ = ['EscFialaCar']

V_EPS_SLIP = 0.3   # m/s, slip-ratio denominator floor
V_EPS_ALPHA = 0.05  # m/s, slip-angle denominator floor
V_ROLL = 0.05      # m/s, tanh width of the rolling resistance sign


class EscFialaCar(RefCar):
    """Single track + Fiala tyres + first-order ESC + first-order slew-limited servo."""

    name: ClassVar[str] = 'esc_fiala'
    default_interface: ClassVar[str] = 'steering_wheel'

    def _make_deriv(self) -> Deriv:
        p = self.params
        m, Iz, L, lf, lr, h = self.m, self.Iz, self.L, self.lf, self.lr, self.h
        mu, r_eff, dmax = self.mu, self.r_eff, self.delta_max
        gain, trim = p['steering_gain'], p['steering_trim']
        tau_s, rho = p['servo_time_constant'], p['servo_max_rate']
        tau_e = p['esc_time_constant']
        acc_max, brk_max = p['esc_max_accel'] / r_eff, p['esc_max_brake'] / r_eff
        caf, car_ = p['c_alpha_front'], p['c_alpha_front'] * p['c_alpha_ratio']
        ck, crr, cd, tau_z = p['c_kappa'], p['rolling_resistance'], p['drag'], p['suspension_lag']
        g = GRAVITY
        atan2, tanh, cos, sin, tan = math.atan2, math.tanh, math.cos, math.sin, math.tan

        def deriv(x: list[float], u: tuple[float, ...]) -> list[float]:
            _, _, yaw, vx, vy, r, delta, omega, axf = x
            target = min(max(gain * u[0] + trim, -dmax), dmax)
            ddelta = min(max((target - delta) / tau_s, -rho), rho)
            e = (u[1] - omega) / tau_e
            domega = min(e, acc_max) if e > 0.0 else max(e, -brk_max)
            fzf = max(m * (g * lr - h * axf) / L, 0.0)
            fzr = max(m * (g * lf + h * axf) / L, 0.0)
            vxs = max(vx, V_EPS_ALPHA)
            alpha_f = delta - atan2(vy + lf * r, vxs)
            alpha_r = -atan2(vy - lr * r, vxs)
            fyf = fiala_lateral(alpha_f, caf * fzf, mu * fzf)
            fyr = fiala_lateral(alpha_r, car_ * fzr, mu * fzr)
            kappa = (omega * r_eff - vx) / max(abs(vx), V_EPS_SLIP)
            fxr = mu * fzr * tanh(ck * kappa / mu)
            fxr, fyr = friction_circle(fxr, fyr, mu * fzr)
            roll = tanh(vx / V_ROLL) * crr
            fxr -= roll * fzr
            fxf = -roll * fzf
            cd_, sd_ = cos(delta), sin(delta)
            w = blend_weight(vx)
            fx = fxr + fxf * cd_ - w * fyf * sd_ - cd * vx * abs(vx)
            fy = fyr + fyf * cd_ + fxf * sd_
            mz = lf * (fyf * cd_ + fxf * sd_) - lr * fyr
            dvy = fy / m - vx * r
            dr = mz / Iz
            if w < 1.0:
                r_kin = vx * tan(delta) / L
                dvy = w * dvy + (1.0 - w) * (lr * r_kin - vy) / KIN_RELAX
                dr = w * dr + (1.0 - w) * (r_kin - r) / KIN_RELAX
            cy, sy = cos(yaw), sin(yaw)
            return [vx * cy - vy * sy, vx * sy + vy * cy, r, fx / m + vy * r, dvy, dr,
                    ddelta, domega, (fx / m - axf) / tau_z]
        return deriv

    def _initial_state(self, x: float, y: float, yaw: float) -> list[float]:
        return [x + self.lr * math.cos(yaw), y + self.lr * math.sin(yaw), yaw,
                0.0, 0.0, 0.0, self.params['steering_trim'], 0.0, 0.0]

    def _extra_outputs(self, X: np.ndarray, Xdot: np.ndarray) -> dict[str, np.ndarray]:
        return {'delta': X[:, 6], 'wheel_speed_left': X[:, 7], 'wheel_speed_right': X[:, 7]}

    def steady_steering(self, command: np.ndarray) -> np.ndarray:
        p = self.params
        return np.clip(p['steering_gain'] * np.asarray(command, dtype=float) + p['steering_trim'],
                       -self.delta_max, self.delta_max)

    def axle_cornering_stiffness(self) -> tuple[float, float]:
        p = self.params
        return (p['c_alpha_front'] * self.fz_front,
                p['c_alpha_front'] * p['c_alpha_ratio'] * self.fz_rear)

    def _truth_extra(self) -> dict[str, Any]:
        p = self.params
        return {
            'structure': 'single track, Fiala tyres, longitudinal load transfer, first-order '
                         'ESC with acceleration/brake limits, delay + first-order slew-limited '
                         'servo, pose at the rear-axle centre',
            'steering_servo': {'model': 'first_order', 'time_constant': p['servo_time_constant'],
                               'max_rate': p['servo_max_rate']},
            'max_steering_rate': p['servo_max_rate'],
            'drive': {'model': 'esc_first_order', 'time_constant': p['esc_time_constant'],
                      'max_accel': p['esc_max_accel'], 'max_brake': p['esc_max_brake']},
            'tyres': {'model': 'fiala', 'c_alpha_front': p['c_alpha_front'],
                      'c_alpha_rear': p['c_alpha_front'] * p['c_alpha_ratio'],
                      'c_kappa': p['c_kappa'], 'rolling_resistance': p['rolling_resistance'],
                      'drag': p['drag'], 'suspension_lag': p['suspension_lag']},
        }
