"""Compiled stepping loops over cars and time (numba, cached). Private: use Car / rollout.

One physics step of one car (:func:`advance`): the servo target (angle trim or normalised map,
saturation, dead band) and the drive target are formed once; then for each of ``n_sub`` equal
sub-steps ``h``: servo sub-step of the car's servo model (exact linear step + limits), backlash,
rear wheel sub-step of its drive model (:mod:`rc_sim_engine.vehicle.actuators`,
:mod:`rc_sim_engine.vehicle.servo_models`, :mod:`rc_sim_engine.vehicle.drive_models`), then the
chassis integrator (:mod:`rc_sim_engine.vehicle.integrators`) with the steering angle and wheel
speed held at their sub-step midpoint values (averages of the start and end values: second-order
coupling; measured 1 mm over a 6 s slalom at 1 kHz).
"""

from __future__ import annotations

import math

from numba import njit, prange
import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.vehicle.actuators import linkage, servo_substep, wheel_substep
from rc_sim_engine.vehicle.drive_models import (
    V_STOPPED,
    duty_filter,
    esc_substep,
    speed_command,
    sticks,
)
from rc_sim_engine.vehicle.integrators import integrate_chassis
from rc_sim_engine.vehicle.models import (
    V_EPS,
    axle_loads,
    drive_input,
    force_drive_at_rest,
    model_rhs,
    rear_drive_force,
    wheel_joint_rates,
)
from rc_sim_engine.vehicle.packed import (
    P_ACC_DECAY,
    P_ACC_GAIN,
    P_ACC_MAX,
    P_BACKLASH,
    P_CM1,
    P_CM2,
    P_CR0,
    P_CR1,
    P_CR2,
    P_DEAD_BAND,
    P_DEC_MAX,
    P_DRIVE_ACC,
    P_DRIVE_BRAKE,
    P_DRIVE_DECAY,
    P_DRIVE_INPUT,
    P_DRIVE_MODEL,
    P_DRIVE_SCALE,
    P_DRIVE_TAU,
    P_DUTY_DEAD_BAND,
    P_DUTY_DECAY,
    P_FZ_REAR,
    P_GAIN_LEFT,
    P_GAIN_RIGHT,
    P_GZ_ACTUATORS,
    P_J_HINGE,
    P_J_REAR,
    P_K_LEFT,
    P_K_RIGHT,
    P_L,
    P_LINK_C,
    P_LINK_Q,
    P_LOAD_TRANSFER,
    P_LON_B,
    P_LON_C,
    P_LON_D,
    P_LON_E,
    P_LR,
    P_M,
    P_MAX_STEER,
    P_MAX_STEER_RATE,
    P_MAX_WHEEL_SPEED,
    P_R,
    P_SERVO_DECAY,
    P_SERVO_IMAX,
    P_SERVO_KD,
    P_SERVO_KI,
    P_SERVO_KP,
    P_SERVO_MODEL,
    P_SERVO_PHI,
    P_SERVO_TAU,
    P_SERVO_TMAX,
    P_SERVO_WN,
    P_SERVO_ZETA,
    P_SO_PHI,
    P_SPEED_KI,
    P_SPEED_KP,
    P_STEER_GAIN,
    P_STEER_KIND,
    P_STEER_OFFSET,
    P_TANH_K_LEFT,
    P_TANH_K_RIGHT,
    P_WHEEL_IMAX,
    P_WHEEL_KD,
    P_WHEEL_KI,
    P_WHEEL_KP,
    P_WHEEL_TMAX,
)
from rc_sim_engine.vehicle.servo_models import (
    first_order_servo_substep,
    inverse_normalised_steering,
    normalised_steering,
    play,
    second_order_servo_substep,
)
from rc_sim_engine.vehicle.state import (
    DUTY,
    FRONT_LEFT_WHEEL_ANGLE,
    FRONT_RIGHT_WHEEL_ANGLE,
    N_STATE,
    REAR_WHEEL_ANGLE,
    SERVO_ANGLE,
    SERVO_INTEGRAL,
    SERVO_TARGET,
    SPEED_REFERENCE,
    STEER,
    STEER_RATE,
    VX,
    VY,
    WHEEL_INTEGRAL,
    WHEEL_SPEED,
    YAW_RATE,
)

