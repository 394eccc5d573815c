"""LaserScan validation, REP 117 validity, incidence from the scan, and the pair machinery
(alignment of scans of different geometry, motion compensation, robust scale)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_sensors.scan_geometry import (
    Scan,
    incidence_from_ranges,
    invalid_kinds,
    scan_problem,
    valid_mask,
)
from rc_sim_sensors.scan_pairs import align, fit_pair, robust_scale
from rc_sim_sensors.scene import DEFAULT_POSTS, room_scan

Z = 5.0


@pytest.mark.parametrize(('fields', 'fragment'), [
    ((10, 0, 0.0, 0.0, 0.1, 10.0), 'angle_increment is 0.0 (must be a finite non-zero'),
    ((10, 0, 0.0, math.nan, 0.1, 10.0), 'angle_increment is nan'),
    ((10, 0, 0.0, math.inf, 0.1, 10.0), 'angle_increment is inf'),
    ((10, 0, math.nan, 0.01, 0.1, 10.0), 'angle_min is nan'),
    ((10, 0, 1e300, 0.01, 0.1, 10.0), 'angle_min is 1e+300 (must be a finite angle within'),
    ((10, 0, -13.0, 0.01, 0.1, 10.0), 'angle_min is -13.0'),
    ((10, 5, 0.0, 0.01, 0.1, 10.0), '5 intensities for 10 ranges (must be 0 or 10)'),
    ((10, 0, 0.0, 0.01, 5.0, 1.0), 'range_min 5 m is not below range_max 1 m'),
    ((10, 0, 0.0, 0.01, 1.0, 1.0), 'range_min 1 m is not below range_max 1 m'),
    ((10, 0, 0.0, 0.01, -1.0, 1.0), 'range_min is -1.0 (must be finite and >= 0 m)'),
    ((10, 0, 0.0, 0.01, 0.1, math.nan), 'not below range_max nan m'),
    ((1081, 0, -2.35, 0.25, 0.1, 10.0), 'spans 270 rad, more than one turn (degrees instead'),
])
def test_unusable_fields_give_one_line(fields, fragment):
    problem = scan_problem(*fields)
    assert problem is not None and fragment in problem and '\n' not in problem


def test_usable_fields_and_limits():
    assert scan_problem(681, 0, -2.086, 0.006136, 0.02, 5.6) is None
    assert scan_problem(225, 225, -math.pi, 2 * math.pi / 225, 0.15, 12.0) is None
    assert scan_problem(360, 0, math.pi, -2 * math.pi / 360, 0.0, math.inf) is None  # clockwise
    assert scan_problem(0, 0, 0.0, 0.01, 0.0, 1.0) is None
    assert scan_problem(360, 0, 2 * math.pi, -2 * math.pi / 360, 0.0, 1.0) is None  # [0, 2 pi]
    assert 'nanosec' in scan_problem(10, 0, 0.0, 0.01, 0.1, 1.0, 0, 10**9)


def test_beam_limit_is_a_soft_limit(monkeypatch):
    assert scan_problem(100_000, 0, 0.0, 1e-5, 0.1, 1.0) is None
    problem = scan_problem(100_001, 0, 0.0, 1e-5, 0.1, 1.0)
    assert problem == ('100001 beams per scan exceed the limit of 100000 (raise it with the '
                       'environment variable RC_SIM_MAX_SCAN_BEAMS)')
    monkeypatch.setenv('RC_SIM_MAX_SCAN_BEAMS', '200000')
    assert scan_problem(100_001, 0, 0.0, 1e-5, 0.1, 1.0) is None


def test_validity_follows_rep117_and_driver_zeros():
    r = np.array([0.0, 0.01, 0.5, 5.6, 5.7, np.inf, -np.inf, np.nan], dtype=np.float32)
    np.testing.assert_array_equal(valid_mask(r, 0.02, 5.6),
                                  [False, False, True, True, False, False, False, False])
    assert invalid_kinds(r, 0.02, 5.6) == {'valid': 2, '+inf': 1, '-inf': 1, 'nan': 1,
                                           'low': 2, 'high': 1}
    # 0 is "no return" even when range_min is 0
    assert not valid_mask(np.array([0.0]), 0.0, 10.0)[0]


def test_incidence_from_the_scan_matches_the_exact_geometry():
    """tan alpha = |dr/dtheta| / r holds exactly on a plane; central differences of a 0.25 deg
    grid are within 1e-3 rad of the ray caster's incidence away from corners and posts."""
    angles = np.linspace(-0.75 * math.pi, 0.75 * math.pi, 1081)
    ranges, exact = room_scan(angles, posts=())
    est = incidence_from_ranges(ranges, angles[1] - angles[0])
    corner = np.zeros(angles.size, dtype=bool)
    jump = np.abs(np.diff(exact)) > 0.01
    for shift in range(-2, 3):
        corner[np.clip(np.nonzero(jump)[0] + shift, 0, angles.size - 1)] = True
    steep = exact > 1.3  # beyond ~75 deg the central difference of a curved r(theta) errs more
    ok = ~corner & ~steep
    ok[[0, -1]] = False  # one-sided differences at the ends
    assert ok.sum() > 900
    np.testing.assert_allclose(est[ok], exact[ok], atol=1e-3)
    # invalid neighbours: one-sided differences, no NaN
    r = ranges.copy()
    r[100] = np.nan
    assert np.isfinite(incidence_from_ranges(r, angles[1] - angles[0])).all()


