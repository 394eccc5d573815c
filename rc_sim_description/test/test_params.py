"""vehicle.yaml loader: defaults, derived values, overrides and one-line errors naming file and key."""

from __future__ import annotations

import math
from pathlib import Path
import re

import pytest
import yaml

from rc_sim_description.errors import VehicleParamsError
from rc_sim_description.params import (
    default_vehicle_yaml,
    dump_override,
    leaf_keys,
    load_vehicle_params,
)

REQUIRED_NAMES = ['wheelbase', 'track_width', 'wheel_radius', 'mass', 'yaw_inertia',
                  'cg_to_front_axle', 'max_steering_angle', 'steering_gain', 'steering_offset',
                  'command_latency']


@pytest.fixture
def default_data() -> dict:
    return yaml.safe_load(default_vehicle_yaml().read_text())


def write(tmp_path: Path, data: object, name: str = 'vehicle.yaml') -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def test_defaults_load_with_f1tenth_values() -> None:
    p = load_vehicle_params()
    assert p.mass_properties.mass == 3.74
    assert p.geometry.cg_to_front_axle == 0.15875
    assert math.isclose(p.geometry.cg_to_rear_axle, 0.17145, abs_tol=1e-12)
    assert p.mass_properties.yaw_inertia == 0.04712
    assert p.steering.max_steering_angle == 0.4189
    assert p.sensors.lidar_samples == 1081
    assert math.isclose(math.degrees(p.sensors.lidar_fov), 270.0)
    assert (p.sensors.lidar_range_min, p.sensors.lidar_range_max) == (0.06, 10.0)
    assert p.sensors.lidar_update_rate == 40.0


def test_required_key_names_exist() -> None:
    keys = leaf_keys()
    for name in REQUIRED_NAMES:
        assert name in keys


def test_derived_quantities_follow_their_formulas() -> None:
    p = load_vehicle_params()
    assert math.isclose(p.min_turning_radius, 0.3302 / math.tan(0.4189))
    assert math.isclose(p.max_speed, p.drive.max_wheel_speed * p.geometry.wheel_radius)
    ixx, iyy, izz = p.principal_inertias
    assert izz == p.mass_properties.yaw_inertia
    # a real box: each moment below the sum of the two others
    assert ixx < iyy + izz and iyy < ixx + izz and izz < ixx + iyy
    # scaled box keeps Izz/m = s^2 (l^2 + w^2)/12 and Ixx from the same s
    g, m = p.geometry, p.mass_properties.mass
    s2 = izz / (m * (g.chassis_length ** 2 + g.chassis_width ** 2) / 12)
    assert math.isclose(ixx, m * (s2 * g.chassis_width ** 2 + g.chassis_height ** 2) / 12)
    assert math.isclose(p.sensors.lidar_angle_increment, p.sensors.lidar_fov / 1080)


@pytest.mark.parametrize(('section', 'key', 'value', 'message'), [
    ('mass_properties', 'mass', 0.0, 'mass_properties.mass: must be in [0.01, 100] kg, got 0.0'),
    ('mass_properties', 'mass', -1.0, 'mass_properties.mass: must be in [0.01, 100] kg'),
    ('mass_properties', 'mass', 1e308, 'mass_properties.mass: must be in [0.01, 100] kg, got 1e+308'),
    ('geometry', 'wheelbase', 0.0, 'geometry.wheelbase: must be in [0.02, 2] m'),
    ('steering', 'max_steering_angle', math.pi / 2, 'steering.max_steering_angle: must be in (0, pi/2)'),
    ('steering', 'max_steering_angle', -0.3, 'steering.max_steering_angle: must be in (0, pi/2)'),
    ('geometry', 'wheelbase', 'long', 'geometry.wheelbase: must be a number, got str'),
    ('geometry', 'wheelbase', True, 'geometry.wheelbase: must be a number, got bool'),
    ('geometry', 'wheelbase', float('nan'), 'geometry.wheelbase: must be finite'),
    ('sensors', 'lidar_samples', 10.5, 'sensors.lidar_samples: must be an integer'),
    ('tyres', 'tyre_model', 'magic', 'tyres.tyre_model: must be one of linear, fiala, pacejka'),
    ('friction', 'fdir1', [1.0, 1.0, 0.0], 'friction.fdir1: must be a unit vector'),
    ('geometry', 'cg_to_front_axle', 0.5, 'geometry.cg_to_front_axle: must be in [0.05, 0.95] * wheelbase'),
    ('mass_properties', 'roll_inertia', 1.0, 'mass_properties.roll_inertia: violates the triangle inequality'),
    ('sensors', 'lidar_range_min', 20.0, 'sensors.lidar_range_min: must be < lidar_range_max'),
    ('timing', 'command_latency', -0.01, 'timing.command_latency: must be in [0, 1] s'),
])
def test_impossible_values_name_file_and_key(tmp_path: Path, default_data: dict, section: str,
                                             key: str, value: object, message: str) -> None:
    default_data[section][key] = value
    path = write(tmp_path, default_data)
    with pytest.raises(VehicleParamsError) as info:
        load_vehicle_params(path)
    text = str(info.value)
    assert '\n' not in text
    assert text.startswith(str(path))
    assert message in text


def test_centre_of_mass_on_the_rear_axle_is_rejected(tmp_path: Path, default_data: dict) -> None:
    """lf = L (lr = 0: no rear axle load, no drive) and just inside the 5 % load margin."""
    length = default_data['geometry']['wheelbase']
    default_data['geometry']['cg_to_front_axle'] = length
    with pytest.raises(VehicleParamsError,
                       match=r'geometry\.cg_to_front_axle: must be in \[0\.05, 0\.95\] \* wheelbase'):
        load_vehicle_params(write(tmp_path, default_data))
    default_data['geometry']['cg_to_front_axle'] = 0.951 * length
    with pytest.raises(VehicleParamsError, match='of the weight on each axle'):
        load_vehicle_params(write(tmp_path, default_data))
    default_data['geometry']['cg_to_front_axle'] = 0.949 * length
    assert load_vehicle_params(write(tmp_path, default_data)).geometry.cg_to_front_axle > 0.3


