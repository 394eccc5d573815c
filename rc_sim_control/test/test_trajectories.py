"""Reference trajectories: derivatives vs finite differences, seed equations, lane shift, parking."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rc_sim_control.trajectories import (
    Circle,
    CurtateCycloid,
    FigureEight,
    LaneShift,
    Line,
    Parabola,
    ParkingProfile,
    PathTrajectory,
    Placed,
    SegmentPath,
    SplinePath,
    Trajectory,
    lane_shift_max_curvature,
    load_waypoints,
    make_trajectory,
    min_lane_shift_length,
    parking_profile_limits,
    quintic_shift,
    trajectory_limits,
)
from rc_sim_description.errors import ConfigError

RNG_SEED = 20261121


def _stadium_shift() -> PathTrajectory:
    path = SegmentPath.stadium(4.0, 1.5, x0=-2.0, y0=-1.5)
    shift = LaneShift(s_start=1.0, d_r=0.4, s_t=1.5, s_hold=0.5)
    return PathTrajectory(path, 1.2, shift=shift)


def _spline() -> PathTrajectory:
    ang = np.linspace(0, 2 * np.pi, 13)[:-1]
    x, y = 3 * np.cos(ang), 2 * np.sin(ang)
    return PathTrajectory(SplinePath(tuple(x), tuple(y), closed=True), 1.0)


CASES: dict[str, Trajectory] = {
    'line': Line(0.6, -0.8),
    'parabola': Parabola(0.5),
    'circle': Circle(2.0, 0.5),
    'circle_cw': Circle(1.5, -0.7),
    'figure_eight': FigureEight(3.0, 0.45),
    'cycloid': CurtateCycloid(0.5, 0.25, 1.3),
    'placed_eight': Placed(FigureEight(2.0, 0.6), 1.0, -2.0, 0.7),
    'stadium_lane_shift': _stadium_shift(),
    'spline_path': _spline(),
}


@pytest.mark.parametrize('name', list(CASES))
def test_derivatives_match_central_differences(name: str) -> None:
    traj = CASES[name]
    rng = np.random.default_rng(RNG_SEED)
    t = np.sort(rng.uniform(0.05, 15.0, 400))
    if isinstance(traj, PathTrajectory) and isinstance(traj.path, SegmentPath):
        # acceleration jumps at line/arc joints: keep away from them
        s = traj.arc_length(t) % traj.path.length
        joints = np.array([st[0] for st in traj.path._starts] + [traj.path.length])
        t = t[np.min(np.abs(s[:, None] - joints[None, :]), axis=1) > 0.05]
    h = 1e-5
    mid, lo, hi = traj.sample(t), traj.sample(t - h), traj.sample(t + h)
    scale_v = max(1.0, float(np.max(mid.speed)))
    np.testing.assert_allclose((hi.x - lo.x) / (2 * h), mid.vx, atol=1e-5 * scale_v)
    np.testing.assert_allclose((hi.y - lo.y) / (2 * h), mid.vy, atol=1e-5 * scale_v)
    scale_a = max(1.0, float(np.max(np.hypot(mid.ax, mid.ay))))
    np.testing.assert_allclose((hi.vx - lo.vx) / (2 * h), mid.ax, atol=1e-4 * scale_a)
    np.testing.assert_allclose((hi.vy - lo.vy) / (2 * h), mid.ay, atol=1e-4 * scale_a)


@pytest.mark.parametrize('name', ['line', 'parabola', 'circle', 'figure_eight', 'cycloid'])
def test_seed_shapes_start_at_origin(name: str) -> None:
    s = make_trajectory(name).sample(0.0)
    assert abs(float(s.x)) < 1e-12 and abs(float(s.y)) < 1e-12


def test_seed_equations_at_a_known_time() -> None:
    # figure eight: y = a sin(wt) cos(wt); circle centre (0, r); cycloid x = r wt - d sin(wt)
    t = 1.3
    e = FigureEight(3.0, 0.4).sample(t)
    assert math.isclose(float(e.y), 3.0 * math.sin(0.52) * math.cos(0.52), rel_tol=1e-12)
    c = Circle(2.0, 0.5).sample(np.linspace(0, 10, 50))
    np.testing.assert_allclose(np.hypot(c.x, c.y - 2.0), 2.0, rtol=1e-12)
    np.testing.assert_allclose(c.speed, 1.0, rtol=1e-12)
    np.testing.assert_allclose(c.curvature, 0.5, rtol=1e-9)
    cy = CurtateCycloid(0.5, 0.25, 1.0).sample(t)
    assert math.isclose(float(cy.x), 0.5 * t - 0.25 * math.sin(t), rel_tol=1e-12)
    p = Parabola(0.5).sample(np.linspace(0, 4, 9))
    np.testing.assert_allclose(p.y, p.x ** 2 / (4 * 0.5), rtol=1e-12)


def test_figure_eight_for_the_tracking_test_stays_below_2_m_s() -> None:
    traj = FigureEight(3.0, 0.45)
    v_max, k_max = trajectory_limits(traj, traj.default_duration)
    assert v_max <= 2.0
    assert math.isclose(v_max, math.sqrt(2) * 3.0 * 0.45, rel_tol=1e-6)
    assert k_max > 1.0 / 3.0  # the lemniscate of Gerono is tighter than its lobe tips
    tip = traj.sample(math.pi / 2 / 0.45)  # x = a: curvature 1/a there
    assert math.isclose(float(tip.x), 3.0) and math.isclose(abs(float(tip.curvature)), 1 / 3.0)


def test_placed_trajectory_starts_at_the_pose_with_its_heading() -> None:
    base = FigureEight(3.0, 0.45)
    placed = Placed(base, 1.0, 2.0, 0.5)
    s0 = placed.sample(0.0)
    assert math.isclose(float(s0.x), 1.0) and math.isclose(float(s0.y), 2.0)
    assert math.isclose(float(s0.heading), float(base.sample(0.0).heading) + 0.5, rel_tol=1e-12)


def test_quintic_shift_is_c2_with_the_seed_end_values() -> None:
    d, d1, d2 = quintic_shift(np.array([-1.0, 0.0, 1.0, 2.0, 3.0]), 0.5, 2.0)
    np.testing.assert_allclose(d, [0, 0, 0.25, 0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(d1[[0, 1, 3, 4]], 0.0, atol=1e-12)
    np.testing.assert_allclose(d2[[0, 1, 3, 4]], 0.0, atol=1e-12)
    # slope at mid-way: 30 u^2 (1-u)^2 d_r / S_T = 15/8 * 0.25
    assert math.isclose(float(d1[2]), 30 * 0.0625 * 0.5 / 2.0)


def test_min_lane_shift_length_reaches_exactly_the_curvature_limit() -> None:
    """Independent check of eq. 12: the peak curvature of the shifted straight path is C_max."""
    d_r, c_max = 0.05, 0.1  # small slope (< 0.06) so that the curvature ~ d''
    s_t = min_lane_shift_length(d_r, c_max)
    traj = PathTrajectory(SegmentPath((('line', 10.0),)), 1.0,
                          shift=LaneShift(s_start=1.0, d_r=d_r, s_t=s_t))
    s = traj.sample(np.linspace(0.0, 1.0 + s_t, 20001))
    assert math.isclose(float(np.max(np.abs(s.curvature))), c_max, rel_tol=0.01)


def test_lane_shift_curvature_limit_uses_both_bounds() -> None:
    assert math.isclose(lane_shift_max_curvature(0.4, 0.33, 100.0, 1.0), math.tan(0.4) / 0.33)
    assert math.isclose(lane_shift_max_curvature(0.4, 0.33, 2.0, 2.0), 0.5)


def test_lane_shift_moves_the_path_left_and_back() -> None:
    traj = PathTrajectory(SegmentPath((('line', 20.0),)), 2.0,
                          shift=LaneShift(s_start=2.0, d_r=0.4, s_t=3.0, s_hold=1.0))
    s = traj.sample(np.array([0.0, 2.5, 3.0, 5.0]))  # s = 0, 5, 6, 10 m
    np.testing.assert_allclose(s.y, [0.0, 0.4, 0.4, 0.0], atol=1e-12)
    assert traj.shift is not None and traj.shift.s_end == 9.0


def test_parking_profile_equations_and_limits() -> None:
    prof = ParkingProfile(duration=6.0, steer_time=2.0, max_steering=0.4, max_speed=0.5)
    t = np.linspace(0.0, 6.0, 6001)
    v, delta = prof.commands(t)
    assert np.all(v <= 0.0) and math.isclose(float(np.min(v)), -0.5, rel_tol=1e-6)
    np.testing.assert_allclose(delta[t < 2.0], 0.4)
    np.testing.assert_allclose(delta[t > 4.0], -0.4)
    assert math.isclose(float(delta[3000]), 0.0, abs_tol=1e-12)  # cos(pi/2) at T/2
    rate = np.max(np.abs(np.diff(delta))) / (t[1] - t[0])
    assert math.isclose(rate, math.pi * 0.4 / 2.0, rel_tol=1e-3)
    t_star, t_min = parking_profile_limits(0.4, rate_max := 3.2, 0.5, 1.0)
    assert math.isclose(t_star, math.pi * 0.4 / rate_max)
    assert math.isclose(t_min, 2 * math.pi * 0.5)
    accel = np.max(np.abs(np.diff(v))) / (t[1] - t[0])
    assert math.isclose(accel, 2 * math.pi * 0.5 / 6.0, rel_tol=1e-3)


def test_waypoint_csv_timed_and_path(tmp_path: Path) -> None:
    timed = tmp_path / 'timed.csv'
    t = np.linspace(0, 4, 9)
    timed.write_text('t,x,y\n' + ''.join(f'{a},{2 * a},{a * a}\n' for a in t))
    traj = load_waypoints(timed)
    s = traj.sample(np.array([1.25, 2.5]))
    np.testing.assert_allclose(s.x, [2.5, 5.0], atol=1e-9)  # splines reproduce polynomials
    np.testing.assert_allclose(s.y, [1.5625, 6.25], atol=1e-9)
    np.testing.assert_allclose(s.vy, [2.5, 5.0], atol=1e-9)
    path = tmp_path / 'path.csv'
    path.write_text('x,y,comment\n0,0,a\n1,0,b\n2,0,c\n3,0,d\n')
    line = load_waypoints(path, speed=0.5)
    s = line.sample(np.array([2.0]))
    np.testing.assert_allclose([s.x[0], s.y[0], s.vx[0]], [1.0, 0.0, 0.5], atol=1e-6)


@pytest.mark.parametrize(('text', 'match'), [
    ('x,y\n0,0\n1,nan\n', "line 3: column 'y' must be finite"),
    ('x,z\n0,0\n', 'needs columns x and y'),
    ('x,y\n0,0\n1,abc\n', "column 'y' is not a number"),
    ('t,x,y\n0,0,0\n0,1,1\n', 'strictly increasing'),
    ('x,y\n', 'no waypoints'),
])
def test_bad_waypoint_files_give_one_line_errors(tmp_path: Path, text: str, match: str) -> None:
    bad = tmp_path / 'bad.csv'
    bad.write_text(text)
    with pytest.raises(ConfigError, match=match) as err:
        load_waypoints(bad, speed=1.0)
    assert '\n' not in str(err.value) and 'bad.csv' in str(err.value)


def test_waypoints_without_time_need_a_speed(tmp_path: Path) -> None:
    f = tmp_path / 'p.csv'
    f.write_text('x,y\n0,0\n1,1\n')
    with pytest.raises(ConfigError, match='speed is required'):
        load_waypoints(f)
    with pytest.raises(ConfigError, match='not found'):
        load_waypoints(tmp_path / 'missing.csv')


@pytest.mark.parametrize(('name', 'kwargs', 'match'), [
    ('circle', {'radius': -1.0}, "'radius': must be > 0"),
    ('circle', {'angular_speed': float('nan')}, "'angular_speed': must be finite"),
    ('cycloid', {'radius': 0.5, 'distance': 0.6}, "'distance': must be < radius"),
    ('line', {'a': 0.0, 'b': 0.0}, 'must be non-zero'),
    ('figure_eight', {'amplitud': 3.0}, 'unknown parameter.*amplitud'),
    ('spiral', {}, "unknown trajectory 'spiral'"),
])
def test_invalid_parameters_are_rejected(name: str, kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        make_trajectory(name, **kwargs)


def test_invalid_lane_shift_and_parking() -> None:
    with pytest.raises(ConfigError, match="'s_t'"):
        LaneShift(0.0, 0.3, 0.0)
    with pytest.raises(ConfigError, match='T\\* must be <= T'):
        ParkingProfile(duration=2.0, steer_time=3.0, max_steering=0.4, max_speed=0.5)
    with pytest.raises(ConfigError, match='segments\\[1\\]'):
        SegmentPath((('line', 1.0), ('spiral', 2.0)))
