"""Pieces of the fit against closed-form results: fractional delay, servo lag and pre-roll, the
normalised map, the protocol windows, search coordinates, priors and robust weights."""

import math

import numpy as np
import pytest

from rc_sim_calibration.baselines import make_pose_track
from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.predict import (
    _servo_preroll,
    delayed_commands,
    first_order_final,
    normalised_map,
    servo_time_constant,
)
from rc_sim_calibration.windows import build_windows
from rc_sim_description.params import load_vehicle_params


def test_fractional_delay_of_a_step():
    dt, n_back = 0.002, 50
    c = np.zeros((3, 200))
    c[:, 100:] = 1.0                       # step at sample 100
    out = delayed_commands(c, np.array([0.0, 0.010, 0.011]), dt, n_back)
    np.testing.assert_array_equal(out[0], c[0])
    assert out[1, 104] == 0.0 and out[1, 105] == 1.0   # 5 whole steps
    assert out[2, 105] == pytest.approx(0.5)            # 5.5 steps: half-way on the edge
    assert out[2, 104] == 0.0 and out[2, 106] == 1.0
    with pytest.raises(CalibrationError, match='lookback'):
        delayed_commands(c, np.array([0.2, 0.0, 0.0]), dt, n_back)


def test_first_order_lag_matches_the_exponential():
    dt, tau = 0.001, 0.02
    u = np.r_[np.zeros(10), np.ones(101)][None]
    y = first_order_final(u, np.array([tau]), dt)
    assert y[0] == pytest.approx(1 - math.exp(-0.1 / tau), rel=1e-9)
    assert first_order_final(u, np.array([np.inf]), dt)[0] == 0.0


def test_servo_time_constants():
    from rc_sim_engine.vehicle.actuators import steering_hinge_inertia

    p = load_vehicle_params()
    j, kp, kd = steering_hinge_inertia(p), p.steering.servo_p_gain, p.steering.servo_d_gain
    poles = np.roots([j, kd, kp])
    assert servo_time_constant(p) == pytest.approx(1 / np.min(np.abs(poles.real)), rel=1e-9)
    assert servo_time_constant(p.with_values(servo_model='first_order',
                                             servo_time_constant=0.07)) == 0.07
    so = p.with_values(servo_model='second_order', servo_natural_frequency=20.0,
                       servo_damping_ratio=0.8)
    assert servo_time_constant(so) == pytest.approx(2 * 0.8 / 20.0)   # mean delay 2 zeta / wn


def test_servo_preroll_follows_the_first_order_exponential_and_the_slew_limit():
    dt, tau = 0.002, 0.05
    p = load_vehicle_params().with_values(servo_model='first_order', servo_time_constant=tau,
                                          max_steering_rate=100.0)
    # zero-order hold: sample k acts over [k dt, (k + 1) dt]; the state at the last sample has
    # seen the 0.1 rad target for 100 steps
    targets = np.r_[np.zeros(1), np.full(101, 0.1)][None]
    got = _servo_preroll(targets, [p], 1, dt)[0]
    assert got == pytest.approx(0.1 * (1 - math.exp(-100 * dt / tau)), rel=1e-9)
    slow = p.with_values(max_steering_rate=0.25)               # ramp at 0.25 rad/s for 0.2 s
    assert _servo_preroll(targets, [slow], 1, dt)[0] == pytest.approx(0.25 * 100 * dt, rel=1e-9)
    so = p.with_values(servo_model='second_order', servo_natural_frequency=30.0,
                       servo_damping_ratio=1.0)
    t = 100 * dt                                               # critically damped step
    exact = 0.1 * (1 - (1 + 30.0 * t) * math.exp(-30.0 * t))
    assert _servo_preroll(targets, [so], 1, dt)[0] == pytest.approx(exact, abs=2e-4)


def test_normalised_map_equals_the_engine_map():
    from rc_sim_engine.vehicle.servo_models import steering_map

    p = load_vehicle_params().with_values(steering_offset=-0.014, steering_gain_left=0.33,
                                          steering_gain_right=0.39, steering_curvature_left=1.3,
                                          steering_curvature_right=0.0)
    s = np.linspace(-1.2, 1.2, 97)
    np.testing.assert_allclose(normalised_map(s, p), steering_map(s, p), atol=1e-15)


