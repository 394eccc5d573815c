"""Several cars in one world: car-to-car contacts and each lidar seeing the other cars.

Footprints are the oriented rectangles of
:func:`rc_sim_engine.world.collision.footprint_from_params` (rows ``center_x, half_length,
half_width``, centre ``center_x`` ahead of base_link).

* Contacts (:func:`car_contacts`): broad phase by sort and sweep on the footprint centres' x
  (Baraff, *Dynamic Simulation of Non-penetrating Rigid Bodies*, 1992: only pairs whose bounding
  discs overlap in x are tested, O(N log N + pairs)); narrow phase by the separating-axis test of
  :mod:`rc_sim_engine.world.collision` (depth and normal of least overlap).
* Lidar (:func:`overlay_cars`): the other cars are moving rectangles. A car beyond range_max, or
  whose bounding disc lies behind the current ranges of every beam of its bearing span (hidden
  by walls or nearer cars), is skipped; otherwise each edge facing the sensor is intersected with
  the beams of that span, ``t = (w x e) / (d x e)`` as in :mod:`rc_sim_engine.world.raycast` (one
  arc tangent per car, none per edge). The cost per scan is O(cars + beams on cars), so a world
  of N cars costs O(N^2) cheap culls and O(N) real work per step.

Both are plain ``@njit`` functions on arrays, callable from other kernels (the batched racing step
of :mod:`rc_sim_engine.racing.race_core`) and from Python through the wrappers.
"""

from __future__ import annotations

import math
from typing import Any

from numba import njit
import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.world.collision import _rect_contact
from rc_sim_engine.world.raycast import _beam_range

__all__ = ['car_contacts', 'car_contacts_kernel', 'footprint_centers', 'overlay_cars',
           'overlay_cars_kernel']

FloatArray = NDArray[np.float64]
RealArray = NDArray[np.floating[Any]]  # float64 or float32
_TWO_PI = 2.0 * math.pi
_CORNERS = ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0))  # counter-clockwise


@njit(cache=True)
def footprint_centers(x: FloatArray, y: FloatArray, yaw: FloatArray, fp: FloatArray,
                      lo: int, hi: int, out: FloatArray) -> None:
    """Rows ``cx, cy, yaw, hx, hy, reach`` of the footprints of cars ``lo..hi-1`` into ``out``."""
    for k in range(lo, hi):
        c = math.cos(yaw[k])
        s = math.sin(yaw[k])
        out[k, 0] = x[k] + fp[k, 0] * c
        out[k, 1] = y[k] + fp[k, 0] * s
        out[k, 2] = yaw[k]
        out[k, 3] = fp[k, 1]
        out[k, 4] = fp[k, 2]
        out[k, 5] = math.sqrt(fp[k, 1] ** 2 + fp[k, 2] ** 2)


@njit(cache=True)
def car_contacts_kernel(rect: FloatArray, lo: int, hi: int, depth: FloatArray,
                        other: NDArray[np.int64], normal: FloatArray) -> None:
    """Deepest car-to-car contact of cars ``lo..hi-1`` (rows of ``rect`` from
    :func:`footprint_centers`): ``depth`` > 0 with the ``other`` car's index and the normal
    pointing from it to the car; cars without contact keep depth 0 and other -1."""
    n = hi - lo
    for k in range(lo, hi):
        depth[k] = 0.0
        other[k] = -1
        normal[k, 0] = 0.0
        normal[k, 1] = 0.0
    if n < 2:
        return
    order = np.argsort(rect[lo:hi, 0]) + lo
    for a in range(n):
        i = order[a]
        for b in range(a + 1, n):
            j = order[b]
            bound = rect[i, 5] + rect[j, 5]
            if rect[j, 0] - rect[i, 0] > bound:
                break  # sorted by x: no later car can reach car i
            if abs(rect[j, 1] - rect[i, 1]) > bound:
                continue
            d, nx, ny = _rect_contact(rect[i, 0], rect[i, 1], rect[i, 2], rect[i, 3],
                                      rect[i, 4], rect[j, 0], rect[j, 1], rect[j, 2],
                                      rect[j, 3], rect[j, 4])
            if d > 0.0:
                if d > depth[i]:
                    depth[i] = d
                    other[i] = j
                    normal[i, 0] = nx
                    normal[i, 1] = ny
                if d > depth[j]:
                    depth[j] = d
                    other[j] = i
                    normal[j, 0] = -nx
                    normal[j, 1] = -ny


