"""Occupancy-grid geometry for the compiled kernels: exact ray casting and footprint contacts.

The walls of a :class:`~rc_sim_engine.world.track_map.OccupancyMap` are its wall cells, solid
squares of side ``resolution``. :class:`MapGrid` holds them padded by one cell (the outside of the
image, treated like unknown cells) together with a Euclidean distance transform used to skip free
space.

Exact ray casting (:func:`cast_grid_exact`): the cell traversal of Amanatides & Woo, *A Fast Voxel
Traversal Algorithm for Ray Tracing* (Eurographics 1987): from the ray origin, step to whichever
of the next vertical or horizontal cell boundary is nearer (``t_max_x``, ``t_max_y``, increments
``t_delta = 1 / |d|``) until a wall cell is entered; the range is the ray parameter of that
boundary, so it is exact for the square cells. Free space is skipped conservatively (sphere
tracing): a point in a cell whose centre lies ``D`` cells from the nearest wall-cell centre is at
least ``D - sqrt(2)`` cells from any wall square (half a cell diagonal at each end), so the ray
advances by that much without missing a wall.

Footprint contact (:func:`grid_contacts`): the car rectangle against every wall square under its
bounding box by the separating-axis test of :mod:`rc_sim_engine.world.collision` (deepest square
wins); the distance transform rejects cars far from walls in O(1).
"""

from __future__ import annotations

from dataclasses import dataclass
import math

from numba import njit, prange
import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.compiled import cache as _jit_cache  # noqa: F401  (must run before any cached kernel loads)
from rc_sim_engine.world.collision import _rect_contact
from rc_sim_engine.world.track_map import OccupancyMap, check_unknown_policy

__all__ = ['GEO_SIZE', 'MapGrid', 'cast_grid_exact', 'grid_contacts', 'grid_gap']

FloatArray = NDArray[np.float64]
_SQRT2 = math.sqrt(2.0)
#: Layout of the packed geometry row ``geo``: origin x, y of the PADDED grid, cos/sin of the map
#: yaw, resolution, 1/resolution, map yaw.
GEO_OX, GEO_OY, GEO_COS, GEO_SIN, GEO_RES, GEO_INV_RES, GEO_YAW = range(7)
GEO_SIZE = 7


@dataclass(frozen=True)
class MapGrid:
    """Padded wall grid + free-space skip distances, ready for the kernels.

    Attributes:
        wall: (H + 2, W + 2) uint8, 1 = wall; the one-cell frame is the outside of the image.
        skip: (H + 2, W + 2) float32, conservative free distance [cells] from any point of a cell
            to the nearest wall square (0 on and next to walls).
        geo: (GEO_SIZE,) packed frame: see ``GEO_*``.
        outside_is_wall: whether rays leaving the image hit (unknown = occupied) or escape.
    """

    wall: NDArray[np.uint8]
    skip: NDArray[np.float32]
    geo: FloatArray
    outside_is_wall: bool
    name: str = 'map'

    @classmethod
    def from_map(cls, occ: OccupancyMap, unknown: str = 'occupied') -> MapGrid:
        """Wall grid of ``occ`` (unknown cells and the outside are walls iff
        ``unknown='occupied'``)."""
        from scipy.ndimage import distance_transform_edt

        check_unknown_policy(unknown)
        outside = unknown == 'occupied'
        h, w = occ.shape
        wall = np.full((h + 2, w + 2), 1 if outside else 0, dtype=np.uint8)
        wall[1:-1, 1:-1] = occ.walls(unknown)
        if wall.any():
            dist = distance_transform_edt(wall == 0)
            skip = np.maximum(dist - _SQRT2, 0.0).astype(np.float32)
        else:
            skip = np.full(wall.shape, float(h + w + 4), dtype=np.float32)
        ox, oy, yaw = occ.origin
        c, s = math.cos(yaw), math.sin(yaw)
        res = occ.resolution
        geo = np.array([ox - res * (c - s), oy - res * (s + c), c, s, res, 1.0 / res, yaw])
        return cls(np.ascontiguousarray(wall), np.ascontiguousarray(skip), geo, outside,
                   occ.name)

    @property
    def resolution(self) -> float:
        """Cell size [m]."""
        return float(self.geo[GEO_RES])

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        """(row, col) in the padded grid of a world point."""
        u, v = _to_grid(self.geo, x, y)
        return math.floor(v), math.floor(u)

    def center_of(self, row: int, col: int) -> tuple[float, float]:
        """World (x, y) of the centre of padded cell (row, col)."""
        g = self.geo
        u = (col + 0.5) * g[GEO_RES]
        v = (row + 0.5) * g[GEO_RES]
        return (g[GEO_OX] + g[GEO_COS] * u - g[GEO_SIN] * v,
                g[GEO_OY] + g[GEO_SIN] * u + g[GEO_COS] * v)


