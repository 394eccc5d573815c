"""Servo models against independent truths: closed-form step responses, slew-limited ramps,
dead band and backlash hysteresis (an independent play operator), delay as an exact shift, the
normalised command map against the DART car's published map, batch = single car."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
import pytest
from scipy.linalg import expm
from scipy.optimize import brentq, least_squares

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams, load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.rollout import InitialState, rollout
from rc_sim_engine.vehicle.servo_models import steering_map
from rc_sim_engine.vehicle.state import SERVO_ANGLE, STEER

BASE = load_vehicle_params()
R_MAX = BASE.steering.max_steering_rate


def _run(p: VehicleParams, commands: NDArray[np.float64], dt: float,
         **kwargs: object) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wheel angle and servo output after each physics step, one command per step."""
    car = Car(p, dt=dt, **kwargs)  # type: ignore[arg-type]
    wheel, servo = [], []
    for c in commands:
        car.step(float(c), 0.0)
        wheel.append(car.state[0, STEER])
        servo.append(car.state[0, SERVO_ANGLE])
    return np.array(wheel), np.array(servo)


def _second_order_step(t: NDArray[np.float64], wn: float, zeta: float) -> NDArray[np.float64]:
    """Unit step response of wn^2 / (s^2 + 2 zeta wn s + wn^2) (Ogata, Modern Control Eng. 5.3)."""
    if zeta < 1.0:
        wd = wn * math.sqrt(1 - zeta * zeta)
        return 1 - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta * zeta)
                                             * np.sin(wd * t))
    if zeta == 1.0:
        return 1 - np.exp(-wn * t) * (1 + wn * t)
    s1 = wn * (zeta - math.sqrt(zeta * zeta - 1))
    s2 = wn * (zeta + math.sqrt(zeta * zeta - 1))
    return 1 - (s2 * np.exp(-s1 * t) - s1 * np.exp(-s2 * t)) / (s2 - s1)


# --------------------------------------------------------------------------- linear responses
@pytest.mark.parametrize('dt', [1e-3, 7e-3, 1e-2])
def test_first_order_small_step_is_the_exponential(dt: float) -> None:
    tau, target = 0.05, 0.01  # 0.01 rad: the slope target / tau stays below the slew limit
    p = BASE.with_values(servo_model='first_order', servo_time_constant=tau)
    n = int(0.3 / dt)
    wheel, _ = _run(p, np.full(n, target), dt)
    t = dt * np.arange(1, n + 1)
    assert np.max(np.abs(wheel - target * (1 - np.exp(-t / tau)))) < 1e-15


@pytest.mark.parametrize('zeta', [0.3, 1.0, 2.0])
@pytest.mark.parametrize('dt', [1e-3, 1e-2])
def test_second_order_small_step_matches_the_closed_forms(zeta: float, dt: float) -> None:
    wn, target = 30.0, 0.005
    p = BASE.with_values(servo_model='second_order', servo_natural_frequency=wn,
                         servo_damping_ratio=zeta)
    n = int(0.5 / dt)
    wheel, _ = _run(p, np.full(n, target), dt)
    t = dt * np.arange(1, n + 1)
    assert np.max(np.abs(wheel - target * _second_order_step(t, wn, zeta))) < 1e-12
    # the reference itself is right: final value, and overshoot exp(-pi zeta / sqrt(1 - zeta^2))
    if zeta < 1:
        assert wheel.max() / target - 1 == pytest.approx(
            math.exp(-math.pi * zeta / math.sqrt(1 - zeta * zeta)), abs=2e-3)


# --------------------------------------------------------------------------- slew limit
@pytest.mark.parametrize('dt', [1e-3, 1e-2])
def test_first_order_large_step_ramps_at_the_slew_limit_then_decays(dt: float) -> None:
    """Analytic: delta = r t until the error is tau r (t1 = (A - tau r) / r), then
    delta = A - tau r exp(-(t - t1) / tau)."""
    tau, A = 0.05, 0.4
    p = BASE.with_values(servo_model='first_order', servo_time_constant=tau)
    n = int(0.5 / dt)
    wheel, _ = _run(p, np.full(n, A), dt)
    t = dt * np.arange(1, n + 1)
    t1 = (A - tau * R_MAX) / R_MAX
    ref = np.where(t < t1, R_MAX * t, A - tau * R_MAX * np.exp(-(t - t1) / tau))
    assert np.max(np.abs(wheel - ref)) < 1e-12
    assert np.max(np.diff(np.concatenate([[0.0], wheel])) / dt) <= R_MAX * (1 + 1e-12)


