"""The simulation loop between Python events, compiled (numba, cached, releases the GIL).

:func:`run_stretch` advances N cars from step ``k`` towards ``k_end`` doing, at every step where
something is due and in this order (the order of :mod:`rc_sim_engine.sim.simulator`):

1. collision check and response against the world and the other cars (adaptive schedule, see
   :mod:`rc_sim_engine.sim.collision_response` and :mod:`rc_sim_engine.sim.loop_cars`),
2. state snapshot for odometry, IMU and joint states (converted to streams later, vectorized),
3. lidar scan of every car: the cars' poses are recorded and every scan of the stretch is cast
   afterwards in one call (:func:`cast_scans`: exact ray casting,
   :func:`rc_sim_engine.world.raycast._cast_kernel`; each lidar also sees the other cars'
   footprints, :func:`rc_sim_engine.world.multicar.overlay_cars_kernel`),
4. command: from the precomputed plan of a command sequence, or a return to Python when a
   controller callback is due,

then the physics up to the next due event in one go (:func:`rc_sim_engine.vehicle._kernels.advance`
through each car's command delay ring, exactly as
:func:`rc_sim_engine.vehicle._kernels.step_cars`). A car held against an obstacle by the ``stop``
response is stalled: its wheel joints keep their angles (the drive would otherwise spin them
between two checks while the car stands still). After every physics step the state is checked for
non-finite values; the first one stops the stretch with the car, the state field and the step. A
stretch also stops before a step whose events could overflow a buffer.

Mutable scalars travel in the int64 array ``sched`` (indices ``S_*``), periods in ``periods``
(indices ``P_*``, 0 = off). All buffers are preallocated by the caller. Before the first physics
step after a reset the delay rings are primed with the commands then in force, as
:meth:`rc_sim_engine.vehicle.car.Car.step` does.
"""

from __future__ import annotations

import math

from numba import njit
import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.sim.loop_cars import KIND_CAR, car_pass, push_out, respond_car, world_velocities
from rc_sim_engine.vehicle._kernels import advance
from rc_sim_engine.vehicle.state import (
    DUTY,
    FRONT_RIGHT_WHEEL_ANGLE,
    REAR_WHEEL_ANGLE,
    VX,
    VY,
    WHEEL_SPEED,
    YAW,
    YAW_RATE,
    X,
    Y,
)
from rc_sim_engine.world.collision import _deepest_kernel, clearance_trig
from rc_sim_engine.world.multicar import footprint_centers, overlay_cars_kernel
from rc_sim_engine.world.raycast import _cast_kernel, _limit_kernel

__all__ = ['DONE', 'FULL', 'NEED_COMMAND', 'NON_FINITE', 'cast_scans', 'run_stretch']

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
B1 = NDArray[np.bool_]

# status codes
DONE = 0
NEED_COMMAND = 1
NON_FINITE = 2
FULL = 3

# sched indices
S_K = 0
S_HEAD = 1
S_NEXT_ODOM = 2
S_NEXT_IMU = 3
S_NEXT_JOINTS = 4
S_NEXT_SCAN = 5
S_NEXT_COMMAND = 6
S_NEXT_COLLISION = 7
S_N_SNAP = 8
S_N_SCAN = 9
S_N_EVENT = 10
S_BAD_CAR = 11
S_BAD_FIELD = 12
S_PRIMED = 13
S_SIZE = 14

# periods indices
P_ODOM = 0
P_IMU = 1
P_JOINTS = 2
P_SCAN = 3
P_COMMAND = 4
P_COLLISION = 5
P_SIZE = 6

# columns of an event row
E_STEP, E_CAR, E_KIND, E_INDEX, E_DEPTH, E_NX, E_NY, E_SPEED, E_X, E_Y = range(10)
E_SIZE = 10

RELEASE_MARGIN = 5e-3  # m: a touching car is released once clear by this much (no chatter)
_MAX_STEPS = 2**62