__all__ = ['accelerations', 'advance', 'rollout_cars', 'step_cars', 'step_cars_parallel']

#: A throttle-driven car stopped by static friction: lateral speeds [m/s, rad/s] below this are
#: set to exactly zero.
V_REST = 1e-9


@njit(cache=True, error_model='numpy')
def servo_target(cmd: float, p: NDArray[np.float64]) -> float:
    """Saturated steering target: trimmed angle through the linkage (actuators.trim_steering),
    the normalised map (servo_models.steering_map), or an angle to a normalised car through the
    inverse of its map and back (kind 2: the angle within the map's ends)."""
    if p[P_STEER_KIND] > 0.5:
        s = cmd
        if p[P_STEER_KIND] > 1.5:
            s = inverse_normalised_steering(cmd, p[P_STEER_OFFSET], p[P_GAIN_LEFT],
                                            p[P_GAIN_RIGHT], p[P_K_LEFT], p[P_K_RIGHT],
                                            p[P_TANH_K_LEFT], p[P_TANH_K_RIGHT])
        t = normalised_steering(s, p[P_STEER_OFFSET], p[P_GAIN_LEFT], p[P_GAIN_RIGHT],
                                p[P_K_LEFT], p[P_K_RIGHT], p[P_TANH_K_LEFT], p[P_TANH_K_RIGHT])
    else:
        t = linkage(p[P_STEER_GAIN] * cmd + p[P_STEER_OFFSET], p[P_LINK_Q], p[P_LINK_C])
    lim = p[P_MAX_STEER]
    return max(-lim, min(lim, t))


@njit(cache=True, error_model='numpy')
def wheel_target(cmd: float, p: NDArray[np.float64]) -> float:
    """Saturated drive target: wheel speed within +-max_wheel_speed, a duty within [-1, 1], or
    an acceleration (its limits act in the drive law)."""
    model = p[P_DRIVE_MODEL]
    if model > 2.5:
        return cmd
    lim = 1.0 if model > 1.5 else p[P_MAX_WHEEL_SPEED]
    return max(-lim, min(lim, cmd))


@njit(cache=True, error_model='numpy')
def drive_command(x: NDArray[np.float64], p: NDArray[np.float64], cmd: float, dt: float
                  ) -> float:
    """The drive model's input from a (delayed) drive command: scaled (speed / R, force / m),
    or a wheel-speed target through the speed controller of a throttle or acceleration car
    (drive_models.speed_command), whose reference (SPEED_REFERENCE [m/s]) and integral
    (WHEEL_INTEGRAL [rad]) advance by ``dt``."""
    u = cmd * p[P_DRIVE_SCALE]
    if p[P_DRIVE_INPUT] < 0.5:
        return u
    radius = p[P_R]
    v_target = radius * u
    vx = x[VX]
    if v_target == 0.0:  # told to stop: no integral (it held another speed's correction)
        x[WHEEL_INTEGRAL] = 0.0
        if abs(vx) < V_STOPPED:  # and stopped
            x[SPEED_REFERENCE] = 0.0
            return 0.0
    v_ref = x[SPEED_REFERENCE]
    kp = p[P_SPEED_KP]
    a_ref = kp * (v_target - v_ref)
    lim = p[P_DEC_MAX] if a_ref * v_ref < 0.0 else p[P_ACC_MAX]
    a_ref = max(-lim, min(lim, a_ref))
    out, saturated = speed_command(v_ref, a_ref, vx, radius * x[WHEEL_INTEGRAL], kp,
                                   p[P_SPEED_KI], p[P_DRIVE_MODEL] < 2.5, p[P_M], p[P_CM1],
                                   p[P_CM2], p[P_DUTY_DEAD_BAND], p[P_ACC_GAIN], p[P_ACC_MAX],
                                   p[P_DEC_MAX], p[P_CR0], p[P_CR1], p[P_CR2])
    if not saturated:
        x[WHEEL_INTEGRAL] += dt * (v_ref - vx) / radius
        x[SPEED_REFERENCE] = v_ref + dt * a_ref
    return out


