"""Ideal scans of a small synthetic scene (room + round posts) for docs, benchmarks and tests.

Analytic ray casting from the origin of the lidar frame: a ray x = t (cos a, sin a) hits the wall
x = X at t = X / cos a (and likewise for y walls); a circle of centre c and radius R at
t = c.u - sqrt(R^2 - |c|^2 + (c.u)^2) (nearest root). The incidence angle is the angle between the
ray and the surface normal. This is not the engine's ray caster; it only feeds ideal inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ['DEFAULT_POSTS', 'room_scan']

# (x, y, radius) [m] of round posts in the lidar frame
DEFAULT_POSTS: tuple[tuple[float, float, float], ...] = (
    (1.5, 0.6, 0.15), (2.5, -1.2, 0.25), (-1.0, 1.8, 0.2), (0.8, -2.0, 0.1))


def room_scan(angles: NDArray[np.float64], *, x_min: float = -3.0, x_max: float = 5.0,
              y_min: float = -2.5, y_max: float = 3.0,
              posts: Sequence[tuple[float, float, float]] = DEFAULT_POSTS,
              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Ranges [m] and incidence angles [rad] of rays at ``angles`` inside an axis-aligned room."""
    ux, uy = np.cos(angles), np.sin(angles)
    with np.errstate(divide='ignore', invalid='ignore'):
        tx = np.where(ux > 0, x_max / ux, np.where(ux < 0, x_min / ux, np.inf))
        ty = np.where(uy > 0, y_max / uy, np.where(uy < 0, y_min / uy, np.inf))
    ranges = np.minimum(tx, ty)
    incidence = np.where(tx <= ty, np.arccos(np.clip(np.abs(ux), 0.0, 1.0)),
                         np.arccos(np.clip(np.abs(uy), 0.0, 1.0)))
    for cx, cy, radius in posts:
        along = cx * ux + cy * uy
        disc = radius ** 2 - (cx ** 2 + cy ** 2) + along ** 2
        with np.errstate(invalid='ignore'):
            t = along - np.sqrt(disc)
        hit = (disc >= 0) & (t > 0) & (t < ranges)
        hx, hy = t * ux - cx, t * uy - cy
        cos_inc = np.abs(-(hx * ux + hy * uy)) / radius
        ranges = np.where(hit, t, ranges)
        incidence = np.where(hit, np.arccos(np.clip(cos_inc, 0.0, 1.0)), incidence)
    return ranges, incidence