@njit(cache=True, nogil=True, error_model='numpy', inline='always')
def _first_non_finite(x: F64) -> int:
    for f in range(x.shape[0]):
        if not math.isfinite(x[f]):
            return f
    return -1


@njit(cache=True, nogil=True, error_model='numpy')
def _physics(states: F64, params: F64, steer_cmd: F64, wheel_cmd: F64, dt: float, n_sub: int,
             n_steps: int, model_id: int, integ_id: int, project: bool, delay_buf: F64,
             delay_steps: I64, sched: I64) -> bool:
    """``n_steps`` held-command steps of every car (as ``step_cars``); False when a state became
    non-finite: ``sched`` then names the earliest one (car, field, step)."""
    head = sched[S_HEAD]
    size = delay_buf.shape[1]
    limit = n_steps  # after a non-finite state, later cars only need checking up to its step
    for i in range(states.shape[0]):
        x = states[i]
        p = params[i]
        buf = delay_buf[i]
        hd = head
        for s in range(limit):
            buf[hd, 0] = steer_cmd[i]
            buf[hd, 1] = wheel_cmd[i]
            slot = (hd - delay_steps[i]) % size
            advance(x, p, buf[slot, 0], buf[slot, 1], dt, n_sub, model_id, integ_id, project)
            hd = (hd + 1) % size
            bad = _first_non_finite(x)
            if bad >= 0:
                sched[S_BAD_CAR] = i
                sched[S_BAD_FIELD] = bad
                limit = s
                break
    if limit < n_steps:
        sched[S_K] += limit + 1
        return False
    sched[S_HEAD] = (head + n_steps) % size
    return True


@njit(cache=True, nogil=True, error_model='numpy')
def _base_link(states: F64, lr: F64, bx: F64, by: F64, byaw: F64) -> None:
    for i in range(states.shape[0]):
        yaw = states[i, YAW]
        bx[i] = states[i, X] - lr[i] * math.cos(yaw)
        by[i] = states[i, Y] - lr[i] * math.sin(yaw)
        byaw[i] = yaw


@njit(cache=True, nogil=True, error_model='numpy')
def _cast_one(pose: F64, j: int, lidar: F64, cos_beam: F64, sin_beam: F64, segments: F64,
              n_segments: I64, circles: F64, n_circles: I64, foot: F64, rect: F64,
              want_incidence: bool, out: F64, cos_out: F64) -> None:
    """Scan of car ``j`` with every car at the base_link poses ``pose`` (N, 3) (footprint rows
    ``rect`` of :func:`rc_sim_engine.world.multicar.footprint_centers`): the world's edges are
    cast, then the other cars' footprints lower the ranges they hide
    (:func:`rc_sim_engine.world.multicar.overlay_cars_kernel`, hidden cars culled). With incidence
    angles (or a single beam) the other cars are cast as counter-clockwise boxes with the
    world's edges instead, which gives the incidence of their hits too."""
    cars = pose.shape[0]
    m = n_segments[j]
    overlay = cars > 1 and not want_incidence and lidar[j, 4] > 0.0
    if cars > 1 and not overlay:
        seg = np.empty((m + 4 * (cars - 1), 4))
        seg[:m] = segments[j, :m]
        for o in range(cars):
            if o == j:
                continue
            c = math.cos(pose[o, 2])
            s = math.sin(pose[o, 2])
            for corner in range(4):
                for end in range(2):
                    q = (corner + end) % 4
                    sx = 1.0 if q == 0 or q == 3 else -1.0
                    sy = 1.0 if q < 2 else -1.0
                    px = foot[o, 0] + sx * foot[o, 1]
                    py = sy * foot[o, 2]
                    seg[m, 2 * end] = pose[o, 0] + c * px - s * py
                    seg[m, 2 * end + 1] = pose[o, 1] + s * px + c * py
                m += 1
    else:
        seg = segments[j, :m]
    c = math.cos(pose[j, 2])
    s = math.sin(pose[j, 2])
    ox = pose[j, 0] + c * lidar[j, 0] - s * lidar[j, 1]
    oy = pose[j, 1] + s * lidar[j, 0] + c * lidar[j, 1]
    heading = pose[j, 2] + lidar[j, 2]
    _cast_kernel(ox, oy, heading, lidar[j, 3], lidar[j, 4], cos_beam[j], sin_beam[j], seg,
                 circles[j, :n_circles[j]], True, out, want_incidence, cos_out)
    if overlay:
        overlay_cars_kernel(out, ox, oy, heading, lidar[j, 3], lidar[j, 4], cos_beam[j],
                            sin_beam[j], rect, 0, cars, j, lidar[j, 6])
    if want_incidence:
        for b in range(out.shape[0]):
            cos_out[b] = math.acos(cos_out[b]) if math.isfinite(out[b]) else math.nan
    _limit_kernel(out, lidar[j, 5], lidar[j, 6])