def _dataset(duration=5.2, rate=50.0):
    """A straight line at 1 m/s along x; steering command 0.1 then 0.2 rad from t = 2 s."""
    t = np.arange(0.0, duration + 1e-9, 1 / rate)
    one = np.ones_like(t)
    return Dataset(name='d', t=t, x=t, y=0 * t, yaw=0 * t, vx=one, vy=0 * t, yaw_rate=0 * t,
                   wheel_speed=np.full_like(t, np.nan), t_cmd=np.array([0.0, 2.0]),
                   steering_cmd=np.array([0.1, 0.2]), wheel_speed_cmd=np.array([20.0, 30.0]),
                   drive_cmd=np.array([20.0, 30.0]), pose_x=t, pose_y=0 * t, pose_yaw=0 * t,
                   track=make_pose_track(t, t, 0 * t, 0 * t),
                   raw_track=make_pose_track(t, t, 0 * t, 0 * t))


def test_windows_follow_the_protocol_and_carry_the_command_history():
    win = build_windows([_dataset()], 2.0, lookback=0.1, dt=0.01)
    # windows 0 (no valid state at the first sample) is skipped, window 1 starts at t = 2 s
    assert win.index.tolist() == [1] and win.skipped[0]['state'] == [0]
    assert win.start[0] == pytest.approx(2.0)
    assert win.x0[0] == pytest.approx(2.0) and win.vx0[0] == pytest.approx(1.0)
    s = win.sample_window == 0
    np.testing.assert_allclose(win.x[s], win.start[0] + win.tau[s])   # raw measured positions
    np.testing.assert_allclose(win.vx[s][2:-2], 1.0)                  # local-fit speed
    assert win.first[s][0] and not win.first[s][1:].any()
    assert win.t_cmd[0] == pytest.approx(-0.1) and 0.0 in win.t_cmd
    before = win.t_cmd < -1e-12
    np.testing.assert_allclose(win.steering_cmd[0][before], 0.1)      # history: first command
    np.testing.assert_allclose(win.steering_cmd[0][~before], 0.2)


def _jumping_dataset(jump: float):
    """1 m/s along x for 10.2 s at 25 Hz; from t = 5.2 s to 5.4 s the pose source reports the
    car ``jump`` metres ahead (a particle filter relocalising and coming back)."""
    t = np.arange(0.0, 10.2 + 1e-9, 1 / 25.0)
    x = t + np.where((t >= 5.2) & (t < 5.4), jump, 0.0)
    track = make_pose_track(t, x, 0 * t, 0 * t)
    base = _dataset(10.2, 25.0)
    from dataclasses import replace

    return replace(base, t=t, x=x, y=0 * t, yaw=0 * t, vx=np.ones_like(t), vy=0 * t,
                   yaw_rate=0 * t, wheel_speed=np.full_like(t, np.nan), pose_x=x,
                   pose_y=0 * t, pose_yaw=0 * t, track=track, raw_track=track)


def test_fit_windows_leave_out_a_truth_no_car_can_follow():
    """A 1 m jump of the pose for 0.2 s accelerates the local-fit truth by far more than 3 g:
    the fit leaves that window out (reason ``implausible``); the protocol windows of the replay
    (raw) keep it; 1 cm of jitter does not trigger it."""
    fit_win = build_windows([_jumping_dataset(1.0)], 2.0, lookback=0.1, dt=0.01)
    raw_win = build_windows([_jumping_dataset(1.0)], 2.0, lookback=0.1, dt=0.01, raw=True)
    assert fit_win.skipped[0]['implausible'] == [2]
    assert 2 in raw_win.index.tolist() and 2 not in fit_win.index.tolist()
    assert fit_win.index.tolist() == [k for k in raw_win.index.tolist() if k != 2]
    # the kept windows' samples are exactly the raw ones of those windows
    keep = np.isin(raw_win.index[raw_win.sample_window], fit_win.index)
    np.testing.assert_array_equal(fit_win.tau, raw_win.tau[keep])
    np.testing.assert_array_equal(fit_win.x, raw_win.x[keep])
    assert np.all(np.diff(fit_win.sample_window) >= 0) and fit_win.sample_window.max() == \
        fit_win.index.size - 1
    jitter = build_windows([_jumping_dataset(0.01)], 2.0, lookback=0.1, dt=0.01)
    assert jitter.skipped[0]['implausible'] == [] and 2 in jitter.index.tolist()