@njit(cache=True, error_model='numpy', inline='always')
def _servo(x: NDArray[np.float64], p: NDArray[np.float64], target: float, h: float,
           phi: NDArray[np.float64], model: int, backlash: float) -> None:
    """One servo sub-step of the car's servo model, then the backlash onto STEER."""
    src = SERVO_ANGLE if backlash > 0.0 else STEER
    if model == 0:
        d, rate, integ = servo_substep(
            x[src], x[STEER_RATE], x[SERVO_INTEGRAL], target, h, phi, p[P_J_HINGE],
            p[P_SERVO_KP], p[P_SERVO_KI], p[P_SERVO_KD], p[P_SERVO_IMAX], p[P_SERVO_TMAX],
            p[P_MAX_STEER_RATE], p[P_MAX_STEER])
        x[SERVO_INTEGRAL] = integ
    elif model == 1:
        d, rate = first_order_servo_substep(x[src], target, h, p[P_SERVO_TAU], p[P_SERVO_DECAY],
                                            p[P_MAX_STEER_RATE], p[P_MAX_STEER])
    else:
        d, rate = second_order_servo_substep(
            x[src], x[STEER_RATE], target, h, p[P_SO_PHI:P_SO_PHI + 4], p[P_SERVO_WN],
            p[P_SERVO_ZETA], p[P_MAX_STEER_RATE], p[P_MAX_STEER])
    x[STEER_RATE] = rate
    x[SERVO_ANGLE] = d
    if backlash > 0.0:
        lim = p[P_MAX_STEER]
        x[STEER] = max(-lim, min(lim, play(x[STEER], d, backlash)))
    else:
        x[STEER] = d


@njit(cache=True, error_model='numpy', inline='always')
def _drive(x: NDArray[np.float64], p: NDArray[np.float64], target: float, h: float,
           fz_r: float, model: int) -> None:
    """One rear wheel sub-step of the car's drive model (target: wheel speed or duty)."""
    if model == 0:
        w, wint = wheel_substep(
            x[WHEEL_SPEED], x[WHEEL_INTEGRAL], target, x[VX], fz_r, h, p[P_J_REAR], p[P_R],
            p[P_WHEEL_KP], p[P_WHEEL_KI], p[P_WHEEL_KD], p[P_WHEEL_IMAX], p[P_WHEEL_TMAX],
            p[P_LON_B], p[P_LON_C], p[P_LON_D], p[P_LON_E], V_EPS)
        x[WHEEL_SPEED] = w
        x[WHEEL_INTEGRAL] = wint
    elif model == 1:
        x[WHEEL_SPEED] = esc_substep(x[WHEEL_SPEED], target, h, p[P_DRIVE_TAU],
                                     p[P_DRIVE_DECAY], p[P_DRIVE_ACC], p[P_DRIVE_BRAKE])
    elif model == 2:  # throttle: only the duty lag here; the force acts in the chassis step
        x[DUTY] = duty_filter(x[DUTY], target, p[P_DUTY_DECAY])
    else:  # acceleration: the command's lag (state DUTY); the force acts in the chassis step
        x[DUTY] = duty_filter(x[DUTY], target, p[P_ACC_DECAY])


@njit(cache=True, error_model='numpy')
def project_kinematic(x: NDArray[np.float64], p: NDArray[np.float64]) -> None:
    """Put VY, YAW_RATE on the kinematic constraint r = vx tan(delta) / L, vy = lr r."""
    r = x[VX] * math.tan(x[STEER]) / p[P_L]
    x[YAW_RATE] = r
    x[VY] = p[P_LR] * r


