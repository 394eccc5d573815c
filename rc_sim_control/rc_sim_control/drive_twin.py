"""The gz path of a throttle or acceleration car: its fitted drive model integrated into the
wheel-speed command (``rear_wheel_speed_bridge``).

Gazebo's rear wheels are driven by a JointController on the wheel speed; it has no ESC, no DC
motor and no acceleration loop. For a car whose drive is a force (``drive.drive_model``
``throttle`` or ``acceleration``), the bridge therefore runs the car's own chain on the target
wheel speed it receives (the mapper's ``/rear_wheel_speed``) and commands gz with the speed of the
fitted drive model:

1. the speed controller of the engine (``rc_sim_engine.vehicle.drive_models``: a reference speed
v_r
   following the target with ``dv_r/dt = clip(K_p (v* - v_r))``, ``a* = a_r + K_p e + K_i
   integral(e)``, through the inverse of the drive model to a duty or an acceleration command);
2. the drive model: the duty's (acceleration command's) first-order lag and dead band, the force
   ``(C_m1 - C_m2 v sgn) d`` or ``m clip(k a)``, minus ``C_r0 sgn(v) + C_r1 v + C_r2 v |v|`` and
   the steering drag ``C_rd sin^2(delta)``, capped at the driven axles' grip, static friction
   at rest;
3. the longitudinal motion of the car on a straight line, ``m dv/dt = F``;

and publishes ``omega = v / R`` (R the effective rolling radius) to the wheel joints, whose gz
gains are then a stiff follower of that speed (``rc_sim_engine.vehicle.gz_gains``: time constant
:data:`GZ_FORCE_DRIVE_LAG`). The speed of the car in gz is that of the model, open loop: the
model does not see the gz car's slip, slope or a wall (the gz wheels then slip against their
torque limit, as a real car's wheels spin). The equations are the engine's
(``rc_sim_engine.vehicle.drive_models``); ``rc_sim_engine/test/test_gz_force_drive.py`` holds the
two equal on a straight line.

A normalised-servo car's steering angle (the mapper's) goes through the inverse of its map and
back: the angle, limited to the map's ends ``[offset - gain_right, offset + gain_left]``
(:func:`normalised_steering_range`).
"""

from __future__ import annotations

import math

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.params import VehicleParams

__all__ = ['FORCE_DRIVES', 'GZ_FORCE_DRIVE_LAG', 'LongitudinalTwin', 'drive_twin_of',
           'normalised_steering_range']

#: Drive models whose drive is a force (the bridge integrates them).
FORCE_DRIVES = ('throttle', 'acceleration')
#: Time constant [s] of the gz wheel loop that follows the integrated speed (its gains:
#: ``rc_sim_engine.vehicle.gz_gains.gz_wheel_gains``; the xacro uses the same number).
GZ_FORCE_DRIVE_LAG = 0.02
#: Speeds [m/s] of the engine's drive models (rc_sim_engine.vehicle.drive_models V_STICK,
#: V_STOPPED, V_STEER_DRAG; the equality test holds them equal).
V_STICK, V_STOPPED, V_STEER_DRAG = 1e-3, 0.02, 0.05


def normalised_steering_range(p: VehicleParams) -> tuple[float, float] | None:
    """(lowest, highest) wheel angle [rad] a normalised-servo car reaches (the ends of its map,
    within +-max_steering_angle); None for an angle car."""
    st = p.steering
    if st.steering_command != 'normalised':
        return None
    left, right = p.normalised_steering_gains
    lim = st.max_steering_angle
    return max(st.steering_offset - right, -lim), min(st.steering_offset + left, lim)


