"""Hostile YAML and XML: alias bombs, deep nesting, huge integers, entities — one line, no crash.

Inputs are generated here (no stored binaries). Each case checks the error class, that the message
is one line naming the file, and (for the bombs) that refusing costs little memory.
"""

from __future__ import annotations

from pathlib import Path
import resource

import pytest

from rc_sim_description.errors import ConfigError, VehicleParamsError
from rc_sim_description.limits import MAX_XML_DEPTH, MAX_YAML_DEPTH, MAX_YAML_NODES
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.xmlio import parse_xml, read_xml_file
from rc_sim_description.yamlio import load_yaml_text, read_yaml


def billion_laughs(levels: int = 9, fan: int = 10) -> str:
    lines = ['a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]']
    for i in range(1, levels + 1):
        refs = ', '.join([f'*a{i - 1}'] * fan)
        lines.append(f'a{i}: &a{i} [{refs}]')
    return '\n'.join(lines) + '\n'


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    msg = str(exc.value)
    assert '\n' not in msg
    return msg


def test_alias_bomb_is_refused_without_expanding() -> None:
    before = _max_rss_mb()
    with pytest.raises(ConfigError) as exc:
        load_yaml_text(billion_laughs(), 'bomb.yaml')
    assert 'bomb.yaml' in _one_line(exc) and 'nodes' in str(exc.value)
    assert _max_rss_mb() - before < 200.0


def test_small_alias_use_is_fine() -> None:
    data = load_yaml_text('base: &b {x: 1, y: 2}\nother: *b\n', 'ok.yaml')
    assert data == {'base': {'x': 1, 'y': 2}, 'other': {'x': 1, 'y': 2}}


def test_expanded_size_just_under_the_limit_loads() -> None:
    # 2 levels of fan 100 over 100 scalars: 1 + 100 * (1 + 100 * (1 + 100)) nodes < the limit
    text = billion_laughs(levels=2, fan=100).replace('[lol, lol, lol, lol, lol, lol, lol, lol, '
                                                     'lol, lol]', '[' + ', '.join(['x'] * 100)
                                                     + ']')
    data = load_yaml_text(text, 'wide.yaml')
    assert len(data['a2']) == 100 and len(data['a2'][0]) == 100
    assert MAX_YAML_NODES > 1 + 100 * (1 + 100 * 101)


@pytest.mark.parametrize('flow', [True, False])
def test_deep_nesting_is_refused(flow: bool) -> None:
    depth = 50_000
    if flow:
        text = '[' * depth + ']' * depth
    else:
        text = ''.join(' ' * i + 'k:\n' for i in range(300))
    with pytest.raises(ConfigError) as exc:
        load_yaml_text(text, 'deep.yaml')
    assert 'deep.yaml' in _one_line(exc) and 'nest' in str(exc.value)


def test_nesting_at_the_limit_loads() -> None:
    text = '[' * MAX_YAML_DEPTH + ']' * MAX_YAML_DEPTH
    data = load_yaml_text(text, 'ok.yaml')
    for _ in range(MAX_YAML_DEPTH - 1):
        data = data[0]
    assert data == []


def test_huge_integer_literal_is_refused() -> None:
    with pytest.raises(ConfigError) as exc:
        load_yaml_text('mass: ' + '9' * 400 + '\n', 'big.yaml')
    assert 'big.yaml' in _one_line(exc) and 'line 1' in str(exc.value)
    assert load_yaml_text('n: 9223372036854775807\n', 'ok.yaml') == {'n': 2 ** 63 - 1}


def test_vehicle_override_bomb_is_a_vehicle_params_error(tmp_path: Path) -> None:
    over = tmp_path / 'over.yaml'
    over.write_text(billion_laughs())
    with pytest.raises(VehicleParamsError) as exc:
        load_vehicle_params(overrides=[over])
    assert str(over) in _one_line(exc)


def test_read_yaml_refuses_a_huge_file_before_reading(tmp_path: Path) -> None:
    big = tmp_path / 'big.yaml'
    with big.open('wb') as f:
        f.seek(64 * 1024 * 1024)
        f.write(b'\n')
    with pytest.raises(ConfigError) as exc:
        read_yaml(big)
    assert 'MiB' in _one_line(exc)


def test_recursive_alias_does_not_loop() -> None:
    data = load_yaml_text('a: &a [1, *a]\n', 'rec.yaml')
    assert data['a'][1] is data['a']


def test_xml_entity_bomb_is_refused() -> None:
    text = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
            '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>\n'
            '<sdf version="1.9"><world name="w">&lol2;</world></sdf>')
    with pytest.raises(ConfigError) as exc:
        parse_xml(text, 'bomb.sdf', 'SDF')
    assert 'bomb.sdf' in _one_line(exc) and 'DOCTYPE' in str(exc.value)


def test_xml_deep_nesting_is_refused() -> None:
    depth = 100_000
    text = '<sdf>' + '<model>' * depth + '</model>' * depth + '</sdf>'
    with pytest.raises(ConfigError) as exc:
        parse_xml(text, 'deep.sdf', 'SDF')
    assert str(MAX_XML_DEPTH) in _one_line(exc)


def test_xml_malformed_and_empty(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_xml('<sdf><world></sdf>', 'bad.sdf', 'SDF')
    assert 'malformed SDF' in _one_line(exc)
    with pytest.raises(ConfigError):
        parse_xml('', 'empty.sdf', 'SDF')
    with pytest.raises(ConfigError) as exc:
        read_xml_file(tmp_path / 'missing.sdf', 'SDF')
    assert 'not found' in _one_line(exc)
