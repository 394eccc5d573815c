"""fit, replay and protocol reach rcsim through the ``rc_sim.commands`` entry point."""

from __future__ import annotations

import argparse
from importlib.metadata import entry_points

from rc_sim_engine import cli


def test_the_calibration_commands_come_from_the_installed_entry_point(capsys) -> None:
    names = {ep.name: ep.value for ep in entry_points(group=cli.PLUGIN_GROUP)}
    assert names.get('calibration') == 'rc_sim_calibration.cli:register'
    parser = cli.build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands = list(action.choices)
    assert commands[:9] == ['run', 'track', 'evaluate', 'manoeuvre', 'map', 'lidar', 'fit',
                            'replay', 'protocol']
    assert commands[-2:] == ['describe', 'inspect']
    assert capsys.readouterr().err == ''