@njit(cache=True)
def overlay_cars_kernel(ranges: RealArray, ox: float, oy: float, heading: float,
                        angle_min: float, inc: float, cos_beam: RealArray,
                        sin_beam: RealArray, rect: FloatArray, lo: int, hi: int,
                        self_index: int, range_max: float) -> None:
    """Lower ``ranges`` (B,) of a sensor at (ox, oy, heading) where the footprints of cars
    ``lo..hi-1`` other than ``self_index`` come first (rows of :func:`footprint_centers`).

    Each car's beams are those of its bounding disc's bearing span, widened to
    ``atan(reach / sqrt(d^2 - reach^2)) <= reach / sqrt(d^2 - reach^2)`` (no inverse
    trigonometry; a wider span only tests beams that then miss); its edges facing the sensor
    are intersected with every beam of that span."""
    n = cos_beam.shape[0]
    ch = math.cos(heading)
    sh = math.sin(heading)
    for k in range(lo, hi):
        if k == self_index:
            continue
        wx = rect[k, 0] - ox
        wy = rect[k, 1] - oy
        reach = rect[k, 5]
        d2 = wx * wx + wy * wy
        dist = math.sqrt(d2)
        near = dist - reach  # nearest possible range of the car
        if near > range_max:
            continue
        # centre in the sensor frame
        lx = ch * wx + sh * wy
        ly = -sh * wx + ch * wy
        if near > 0.0:
            half = min(reach / math.sqrt(d2 - reach * reach), math.pi)
            u0 = math.atan2(ly, lx) - half - angle_min
            u0 -= _TWO_PI * math.floor(u0 / _TWO_PI)
            a0, a1, b0, b1 = _beam_range(u0, 2.0 * half, inc, n)
            # skip a car hidden behind closer returns over its whole bearing span
            hidden = True
            for i in range(a0, a1 + 1):
                if ranges[i] > near:
                    hidden = False
                    break
            if hidden:
                for i in range(b0, b1 + 1):
                    if ranges[i] > near:
                        hidden = False
                        break
            if hidden:
                continue
        else:  # the sensor inside the car's disc: every beam
            a0, a1, b0, b1 = 0, n - 1, 0, -1
        # the car's axes in the sensor frame
        c = math.cos(rect[k, 2] - heading)
        s = math.sin(rect[k, 2] - heading)
        hx = rect[k, 3]
        hy = rect[k, 4]
        for e in range(4):
            ax_l, ay_l = _CORNERS[e]
            bx_l, by_l = _CORNERS[(e + 1) % 4]
            x0 = lx + c * ax_l * hx - s * ay_l * hy
            y0 = ly + s * ax_l * hx + c * ay_l * hy
            x1 = lx + c * bx_l * hx - s * by_l * hy
            y1 = ly + s * bx_l * hx + c * by_l * hy
            ex = x1 - x0
            ey = y1 - y0
            # counter-clockwise outline: the outside of an edge is on its right; skip edges
            # whose outside faces away from the sensor (the origin)
            cross_we = x0 * ey - y0 * ex
            if cross_we >= 0.0:
                continue
            _overlay_edge(ranges, cos_beam, sin_beam, a0, a1, x0, y0, ex, ey, cross_we)
            _overlay_edge(ranges, cos_beam, sin_beam, b0, b1, x0, y0, ex, ey, cross_we)


@njit(cache=True, error_model='numpy')
def _overlay_edge(ranges: RealArray, cos_beam: RealArray, sin_beam: RealArray, first: int,
                  last: int, x0: float, y0: float, ex: float, ey: float,
                  cross_we: float) -> None:
    """Beams ``first..last`` against the edge from (x0, y0) along (ex, ey) (sensor frame):
    ``t`` along the beam and ``u`` along the edge of the crossing; branch-free, so it
    vectorises (a beam parallel to the edge divides by 0: inf or nan, never a hit)."""
    if last < first:
        return
    # on slices from 0: no negative-index wrap in the loop, which then vectorises
    r = ranges[first:last + 1]
    cb = cos_beam[first:last + 1]
    sb = sin_beam[first:last + 1]
    for i in range(r.shape[0]):
        c = np.float64(cb[i])
        s = np.float64(sb[i])
        denom = c * ey - s * ex
        t = cross_we / denom
        u = (x0 * s - y0 * c) / denom
        now = np.float64(r[i])
        hit = (t >= 0.0) & (t < now) & (u >= -1e-9) & (u <= 1.0 + 1e-9)
        r[i] = t if hit else now


def _rects(x: FloatArray, y: FloatArray, yaw: FloatArray, footprints: FloatArray) -> FloatArray:
    n = len(x)
    rect = np.empty((n, 6))
    footprint_centers(np.ascontiguousarray(x, dtype=np.float64),
                      np.ascontiguousarray(y, dtype=np.float64),
                      np.ascontiguousarray(yaw, dtype=np.float64),
                      np.ascontiguousarray(footprints, dtype=np.float64).reshape(n, 3), 0, n, rect)
    return rect


def car_contacts(x: FloatArray, y: FloatArray, yaw: FloatArray, footprints: FloatArray
                 ) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
    """Car-to-car contacts of N cars at base_link poses: ``depth`` (N,) [m] (0: none), ``other``
    (N,) index of the car touched (-1: none), ``normal`` (N, 2) from the other car to this one."""
    rect = _rects(x, y, yaw, footprints)
    n = len(rect)
    depth = np.zeros(n)
    other = np.full(n, -1, dtype=np.int64)
    normal = np.zeros((n, 2))
    car_contacts_kernel(rect, 0, n, depth, other, normal)
    return depth, other, normal


def overlay_cars(ranges: FloatArray, sensor: tuple[float, float, float], angles: FloatArray,
                 x: FloatArray, y: FloatArray, yaw: FloatArray, footprints: FloatArray,
                 self_index: int = -1, range_max: float = math.inf) -> FloatArray:
    """``ranges`` (B,) [m] of a scan from ``sensor`` (x, y, heading) with the cars in front
    (evenly spaced beam ``angles`` in the sensor frame; ``inf`` = no return). Car
    ``self_index`` (the scanning car) is left out. Returns ``ranges`` (modified in place)."""
    angles = np.asarray(angles, dtype=np.float64)
    inc = float(angles[1] - angles[0]) if len(angles) > 1 else 0.0
    rect = _rects(x, y, yaw, footprints)
    overlay_cars_kernel(ranges, float(sensor[0]), float(sensor[1]), float(sensor[2]),
                        float(angles[0]), inc, np.cos(angles), np.sin(angles), rect, 0,
                        len(rect), int(self_index), float(range_max))
    return ranges