def test_missing_key(tmp_path: Path, default_data: dict) -> None:
    del default_data['geometry']['track_width']
    path = write(tmp_path, default_data)
    with pytest.raises(VehicleParamsError, match=r'geometry\.track_width: missing key'):
        load_vehicle_params(path)


def test_missing_section(tmp_path: Path, default_data: dict) -> None:
    del default_data['drive']
    with pytest.raises(VehicleParamsError, match='drive: missing section'):
        load_vehicle_params(write(tmp_path, default_data))


def test_unknown_key_suggests_the_right_one(tmp_path: Path, default_data: dict) -> None:
    default_data['geometry']['wheelbse'] = 0.3
    with pytest.raises(VehicleParamsError, match=r"geometry\.wheelbse: unknown key \(did you mean 'wheelbase'\?\)"):
        load_vehicle_params(write(tmp_path, default_data))


def test_key_in_wrong_section_says_where_it_belongs(tmp_path: Path, default_data: dict) -> None:
    default_data['geometry']['mass'] = 3.0
    with pytest.raises(VehicleParamsError, match="belongs in section 'mass_properties'"):
        load_vehicle_params(write(tmp_path, default_data))


def test_malformed_yaml_is_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'geometry: {wheelbase: [1, 2\n')
    with pytest.raises(VehicleParamsError, match='malformed YAML at line') as info:
        load_vehicle_params(path)
    assert '\n' not in str(info.value)


def test_top_level_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(VehicleParamsError, match='top level must be a mapping'):
        load_vehicle_params(write(tmp_path, '- 1\n- 2\n'))


def test_missing_file() -> None:
    with pytest.raises(VehicleParamsError, match=r'nope\.yaml: file not found'):
        load_vehicle_params('nope.yaml')


def test_override_merges_and_is_checked(tmp_path: Path) -> None:
    over = write(tmp_path, {'geometry': {'wheelbase': 0.35}, 'steering': {'steering_gain': 1.1}},
                 'over.yaml')
    p = load_vehicle_params(overrides=[over])
    assert p.geometry.wheelbase == 0.35
    assert p.steering.steering_gain == 1.1
    assert p.mass_properties.mass == 3.74  # untouched default
    assert str(over) in p.source
    bad = write(tmp_path, {'steering': {'steering_gain': -1.0}}, 'bad.yaml')
    with pytest.raises(VehicleParamsError) as info:
        load_vehicle_params(overrides=[bad])
    assert str(info.value).startswith(f'{bad}: steering.steering_gain: must be in [0.1, 10], got -1.0')
    typo = write(tmp_path, {'steering': {'steering_gian': 1.0}}, 'typo.yaml')
    with pytest.raises(VehicleParamsError, match=re.escape(f'{typo}: steering.steering_gian: unknown key')):
        load_vehicle_params(overrides=[typo])


def test_dump_override_round_trip(tmp_path: Path) -> None:
    out = tmp_path / 'calibrated.yaml'
    dump_override({'wheelbase': 0.34, 'steering_offset': 0.01, 'command_latency': 0.03}, out,
                  header='fitted by test\nrmse 0.1')
    text = out.read_text()
    assert text.startswith('# fitted by test\n# rmse 0.1\n')
    p = load_vehicle_params(overrides=[out])
    assert (p.geometry.wheelbase, p.steering.steering_offset, p.timing.command_latency) == (0.34, 0.01, 0.03)
    with pytest.raises(VehicleParamsError, match="unknown vehicle parameter 'wheelbas'"):
        dump_override({'wheelbas': 0.3}, tmp_path / 'x.yaml')
    assert not (tmp_path / 'x.yaml').exists()


def test_with_values_validates() -> None:
    p = load_vehicle_params()
    q = p.with_values(wheelbase=0.4, mass=4.0)
    assert (q.geometry.wheelbase, q.mass_properties.mass) == (0.4, 4.0)
    with pytest.raises(VehicleParamsError, match=re.escape('must be in [0.01, 100] kg, got 0.0')):
        p.with_values(mass=0.0)


def test_to_dict_round_trips_through_yaml(tmp_path: Path) -> None:
    p = load_vehicle_params()
    path = write(tmp_path, p.to_dict())
    assert load_vehicle_params(path).to_dict() == p.to_dict()


def test_hinge_limits_follow_ackermann_at_full_lock() -> None:
    p = load_vehicle_params()
    L, W = p.geometry.wheelbase, p.geometry.track_width
    r_min = L / math.tan(p.steering.max_steering_angle)
    assert math.isclose(p.max_wheel_steering_angle, math.atan(L / (r_min - W / 2)), rel_tol=1e-12)
    # rate: finite difference of the inner angle around full lock times the bicycle rate
    d = 1e-7
    inner = lambda delta: math.atan(L / (L / math.tan(delta) - W / 2))  # noqa: E731
    slope = (inner(p.steering.max_steering_angle) - inner(p.steering.max_steering_angle - d)) / d
    assert math.isclose(p.max_wheel_steering_rate, slope * p.steering.max_steering_rate, rel_tol=1e-5)


def test_full_lock_tighter_than_half_track_is_rejected() -> None:
    p = load_vehicle_params()
    with pytest.raises(VehicleParamsError, match='than half the track width'):
        p.with_values(max_steering_angle=1.5, track_width=0.8)
