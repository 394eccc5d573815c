"""ROS-free helpers of the node, launch file and bag tool (parameters, stamps, limits)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.errors import ConfigError
from rc_sim_sensors.lidar_config import LidarErrorConfig, config_fields
from rc_sim_sensors.scan_io import (
    base_config,
    beam_angles,
    delayed_stamp,
    launch_overrides,
    launch_parameters,
    parameter_specs,
    reported_limits,
    stamp_seconds,
    updated_config,
)


def test_beam_angles_and_stamps():
    np.testing.assert_allclose(beam_angles(-1.0, 0.5, 5), [-1.0, -0.5, 0.0, 0.5, 1.0])
    assert stamp_seconds(12, 500_000_000) == 12.5
    assert delayed_stamp(1_700_000_000, 999_999_999, 0.02) == (1_700_000_001, 19_999_999)
    assert delayed_stamp(5, 0, 0.0) == (5, 0)


def test_reported_limits_take_the_tighter_one():
    assert reported_limits(0.06, 30.0, LidarErrorConfig()) == (0.06, 30.0)
    c = LidarErrorConfig.from_mapping({'range_min': 0.1, 'range_max': 8.0}, 't')
    assert reported_limits(0.06, 30.0, c) == (0.1, 8.0)
    assert reported_limits(0.2, 5.0, c) == (0.2, 5.0)


def test_parameter_specs_cover_every_key_with_typed_defaults():
    c = LidarErrorConfig.from_preset('hokuyo_ust10lx')
    specs = {s.name: s for s in parameter_specs(c)}
    assert set(specs) == {f.name for f in config_fields()}
    assert specs['range_min'].default == 0.06 and isinstance(specs['noise_mean'].default, float)
    assert isinstance(specs['seed'].default, int) and specs['out_of_range'].default == 'rep117'
    assert specs['range_max'].description.startswith('[m]')
    assert math.isinf(parameter_specs(LidarErrorConfig())[[f.name for f in config_fields()]
                                                         .index('range_max')].default)


def test_updated_config_validates_live_changes():
    c = LidarErrorConfig.from_preset('harsh')
    d = updated_config(c, {'noise_stddev': 0.05, 'use_sim_time': True})
    assert d.noise_stddev == 0.05 and d.range_max == c.range_max
    assert updated_config(c, {'use_sim_time': False}) is c
    with pytest.raises(ConfigError, match='dropout_probability: must be a probability'):
        updated_config(c, {'dropout_probability': 3.0})
    with pytest.raises(ConfigError, match='range_min: must be < range_max'):
        updated_config(c, {'range_min': 9.0})


def test_base_config_prefers_the_file(tmp_path):
    path = tmp_path / 'e.yaml'
    path.write_text('noise_stddev: 0.5\n')
    assert base_config('harsh', str(path)).noise_stddev == 0.5
    assert base_config('', '') == LidarErrorConfig()
    assert base_config('rplidar_a1', '').range_max == 12.0
    with pytest.raises(ConfigError, match='unknown lidar error preset'):
        base_config('nope', '')


def test_launch_overrides_are_typed_and_checked():
    out = launch_overrides({'noise_stddev': '1', 'seed': '7', 'out_of_range': 'clamp',
                            'latency': '', 'range_max': '.inf', 'unrelated': 'x'})
    assert out == {'noise_stddev': 1.0, 'seed': 7, 'out_of_range': 'clamp',
                   'range_max': math.inf}
    assert isinstance(out['noise_stddev'], float)
    with pytest.raises(ConfigError, match='launch arguments: dropout_probability: must be a prob'):
        launch_overrides({'dropout_probability': '1.5'})
    with pytest.raises(ConfigError, match='seed: must be an integer'):
        launch_overrides({'seed': '1.5'})


def test_launch_parameters():
    params = launch_parameters({'preset': 'harsh', 'config_file': '', 'use_sim_time': 'false',
                                'input_topic': 'scan_raw', 'output_topic': 'scan',
                                'noise_stddev': '0.1', 'seed': ''})
    assert params == {'preset': 'harsh', 'input_topic': 'scan_raw', 'output_topic': 'scan',
                      'use_sim_time': False, 'noise_stddev': 0.1}
    with pytest.raises(ConfigError, match='use_sim_time'):
        launch_parameters({'use_sim_time': 'yes'})
    with pytest.raises(ConfigError, match='unknown lidar error preset'):
        launch_parameters({'preset': 'hokuyo'})
