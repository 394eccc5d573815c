"""Choose a collision-free start pose for a command sequence in a world.

The path a sequence will drive is predicted with the kinematic bicycle (x' = v cos psi,
y' = v sin psi, psi' = v tan(delta) / L) fed with the mapper outputs of the control core
(:func:`rc_sim_control.ackermann.map_sequence`), starting at the origin heading +x. A start pose is
accepted when the conservative clearance (footprint bounding circle to the nearest obstacle,
:func:`rc_sim_engine.world.collision.check_cars`) stays above ``margin`` along the whole path. The
world's documented spawn pose is tried first; otherwise the nearest free pose on a grid (and the
four headings) that lies in the same free region as the spawn pose (reachable from it without
crossing a wall: a flood fill of the free cells of an occupancy grid), so a manoeuvre is never
moved outside the track's outer wall. When no such pose exists the choice says so (``fits`` is
False) and the caller refuses the scenario, naming the world elements that enclose the free space
(:func:`enclosure`); a given start pose that touches an obstacle is named by
:func:`touched_obstacle`.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.params import VehicleParams
from rc_sim_engine.world.collision import WorldArrays, check_cars, footprint_from_params
from rc_sim_engine.world.sdf import World

__all__ = ['Enclosure', 'StartChoice', 'choose_start', 'enclosure', 'free_region', 'path_extent',
           'predicted_path', 'touched_obstacle']

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class StartChoice:
    """Chosen base_link start pose, whether it differs from the preferred one, and its
    clearance."""

    x: float
    y: float
    yaw: float
    moved: bool
    clearance: float
    fits: bool = True


def predicted_path(seq: Any, params: VehicleParams, dt: float = 0.02, *,
                   max_samples: int = 200_000) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Kinematic base_link path (x, y, yaw) of ``seq`` from the origin, heading +x (at most
    ``max_samples`` steps: a very long sequence is predicted with a coarser step)."""
    from rc_sim_control.ackermann import MapperConfig, map_sequence
    from rc_sim_control.commands import sample

    dt = max(dt, float(seq.t[-1]) / max_samples)
    t = np.arange(0.0, float(seq.t[-1]) + dt, dt)
    v_cmd, w_cmd = sample(seq, t)
    mapped = map_sequence(t, v_cmd, w_cmd, MapperConfig.from_vehicle(params, mode=seq.mode))
    v = np.asarray(mapped.wheel_speed) * params.geometry.wheel_radius
    yaw_rate = v * np.tan(np.asarray(mapped.steering_angle)) / params.geometry.wheelbase
    from rc_sim_control.odometry import arc_poses

    return arc_poses(v[:-1] * dt, yaw_rate[:-1] * dt)


def path_extent(seq: Any, params: VehicleParams) -> tuple[float, float]:
    """Length and width [m] of the area the predicted base_link path of ``seq`` sweeps (its
    bounding box in the start frame, plus the car's length and width)."""
    x, y, _ = predicted_path(seq, params)
    g = params.geometry
    return (float(np.ptp(x)) + g.chassis_length, float(np.ptp(y)) + g.chassis_width)


class FreeRegion:
    """Free cells of an occupancy grid connected to a seed point (4-connected flood fill)."""

    def __init__(self, inside: NDArray[np.bool_], x0: float, y0: float, cell: float) -> None:
        self.inside, self.x0, self.y0, self.cell = inside, x0, y0, cell

    def contains(self, x: FloatArray, y: FloatArray) -> NDArray[np.bool_]:
        """True where the points (x, y) [m] lie in the region (False outside the grid)."""
        i = np.floor((np.asarray(y) - self.y0) / self.cell).astype(np.int64)
        j = np.floor((np.asarray(x) - self.x0) / self.cell).astype(np.int64)
        ny, nx = self.inside.shape
        ok = (i >= 0) & (i < ny) & (j >= 0) & (j < nx)
        out = np.zeros(np.shape(i), dtype=bool)
        out[ok] = self.inside[i[ok], j[ok]]
        return out


