"""One compiled call steps M worlds x N cars on a track map: physics, contacts, lidar, progress.

Car k belongs to world ``k // N``. Per step (``dt``), in order:

1. commands: action ``(steering angle [rad], speed [m/s])`` -> steering command and rear wheel
   speed ``v / r`` (the mapper's ``steering_angle`` mode), or ``(curvature [1/m], speed)`` with
   ``delta = atan(kappa L)``; then the engine's own step (:func:`rc_sim_engine._kernels._step_one`:
   latency ring, trim, servo, wheel loop, model + integrator), exactly what :class:`Car` runs;
2. contacts: each footprint against the wall squares (:func:`map_grid.footprint_contact`) and
   against the other cars of its world (:func:`multicar.car_contacts_kernel`);
3. lidar (optional): table or exact scan of the walls (:func:`map_lidar.scan_map`), then the other
   cars of the world (:func:`multicar.overlay_cars_kernel`);
4. progress: arc length of base_link along the centre line (nearest vertex from a per-cell index,
   projection on its two segments), unwrapped across the start line, laps and lap times.

``active[k]``: 0 frozen (no physics, no outputs), 1 stepped, 2 observed only (contacts, scan and
centre-line position at the current pose, clock and progress unchanged: the observation after a
reset). Cars are independent within each phase, so the parallel variant (numba ``prange``)
gives results identical to the serial one. Layout of the packed arrays: ``CFG_*`` (float64
settings), ``OBS_*`` (float64 per-car outputs).
"""

from __future__ import annotations

import math

from numba import njit, prange
import numpy as np
from numpy.typing import NDArray

from rc_sim_engine._kernels import _step_one
from rc_sim_engine.map_grid import (
    GEO_COS,
    GEO_INV_RES,
    GEO_OX,
    GEO_OY,
    GEO_SIN,
    floor_int,
    footprint_contact,
)
from rc_sim_engine.map_lidar import scan_map
from rc_sim_engine.multicar import car_contacts_kernel, overlay_cars_kernel
from rc_sim_engine.packed import P_L, P_R

__all__ = ['carve', 'race_step', 'race_step_parallel', 'views_of', 'wrap_progress']

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

(CFG_DT, CFG_N_CARS, CFG_ACTION_MODE, CFG_LIDAR, CFG_ANGLE_MIN, CFG_ANGLE_INC, CFG_RANGE_MIN,
 CFG_RANGE_MAX, CFG_LAP_LENGTH, CFG_N_SUB, CFG_MODEL, CFG_INTEG, CFG_PROJECT) = range(13)
CFG_SIZE = 13
(OBS_S, OBS_LATERAL, OBS_PROGRESS, OBS_DS, OBS_WALL_DEPTH, OBS_CAR_DEPTH, OBS_OTHER_CAR,
 OBS_LAPS, OBS_LAP_TIME, OBS_LAST_LAP, OBS_TIME) = range(11)
OBS_SIZE = 11
#: Per-car lidar mount rows: x, y, yaw in base_link.
MOUNT_SIZE = 3
#: The float64 arrays of a step live in ONE buffer ``f64``, row ``A_*`` of ``layout`` giving each
#: one's (offset, rows, columns): numba unboxes every array argument of a call (about 35 ns
#: each), and a step of one car takes a few microseconds. ``A_BUF`` rows hold (K, 2) rings.
(A_STATES, A_PARAMS, A_BUF, A_ACTIONS, A_CFG, A_FP, A_MOUNT, A_COS, A_SIN, A_BASE, A_RECT,
 A_SCRATCH, A_OBS, A_NORMAL, A_DEPTH) = range(15)
A_COUNT = 15


@njit(cache=True, inline='always')
def wrap_progress(ds: float, length: float) -> float:
    """Arc-length change wrapped into [-length/2, length/2) (crossing the start line)."""
    return (ds + 0.5 * length) % length - 0.5 * length


