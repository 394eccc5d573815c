"""Several cars in the compiled loop (:mod:`rc_sim_engine.sim.loop_kernel`): car-to-car contacts,
their response and the schedule horizon between cars.

* Contacts: the footprints (:func:`rc_sim_engine.world.collision.footprint_from_params`) through
  :func:`rc_sim_engine.world.multicar.car_contacts_kernel` (sort and sweep, separating-axis test):
  per car the deepest contact, its depth and the normal from the other car to it.
* Response (same policies as walls): ``stop`` pushes each car of the pair out by half the depth
  along the normal and zeroes its velocities; ``bounce`` pushes out and applies the impulse of a
  collision of two point masses with restitution e along the normal (Newton's impact law):
  ``v_i <- v_i - (1 + e) m_j / (m_i + m_j) ((v_i - v_j) . n) n`` when the pair closes
  (``(v_i - v_j) . n < 0``), velocities taken before any response of the check; ``ignore``
  reports the events only.
* Horizon: the smallest gap between two cars' bounding discs (closest pair by a sweep along the
  wider axis, O(N log N) for spread-out cars); each car of a pair may cover half of it.
"""

from __future__ import annotations

import math

from numba import njit
import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.vehicle.state import (
    ALPHA_FRONT,
    ALPHA_REAR,
    VX,
    VY,
    WHEEL_INTEGRAL,
    WHEEL_SPEED,
    YAW,
    YAW_RATE,
    X,
    Y,
)
from rc_sim_engine.world.multicar import car_contacts_kernel, footprint_centers

__all__ = ['KIND_CAR', 'car_pass', 'closest_gap', 'push_out', 'respond_car', 'world_velocities']

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

#: Event kind of a car-to-car contact (after the world's box 0, disc 1, ring 2).
KIND_CAR = 3


@njit(cache=True, nogil=True, error_model='numpy', inline='always')
def push_out(x: F64, lr: float, bx: float, by: float, byaw: float, response: int) -> bool:
    """Common part of every collision response (walls and cars): unless ``response`` is 2
    (ignore), move base_link to (bx, by, byaw); for 0 (stop) also zero the velocities and the
    tyres' transient slips. True when
    the caller still has to apply its bounce."""
    if response == 2:
        return False
    x[X] = bx + lr * math.cos(byaw)
    x[Y] = by + lr * math.sin(byaw)
    x[YAW] = byaw
    if response == 0:
        x[VX] = 0.0
        x[VY] = 0.0
        x[YAW_RATE] = 0.0
        x[WHEEL_SPEED] = 0.0
        x[WHEEL_INTEGRAL] = 0.0
        x[ALPHA_FRONT] = 0.0  # the tyres' transient slips, as Car.stop
        x[ALPHA_REAR] = 0.0
        return False
    return True


@njit(cache=True, nogil=True, error_model='numpy')
def closest_gap(rect: F64) -> float:
    """Smallest ``|c_i - c_j| - reach_i - reach_j`` over pairs of footprint rows (``cx, cy, yaw,
    hx, hy, reach``); sweep along the axis of wider spread, stopping once the axis distance alone
    exceeds the best gap."""
    n = rect.shape[0]
    span_x = np.max(rect[:, 0]) - np.min(rect[:, 0])
    span_y = np.max(rect[:, 1]) - np.min(rect[:, 1])
    axis = 0 if span_x >= span_y else 1
    order = np.argsort(rect[:, axis])
    reach_max = np.max(rect[:, 5])
    best = math.inf
    for a in range(n):
        i = order[a]
        for b in range(a + 1, n):
            j = order[b]
            along = rect[j, axis] - rect[i, axis]
            if along - rect[i, 5] - reach_max >= best:
                break
            g = (math.hypot(rect[j, 0] - rect[i, 0], rect[j, 1] - rect[i, 1])
                 - rect[i, 5] - rect[j, 5])
            if g < best:
                best = g
    return best


@njit(cache=True, nogil=True, error_model='numpy')
def car_pass(bx: F64, by: F64, byaw: F64, foot: F64, margin: float, want_near: bool,
             rect: F64, grown: F64, depth: F64, other: I64, normal: F64, near: I64,
             near_depth: F64, near_normal: F64) -> float:
    """Car-to-car contacts at base_link poses (N,): ``depth``, ``other`` (-1: none), ``normal``;
    with ``want_near`` (some car touched something) or a contact, ``near`` names a car within
    ``margin`` of each (footprints grown by it; else -1). Returns the smallest gap between
    bounding discs [m]."""
    n = bx.shape[0]
    footprint_centers(bx, by, byaw, foot, 0, n, rect)
    car_contacts_kernel(rect, 0, n, depth, other, normal)
    if want_near or np.any(other >= 0):
        for i in range(n):
            for c in range(6):
                grown[i, c] = rect[i, c]
            grown[i, 3] += margin
            grown[i, 4] += margin
            grown[i, 5] = math.hypot(grown[i, 3], grown[i, 4])
        car_contacts_kernel(grown, 0, n, near_depth, near, near_normal)
    else:
        for i in range(n):
            near[i] = -1
    return closest_gap(rect)


@njit(cache=True, nogil=True, error_model='numpy')
def world_velocities(states: F64, out: F64) -> None:
    """CG velocities of every car in the world frame (N, 2)."""
    for i in range(states.shape[0]):
        c = math.cos(states[i, YAW])
        s = math.sin(states[i, YAW])
        out[i, 0] = c * states[i, VX] - s * states[i, VY]
        out[i, 1] = s * states[i, VX] + c * states[i, VY]


@njit(cache=True, nogil=True, error_model='numpy')
def respond_car(x: F64, lr: float, radius: float, bx: float, by: float, byaw: float, nx: float,
                ny: float, response: int, restitution: float, vel: F64, i: int, j: int,
                mass: F64) -> None:
    """Response of car ``i`` (state ``x``) to its contact with car ``j``: base_link moved to
    (bx, by) (0 stop, 1 bounce; 2 ignore does nothing), then velocities zeroed (stop) or the
    two-body impulse along the normal ``n`` (from j to i) applied (bounce)."""
    if not push_out(x, lr, bx, by, byaw, response):
        return
    vn = (vel[i, 0] - vel[j, 0]) * nx + (vel[i, 1] - vel[j, 1]) * ny
    if vn < 0.0:
        k = (1.0 + restitution) * mass[j] / (mass[i] + mass[j]) * vn
        vwx = vel[i, 0] - k * nx
        vwy = vel[i, 1] - k * ny
        c = math.cos(byaw)
        sn = math.sin(byaw)
        x[VX] = c * vwx + sn * vwy
        x[VY] = -sn * vwx + c * vwy
        x[WHEEL_SPEED] = x[VX] / radius
