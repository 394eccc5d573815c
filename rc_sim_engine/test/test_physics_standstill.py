"""Standstill and reverse: no NaN for any model/integrator/tyre law; reverse goes backwards."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.rollout import InitialState, rollout

CASES = list(itertools.product(['kinematic', 'single_track'], ['rk4', 'semi_implicit_euler'],
                               ['linear', 'fiala', 'fiala_unsaturated', 'pacejka'],
                               [1e-3, 1e-2]))


@pytest.mark.parametrize(('model', 'integrator', 'tyre', 'dt'), CASES)
def test_standstill_then_reverse_is_finite(model: str, integrator: str, tyre: str,
                                           dt: float) -> None:
    p = load_vehicle_params()
    car = Car(p, model=model, integrator=integrator, dt=dt, tyre_model=tyre,
              load_transfer=tyre == 'pacejka')
    car.step(0.0, 0.0, int(0.5 / dt))  # at rest, zero command: stays at rest
    np.testing.assert_allclose(np.concatenate(car.base_link_pose() + car.base_link_twist()),
                               0.0, atol=1e-9)
    assert abs(car.wheel_speed()[0]) < 1e-9
    car.step(0.3, -40.0, int(2.0 / dt))  # reverse with left steering
    assert np.all(np.isfinite(car.state))
    vx, _, r = car.base_link_twist()
    assert vx[0] < -1.0
    assert r[0] < 0.0  # reversing with left lock turns clockwise: r = vx tan(delta) / L
    car.step(-0.3, 40.0, int(3.0 / dt))  # through v = 0 to forward
    assert np.all(np.isfinite(car.state))
    assert car.base_link_twist()[0][0] > 1.0
    ax, ay = car.body_acceleration()
    assert np.isfinite(ax[0]) and np.isfinite(ay[0])


def test_rollout_from_rest_is_finite() -> None:
    p = load_vehicle_params()
    t = np.linspace(0.0, 2.0, 21)
    res = rollout([p], t, np.zeros_like(t), np.where(t < 1.0, 0.0, -20.0), InitialState(),
                  t_out=t)
    for name in ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'speed', 'steering', 'wheel_speed'):
        assert np.all(np.isfinite(getattr(res, name))), name
    assert abs(res.x[0, 10]) < 1e-9 and res.x[0, -1] < -0.1
