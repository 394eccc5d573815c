"""One compiled call steps M worlds x N cars on a track map: physics, contacts, lidar, progress.

Car k belongs to world ``k // N``. Per step (``dt``), in order:

1. commands: action ``(steering angle [rad], speed [m/s])`` -> steering command and rear wheel
   speed ``v / r`` (the mapper's ``steering_angle`` mode), or ``(curvature [1/m], speed)`` with
   ``delta = atan(kappa L)``; then the engine's own step
   (:func:`rc_sim_engine.vehicle._kernels._step_one`: latency ring, trim, servo, wheel loop, model
   + integrator), exactly what :class:`Car` runs;
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

from rc_sim_engine.compiled.atomics import atomic_add, atomic_load
from rc_sim_engine.vehicle._kernels import advance
from rc_sim_engine.vehicle.packed import P_L, P_R
from rc_sim_engine.world.map_grid import (
    GEO_COS,
    GEO_INV_RES,
    GEO_OX,
    GEO_OY,
    GEO_SIN,
    floor_int,
    footprint_contact,
)
from rc_sim_engine.world.map_lidar import scan_map_work
from rc_sim_engine.world.multicar import car_contacts_kernel, overlay_cars_kernel

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
#: numba unboxes every array argument of a call (a memory-info record each: 40-80 ns, more
#: once the caller's Python has run), and a step of one car takes a few microseconds, so the
#: step takes few arguments: the core's arrays live in ONE float64 buffer ``buf``, also read as
#: int64 (``i64``) and float32 (``f32``). It starts with the layout: row ``r``
#: (``i64[3 r : 3 r + 3]``) gives the (offset, rows, columns) of float64 array ``A_* = r``,
#: int64 array ``I_* = r - A_COUNT`` and float32 array ``S_* = r - A_COUNT - I_COUNT``, offsets
#: in elements of the array's own type from the start of the buffer. The float64 arrays hold
#: copies of the track's small ones; ``A_BUF`` rows hold (K, 2) rings; ``A_BEAMS`` (1, B) holds
#: the beam cos and sin as 2 B float32 (the scan runs in float32); ``I_ENTRY`` rows each car's
#: int32 work row of the scan; ``S_SCANS`` the observed scans.
(A_STATES, A_PARAMS, A_BUF, A_ACTIONS, A_CFG, A_FP, A_MOUNT, A_BEAMS, A_BASE, A_RECT, A_OBS,
 A_NORMAL, A_DEPTH, A_GEO, A_CENTERS, A_META, A_LINE_XY, A_LINE_S) = range(18)
A_COUNT = 18
(I_DELAY, I_PRIMED, I_ACTIVE, I_HEAD, I_OTHER, I_ENTRY, I_SYNC) = range(7)
I_COUNT = 7
#: ``I_SYNC`` slots of the threaded step (:func:`race_step_parallel`): next car to claim for
#: the physics, cars whose physics are done, contacts done, next car to claim for the sensing
#: (the counters, zeroed at every step), then the number of threads to use (set by the core:
#: numba's count, read in compiled code, would make the kernel uncachable).
(SYNC_PHYSICS, SYNC_MOVED, SYNC_CONTACTS, SYNC_SENSE, SYNC_THREADS) = range(5)
#: 128 bytes, so that the counters, which every thread writes, lie more than a cache line before
#: the float64 arrays that follow (the first car's state): no line shared with it
SYNC_SIZE = 16
S_SCANS = 0
S_COUNT = 1
LAYOUT_ROWS = A_COUNT + I_COUNT + S_COUNT


@njit(cache=True, inline='always')
def wrap_progress(ds: float, length: float) -> float:
    """Arc-length change wrapped into [-length/2, length/2) (crossing the start line)."""
    return (ds + 0.5 * length) % length - 0.5 * length


@njit(cache=True)
def project_on_line(px: float, py: float, k: int, xy: FloatArray,
                    s_vertex: FloatArray) -> tuple[float, float]:
    """Arc length and signed lateral offset (+ left) of (px, py) on the segments k - 1 and k of
    the polyline ``xy`` (M, 2), flattened (x0, y0, x1, ...)."""
    n = xy.shape[0] // 2
    best_d2 = math.inf
    best_s = 0.0
    best_lat = 0.0
    for j in (k - 1, k):
        a = j % n
        b = (a + 1) % n
        ax = xy[2 * a]
        ay = xy[2 * a + 1]
        ex = xy[2 * b] - ax
        ey = xy[2 * b + 1] - ay
        e2 = ex * ex + ey * ey
        w = ((px - ax) * ex + (py - ay) * ey) / e2
        w = min(max(w, 0.0), 1.0)
        qx = ax + w * ex
        qy = ay + w * ey
        d2 = (px - qx) ** 2 + (py - qy) ** 2
        if d2 < best_d2:
            best_d2 = d2
            best_s = s_vertex[a] + w * math.sqrt(e2)
            side = ex * (py - qy) - ey * (px - qx)
            best_lat = math.copysign(math.sqrt(d2), side)
    return best_s, best_lat


def carve(f64_shapes: list[tuple[int, int]], i64_shapes: list[tuple[int, int]],
          f32_shapes: list[tuple[int, int]]
          ) -> tuple[FloatArray, list[FloatArray], list[IntArray], list[NDArray[np.float32]]]:
    """One zeroed float64 buffer for the arrays of ``f64_shapes``, ``i64_shapes`` and
    ``f32_shapes`` (rows, columns) and their 2-D views (write into them in place; never rebind):
    the layout rows first (module doc), then the int64, float64 and float32 arrays, each
    starting on a whole word."""
    shapes = [*f64_shapes, *i64_shapes, *f32_shapes]
    words = [r * c for r, c in f64_shapes] + [r * c for r, c in i64_shapes]
    words += [-(-r * c // 2) for r, c in f32_shapes]
    n_f, n_i = len(f64_shapes), len(i64_shapes)
    start = {}
    at = 3 * len(shapes)
    for k in [*range(n_f, n_f + n_i), *range(n_f), *range(n_f + n_i, len(shapes))]:
        start[k] = at
        at += words[k]
    buf = np.zeros(at)
    rows = [[start[k] * (2 if k >= n_f + n_i else 1), *shapes[k]] for k in range(len(shapes))]
    buf.view(np.int64)[:3 * len(shapes)] = np.asarray(rows, dtype=np.int64).reshape(-1)
    return (buf, *views_of(buf, n_f, n_i, len(f32_shapes)))


def views_of(buf: FloatArray, n_f64: int, n_i64: int, n_f32: int
             ) -> tuple[list[FloatArray], list[IntArray], list[NDArray[np.float32]]]:
    """The 2-D views of the float64, int64 and float32 arrays that the layout at the start of
    ``buf`` describes (:func:`carve`)."""
    n_rows = n_f64 + n_i64 + n_f32
    rows = buf.view(np.int64)[:3 * n_rows].reshape(n_rows, 3).tolist()
    i64 = buf.view(np.int64)
    f32 = buf.view(np.float32)
    return ([buf[o:o + r * c].reshape(r, c) for o, r, c in rows[:n_f64]],
            [i64[o:o + r * c].reshape(r, c) for o, r, c in rows[n_f64:n_f64 + n_i64]],
            [f32[o:o + r * c].reshape(r, c) for o, r, c in rows[n_f64 + n_i64:]])


@njit(cache=True, inline='always')
def _vec(f64: FloatArray, i64: IntArray, a: int) -> FloatArray:
    """Float64 array ``a`` flattened (a slice: no reshape call)."""
    o = i64[3 * a]
    return f64[o:o + i64[3 * a + 1] * i64[3 * a + 2]]


@njit(cache=True, inline='always')
def _row(f64: FloatArray, i64: IntArray, a: int, k: int) -> FloatArray:
    """Row ``k`` of float64 array ``a``."""
    c = i64[3 * a + 2]
    o = i64[3 * a] + k * c
    return f64[o:o + c]


@njit(cache=True, inline='always')
def _mat(f64: FloatArray, i64: IntArray, a: int) -> FloatArray:
    """Float64 array ``a`` in 2-D (numba reshapes through a helper call: used sparingly)."""
    return _vec(f64, i64, a).reshape((i64[3 * a + 1], i64[3 * a + 2]))


@njit(cache=True, inline='always')
def _ivec(i64: IntArray, a: int) -> IntArray:
    """Int64 array ``I_* = a`` flattened."""
    r = 3 * (A_COUNT + a)
    o = i64[r]
    return i64[o:o + i64[r + 1] * i64[r + 2]]


@njit(cache=True, inline='always')
def _irow(i64: IntArray, a: int, k: int) -> IntArray:
    """Row ``k`` of int64 array ``I_* = a``."""
    r = 3 * (A_COUNT + a)
    c = i64[r + 2]
    o = i64[r] + k * c
    return i64[o:o + c]


@njit(cache=True, inline='always')
def _frow(f32: NDArray[np.float32], i64: IntArray, a: int, k: int) -> NDArray[np.float32]:
    """Row ``k`` of float32 array ``S_* = a``."""
    r = 3 * (A_COUNT + I_COUNT + a)
    c = i64[r + 2]
    o = i64[r] + k * c
    return f32[o:o + c]


@njit(cache=True)
def _physics(k: int, f64: FloatArray, i64: IntArray, cfg: FloatArray, head: int) -> None:
    """Commands of car ``k`` into its delay ring, then one engine step (module doc, 1.)."""
    p = _row(f64, i64, A_PARAMS, k)
    act = _row(f64, i64, A_ACTIONS, k)
    ring = _row(f64, i64, A_BUF, k)  # (K, 2) flattened
    primed = _ivec(i64, I_PRIMED)
    steer = act[0]
    if cfg[CFG_ACTION_MODE] > 0.5:  # curvature -> bicycle steering angle atan(kappa L)
        steer = math.atan(steer * p[P_L])
    wheel = act[1] / p[P_R]
    if not primed[k]:  # commands before the first one are taken equal to it
        for j in range(0, ring.shape[0], 2):
            ring[j] = steer
            ring[j + 1] = wheel
        primed[k] = 1
    # the delay ring of rc_sim_engine.vehicle._kernels._step_one (one step), on the flat ring:
    # write this step's command, apply the one written delay steps before
    size = ring.shape[0] // 2
    ring[2 * head] = steer
    ring[2 * head + 1] = wheel
    slot = (head - _ivec(i64, I_DELAY)[k]) % size
    advance(_row(f64, i64, A_STATES, k), p, ring[2 * slot], ring[2 * slot + 1], cfg[CFG_DT],
            int(cfg[CFG_N_SUB]), int(cfg[CFG_MODEL]), int(cfg[CFG_INTEG]),
            cfg[CFG_PROJECT] > 0.5)


@njit(cache=True)
def _base_pose(k: int, f64: FloatArray, i64: IntArray) -> None:
    """base_link pose (x, y, yaw) from the CG state, and the footprint row of car k."""
    state = _row(f64, i64, A_STATES, k)
    fp = _row(f64, i64, A_FP, k)
    base = _row(f64, i64, A_BASE, k)
    rect = _row(f64, i64, A_RECT, k)
    yaw = state[2]
    lr = f64[i64[3 * A_PARAMS] + k * i64[3 * A_PARAMS + 2] + 2]  # P_LR
    c = math.cos(yaw)
    s = math.sin(yaw)
    base[0] = state[0] - lr * c
    base[1] = state[1] - lr * s
    base[2] = yaw
    rect[0] = base[0] + fp[0] * c
    rect[1] = base[1] + fp[0] * s
    rect[2] = yaw
    rect[3] = fp[1]
    rect[4] = fp[2]
    rect[5] = math.sqrt(fp[1] ** 2 + fp[2] ** 2)


@njit(cache=True)
def _contacts(f64: FloatArray, i64: IntArray, n_cars: int) -> None:
    """Car-to-car contacts of every world (module doc, 2.)."""
    depth = _vec(f64, i64, A_DEPTH)
    other = _ivec(i64, I_OTHER)
    n_total = depth.shape[0]
    if n_cars == 1:  # no other car
        normal = _vec(f64, i64, A_NORMAL)
        for k in range(n_total):
            depth[k] = 0.0
            other[k] = -1
            normal[2 * k] = 0.0
            normal[2 * k + 1] = 0.0
        return
    rect = _mat(f64, i64, A_RECT)
    normal2 = _mat(f64, i64, A_NORMAL)
    for lo in range(0, n_total, n_cars):
        car_contacts_kernel(rect, lo, lo + n_cars, depth, other, normal2)


@njit(cache=True)
def _sense(k: int, f64: FloatArray, i64: IntArray, cfg: FloatArray, active: IntArray,
           wall: NDArray[np.uint8], cells: NDArray[np.int32], lut: NDArray[np.uint16]) -> None:
    """Contacts, scan and progress of car ``k`` (module doc, 2.-4.)."""
    obs = _row(f64, i64, A_OBS, k)
    obs[OBS_CAR_DEPTH] = _vec(f64, i64, A_DEPTH)[k]
    obs[OBS_OTHER_CAR] = _ivec(i64, I_OTHER)[k]
    if not active[k]:
        return
    advance = active[k] == 1  # 2: observe only (after a reset): no clock, no progress
    n_cars = int(cfg[CFG_N_CARS])
    lo = (k // n_cars) * n_cars
    geo = _vec(f64, i64, A_GEO)
    skip = cells[0].view(np.float32)  # the track's cell planes (Track.cells)
    lut_index = cells[1]
    line_index = cells[2]
    fp = _row(f64, i64, A_RECT, k)
    d, _, _ = footprint_contact(wall, skip, geo, fp[0], fp[1], fp[2], fp[3], fp[4])
    obs[OBS_WALL_DEPTH] = max(d, 0.0)
    base = _row(f64, i64, A_BASE, k)
    x = base[0]
    y = base[1]
    yaw = base[2]
    if cfg[CFG_LIDAR] > 0.5:
        mount = _row(f64, i64, A_MOUNT, k)
        beams = _vec(f64, i64, A_BEAMS).view(np.float32)
        n_beams = beams.shape[0] // 2
        cos_beam = beams[:n_beams]
        sin_beam = beams[n_beams:]
        c = math.cos(yaw)
        s = math.sin(yaw)
        ox = x + c * mount[0] - s * mount[1]
        oy = y + s * mount[0] + c * mount[1]
        heading = yaw + mount[2]
        r_max = cfg[CFG_RANGE_MAX]
        out = _frow(f64.view(np.float32), i64, S_SCANS, k)
        scan_map_work(wall, skip, geo, lut, lut_index, _vec(f64, i64, A_CENTERS),
                      _vec(f64, i64, A_META), ox, oy,
                      heading, cfg[CFG_ANGLE_MIN], cfg[CFG_ANGLE_INC], cos_beam, sin_beam,
                      r_max, out, _irow(i64, I_ENTRY, k).view(np.int32))
        if n_cars > 1:
            overlay_cars_kernel(out, ox, oy, heading, cfg[CFG_ANGLE_MIN], cfg[CFG_ANGLE_INC],
                                cos_beam, sin_beam, _mat(f64, i64, A_RECT), lo, lo + n_cars, k,
                                r_max)
        r_max32 = np.float32(r_max)
        r_min32 = np.float32(cfg[CFG_RANGE_MIN])
        for i in range(out.shape[0]):  # observation: no return -> range_max, too close -> 0
            r = min(out[i], r_max32)
            out[i] = r * np.float32(r >= r_min32)  # branch-free (vectorises)
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
    obs[OBS_TIME] += dt
    obs[OBS_LAP_TIME] += dt
    obs[OBS_DS] = 0.0
    if j >= 0:
        length = cfg[CFG_LAP_LENGTH]
        s_new, lat = project_on_line(x, y, j, _vec(f64, i64, A_LINE_XY),
                                     _vec(f64, i64, A_LINE_S))
        ds = wrap_progress(s_new - obs[OBS_S], length) if advance else 0.0
        obs[OBS_S] = s_new
        obs[OBS_LATERAL] = lat
        obs[OBS_DS] = ds
        obs[OBS_PROGRESS] += ds
        if obs[OBS_PROGRESS] >= (obs[OBS_LAPS] + 1.0) * length:
            obs[OBS_LAPS] += 1.0
            obs[OBS_LAST_LAP] = obs[OBS_LAP_TIME]
            obs[OBS_LAP_TIME] = 0.0


@njit(cache=True)
def _take_actions(act: FloatArray, f64: FloatArray, i64: IntArray) -> bool:
    """Copy the (n, 2) actions ``act`` into ``A_ACTIONS``; False (nothing copied) when its shape
    or strides are not those of a C-contiguous (n, 2) float64 array (the compiled code reads it
    as one, whatever the strides say)."""
    n_total = i64[3 * A_STATES + 1]
    if (act.shape[0] != n_total or act.shape[1] != 2
            or (n_total > 1 and act.strides[0] != 16) or act.strides[1] != 8):
        return False
    dst = _vec(f64, i64, A_ACTIONS)
    for k in range(n_total):
        dst[2 * k] = act[k, 0]
        dst[2 * k + 1] = act[k, 1]
    return True


@njit(cache=True, inline='always')
def _begin(act: FloatArray, buf: FloatArray
           ) -> tuple[bool, FloatArray, IntArray, FloatArray, IntArray, IntArray]:
    """The step's prologue: the actions taken (:func:`_take_actions`), the buffer as float64
    and int64, the settings, the activity flags and the delay-ring slot."""
    i64 = buf.view(np.int64)
    return (_take_actions(act, buf, i64), buf, i64, _vec(buf, i64, A_CFG),
            _ivec(i64, I_ACTIVE), _ivec(i64, I_HEAD))


@njit(cache=True, error_model='numpy')
def race_step(buf: FloatArray, wall: NDArray[np.uint8], cells: NDArray[np.int32],
              lut: NDArray[np.uint16], act: FloatArray) -> int:
    """Advance every car one step ``dt`` (see module doc) with the actions ``act`` (n, 2), the
    last argument (the caller binds the others once), copied into ``A_ACTIONS`` first
    (:func:`_take_actions`; -1 and nothing done when refused).
    ``buf``: the core's arrays (``A_*``, ``I_*``, ``S_*``; :func:`carve`); ``I_HEAD`` holds the
    delay-ring slot of this step's commands, advanced in place. ``wall``, ``cells``
    (:attr:`Track.cells`), ``lut``: the track's."""
    ok, f64, i64, cfg, active, head = _begin(act, buf)
    if not ok:
        return -1
    h = head[0]
    for k in range(active.shape[0]):
        if active[k] == 1:
            _physics(k, f64, i64, cfg, h)
        _base_pose(k, f64, i64)
    _contacts(f64, i64, int(cfg[CFG_N_CARS]))
    for k in range(active.shape[0]):
        _sense(k, f64, i64, cfg, active, wall, cells, lut)
    head[0] = (h + 1) % (i64[3 * A_BUF + 2] // 2)
    return 0


@njit(cache=True, parallel=True, error_model='numpy')
def race_step_parallel(buf: FloatArray, wall: NDArray[np.uint8], cells: NDArray[np.int32],
                       lut: NDArray[np.uint16], act: FloatArray) -> int:
    """:func:`race_step` with the cars spread over threads (identical results), in ONE parallel
    region per step (a fork and join costs 3-4 us, half a car's step): each thread claims a
    chunk of cars for the physics (an atomic counter, :mod:`rc_sim_engine.compiled.atomics`), the
    thread that finishes the last chunk computes the car-to-car contacts, and every thread waits
    for them before it claims a chunk for the sensing. A thread only waits for work that a running
    thread has claimed, so the step completes on any number of threads (one does it all).
    Chunks are ceil(n / threads) consecutive cars: the rows of one thread's cars share no cache
    line with another's but at the boundary (8 cars, 2 threads: chunks of 1 car measured 5 %
    slower than chunks of 2, which were 4 % slower than halves). The body is not shared with
    :func:`race_step`: an inline body shared with ``prange`` ran the threaded vector env 10-26 %
    slower (measured 2026-11-25, docs/racing.md)."""
    ok, f64, i64, cfg, active, head = _begin(act, buf)
    if not ok:
        return -1
    h = head[0]
    n = active.shape[0]
    n_cars = int(cfg[CFG_N_CARS])
    sync = _ivec(i64, I_SYNC)
    for j in range(SYNC_THREADS):
        sync[j] = 0
    workers = max(1, min(sync[SYNC_THREADS], n))
    chunk = max(1, -(-n // workers))
    for _ in prange(workers):
        while True:
            lo = atomic_add(sync, SYNC_PHYSICS, chunk)
            if lo >= n:
                break
            hi = min(lo + chunk, n)
            for k in range(lo, hi):
                if active[k] == 1:
                    _physics(k, f64, i64, cfg, h)
                _base_pose(k, f64, i64)
            if atomic_add(sync, SYNC_MOVED, hi - lo) + hi - lo == n:  # the last chunk
                _contacts(f64, i64, n_cars)
                atomic_add(sync, SYNC_CONTACTS, 1)
        while atomic_load(sync, SYNC_CONTACTS) == 0:
            pass
        while True:
            lo = atomic_add(sync, SYNC_SENSE, chunk)
            if lo >= n:
                break
            for k in range(lo, min(lo + chunk, n)):
                _sense(k, f64, i64, cfg, active, wall, cells, lut)
    head[0] = (h + 1) % (i64[3 * A_BUF + 2] // 2)
    return 0