@njit(cache=True)
def project_on_line(px: float, py: float, k: int, xy: FloatArray,
                    s_vertex: FloatArray) -> tuple[float, float]:
    """Arc length and signed lateral offset (+ left) of (px, py) on the segments k - 1 and k."""
    n = xy.shape[0]
    best_d2 = math.inf
    best_s = 0.0
    best_lat = 0.0
    for j in (k - 1, k):
        a = j % n
        b = (a + 1) % n
        ex = xy[b, 0] - xy[a, 0]
        ey = xy[b, 1] - xy[a, 1]
        e2 = ex * ex + ey * ey
        w = ((px - xy[a, 0]) * ex + (py - xy[a, 1]) * ey) / e2
        w = min(max(w, 0.0), 1.0)
        qx = xy[a, 0] + w * ex
        qy = xy[a, 1] + w * ey
        d2 = (px - qx) ** 2 + (py - qy) ** 2
        if d2 < best_d2:
            best_d2 = d2
            best_s = s_vertex[a] + w * math.sqrt(e2)
            side = ex * (py - qy) - ey * (px - qx)
            best_lat = math.copysign(math.sqrt(d2), side)
    return best_s, best_lat


@njit(cache=True)
def _physics(k: int, states: FloatArray, params: FloatArray, buf: FloatArray, delay: IntArray,
             primed: NDArray[np.int8], actions: FloatArray, active: NDArray[np.int8],
             cfg: FloatArray, head: int) -> None:
    if active[k] != 1:
        return
    p = params[k]
    steer = actions[k, 0]
    if cfg[CFG_ACTION_MODE] > 0.5:  # curvature -> bicycle steering angle atan(kappa L)
        steer = math.atan(steer * p[P_L])
    wheel = actions[k, 1] / p[P_R]
    if not primed[k]:  # commands before the first one are taken equal to it
        for j in range(buf.shape[1]):
            buf[k, j, 0] = steer
            buf[k, j, 1] = wheel
        primed[k] = 1
    _step_one(states[k], p, steer, wheel, cfg[CFG_DT], int(cfg[CFG_N_SUB]), 1,
              int(cfg[CFG_MODEL]), int(cfg[CFG_INTEG]), cfg[CFG_PROJECT] > 0.5, buf[k],
              delay[k], head)