# --------------------------------------------------------------------------- pairs
def _scan(ranges: np.ndarray, angle_min: float, inc: float, stamp: float = 0.0) -> Scan:
    return Scan(np.asarray(ranges, dtype=np.float32), angle_min, inc, 0.05, 30.0, stamp)


def _room_from(x: float, y: float, yaw: float, angles: np.ndarray) -> np.ndarray:
    """Ideal ranges of the room seen from a sensor at (x, y, yaw)."""
    posts = tuple((px - x, py - y, r) for px, py, r in DEFAULT_POSTS)
    ranges, _ = room_scan(angles + yaw, x_min=-3.0 - x, x_max=5.0 - x, y_min=-2.5 - y,
                          y_max=3.0 - y, posts=posts)
    return ranges


def test_align_on_a_shared_grid_and_by_interpolation():
    inc = 2 * math.pi / 225
    a = _scan(np.linspace(1.0, 2.0, 225), -math.pi, inc)
    same, factor = align(a, a)
    np.testing.assert_array_equal(same, a.ranges.astype(np.float64))
    assert np.all(factor == 2.0)
    # b: 224 beams starting 0.3 increments later; a smooth periodic wall is interpolated to
    # within the linear-interpolation error 0.05 inc^2 / 8, across the wrap too
    b_inc = 2 * math.pi / 224
    b_angles = -math.pi + 0.3 * inc + b_inc * np.arange(224)
    b = _scan(1.5 + 0.05 * np.sin(b_angles), b_angles[0], b_inc)
    values, factor = align(a, b)
    assert np.isfinite(values).all()  # a full circle has two neighbours for every direction
    np.testing.assert_allclose(values, 1.5 + 0.05 * np.sin(a.angles), atol=1e-5)
    f = np.mod((a.angles - b.angle_min) / b_inc, 1.0)
    np.testing.assert_allclose(factor, 1 + (1 - f) ** 2 + f ** 2, atol=1e-6)
    # a straight wall (x = 2 m) is interpolated in 1/r to within inc^2 / 8 relative
    wall = _scan(2.0 / np.cos(b_angles), b_angles[0], b_inc)
    values, _ = align(a, wall)
    front = np.abs(a.angles) < 1.0
    np.testing.assert_allclose(values[front], 2.0 / np.cos(a.angles[front]),
                               rtol=b_inc ** 2 / 8)
    # a partial scan has no value beyond its ends; a depth jump is not interpolated
    c_angles = np.linspace(-1.0, 1.0, 101)
    c = _scan(np.where(c_angles < 0.0, 1.0, 3.0), -1.0, 0.02)
    values, _ = align(a, c)
    outside = (a.angles < -1.0) | (a.angles > 1.0)
    assert np.isnan(values[outside]).all()
    straddle = (a.angles > -0.02) & (a.angles < 0.0) & np.isnan(values)
    assert straddle.any()


