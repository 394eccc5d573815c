"""``rcsim``: the suite's command line (also ``python -m rc_sim_engine``).

Each subcommand lives in its own module that exposes ``register(subparsers)``; registration only
builds argparse parsers (heavy imports stay inside the command functions, so start-up is fast).
The parser's ``func(args) -> int`` runs the command; user errors (:class:`RcSimError`) print one
line and exit 2.

Commands of this package and of the packages below it are imported directly. Packages above the
engine (``rc_sim_calibration``: ``fit``, ``replay``, ``protocol``) add theirs through the plug-in
point :data:`PLUGIN_GROUP`: Python entry points (``importlib.metadata``) whose objects are
``register(subparsers)`` functions. A plug-in that fails to load costs one warning line, not the
other commands.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
import sys
from typing import Any

from rc_sim_description import cli as describe_cli
from rc_sim_description import cli_inspect
from rc_sim_description.cli_support import OneLineErrorParser, run_cli
from rc_sim_engine.cli import campaign as cli_campaign
from rc_sim_engine.cli import maps as cli_map
from rc_sim_engine.cli import run as cli_run
from rc_sim_engine.cli import track as cli_track
from rc_sim_sensors import cli as lidar_cli

__all__ = ['BUILTIN_COMMANDS', 'PLUGIN_GROUP', 'build_parser', 'main', 'plugin_registrars']

PLUGIN_GROUP = 'rc_sim.commands'

Registrar = Callable[[Any], None]

# Order = order in --help; the plug-ins come between the two groups.
BUILTIN_COMMANDS: tuple[tuple[Registrar, ...], tuple[Registrar, ...]] = (
    (cli_run.register,          # rcsim run
     cli_track.register,        # rcsim track, rcsim evaluate
     cli_map.register,          # rcsim map info|to-sdf|centerline
     lidar_cli.register),       # rcsim lidar apply|stats
    (cli_campaign.register,     # rcsim campaign run
     describe_cli.register,     # rcsim describe
     cli_inspect.register),     # rcsim inspect
)


def plugin_registrars(group: str = PLUGIN_GROUP) -> list[Registrar]:
    """The ``register`` functions of the installed plug-ins, in entry-point name order.

    A plug-in whose module does not import (or lacks the named function) is reported with one
    ``warning:`` line on stderr naming it and skipped.
    """
    found = []
    for ep in sorted(entry_points(group=group), key=lambda e: (e.name, e.value)):
        try:
            found.append(ep.load())
        except (ImportError, AttributeError) as exc:  # what EntryPoint.load raises
            print(f'warning: rcsim plug-in {ep.name!r} ({ep.value}) is not available: '
                  f'{type(exc).__name__}: {exc}'.splitlines()[0], file=sys.stderr)
    return found


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every available subcommand registered."""
    parser = OneLineErrorParser(
        prog='rcsim', description='rc-sim: simulate, perturb, calibrate and evaluate a 1:10 '
        'Ackermann RC car (embedded engine; no ROS needed).')
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    before, after = BUILTIN_COMMANDS
    for register in (*before, *plugin_registrars(), *after):
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rcsim``."""
    from rc_sim_description.report_page import command_started

    command_started(argv)  # the output pages show the command line and its wall time
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, 'func', None) is None:
        parser.print_help()
        return 1
    return run_cli(lambda: int(args.func(args)))


if __name__ == '__main__':
    sys.exit(main())
