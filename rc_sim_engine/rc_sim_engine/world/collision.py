"""Car footprint (oriented rectangle) against the world's boxes, discs and ring walls.

Generalises the circle/rectangle distance (the plane around a rectangle split into edge
and corner zones; here written as a clamp in the rectangle frame, which selects the same zone):

* disc (c, r) vs rectangle: q = clamp(R^T (c - p), -h, h) is the closest rectangle point;
  contact when |R^T (c - p) - q| < r, depth = r - distance (centre inside: r + distance to the
  nearest side);
* box vs rectangle: separating axis theorem on the four edge normals; the axis of least overlap
  gives the depth and the normal (minimum translation vector);
* ring wall (thin circle of radius R) vs rectangle: contact when d_min < R < d_max, the closest and
  farthest distances of the rectangle to the centre; the car is pushed to the side needing less
  motion.

Each contact reports the depth [m] and the unit normal pointing from the obstacle to the car:
moving the car by ``depth * normal`` separates them. :func:`footprint_from_params` derives the
footprint from vehicle.yaml. Responses (``stop``, ``bounce``, ``ignore``) are applied by the
simulator.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

from numba import njit
import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.footprint import Footprint, footprint_from_params
from rc_sim_engine.world.sdf import World

__all__ = [
    'COLLISION_RESPONSES',
    'Contact',
    'Footprint',
    'WorldArrays',
    'box_trig',
    'check_cars',
    'check_response',
    'clearance',
    'clearance_trig',
    'deepest_contacts',
    'footprint_contact',
    'footprint_from_params',
]

FloatArray = NDArray[np.float64]
COLLISION_RESPONSES = ('stop', 'bounce', 'ignore')
KIND_NAMES = ('box', 'disc', 'ring')


@dataclass(frozen=True)
class WorldArrays:
    """Contiguous obstacle arrays for the kernels (see :class:`~rc_sim_engine.world.sdf.World`)."""

    boxes: FloatArray   # (Nb, 5) cx, cy, yaw, hx, hy
    discs: FloatArray   # (Nc, 3) cx, cy, r
    rings: FloatArray   # (Nr, 3) cx, cy, r

    @classmethod
    def from_world(cls, world: World) -> WorldArrays:
        """All obstacles regardless of height (the car body meets anything standing on the
        ground)."""
        return cls(np.ascontiguousarray(world.boxes, dtype=np.float64).reshape(-1, 5),
                   np.ascontiguousarray(world.circles, dtype=np.float64).reshape(-1, 3),
                   np.ascontiguousarray(world.rings, dtype=np.float64).reshape(-1, 3))


@dataclass(frozen=True)
class Contact:
    """Deepest contact of one car: obstacle kind (0 box, 1 disc, 2 ring) and index, depth,
    normal."""

    kind: int
    index: int
    depth: float
    normal_x: float
    normal_y: float

    @property
    def kind_name(self) -> str:
        """``box``, ``disc`` or ``ring``."""
        return KIND_NAMES[self.kind]


@njit(cache=True)
def _rect_contact(px: float, py: float, pyaw: float, hx: float, hy: float,
                  bx: float, by: float, byaw: float, bhx: float, bhy: float
                  ) -> tuple[float, float, float]:
    """SAT overlap of rectangles P (car) and B; returns (depth, nx, ny), depth <= 0 when apart."""
    ca = math.cos(pyaw)
    sa = math.sin(pyaw)
    cb = math.cos(byaw)
    sb = math.sin(byaw)
    dx = px - bx
    dy = py - by
    best = math.inf
    nx = 0.0
    ny = 0.0
    for k in range(4):
        if k == 0:
            ax, ay = ca, sa
        elif k == 1:
            ax, ay = -sa, ca
        elif k == 2:
            ax, ay = cb, sb
        else:
            ax, ay = -sb, cb
        r_p = hx * abs(ca * ax + sa * ay) + hy * abs(-sa * ax + ca * ay)
        r_b = bhx * abs(cb * ax + sb * ay) + bhy * abs(-sb * ax + cb * ay)
        proj = dx * ax + dy * ay
        overlap = r_p + r_b - abs(proj)
        if overlap <= 0.0:
            return overlap, 0.0, 0.0
        if overlap < best:
            best = overlap
            sign = 1.0 if proj >= 0.0 else -1.0
            nx = sign * ax
            ny = sign * ay
    return best, nx, ny


@njit(cache=True)
def _disc_contact(px: float, py: float, pyaw: float, hx: float, hy: float,
                  cx: float, cy: float, r: float) -> tuple[float, float, float]:
    c = math.cos(pyaw)
    s = math.sin(pyaw)
    wx = cx - px
    wy = cy - py
    lx = c * wx + s * wy       # disc centre in the rectangle frame
    ly = -s * wx + c * wy
    qx = min(max(lx, -hx), hx)
    qy = min(max(ly, -hy), hy)
    ex = qx - lx
    ey = qy - ly
    dist = math.sqrt(ex * ex + ey * ey)
    if dist > 0.0:
        depth = r - dist
        nlx = ex / dist
        nly = ey / dist
    else:  # centre inside the rectangle: leave through the nearest side
        gap_x = hx - abs(lx)
        gap_y = hy - abs(ly)
        if gap_x < gap_y:
            depth = r + gap_x
            nlx = -1.0 if lx >= 0.0 else 1.0
            nly = 0.0
        else:
            depth = r + gap_y
            nlx = 0.0
            nly = -1.0 if ly >= 0.0 else 1.0
    return depth, c * nlx - s * nly, s * nlx + c * nly


@njit(cache=True)
def _ring_contact(px: float, py: float, pyaw: float, hx: float, hy: float,
                  cx: float, cy: float, r: float) -> tuple[float, float, float]:
    c = math.cos(pyaw)
    s = math.sin(pyaw)
    wx = cx - px
    wy = cy - py
    lx = c * wx + s * wy
    ly = -s * wx + c * wy
    qx = min(max(lx, -hx), hx)
    qy = min(max(ly, -hy), hy)
    d_min = math.sqrt((qx - lx) ** 2 + (qy - ly) ** 2)
    fx = -hx if lx > 0.0 else hx   # farthest corner from the centre
    fy = -hy if ly > 0.0 else hy
    d_max = math.sqrt((fx - lx) ** 2 + (fy - ly) ** 2)
    if not (d_min < r < d_max):
        return min(r - d_min, d_max - r), 0.0, 0.0
    inward = d_max - r
    outward = r - d_min
    if inward <= outward or d_min == 0.0:
        nlx = (lx - fx) / d_max
        nly = (ly - fy) / d_max
        depth = inward
    else:
        nlx = (qx - lx) / d_min
        nly = (qy - ly) / d_min
        depth = outward
    return depth, c * nlx - s * nly, s * nlx + c * nly


@njit(cache=True)
def _deepest_kernel(px: FloatArray, py: FloatArray, pyaw: FloatArray, hx: float, hy: float,
                    boxes: FloatArray, discs: FloatArray, rings: FloatArray,
                    kind: NDArray[np.int64], index: NDArray[np.int64], depth: FloatArray,
                    normal: FloatArray) -> None:
    for n in range(px.shape[0]):
        best = 0.0
        kind[n] = -1
        index[n] = -1
        normal[n, 0] = 0.0
        normal[n, 1] = 0.0
        reach = math.sqrt(hx * hx + hy * hy)
        for k in range(boxes.shape[0]):
            bound = reach + math.sqrt(boxes[k, 3] ** 2 + boxes[k, 4] ** 2)
            if abs(px[n] - boxes[k, 0]) > bound or abs(py[n] - boxes[k, 1]) > bound:
                continue
            d, nx, ny = _rect_contact(px[n], py[n], pyaw[n], hx, hy, boxes[k, 0], boxes[k, 1],
                                      boxes[k, 2], boxes[k, 3], boxes[k, 4])
            if d > best:
                best, kind[n], index[n], normal[n, 0], normal[n, 1] = d, 0, k, nx, ny
        for k in range(discs.shape[0]):
            bound = reach + discs[k, 2]
            if abs(px[n] - discs[k, 0]) > bound or abs(py[n] - discs[k, 1]) > bound:
                continue
            d, nx, ny = _disc_contact(px[n], py[n], pyaw[n], hx, hy, discs[k, 0], discs[k, 1],
                                      discs[k, 2])
            if d > best:
                best, kind[n], index[n], normal[n, 0], normal[n, 1] = d, 1, k, nx, ny
        for k in range(rings.shape[0]):
            d, nx, ny = _ring_contact(px[n], py[n], pyaw[n], hx, hy, rings[k, 0], rings[k, 1],
                                      rings[k, 2])
            if d > 0.0 and nx * nx + ny * ny > 0.0 and d > best:
                best, kind[n], index[n], normal[n, 0], normal[n, 1] = d, 2, k, nx, ny
        depth[n] = best


@njit(cache=True)
def _check_kernel(x: FloatArray, y: FloatArray, yaw: FloatArray, center_x: FloatArray,
                  half_length: FloatArray, half_width: FloatArray, boxes: FloatArray,
                  discs: FloatArray, rings: FloatArray, gap: FloatArray,
                  kind: NDArray[np.int64], index: NDArray[np.int64], depth: FloatArray,
                  normal: FloatArray) -> None:
    """Per car: conservative gap (clearance) and, when it is <= 0, the deepest contact."""
    px = np.empty(1)
    py = np.empty(1)
    pyaw = np.empty(1)
    k1 = np.empty(1, dtype=np.int64)
    i1 = np.empty(1, dtype=np.int64)
    d1 = np.empty(1)
    n1 = np.empty((1, 2))
    for n in range(x.shape[0]):
        px[0] = x[n] + center_x[n] * math.cos(yaw[n])
        py[0] = y[n] + center_x[n] * math.sin(yaw[n])
        pyaw[0] = yaw[n]
        reach = math.sqrt(half_length[n] ** 2 + half_width[n] ** 2)
        gap[n] = _clearance_kernel(px, py, boxes, discs, rings) - reach
        kind[n] = -1
        index[n] = -1
        depth[n] = 0.0
        normal[n, 0] = 0.0
        normal[n, 1] = 0.0
        if gap[n] <= 0.0:
            _deepest_kernel(px, py, pyaw, half_length[n], half_width[n], boxes, discs, rings,
                            k1, i1, d1, n1)
            kind[n] = k1[0]
            index[n] = i1[0]
            depth[n] = d1[0]
            normal[n, 0] = n1[0, 0]
            normal[n, 1] = n1[0, 1]


def check_cars(x: FloatArray, y: FloatArray, yaw: FloatArray, footprints: FloatArray,
               world: WorldArrays) -> tuple[FloatArray, NDArray[np.int64], NDArray[np.int64],
                                            FloatArray, FloatArray]:
    """One call for N cars: (gap, kind, index, depth, normal); footprints (N, 3) rows
    ``center_x, half_length, half_width``; contacts are computed only where gap <= 0."""
    n = len(x)
    gap = np.empty(n)
    kind = np.empty(n, dtype=np.int64)
    index = np.empty(n, dtype=np.int64)
    depth = np.empty(n)
    normal = np.empty((n, 2))
    _check_kernel(np.ascontiguousarray(x, dtype=np.float64),
                  np.ascontiguousarray(y, dtype=np.float64),
                  np.ascontiguousarray(yaw, dtype=np.float64), footprints[:, 0],
                  footprints[:, 1], footprints[:, 2], world.boxes, world.discs, world.rings, gap,
                  kind, index, depth, normal)
    return gap, kind, index, depth, normal


def deepest_contacts(x: FloatArray, y: FloatArray, yaw: FloatArray, footprint: Footprint,
                     world: WorldArrays) -> tuple[NDArray[np.int64], NDArray[np.int64], FloatArray,
                                                  FloatArray]:
    """Deepest contact of each of N cars given their base_link poses (N,).

    Returns ``kind`` (N,) (-1: no contact), ``index`` (N,), ``depth`` (N,) [m] and ``normal`` (N,
    2).
    """
    xb = np.asarray(x, dtype=np.float64).reshape(-1)
    yb = np.asarray(y, dtype=np.float64).reshape(-1)
    yawb = np.asarray(yaw, dtype=np.float64).reshape(-1)
    px = xb + footprint.center_x * np.cos(yawb)
    py = yb + footprint.center_x * np.sin(yawb)
    n = len(px)
    kind = np.empty(n, dtype=np.int64)
    index = np.empty(n, dtype=np.int64)
    depth = np.empty(n, dtype=np.float64)
    normal = np.empty((n, 2), dtype=np.float64)
    _deepest_kernel(px, py, yawb, footprint.half_length, footprint.half_width, world.boxes,
                    world.discs, world.rings, kind, index, depth, normal)
    return kind, index, depth, normal


def footprint_contact(x: float, y: float, yaw: float, footprint: Footprint,
                      world: WorldArrays) -> Contact | None:
    """Deepest contact of one car at base_link pose (x, y, yaw), or None when free."""
    kind, index, depth, normal = deepest_contacts(np.array([x]), np.array([y]), np.array([yaw]),
                                                  footprint, world)
    if kind[0] < 0:
        return None
    return Contact(int(kind[0]), int(index[0]), float(depth[0]), float(normal[0, 0]),
                   float(normal[0, 1]))


def check_response(name: str) -> str:
    """Validate a collision response name (one-line ConfigError)."""
    if name not in COLLISION_RESPONSES:
        raise ConfigError(f'unknown collision response {name!r} '
                          f'(choose one of {", ".join(COLLISION_RESPONSES)})')
    return name


@njit(cache=True)
def box_trig(boxes: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(cos yaw, sin yaw) of every box (computed once, not at every clearance query)."""
    c = np.empty(boxes.shape[0])
    s = np.empty(boxes.shape[0])
    for k in range(boxes.shape[0]):
        c[k] = math.cos(boxes[k, 2])
        s[k] = math.sin(boxes[k, 2])
    return c, s


