"""A small lidar controller for the campaign example (docs/campaigns.md): drive at constant
speed and steer towards the side with more room (the ranges 30-85 degrees left and right of the
nose), the classic "centre between the walls" reflex.

``make(ctx)`` is the factory ``rcsim campaign`` calls once per run (``ctx``: the run's
``RunContext``); it returns ``controller(t, obs) -> (linear_x [m/s], angular_z [rad/s])`` with
angular_z a yaw rate (the spec's ``driver.mode: yaw_rate``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

SPEED_MPS = 1.0
GAIN_PER_M = 3.0      # yaw rate per unit of (left - right) / (left + right), times speed
FAR_M = 10.0          # an out-of-range return (+inf) counts as this far


def make(ctx: Any) -> Callable[[float, Any], tuple[float, float]]:
    """The controller of one run (stateless: the same for every run)."""

    def controller(t: float, obs: Any) -> tuple[float, float]:
        if obs.scan is None or obs.scan_angles is None:
            return 0.0, 0.0
        angles = np.asarray(obs.scan_angles, dtype=np.float64)
        ranges = np.asarray(obs.scan, dtype=np.float64).reshape(-1, len(angles))[0]
        r = np.where(np.isfinite(ranges), ranges, FAR_M)
        left = float(np.median(r[(angles > 0.5) & (angles < 1.5)]))
        right = float(np.median(r[(angles < -0.5) & (angles > -1.5)]))
        balance = (left - right) / max(left + right, 1e-6)
        return SPEED_MPS, SPEED_MPS * GAIN_PER_M * balance

    return controller


def mean_speed(result: Any, ctx: Any) -> float:
    """User metric: mean forward speed [m/s] over the run (odometry of car 0)."""
    odom = result.streams['odom']
    return float(np.mean(odom['vx'][:, 0])) if len(odom.t) else 0.0