@njit(cache=True, nogil=True, error_model='numpy')
def cast_scans(poses: F64, lidar: F64, cos_beam: F64, sin_beam: F64, segments: F64,
               n_segments: I64, circles: F64, n_circles: I64, foot: F64, want_incidence: bool,
               scans: F64, incidence: F64) -> None:
    """Every scan of a stretch in one call: scan s of car j (lidar rows:
    mount x, y, yaw, angle_min, increment, range_min, range_max) with the cars at the base_link
    poses ``poses[s]`` (N, 3) into ``scans[s, j]``; ``incidence[s, j]`` receives the incidence
    angles when wanted."""
    cars = poses.shape[1]
    rect = np.empty((cars, 6))
    for task in range(poses.shape[0] * cars):
        n = task // cars
        j = task % cars
        if j == 0 and cars > 1:
            pose = poses[n]
            footprint_centers(np.ascontiguousarray(pose[:, 0]),
                              np.ascontiguousarray(pose[:, 1]),
                              np.ascontiguousarray(pose[:, 2]), foot, 0, cars, rect)
        cos_out = incidence[n, j] if want_incidence else incidence[0, 0]
        _cast_one(poses[n], j, lidar, cos_beam, sin_beam, segments, n_segments, circles,
                  n_circles, foot, rect, want_incidence, scans[n, j], cos_out)


@njit(cache=True, nogil=True, error_model='numpy')
def _respond(x: F64, lr: float, radius: float, bx: float, by: float, byaw: float, nx: float,
             ny: float, response: int, restitution: float) -> None:
    """Collision response of one car: 0 stop (push out, zero the velocities), 1 bounce (push
    out, reflect the normal CG velocity with ``restitution``), 2 ignore."""
    if not push_out(x, lr, bx, by, byaw, response):
        return
    c = math.cos(byaw)
    sn = math.sin(byaw)
    vwx = c * x[VX] - sn * x[VY]
    vwy = sn * x[VX] + c * x[VY]
    vn = vwx * nx + vwy * ny
    if vn < 0.0:
        k = 1.0 + restitution
        vwx -= k * vn * nx
        vwy -= k * vn * ny
        x[VX] = c * vwx + sn * vwy
        x[VY] = -sn * vwx + c * vwy
        x[WHEEL_SPEED] = x[VX] / radius


