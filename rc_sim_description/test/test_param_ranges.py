"""Valid ranges of the vehicle parameters and the cross-field checks: every numeric key has a
range, values outside are refused at load with the range in the one-line message, real cars
from 1:43 to 1:5 load, and each cross-field rule refuses what it should (and no more)."""

from __future__ import annotations

from dataclasses import fields
import math
from pathlib import Path
import re

import pytest
import yaml

from rc_sim_description.errors import VehicleParamsError
from rc_sim_description.param_schema import Range
from rc_sim_description.params import (
    SECTIONS,
    PacejkaCoefficients,
    load_vehicle_params,
    param_range,
)
from rc_sim_description.plausibility import (
    CHASSIS_STEP_LIMIT,
    ENGINE_MAX_SUBSTEP,
    chassis_mode_rate,
)
from rc_sim_description.testing import LINIGER_1_43, ONE_FIFTH

BASE = load_vehicle_params()

def _numeric_fields() -> list[tuple[str, str, object]]:
    out = []
    for section, cls in SECTIONS.items():
        for f in fields(cls):
            if f.type in (PacejkaCoefficients, 'PacejkaCoefficients'):
                continue
            if str(f.type).replace(' ', '').removesuffix('|None') in ('float', 'int') or \
                    str(f.type).startswith('tuple'):
                out.append((section, f.name, f))
    return out


def test_every_numeric_key_has_a_range_containing_its_default() -> None:
    values = BASE.leaf_values()
    for _, name, f in _numeric_fields():
        valid = f.metadata['range']
        assert isinstance(valid, Range), name
        default = values[name]
        for v in (default if isinstance(default, list) else [default]):
            assert v is None or valid.contains(v), (name, v)
    for f in fields(PacejkaCoefficients):
        assert isinstance(f.metadata['range'], Range), f.name
    assert param_range('mass') == Range(0.01, 100.0)
    with pytest.raises(VehicleParamsError, match='not a number'):
        param_range('tyre_model')


def _write(tmp_path: Path, data: dict, name: str = 'over.yaml') -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(('section', 'name', 'f'), _numeric_fields(),
                         ids=[n for _, n, _ in _numeric_fields()])
def test_values_outside_the_range_are_refused_with_the_range(tmp_path: Path, section: str,
                                                             name: str, f: object) -> None:
    valid: Range = f.metadata['range']  # type: ignore[attr-defined]
    unit = f.metadata['unit']  # type: ignore[attr-defined]
    for bad in (valid.hi * 1.01 + 1e-3, valid.lo - abs(valid.lo) * 0.01 - 1e-3, 1e308):
        value: object = bad
        if name == 'lidar_samples':
            value = int(bad) if bad < 1e300 else 10 ** 9
        elif name == 'fdir1':
            value = [bad, 0.0, 0.0]
        path = _write(tmp_path, {section: {name: value}})
        with pytest.raises(VehicleParamsError) as info:
            load_vehicle_params(overrides=[path])
        text = str(info.value)
        assert '\n' not in text and text.startswith(f'{path}: {section}.{name}')
        assert f'must be in {valid.text(unit)}, got ' in text


def test_the_issue_example_mass_1e308_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, {'mass_properties': {'mass': 1e308}})
    with pytest.raises(VehicleParamsError, match=re.escape(
            'mass_properties.mass: must be in [0.01, 100] kg, got 1e+308')):
        load_vehicle_params(overrides=[path])


@pytest.mark.parametrize('car', [LINIGER_1_43, ONE_FIFTH], ids=['1:43', '1:5'])
def test_real_cars_from_1_43_to_1_5_load(tmp_path: Path, car: dict) -> None:
    p = load_vehicle_params(overrides=[_write(tmp_path, car)])
    assert p.mass_properties.mass == car['mass_properties']['mass']
    rate, _ = chassis_mode_rate(p)
    assert rate * ENGINE_MAX_SUBSTEP < CHASSIS_STEP_LIMIT / 2  # well inside the step limit


@pytest.mark.parametrize(('values', 'key', 'message'), [
    ({'cg_to_front_axle': 0.01}, 'geometry.cg_to_front_axle', 'of the weight on each axle'),
    ({'yaw_inertia': 2.0}, 'mass_properties.yaw_inertia', 'must be at most mass * (length^2'),
    ({'servo_p_gain': 0.0}, 'steering.servo_p_gain', 'must be > 0 for servo_model pd_joint'),
    ({'servo_d_gain': 0.0}, 'steering.servo_d_gain', 'an undamped hinge oscillates'),
    ({'servo_i_gain': 2000.0}, 'steering.servo_i_gain', 'Routh-Hurwitz'),
    ({'yaw_inertia': 0.005}, 'mass_properties.yaw_inertia', 'too fast for the engine step'),
    ({'cornering_stiffness_front': 2000.0, 'cornering_stiffness_rear': 2000.0},
     'mass_properties.yaw_inertia', 'lower the tyre stiffness cornering_stiffness'),
    ({'pacejka_lateral': {'B': 40.0, 'C': 1.3, 'D': 1.0, 'E': 0.0}, 'tyre_model': 'pacejka'},
     'tyres.pacejka_lateral', 'lower the tyre stiffness pacejka_lateral'),
    ({'max_wheel_speed': 4000.0}, 'drive.max_wheel_speed', 'above 150 m/s'),
])
def test_cross_field_rules_refuse_meaningless_physics(values: dict, key: str,
                                                      message: str) -> None:
    with pytest.raises(VehicleParamsError) as info:
        BASE.with_values(**values)
    text = str(info.value)
    assert f': {key}: ' in text and message in text and '\n' not in text


def test_cross_field_rules_leave_valid_neighbours_alone() -> None:
    L = BASE.geometry.wheelbase
    BASE.with_values(cg_to_front_axle=0.06 * L)
    BASE.with_values(servo_i_gain=1000.0)  # Kd Kp = 0.1 > J_h Ki = 0.085
    BASE.with_values(yaw_inertia=0.0085)  # |lambda| h = 1.6
    BASE.with_values(servo_model='first_order', servo_p_gain=0.0, servo_d_gain=0.0)
    BASE.with_values(max_wheel_speed=2900.0)  # 145 m/s
    p = BASE.with_values(yaw_inertia=0.0085)
    assert chassis_mode_rate(p)[0] * ENGINE_MAX_SUBSTEP == pytest.approx(1.6, abs=0.05)


def test_chassis_rate_of_the_default_car() -> None:
    """Closed form at 1 m/s where the blend is fully dynamic: the yaw entry dominates,
    (Cf lf^2 + Cr lr^2) / Iz = 113.4 1/s; the blend peak lies a few per cent above it."""
    rate, which = chassis_mode_rate(BASE)
    g, t = BASE.geometry, BASE.tyres
    yaw = (t.cornering_stiffness_front * g.cg_to_front_axle ** 2 +
           t.cornering_stiffness_rear * g.cg_to_rear_axle ** 2) / BASE.mass_properties.yaw_inertia
    assert yaw < rate < 1.1 * yaw and which == 'cornering_stiffness'
    assert math.isclose(yaw, 113.44, rel_tol=1e-3)  # (94.3 lf^2 + 101 lr^2) / 0.04712
