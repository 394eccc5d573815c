"""Fuzzing the SDF world reader (hypothesis, bounded): random element trees of SDF vocabulary
with random attributes and numbers, random text and mutations of a shipped world. Property:
a World or an RcSimError with a one-line message; never another exception or a hang."""

from __future__ import annotations

from typing import Any
import warnings
import xml.etree.ElementTree as ET

import pytest

hypothesis = pytest.importorskip('hypothesis')
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rc_sim_description.fuzzing import fuzz_settings, result_or_one_line_error  # noqa: E402
from rc_sim_description.paths import world_path  # noqa: E402
from rc_sim_engine.world.sdf import World, parse_sdf  # noqa: E402

TAGS = ['model', 'link', 'collision', 'geometry', 'box', 'size', 'cylinder', 'sphere', 'radius',
        'length', 'pose', 'plane', 'mesh', 'include', 'uri', 'visual', 'static', 'world']
ATTRS = ['name', 'relative_to', 'rotation_format', 'degrees']
#: Names quoted by the error messages, often with line breaks.
NAMES = st.one_of(st.sampled_from(['m', 'a\nb', 'x\u2028y', 'c\r\nd']), st.text(max_size=6))
TEXTS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.lists(st.floats(-1e6, 1e6).map(repr), min_size=1, max_size=8).map(' '.join),
    st.sampled_from(['1 1 1', '0 0 0 0 0 0', '1e308 1e308 1', '-1 2 3', 'quat_xyzw', 'true',
                     'world', '__model__', 'model://ground_plane', '1 2 3 4 5 6 7', '',
                     'a\nb', 'x\u2028y', '-1 1 1']),
    st.text(max_size=10))


@st.composite
def sdf_trees(draw: Any, depth: int = 6) -> ET.Element:
    def build(tag: str, level: int) -> ET.Element:
        elem = ET.Element(tag)
        if tag in ('world', 'model', 'link', 'collision'):
            elem.set('name', draw(NAMES))
        for name in draw(st.lists(st.sampled_from(ATTRS), max_size=2)):
            elem.set(name, draw(TEXTS))
        if draw(st.booleans()):
            elem.text = draw(TEXTS)
        if level < depth:
            for child in draw(st.lists(st.sampled_from(TAGS), max_size=3)):
                elem.append(build(child, level + 1))
        return elem

    root = ET.Element(draw(st.sampled_from(['sdf', 'sdf', 'sdf', 'robot'])))
    for _ in range(draw(st.integers(0, 2))):
        root.append(build('world', 1))
    return root


def _parse(text: str) -> World | None:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return result_or_one_line_error(parse_sdf, text, 'fuzz.sdf')


@fuzz_settings(300)
@given(sdf_trees())
def test_sdf_element_trees(tree: ET.Element) -> None:
    _parse(ET.tostring(tree, encoding='unicode'))


WORLD_TEXT = world_path('basic_track').read_text(encoding='utf-8')


@fuzz_settings(150)
@given(st.lists(st.tuples(st.integers(0, len(WORLD_TEXT)), st.integers(0, 8),
                          st.sampled_from(['', '<', '>', '/', '<model>', '</link>', '1e999', 'nan',
                                           '&amp;', '<!ENTITY x "y">', '"', ' ', '9' * 40])),
                min_size=1, max_size=5))
def test_mutated_world(edits: list[tuple[int, int, str]]) -> None:
    text = WORLD_TEXT
    for pos, cut, chunk in edits:
        text = text[:pos] + chunk + text[pos + cut:]
    _parse(text)


@fuzz_settings(100)
@given(st.integers(1, 400), st.sampled_from(['model', 'link', 'x']))
def test_deeply_nested_sdf(depth: int, tag: str) -> None:
    text = '<sdf><world name="w">' + f'<{tag}>' * depth + f'</{tag}>' * depth + '</world></sdf>'
    _parse(text)


@st.composite
def sdf_worlds(draw: Any) -> str:
    """Well-formed SDF structure (world, nested models, links, collisions, shapes, poses) with
    random names and numbers: reaches the geometry and pose readers and their messages."""
    def pose() -> str:
        if not draw(st.booleans()):
            return ''
        attrs = ''.join(f' {a}="{draw(st.sampled_from(["world", "x", "quat_xyzw", "true"]))}"'
                        for a in draw(st.lists(st.sampled_from(ATTRS[1:]), max_size=2)))
        return f'<pose{attrs}>{draw(TEXTS)}</pose>'

    def collision() -> str:
        shape = draw(st.sampled_from(['box', 'cylinder', 'sphere', 'plane', 'mesh', 'x']))
        inner = {'box': f'<size>{draw(TEXTS)}</size>',
                 'cylinder': f'<radius>{draw(TEXTS)}</radius><length>{draw(TEXTS)}</length>',
                 'sphere': f'<radius>{draw(TEXTS)}</radius>'}.get(shape, '')
        geometry = draw(st.sampled_from([f'<geometry><{shape}>{inner}</{shape}></geometry>',
                                         '<geometry/>', '']))
        return f'<collision name="{_attr(draw(NAMES))}">{pose()}{geometry}</collision>'

    def model(level: int) -> str:
        links = ''.join(f'<link name="{_attr(draw(NAMES))}">{pose()}'
                        + ''.join(collision() for _ in range(draw(st.integers(0, 2))))
                        + '</link>' for _ in range(draw(st.integers(0, 2))))
        nested = ''.join(model(level + 1) for _ in range(draw(st.integers(0, 1 if level < 3
                                                                          else 0))))
        return f'<model name="{_attr(draw(NAMES))}">{pose()}{links}{nested}</model>'

    body = ''.join(model(0) for _ in range(draw(st.integers(0, 3))))
    return f'<sdf version="1.9"><world name="w">{body}</world></sdf>'


def _attr(text: str) -> str:
    """``text`` escaped for a double-quoted XML attribute (line breaks kept as references)."""
    return (text.replace('&', '&amp;').replace('<', '&lt;').replace('"', '&quot;')
            .replace('\n', '&#10;').replace('\r', '&#13;'))


@fuzz_settings(300)
@given(sdf_worlds())
def test_sdf_worlds(text: str) -> None:
    _parse(text)