@njit(cache=True, error_model='numpy')
def advance(x: NDArray[np.float64], p: NDArray[np.float64], steer_cmd: float, wheel_cmd: float,
            dt: float, n_sub: int, model_id: int, integ_id: int, project: bool) -> None:
    """One physics step ``dt`` of one car with the (already delayed) commands; ``x`` in place.
    The drive command becomes the drive model's input first (:func:`drive_command`)."""
    drive = drive_command(x, p, wheel_cmd, dt)
    if p[P_GZ_ACTUATORS] > 0.5:
        _advance_gz(x, p, steer_cmd, drive, dt, n_sub, model_id, integ_id, project)
    else:
        _advance_models(x, p, steer_cmd, drive, dt, n_sub, model_id, integ_id, project)


@njit(cache=True, error_model='numpy', inline='always')
def _chassis_substep(x: NDArray[np.float64], p: NDArray[np.float64], h: float, d0: float,
                     d: float, w0: float, w: float, model_id: int, integ_id: int,
                     project: bool) -> float:
    """Chassis step with the actuator outputs at their sub-step midpoints (second-order
    coupling); returns tan of the midpoint steering angle."""
    d_mid = 0.5 * (d0 + d)
    cd, sd = math.cos(d_mid), math.sin(d_mid)
    td = sd / cd
    integrate_chassis(model_id, integ_id, x, p, h, cd, sd, td, 0.5 * (w0 + w))
    if project:
        project_kinematic(x, p)
    return td


@njit(cache=True, error_model='numpy', inline='always')
def _joint_angles(x: NDArray[np.float64], p: NDArray[np.float64], h: float, td: float) -> None:
    rear, fl, fr = wheel_joint_rates(x, p, td)
    x[REAR_WHEEL_ANGLE] += h * rear
    x[FRONT_LEFT_WHEEL_ANGLE] += h * fl
    x[FRONT_RIGHT_WHEEL_ANGLE] += h * fr


@njit(cache=True, error_model='numpy', inline='always')
def _advance_gz(x: NDArray[np.float64], p: NDArray[np.float64], steer_cmd: float,
                wheel_cmd: float, dt: float, n_sub: int, model_id: int, integ_id: int,
                project: bool) -> None:
    """:func:`advance` with the gz actuators (pd_joint servo and drive, no dead band, no
    backlash): the default car's path, kept free of the other models' branches."""
    h = dt / n_sub
    fz_r0 = p[P_FZ_REAR]
    phi = p[P_SERVO_PHI:P_SERVO_PHI + 9]
    d_target = servo_target(steer_cmd, p)
    x[SERVO_TARGET] = d_target
    w_target = wheel_target(wheel_cmd, p)
    for _ in range(n_sub):
        d0, w0 = x[STEER], x[WHEEL_SPEED]
        d, rate, integ = servo_substep(
            x[STEER], x[STEER_RATE], x[SERVO_INTEGRAL], d_target, h, phi, p[P_J_HINGE],
            p[P_SERVO_KP], p[P_SERVO_KI], p[P_SERVO_KD], p[P_SERVO_IMAX], p[P_SERVO_TMAX],
            p[P_MAX_STEER_RATE], p[P_MAX_STEER])
        x[STEER] = d
        x[STEER_RATE] = rate
        x[SERVO_INTEGRAL] = integ
        fz_r = fz_r0
        if p[P_LOAD_TRANSFER] > 0.5:
            fz_r = axle_loads(p, rear_drive_force(x[VX], x[WHEEL_SPEED], p, fz_r0))[1]
        w, wint = wheel_substep(
            x[WHEEL_SPEED], x[WHEEL_INTEGRAL], w_target, x[VX], fz_r, h, p[P_J_REAR], p[P_R],
            p[P_WHEEL_KP], p[P_WHEEL_KI], p[P_WHEEL_KD], p[P_WHEEL_IMAX], p[P_WHEEL_TMAX],
            p[P_LON_B], p[P_LON_C], p[P_LON_D], p[P_LON_E], V_EPS)
        x[WHEEL_SPEED] = w
        x[WHEEL_INTEGRAL] = wint
        td = _chassis_substep(x, p, h, d0, d, w0, w, model_id, integ_id, project)
        _joint_angles(x, p, h, td)
    x[SERVO_ANGLE] = x[STEER]  # no backlash