@njit(cache=True, inline='always')
def floor_int(v: float) -> int:
    """``floor`` as an integer (numba types ``math.floor`` of a float as a float)."""
    return int(math.floor(v))  # noqa: RUF046 (numba typing)


@njit(cache=True, inline='always')
def _to_grid(geo: FloatArray, x: float, y: float) -> tuple[float, float]:
    """World point -> continuous padded-grid coordinates (u along columns, v along rows)
    [cells]."""
    dx = x - geo[GEO_OX]
    dy = y - geo[GEO_OY]
    return ((geo[GEO_COS] * dx + geo[GEO_SIN] * dy) * geo[GEO_INV_RES],
            (-geo[GEO_SIN] * dx + geo[GEO_COS] * dy) * geo[GEO_INV_RES])


@njit(cache=True)
def ray_exact_axis(wall: NDArray[np.uint8], skip: NDArray[np.float32], u0: float, v0: float,
                   du: float, dv: float, t_cap: float) -> tuple[float, int]:
    """Exact distance [cells] along the unit grid direction (du, dv) from (u0, v0) to the first
    wall square, and the axis of the cell edge hit (0: an edge u = const, 1: v = const);
    ``(inf, -1)`` when none within ``t_cap`` cells (or the ray leaves the grid)."""
    rows = wall.shape[0]
    cols = wall.shape[1]
    t = 0.0
    step_u = 1 if du > 0.0 else -1
    step_v = 1 if dv > 0.0 else -1
    dt_u = abs(1.0 / du) if du != 0.0 else math.inf
    dt_v = abs(1.0 / dv) if dv != 0.0 else math.inf
    while t <= t_cap:
        pu = u0 + t * du
        pv = v0 + t * dv
        cu = floor_int(pu)
        cv = floor_int(pv)
        if cu < 0 or cv < 0 or cu >= cols or cv >= rows:
            return math.inf, -1
        if wall[cv, cu]:  # started inside a wall, or a skip ended exactly on its boundary
            axis = 0 if abs(pu - round(pu)) <= abs(pv - round(pv)) else 1
            return t, axis
        s = skip[cv, cu]
        if s > 1.0:  # sphere tracing through open space
            t += s
            continue
        # Amanatides-Woo traversal for a few cells from the current point
        if du > 0.0:
            t_max_u = t + (cu + 1 - pu) * dt_u
        elif du < 0.0:
            t_max_u = t + (pu - cu) * dt_u
        else:
            t_max_u = math.inf
        if dv > 0.0:
            t_max_v = t + (cv + 1 - pv) * dt_v
        elif dv < 0.0:
            t_max_v = t + (pv - cv) * dt_v
        else:
            t_max_v = math.inf
        for _ in range(16):
            if t_max_u < t_max_v:
                t = t_max_u
                cu += step_u
                t_max_u += dt_u
                axis = 0
            else:
                t = t_max_v
                cv += step_v
                t_max_v += dt_v
                axis = 1
            if t > t_cap:
                return math.inf, -1
            if cu < 0 or cv < 0 or cu >= cols or cv >= rows:
                return math.inf, -1
            if wall[cv, cu]:
                return t, axis
        # continue (skip or traverse) from the entry point of the current cell
    return math.inf, -1


@njit(cache=True)
def ray_exact(wall: NDArray[np.uint8], skip: NDArray[np.float32], u0: float, v0: float,
              du: float, dv: float, t_cap: float) -> float:
    """Exact distance [cells] to the first wall square (:func:`ray_exact_axis` without the
    axis)."""
    return ray_exact_axis(wall, skip, u0, v0, du, dv, t_cap)[0]


@njit(cache=True)
def scan_exact(wall: NDArray[np.uint8], skip: NDArray[np.float32], geo: FloatArray, x: float,
               y: float, heading: float, cos_beam: FloatArray, sin_beam: FloatArray,
               range_max: float, out: FloatArray) -> None:
    """Ranges [m] of every beam (``cos/sin_beam`` in the sensor frame) from (x, y, heading);
    ``inf`` beyond ``range_max``. Exact for the square wall cells."""
    u0, v0 = _to_grid(geo, x, y)
    # beam direction in the grid frame: sensor heading minus the map yaw
    rel = heading - geo[GEO_YAW]
    ch = math.cos(rel)
    sh = math.sin(rel)
    t_cap = range_max * geo[GEO_INV_RES]
    res = geo[GEO_RES]
    for i in range(cos_beam.shape[0]):
        du = ch * cos_beam[i] - sh * sin_beam[i]
        dv = sh * cos_beam[i] + ch * sin_beam[i]
        out[i] = ray_exact(wall, skip, u0, v0, du, dv, t_cap) * res


