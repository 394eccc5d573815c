"""The rcsim plug-in point: entry points of group ``rc_sim.commands`` add subcommands; one that
fails to load costs one warning line naming it, never the other commands."""

from __future__ import annotations

import argparse
from importlib.metadata import EntryPoint
import sys
import types

import pytest

from rc_sim_engine import cli


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(action.choices)


def test_a_broken_plugin_is_named_in_one_warning_line(monkeypatch, capsys) -> None:
    good = types.ModuleType('rcsim_probe_plugin')

    def register(subparsers: argparse._SubParsersAction) -> None:
        subparsers.add_parser('probe', help='a probe').set_defaults(func=lambda args: 0)

    good.register = register  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, 'rcsim_probe_plugin', good)
    fake = [EntryPoint('ghost', 'rcsim_no_such_module_xyz:register', cli.PLUGIN_GROUP),
            EntryPoint('missing', 'rcsim_probe_plugin:no_such_function', cli.PLUGIN_GROUP),
            EntryPoint('probe', 'rcsim_probe_plugin:register', cli.PLUGIN_GROUP)]
    monkeypatch.setattr(cli, 'entry_points', lambda group: fake if group == cli.PLUGIN_GROUP
                        else [])
    assert cli.main(['probe']) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert err[0].startswith("warning: rcsim plug-in 'ghost' (rcsim_no_such_module_xyz:register)"
                             ' is not available: ModuleNotFoundError')
    assert err[1].startswith("warning: rcsim plug-in 'missing'") and 'AttributeError' in err[1]
    commands = _subcommands(cli.build_parser())
    assert 'probe' in commands and 'run' in commands and 'fit' not in commands
    with pytest.raises(SystemExit):
        cli.main(['fit', '--help'])
