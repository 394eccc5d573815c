"""Reference racing policies for the Gymnasium envs (vectorised over cars; numpy only).

* :func:`pure_pursuit`: Coulter, *Implementation of the Pure Pursuit Path Tracking Algorithm*
  (CMU-RI-TR-92-01, 1992): aim at the centre-line point ``lookahead`` metres ahead of the car's
  projection, curvature ``kappa = 2 y_l / l^2`` (``y_l`` the lateral offset of the goal in the car
  frame, ``l`` its distance), steering ``atan(kappa L)``.
* :func:`follow_the_gap`: the reactive "follow the gap" method of Sezer & Gokasan (*A novel
  obstacle avoidance algorithm: Follow the Gap Method*, Robotics and Autonomous Systems 2012) in
  its common racing form: clear a bubble around the nearest return, steer to the middle of the
  widest run of free beams.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.world.centerline import CenterLine

__all__ = ['follow_the_gap', 'pure_pursuit']

FloatArray = NDArray[np.float64]


def pure_pursuit(line: CenterLine, pose: FloatArray, s: FloatArray, *, wheelbase: float,
                 lookahead: float = 1.2, speed: float | FloatArray = 3.0) -> FloatArray:
    """(n, 2) actions (steering angle [rad], speed [m/s]) for cars at base_link ``pose`` (n, 3)
    whose centre-line arc length is ``s`` (n,) (the ``progress`` observation)."""
    pose = np.asarray(pose, dtype=np.float64).reshape(-1, 3)
    gx, gy, _ = line.pose_at(np.asarray(s, dtype=np.float64).reshape(-1) + lookahead)
    dx, dy = gx - pose[:, 0], gy - pose[:, 1]
    yaw = pose[:, 2]
    lateral = -np.sin(yaw) * dx + np.cos(yaw) * dy
    kappa = 2.0 * lateral / np.maximum(dx * dx + dy * dy, 1e-6)
    steer = np.arctan(kappa * wheelbase)
    return np.stack([steer, np.broadcast_to(speed, steer.shape)], axis=1)


def follow_the_gap(scan: FloatArray, angles: FloatArray, *,
                   bubble: float = 0.4, free_range: float = 1.5, speed: float = 2.0,
                   max_steer: float = 0.42) -> FloatArray:
    """(n, 2) actions from scans (n, B) with beam ``angles`` (B,) in the car frame."""
    scan = np.atleast_2d(np.asarray(scan, dtype=np.float64))
    out = np.empty((len(scan), 2))
    step = float(angles[1] - angles[0])
    for i, ranges in enumerate(scan):
        r = ranges.copy()
        k = int(np.argmin(r))
        half = int(np.arctan2(bubble, max(r[k], 1e-3)) / step)
        r[max(k - half, 0):k + half + 1] = 0.0
        free = np.concatenate([[False], r > free_range, [False]])
        edges = np.flatnonzero(np.diff(free.astype(np.int8)))
        starts, ends = edges[::2], edges[1::2]
        if len(starts) == 0:
            out[i] = (0.0, 0.5 * speed)
            continue
        j = int(np.argmax(ends - starts))
        aim = angles[(starts[j] + ends[j] - 1) // 2]
        out[i] = (np.clip(aim, -max_steer, max_steer), speed)
    return out
