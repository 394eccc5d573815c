"""The committed reference docs equal the generator output (they cannot drift from the code)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from rc_sim_description.docgen import (
    BEGIN,
    END,
    launch_table,
    main,
    update_block,
    vehicle_parameters_doc,
)
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import SECTIONS

DOCS = Path(__file__).resolve().parents[2] / 'docs'
HINT = 'regenerate with: python -m rc_sim_description.docgen --write'


def test_vehicle_parameters_doc_is_up_to_date() -> None:
    assert (DOCS / 'vehicle_parameters.md').read_text() == vehicle_parameters_doc(), HINT


def test_architecture_launch_table_is_up_to_date() -> None:
    text = (DOCS / 'architecture.md').read_text()
    assert update_block(text, launch_table(), 'architecture.md') == text, HINT


def test_every_key_is_documented_with_unit_and_meaning() -> None:
    doc = vehicle_parameters_doc()
    for section, cls in SECTIONS.items():
        assert f'## `{section}`' in doc
        for f in fields(cls):
            (row,) = [line for line in doc.splitlines() if line.startswith(f'| `{f.name}` |')]
            cells = [c.strip() for c in row.strip('|').split('|')]
            assert cells[1] and cells[3], f.name  # unit and meaning
    # keys the xacro car reads are marked; the tyre model is engine-only
    assert '| `wheelbase` | m | 0.3302 |' in doc and doc.count('| yes |') >= 40
    row = next(line for line in doc.splitlines() if line.startswith('| `tyre_model`'))
    assert row.endswith('|  |')


def test_update_block_needs_markers() -> None:
    assert update_block(f'a\n{BEGIN}\nold\n{END}\nb', 'new', 'x') == f'a\n{BEGIN}\nnew\n{END}\nb'
    with pytest.raises(ConfigError, match='markers not found'):
        update_block('no markers', 'new', 'doc.md')


def test_check_mode_reports_nothing_stale(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out == ''