@pytest.mark.parametrize('dt', [1e-3, 1e-2])
@pytest.mark.parametrize('zeta', [0.5, 1.5])
def test_second_order_large_step_slides_at_the_rate_limit(dt: float, zeta: float) -> None:
    """Piecewise analytic: free response from rest until the rate reaches r (t1: brentq on the
    matrix exponential of the linear system), slide at r until the error is 2 zeta r / wn (the
    acceleration turns back there), then the free response again."""
    wn, A = 40.0, 0.4
    p = BASE.with_values(servo_model='second_order', servo_natural_frequency=wn,
                         servo_damping_ratio=zeta, max_steering_angle=0.6)  # no stop reached
    n = int(0.6 / dt)
    wheel, _ = _run(p, np.full(n, A), dt)
    t = dt * np.arange(1, n + 1)
    sys_a = np.array([[0.0, 1.0], [-wn * wn, -2 * zeta * wn]])  # state (delta - A, rate)

    def free(tt: float, e0: float, v0: float) -> NDArray[np.float64]:
        return np.asarray(expm(sys_a * tt) @ np.array([e0, v0]))

    grid = np.linspace(0.0, 0.1, 1001)
    first = int(np.argmax([free(s, -A, 0.0)[1] > R_MAX for s in grid]))  # first grid point past
    t1 = brentq(lambda s: free(s, -A, 0.0)[1] - R_MAX, grid[first - 1], grid[first], xtol=1e-15)
    e1 = free(t1, -A, 0.0)[0]
    e_exit = -2 * zeta * R_MAX / wn
    t2 = t1 + (e_exit - e1) / R_MAX
    assert t2 > t1 + 0.01  # the manoeuvre really slides
    ref = np.array([A + (free(s, -A, 0.0)[0] if s < t1 else
                         e1 + R_MAX * (s - t1) if s < t2 else free(s - t2, e_exit, R_MAX)[0])
                    for s in t])
    assert np.max(np.abs(wheel - ref)) < 1e-11
    assert np.max(np.diff(np.concatenate([[0.0], wheel])) / dt) <= R_MAX * (1 + 1e-12)


@pytest.mark.parametrize('model', ['first_order', 'second_order'])
def test_angle_limit_and_no_overshoot_past_the_stop(model: str) -> None:
    p = BASE.with_values(servo_model=model, servo_damping_ratio=0.2,
                         servo_natural_frequency=60.0)
    wheel, _ = _run(p, np.full(3000, 5.0), 1e-3)  # far beyond the lock
    assert wheel.max() <= p.steering.max_steering_angle
    assert wheel[-1] == pytest.approx(p.steering.max_steering_angle, abs=1e-9)


# --------------------------------------------------------------------------- dead band, backlash
def _play(u: NDArray[np.float64], half: float, y0: float = 0.0) -> NDArray[np.float64]:
    """Independent play operator: y moves only when |u - y| > half, trailing u by half."""
    y, out = y0, []
    for v in u:
        y = min(max(y, v - half), v + half)
        out.append(y)
    return np.array(out)


def test_dead_band_hysteresis_cycle() -> None:
    """Quasi-static triangle command: the settled servo angle is the play of the command with
    half the dead band (equilibria within b of the command, reversals inside 2b ignored)."""
    band = 0.04
    p = BASE.with_values(servo_model='first_order', servo_time_constant=0.005,
                         steering_dead_band=band)
    levels = np.array([0.0, 0.1, 0.07, 0.05, 0.2, 0.17, -0.1, -0.08, -0.05, 0.0])
    dt = 1e-3
    wheel, _ = _run(p, np.repeat(levels, 300), dt)  # hold each level 0.3 s (60 tau)
    settled = wheel[299::300]
    expected = _play(levels, band / 2)
    np.testing.assert_allclose(settled, expected, atol=1e-12)
    # the band really acted: 0.1 -> 0.07 (a 0.03 rad reversal < 0.04) did not move the servo
    assert settled[2] == settled[1] == pytest.approx(0.08)


