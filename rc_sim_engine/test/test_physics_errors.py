"""Bad arguments give one-line ConfigErrors naming the culprit."""

from __future__ import annotations

import numpy as np
import pytest

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.rollout import rollout


@pytest.mark.parametrize(('kwargs', 'match'), [
    ({'model': 'bicycle'}, "^unknown vehicle model 'bicycle'"),
    ({'integrator': 'euler'}, r"^unknown integrator 'euler' \(choose from [a-z0-9_, ]+\)$"),
    ({'tyre_model': 'brush'}, "^unknown tyre model 'brush'"),
    ({'dt': 0.0}, 'dt must be'),
    ({'dt': float('nan')}, 'dt must be'),
])
def test_bad_car_options(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        Car(load_vehicle_params(), **kwargs)
    assert '\n' not in str(info.value)


@pytest.mark.parametrize(('steer', 'wheel', 'match'), [
    (float('nan'), 1.0, 'steering_angle_cmd: must be finite'),
    (0.0, [1.0, 2.0, 3.0], r'wheel_speed_cmd: expected a scalar or shape \(2,\)'),
    ('left', 1.0, 'steering_angle_cmd: expected a number'),
])
def test_bad_step_commands(steer: object, wheel: object, match: str) -> None:
    car = Car(load_vehicle_params(), n=2)
    before = car.state.copy()
    with pytest.raises(ConfigError, match=match):
        car.step(steer, wheel)  # type: ignore[arg-type]
    np.testing.assert_array_equal(car.state, before)


def test_bad_rollout_inputs() -> None:
    p = load_vehicle_params()
    t = np.linspace(0, 1, 5)
    with pytest.raises(ConfigError, match='t_out: times must be non-decreasing'):
        rollout([p], t, t, t, None, t_out=t[::-1])
    with pytest.raises(ConfigError, match='steering_cmd: commands must be finite'):
        rollout([p], t, np.full(5, np.nan), t, None, t_out=t)
    with pytest.raises(ConfigError, match=r'wheel_speed_cmd: expected shape \(5,\) or \(1, 5\)'):
        rollout([p], t, t, np.zeros(4), None, t_out=t)
    with pytest.raises(ConfigError, match='need at least one'):
        rollout([], t, t, t, None, t_out=t)
