"""``arc_poses``: the one exact-arc integrator (odometry, parking plans, start placement)."""

from __future__ import annotations

import numpy as np

from rc_sim_control.odometry import arc_poses, integrate_arcs


def test_constant_curvature_steps_land_on_the_circle() -> None:
    radius, n = 2.0, 37
    dpsi = np.full(n, 0.1)
    x, y, yaw = arc_poses(radius * dpsi, dpsi, 1.0, -0.5, 0.3)
    # circle of radius R through (1, -0.5) with heading 0.3, centre to the left
    cx, cy = 1.0 - radius * np.sin(0.3), -0.5 + radius * np.cos(0.3)
    np.testing.assert_allclose(np.hypot(x - cx, y - cy), radius, atol=1e-12)
    np.testing.assert_allclose(yaw, 0.3 + 0.1 * np.arange(n + 1), atol=1e-12)
    np.testing.assert_allclose(x[-1], cx + radius * np.sin(0.3 + 0.1 * n), atol=1e-12)


def test_straight_steps_and_batches() -> None:
    rng = np.random.default_rng(0)
    ds, dpsi = rng.uniform(0.0, 0.1, (3, 50)), rng.uniform(-0.2, 0.2, (3, 50))
    dpsi[1] = 0.0
    x, y, yaw = arc_poses(ds, dpsi, [0.0, 1.0, 2.0], 0.0, 0.0)
    np.testing.assert_allclose(x[1], 1.0 + np.concatenate([[0.0], np.cumsum(ds[1])]))
    np.testing.assert_allclose(y[1], 0.0, atol=0.0)
    for i in range(3):
        xi, yi, yawi, _ = integrate_arcs(ds[i], dpsi[i], x0=float(i))
        np.testing.assert_allclose(x[i], xi, atol=1e-12)
        np.testing.assert_allclose(y[i], yi, atol=1e-12)
        np.testing.assert_allclose(yaw[i], yawi, atol=1e-12)
