"""One source of truth for the fit's defaults (issue 29 item 5): ``rcsim fit --help``, the
packaged fit YAML and docs/calibration.md's settings table agree, flag by flag; the guide stays a
guide (under 250 lines, the research in calibration_notes.md)."""

from pathlib import Path
import re

import yaml

from rc_sim_calibration.cli import FLAG_DEFAULTS, packaged_default
from rc_sim_calibration.settings import default_fit_yaml, load_fit_settings

DOCS = Path(__file__).resolve().parents[2] / 'docs'


def _table() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in (DOCS / 'calibration.md').read_text().splitlines():
        m = re.match(r'^\| `(--[a-z-]+)` \| `([a-z_.]+)` \| ([^|]+) \|', line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3).strip())
    return rows


def test_docs_table_help_and_yaml_agree():
    data = yaml.safe_load(default_fit_yaml().read_text())
    table = _table()
    assert set(table) == set(FLAG_DEFAULTS), set(table) ^ set(FLAG_DEFAULTS)
    for flag, (section, key) in FLAG_DEFAULTS.items():
        value = data[section][key]
        assert table[flag][0] == f'{section}.{key}', flag
        assert table[flag][1] == str(value), (flag, table[flag], value)
        assert packaged_default(flag) == value


def test_help_prints_the_yaml_defaults(capsys):
    import pytest

    from rc_sim_calibration.cli import fit_main

    with pytest.raises(SystemExit):
        fit_main(['--help'])
    text = ' '.join(capsys.readouterr().out.split())
    data = yaml.safe_load(default_fit_yaml().read_text())
    for flag, (section, key) in FLAG_DEFAULTS.items():
        assert f'(default: {data[section][key]}, {section}.{key} of the fit YAML)' in text, flag


def test_loaded_settings_are_the_yaml_values():
    s = load_fit_settings()
    assert (s.horizon, s.dt, s.budget, s.optimizer, s.seed, s.prior_strength) == (
        packaged_default('--horizon'), packaged_default('--dt'), packaged_default('--budget'),
        packaged_default('--optimizer'), packaged_default('--seed'),
        packaged_default('--prior-strength'))


def test_the_guide_is_a_guide():
    guide = (DOCS / 'calibration.md').read_text()
    assert len(guide.splitlines()) < 250
    for needle in ('ros2 bag record', 'bag_recorder', 'measured.yaml', 'rcsim fit',
                   'calibration_notes.md', 'index.html', 'rcsim run'):
        assert needle in guide, needle
    assert (DOCS / 'calibration_notes.md').is_file()