def free_region(world: World, seed_xy: tuple[float, float],
                bounds: tuple[float, float, float, float], *, cell: float = 0.05,
                max_cells: int = 1_000_000) -> FreeRegion:
    """The free space reachable from ``seed_xy`` within ``bounds`` (x0, x1, y0, y1) [m].

    A cell is occupied when its centre is closer than half a cell diagonal to an obstacle (the
    collision kernel with a point-sized footprint); the grid is coarsened so that it never has more
    than ``max_cells`` cells. Starting from the free cell nearest to the seed, the connected free
    cells are labelled (scipy.ndimage.label).
    """
    from scipy import ndimage

    x0, x1, y0, y1 = bounds
    cell = max(cell, math.sqrt(max(x1 - x0, cell) * max(y1 - y0, cell) / max_cells))
    xs = np.arange(x0 + 0.5 * cell, x1, cell)
    ys = np.arange(y0 + 0.5 * cell, y1, cell)
    gx, gy = np.meshgrid(xs, ys)
    tiny = np.full((gx.size, 3), [0.0, 1e-3, 1e-3])
    gap = check_cars(gx.ravel(), gy.ravel(), np.zeros(gx.size), tiny,
                     WorldArrays.from_world(world))[0]
    free = (gap > 0.75 * cell).reshape(gx.shape)
    labels, _ = ndimage.label(free)
    d2 = (gx - seed_xy[0]) ** 2 + (gy - seed_xy[1]) ** 2
    d2[~free] = np.inf
    k = int(np.argmin(d2))
    seed_label = labels.ravel()[k] if np.isfinite(d2.ravel()[k]) else 0
    inside = labels == seed_label if seed_label else np.zeros_like(free)
    return FreeRegion(inside, x0, y0, cell)


def _path_clearance(px: FloatArray, py: FloatArray, pyaw: FloatArray, starts: FloatArray,
                    foot: FloatArray, world: WorldArrays) -> FloatArray:
    """Minimum clearance along the path for each start pose (C, 3)."""
    c, s = np.cos(starts[:, 2])[:, None], np.sin(starts[:, 2])[:, None]
    wx = starts[:, 0:1] + c * px[None, :] - s * py[None, :]
    wy = starts[:, 1:2] + s * px[None, :] + c * py[None, :]
    wyaw = starts[:, 2:3] + pyaw[None, :]
    rows = np.repeat(foot, wx.size, axis=0)
    gap = check_cars(wx.ravel(), wy.ravel(), wyaw.ravel(), rows, world)[0]
    return gap.reshape(wx.shape).min(axis=1)


def choose_start(world: World, params: VehicleParams, seq: Any,
                 preferred: tuple[float, float, float], *, margin: float = 0.05,
                 spacing: float = 0.5, max_points: int = 150,
                 max_candidates: int = 100_000) -> StartChoice:
    """The preferred pose if the sequence's path stays clear there, else the nearest clear one in
    the preferred pose's free region; ``fits`` is False when there is none. The candidate grid
    has at most ``max_candidates`` points (coarser than ``spacing`` over a large area)."""
    x, y, yaw = predicted_path(seq, params)
    keep = np.unique(np.linspace(0, len(x) - 1, min(len(x), max_points)).astype(int))
    px, py, pyaw = x[keep], y[keep], yaw[keep]
    foot_obj = footprint_from_params(params)
    foot = np.array([[foot_obj.center_x, foot_obj.half_length, foot_obj.half_width]])
    arrays = WorldArrays.from_world(world)
    pref = np.array([preferred], dtype=np.float64)
    if world.n_obstacles == 0:
        return StartChoice(*preferred, moved=False, clearance=math.inf)
    gap0 = float(_path_clearance(px, py, pyaw, pref, foot, arrays)[0])
    if gap0 >= margin:
        return StartChoice(*preferred, moved=False, clearance=gap0)
    reach = float(np.max(np.hypot(px, py))) + 1.0
    x0, x1, y0, y1 = world.bounds(reach)
    spacing = max(spacing, math.sqrt((x1 - x0) * (y1 - y0) / max_candidates))
    gx, gy = np.meshgrid(np.arange(x0, x1 + spacing, spacing),
                         np.arange(y0, y1 + spacing, spacing))
    yaws = preferred[2] + np.array([0.0, 0.5, 1.0, 1.5]) * math.pi
    cand = np.column_stack([np.repeat(gx.ravel(), len(yaws)), np.repeat(gy.ravel(), len(yaws)),
                            np.tile(yaws, gx.size)])
    region = free_region(world, (preferred[0], preferred[1]), (x0, x1, y0, y1))
    cand = cand[region.contains(cand[:, 0], cand[:, 1])]  # never outside the track's walls
    order = np.argsort(np.hypot(cand[:, 0] - preferred[0], cand[:, 1] - preferred[1]),
                       kind='stable')
    cand = cand[order]
    for lo in range(0, len(cand), 64):  # nearest first; stop at the first batch with a free pose
        batch = cand[lo:lo + 64]
        gaps = _path_clearance(px, py, pyaw, batch, foot, arrays)
        ok = np.flatnonzero(gaps >= margin)
        if len(ok):
            k = int(ok[0])
            yaw_k = (float(batch[k, 2]) + math.pi) % (2 * math.pi) - math.pi
            return StartChoice(float(batch[k, 0]), float(batch[k, 1]), yaw_k, moved=True,
                               clearance=float(gaps[k]))
    return StartChoice(*preferred, moved=False, clearance=gap0, fits=False)


