"""Actuator keys of vehicle.yaml: defaults keep the gz PD models, checks give one line naming the
key, every key is a normal fittable leaf (with_values, dump_override), derived values."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rc_sim_description.errors import VehicleParamsError
from rc_sim_description.params import (
    DRIVE_MODELS,
    SERVO_MODELS,
    default_vehicle_yaml,
    dump_override,
    load_vehicle_params,
)

NEW_KEYS = {
    'steering': ['servo_model', 'servo_time_constant', 'servo_natural_frequency',
                 'servo_damping_ratio', 'steering_dead_band', 'steering_backlash',
                 'steering_gain_left', 'steering_gain_right', 'steering_curvature_left',
                 'steering_curvature_right'],
    'drive': ['drive_model', 'effective_wheel_radius', 'drive_time_constant', 'max_acceleration',
              'max_deceleration', 'motor_force_gain', 'motor_back_emf_gain', 'rolling_resistance',
              'viscous_resistance', 'drag_coefficient', 'throttle_dead_band',
              'throttle_time_constant'],
}


def test_defaults_keep_the_gz_pd_models_and_resolve_nulls() -> None:
    p = load_vehicle_params()
    assert (p.steering.servo_model, p.drive.drive_model) == ('pd_joint', 'pd_joint')
    assert p.steering.steering_dead_band == p.steering.steering_backlash == 0.0
    assert p.drive.effective_wheel_radius is None
    assert p.effective_wheel_radius == p.geometry.wheel_radius
    assert p.normalised_steering_gains == (p.steering.max_steering_angle,) * 2
    q = p.with_values(effective_wheel_radius=0.0485, steering_gain_left=0.3)
    assert q.effective_wheel_radius == 0.0485
    assert q.normalised_steering_gains == (0.3, p.steering.max_steering_angle)
    assert set(SERVO_MODELS) == {'pd_joint', 'first_order', 'second_order'}
    assert set(DRIVE_MODELS) == {'pd_joint', 'first_order', 'throttle', 'acceleration'}
    data = yaml.safe_load(default_vehicle_yaml().read_text())
    for section, keys in NEW_KEYS.items():
        assert all(k in data[section] for k in keys)  # every key written in vehicle.yaml


@pytest.mark.parametrize(('section', 'key', 'value', 'message'), [
    ('steering', 'servo_model', 'third_order',
     'steering.servo_model: must be one of pd_joint, first_order, second_order'),
    ('drive', 'drive_model', 'duty', 'drive.drive_model: must be one of pd_joint, first_order'),
    ('steering', 'servo_time_constant', 0.0, 'steering.servo_time_constant: must be in [0.005, 2] s'),
    ('steering', 'servo_damping_ratio', 0.0, 'steering.servo_damping_ratio: must be in [0.05, 10], got 0.0'),
    ('steering', 'steering_curvature_left', -1.0,
     'steering.steering_curvature_left: must be in [0, 20]'),
    ('steering', 'steering_gain_right', 2.0, 'steering.steering_gain_right: must be in (0, pi/2)'),
    ('steering', 'steering_dead_band', 0.5,
     'steering.steering_dead_band: must be below max_steering_angle'),
    ('steering', 'steering_backlash', -0.01, 'steering.steering_backlash: must be in [0, 0.5] rad'),
    ('drive', 'effective_wheel_radius', 0.07,
     'drive.effective_wheel_radius: must be within 20 % of wheel_radius'),
    ('drive', 'throttle_dead_band', 0.95, 'drive.throttle_dead_band: must be in [0, 0.9]'),
    ('drive', 'max_deceleration', 0.0, 'drive.max_deceleration: must be in [0.1, 100] m/s^2'),
    ('drive', 'rolling_resistance', float('nan'), 'drive.rolling_resistance: must be finite'),
])
def test_bad_actuator_values_are_one_line_naming_the_key(tmp_path: Path, section: str, key: str,
                                                         value: object, message: str) -> None:
    data = yaml.safe_load(default_vehicle_yaml().read_text())
    data[section][key] = value
    path = tmp_path / 'vehicle.yaml'
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(VehicleParamsError) as info:
        load_vehicle_params(path)
    text = str(info.value)
    assert '\n' not in text and text.startswith(str(path)) and message in text


def test_every_new_key_is_fittable_and_round_trips(tmp_path: Path) -> None:
    p = load_vehicle_params()
    values = {'servo_model': 'second_order', 'servo_time_constant': 0.09,
              'servo_natural_frequency': 21.0, 'servo_damping_ratio': 0.55,
              'steering_dead_band': 0.004, 'steering_backlash': 0.006,
              'steering_gain_left': 0.334, 'steering_gain_right': 0.389,
              'steering_curvature_left': 1.35, 'steering_curvature_right': 1.05,
              'drive_model': 'throttle', 'effective_wheel_radius': 0.0493,
              'drive_time_constant': 0.12, 'max_acceleration': 4.0, 'max_deceleration': 7.0,
              'motor_force_gain': 25.4, 'motor_back_emf_gain': 4.8, 'rolling_resistance': 1.27,
              'viscous_resistance': 0.74, 'drag_coefficient': 0.0, 'throttle_dead_band': 0.164,
              'throttle_time_constant': 0.084}
    assert set(values) == {k for keys in NEW_KEYS.values() for k in keys}
    q = p.with_values(**values)
    path = tmp_path / 'cal.yaml'
    dump_override(values, path, header='fitted')
    back = load_vehicle_params(overrides=[path])
    for key, value in values.items():
        assert back.leaf_values()[key] == value == q.leaf_values()[key], key
    # null goes back to the default meaning
    dump_override({'effective_wheel_radius': None, 'steering_gain_left': None}, path)
    again = load_vehicle_params(overrides=[path])
    assert again.effective_wheel_radius == p.geometry.wheel_radius
