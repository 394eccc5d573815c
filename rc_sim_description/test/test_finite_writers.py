"""Issue 28, items 2 and 5: no NaN or infinity leaves the program; config errors name the key.

The writers' checks (:mod:`rc_sim_description.finite`, :func:`yamlio.dump_yaml`,
``BagWriter(finite=True)``) turn a non-finite number into a one-line error naming where it is,
with exit status 2 (bad input) or 3 (:class:`DegenerateError`: a result degenerated). The YAML
reader names the key path and file of a duplicated key, an integer or float too large, and an
alias expansion that blows up.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from rc_sim_description.bags import BagError, open_bag
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.cli_support import run_cli
from rc_sim_description.errors import ConfigError, DegenerateError
from rc_sim_description.finite import (
    check_finite_columns,
    check_finite_tree,
    finite_json,
    first_non_finite,
)
from rc_sim_description.yamlio import dump_yaml, load_yaml_text


# --------------------------------------------------------------------------- trees, JSON, YAML
def test_first_non_finite_names_the_key_path() -> None:
    data = {'fit': {'params': [1.0, {'mass': np.float64('nan')}]}, 'ok': 1}
    assert first_non_finite(data)[0] == 'fit.params[1].mass'  # type: ignore[index]
    assert first_non_finite({'a': np.array([[1.0, 2.0], [np.inf, 0.0]])})[0] == 'a[1][0]'  \
        # type: ignore[index]
    assert first_non_finite({'a': [1, 2.5, True, 'nan', None]}) is None


def test_yaml_writer_refuses_nan_and_names_the_parameter() -> None:
    with pytest.raises(DegenerateError, match=r'^calibrated.yaml: tyres.cornering_stiffness_front '
                                              r'is nan \(the fit degenerated\)$'):
        dump_yaml({'tyres': {'cornering_stiffness_front': math.nan}}, 'calibrated.yaml',
                  error=DegenerateError, hint=' (the fit degenerated)')
    text = dump_yaml({'a': np.float64(1.5), 'b': np.arange(2), 'c': (1, 2)}, 'x.yaml')
    assert yaml.safe_load(text) == {'a': 1.5, 'b': [0, 1], 'c': [1, 2]}


def test_json_writer_refuses_nan() -> None:
    """``json.dumps`` writes the token NaN, which no JSON reader accepts."""
    with pytest.raises(ConfigError, match=r'metrics.json: rmse_m is inf'):
        finite_json({'rmse_m': math.inf}, 'metrics.json')
    assert json.loads(finite_json({'a': [1.0, None]}, 'm.json')) == {'a': [1.0, None]}


def test_csv_columns_name_the_column_row_and_time() -> None:
    t = np.array([0.0, 0.01, 0.02, 0.03])
    with pytest.raises(ConfigError, match=r'^pred.csv: yaw_rate is nan at t = 0.020 s \(row 2; '
                                          r'2 of 4 rows not finite\)$'):
        check_finite_columns({'x': np.zeros(4), 'yaw_rate': np.array([0, 0, np.nan, np.nan])},
                             'pred.csv', t=t)
    check_finite_columns({'x': np.zeros(4), 'name': np.array(['a'] * 4)}, 'ok.csv', t=t)


def test_exit_status_three_for_a_degenerate_result(capsys: pytest.CaptureFixture[str]) -> None:
    def fit() -> int:
        check_finite_tree({'steering_gain': math.nan}, 'calibrated.yaml', error=DegenerateError)
        return 0

    assert run_cli(fit) == 3
    assert capsys.readouterr().err == 'error: calibrated.yaml: steering_gain is nan\n'


# --------------------------------------------------------------------------- bags
def _float64(value: float) -> object:
    from rc_sim_description.bags.typestore import base_typestore

    return base_typestore().types['std_msgs/msg/Float64'](data=value)


def _scan(ranges: np.ndarray) -> object:
    from rc_sim_description.bags.typestore import base_typestore

    types = base_typestore().types
    header = types['std_msgs/msg/Header'](stamp=types['builtin_interfaces/msg/Time'](
        sec=1, nanosec=0), frame_id='laser')
    return types['sensor_msgs/msg/LaserScan'](
        header=header, angle_min=-1.0, angle_max=1.0, angle_increment=1.0, time_increment=0.0,
        scan_time=0.1, range_min=0.1, range_max=10.0, ranges=ranges.astype(np.float32),
        intensities=np.zeros(0, np.float32))


def test_bag_writer_refuses_non_finite_measurements(tmp_path: Path) -> None:
    out = tmp_path / 'out'
    with pytest.raises(BagError, match=r'out: /steering_angle at t = 2.500 s: data = nan '
                                       r'\(std_msgs/msg/Float64\)'), \
            BagWriter(out, finite=True) as bag:
        bag.write('/steering_angle', 'std_msgs/msg/Float64', 1_000_000_000, _float64(0.1))
        bag.write('/steering_angle', 'std_msgs/msg/Float64', 2_500_000_000, _float64(math.nan))
    assert not out.exists() and list(tmp_path.iterdir()) == []
    # REP 117 gives NaN and inf ranges a meaning: a scan keeps them
    with BagWriter(out, finite=True) as bag:
        bag.write('/scan', 'sensor_msgs/msg/LaserScan', 1_000_000_000,
                  _scan(np.array([1.0, np.inf, np.nan])))
    with open_bag(out) as reader:
        assert reader.message_count == 1
    # without finite=True (tests forging hostile bags) the writer writes what it is given
    with BagWriter(tmp_path / 'forged', finite=False) as bag:
        bag.write('/x', 'std_msgs/msg/Float64', 1, _float64(math.nan))


# --------------------------------------------------------------------------- YAML culprits
@pytest.mark.parametrize(('text', 'message'), [
    ('mass_properties:\n  mass: 3\n  mass: 4\n',
     'v.yaml: mass_properties.mass: duplicated key (lines 2 and 3; YAML keeps only the last'),
    ('a: [1, {b: 1, c: 2, b: 3}]\n', 'v.yaml: a[1].b: duplicated key (lines 1 and 1'),
    ('geometry:\n  wheelbase: ' + '9' * 400 + '\n',
     'v.yaml: geometry.wheelbase: integer literal at line 2 has more than 19 digits (too large '
     'for an int64'),
    ('geometry:\n  wheelbase: 1.0e+400\n',
     'v.yaml: geometry.wheelbase: 1.0e+400 at line 2 is too large for a float'),
    ('base: &b [x, x, x, x, x, x, x, x, x, x]\n' + '\n'.join(
        f'l{k}: &l{k} [' + ', '.join([f'*{"b" if k == 1 else f"l{k - 1}"}'] * 10) + ']'
        for k in range(1, 8)) + '\nsteering: {gain: *l7}\n',
     'v.yaml: l6: the value (line 7) expands to more than 2,000,000 YAML nodes through '
     'anchors/aliases'),
])
def test_config_errors_name_the_key_path_and_file(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text(text, 'v.yaml')
    assert str(info.value).startswith(message), str(info.value)


def test_merge_keys_and_infinities_stay_valid() -> None:
    doc = load_yaml_text('a: &a {x: 1}\nb: {<<: *a, x: 2}\nc: .inf\nd: -.inf\ne: 1.0e+308\n',
                         'ok.yaml')
    assert doc['b'] == {'x': 2} and doc['c'] == math.inf and doc['e'] == 1e308