@dataclass(frozen=True)
class Enclosure:
    """The free space around a pose that walls close in: its extent and the obstacles around."""

    length: float  # x extent [m]
    width: float   # y extent [m]
    walls: tuple[str, ...]  # names of the obstacles bordering it (world elements)

    def text(self, limit: int = 6) -> str:
        """``'a', 'b' and 3 more``."""
        names = [repr(n) for n in self.walls[:limit]]
        more = len(self.walls) - limit
        return ', '.join(names) + (f' and {more} more' if more > 0 else '')


def enclosure(world: World, seed_xy: tuple[float, float], *, cell: float = 0.05
              ) -> Enclosure | None:
    """The free space reachable from ``seed_xy`` when walls enclose it (its extent and the
    obstacles bordering it), or None when it reaches beyond the world's obstacles (open).

    The free region (:func:`free_region`) is labelled on a grid 1 m larger than the obstacles'
    bounding box: a region that touches the grid's edge is open. Each occupied cell next to the
    region is attributed to the obstacles its cell-sized square touches.
    """
    from scipy import ndimage

    if world.n_obstacles == 0:
        return None
    bounds = world.bounds(1.0)
    region = free_region(world, seed_xy, bounds, cell=cell)
    inside = region.inside
    if not inside.any():
        return Enclosure(0.0, 0.0, ())
    if inside[0, :].any() or inside[-1, :].any() or inside[:, 0].any() or inside[:, -1].any():
        return None
    rows, cols = np.nonzero(inside)
    length = float(cols.max() - cols.min() + 1) * region.cell
    width = float(rows.max() - rows.min() + 1) * region.cell
    border = ndimage.binary_dilation(inside, iterations=2) & ~inside
    bi, bj = np.nonzero(border)
    bx = np.asarray(region.x0 + (bj + 0.5) * region.cell, dtype=np.float64)
    by = np.asarray(region.y0 + (bi + 0.5) * region.cell, dtype=np.float64)
    half = region.cell
    foot = np.tile([0.0, half, half], (len(bx), 1))
    gap, kind, index, _, _ = check_cars(bx, by, np.zeros(len(bx)), foot,
                                        WorldArrays.from_world(world))
    names: dict[str, None] = {}
    for k in np.flatnonzero(gap <= 0.0):
        names.setdefault(world.obstacle_name(int(kind[k]), int(index[k])), None)
    return Enclosure(length, width, tuple(names))


def touched_obstacle(world: World, params: VehicleParams, pose: tuple[float, float, float]
                     ) -> str | None:
    """Name of the obstacle the car's footprint at ``pose`` (base_link) touches, or None."""
    from rc_sim_engine.world.collision import deepest_contacts

    if world.n_obstacles == 0:
        return None
    kind, index, _, _ = deepest_contacts(np.array([pose[0]], dtype=np.float64),
                                         np.array([pose[1]], dtype=np.float64),
                                         np.array([pose[2]], dtype=np.float64),
                                         footprint_from_params(params),
                                         WorldArrays.from_world(world))
    if kind[0] < 0:
        return None
    return world.obstacle_name(int(kind[0]), int(index[0]))
