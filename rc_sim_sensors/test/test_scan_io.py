"""ROS-free helpers of the node, launch file and bag tool (parameters, stamps, limits)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from rc_sim_description.errors import ConfigError
from rc_sim_sensors.lidar_config import LidarErrorConfig, config_fields
from rc_sim_sensors.lidar_errors import LidarErrorModel
from rc_sim_sensors.scan_io import (
    ProblemThrottle,
    base_config,
    beam_angles,
    corrupt_message,
    delayed_stamp,
    launch_overrides,
    launch_parameters,
    misspelt_launch_argument,
    parameter_specs,
    problem_kind,
    reported_limits,
    stamp_problem,
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
    # a combination the node would refuse stops the launch (hokuyo_ust10lx: range_max 10 m)
    with pytest.raises(ConfigError, match='launch arguments: range_min: must be < range_max'):
        launch_parameters({'preset': 'hokuyo_ust10lx', 'range_min': '12'})
    with pytest.raises(ConfigError, match="out_of_range: 'clamp' needs a finite range_max"):
        launch_parameters({'out_of_range': 'clamp'})


def test_misspelt_launch_arguments_are_named_unrelated_ones_pass():
    names = ['preset', 'noise_stddev', 'seed']
    assert misspelt_launch_argument(['noise_stddev:=0.1', 'seed:=2'], names) is None
    assert misspelt_launch_argument(['backend:=embedded', 'x'], names) is None  # a parent's
    assert misspelt_launch_argument(['noise_stdev:=0.1'], names) == (
        "launch argument noise_stdev:=...: unknown (did you mean 'noise_stddev'?)")


def _msg(ranges, stamp=(10, 0), **kw):
    fields = {'ranges': np.asarray(ranges, np.float32), 'intensities': np.zeros(0, np.float32),
              'angle_min': -0.5, 'angle_increment': 0.1, 'range_min': 0.05,
              'range_max': 20.0,
              'header': SimpleNamespace(stamp=SimpleNamespace(sec=stamp[0], nanosec=stamp[1]))}
    fields.update(kw)
    return SimpleNamespace(**fields)


def test_corrupt_message_applies_the_model_in_place():
    config = LidarErrorConfig.from_mapping({'noise_mean': 0.25, 'latency': 0.5,
                                            'range_max': 8.0}, 't')
    msg = _msg([1.0, 2.0, 9.0], intensities=np.array([3.0, 4.0, 5.0], np.float32))
    assert corrupt_message(LidarErrorModel(config), msg) is True
    np.testing.assert_array_equal(np.asarray(msg.ranges), [1.25, 2.25, np.inf])
    np.testing.assert_array_equal(np.asarray(msg.intensities), [3.0, 4.0, 5.0])
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (10, 500_000_000)
    assert (msg.range_min, msg.range_max) == (0.05, 8.0)
    lost = LidarErrorConfig.from_mapping({'scan_loss_probability': 1.0}, 't')
    assert corrupt_message(LidarErrorModel(lost), _msg([1.0, 2.0])) is False
    # an empty scan goes through (nothing to corrupt)
    empty = _msg([])
    assert corrupt_message(LidarErrorModel(config), empty) is True and len(empty.ranges) == 0


@pytest.mark.parametrize(('fields', 'fragment'), [
    ({'angle_increment': 0.0}, 'angle_increment is 0.0'),
    ({'angle_min': 1e300}, 'angle_min is 1e+300'),
    ({'intensities': np.ones(2, np.float32)}, '2 intensities for 3 ranges'),
    ({'range_min': 5.0, 'range_max': 5.0}, 'range_min 5 m is not below range_max 5 m'),
    ({'header': SimpleNamespace(stamp=SimpleNamespace(sec=2**31 - 1, nanosec=999_999_999))},
     'does not fit a ROS time'),
])
def test_corrupt_message_refuses_unusable_scans_and_leaves_them_alone(fields, fragment):
    model = LidarErrorModel(LidarErrorConfig.from_mapping(
        {'noise_stddev': 0.1, 'latency': 0.01}, 't'), 3)
    msg = _msg([1.0, 2.0, 3.0], **fields)
    ranges = np.array(msg.ranges)
    state = model.rng.bit_generator.state
    problem = corrupt_message(model, msg)
    assert isinstance(problem, str) and fragment in problem and '\n' not in problem
    np.testing.assert_array_equal(np.asarray(msg.ranges), ranges)
    assert model.rng.bit_generator.state == state and model.state.scan_count == 0


def test_stamp_problem_int32_seconds():
    assert stamp_problem(2**31 - 2, 0, 0.5) is None
    assert stamp_problem(2**31 - 1, 600_000_000, 0.5) is not None
    assert stamp_problem(-5, 0, 1.0) is None


def test_problem_throttle_reports_each_kind_once_per_period():
    assert problem_kind('angle_increment is 0.0 (x)') == problem_kind('angle_increment is nan (x)')
    assert problem_kind('2 intensities for 5 ranges') == problem_kind('7 intensities for 9 ranges')
    assert problem_kind('angle_min is nan') != problem_kind('angle_increment is nan')
    throttle = ProblemThrottle(5.0)
    assert throttle.report('angle_increment is 0.0', 100.0) == 0
    assert throttle.report('angle_increment is nan', 101.0) is None
    assert throttle.report('range_min is nan', 101.5) == 0  # another kind: reported at once
    assert throttle.report('angle_increment is 0.0', 104.9) is None
    assert throttle.report('angle_increment is 0.0', 105.0) == 2  # two held back
