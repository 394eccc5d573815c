"""Rear drive models of real RC hardware (``drive.drive_model``), beside the gz wheel PID.

* ``pd_joint``: the gz JointController wheel loop
(:func:`rc_sim_engine.vehicle.actuators.wheel_substep`).

* ``first_order``, a speed-loop ESC (e.g. a VESC in speed mode): the wheel speed follows the
  command with a first-order lag and acceleration / braking limits on the wheel's rolling speed
  ``R omega`` (R = effective rolling radius)::

      d(omega)/dt = clip((omega* - omega) / tau, -a_lo / R, +a_hi / R)

  where the limit is ``max_acceleration`` while |omega| grows and ``max_deceleration`` while it
  falls (braking, including the braking part of a reversal). The speed loop is taken as stiff: the
  tyre force does not slow the wheel (it drives the chassis through the slip, as in every model).
  Solved exactly per sub-step (ramp at the limit, switch of limit at omega = 0, exponential). The
  form is f1tenth_gym's speed controller (O'Kelly et al., 2020) with its acceleration limit.

* ``throttle``, an ESC + DC motor driven by a duty d in [-1, 1]. The rear axle's longitudinal
  force is the form Liniger, Domahidi & Morari (2015, *Optimization-based autonomous racing of
  1:43 scale RC cars*, Optim. Control Appl. Meth. 36(5)) fitted on small RC cars,
  ``F = (C_m1 - C_m2 v) d - C_r0 - C_r2 v^2``, made physical for every sign of d and v::

      F_motor = C_m1 d - C_m2 |d| v
      F_x     = F_motor - C_r0 sgn(v) - C_r1 v - C_r2 v |v|,   |F_x| <= D_long Fz_rear

  with v the longitudinal speed vx. ``F_motor`` is the on-time average of a PWM-driven DC motor
  (current ``(d V - k_e w_m) / R_a`` during a fraction |d| of the period, open circuit
  otherwise): for d > 0 it is Liniger's ``(C_m1 - C_m2 v) d``; a negative duty reverses the
  voltage, so a car moving forwards is braked with a force that grows with speed (plug braking)
  and then driven backwards. There is no ESC brake/reverse state machine. As in the published
  model there is no wheel-slip state: the wheels roll (``omega = vx / R``) and the force is capped
  at the rear tyres' grip (the peak of the longitudinal Magic Formula). The duty goes through an
  optional first-order lag (``throttle_time_constant``, the ESC and motor current) and a dead
  band (``d_eff = sgn(d) max(|d| - d0, 0)``), in that order, as in the DART car's published model
  (Lyons et al., 2024). The chassis integrator evaluates F_x at every stage, so the equation is
  integrated to the integrator's order (no splitting error).

  Standstill (static friction after Karnopp, *Computer simulation of stick-slip friction in
  mechanical dynamic systems*, J. Dyn. Syst. Meas. Control 107, 1985): when the motor force at
  rest cannot overcome ``C_r0`` (``|C_m1 d| <= C_r0``, the car "sticks"), a car at rest gets no
  force, and a moving car whose speed falls below :data:`V_STICK` or changes sign within a step
  is set to rest (the stepper does it after the chassis step). A stopped car below the break-away
  duty therefore stays exactly at rest, without chattering, and the rolling resistance never
  pushes it backwards; above break-away the friction opposes the motor's direction.

* ``acceleration``, a low-level controller (e.g. a VESC in current mode, or a research car's
  acceleration loop) that takes an acceleration command a [m/s^2]; a force command F [N] is taken
  as F / m. The command goes through a first-order lag (``acceleration_time_constant``, state
  DUTY) and a gain k (``acceleration_gain``); the drive delivers ``m k a_f``, limited to
  ``max_acceleration`` while the car speeds up (or starts) and ``max_deceleration`` while it
  brakes, against the same resistances as the throttle drive::

      F_x = m clip(k a_f) - C_r0 sgn(v) - C_r1 v - C_r2 v |v|,   |F_x| <= D_long Fz_rear

  with the same rolling wheels, grip cap and standstill rule (the drive force at rest
  ``m clip(k a_f)`` takes the place of ``C_m1 d``).

Speed commands to a throttle or acceleration car (``/cmd_vel``, scenarios, trackers: a wheel speed
omega* [rad/s]) go through a speed controller, as a real car's off-board speed loop does: a
model-following PI. A reference speed v_r (state SPEED_REFERENCE) follows the target
``v* = R omega*`` as ``dv_r/dt = a_r = clip(K_p (v* - v_r), -max_deceleration, max_acceleration)``
(time constant 1 / K_p); the controller demands ``a* = a_r + K_p e + K_i integral(e) dt`` with
``e = v_r - v``, and the inverse of the drive model gives the command that delivers ``m a*`` plus
the resistances at v_r (:func:`speed_command`): the duty ``d = F / (C_m1 - C_m2 v sgn(F))``
beyond the dead band, or the acceleration ``F / (m k)``. With an exact drive model the car follows
v_r and e stays 0 (no overshoot from the integral); the integral (state WHEEL_INTEGRAL, the
wheel-speed error integral [rad] as for the gz wheel loop) takes up what the model misses (a
steering drag, a slope). While the command saturates in the direction of the error neither the
integral nor v_r advances (anti-windup); a stop (v* = 0) clears the integral (it held the
correction of another speed), and a car told to stop that stands (|v| < :data:`V_STOPPED`) gets
no command. The controller runs once per
physics step on the delayed target (the command latency is outside its loop).
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ['V_STEER_DRAG', 'V_STICK', 'V_STOPPED', 'acceleration_force', 'dead_band_duty',
           'duty_filter', 'esc_substep', 'limited_acceleration', 'speed_command',
           'steering_drag', 'sticks', 'throttle_force']

#: Speed [m/s] below which static friction holds a throttle-driven car that cannot break away.
V_STICK = 1e-3
#: Speed [m/s] over which the steering drag ramps in from 0 (none on a car at rest).
V_STEER_DRAG = 0.05
#: Speed [m/s] below which a car told to stop (target 0) counts as stopped: the speed
#: controller then commands nothing and clears its integral.
V_STOPPED = 0.02


@njit(cache=True, error_model='numpy')
def esc_substep(omega: float, target: float, h: float, tau: float, decay: float, acc: float,
                brake: float) -> float:
    """One exact step ``h`` of the speed-loop ESC (module docstring); ``acc``, ``brake`` are
    angular-acceleration limits [rad/s^2], ``decay = exp(-h / tau)``. Returns omega."""
    w = omega
    t_left = h
    whole = True
    for _ in range(6):
        e = target - w
        if e == 0.0:
            break
        sgn = 1.0 if e > 0.0 else -1.0
        toward_zero = w * sgn < 0.0
        lim = brake if toward_zero else acc
        if abs(e) > tau * lim * (1.0 + 1e-12):  # rate-limited ramp
            t_band = (abs(e) - tau * lim) / lim
            t_zero = abs(w) / lim if toward_zero else math.inf
            if min(t_band, t_zero) >= t_left:
                w += sgn * lim * t_left
                break
            if t_zero <= t_band:
                w = 0.0
                t_left -= t_zero
            else:
                w = target - sgn * tau * lim
                t_left -= t_band
            whole = False
            continue
        if toward_zero and target * sgn > 0.0:  # linear phase crossing omega = 0 at t_zero
            t_zero = tau * math.log(e / target)
            if t_zero < t_left:
                w = 0.0
                t_left -= t_zero
                whole = False
                continue
        w = target - e * (decay if whole else math.exp(-t_left / tau))
        break
    return w


@njit(cache=True, error_model='numpy', inline='always')
def dead_band_duty(duty: float, dead_band: float) -> float:
    """Effective duty ``sgn(d) max(|d| - d0, 0)``."""
    return math.copysign(max(abs(duty) - dead_band, 0.0), duty)


@njit(cache=True, error_model='numpy', inline='always')
def duty_filter(duty: float, command: float, decay: float) -> float:
    """First-order lag of the duty over one sub-step (``decay = exp(-h / tau)``, 0 for tau = 0);
    settled below 1e-12 (no creep into denormals)."""
    if abs(duty - command) < 1e-12:
        return command
    return command + (duty - command) * decay


@njit(cache=True, error_model='numpy', inline='always')
def throttle_force(vx: float, duty: float, fz_rear: float, grip: float, cm1: float, cm2: float,
                   cr0: float, cr1: float, cr2: float) -> float:
    """Longitudinal force of the rear axle [N] for the effective duty (module docstring);
    ``grip`` is the longitudinal peak coefficient D."""
    if vx == 0.0:
        f_start = cm1 * duty  # motor force at rest
        if abs(f_start) <= cr0:
            return 0.0  # static friction holds the car
        force = f_start - math.copysign(cr0, f_start)
    else:
        force = (cm1 * duty - cm2 * abs(duty) * vx - math.copysign(cr0, vx) - cr1 * vx
                 - cr2 * vx * abs(vx))
    cap = grip * fz_rear
    return max(-cap, min(cap, force))


@njit(cache=True, error_model='numpy', inline='always')
def limited_acceleration(vx: float, a_cmd: float, gain: float, acc_max: float,
                         dec_max: float) -> float:
    """``k a`` limited to ``acc_max`` while it speeds the car up (or starts it) and to
    ``dec_max`` while it brakes [m/s^2]."""
    a = gain * a_cmd
    lim = dec_max if a * vx < 0.0 else acc_max
    return max(-lim, min(lim, a))


@njit(cache=True, error_model='numpy', inline='always')
def acceleration_force(vx: float, a_cmd: float, fz_rear: float, grip: float, mass: float,
                       gain: float, acc_max: float, dec_max: float, cr0: float, cr1: float,
                       cr2: float) -> float:
    """Longitudinal force of the acceleration drive [N] for the lagged command ``a_cmd``
    (module docstring): ``m clip(k a) - C_r0 sgn(v) - C_r1 v - C_r2 v |v|``, the static rule of
    :func:`throttle_force` at rest, capped at the grip."""
    f_motor = mass * limited_acceleration(vx, a_cmd, gain, acc_max, dec_max)
    if vx == 0.0:
        if abs(f_motor) <= cr0:
            return 0.0
        force = f_motor - math.copysign(cr0, f_motor)
    else:
        force = f_motor - math.copysign(cr0, vx) - cr1 * vx - cr2 * vx * abs(vx)
    cap = grip * fz_rear
    return max(-cap, min(cap, force))


@njit(cache=True, error_model='numpy')
def speed_command(v_ref: float, a_ref: float, vx: float, integral: float, kp: float,
                  ki: float, throttle: bool, mass: float, cm1: float, cm2: float,
                  dead_band: float, gain: float, acc_max: float, dec_max: float, cr0: float,
                  cr1: float, cr2: float) -> tuple[float, bool]:
    """(command, saturated) of the speed controller (module docstring): the duty (``throttle``)
    or the acceleration that gives ``m (a_ref + K_p (v_ref - vx) + K_i integral) +
    resistances(v_ref)``; ``integral`` is that of the speed error [m]. ``saturated``: the command
    is at its limit in the direction of the error (the caller then holds the integral and the
    reference)."""
    e = v_ref - vx
    a_star = a_ref + kp * e + ki * integral
    sgn_r = 0.0 if v_ref == 0.0 else math.copysign(1.0, v_ref)
    force = mass * a_star + cr0 * sgn_r + cr1 * v_ref + cr2 * v_ref * abs(v_ref)
    if throttle:
        if cm1 <= 0.0:
            return 0.0, True
        denom = max(cm1 - cm2 * vx * math.copysign(1.0, force), 0.1 * cm1)
        raw = force / denom
        if raw != 0.0:
            raw = math.copysign(abs(raw) + dead_band, raw)
        out = max(-1.0, min(1.0, raw))
    else:
        raw = force / (mass * gain)
        lim = max(acc_max, dec_max) / gain
        out = max(-lim, min(lim, raw))
    return out, out != raw and raw * (a_ref + e) >= 0.0


@njit(cache=True, error_model='numpy', inline='always')
def steering_drag(vx: float, sin_delta: float, c_rd: float) -> float:
    """Resistance of a steered car [N], along vx: ``C_rd sin^2(delta) sgn(vx)``, ramped in
    over |vx| < :data:`V_STEER_DRAG`. The tyre scrub and the drivetrain losses of a turning RC car
    beyond the single track's own ``Fy_f sin(delta)`` (the DART builders' "friction due to
    steering", Lyons et al. 2024, has the same even growth with the angle)."""
    return math.copysign(c_rd * sin_delta * sin_delta * min(abs(vx) / V_STEER_DRAG, 1.0), vx)


@njit(cache=True, error_model='numpy', inline='always')
def sticks(f_rest: float, vx: float, vx_before: float, cr0: float) -> bool:
    """True when static friction stops the car at the end of a step: the drive force at rest
    ``f_rest`` (``C_m1 d``, or ``m clip(k a)``) cannot overcome ``C_r0`` and the speed fell
    below :data:`V_STICK` or changed sign during the step."""
    return abs(f_rest) <= cr0 and (abs(vx) < V_STICK or vx * vx_before < 0.0)
