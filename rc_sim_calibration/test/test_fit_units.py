"""Pieces of the fit against closed-form results: fractional delay, servo lag, windows."""

import math

import numpy as np
import pytest

from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.fit import (
    delayed_commands,
    first_order_final,
    make_windows,
    servo_time_constant,
)
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


def test_servo_time_constant_is_the_slow_pole():
    from rc_sim_engine.actuators import steering_hinge_inertia

    p = load_vehicle_params()
    j, kp, kd = steering_hinge_inertia(p), p.steering.servo_p_gain, p.steering.servo_d_gain
    poles = np.roots([j, kd, kp])
    assert servo_time_constant(p) == pytest.approx(1 / np.min(np.abs(poles.real)), rel=1e-9)


def _dataset(duration=5.2, rate=50.0):
    t = np.arange(0.0, duration + 1e-9, 1 / rate)
    one = np.ones_like(t)
    return Dataset(name='d', t=t, x=t, y=0 * t, yaw=0 * t, vx=one, vy=0 * t, yaw_rate=0 * t,
                   wheel_speed=np.full_like(t, np.nan), t_cmd=np.array([0.0, 2.0]),
                   steering_cmd=np.array([0.1, 0.2]), wheel_speed_cmd=np.array([20.0, 30.0]))


def test_windows_start_from_the_measurements_and_carry_the_command_history():
    win = make_windows([_dataset()], 2.0, lookback=0.1, command_dt=0.01)
    assert win.n == 2 and win.t_rel.size == 101
    np.testing.assert_allclose(win.t0, [0.0, 2.0])
    np.testing.assert_allclose(win.x0['x'], [0.0, 2.0])
    np.testing.assert_allclose(win.meas['x'][1], win.t_rel + 2.0)
    assert win.t_cmd[0] == pytest.approx(-0.1) and 0.0 in win.t_cmd
    # the second window's history before its start holds the first command
    before = win.t_cmd < 0
    np.testing.assert_allclose(win.steering_cmd[1][before], 0.1)
    np.testing.assert_allclose(win.steering_cmd[1][~before], 0.2)
    assert not win.masks()['wheel_speed'].any()


def test_too_short_data():
    with pytest.raises(CalibrationError, match='no 10 s window'):
        make_windows([_dataset()], 10.0, lookback=0.1, command_dt=0.01)


def _problem(prior: bool):
    from rc_sim_calibration.fit import Problem
    from rc_sim_calibration.settings import FreeParameter, load_fit_settings

    base = load_vehicle_params()
    free = [FreeParameter('cornering_stiffness_front', base.tyres.cornering_stiffness_front,
                          20.0, 500.0),  # spans > 3x: searched in log coordinates
            FreeParameter('steering_offset', 0.0, -0.05, 0.05,
                          *((0.01, 0.02) if prior else (None, None)))]
    settings = load_fit_settings(free=[f.name for f in free])
    win = make_windows([_dataset()], 2.0, lookback=0.1, command_dt=settings.dt)
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


def test_gaussian_prior_adds_its_squared_z_score_over_n():
    """MAP form: J_prior = J + ((theta - mu) / sigma)^2 / N, N = valid samples of a channel."""
    u = np.array([[0.4, 0.9]])
    plain, with_prior = _problem(prior=False), _problem(prior=True)
    offset = float(with_prior.to_values(u)[0, 1])
    n = max(int(m.sum()) for ch, m in with_prior.masks.items()
            if with_prior.settings.cost.weight(ch) > 0)
    extra = with_prior.cost(u) - plain.cost(u)
    assert extra[0] == pytest.approx(((offset - 0.01) / 0.02) ** 2 / n, rel=1e-9)
    r_plain, r_prior = plain.residuals(u), with_prior.residuals(u)
    assert np.sum(r_prior ** 2) - np.sum(r_plain ** 2) == pytest.approx(extra[0], rel=1e-6)
