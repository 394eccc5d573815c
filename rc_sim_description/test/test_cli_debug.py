"""run_cli: a user error is one line; RCSIM_DEBUG=1 adds the full traceback, with the
third-party cause that ``raise ... from None`` hid."""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

import pytest

from rc_sim_description.cli_support import run_cli
from rc_sim_description.yamlio import read_yaml


def _read_malformed(tmp_path: Path) -> int:
    bad = tmp_path / 'bad.yaml'
    bad.write_text('a: [\n')
    read_yaml(bad)  # raises ConfigError(...) from None
    return 0


def test_one_line_without_debug(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv('RCSIM_DEBUG', raising=False)
    assert run_cli(lambda: _read_malformed(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and 'bad.yaml' in err and err.count('\n') == 1


@pytest.mark.parametrize('value', ['', '0'])
def test_debug_off_values(tmp_path, capsys, monkeypatch, value) -> None:
    monkeypatch.setenv('RCSIM_DEBUG', value)
    assert run_cli(lambda: _read_malformed(tmp_path)) == 2
    assert capsys.readouterr().err.count('\n') == 1


def test_debug_shows_the_traceback_and_the_hidden_cause(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv('RCSIM_DEBUG', '1')
    assert run_cli(lambda: _read_malformed(tmp_path)) == 2
    err = capsys.readouterr().err
    first, rest = err.split('\n', 1)
    assert first.startswith('error: ') and 'bad.yaml' in first
    assert 'Traceback (most recent call last)' in rest
    assert 'yaml.parser.ParserError' in rest or 'yaml.scanner.ScannerError' in rest
    assert 'During handling of the above exception' in rest
    assert rest.rstrip().splitlines()[-1].startswith('rc_sim_description.errors.ConfigError')


@pytest.mark.parametrize('debug', [False, True])
def test_through_the_rcsim_command(tmp_path, debug) -> None:
    """End to end, as a user runs it: ``rcsim describe --params <malformed YAML>``."""
    bad = tmp_path / 'bad.yaml'
    bad.write_text('a: [\n')
    env = {'PATH': '/usr/bin:/bin', 'RCSIM_DEBUG': '1' if debug else ''}
    out = subprocess.run([sys.executable, '-c', 'import sys\nfrom rc_sim_engine.cli import main\n'
                          'sys.exit(main(sys.argv[1:]))', 'describe', '--params', str(bad)],
                         capture_output=True, text=True, timeout=120, check=False, env=env)
    assert out.returncode == 2
    assert out.stderr.startswith(f'error: {bad}: malformed YAML')
    if debug:
        assert 'Traceback' in out.stderr and 'ParserError' in out.stderr
    else:
        assert out.stderr.count('\n') == 1