def test_backlash_hysteresis_cycle_and_width() -> None:
    """The wheel angle is the play (half width c) of the servo output, sample by sample, and the
    up and down branches of a slow cycle are 2c apart."""
    c2 = 0.03  # total play
    p = BASE.with_values(servo_model='first_order', servo_time_constant=0.02,
                         steering_backlash=c2)
    dt = 1e-3  # one sub-step per step: every sub-step end is sampled
    t = dt * np.arange(4000)
    cmd = 0.2 * np.sin(2 * math.pi * 0.5 * t)
    wheel, servo = _run(p, cmd, dt)
    np.testing.assert_array_equal(wheel, _play(servo, c2 / 2))
    rising = np.gradient(servo) > 0
    at_zero = (np.abs(servo) < 2e-3) & (t > 0.5)  # after the play was first taken up
    gap = wheel[at_zero & ~rising].mean() - wheel[at_zero & rising].mean()
    assert gap == pytest.approx(c2, rel=0.02)


def test_zero_dead_band_and_backlash_leave_the_servo_untouched() -> None:
    p = BASE.with_values(servo_model='second_order')
    a, _ = _run(p, np.full(300, 0.2), 1e-3)
    b, _ = _run(p.with_values(steering_dead_band=1e-9, steering_backlash=1e-9),
                np.full(300, 0.2), 1e-3)
    assert np.max(np.abs(a - b)) < 2e-9


# --------------------------------------------------------------------------- delay
@pytest.mark.parametrize('model', ['pd_joint', 'first_order', 'second_order'])
def test_latency_is_an_exact_shift(model: str) -> None:
    dt, delay = 1e-3, 0.03
    p = BASE.with_values(servo_model=model, steering_dead_band=0.01, steering_backlash=0.01)
    cmd = np.concatenate([np.zeros(50), np.full(200, 0.25), np.full(200, -0.1)])
    base, _ = _run(p, cmd, dt)
    late, _ = _run(p.with_values(command_latency=delay), cmd, dt)
    k = round(delay / dt)
    np.testing.assert_array_equal(late[k:], base[:-k])
    # rollout: the same shift on recorded commands
    t_cmd = dt * np.arange(len(cmd))
    r0 = rollout([p, p.with_values(command_latency=delay)], t_cmd, cmd, np.zeros_like(cmd), None,
                 t_out=t_cmd)
    np.testing.assert_array_equal(r0.steering[1, k:], r0.steering[0, :-k])


# --------------------------------------------------------------------------- normalised map
def _dart_map(s: NDArray[np.float64]) -> NDArray[np.float64]:
    """The DART car's published map (Lyons et al., DART_dynamic_models): a tanh blend."""
    a, b, c, d, e = 1.3929, 0.36576, 0.0029960 - 0.03, 0.51479, 1.02304
    w = 0.5 * (np.tanh(30 * (s + c)) + 1)
    return w * b * np.tanh(a * (s + c)) + (1 - w) * d * np.tanh(e * (s + c))


def _map_params(x: NDArray[np.float64]) -> VehicleParams:
    return BASE.with_values(steering_offset=float(x[0]), steering_gain_left=float(x[1]),
                            steering_gain_right=float(x[2]), steering_curvature_left=float(x[3]),
                            steering_curvature_right=float(x[4]), max_steering_angle=0.6)


def test_map_family_represents_the_dart_map() -> None:
    s = np.linspace(-1, 1, 401)
    truth = _dart_map(s)
    assert truth[[-1, 200, 0]] == pytest.approx([0.320, -0.014, -0.403], abs=5e-4)
    fit = least_squares(lambda x: steering_map(s, _map_params(x)) - truth,
                        [0.0, 0.3, 0.3, 1.0, 1.0], bounds=([-0.1, 0.05, 0.05, 0, 0],
                                                           [0.1, 0.6, 0.6, 10, 10]))
    p = _map_params(fit.x)
    err = np.abs(steering_map(s, p) - truth)
    assert err.max() < 0.01
    got = steering_map(np.array([1.0, 0.0, -1.0]), p)
    np.testing.assert_allclose(got, [0.320, -0.014, -0.403], atol=0.01)


