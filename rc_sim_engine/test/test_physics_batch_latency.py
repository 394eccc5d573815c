"""Batch == single car, rollout == Car, and a pure command latency shifts the response exactly."""

from __future__ import annotations

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import PARALLEL_MIN_CARS, Car
from rc_sim_engine.vehicle.rollout import InitialState, rollout


def _params(n: int) -> list:
    base = load_vehicle_params()
    return [base.with_values(cornering_stiffness_front=80.0 + 5 * i,
                             steering_gain=0.95 + 0.01 * i, mass=3.5 + 0.05 * i)
            for i in range(n)]


@pytest.mark.parametrize('n', [3, PARALLEL_MIN_CARS + 1])
def test_batch_equals_single_cars(n: int) -> None:
    params = _params(n)
    steer = np.linspace(-0.3, 0.3, n)
    batch = Car(params, dt=2e-3)
    batch.reset(speed=1.0)
    batch.step(steer, 50.0, 400)
    for i, p in enumerate(params):
        one = Car(p, dt=2e-3)
        one.reset(speed=1.0)
        one.step(steer[i], 50.0, 400)
        np.testing.assert_array_equal(batch.state[i], one.state[0])


def test_rollout_equals_car_stepping() -> None:
    params = _params(2)
    dt = 1e-3
    t_cmd = np.arange(0.0, 1.5, 0.05)
    steer = 0.3 * np.sin(3 * t_cmd)
    wheel = 40.0 + 10 * np.cos(2 * t_cmd)
    t_out = np.arange(0.0, 1.5, 0.05)
    res = rollout(params, t_cmd, steer, wheel, InitialState(vx=2.0), t_out=t_out, dt=dt)
    car = Car(params, dt=dt)
    car.reset(speed=2.0)
    for j in range(len(t_out) - 1):
        np.testing.assert_array_equal(res.states[:, j], car.state)
        car.step(steer[j], wheel[j], 50)
    bx, _, byaw = car.base_link_pose()
    np.testing.assert_array_equal(res.x[:, -1], bx)
    np.testing.assert_array_equal(res.yaw[:, -1], byaw)


def test_latency_shifts_rollout_response_by_exactly_the_delay() -> None:
    base = load_vehicle_params()
    delay, dt = 0.05, 1e-3
    params = [base, base.with_values(command_latency=delay)]
    t_cmd = np.array([0.0, 0.3, 0.6])
    steer = np.array([0.0, 0.25, -0.1])
    wheel = np.array([0.0, 40.0, 60.0])
    t_out = np.round(np.arange(0.0, 1.5, dt), 9)
    res = rollout(params, t_cmd, steer, wheel, None, t_out=t_out, dt=dt)
    k = round(delay / dt)
    for name in ('x', 'y', 'yaw', 'vx', 'steering', 'wheel_speed'):
        arr = getattr(res, name)
        np.testing.assert_allclose(arr[1, k:], arr[0, :-k], atol=1e-9, err_msg=name)
    assert np.all(res.steering[1, :k + 300] == res.steering[1, 0])  # nothing before 0.3 + delay
    assert res.steering[0, 300 + 20] != res.steering[0, 0]


def test_latency_shifts_car_response_by_exactly_the_delay() -> None:
    base = load_vehicle_params()
    dt, delay = 1e-3, 0.02
    cars = [Car(base, dt=dt), Car(base.with_values(command_latency=delay), dt=dt)]
    hist: list[list[np.ndarray]] = [[], []]
    for k in range(600):
        cmd = (0.2, 50.0) if k >= 100 else (0.0, 0.0)
        for c, h in zip(cars, hist):
            c.step(*cmd)
            h.append(c.state[0].copy())
    a, b = np.array(hist[0]), np.array(hist[1])
    s = round(delay / dt)
    np.testing.assert_allclose(b[s:], a[:-s], atol=1e-9)
    assert not np.allclose(b, a, atol=1e-6)