def cast_grid_exact(grid: MapGrid, x: float, y: float, heading: float, angles: FloatArray,
                    range_max: float = math.inf, range_min: float = 0.0) -> FloatArray:
    """Exact ranges [m] of beams at ``angles`` (sensor frame) from a sensor at (x, y, heading).

    REP 117 like :func:`rc_sim_engine.world.raycast.cast_rays`: ``+inf`` when nothing is within
    ``range_max``, ``-inf`` for a hit closer than ``range_min``.
    """
    out = np.empty(len(angles))
    cap = range_max if math.isfinite(range_max) else 1e9
    scan_exact(grid.wall, grid.skip, grid.geo, float(x), float(y), float(heading),
               np.cos(angles), np.sin(angles), cap, out)
    out[out > range_max] = math.inf
    out[out < range_min] = -math.inf
    return out


# --------------------------------------------------------------------------- footprints
@njit(cache=True)
def footprint_gap(skip: NDArray[np.float32], geo: FloatArray, px: float, py: float,
                  reach: float) -> float:
    """Lower bound [m] of the gap between a disc (centre, radius ``reach``) and the walls."""
    u, v = _to_grid(geo, px, py)
    cu = floor_int(u)
    cv = floor_int(v)
    if cu < 0 or cv < 0 or cv >= skip.shape[0] or cu >= skip.shape[1]:
        return -reach
    return skip[cv, cu] * geo[GEO_RES] - reach


@njit(cache=True)
def footprint_contact(wall: NDArray[np.uint8], skip: NDArray[np.float32], geo: FloatArray,
                      px: float, py: float, pyaw: float, hx: float,
                      hy: float) -> tuple[float, float, float]:
    """Deepest overlap (depth [m], normal x, y from wall to car) of the rectangle centred at
    (px, py) with yaw ``pyaw`` and half sizes (hx, hy) with any wall square; depth <= 0: free."""
    reach = math.sqrt(hx * hx + hy * hy)
    gap = footprint_gap(skip, geo, px, py, reach)
    if gap > 0.0:
        return -gap, 0.0, 0.0
    res = geo[GEO_RES]
    half = 0.5 * res
    u, v = _to_grid(geo, px, py)
    r_cells = reach * geo[GEO_INV_RES] + 1.0
    c0 = max(floor_int(u - r_cells), 0)
    c1 = min(floor_int(u + r_cells), wall.shape[1] - 1)
    r0 = max(floor_int(v - r_cells), 0)
    r1 = min(floor_int(v + r_cells), wall.shape[0] - 1)
    best = 0.0
    nx = 0.0
    ny = 0.0
    yaw = geo[GEO_YAW]
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            if not wall[r, c]:
                continue
            cu = (c + 0.5) * res
            cv = (r + 0.5) * res
            bx = geo[GEO_OX] + geo[GEO_COS] * cu - geo[GEO_SIN] * cv
            by = geo[GEO_OY] + geo[GEO_SIN] * cu + geo[GEO_COS] * cv
            d, ex, ey = _rect_contact(px, py, pyaw, hx, hy, bx, by, yaw, half, half)
            if d > best:
                best = d
                nx = ex
                ny = ey
    return best, nx, ny


@njit(cache=True, parallel=True)
def _contacts_kernel(wall: NDArray[np.uint8], skip: NDArray[np.float32], geo: FloatArray,
                     x: FloatArray, y: FloatArray, yaw: FloatArray, fp: FloatArray,
                     out: FloatArray) -> None:
    for i in prange(x.shape[0]):
        c = math.cos(yaw[i])
        s = math.sin(yaw[i])
        px = x[i] + fp[i, 0] * c
        py = y[i] + fp[i, 0] * s
        d, nx, ny = footprint_contact(wall, skip, geo, px, py, yaw[i], fp[i, 1], fp[i, 2])
        out[i, 0] = d
        out[i, 1] = nx
        out[i, 2] = ny


def grid_contacts(grid: MapGrid, x: FloatArray, y: FloatArray, yaw: FloatArray,
                  footprints: FloatArray) -> FloatArray:
    """(N, 3) rows ``depth, normal_x, normal_y`` of N cars at base_link poses against the walls.

    ``footprints`` (N, 3) rows ``center_x, half_length, half_width``
    (:func:`rc_sim_engine.world.collision.footprint_from_params`). depth > 0: contact (moving the
    car by ``depth * normal`` frees it from the deepest wall square); depth <= 0: free.
    """
    n = len(x)
    out = np.empty((n, 3))
    _contacts_kernel(grid.wall, grid.skip, grid.geo, np.ascontiguousarray(x, dtype=np.float64),
                     np.ascontiguousarray(y, dtype=np.float64),
                     np.ascontiguousarray(yaw, dtype=np.float64),
                     np.ascontiguousarray(footprints, dtype=np.float64).reshape(n, 3), out)
    return out


def grid_gap(grid: MapGrid, x: float, y: float, reach: float) -> float:
    """Conservative gap [m] between a disc of radius ``reach`` at (x, y) and the walls."""
    return float(footprint_gap(grid.skip, grid.geo, float(x), float(y), float(reach)))