@njit(cache=True, nogil=True, error_model='numpy')
def _contact(x: float, y: float, yaw: float, center_x: float, half_length: float,
             half_width: float, boxes: F64, box_cos: F64, box_sin: F64, discs: F64, rings: F64,
             one: F64, one_i: I64, one_n: F64) -> float:
    """Gap of one car footprint (as :func:`rc_sim_engine.world.collision.check_cars`) and, when it
    is <= 0, its deepest contact in ``one_i`` (kind, index), ``one[3]`` (depth), ``one_n``
    (normal); scratch arrays instead of allocations (this runs up to every step)."""
    one[0] = x + center_x * math.cos(yaw)
    one[1] = y + center_x * math.sin(yaw)
    one[2] = yaw
    reach = math.sqrt(half_length ** 2 + half_width ** 2)
    gap = clearance_trig(one[0:1], one[1:2], boxes, box_cos, box_sin, discs, rings) - reach
    one_i[0] = -1
    one_i[1] = -1
    one[3] = 0.0
    one_n[0, 0] = 0.0
    one_n[0, 1] = 0.0
    if gap <= 0.0:
        _deepest_kernel(one[0:1], one[1:2], one[2:3], half_length, half_width, boxes, discs,
                        rings, one_i[0:1], one_i[1:2], one[3:4], one_n)
    return gap


@njit(cache=True, nogil=True, error_model='numpy')
def _collide(k: int, states: F64, lr: F64, radius: F64, foot: F64, boxes: F64, box_cos: F64,
             box_sin: F64, discs: F64, rings: F64, response: int, restitution: float,
             mu_g: float, dt: float, touching: B1, in_contact: B1, events: F64, sched: I64,
             work: F64, iwork: I64, normal: F64, one: F64, one_i: I64, one_n: F64, mass: F64,
             rect: F64, cwork: F64, cvec: F64, ciwork: I64) -> int:
    """Collision check at step ``k``: events, responses, contact flags; returns the number of
    whole steps before any car can first cover its clearance (the next check's horizon). With
    several cars, each car's deepest contact is its deepest wall or car contact
    (:mod:`rc_sim_engine.sim.loop_cars`)."""
    cars = states.shape[0]
    multi = cars > 1
    bx = work[0]
    by = work[1]
    byaw = work[2]
    gap = work[3]
    depth = work[4]
    kind = iwork[0]
    index = iwork[1]
    _base_link(states, lr, bx, by, byaw)
    for i in range(cars):
        gap[i] = _contact(bx[i], by[i], byaw[i], foot[i, 0], foot[i, 1], foot[i, 2], boxes,
                          box_cos, box_sin, discs, rings, one, one_i, one_n)
        kind[i] = one_i[0]
        index[i] = one_i[1]
        depth[i] = one[3]
        normal[i, 0] = one_n[0, 0]
        normal[i, 1] = one_n[0, 1]
    car_gap = math.inf
    cdepth = cwork[0]
    cnormal = cvec[0]
    vel = cvec[1]
    cother = ciwork[0]
    near = ciwork[1]
    if multi:
        any_touching = False
        for i in range(cars):
            any_touching = any_touching or touching[i]
        car_gap = car_pass(bx, by, byaw, foot, RELEASE_MARGIN, any_touching, rect[0],
                           rect[1], cdepth, cother, cnormal, near, cwork[1], cvec[2])
        world_velocities(states, vel)
    for i in range(cars):
        car_hit = multi and cother[i] >= 0
        if gap[i] > RELEASE_MARGIN and not car_hit:
            continue
        if kind[i] < 0 and not car_hit:
            if touching[i] and gap[i] <= 0.0:  # released once clear by the margin
                _contact(bx[i], by[i], byaw[i], foot[i, 0], foot[i, 1] + RELEASE_MARGIN,
                         foot[i, 2] + RELEASE_MARGIN, boxes, box_cos, box_sin, discs, rings,
                         one, one_i, one_n)
                touching[i] = one_i[0] >= 0 or (multi and near[i] >= 0)
            continue
        use_car = car_hit and (kind[i] < 0 or cdepth[i] > depth[i])
        if use_car:
            kind[i] = KIND_CAR
            index[i] = cother[i]
            depth[i] = cdepth[i]
            normal[i, 0] = cnormal[i, 0]
            normal[i, 1] = cnormal[i, 1]
        nx = normal[i, 0]
        ny = normal[i, 1]
        d = depth[i]
        if not touching[i]:
            x = states[i]
            vy_bl = x[VY] - lr[i] * x[YAW_RATE]
            speed = math.copysign(math.hypot(x[VX], vy_bl), x[VX])
            e = events[sched[S_N_EVENT]]
            e[E_STEP] = k
            e[E_CAR] = i
            e[E_KIND] = kind[i]
            e[E_INDEX] = index[i]
            e[E_DEPTH] = d
            e[E_NX] = nx
            e[E_NY] = ny
            e[E_SPEED] = speed
            e[E_X] = bx[i]
            e[E_Y] = by[i]
            sched[S_N_EVENT] += 1
        touching[i] = True
        if use_car:  # each car of the pair moves half the depth
            respond_car(states[i], lr[i], radius[i], bx[i] + 0.5 * d * nx,
                        by[i] + 0.5 * d * ny, byaw[i], nx, ny, response, restitution, vel, i,
                        cother[i], mass)
        else:
            _respond(states[i], lr[i], radius[i], bx[i] + d * nx, by[i] + d * ny, byaw[i], nx,
                     ny, response, restitution)
    lowest = math.inf
    for i in range(cars):
        if gap[i] > RELEASE_MARGIN and not (multi and near[i] >= 0):
            touching[i] = False
        in_contact[i] = kind[i] >= 0 or (multi and cother[i] >= 0)
        lowest = min(lowest, gap[i])
    lowest = min(lowest, 0.5 * car_gap)  # each car of a pair may cover half the gap
    if not lowest > 0.0:
        return 0
    # v0 T + a T^2 / 2 <= gap with v0 = |v| + |r| 0.5 m + 0.5 m/s, a = 2 mu g
    v0 = 0.0
    for i in range(cars):
        x = states[i]
        v0 = max(v0, math.hypot(x[VX], x[VY]) + abs(x[YAW_RATE]) * 0.5)
    v0 += 0.5
    a = 2.0 * mu_g
    steps = ((math.sqrt(v0 * v0 + 2.0 * a * lowest) - v0) / a) / dt
    if not steps < _MAX_STEPS:
        return _MAX_STEPS
    return int(steps)


