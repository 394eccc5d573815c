"""Wheel odometry against seed 001, exact circles, the step recursion and a Monte Carlo reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_control.odometry import (
    OdometryConfig,
    StreamingOdometry,
    bicycle_increments,
    bicycle_odometry,
    differential_increments,
    differential_odometry,
    integrate_arcs,
    pose_covariance_6x6,
    yaw_to_quaternion,
)
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import load_vehicle_params

PARAMS = load_vehicle_params()
CFG = OdometryConfig.from_vehicle(PARAMS)
r, W, L = CFG.wheel_radius, CFG.track_width, CFG.wheelbase


def test_config_from_vehicle_and_validation() -> None:
    assert (r, W, L) == (PARAMS.geometry.wheel_radius, PARAMS.geometry.track_width,
                         PARAMS.geometry.wheelbase)
    with pytest.raises(ConfigError, match=r'distance_noise: must be >= 0'):
        OdometryConfig.from_vehicle(PARAMS, distance_noise=-1.0)
    with pytest.raises(ConfigError, match=r'wheel_radius: must be a finite number'):
        OdometryConfig(math.nan, 0.2, 0.3)
    with pytest.raises(ConfigError, match='unknown key'):
        OdometryConfig.from_vehicle(PARAMS, foo=1.0)
    with pytest.raises(ConfigError, match='model: must be one of differential, bicycle'):
        StreamingOdometry(CFG, 'tricycle')


def test_differential_increments_are_seed_001() -> None:
    # seed 001: [dx dy dpsi] = r/2 [[cos, cos], [sin, sin], [1/l, -1/l]] [w_r, w_l] dt, W = 2 l
    w_l, w_r, dt = 10.0, 14.0, 0.01
    ds, dpsi, _ = differential_increments(w_l * dt, w_r * dt, CFG)
    assert float(ds) == pytest.approx(r / 2 * (w_r + w_l) * dt)
    assert float(dpsi) == pytest.approx(r / 2 * (w_r - w_l) * dt / (W / 2))


def test_small_steps_converge_to_seed_001_euler() -> None:
    n = 20000
    t = np.linspace(0.0, 4.0, n + 1)
    w_l = 20 + 5 * np.sin(t)
    w_r = 20 + 5 * np.cos(t)
    exact = differential_odometry(t, w_l, w_r, CFG)
    # seed 001 Euler recursion, written out independently
    dt = np.diff(t)
    x = y = psi = 0.0
    for k in range(n):
        x += r / 2 * (w_l[k] + w_r[k]) * math.cos(psi) * dt[k]
        y += r / 2 * (w_l[k] + w_r[k]) * math.sin(psi) * dt[k]
        psi += r * (w_r[k] - w_l[k]) / W * dt[k]
    assert (exact.x[-1], exact.y[-1], exact.yaw[-1]) == pytest.approx((x, y, psi), abs=2e-3)


@pytest.mark.parametrize('steps_per_lap', [7, 100, 1000])
def test_differential_circle_closes_below_a_millimetre(steps_per_lap: int) -> None:
    R, v = 1.3, 1.7
    t = np.linspace(0.0, 2 * math.pi * R / v, steps_per_lap + 1)
    w_l = np.full_like(t, v * (1 - W / (2 * R)) / r)
    w_r = np.full_like(t, v * (1 + W / (2 * R)) / r)
    track = differential_odometry(t, w_l, w_r, CFG)
    assert math.hypot(track.x[-1], track.y[-1]) < 1e-3 * 1e-6  # exact: rounding only
    assert track.yaw[-1] == pytest.approx(2 * math.pi)
    assert np.hypot(track.x, track.y - R) == pytest.approx(R, abs=1e-12)
    assert track.linear_velocity[1:] == pytest.approx(v)
    assert track.yaw_rate[1:] == pytest.approx(v / R)


def test_bicycle_circle_closes_and_has_the_ackermann_radius() -> None:
    delta = 0.3
    R = L / math.tan(delta)
    v = -0.8  # reverse: the same circle, clockwise
    t = np.linspace(0.0, 2 * math.pi * R / abs(v), 13)
    track = bicycle_odometry(t, np.full_like(t, v / r), delta, CFG)
    assert math.hypot(track.x[-1], track.y[-1]) < 1e-9
    assert track.yaw[-1] == pytest.approx(-2 * math.pi)
    assert np.hypot(track.x, track.y - R) == pytest.approx(R, abs=1e-12)
    assert track.yaw_rate[1:] == pytest.approx(v * math.tan(delta) / L)


@pytest.mark.parametrize('model', ['differential', 'bicycle'])
def test_streaming_circle_closes_below_a_millimetre(model: str) -> None:
    """The node's recursion on its own (not via the batch path): 9 encoder samples per lap of the
    analytic circle R = L / tan(delta) must close the lap and stay on the circle."""
    delta, v = 0.25, 1.1
    R = L / math.tan(delta)
    t = np.linspace(0.0, 2 * math.pi * R / v, 10)
    odo = StreamingOdometry(CFG, model)
    if model == 'differential':
        a = t * v * (1 - W / (2 * R)) / r
        b = t * v * (1 + W / (2 * R)) / r
    else:
        a, b = t * v / r, np.full_like(t, delta)
    states = [odo.update(float(tt), float(aa), float(bb)) for tt, aa, bb in zip(t, a, b)]
    assert states[0] is None and all(s is not None for s in states[1:])
    assert math.hypot(odo.x, odo.y) < 1e-3 * 1e-6
    assert odo.yaw == pytest.approx(2 * math.pi)
    assert [math.hypot(s.x, s.y - R) for s in states[1:]] == pytest.approx([R] * 9, abs=1e-12)


def test_straight_line() -> None:
    t = np.linspace(0, 2, 5)
    track = bicycle_odometry(t, np.full(5, 10.0), 0.0, CFG, x0=1.0, y0=2.0, yaw0=math.pi / 2)
    assert track.x == pytest.approx(1.0)
    assert track.y == pytest.approx(2.0 + 10.0 * r * t)


def test_streaming_equals_batch_pose_and_covariance() -> None:
    rng = np.random.default_rng(7)
    n = 300
    t = np.cumsum(rng.uniform(0.005, 0.05, n))
    w = rng.uniform(-30, 60, n)
    delta = rng.uniform(-0.4, 0.4, n)
    batch = bicycle_odometry(t, w, delta, CFG)
    angle = np.concatenate([[0.0], np.cumsum(w[:-1] * np.diff(t))])
    odo = StreamingOdometry(CFG, 'bicycle')
    states = [odo.update(tt, a, d) for tt, a, d in zip(t, angle, delta)]
    assert states[0] is None
    last = states[-1]
    assert last is not None
    assert (last.x, last.y, last.yaw) == pytest.approx((batch.x[-1], batch.y[-1], batch.yaw[-1]))
    # closed-form prefix sums (batch) == recursion P <- F P F^T + G Q G^T (streaming)
    assert last.covariance == pytest.approx(batch.covariance[-1], rel=1e-9, abs=1e-15)
    mid = states[150]
    assert mid is not None
    assert mid.covariance == pytest.approx(batch.covariance[150], rel=1e-9, abs=1e-15)


def test_covariance_matches_monte_carlo() -> None:
    # Independent reference: integrate noisy wheel increments (the documented noise model).
    rng = np.random.default_rng(42)
    cfg = OdometryConfig.from_vehicle(PARAMS, distance_noise=0.003)
    n, runs = 60, 4000
    d_left = np.full(n, 0.05 / r)
    d_right = np.full(n, 0.06 / r)
    ds, dpsi, q = differential_increments(d_left, d_right, cfg)
    _, _, _, cov = integrate_arcs(ds, dpsi, q)
    sl = r * d_left + rng.normal(size=(runs, n)) * cfg.distance_noise * np.sqrt(r * d_left)
    sr = r * d_right + rng.normal(size=(runs, n)) * cfg.distance_noise * np.sqrt(r * d_right)
    ends = []
    for k in range(runs):
        x, y, yaw, _ = integrate_arcs(0.5 * (sl[k] + sr[k]), (sr[k] - sl[k]) / W)
        ends.append((x[-1], y[-1], yaw[-1]))
    sample_cov = np.cov(np.asarray(ends).T)
    predicted = cov[-1]
    scale = np.sqrt(np.outer(np.diag(predicted), np.diag(predicted)))
    assert np.diag(sample_cov) == pytest.approx(np.diag(predicted), rel=0.1)
    assert np.abs(sample_cov - predicted) / scale == pytest.approx(np.zeros((3, 3)), abs=0.08)


def test_covariance_grows_with_distance_and_vanishes_without_noise() -> None:
    t = np.linspace(0, 5, 51)
    track = bicycle_odometry(t, np.full(51, 20.0), 0.2, CFG)
    traces = np.trace(track.covariance, axis1=1, axis2=2)
    assert traces[0] == 0.0 and np.all(np.diff(traces) > 0)
    quiet = OdometryConfig.from_vehicle(PARAMS, distance_noise=0.0, steering_noise=0.0)
    assert not bicycle_odometry(t, np.full(51, 20.0), 0.2, quiet).covariance.any()


def test_bicycle_increment_noise_terms() -> None:
    ds, dpsi, q = bicycle_increments(2.0, 0.2, CFG)
    s = 2.0 * r
    assert float(dpsi) == pytest.approx(s * math.tan(0.2) / L)
    var_s = CFG.distance_noise ** 2 * s
    assert q[0, 0] == pytest.approx(var_s)
    assert q[1, 1] == pytest.approx((math.tan(0.2) / L) ** 2 * var_s +
                                    (s / (L * math.cos(0.2) ** 2)) ** 2 * CFG.steering_noise ** 2)
    del ds


def test_streaming_resets_and_ignores_bad_samples() -> None:
    odo = StreamingOdometry(CFG)
    assert odo.update(0.0, 0.0, 0.0) is None
    assert odo.update(0.1, math.nan, 1.0) is None
    assert odo.update(0.1, 1.0, 1.0) is not None
    assert odo.update(0.1, 2.0, 2.0) is None  # time did not advance
    x = odo.x
    assert odo.update(0.05, 100.0, 100.0) is None  # time went back: new reference, no jump
    assert odo.x == x
    state = odo.update(0.15, 101.0, 101.0)
    assert state is not None and state.x == pytest.approx(x + r)


def test_message_helpers() -> None:
    qx, qy, qz, qw = yaw_to_quaternion(math.pi / 2)
    assert (qx, qy, qz, qw) == pytest.approx((0, 0, math.sqrt(0.5), math.sqrt(0.5)))
    p = np.arange(9.0).reshape(3, 3)
    c6 = np.asarray(pose_covariance_6x6(p)).reshape(6, 6)
    assert c6[0, 0] == 0 and c6[0, 5] == 2 and c6[5, 5] == 8 and c6[5, 1] == 7
    assert c6[2, 2] == c6[3, 3] == c6[4, 4] == 1e6
