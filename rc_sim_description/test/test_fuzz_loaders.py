"""Fuzzing the loaders of rc_sim_description (hypothesis, bounded: derandomised, fixed budgets).

Property of every loader: a valid result or an RcSimError with a one-line message; never another
exception, never a hang (5 s deadline per example). Inputs: random and structured YAML (anchors,
aliases, alias bombs, huge integers, deep nesting, mutations of the shipped vehicle.yaml;
duplicated keys and numbers too large, whose errors must name the key path), the YAML writer,
vehicle overrides with random keys, values and types, recording descriptions, URDF trees.
"""

from __future__ import annotations

from pathlib import Path
import tempfile
from typing import Any
import xml.etree.ElementTree as ET

import pytest

hypothesis = pytest.importorskip('hypothesis')
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rc_sim_description.fuzzing import fuzz_settings, result_or_one_line_error  # noqa: E402
from rc_sim_description.params import (  # noqa: E402
    SECTIONS,
    VehicleParams,
    default_vehicle_yaml,
    leaf_keys,
    load_vehicle_params,
)
from rc_sim_description.recording import KINDS, ROLE_KEYS, recording_from_mapping  # noqa: E402
from rc_sim_description.urdf import parse_urdf  # noqa: E402
from rc_sim_description.yamlio import load_yaml_text, read_yaml  # noqa: E402

VEHICLE_TEXT = default_vehicle_yaml().read_text(encoding='utf-8')
BASE = load_vehicle_params()
YAML_ALPHABET = st.sampled_from([*'abxyz:-[]{},&*!|>\'"#\n\t 0123456789.eE+~@%?=', '.nan', '.inf',
                                 '-.inf', 'null', 'true', '<<', '!!int', '!!python/object', '---',
                                 '...', '99999999999999999999999'])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from([0, 1, -1, 1e308, -1e308, 5e-324, 10 ** 400]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12)


def _write(text: str) -> Path:
    with tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False,
                                     encoding='utf-8') as handle:
        handle.write(text)
    return Path(handle.name)


# --------------------------------------------------------------------------- errors
@fuzz_settings(200)
@given(st.text(max_size=30))
def test_every_error_message_is_one_line(text: str) -> None:
    """Whatever an error quotes (a model name with a line break), str() is one line."""
    from rc_sim_description.errors import ConfigError, VehicleParamsError

    for exc in (ConfigError(f'x.sdf: {text}: bad'), VehicleParamsError(text)):
        shown = str(exc)
        assert len(shown.splitlines()) <= 1
        assert shown.replace('\\n', '').strip() or not text.strip()


# --------------------------------------------------------------------------- YAML
@fuzz_settings(300)
@given(st.lists(YAML_ALPHABET, max_size=80).map(''.join))
def test_yaml_random_text(text: str) -> None:
    result_or_one_line_error(load_yaml_text, text, 'fuzz.yaml')


@st.composite
def alias_documents(draw: Any) -> str:
    """Anchors and aliases: chains of lists that repeat the previous level ``width`` times
    (a "billion laughs" when deep and wide), merge keys and self references."""
    depth = draw(st.integers(1, 12))
    width = draw(st.integers(1, 12))
    lines = ['l0: &a0 [' + ', '.join(['x'] * width) + ']']
    for k in range(1, depth):
        lines.append(f'l{k}: &a{k} [' + ', '.join([f'*a{k - 1}'] * width) + ']')
    extra = draw(st.sampled_from(['', 'm: {<<: *a0}', 'r: &r [*r]', 'n: *nope',
                                  f'big: {"9" * draw(st.integers(1, 400))}', 'd: ' + '[' * 80]))
    return '\n'.join([*lines, extra])


@fuzz_settings(150)
@given(alias_documents())
def test_yaml_anchors_and_alias_bombs(text: str) -> None:
    result_or_one_line_error(load_yaml_text, text, 'fuzz.yaml')


@fuzz_settings(150)
@given(st.integers(1, 200), st.sampled_from(['[', '{a: ', '- ']))
def test_yaml_deep_nesting(depth: int, opener: str) -> None:
    close = {'[': ']', '{a: ': '}', '- ': ''}[opener]
    if opener == '- ':
        text = ''.join('  ' * k + '- \n' for k in range(depth)) + '  ' * depth + 'x\n'
    else:
        text = opener * depth + '1' + close * depth
    result_or_one_line_error(load_yaml_text, text, 'fuzz.yaml')


@st.composite
def keyed_documents(draw: Any) -> tuple[str, str | None, str]:
    """A mapping nested ``depth`` levels deep whose innermost keys may repeat, and a numeric
    value that may be too large for a float or an int64: ``(text, dotted path of the first
    duplicate or None, innermost path)`` (issue 28: the culprit's key path is named)."""
    depth = draw(st.integers(0, 3))
    keys = draw(st.lists(st.sampled_from(['mass', 'gain', 'x', 'y_1']), min_size=1, max_size=5))
    value = draw(st.sampled_from(['1', '2.5', '1.0e+308', '1.0e+309', '9' * 19, '9' * 20,
                                  '-' + '9' * 25, '.inf']))
    outer = [f'n{i}' for i in range(depth)]
    lines = [f'{"  " * i}{name}:' for i, name in enumerate(outer)]
    lines += [f'{"  " * depth}{key}: {value}' for key in keys]
    dup = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    return ('\n'.join(lines) + '\n', '.'.join([*outer, dup]) if dup else None,
            '.'.join([*outer, keys[0]]))