@njit(cache=True, nogil=True, error_model='numpy')
def run_stretch(k_end: int, states: F64, params: F64, steer_cmd: F64, wheel_cmd: F64, dt: float,
                n_sub: int, model_id: int, integ_id: int, project: bool, delay_buf: F64,
                delay_steps: I64, throttle: bool, sched: I64, periods: I64, plan_on: bool,
                plan_steer: F64, plan_wheel: F64, plan_next: I64, record: bool, snap_states: F64,
                snap_steps: I64, lr: F64, radius: F64, foot: F64, scan_poses: F64,
                scan_steps: I64, boxes: F64, box_cos: F64, box_sin: F64, discs: F64,
                rings: F64, response: int, restitution: float, mu_g: float, touching: B1,
                in_contact: B1, events: F64, mass: F64) -> int:
    """Advance from ``sched[S_K]`` to ``k_end`` (see the module docstring); returns a status.

    Returns ``FULL`` before any event of a step when a buffer could overflow at that step (the
    caller empties them and calls again; a step's events are never repeated: each runs only when
    due and then moves its due step on).
    """
    cars = states.shape[0]
    work = np.empty((5, cars))  # collision scratch, allocated once per stretch
    iwork = np.empty((2, cars), dtype=np.int64)
    normal = np.empty((cars, 2))
    one = np.empty(4)
    one_i = np.empty(2, dtype=np.int64)
    one_n = np.empty((1, 2))
    rect = np.empty((2, cars, 6))  # car-to-car scratch (footprint rows, grown footprints)
    cwork = np.empty((2, cars))
    cvec = np.empty((3, cars, 2))
    ciwork = np.full((2, cars), -1, dtype=np.int64)
    wheels = np.empty((cars, FRONT_RIGHT_WHEEL_ANGLE + 1 - REAR_WHEEL_ANGLE))
    while True:
        k = sched[S_K]
        if ((record and sched[S_N_SNAP] >= snap_states.shape[0])
                or (periods[P_SCAN] > 0 and sched[S_N_SCAN] >= scan_poses.shape[0])
                or sched[S_N_EVENT] + cars > events.shape[0]):
            return FULL
        # 1. collisions
        if periods[P_COLLISION] > 0 and k >= sched[S_NEXT_COLLISION]:
            horizon = _collide(k, states, lr, radius, foot, boxes, box_cos, box_sin, discs,
                               rings, response, restitution, mu_g, dt, touching, in_contact,
                               events, sched, work, iwork, normal, one, one_i, one_n, mass,
                               rect, cwork, cvec, ciwork)
            sched[S_NEXT_COLLISION] = k + max(periods[P_COLLISION], horizon)
        # 2. snapshot for odometry, IMU and joint states
        snap = False
        for slot in range(S_NEXT_ODOM, S_NEXT_JOINTS + 1):
            if k >= sched[slot]:
                snap = True
                sched[slot] = k + periods[slot - S_NEXT_ODOM]
        if snap and record:
            n = sched[S_N_SNAP]
            snap_states[n] = states
            snap_steps[n] = k
            sched[S_N_SNAP] = n + 1
        # 3. lidar
        if periods[P_SCAN] > 0 and k >= sched[S_NEXT_SCAN]:  # poses now, rays cast in a batch
            n = sched[S_N_SCAN]
            pose = scan_poses[n]
            _base_link(states, lr, pose[:, 0], pose[:, 1], pose[:, 2])
            scan_steps[n] = k
            sched[S_N_SCAN] = n + 1
            sched[S_NEXT_SCAN] = k + periods[P_SCAN]
        # 4. commands
        period = periods[P_COMMAND]
        if k >= sched[S_NEXT_COMMAND]:
            if not plan_on:
                return NEED_COMMAND
            tick = k // period
            if tick < plan_next.shape[0]:
                for i in range(cars):
                    steer_cmd[i] = plan_steer[tick, i]
                    wheel_cmd[i] = plan_wheel[tick, i]
                sched[S_NEXT_COMMAND] = plan_next[tick] * period
            else:
                sched[S_NEXT_COMMAND] = k + period
        if k >= k_end:
            return DONE
        nxt = min(k_end, sched[S_NEXT_COMMAND])
        for slot in range(S_NEXT_ODOM, S_NEXT_JOINTS + 1):
            nxt = min(nxt, sched[slot])
        if periods[P_SCAN] > 0:
            nxt = min(nxt, sched[S_NEXT_SCAN])
        if periods[P_COLLISION] > 0:
            nxt = min(nxt, sched[S_NEXT_COLLISION])
        n_steps = max(nxt - k, 1)
        if sched[S_PRIMED] == 0:  # as Car.step: commands before the first are taken equal to it
            for i in range(cars):
                delay_buf[i, :, 0] = steer_cmd[i]
                delay_buf[i, :, 1] = wheel_cmd[i]
                if throttle:  # the duty lag starts settled on it
                    states[i, DUTY] = min(max(wheel_cmd[i], -1.0), 1.0)
            sched[S_PRIMED] = 1
        stalled = response == 0 and in_contact.any()
        if stalled:  # stop: a car in contact stands still, its wheels with it
            wheels[:] = states[:, REAR_WHEEL_ANGLE:FRONT_RIGHT_WHEEL_ANGLE + 1]
        if not _physics(states, params, steer_cmd, wheel_cmd, dt, n_sub, n_steps, model_id,
                        integ_id, project, delay_buf, delay_steps, sched):
            return NON_FINITE
        if stalled:
            for i in range(cars):
                if in_contact[i]:
                    states[i, REAR_WHEEL_ANGLE:FRONT_RIGHT_WHEEL_ANGLE + 1] = wheels[i]
        sched[S_K] = k + n_steps
