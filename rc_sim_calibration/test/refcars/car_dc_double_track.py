"""Reference car ``dc_double_track``: four wheels, Magic Formula, DC motor with wheel spin.

Structure (mocap body frame offset in x and y; commands on /cmd_vel by default, mapped on board):

* Servo: transport delay T, then a second-order position loop on the bicycle angle with a dead
  band on the error, velocity (slew) saturation and backlash in the linkage:
  d2(delta_s)/dt2 = wn^2 db(delta_t - delta_s) - 2 zeta wn d(delta_s)/dt, |d(delta_s)/dt| <= rho,
  db(e) = e - clip(e, -b_d/2, b_d/2); the wheels follow through a play operator of width b_l:
  delta = clip(delta, delta_s - b_l/2, delta_s + b_l/2) (backlash, Tao & Kokotovic 1996).
  Front wheel angles from the bicycle angle by exact Ackermann geometry
  delta_l,r = atan(L tan(delta) / (L -+ W/2 tan(delta))).
* Drive: sensored ESC whose speed set-point is slew-limited (ramp, as ESC 'punch' / VESC ramp
  settings) and a PI speed loop on the motor (gains placed for a critically damped loop at the
  drawn bandwidth), battery-voltage and current limits; DC motor with back-EMF,
  i = (V - Ke w_m) / R (armature inductance neglected), T = Kt i; gearbox G; open rear
  differential (equal torque per side); each rear wheel spins with its own inertia:
  (2 Jw + Jm G^2) d(w_c)/dt = G T - r (Fx_l + Fx_r) - 2 b w_c,
  Jw d(w_d)/dt = -r (Fx_l - Fx_r) / 2 - b w_d, w_l,r = w_c +- w_d.
* Tyres: Magic Formula lateral per wheel with load-sensitive (degressive) cornering stiffness;
  longitudinal MF on the transient slip kappa' with relaxation length sigma (Pacejka 2012 ch. 7-8:
  sigma dkappa'/dt + |v_x| kappa' = omega r_eff - v_x); friction circle per wheel.
* Loads: quasi-static longitudinal and lateral load transfer with the roll-stiffness share of
  the front axle (Milliken & Milliken, *Race Car Vehicle Dynamics*, 1995), accelerations lagged
  by the suspension time constant.
* Body: planar double-track rigid body (Rajamani 2012 ch. 2-3; forces summed over the wheels).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from .base import KIN_RELAX, RefCar, blend_weight
from .integrate import Deriv, PostStep
from .tyres import friction_circle, load_sensitive_stiffness, magic_formula

__all__ = ['DcDoubleTrackCar']

V_EPS = 0.05   # m/s, slip-angle denominator floor
V_ROLL = 0.05  # m/s
MF_SHAPE_LONG = 1.65
RAMP_LAG = 0.01  # s, time constant of the set-point ramp below its slew limit


class DcDoubleTrackCar(RefCar):
    """Double track + MF tyres + DC motor/PI ESC + open diff + 2nd-order servo w/ backlash."""

    name: ClassVar[str] = 'dc_double_track'
    default_interface: ClassVar[str] = 'cmd_vel'

    def pi_gains(self) -> tuple[float, float]:
        """(Kp [V s/rad], Ki [V/rad]) of the motor speed PI: J s^2 + (Kt Ke + Kp Kt) s / R +
        Ki Kt / R = J (s + w_c)^2, J = motor-side inertia incl. wheels and car mass."""
        p = self.params
        ke, res, gear = p['motor_kv_const'], p['motor_resistance'], p['gear_ratio']
        j = p['motor_inertia'] + (2 * p['wheel_inertia'] + self.m * self.r_eff ** 2) / gear ** 2
        wc = p['speed_loop_bandwidth']
        kp = max((2.0 * j * wc - ke * ke / res) * res / ke, 0.0)
        return kp, j * wc * wc * res / ke

    def _make_deriv(self) -> Deriv:
        p = self.params
        m, Iz, L, lf, lr, h, W = self.m, self.Iz, self.L, self.lf, self.lr, self.h, self.W
        mu, r_eff, dmax = self.mu, self.r_eff, self.delta_max
        gain, trim = p['steering_gain'], p['steering_trim']
        wn, zeta, rho = p['servo_natural_frequency'], p['servo_damping'], p['servo_max_rate']
        half_db = 0.5 * p['servo_dead_band']
        ke, res, gear = p['motor_kv_const'], p['motor_resistance'], p['gear_ratio']
        imax, vbat = p['motor_max_current'], p['battery_voltage']
        ramp = p['esc_ramp'] / r_eff
        jw, bw = p['wheel_inertia'], p['driveline_damping']
        jc = 2.0 * jw + p['motor_inertia'] * gear ** 2
        kp, ki = self.pi_gains()
        sigma, eps = p['relaxation_length_long'], p['load_sensitivity']
        caf, car_ = p['c_alpha_front'], p['c_alpha_front'] * p['c_alpha_ratio']
        cy, ey, ck = p['mf_shape_lateral'], p['mf_curvature_lateral'], p['c_kappa']
        crr, cd, tau_z, chi = (p['rolling_resistance'], p['drag'], p['suspension_lag'],
                               p['roll_stiffness_front'])
        fzf0, fzr0 = self.fz_front / 2.0, self.fz_rear / 2.0
        hw = W / 2.0
        atan, atan2, tanh, cos, sin, tan = (math.atan, math.atan2, math.tanh, math.cos,
                                            math.sin, math.tan)

        def deriv(x: list[float], u: tuple[float, ...]) -> list[float]:
            (_, _, yaw, vx, vy, r, ds, ws, delta, wc, wd, kl, kr, integ, axf, ayf, wref) = x
            # servo (second order, dead band, rate saturation)
            err = min(max(gain * u[0] + trim, -dmax), dmax) - ds
            err = err - half_db if err > half_db else (err + half_db if err < -half_db else 0.0)
            acc = wn * wn * err - 2.0 * zeta * wn * ws
            if (ws >= rho and acc > 0.0) or (ws <= -rho and acc < 0.0):
                acc = 0.0
            # ESC PI + DC motor
            dwref = min(max((u[1] - wref) / RAMP_LAG, -ramp), ramp)
            wm = gear * wc
            e_m = gear * wref - wm
            v_raw = kp * e_m + ki * integ
            volt = min(max(v_raw, -vbat), vbat)
            dinteg = 0.0 if (v_raw > vbat and e_m > 0.0) or (v_raw < -vbat and e_m < 0.0) \
                else e_m
            torque = ke * min(max((volt - ke * wm) / res, -imax), imax)
            # loads
            dfx = m * axf * h / L / 2.0
            fz = (max(fzf0 - dfx - chi * m * ayf * h / W, 0.0),
                  max(fzf0 - dfx + chi * m * ayf * h / W, 0.0),
                  max(fzr0 + dfx - (1.0 - chi) * m * ayf * h / W, 0.0),
                  max(fzr0 + dfx + (1.0 - chi) * m * ayf * h / W, 0.0))
            # wheel kinematics (FL, FR, RL, RR)
            t = tan(delta)
            d_l = atan(L * t / (L - hw * t))
            d_r = atan(L * t / (L + hw * t))
            vxl, vxr, vyf, vyr = vx - r * hw, vx + r * hw, vy + r * lf, vy - r * lr
            roll = crr * tanh(vx / V_ROLL)
            # front wheels: free rolling
            cl, sl, cr, sr = cos(d_l), sin(d_l), cos(d_r), sin(d_r)
            fy_fl = magic_formula(d_l - atan2(vyf, max(vxl, V_EPS)),
                                  load_sensitive_stiffness(caf, fz[0], fzf0, eps),
                                  cy, mu * fz[0], ey)
            fy_fr = magic_formula(d_r - atan2(vyf, max(vxr, V_EPS)),
                                  load_sensitive_stiffness(caf, fz[1], fzf0, eps),
                                  cy, mu * fz[1], ey)
            fx_fl, fx_fr = -roll * fz[0], -roll * fz[1]
            # rear wheels: driven, transient slip
            fy_rl = magic_formula(-atan2(vyr, max(vxl, V_EPS)),
                                  load_sensitive_stiffness(car_, fz[2], fzr0, eps),
                                  cy, mu * fz[2], ey)
            fy_rr = magic_formula(-atan2(vyr, max(vxr, V_EPS)),
                                  load_sensitive_stiffness(car_, fz[3], fzr0, eps),
                                  cy, mu * fz[3], ey)
            fx_rl = magic_formula(kl, ck * fz[2], MF_SHAPE_LONG, mu * fz[2], 0.0)
            fx_rr = magic_formula(kr, ck * fz[3], MF_SHAPE_LONG, mu * fz[3], 0.0)
            fx_rl, fy_rl = friction_circle(fx_rl, fy_rl, mu * fz[2])
            fx_rr, fy_rr = friction_circle(fx_rr, fy_rr, mu * fz[3])
            w_l, w_r = wc + wd, wc - wd
            dkl = ((w_l * r_eff - vxl) - abs(vxl) * kl) / sigma
            dkr = ((w_r * r_eff - vxr) - abs(vxr) * kr) / sigma
            dwc = (gear * torque - r_eff * (fx_rl + fx_rr) - 2.0 * bw * wc) / jc
            dwd = (-r_eff * (fx_rl - fx_rr) / 2.0 - bw * wd) / jw
            # body forces and moment about the CG
            fxb_fl, fyb_fl = fx_fl * cl - fy_fl * sl, fx_fl * sl + fy_fl * cl
            fxb_fr, fyb_fr = fx_fr * cr - fy_fr * sr, fx_fr * sr + fy_fr * cr
            fx_rl_b = fx_rl - roll * fz[2]
            fx_rr_b = fx_rr - roll * fz[3]
            w = blend_weight(vx)
            fx = (fx_fl * cl + fx_fr * cr - w * (fy_fl * sl + fy_fr * sr) + fx_rl_b + fx_rr_b
                  - cd * vx * abs(vx))
            fy = fyb_fl + fyb_fr + fy_rl + fy_rr
            mz = (lf * (fyb_fl + fyb_fr) - lr * (fy_rl + fy_rr)
                  + hw * (fxb_fr - fxb_fl + fx_rr_b - fx_rl_b))
            dvy = fy / m - vx * r
            dr = mz / Iz
            if w < 1.0:
                r_kin = vx * tan(delta) / L
                dvy = w * dvy + (1.0 - w) * (lr * r_kin - vy) / KIN_RELAX
                dr = w * dr + (1.0 - w) * (r_kin - r) / KIN_RELAX
            cyaw, syaw = cos(yaw), sin(yaw)
            return [vx * cyaw - vy * syaw, vx * syaw + vy * cyaw, r, fx / m + vy * r, dvy, dr,
                    ws, acc, 0.0, dwc, dwd, dkl, dkr, dinteg,
                    (fx / m - axf) / tau_z, (fy / m - ayf) / tau_z, dwref]
        return deriv

    def _post_step(self) -> PostStep:
        rho, half_bl, dmax = (self.params['servo_max_rate'],
                              0.5 * self.params['steering_backlash'], self.delta_max)

        def post(x: list[float]) -> None:
            x[7] = min(max(x[7], -rho), rho)
            x[6] = min(max(x[6], -dmax), dmax)
            x[8] = min(max(x[8], x[6] - half_bl), x[6] + half_bl)
        return post

    def _initial_state(self, x: float, y: float, yaw: float) -> list[float]:
        trim = self.params['steering_trim']
        return [x + self.lr * math.cos(yaw), y + self.lr * math.sin(yaw), yaw,
                0.0, 0.0, 0.0, trim, 0.0, trim, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]

    def _extra_outputs(self, X: np.ndarray, Xdot: np.ndarray) -> dict[str, np.ndarray]:
        return {'delta': X[:, 8], 'delta_servo': X[:, 6],
                'wheel_speed_left': X[:, 9] + X[:, 10], 'wheel_speed_right': X[:, 9] - X[:, 10]}

    def steady_steering(self, command: np.ndarray) -> np.ndarray:
        """Centre of the dead-band/backlash band: g delta_cmd + trim (clipped)."""
        p = self.params
        return np.clip(p['steering_gain'] * np.asarray(command, dtype=float) + p['steering_trim'],
                       -self.delta_max, self.delta_max)

    def axle_cornering_stiffness(self) -> tuple[float, float]:
        p = self.params  # K(Fz0) = c Fz0 per wheel at the nominal (static) load, two per axle
        return (p['c_alpha_front'] * self.fz_front,
                p['c_alpha_front'] * p['c_alpha_ratio'] * self.fz_rear)

    def _truth_extra(self) -> dict[str, Any]:
        p = self.params
        kp, ki = self.pi_gains()
        wn, zeta = p['servo_natural_frequency'], p['servo_damping']
        return {
            'structure': 'double track, Magic Formula tyres with lateral and longitudinal load '
                         'transfer, DC motor + PI speed ESC + open differential with wheel spin, '
                         'delay + second-order servo with dead band and backlash, mocap offset',
            'steering_servo': {'model': 'second_order', 'natural_frequency': wn,
                               'damping_ratio': zeta, 'equivalent_time_constant': 2 * zeta / wn,
                               'max_rate': p['servo_max_rate'],
                               'dead_band': p['servo_dead_band'],
                               'backlash': p['steering_backlash']},
            'max_steering_rate': p['servo_max_rate'],
            'drive': {'model': 'dc_motor_pi_esc', 'speed_loop_bandwidth':
                      p['speed_loop_bandwidth'], 'kp': kp, 'ki': ki,
                      'equivalent_time_constant': 2.0 / p['speed_loop_bandwidth'] - kp / ki,
                      **{k: p[k] for k in ('motor_kv_const', 'motor_resistance',
                                           'motor_inertia', 'motor_max_current', 'esc_ramp',
                                           'battery_voltage', 'gear_ratio', 'wheel_inertia',
                                           'driveline_damping')}},
            'tyres': {'model': 'magic_formula', 'c_alpha_front': p['c_alpha_front'],
                      'c_alpha_rear': p['c_alpha_front'] * p['c_alpha_ratio'],
                      'load_sensitivity': p['load_sensitivity'], 'C': p['mf_shape_lateral'],
                      'E': p['mf_curvature_lateral'], 'c_kappa': p['c_kappa'],
                      'relaxation_length_long': p['relaxation_length_long'],
                      'roll_stiffness_front': p['roll_stiffness_front'],
                      'rolling_resistance': p['rolling_resistance'], 'drag': p['drag'],
                      'suspension_lag': p['suspension_lag']},
        }