@fuzz_settings(200)
@given(keyed_documents())
def test_duplicated_keys_and_huge_numbers_are_named(doc: tuple[str, str | None, str]) -> None:
    from rc_sim_description.errors import ConfigError

    text, dup, first = doc
    try:
        data = load_yaml_text(text, 'fuzz.yaml')
    except ConfigError as exc:
        message = str(exc)
        assert '\n' not in message and message.startswith('fuzz.yaml: ')
        if dup is not None and 'duplicated key' in message:
            assert message.startswith(f'fuzz.yaml: {dup}: duplicated key'), message
        else:  # the first value is the first culprit
            assert message.startswith(f'fuzz.yaml: {first}: '), message
            assert 'too large for a float' in message or 'more than 19 digits' in message
        return
    assert dup is None  # PyYAML alone kept the last of duplicated keys silently
    leaf = data
    for part in first.split('.')[:-1]:
        leaf = leaf[part]
    value = leaf[first.split('.')[-1]]
    assert isinstance(value, int) or value == value  # never a NaN
    assert isinstance(value, int) or abs(value) < float('inf') or 'inf' in text


@fuzz_settings(150)
@given(VALUES)
def test_yaml_writer_is_finite_or_one_line(data: Any) -> None:
    """What dump_yaml writes reads back finite; a NaN or inf is a one-line error."""
    from rc_sim_description.yamlio import dump_yaml

    text = result_or_one_line_error(dump_yaml, data, 'out.yaml')
    if text is not None:
        from rc_sim_description.finite import first_non_finite

        assert first_non_finite(load_yaml_text(text, 'out.yaml')) is None


@st.composite
def mutated_vehicle_yaml(draw: Any) -> str:
    text = VEHICLE_TEXT
    for _ in range(draw(st.integers(1, 6))):
        pos = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(['insert', 'delete', 'replace']))
        chunk = draw(st.lists(YAML_ALPHABET, min_size=1, max_size=6).map(''.join))
        if kind == 'insert':
            text = text[:pos] + chunk + text[pos:]
        elif kind == 'delete':
            text = text[:pos] + text[pos + len(chunk):]
        else:
            text = text[:pos] + chunk + text[pos + len(chunk):]
    return text


@fuzz_settings(200)
@given(mutated_vehicle_yaml())
def test_mutated_vehicle_yaml_loads_or_fails_in_one_line(text: str) -> None:
    path = _write(text)
    try:
        result = result_or_one_line_error(load_vehicle_params, path)
        assert result is None or isinstance(result, VehicleParams)
        result_or_one_line_error(read_yaml, path)
    finally:
        path.unlink()


# --------------------------------------------------------------------------- vehicle overrides
LEAVES = leaf_keys()


@st.composite
def overrides(draw: Any) -> dict[str, Any]:
    """Partial vehicle.yaml: real sections and keys (sometimes junk), values of every type,
    often near the key's default so that valid overrides are generated too."""
    out: dict[str, Any] = {}
    for _ in range(draw(st.integers(1, 4))):
        section = draw(st.sampled_from([*SECTIONS, 'geometri', '', '1']))
        keys = [k for k, s in LEAVES.items() if s == section] or ['x']
        body = out.setdefault(section, {})
        if not isinstance(body, dict):
            continue
        for _ in range(draw(st.integers(1, 4))):
            key = draw(st.sampled_from([*keys, 'mass', 'unknown_key']))
            default = BASE.leaf_values().get(key)
            near = (st.floats(0.0, 3.0).map(lambda f, d=default: d * f)
                    if isinstance(default, float) else VALUES)
            body[key] = draw(st.one_of(near, VALUES))
    if draw(st.booleans()):
        out[draw(st.sampled_from(list(SECTIONS)))] = draw(VALUES)  # a section that is no mapping
    return out


@fuzz_settings(400)
@given(overrides())
def test_vehicle_overrides_load_or_fail_in_one_line(data: dict[str, Any]) -> None:
    import yaml

    path = _write(yaml.safe_dump(data, allow_unicode=True))
    try:
        result = result_or_one_line_error(load_vehicle_params, overrides=[path])
        if result is not None:  # valid: every number finite and the car loads again
            again = load_vehicle_params(overrides=[path])
            assert again.to_dict() == result.to_dict()
    finally:
        path.unlink()


@fuzz_settings(200)
@given(st.dictionaries(st.sampled_from(sorted(LEAVES)), st.one_of(SCALARS, VALUES), max_size=4))
def test_with_values_is_validated_like_a_file(values: dict[str, Any]) -> None:
    result_or_one_line_error(BASE.with_values, **values)