@njit(cache=True, error_model='numpy')
def _advance_models(x: NDArray[np.float64], p: NDArray[np.float64], steer_cmd: float,
                    wheel_cmd: float, dt: float, n_sub: int, model_id: int, integ_id: int,
                    project: bool) -> None:
    """:func:`advance` with any servo and drive model, dead band and backlash."""
    h = dt / n_sub
    fz_r0 = p[P_FZ_REAR]
    phi = p[P_SERVO_PHI:P_SERVO_PHI + 9]
    servo_model = int(p[P_SERVO_MODEL])
    drive_model = int(p[P_DRIVE_MODEL])
    backlash = p[P_BACKLASH]
    d_target = servo_target(steer_cmd, p)
    if p[P_DEAD_BAND] > 0.0:  # play operator on the target (commands are held over the step)
        d_target = play(x[SERVO_TARGET], d_target, p[P_DEAD_BAND])
    x[SERVO_TARGET] = d_target
    w_target = wheel_target(wheel_cmd, p)
    force = drive_model >= 2  # throttle or acceleration: a force, no wheel slip state
    for _ in range(n_sub):
        d0, vx0 = x[STEER], x[VX]
        w0 = drive_input(x, p)
        _servo(x, p, d_target, h, phi, servo_model, backlash)
        fz_r = fz_r0
        if p[P_LOAD_TRANSFER] > 0.5:
            fz_r = axle_loads(p, rear_drive_force(x[VX], w0, p, fz_r0))[1]
        _drive(x, p, w_target, h, fz_r, drive_model)
        w = drive_input(x, p)
        td = _chassis_substep(x, p, h, d0, x[STEER], w0, w, model_id, integ_id, project)
        if force:  # no slip state: the rear wheels roll
            if sticks(force_drive_at_rest(w, p), x[VX], vx0, p[P_CR0]):
                x[VX] = 0.0  # static friction: at rest, never pushed backwards
                if abs(x[VY]) < V_REST and abs(x[YAW_RATE]) < V_REST:
                    x[VY] = 0.0  # (no creep into denormals)
                    x[YAW_RATE] = 0.0
            x[WHEEL_SPEED] = x[VX] / p[P_R]
        _joint_angles(x, p, h, td)


@njit(cache=True, error_model='numpy')
def _step_one(x: NDArray[np.float64], p: NDArray[np.float64], steer_cmd: float,
              wheel_cmd: float, dt: float, n_sub: int, n_steps: int, model_id: int,
              integ_id: int, project: bool, buf: NDArray[np.float64], delay: int,
              head: int) -> int:
    """``n_steps`` held-command steps of one car through its delay ring ``buf`` (K, 2)."""
    size = buf.shape[0]
    hd = head
    for _ in range(n_steps):
        buf[hd, 0] = steer_cmd
        buf[hd, 1] = wheel_cmd
        slot = (hd - delay) % size
        advance(x, p, buf[slot, 0], buf[slot, 1], dt, n_sub, model_id, integ_id, project)
        hd = (hd + 1) % size
    return hd


@njit(cache=True, error_model='numpy')
def step_cars(states: NDArray[np.float64], params: NDArray[np.float64],
              steer_cmd: NDArray[np.float64], wheel_cmd: NDArray[np.float64], dt: float,
              n_sub: int, n_steps: int, model_id: int, integ_id: int, project: bool,
              delay_buf: NDArray[np.float64], delay_steps: NDArray[np.int64], head: int) -> int:
    """Step every car ``n_steps`` times with commands held, through a pure-delay ring buffer.

    ``delay_buf`` (N, K, 2) holds the last K commands (steer, wheel) of each car, ``head`` the slot
    of the next write; a car with delay k applies the command written k steps before. Returns the
    new head (the same for every car).
    """
    new_head = head
    for i in range(states.shape[0]):
        new_head = _step_one(states[i], params[i], steer_cmd[i], wheel_cmd[i], dt, n_sub,
                             n_steps, model_id, integ_id, project, delay_buf[i],
                             delay_steps[i], head)
    return new_head