@njit(cache=True)
def clearance_trig(px: FloatArray, py: FloatArray, boxes: FloatArray, box_cos: FloatArray,
                   box_sin: FloatArray, discs: FloatArray, rings: FloatArray) -> float:
    """Smallest distance from any point (px, py) to any obstacle (0 inside a box or disc), with
    the boxes' :func:`box_trig` given."""
    best = math.inf
    for n in range(px.shape[0]):
        for k in range(boxes.shape[0]):
            c = box_cos[k]
            s = box_sin[k]
            wx = px[n] - boxes[k, 0]
            wy = py[n] - boxes[k, 1]
            lx = abs(c * wx + s * wy) - boxes[k, 3]
            ly = abs(-s * wx + c * wy) - boxes[k, 4]
            d = math.sqrt(max(lx, 0.0) ** 2 + max(ly, 0.0) ** 2)
            best = min(best, d)
        for k in range(discs.shape[0]):
            d = math.hypot(px[n] - discs[k, 0], py[n] - discs[k, 1]) - discs[k, 2]
            best = min(best, max(d, 0.0))
        for k in range(rings.shape[0]):
            d = abs(math.hypot(px[n] - rings[k, 0], py[n] - rings[k, 1]) - rings[k, 2])
            best = min(best, d)
    return best