# --------------------------------------------------------------------------- recordings
@st.composite
def recordings(draw: Any) -> Any:
    roles = draw(st.lists(st.sampled_from([*ROLE_KEYS, 'posse', 'x']), max_size=4))
    out: dict[Any, Any] = {}
    for role in roles:
        keys = ROLE_KEYS.get(role, ('topic',))
        body = {}
        for key in draw(st.lists(st.sampled_from([*keys, 'topik']), max_size=4)):
            if key == 'kind':
                body[key] = draw(st.one_of(st.sampled_from(KINDS.get(role, ('x',))), VALUES))
            elif key == 'topic':
                body[key] = draw(st.one_of(st.just('/t'), st.text(max_size=6), VALUES))
            elif key == 'offset':
                body[key] = draw(st.one_of(st.lists(SCALARS, min_size=3, max_size=3), VALUES))
            else:
                body[key] = draw(VALUES)
        out[role] = draw(st.one_of(st.just(body), st.text(max_size=5), VALUES))
    return draw(st.one_of(st.just(out), VALUES))


@fuzz_settings(300)
@given(recordings())
def test_recording_descriptions(data: Any) -> None:
    result_or_one_line_error(recording_from_mapping, data, 'fuzz.yaml')


# --------------------------------------------------------------------------- URDF
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                    st.sampled_from(['', '1 2', '1 2 3', 'a b c', '1e999 0 0', ' 0  0 0 ',
                                     'j\nk', 'x\u2028y']))
#: Names quoted by the error messages, often with line breaks.
NAMES = st.one_of(st.sampled_from(['j', 'a\nb', 'x\u2028y', 'c\r\nd']), st.text(max_size=6))
URDF_TAGS = ['link', 'joint', 'inertial', 'mass', 'inertia', 'origin', 'axis', 'limit', 'parent',
             'child', 'robot', 'visual']
URDF_ATTRS = ['name', 'value', 'xyz', 'rpy', 'ixx', 'iyy', 'izz', 'ixy', 'lower', 'upper',
              'effort', 'velocity', 'link', 'type']


@st.composite
def element_trees(draw: Any, tags: list[str], attrs: list[str], root: str,
                  depth: int = 4) -> ET.Element:
    def build(tag: str, level: int) -> ET.Element:
        elem = ET.Element(tag)
        if tag in ('link', 'joint', 'robot'):
            elem.set('name', draw(NAMES))
        for name in draw(st.lists(st.sampled_from(attrs), max_size=3)):
            elem.set(name, draw(st.one_of(NUMBERS, st.text(max_size=8))))
        if draw(st.booleans()):
            elem.text = draw(st.one_of(NUMBERS, st.text(max_size=8)))
        if level < depth:
            for child in draw(st.lists(st.sampled_from(tags), max_size=3)):
                elem.append(build(child, level + 1))
        return elem

    return build(root, 0)


def _xml(tree: ET.Element) -> str:
    return ET.tostring(tree, encoding='unicode')


@fuzz_settings(300)
@given(element_trees(URDF_TAGS, URDF_ATTRS, 'robot'))
def test_urdf_reader(tree: ET.Element) -> None:
    result_or_one_line_error(parse_urdf, _xml(tree), 'fuzz.urdf')


@st.composite
def urdf_documents(draw: Any) -> str:
    """Well-formed URDF structure (links with inertials, joints with origin, axis and limits)
    with random names and numbers: reaches every attribute reader and its messages."""
    def attr(name: str) -> str:
        value = draw(NUMBERS).replace('&', '&amp;').replace('"', '&quot;').replace('<', '&lt;')
        return f' {name}="{value.replace(chr(10), "&#10;").replace(chr(13), "&#13;")}"'

    def named() -> str:
        name = draw(NAMES).replace('&', '&amp;').replace('"', '&quot;').replace('<', '&lt;')
        return f' name="{name.replace(chr(10), "&#10;").replace(chr(13), "&#13;")}"'

    links = ''.join(
        f'<link{named()}><inertial><mass{attr("value")}/><inertia{attr("ixx")}{attr("iyy")}'
        f'{attr("izz")}/></inertial></link>' for _ in range(draw(st.integers(0, 3))))
    joints = ''.join(
        f'<joint{named()} type="revolute"><origin{attr("xyz")}{attr("rpy")}/>'
        f'<axis{attr("xyz")}/><limit{attr("lower")}{attr("upper")}{attr("effort")}/>'
        f'<parent link="a"/><child link="b"/></joint>' for _ in range(draw(st.integers(0, 3))))
    return f'<robot{named()}>{links}{joints}</robot>'


@fuzz_settings(300)
@given(urdf_documents())
def test_urdf_documents(text: str) -> None:
    result_or_one_line_error(parse_urdf, text, 'fuzz.urdf')


@fuzz_settings(200)
@given(st.lists(st.sampled_from([*'<>/="\' robotlinkjoint!-&;#x10', '<!DOCTYPE', '<!ENTITY',
                                 '&lol;', '<robot>', '</robot>']), max_size=60).map(''.join))
def test_urdf_random_text(text: str) -> None:
    result_or_one_line_error(parse_urdf, text, 'fuzz.urdf')