@njit(cache=True)
def _sense(k: int, base: FloatArray, rect: FloatArray, fp: FloatArray, mount: FloatArray,
           wall: NDArray[np.uint8], skip: NDArray[np.float32], geo: FloatArray,
           lut: NDArray[np.uint16], lut_index: NDArray[np.int32], centers: FloatArray,
           meta: FloatArray, cos_beam: FloatArray, sin_beam: FloatArray,
           line_xy: FloatArray, line_s: FloatArray, line_index: NDArray[np.int32],
           cfg: FloatArray, active: NDArray[np.int8], scratch: FloatArray,
           scans: NDArray[np.float32], obs: FloatArray) -> None:
    if not active[k]:
        return
    advance = active[k] == 1  # 2: observe only (after a reset): no clock, no progress
    n_cars = int(cfg[CFG_N_CARS])
    lo = (k // n_cars) * n_cars
    d, _, _ = footprint_contact(wall, skip, geo, rect[k, 0], rect[k, 1], rect[k, 2],
                                rect[k, 3], rect[k, 4])
    obs[k, OBS_WALL_DEPTH] = max(d, 0.0)
    x = base[k, 0]
    y = base[k, 1]
    yaw = base[k, 2]
    if cfg[CFG_LIDAR] > 0.5:
        c = math.cos(yaw)
        s = math.sin(yaw)
        ox = x + c * mount[k, 0] - s * mount[k, 1]
        oy = y + s * mount[k, 0] + c * mount[k, 1]
        heading = yaw + mount[k, 2]
        r_max = cfg[CFG_RANGE_MAX]
        row = scratch[k]
        scan_map(wall, skip, geo, lut, lut_index, centers, meta, ox, oy, heading,
                 cfg[CFG_ANGLE_MIN], cfg[CFG_ANGLE_INC], cos_beam, sin_beam, r_max, row)
        if n_cars > 1:
            overlay_cars_kernel(row, ox, oy, heading, cfg[CFG_ANGLE_MIN], cfg[CFG_ANGLE_INC],
                                cos_beam, sin_beam, rect, lo, lo + n_cars, k, r_max)
        r_min = cfg[CFG_RANGE_MIN]
        out = scans[k]
        for i in range(row.shape[0]):  # observation: no return -> range_max, too close -> 0
            r = min(row[i], r_max)
            out[i] = r * (r >= r_min)  # branch-free (vectorises)
    # progress along the centre line
    u = ((geo[GEO_COS] * (x - geo[GEO_OX]) + geo[GEO_SIN] * (y - geo[GEO_OY]))
         * geo[GEO_INV_RES])
    v = ((-geo[GEO_SIN] * (x - geo[GEO_OX]) + geo[GEO_COS] * (y - geo[GEO_OY]))
         * geo[GEO_INV_RES])
    cu = floor_int(u)
    cv = floor_int(v)
    j = -1
    if 0 <= cu < line_index.shape[1] and 0 <= cv < line_index.shape[0]:
        j = line_index[cv, cu]
    dt = cfg[CFG_DT] if advance else 0.0
    obs[k, OBS_TIME] += dt
    obs[k, OBS_LAP_TIME] += dt
    obs[k, OBS_DS] = 0.0
    if j >= 0:
        length = cfg[CFG_LAP_LENGTH]
        s_new, lat = project_on_line(x, y, j, line_xy, line_s)
        ds = wrap_progress(s_new - obs[k, OBS_S], length) if advance else 0.0
        obs[k, OBS_S] = s_new
        obs[k, OBS_LATERAL] = lat
        obs[k, OBS_DS] = ds
        obs[k, OBS_PROGRESS] += ds
        if obs[k, OBS_PROGRESS] >= (obs[k, OBS_LAPS] + 1.0) * length:
            obs[k, OBS_LAPS] += 1.0
            obs[k, OBS_LAST_LAP] = obs[k, OBS_LAP_TIME]
            obs[k, OBS_LAP_TIME] = 0.0


@njit(cache=True)
def _base_pose(k: int, states: FloatArray, params: FloatArray, fp: FloatArray,
               base: FloatArray, rect: FloatArray) -> None:
    """base_link pose (x, y, yaw) from the CG state, and the footprint row of car k."""
    yaw = states[k, 2]
    lr = params[k, 2]  # P_LR
    base[k, 0] = states[k, 0] - lr * math.cos(yaw)
    base[k, 1] = states[k, 1] - lr * math.sin(yaw)
    base[k, 2] = yaw
    c = math.cos(yaw)
    s = math.sin(yaw)
    rect[k, 0] = base[k, 0] + fp[k, 0] * c
    rect[k, 1] = base[k, 1] + fp[k, 0] * s
    rect[k, 2] = yaw
    rect[k, 3] = fp[k, 1]
    rect[k, 4] = fp[k, 2]
    rect[k, 5] = math.sqrt(fp[k, 1] ** 2 + fp[k, 2] ** 2)


def carve(shapes: list[tuple[int, int]]) -> tuple[FloatArray, IntArray, list[FloatArray]]:
    """One zeroed float64 buffer for arrays of ``shapes`` (rows, columns), their layout rows
    (offset, rows, columns) and the 2-D views (write into them in place; never rebind)."""
    sizes = [r * c for r, c in shapes]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    f64 = np.zeros(int(offsets[-1]))
    layout = np.array([[o, r, c] for o, (r, c) in zip(offsets[:-1], shapes)], dtype=np.int64)
    return f64, layout, views_of(f64, layout)


def views_of(f64: FloatArray, layout: IntArray) -> list[FloatArray]:
    """The 2-D views of ``f64`` that ``layout`` rows (offset, rows, columns) describe."""
    return [f64[o:o + r * c].reshape(r, c) for o, r, c in layout.tolist()]


@njit(cache=True, inline='always')
def _view(f64: FloatArray, layout: IntArray, a: int) -> FloatArray:
    off = layout[a, 0]
    rows = layout[a, 1]
    return f64[off:off + rows * layout[a, 2]].reshape((rows, layout[a, 2]))


@njit(cache=True, inline='always')
def _arrays(f64: FloatArray, layout: IntArray) -> tuple[FloatArray, ...]:
    """The ``A_*`` views of ``f64``, in that order (1-D where the array is one row)."""
    states = _view(f64, layout, A_STATES)
    n_total = states.shape[0]
    buf = _view(f64, layout, A_BUF).reshape((n_total, layout[A_BUF, 2] // 2, 2))
    return (states, _view(f64, layout, A_PARAMS), buf, _view(f64, layout, A_ACTIONS),
            _view(f64, layout, A_CFG)[0], _view(f64, layout, A_FP),
            _view(f64, layout, A_MOUNT), _view(f64, layout, A_COS)[0],
            _view(f64, layout, A_SIN)[0], _view(f64, layout, A_BASE),
            _view(f64, layout, A_RECT), _view(f64, layout, A_SCRATCH),
            _view(f64, layout, A_OBS), _view(f64, layout, A_NORMAL),
            _view(f64, layout, A_DEPTH)[0])


@njit(cache=True, error_model='numpy')
def race_step(f64: FloatArray, layout: IntArray, delay: IntArray, primed: NDArray[np.int8],
              active: NDArray[np.int8], head: IntArray, other: IntArray,
              wall: NDArray[np.uint8], skip: NDArray[np.float32], geo: FloatArray,
              lut: NDArray[np.uint16], lut_index: NDArray[np.int32], centers: FloatArray,
              meta: FloatArray, line_xy: FloatArray, line_s: FloatArray,
              line_index: NDArray[np.int32], scans: NDArray[np.float32]) -> None:
    """Advance every car one step ``dt`` (see module doc). ``f64``/``layout``: the float64
    arrays (``A_*``, :func:`carve`); ``head`` (1,): the delay-ring slot of this step's
    commands, advanced in place."""
    (states, params, buf, actions, cfg, fp, mount, cos_beam, sin_beam, base, rect, scratch,
     obs, normal, depth) = _arrays(f64, layout)
    n_total = states.shape[0]
    h = head[0]
    for k in range(n_total):
        _physics(k, states, params, buf, delay, primed, actions, active, cfg, h)
        _base_pose(k, states, params, fp, base, rect)
    n_cars = int(cfg[CFG_N_CARS])
    for lo in range(0, n_total, n_cars):
        car_contacts_kernel(rect, lo, lo + n_cars, depth, other, normal)
    for k in range(n_total):
        obs[k, OBS_CAR_DEPTH] = depth[k]
        obs[k, OBS_OTHER_CAR] = other[k]
        _sense(k, base, rect, fp, mount, wall, skip, geo, lut, lut_index, centers, meta,
               cos_beam, sin_beam, line_xy, line_s, line_index, cfg, active, scratch, scans,
               obs)
    head[0] = (h + 1) % buf.shape[1]


@njit(cache=True, parallel=True, error_model='numpy')
def race_step_parallel(f64: FloatArray, layout: IntArray, delay: IntArray,
                       primed: NDArray[np.int8], active: NDArray[np.int8], head: IntArray,
                       other: IntArray, wall: NDArray[np.uint8], skip: NDArray[np.float32],
                       geo: FloatArray, lut: NDArray[np.uint16], lut_index: NDArray[np.int32],
                       centers: FloatArray, meta: FloatArray, line_xy: FloatArray,
                       line_s: FloatArray, line_index: NDArray[np.int32],
                       scans: NDArray[np.float32]) -> None:
    """:func:`race_step` with the cars spread over threads (identical results)."""
    (states, params, buf, actions, cfg, fp, mount, cos_beam, sin_beam, base, rect, scratch,
     obs, normal, depth) = _arrays(f64, layout)
    n_total = states.shape[0]
    h = head[0]
    for k in prange(n_total):
        _physics(k, states, params, buf, delay, primed, actions, active, cfg, h)
        _base_pose(k, states, params, fp, base, rect)
    n_cars = int(cfg[CFG_N_CARS])
    for lo in range(0, n_total, n_cars):
        car_contacts_kernel(rect, lo, lo + n_cars, depth, other, normal)
    for k in prange(n_total):
        obs[k, OBS_CAR_DEPTH] = depth[k]
        obs[k, OBS_OTHER_CAR] = other[k]
        _sense(k, base, rect, fp, mount, wall, skip, geo, lut, lut_index, centers, meta,
               cos_beam, sin_beam, line_xy, line_s, line_index, cfg, active, scratch, scans,
               obs)
    head[0] = (h + 1) % buf.shape[1]