@njit(cache=True, parallel=True, error_model='numpy')
def step_cars_parallel(states: NDArray[np.float64], params: NDArray[np.float64],
                       steer_cmd: NDArray[np.float64], wheel_cmd: NDArray[np.float64],
                       dt: float, n_sub: int, n_steps: int, model_id: int, integ_id: int,
                       project: bool, delay_buf: NDArray[np.float64],
                       delay_steps: NDArray[np.int64], head: int) -> int:
    """:func:`step_cars` with the cars spread over threads (results identical)."""
    for i in prange(states.shape[0]):
        _step_one(states[i], params[i], steer_cmd[i], wheel_cmd[i], dt, n_sub, n_steps,
                  model_id, integ_id, project, delay_buf[i], delay_steps[i], head)
    return (head + n_steps) % delay_buf.shape[1]


@njit(cache=True, error_model='numpy')
def _rollout_one(x: NDArray[np.float64], p: NDArray[np.float64], t_cmd: NDArray[np.float64],
                 steer: NDArray[np.float64], wheel: NDArray[np.float64], latency: float,
                 t0: float, dt: float, n_steps: int, n_sub: int, model_id: int, integ_id: int,
                 project: bool, record_after: NDArray[np.int64], out: NDArray[np.float64],
                 time_eps: float) -> None:
    m = record_after.shape[0]
    n_cmd = t_cmd.shape[0]
    j = 0
    while j < m and record_after[j] <= 0:
        out[j] = x
        j += 1
    c = 0  # zero-order hold index: last command stamped at or before t_k - latency
    for k in range(n_steps):
        t_applied = t0 + dt * k - latency + time_eps
        while c + 1 < n_cmd and t_cmd[c + 1] <= t_applied:
            c += 1
        advance(x, p, steer[c], wheel[c], dt, n_sub, model_id, integ_id, project)
        while j < m and record_after[j] <= k + 1:
            out[j] = x
            j += 1


@njit(cache=True, parallel=True, error_model='numpy')
def rollout_cars(states: NDArray[np.float64], params: NDArray[np.float64],
                 t_cmd: NDArray[np.float64], steer: NDArray[np.float64],
                 wheel: NDArray[np.float64], latency: NDArray[np.float64], t0: float, dt: float,
                 n_steps: int, n_sub: int, model_id: int, integ_id: int, project: bool,
                 record_after: NDArray[np.int64], out: NDArray[np.float64],
                 time_eps: float) -> None:
    """Run each car ``n_steps`` physics steps on commands zero-order held on ``t_cmd``.

    ``steer``/``wheel`` are (N, T) or (1, T) (shared). At step k car i applies the last command
    stamped at or before ``t0 + k dt - latency[i] (+ time_eps)`` (the first one before that).
    ``out[i, j]`` receives the state after ``record_after[j]`` steps (sorted, 0 = initial state);
    ``states`` ends in the final states. Cars are spread over threads (independent, deterministic).
    """
    stride = 0 if steer.shape[0] == 1 else 1  # shared commands: every car reads row 0
    for i in prange(states.shape[0]):
        row = i * stride
        _rollout_one(states[i], params[i], t_cmd, steer[row], wheel[row], latency[i], t0, dt,
                     n_steps, n_sub, model_id, integ_id, project, record_after, out[i],
                     time_eps)


@njit(cache=True, error_model='numpy')
def accelerations(states: NDArray[np.float64], params: NDArray[np.float64], model_id: int,
                  out: NDArray[np.float64]) -> None:
    """Body-frame CG acceleration (ax, ay) = (dvx - vy r, dvy + vx r) of each car into out (N,
    2)."""
    d = np.empty(N_STATE)
    for i in range(states.shape[0]):
        x = states[i]
        model_rhs(model_id, x, params[i], d)
        out[i, 0] = d[VX] - x[VY] * x[YAW_RATE]
        out[i, 1] = d[VY] + x[VX] * x[YAW_RATE]