class LongitudinalTwin:
    """The drive model of a throttle or acceleration car with its speed controller, on a
    straight line (module docstring); :meth:`advance` returns the wheel-speed command."""

    def __init__(self, p: VehicleParams, step: float = 1e-3) -> None:
        d = p.drive
        if d.drive_model not in FORCE_DRIVES:
            from rc_sim_description.errors import ConfigError

            raise ConfigError(f'{p.source}: drive.drive_model {d.drive_model!r} has no force '
                              f'drive to integrate (one of {", ".join(FORCE_DRIVES)})')
        self.params = p
        self.step = float(step)
        g, m = p.geometry, p.mass_properties
        self._mass = m.mass
        self._radius = p.effective_wheel_radius
        fz_rear = m.mass * GRAVITY_MPS2 * g.cg_to_front_axle / g.wheelbase
        fz = m.mass * GRAVITY_MPS2 if d.driven_axles == 'both_locked' else fz_rear
        lon = p.tyres.pacejka_longitudinal
        self._cap = fz * lon.D * (1.0 if lon.C >= 1.0 else math.sin(0.5 * math.pi * lon.C))
        self._throttle = d.drive_model == 'throttle'
        tau = d.throttle_time_constant if self._throttle else d.acceleration_time_constant
        self._decay = math.exp(-self.step / tau) if tau > 0.0 else 0.0
        self.reset()

    def reset(self, speed: float = 0.0) -> None:
        """At ``speed`` [m/s], the controller settled on it, the drive's lag at 0."""
        self.speed = float(speed)
        self.reference = float(speed)
        self.integral = 0.0  # [m]
        self.command = 0.0   # duty or acceleration after its lag
        self._left = 0.0

    # ------------------------------------------------------------------ the model
    def _force(self, v: float, u: float, sin_delta: float) -> float:
        d = self.params.drive
        if self._throttle:
            u = math.copysign(max(abs(u) - d.throttle_dead_band, 0.0), u)
            rest = d.motor_force_gain * u
            moving = d.motor_force_gain * u - d.motor_back_emf_gain * abs(u) * v
        else:
            a = d.acceleration_gain * u
            lim = d.max_deceleration if a * v < 0.0 else d.max_acceleration
            rest = moving = self._mass * max(-lim, min(lim, a))
        cr0 = d.rolling_resistance
        if v == 0.0:
            force = 0.0 if abs(rest) <= cr0 else rest - math.copysign(cr0, rest)
        else:
            force = (moving - math.copysign(cr0, v) - d.viscous_resistance * v
                     - d.drag_coefficient * v * abs(v))
        force = max(-self._cap, min(self._cap, force))
        if v != 0.0:  # the steering drag, ramped in over V_STEER_DRAG
            force -= math.copysign(d.steering_drag * sin_delta * sin_delta
                                   * min(abs(v) / V_STEER_DRAG, 1.0), v)
        return force

    def _rest_force(self, u: float) -> float:
        d = self.params.drive
        if self._throttle:
            return d.motor_force_gain * math.copysign(max(abs(u) - d.throttle_dead_band, 0.0),
                                                      u)
        a = d.acceleration_gain * u
        return self._mass * max(-d.max_acceleration, min(d.max_acceleration, a))

    def _controller(self, v_target: float, h: float) -> float:
        """The speed controller (rc_sim_engine.vehicle._kernels.drive_command): the command for the
        target speed [m/s]; advances its reference and integral by ``h``."""
        d, v = self.params.drive, self.speed
        if v_target == 0.0:
            self.integral = 0.0
            if abs(v) < V_STOPPED:
                self.reference = 0.0
                return 0.0
        kp = d.speed_controller_p_gain
        a_ref = kp * (v_target - self.reference)
        lim = d.max_deceleration if a_ref * self.reference < 0.0 else d.max_acceleration
        a_ref = max(-lim, min(lim, a_ref))
        e = self.reference - v
        v_r = self.reference
        force = (self._mass * (a_ref + kp * e + d.speed_controller_i_gain * self.integral)
                 + d.rolling_resistance * (0.0 if v_r == 0.0 else math.copysign(1.0, v_r))
                 + d.viscous_resistance * v_r + d.drag_coefficient * v_r * abs(v_r))
        if self._throttle:
            if d.motor_force_gain <= 0.0:
                return 0.0
            denom = max(d.motor_force_gain - d.motor_back_emf_gain * v
                        * math.copysign(1.0, force), 0.1 * d.motor_force_gain)
            raw = force / denom
            if raw != 0.0:
                raw = math.copysign(abs(raw) + d.throttle_dead_band, raw)
            out = max(-1.0, min(1.0, raw))
        else:
            raw = force / (self._mass * d.acceleration_gain)
            lim_a = max(d.max_acceleration, d.max_deceleration) / d.acceleration_gain
            out = max(-lim_a, min(lim_a, raw))
        if not (out != raw and raw * (a_ref + e) >= 0.0):  # not saturated: integrate
            self.integral += h * e
            self.reference = v_r + h * a_ref
        return out

    def _substep(self, v_target: float, sin_delta: float) -> None:
        h = self.step
        u = self._controller(v_target, h)
        u0 = self.command
        self.command = u if abs(u0 - u) < 1e-12 else u + (u0 - u) * self._decay
        um = 0.5 * (u0 + self.command)  # the lagged command at the step's midpoint
        v0 = self.speed
        m = self._mass
        k1 = self._force(v0, um, sin_delta) / m
        k2 = self._force(v0 + 0.5 * h * k1, um, sin_delta) / m
        k3 = self._force(v0 + 0.5 * h * k2, um, sin_delta) / m
        k4 = self._force(v0 + h * k3, um, sin_delta) / m
        v = v0 + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
        cr0 = self.params.drive.rolling_resistance
        if abs(self._rest_force(self.command)) <= cr0 and (abs(v) < V_STICK or v * v0 < 0.0):
            v = 0.0  # static friction holds the car
        self.speed = v

    def advance(self, target_wheel_speed: float, steering_angle: float, dt: float) -> float:
        """Run the chain for ``dt`` [s] on the target wheel speed [rad/s] (and the steering angle
        [rad], for the drag); the wheel-speed command ``v / R`` [rad/s]."""
        if not (math.isfinite(dt) and dt > 0.0):
            return self.speed / self._radius
        v_target = target_wheel_speed * self._radius
        sin_delta = math.sin(steering_angle)
        self._left += dt
        while self._left >= 0.5 * self.step:
            self._substep(v_target, sin_delta)
            self._left -= self.step
        return self.speed / self._radius


def drive_twin_of(p: VehicleParams) -> dict[str, object]:
    """``BridgeState`` keywords of car ``p``: its drive model (a force drive) and its steering
    range (a normalised-servo car); empty for a speed-loop car with angle steering."""
    out: dict[str, object] = {}
    if p.drive.drive_model in FORCE_DRIVES:
        out['drive'] = LongitudinalTwin(p)
    span = normalised_steering_range(p)
    if span is not None:
        out['steering_range'] = span
    return out
