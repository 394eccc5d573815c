"""A car's outline in base_link and a starting grid of several cars (pure geometry on the vehicle
parameters; the engine's collision checks, ``rcsim run --cars``, ``sim_node`` and the Gazebo launch
all use these).

The outline is the convex hull of chassis box and wheels: a rectangle of length max(chassis,
L + 2 r) and width max(chassis, W + w), centred half a wheelbase ahead of base_link (the rear axle
centre), where the chassis box sits. A starting grid puts car i straight behind car i - 1 along
the first car's heading, its outline's front ``gap`` behind the rear of car i - 1's outline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.params import VehicleParams

__all__ = ['GRID_GAP', 'Footprint', 'footprint_from_params', 'grid_starts']

FloatArray = NDArray[np.float64]
#: Free distance between consecutive cars of a starting grid [m].
GRID_GAP = 0.5


@dataclass(frozen=True)
class Footprint:
    """Car outline in base_link: rectangle centred at (center_x, 0) with half sizes [m]."""

    center_x: float
    half_length: float
    half_width: float


def footprint_from_params(params: VehicleParams) -> Footprint:
    """Convex outline of chassis box and wheels: length max(chassis, L + 2 r), width max(chassis, W
    + w).

    Centred half a wheelbase ahead of base_link (the rear axle centre), where the chassis box sits.
    """
    g = params.geometry
    length = max(g.chassis_length, g.wheelbase + 2.0 * g.wheel_radius)
    width = max(g.chassis_width, g.track_width + g.wheel_width)
    return Footprint(0.5 * g.wheelbase, 0.5 * length, 0.5 * width)


def grid_starts(first: Sequence[float], params: Sequence[VehicleParams],
                gap: float = GRID_GAP) -> FloatArray:
    """Base_link poses (N, 3): car 0 at ``first``, each next car straight behind the previous
    one along its heading with ``gap`` metres free between their footprints."""
    x0, y0, yaw = (float(v) for v in first)
    c, s = math.cos(yaw), math.sin(yaw)
    feet = [footprint_from_params(p) for p in params]
    poses = np.empty((len(params), 3))
    along = 0.0  # base_link of car i along the heading from car 0's
    for i, f in enumerate(feet):
        if i:
            prev = feet[i - 1]
            rear = along + prev.center_x - prev.half_length
            along = rear - gap - (f.center_x + f.half_length)
        poses[i] = (x0 + along * c, y0 + along * s, yaw)
    return poses
