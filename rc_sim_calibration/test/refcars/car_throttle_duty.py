"""Reference car ``throttle_duty``: normalised servo and ESC duty commands, DC-motor force.

Structure (mocap body frame offset in x, y and yaw; commands /steering_norm, /throttle,
/safety_value, std_msgs/Float32, as on cars whose speed loop runs off board):

* Servo: transport delay T, an asymmetric saturating map from the normalised command s in
  [-1, 1] to the steering target (the form identified on a real 1:10-class car, Lyons et al.,
  DART, 2024): s' = s + c, w = (tanh(30 s') + 1) / 2,
  delta_t = w b tanh(a s') + (1 - w) d tanh(e s'), then a first-order lag with slew limit.
* Drive: throttle x deadman -> ESC dead zone -> duty d' -> DC motor force at the rear axle,
  F_m = C_m1 d' - C_m2 v_x (back-EMF; the motor is shorted at neutral, i.e. drag brake), the
  structure of Liniger et al. 2015 (*Optimization-based autonomous racing of 1:43 scale RC
  cars*, F_rx = (C_m1 - C_m2 v_x) d - C_r - C_d v_x^2) with the back-EMF term acting at every
  duty; rolling resistance and drag separately. No wheel state: the rear force is limited by the
  friction circle with the lateral force; the wheel encoder reads v_x / r_eff.
* Tyres: Magic Formula per axle (Pacejka 2012 ch. 4) with load-proportional stiffness and
  quasi-static longitudinal load transfer (lagged).
* Body: nonlinear single track (Rajamani 2012 ch. 3), kinematic blend at low speed.

The manoeuvres' speed references become throttle by the feed-forward of the car's own motor
model (steady force balance + m dv/dt): the car then drives near the reference speeds, as a team
would after tuning a throttle table; the speed still follows the car's dynamics open loop.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from .base import GRAVITY, KIN_RELAX, RefCar, blend_weight
from .integrate import Deriv
from .trace import TopicSeries
from .tyres import friction_circle, magic_formula

__all__ = ['STEERING_SCALE', 'ThrottleDutyCar']

V_EPS_ALPHA = 0.05  # m/s
V_ROLL = 0.05       # m/s
STEERING_SCALE = 0.5  # rad per unit normalised command the team assumes (s = delta_ref / 0.5)
DEADMAN_OFF = 0.3     # s at the start and the end with /safety_value = 0
THROTTLE_RESTING = 0.15  # throttle published while the deadman is off (ignored by the car)


class ThrottleDutyCar(RefCar):
    """Single track + MF tyres + duty-driven DC motor force + normalised servo map."""

    name: ClassVar[str] = 'throttle_duty'
    interfaces: ClassVar[tuple[str, ...]] = ('normalised_throttle',)
    default_interface: ClassVar[str] = 'normalised_throttle'
    steering_fit_range: ClassVar[float] = 0.5  # normalised command units
    deadman: bool = True  # False: no /safety_value topic; the car applies /throttle directly

    def steering_map(self, s: np.ndarray | float) -> np.ndarray:
        """Steering target [rad] for normalised command ``s`` (before the servo's lag)."""
        p = self.params
        a, e, c = p['steer_map_a'], p['steer_map_e'], p['steer_map_c']
        b, d = p['steer_slope_left'] / a, p['steer_slope_right'] / e
        sp = np.asarray(s, dtype=float) + c
        w = 0.5 * (np.tanh(30.0 * sp) + 1.0)
        out = w * b * np.tanh(a * sp) + (1.0 - w) * d * np.tanh(e * sp)
        return np.clip(out, -self.delta_max, self.delta_max)

    def motor(self) -> tuple[float, float]:
        """(C_m1 [N], C_m2 [N s/m])."""
        p = self.params
        return p['stall_force'], p['stall_force'] / p['no_load_speed']

    def _make_deriv(self) -> Deriv:
        p = self.params
        m, Iz, L, lf, lr, h = self.m, self.Iz, self.L, self.lf, self.lr, self.h
        mu, dmax, g = self.mu, self.delta_max, GRAVITY
        a, e, c = p['steer_map_a'], p['steer_map_e'], p['steer_map_c']
        b, d = p['steer_slope_left'] / a, p['steer_slope_right'] / e
        tau_s, rho = p['servo_time_constant'], p['servo_max_rate']
        cm1, cm2 = self.motor()
        dz = p['throttle_dead_zone']
        caf, car_ = p['c_alpha_front'], p['c_alpha_front'] * p['c_alpha_ratio']
        cy, ey = p['mf_shape_lateral'], p['mf_curvature_lateral']
        crr, cd, tau_z = p['rolling_resistance'], p['drag'], p['suspension_lag']
        atan2, tanh, cos, sin, tan = math.atan2, math.tanh, math.cos, math.sin, math.tan

        def deriv(x: list[float], u: tuple[float, ...]) -> list[float]:
            _, _, yaw, vx, vy, r, delta, axf = x
            sp = u[0] + c
            w_map = 0.5 * (tanh(30.0 * sp) + 1.0)
            target = w_map * b * tanh(a * sp) + (1.0 - w_map) * d * tanh(e * sp)
            target = min(max(target, -dmax), dmax)
            ddelta = min(max((target - delta) / tau_s, -rho), rho)
            thr = u[1]
            duty = math.copysign(max(abs(thr) - dz, 0.0) / (1.0 - dz), thr)
            fzf = max(m * (g * lr - h * axf) / L, 0.0)
            fzr = max(m * (g * lf + h * axf) / L, 0.0)
            vxs = max(vx, V_EPS_ALPHA)
            fyf = magic_formula(delta - atan2(vy + lf * r, vxs), caf * fzf, cy, mu * fzf, ey)
            fyr = magic_formula(-atan2(vy - lr * r, vxs), car_ * fzr, cy, mu * fzr, ey)
            fxr, fyr = friction_circle(cm1 * duty - cm2 * vx, fyr, mu * fzr)
            roll = crr * tanh(vx / V_ROLL)
            fxr -= roll * fzr
            fxf = -roll * fzf
            cdl, sdl = cos(delta), sin(delta)
            wgt = blend_weight(vx)
            fx = fxr + fxf * cdl - wgt * fyf * sdl - cd * vx * abs(vx)
            fy = fyr + fyf * cdl + fxf * sdl
            mz = lf * (fyf * cdl + fxf * sdl) - lr * fyr
            dvy = fy / m - vx * r
            dr = mz / Iz
            if wgt < 1.0:
                r_kin = vx * tan(delta) / L
                dvy = wgt * dvy + (1.0 - wgt) * (lr * r_kin - vy) / KIN_RELAX
                dr = wgt * dr + (1.0 - wgt) * (r_kin - r) / KIN_RELAX
            cyaw, syaw = cos(yaw), sin(yaw)
            return [vx * cyaw - vy * syaw, vx * syaw + vy * cyaw, r, fx / m + vy * r, dvy, dr,
                    ddelta, (fx / m - axf) / tau_z]
        return deriv

    def _initial_state(self, x: float, y: float, yaw: float) -> list[float]:
        d0 = float(self.steering_map(0.0))
        return [x + self.lr * math.cos(yaw), y + self.lr * math.sin(yaw), yaw,
                0.0, 0.0, 0.0, d0, 0.0]

    def _extra_outputs(self, X: np.ndarray, Xdot: np.ndarray) -> dict[str, np.ndarray]:
        wheel = X[:, 3] / self.r_eff
        return {'delta': X[:, 6], 'wheel_speed_left': wheel, 'wheel_speed_right': wheel}

    def feed_forward_throttle(self, t: np.ndarray, v_ref: np.ndarray) -> np.ndarray:
        """Throttle for speed reference ``v_ref``: duty = (m dv/dt + resistances + C_m2 v) / C_m1,
        through the inverse dead zone, clipped to [-1, 1]."""
        cm1, cm2 = self.motor()
        p = self.params
        accel = np.gradient(v_ref, t) if t.size > 1 else np.zeros_like(v_ref)
        force = (self.m * accel + p['rolling_resistance'] * self.m * GRAVITY
                 * np.tanh(v_ref / V_ROLL) + p['drag'] * v_ref ** 2 + cm2 * v_ref)
        duty = force / cm1
        dz = p['throttle_dead_zone']
        thr = np.where(np.abs(duty) > 1e-9, np.sign(duty) * (dz + np.abs(duty) * (1 - dz)), 0.0)
        return np.clip(thr, -1.0, 1.0)

    def _encode(self, interface: str, t: np.ndarray, v_ref: np.ndarray,
                d_ref: np.ndarray) -> tuple[list[TopicSeries], np.ndarray]:
        if interface != 'normalised_throttle':
            raise ValueError(f'{self.name}: interface {interface!r} not supported '
                             f'(supported: {", ".join(self.interfaces)})')
        steer = np.clip(d_ref / STEERING_SCALE, -1.0, 1.0)
        throttle = self.feed_forward_throttle(t, v_ref)
        safety = ((t >= DEADMAN_OFF) & (t <= t[-1] - DEADMAN_OFF)).astype(float)
        resting = THROTTLE_RESTING if self.deadman else 0.0
        published = np.where(safety > 0.0, throttle, resting)
        topics = [TopicSeries('/steering_norm', 'std_msgs/msg/Float32', t, {'data': steer}),
                  TopicSeries('/throttle', 'std_msgs/msg/Float32', t + 1e-5,
                              {'data': published})]
        if self.deadman:
            topics.append(TopicSeries('/safety_value', 'std_msgs/msg/Float32', t + 2e-5,
                                      {'data': safety}))
        # the car applies throttle x deadman; Float32 precision as on the wire
        applied = published.astype(np.float32).astype(float) * safety
        return topics, np.stack([steer.astype(np.float32).astype(float), applied], axis=1)

    def steady_steering(self, command: np.ndarray) -> np.ndarray:
        return self.steering_map(command)

    def axle_cornering_stiffness(self) -> tuple[float, float]:
        p = self.params
        return (p['c_alpha_front'] * self.fz_front,
                p['c_alpha_front'] * p['c_alpha_ratio'] * self.fz_rear)

    def terminal_speed(self, throttle: float) -> float:
        """Straight-line steady speed [m/s] for a held throttle: C_m1 d' = c_rr m g + C_m2 v +
        c_d v^2 (positive root), 0 when the drive cannot overcome rolling resistance."""
        p = self.params
        cm1, cm2 = self.motor()
        dz = p['throttle_dead_zone']
        duty = max(abs(throttle) - dz, 0.0) / (1.0 - dz)
        rhs = cm1 * duty - p['rolling_resistance'] * self.m * GRAVITY
        if rhs <= 0.0:
            return 0.0
        cd = p['drag']
        return (-cm2 + math.sqrt(cm2 * cm2 + 4.0 * cd * rhs)) / (2.0 * cd)

    def _truth_extra(self) -> dict[str, Any]:
        p = self.params
        cm1, cm2 = self.motor()
        table_s = np.linspace(-1.0, 1.0, 21)
        return {
            'structure': 'single track, Magic Formula tyres, longitudinal load transfer, '
                         'duty-driven DC motor force with back-EMF and ESC dead zone, deadman, '
                         'delay + asymmetric tanh steering map + first-order slew-limited '
                         'servo, mocap offset with yaw',
            'steering_units': 'steering_gain in rad per unit normalised command',
            'steering_scale_assumed': STEERING_SCALE,
            'steering_servo': {'model': 'first_order', 'time_constant': p['servo_time_constant'],
                               'max_rate': p['servo_max_rate']},
            'max_steering_rate': p['servo_max_rate'],
            'steering_map': {k: p[k] for k in ('steer_map_a', 'steer_map_e', 'steer_map_c',
                                                'steer_slope_left', 'steer_slope_right')},
            'steering_table': {'command': table_s.tolist(),
                               'angle': self.steering_map(table_s).tolist()},
            'drive': {'model': 'duty_dc_motor_force', 'C_m1': cm1, 'C_m2': cm2,
                      'dead_zone': p['throttle_dead_zone'], 'deadman_topic': '/safety_value'},
            'tyres': {'model': 'magic_formula', 'c_alpha_front': p['c_alpha_front'],
                      'c_alpha_rear': p['c_alpha_front'] * p['c_alpha_ratio'],
                      'C': p['mf_shape_lateral'], 'E': p['mf_curvature_lateral'],
                      'rolling_resistance': p['rolling_resistance'], 'drag': p['drag'],
                      'suspension_lag': p['suspension_lag']},
        }
