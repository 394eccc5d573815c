"""LidarErrorConfig: defaults, presets, validation with one-line errors naming file and key."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rc_sim_description.errors import ConfigError
from rc_sim_sensors.lidar_config import PRESETS, LidarErrorConfig, config_fields, preset_path

REQUIRED_KEYS = ('seed', 'noise_mean', 'noise_stddev', 'bias_initial', 'bias_walk_stddev',
                 'dropout_probability', 'range_min', 'range_max', 'range_resolution',
                 'angle_resolution')


def test_defaults_turn_every_effect_off():
    c = LidarErrorConfig()
    assert not (c.has_noise or c.has_bias or c.has_ray_events or c.has_angular_effects)
    assert c.range_min == 0.0 and c.range_max == math.inf
    assert c.noise_mean == 0 and c.latency == 0 and c.scan_loss_probability == 0
    assert c.mixed_pixel_probability == 0 and c.spurious_probability == 0


def test_issue_keys_exist_and_every_field_is_documented():
    names = [f.name for f in config_fields()]
    for key in REQUIRED_KEYS:
        assert key in names
    for f in config_fields():
        assert f.metadata['unit'] and f.metadata['doc']


@pytest.mark.parametrize('name', PRESETS)
def test_presets_load(name):
    c = LidarErrorConfig.from_preset(name)
    assert c.source.endswith(f'{name}.yaml')
    assert preset_path(name).is_file()


def test_presets_are_ordered_by_severity():
    ideal = LidarErrorConfig.from_preset('ideal')
    assert ideal == LidarErrorConfig()
    harsh = LidarErrorConfig.from_preset('harsh')
    assert harsh.has_noise and harsh.has_bias and harsh.has_ray_events and harsh.has_angular_effects
    assert harsh.latency > 0 and harsh.scan_loss_probability > 0 and harsh.mixed_pixel_probability > 0
    a1 = LidarErrorConfig.from_preset('rplidar_a1')
    ust = LidarErrorConfig.from_preset('hokuyo_ust10lx')
    assert ust.range_min == 0.06 and ust.range_max == 10.0
    assert a1.angle_resolution == pytest.approx(math.radians(1.0))
    utm = LidarErrorConfig.from_preset('hokuyo_utm30lx')
    # accuracy bands of the datasheet read as +-3 sigma: 30 mm at 10 m, 50 mm at 30 m
    assert 3 * (utm.noise_stddev + 10 * utm.noise_stddev_per_meter) == pytest.approx(0.030, abs=2e-4)
    assert 3 * (utm.noise_stddev + 30 * utm.noise_stddev_per_meter) == pytest.approx(0.050, abs=2e-4)


def test_unknown_preset_lists_known_ones():
    with pytest.raises(ConfigError, match=r"unknown lidar error preset 'harsch' \(did you mean 'harsh'\?\)"):
        LidarErrorConfig.from_preset('harsch')


def test_unknown_key_did_you_mean(tmp_path):
    path = tmp_path / 'e.yaml'
    path.write_text('noise_stdev: 0.1\n')
    with pytest.raises(ConfigError) as info:
        LidarErrorConfig.from_yaml(path)
    msg = str(info.value)
    assert msg == f"{path}: noise_stdev: unknown key (did you mean 'noise_stddev'?)"
    assert '\n' not in msg


@pytest.mark.parametrize(('text', 'fragment'), [
    ('dropout_probability: 1.5', 'dropout_probability: must be a probability in [0, 1], got 1.5'),
    ('noise_stddev: -0.1', 'noise_stddev: must be >= 0'),
    ('noise_stddev: .nan', 'noise_stddev: must be finite'),
    ('noise_mean: .inf', 'noise_mean: must be finite'),
    ('noise_stddev: abc', "noise_stddev: must be a number, got str 'abc'"),
    ('noise_stddev: true', 'noise_stddev: must be a number, got bool'),
    ('seed: 1.5', 'seed: must be an integer'),
    ('seed: -1', 'seed: must be in [0, 2**63)'),
    ('out_of_range: wrap', "out_of_range: must be one of rep117, clamp, zero, got 'wrap'"),
    ('range_min: 5.0\nrange_max: 4.0', 'range_min: must be < range_max'),
    ('spurious_probability: 0.1', 'spurious_probability: needs a finite range_max'),
    ('out_of_range: clamp', "out_of_range: 'clamp' needs a finite range_max"),
    ('latency: 2.0', 'latency: must be in [0, 1] s'),
    ('mount_yaw_offset: 4.0', 'mount_yaw_offset: must be in [-pi, pi] rad'),
    ('bias_correlation_time: 0', 'bias_correlation_time: must be > 0'),
    ('incidence_dropout_start: 1.6', 'incidence_dropout_start: must be in [0, pi/2) rad'),
    ('range_max: 1.0\nrange_resolution: 2.0', 'range_resolution: must be smaller than the range span'),
    ('- 1\n- 2', 'must be a mapping of lidar error keys, got list'),
    ('noise_stddev: [0.1', 'malformed YAML at line'),
])
def test_bad_values_give_one_line_errors(tmp_path, text, fragment):
    path = tmp_path / 'bad.yaml'
    path.write_text(text + '\n')
    with pytest.raises(ConfigError) as info:
        LidarErrorConfig.from_yaml(path)
    msg = str(info.value)
    assert msg.startswith(str(path))
    assert fragment in msg
    assert '\n' not in msg


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match='file not found'):
        LidarErrorConfig.from_yaml(tmp_path / 'nope.yaml')


def test_range_max_null_means_no_limit_and_empty_file_is_identity(tmp_path):
    path = tmp_path / 'e.yaml'
    path.write_text('range_max: null\n')
    assert LidarErrorConfig.from_yaml(path).range_max == math.inf
    path.write_text('')
    assert LidarErrorConfig.from_yaml(path) == LidarErrorConfig()


def test_with_values_validates_and_keeps_others():
    c = LidarErrorConfig.from_preset('hokuyo_ust10lx')
    d = c.with_values(noise_stddev=0.05)
    assert d.noise_stddev == 0.05 and d.range_max == c.range_max
    with pytest.raises(ConfigError, match='dropout_probability'):
        c.with_values(dropout_probability=-0.1)
    with pytest.raises(ConfigError, match='unknown key'):
        c.with_values(noise=0.1)
    assert c.to_dict()['range_min'] == 0.06
    assert LidarErrorConfig.from_mapping(c.to_dict(), 'x') == c


def test_every_key_is_documented_in_docs():
    doc = (Path(__file__).resolve().parents[2] / 'docs' / 'lidar_errors.md')
    if not doc.is_file():
        pytest.skip('docs/ not shipped with this package')
    text = doc.read_text(encoding='utf-8')
    for f in config_fields():
        assert f'`{f.name}`' in text, f.name
    for name in PRESETS:
        assert f'img/lidar_preset_{name}.png' in text
