"""Shared YAML reader: every failure is one line naming the file, with the caller's error type."""

from __future__ import annotations

from pathlib import Path

import pytest

from rc_sim_description.errors import ConfigError, VehicleParamsError
from rc_sim_description.yamlio import did_you_mean, read_yaml


def test_reads_mapping_and_empty(tmp_path: Path) -> None:
    (tmp_path / 'a.yaml').write_text('x: 1\n')
    (tmp_path / 'b.yaml').write_text('')
    assert read_yaml(tmp_path / 'a.yaml') == {'x': 1}
    assert read_yaml(tmp_path / 'b.yaml') is None


@pytest.mark.parametrize(('content', 'message'), [
    (None, 'file not found'),
    (b'\xff\xfe\x00', 'cannot read (not UTF-8 text)'),
    (b'a: [1, 2\n', 'malformed YAML at line 2'),
])
def test_errors_are_one_line_with_label(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / 'f.yaml'
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(VehicleParamsError) as info:
        read_yaml(path, VehicleParamsError, label='fit config ')
    text = str(info.value)
    assert text.startswith(f'fit config {path}: ')
    assert message in text
    assert '\n' not in text


def test_directory_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match='is a directory'):
        read_yaml(tmp_path)


def test_did_you_mean() -> None:
    assert did_you_mean('wheelbse', ['wheelbase', 'mass']) == " (did you mean 'wheelbase'?)"
    assert did_you_mean('zzz', ['wheelbase']) == ''