@njit(cache=True)
def _clearance_kernel(px: FloatArray, py: FloatArray, boxes: FloatArray, discs: FloatArray,
                      rings: FloatArray) -> float:
    """Smallest distance from any point (px, py) to any obstacle (0 inside a box or disc)."""
    c, s = box_trig(boxes)
    return clearance_trig(px, py, boxes, c, s, discs, rings)


def clearance(x: FloatArray, y: FloatArray, yaw: FloatArray, footprint: Footprint,
              world: WorldArrays) -> float:
    """Lower bound of the gap between any car footprint and any obstacle [m] (may be < 0).

    Distance from the footprint centre to the nearest obstacle minus the footprint's bounding
    radius sqrt(hl^2 + hw^2): conservative, so a car moving at most ``v`` cannot touch anything for
    ``clearance / v`` seconds (the simulator schedules its collision checks with it).
    """
    yawb = np.asarray(yaw, dtype=np.float64).reshape(-1)
    px = np.asarray(x, dtype=np.float64).reshape(-1) + footprint.center_x * np.cos(yawb)
    py = np.asarray(y, dtype=np.float64).reshape(-1) + footprint.center_x * np.sin(yawb)
    reach = math.hypot(footprint.half_length, footprint.half_width)
    return float(_clearance_kernel(px, py, world.boxes, world.discs, world.rings)) - reach