def test_map_shape_monotone_ends_and_linear_limit() -> None:
    p = BASE.with_values(steering_offset=0.02, steering_gain_left=0.3, steering_gain_right=0.38,
                         steering_curvature_left=1.5, steering_curvature_right=0.5)
    s = np.linspace(-1.5, 1.5, 3001)
    d = steering_map(s, p)
    assert np.all(np.diff(d) >= 0)
    assert steering_map(np.array([1.0, 0.0, -1.0, 3.0]), p) == pytest.approx(
        [0.32, 0.02, -0.36, 0.32], abs=1e-15)
    lin = BASE.with_values(steering_gain_left=0.3, steering_gain_right=0.2)
    for k in (0.0, 1e-6, 1e-3):  # k -> 0 is the straight line (series branch continuous)
        q = lin.with_values(steering_curvature_left=k, steering_curvature_right=k)
        np.testing.assert_allclose(steering_map(s[1000:2001], q),
                                   np.clip(np.where(s[1000:2001] > 0, 0.3, 0.2)
                                           * np.clip(s[1000:2001], -1, 1), -1, 1), atol=1e-6)
    # null gains mean full lock at full command
    assert steering_map(np.array([1.0, -1.0]), BASE) == pytest.approx(
        [BASE.steering.max_steering_angle, -BASE.steering.max_steering_angle])


def test_normalised_commands_drive_the_servo_to_the_map() -> None:
    p = BASE.with_values(steering_offset=-0.014, steering_gain_left=0.334,
                         steering_gain_right=0.389, steering_curvature_left=1.35,
                         steering_curvature_right=1.05, servo_model='first_order')
    for s in (0.91, -0.67, 0.01):
        car = Car(p, dt=1e-3, steering_kind='normalised')
        car.step(s, 0.0, 3000)
        assert car.steering_angle()[0] == pytest.approx(float(steering_map(s, p)), abs=1e-12)
    t = np.arange(0.0, 3.0, 0.1)
    cmd = np.where(t < 1.5, 0.8, -0.8)
    res = rollout(p, t, cmd, np.zeros_like(t), None, t_out=np.array([0.0, 1.49, 2.99]),
                  steering_kind='normalised')
    np.testing.assert_allclose(res.steering[0, 1:], steering_map(np.array([0.8, -0.8]), p),
                               atol=1e-12)
    with pytest.raises(ConfigError, match=r"unknown steering_kind 'normalized'.*normalised"):
        Car(p, steering_kind='normalized')


# --------------------------------------------------------------------------- batch
def test_mixed_models_batch_equals_single_cars_and_rollout() -> None:
    ps = [BASE,
          BASE.with_values(servo_model='first_order', steering_dead_band=0.02),
          BASE.with_values(servo_model='second_order', steering_backlash=0.01,
                           servo_damping_ratio=0.4),
          BASE.with_values(servo_model='second_order', servo_natural_frequency=15.0,
                           command_latency=0.02, drive_model='first_order')]
    ps = ps * 2  # 8 cars: the threaded path of Car.step
    dt = 2e-3
    t_cmd = dt * np.arange(600)
    steer = 0.3 * np.sign(np.sin(3 * t_cmd))
    wheel = np.full_like(t_cmd, 40.0)
    batch = Car(ps, dt=dt)
    out = []
    for k in range(len(t_cmd)):
        batch.step(steer[k], wheel[k])
        out.append(batch.state.copy())
    states = np.array(out)
    for i, p in enumerate(ps[:4]):
        one = Car(p, dt=dt)
        for k in range(len(t_cmd)):
            one.step(steer[k], wheel[k])
            np.testing.assert_array_equal(one.state[0], states[k, i])
    res = rollout(ps, t_cmd, steer, wheel, InitialState(), t_out=np.append(t_cmd, t_cmd[-1] + dt),
                  dt=dt)
    np.testing.assert_array_equal(res.states[:, 1:, :], states.transpose(1, 0, 2))