def test_too_short_data():
    with pytest.raises(CalibrationError, match='no 10 s window'):
        build_windows([_dataset()], 10.0, lookback=0.1, dt=0.01)


def _problem(prior: bool):
    from rc_sim_calibration.problem import Problem
    from rc_sim_calibration.settings import FreeParameter, load_fit_settings

    base = load_vehicle_params().with_values(servo_model='first_order',
                                             drive_model='first_order')
    free = [FreeParameter('cornering_stiffness_front', base.tyres.cornering_stiffness_front,
                          20.0, 500.0),  # spans > 3x: searched in log coordinates
            FreeParameter('steering_offset', 0.0, -0.05, 0.05,
                          *((0.01, 0.02) if prior else (None, None)))]
    settings = load_fit_settings(free=[f.name for f in free])
    win = build_windows([_dataset(8.2)], 2.0, lookback=0.5, dt=settings.dt)
    return Problem(base, free, win, settings)


def test_search_coordinates_log_and_linear_and_their_derivative():
    """u in [0, 1] -> log-uniform for wide positive bounds, linear otherwise; dvalue/du checked
    against central differences (the identifiability analysis scales the Jacobian with it)."""
    problem = _problem(prior=False)
    assert problem.log.tolist() == [True, False]
    ends = problem.to_values(np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]]))
    np.testing.assert_allclose(ends[:2], [[20.0, -0.05], [500.0, 0.05]], rtol=1e-12)
    np.testing.assert_allclose(ends[2], [math.sqrt(20.0 * 500.0), 0.0], rtol=1e-12, atol=1e-15)
    u = np.array([0.3, 0.8])
    np.testing.assert_allclose(problem.to_unit(problem.to_values(u)), u, rtol=1e-12)
    h = 1e-6
    fd = np.array([(problem.to_values(u + h * e) - problem.to_values(u - h * e))[i] / (2 * h)
                   for i, e in enumerate(np.eye(2))])
    np.testing.assert_allclose(problem.dvalue_du(u), fd, rtol=1e-7)


def test_gaussian_prior_adds_its_squared_z_score_over_the_windows():
    """MAP form with the windows as independent observations: J_prior = J + z^2 / W."""
    u = np.array([[0.4, 0.9]])
    plain, with_prior = _problem(prior=False), _problem(prior=True)
    offset = float(with_prior.to_values(u)[0, 1])
    extra = with_prior.cost(u) - plain.cost(u)
    assert extra[0] == pytest.approx(((offset - 0.01) / 0.02) ** 2 / with_prior.win.n,
                                     rel=1e-9)
    r_plain, r_prior = plain.residuals(u), with_prior.residuals(u)
    assert np.sum(r_prior ** 2) - np.sum(r_plain ** 2) == pytest.approx(extra[0], rel=1e-6)


def test_robust_weights_are_cauchy_weights_of_the_window_costs():
    problem = _problem(prior=False)
    values = problem.to_values(np.array([0.5, 0.9]))
    c = problem.window_costs(values)
    w = problem.set_robust_weights(values, spread=3.0)
    med = np.median(c[c > 0])
    np.testing.assert_allclose(w, 1.0 / (1.0 + c / (3.0 * med)), rtol=1e-12)
    # the weighted cost is the weighted sum of the window costs (MSE form, no prior)
    n = problem.win.scored().sum()
    counts = np.bincount(problem.win.sample_window, minlength=problem.win.n)
    assert problem.cost(np.array([[0.5, 0.9]]))[0] == pytest.approx(
        float(np.sum(w * c * counts)) / n, rel=1e-6)
