"""Tracking metrics against closed forms and shapely (independent geometry).

Complements test_tracking.py: there the error signals are symmetric in time, which cannot tell
the trapezoid ISE from a rectangle rule; here |e|^2 is linear on uneven samples.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import LineString, Point
from shapely.ops import nearest_points

from rc_sim_control.metrics import (
    cg_positions,
    compute_metrics,
    path_distance_errors,
)
from rc_sim_description.errors import ConfigError


def test_ise_is_the_trapezoid_integral_on_uneven_samples() -> None:
    """|e|^2 = t is linear: the trapezoid rule is exact, ISE = (T^2 - t0^2) / 2; RMSE = sqrt(mean t)."""
    t = np.array([0.0, 0.1, 0.5, 0.6, 1.3, 2.0])
    m = compute_metrics(t, np.sqrt(t), np.zeros_like(t))
    assert m.ise == pytest.approx(2.0, rel=1e-12)
    assert m.rmse == pytest.approx(math.sqrt(np.mean(t)), rel=1e-12)
    assert m.max_error == pytest.approx(math.sqrt(2.0)) and m.final_error == m.max_error
    late = compute_metrics(t, np.sqrt(t), np.zeros_like(t), t_start=0.5)  # transient cut
    assert late.ise == pytest.approx((2.0 ** 2 - 0.5 ** 2) / 2, rel=1e-12)
    assert (late.t_start, late.samples) == (0.5, 4)
    with pytest.raises(ConfigError, match='fewer than 2 error samples'):
        compute_metrics(t, t, t, t_start=1.5)


def test_cg_positions_are_lr_ahead_of_the_rear_axle() -> None:
    x, y = cg_positions([1.0, 0.0], [2.0, 0.0], [math.pi / 2, math.pi], 0.2)
    np.testing.assert_allclose(x, [1.0, -0.2], atol=1e-15)
    np.testing.assert_allclose(y, [2.2, 0.0], atol=1e-15)


def test_path_distance_errors_equal_shapely_nearest_points() -> None:
    rng = np.random.default_rng(11)
    s = np.linspace(0.0, 2 * math.pi, 60)
    xp, yp = 3 * np.sin(s), 1.5 * np.sin(2 * s)  # a figure eight polyline
    px, py = rng.uniform(-4, 4, 500), rng.uniform(-3, 3, 500)
    ex, ey = path_distance_errors(px, py, xp, yp, chunk=37)  # several chunks
    line = LineString(np.column_stack([xp, yp]))
    dist = np.array([line.distance(Point(a, b)) for a, b in zip(px, py)])
    np.testing.assert_allclose(np.hypot(ex, ey), dist, atol=1e-9)
    for k in range(0, 500, 50):  # the error vector points from the path's nearest point
        near = nearest_points(line, Point(px[k], py[k]))[0]
        assert (px[k] - ex[k], py[k] - ey[k]) == pytest.approx((near.x, near.y), abs=1e-9)
    with pytest.raises(ConfigError, match='needs >= 2 points'):
        path_distance_errors([0.0], [0.0], [1.0], [1.0])
