"""Exact 2D lidar ray casting against line segments and circles (numba, compiled once and cached).

For a beam from origin o with unit direction d and a segment p0 + u (p1 - p0), u in [0, 1]:
``t = (w x e) / (d x e)``, ``u = (w x d) / (d x e)`` with ``w = p0 - o``, ``e = p1 - p0`` and
``a x b`` the 2D cross product; a hit needs ``t >= 0`` and ``0 <= u <= 1``. For a circle (c, r):
``t = b -+ sqrt(b^2 - |w|^2 + r^2)`` with ``w = c - o``, ``b = d . w``; the smallest non-negative
root is the hit, so a ray that starts inside a circle (a ring wall around the car) hits its far
side.

Angular culling keeps it O(obstacles + hit beams) instead of O(obstacles x beams): each segment is
seen from o under the angular interval between its end points (shorter way round, < pi), each
circle under ``atan2(w) +- asin(r / |w|)``; only the evenly spaced beams inside that interval are
intersected (F1TENTH gym instead marches rays through a distance transform of a map image, which is
approximate).

Ranges follow REP 117 and gz: no return within ``range_max`` -> ``+inf``; a hit closer than
``range_min`` -> ``-inf``.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

from numba import njit
import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.world.sdf import World

__all__ = ['BeamFan', 'cast_rays', 'cast_rays_world']

FloatArray = NDArray[np.float64]

_TWO_PI = 2.0 * math.pi
_ANGLE_MARGIN = 1e-9  # rad: beams this close outside an obstacle's interval are tested too
_U_TOLERANCE = 1e-12  # segment parameter slack so shared corners never leak a beam
_NO_BUFFER = np.zeros(1)  # placeholder when incidence angles are not wanted


@dataclass(frozen=True)
class BeamFan:
    """Evenly spaced beams in the sensor frame: angle_i = angle_min + i * angle_increment."""

    angle_min: float
    angle_increment: float
    n_beams: int

    @property
    def angles(self) -> FloatArray:
        """(B,) beam angles in the sensor frame [rad]."""
        return self.angle_min + self.angle_increment * np.arange(self.n_beams, dtype=np.float64)


@njit(cache=True)
def _segment_hit(ox: float, oy: float, c: float, s: float,
                 x0: float, y0: float, x1: float, y1: float) -> float:
    ex = x1 - x0
    ey = y1 - y0
    denom = c * ey - s * ex
    if denom == 0.0:
        return math.inf
    wx = x0 - ox
    wy = y0 - oy
    t = (wx * ey - wy * ex) / denom
    u = (wx * s - wy * c) / denom
    if t >= 0.0 and -_U_TOLERANCE <= u <= 1.0 + _U_TOLERANCE:
        return t
    return math.inf


@njit(cache=True)
def _beam_range(u0: float, length: float, inc: float, n: int) -> tuple[int, int, int, int]:
    """Beam index ranges [a0, a1] and [b0, b1] whose relative angle lies in [u0, u0 + length]."""
    lo = u0 - _ANGLE_MARGIN
    hi = u0 + length + _ANGLE_MARGIN
    a0 = max(int(math.ceil(lo / inc)), 0)  # noqa: RUF046 (numba typing)
    a1 = min(int(math.floor(hi / inc)), n - 1)  # noqa: RUF046 (numba typing)
    b0 = max(int(math.ceil((lo - _TWO_PI) / inc)), 0)  # noqa: RUF046 (numba typing)
    b1 = min(int(math.floor((hi - _TWO_PI) / inc)), n - 1)  # noqa: RUF046 (numba typing)
    return a0, a1, b0, b1


@njit(cache=True)
def _cast_kernel(ox: float, oy: float, heading: float, angle_min: float, inc: float,
                 cos_beam: FloatArray, sin_beam: FloatArray, segments: FloatArray,
                 circles: FloatArray, cull_back_faces: bool, out: FloatArray,
                 want_cos: bool, cos_out: FloatArray) -> None:
    """Nearest hit per beam; obstacles are first moved into the sensor frame (origin, x along the
    heading). With ``want_cos``, ``cos_out`` receives cos(incidence) of each nearest hit:
    |d x e| / |e| on a segment, sqrt(b^2 - |w|^2 + r^2) / r on a circle.
    """
    n = cos_beam.shape[0]
    ch = math.cos(heading)
    sh = math.sin(heading)
    for i in range(n):
        out[i] = math.inf
    cull = inc > 0.0
    for k in range(segments.shape[0]):
        ax = segments[k, 0] - ox
        ay = segments[k, 1] - oy
        bx = segments[k, 2] - ox
        by = segments[k, 3] - oy
        # edges of counter-clockwise polygons face outwards on their right: skip those facing away
        if cull_back_faces and (bx - ax) * (-ay) - (by - ay) * (-ax) >= 0.0:
            continue
        x0 = ch * ax + sh * ay
        y0 = -sh * ax + ch * ay
        x1 = ch * bx + sh * by
        y1 = -sh * bx + ch * by
        ex = x1 - x0
        ey = y1 - y0
        p0 = math.atan2(y0, x0)
        p1 = math.atan2(y1, x1)
        sweep = (p1 - p0 + math.pi) % _TWO_PI - math.pi
        if cull and abs(sweep) < math.pi - 1e-6:
            # a beam inside the segment's angular interval (< pi) meets it at t = (w x e)/(d x e)
            cross_we = x0 * ey - y0 * ex
            inv_len = 1.0 / math.sqrt(ex * ex + ey * ey) if want_cos else 0.0
            start = p0 if sweep >= 0.0 else p1
            u0 = (start - angle_min) % _TWO_PI
            a0, a1, b0, b1 = _beam_range(u0, abs(sweep), inc, n)
            for part in range(2):
                lo = a0 if part == 0 else b0
                hi = a1 if part == 0 else b1
                for i in range(lo, hi + 1):
                    denom = cos_beam[i] * ey - sin_beam[i] * ex
                    if denom != 0.0:
                        t = cross_we / denom
                        if 0.0 <= t < out[i]:
                            out[i] = t
                            if want_cos:
                                cos_out[i] = min(abs(denom) * inv_len, 1.0)
        else:  # the segment's line passes (almost) through the sensor: test every beam fully
            for i in range(n):
                t = _segment_hit(0.0, 0.0, cos_beam[i], sin_beam[i], x0, y0, x1, y1)
                if t < out[i]:
                    out[i] = t
                    if want_cos:
                        length = math.sqrt(ex * ex + ey * ey)
                        cross = abs(cos_beam[i] * ey - sin_beam[i] * ex)
                        cos_out[i] = min(cross / length, 1.0) if length > 0.0 else 1.0
    for k in range(circles.shape[0]):
        wx0 = circles[k, 0] - ox
        wy0 = circles[k, 1] - oy
        r = circles[k, 2]
        wx = ch * wx0 + sh * wy0
        wy = -sh * wx0 + ch * wy0
        d2 = wx * wx + wy * wy
        c0 = d2 - r * r
        if cull and c0 > 0.0:
            half = math.asin(r / math.sqrt(d2))
            u0 = (math.atan2(wy, wx) - half - angle_min) % _TWO_PI
            a0, a1, b0, b1 = _beam_range(u0, 2.0 * half, inc, n)
        else:
            a0, a1, b0, b1 = 0, n - 1, 0, -1
        for part in range(2):
            lo = a0 if part == 0 else b0
            hi = a1 if part == 0 else b1
            for i in range(lo, hi + 1):
                b = cos_beam[i] * wx + sin_beam[i] * wy
                disc = b * b - c0
                if disc < 0.0:
                    continue
                root = math.sqrt(disc)
                t = b - root
                if t < 0.0:
                    t = b + root
                if 0.0 <= t < out[i]:
                    out[i] = t
                    if want_cos:
                        cos_out[i] = min(root / r, 1.0)


@njit(cache=True)
def _limit_kernel(out: FloatArray, range_min: float, range_max: float) -> None:
    for i in range(out.shape[0]):
        if out[i] > range_max:
            out[i] = math.inf
        elif out[i] < range_min:
            out[i] = -math.inf


def cast_rays(origin_x: float, origin_y: float, heading: float, fan: BeamFan,
              segments: FloatArray, circles: FloatArray, range_min: float = 0.0,
              range_max: float = math.inf, *, out: FloatArray | None = None,
              tables: tuple[FloatArray, FloatArray] | None = None,
              cull_back_faces: bool = False,
              incidence_out: FloatArray | None = None) -> FloatArray:
    """Ranges (B,) of the beams of ``fan`` cast from a sensor at (x, y) with yaw ``heading``.

    Args:
        segments: (S, 4) ``x0, y0, x1, y1`` in the world frame [m].
        cull_back_faces: the segments are edges of closed counter-clockwise polygons (as
            :meth:`World.segments` returns them): skip edges facing away from the sensor, which
            the polygon's front edges always hide (halves the work).
        incidence_out: optional (B,) buffer that receives the incidence angle of each beam's hit
            [rad] (0 = along the surface normal; NaN where nothing is hit).
        circles: (C, 3) ``cx, cy, r`` [m] (solid discs and thin rings alike).
        out: optional (B,) float64 buffer reused between scans.
        tables: optional precomputed ``(cos(fan.angles), sin(fan.angles))``.
    """
    if tables is None:
        angles = fan.angles
        tables = (np.cos(angles), np.sin(angles))
    if out is None:
        out = np.empty(fan.n_beams, dtype=np.float64)
    _cast_kernel(float(origin_x), float(origin_y), float(heading), fan.angle_min,
                 fan.angle_increment if fan.n_beams > 1 else 0.0, tables[0], tables[1],
                 np.ascontiguousarray(segments, dtype=np.float64).reshape(-1, 4),
                 np.ascontiguousarray(circles, dtype=np.float64).reshape(-1, 3),
                 bool(cull_back_faces), out, incidence_out is not None,
                 incidence_out if incidence_out is not None else _NO_BUFFER)
    if incidence_out is not None:
        hit = np.isfinite(out)
        np.arccos(incidence_out, out=incidence_out, where=hit)
        incidence_out[~hit] = np.nan
    _limit_kernel(out, float(range_min), float(range_max))
    return out


def cast_rays_world(world: World, origin_x: float, origin_y: float, heading: float,
                    fan: BeamFan, range_min: float = 0.0, range_max: float = math.inf,
                    z: float | None = None) -> FloatArray:
    """Convenience: :func:`cast_rays` against a :class:`~rc_sim_engine.world.sdf.World` at height
    ``z``."""
    return cast_rays(origin_x, origin_y, heading, fan, world.segments(z), world.round_obstacles(z),
                     range_min, range_max, cull_back_faces=True)