def test_pair_fit_recovers_a_small_rigid_motion_and_the_noise():
    """Scan b is the room seen after a 4 mm / 3 mm translation and a 2 mrad turn, both scans
    with sigma = 5 mm noise: the fit finds the motion and the compensated scale is sigma; a
    motion of this size (about sigma) still counts as nearly static, 2 cm and 10 mrad do not."""
    rng = np.random.default_rng(1)
    angles = np.linspace(-0.75 * math.pi, 0.75 * math.pi, 1081)
    inc = angles[1] - angles[0]
    sigma = 0.005
    ra = _room_from(0.0, 0.0, 0.0, angles) + rng.normal(0, sigma, angles.size)
    rb = _room_from(0.004, 0.003, 0.002, angles) + rng.normal(0, sigma, angles.size)
    fit = fit_pair(_scan(ra, angles[0], inc), _scan(rb, angles[0], inc, 0.1))
    assert fit is not None
    n = fit.beams.size
    assert abs(fit.rotation - 0.002) < 5e-4
    assert abs(fit.translation - 0.005) < 2e-3
    assert abs(fit.scale - sigma) < Z * 1.03 * sigma / math.sqrt(2 * n)
    assert fit.static
    rc = _room_from(0.02, -0.01, 0.01, angles) + rng.normal(0, sigma, angles.size)
    moved = fit_pair(_scan(ra, angles[0], inc), _scan(rc, angles[0], inc, 0.1))
    assert moved is not None and not moved.static
    assert abs(moved.rotation - 0.01) < 1e-3
    assert abs(moved.scale - sigma) < 0.1 * sigma  # still compensated to first order


def test_robust_scale_is_consistent_for_normal_data_and_ignores_outliers():
    rng = np.random.default_rng(3)
    x = rng.normal(0.0, 2.0, 200_000)
    n = x.size
    assert abs(robust_scale(x) - 2.0) < Z * 1.03 * 2.0 / math.sqrt(2 * n)
    x[:2000] = 1e3  # 1 % gross outliers
    assert abs(robust_scale(x) - 2.0) < 0.05
    assert robust_scale(np.zeros(10)) == 0.0
    assert math.isnan(robust_scale(np.zeros(0)))


def test_scan_from_message_is_what_the_node_uses():
    """The node drops (and logs) what scan_from_message refuses; nothing reaches the model."""
    from types import SimpleNamespace

    from rc_sim_sensors.scan_geometry import scan_from_message

    def msg(**kw: object) -> SimpleNamespace:
        fields = {'ranges': np.ones(5, np.float32), 'intensities': np.zeros(0, np.float32),
                      'angle_min': 0.0, 'angle_increment': 0.1, 'range_min': 0.1, 'range_max': 10.0,
                      'header': SimpleNamespace(stamp=SimpleNamespace(sec=3, nanosec=5))}
        fields.update(kw)
        return SimpleNamespace(**fields)

    scan = scan_from_message(msg())
    assert isinstance(scan, Scan) and scan.beams == 5 and scan.stamp == 3 + 5e-9
    assert scan.intensities is None
    assert 'angle_increment is 0.0' in scan_from_message(msg(angle_increment=0.0))
    assert 'angle_increment is nan' in scan_from_message(msg(angle_increment=math.nan))
    assert '2 intensities for 5 ranges' in scan_from_message(msg(intensities=np.ones(2)))
