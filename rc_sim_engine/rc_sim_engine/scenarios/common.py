"""Helpers shared by the engine manoeuvres: extra boxes in a world, car footprint corners, the
racing line of ``basic_track``, the measured pose of an observation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    'FloatArray',
    'footprint_corners',
    'racing_line',
    'with_boxes',
]

FloatArray = npt.NDArray[np.float64]


# --------------------------------------------------------------------------- helpers
def with_boxes(world: Any, boxes: Sequence[tuple[str, float, float, float, float, float, float]]
               ) -> Any:
    """Copy of ``world`` with extra static boxes ``(name, cx, cy, yaw, length, width, height)``."""
    if not boxes:
        return world
    rows = np.array([[cx, cy, yaw, 0.5 * ln, 0.5 * w] for _, cx, cy, yaw, ln, w, _ in boxes])
    zs = np.array([[0.0, h] for *_, h in boxes])
    return replace(world, boxes=np.vstack([world.boxes.reshape(-1, 5), rows]),
                   box_z=np.vstack([world.box_z.reshape(-1, 2), zs]),
                   box_names=(*world.box_names, *(b[0] for b in boxes)))


def footprint_corners(x: npt.ArrayLike, y: npt.ArrayLike, yaw: npt.ArrayLike,
                      footprint: Any) -> FloatArray:
    """(..., 4, 2) corners of the car footprint for base_link poses."""
    xa, ya, yawa = (np.asarray(a, dtype=float)[..., None] for a in (x, y, yaw))
    lx = footprint.center_x + footprint.half_length * np.array([1.0, -1.0, -1.0, 1.0])
    ly = footprint.half_width * np.array([1.0, 1.0, -1.0, -1.0])
    c, s = np.cos(yawa), np.sin(yawa)
    return np.stack([xa + c * lx - s * ly, ya + s * lx + c * ly], axis=-1)


def racing_line() -> Any:
    """Centre line of ``basic_track`` as a :class:`SegmentPath` (from the track spec)."""
    from rc_sim_control.trajectories import SegmentPath
    from rc_sim_description.worlds import TRACKS

    spec = TRACKS['basic_track']
    straight, radius = spec.size
    return SegmentPath.stadium(straight, radius, x0=-0.5 * straight, y0=-radius, yaw0=0.0)


def _pose(obs: Any) -> Any:
    from rc_sim_control.tracking import MeasuredPose

    return MeasuredPose(float(obs.x[0]), float(obs.y[0]), float(obs.yaw[0]), float(obs.vx[0]))
