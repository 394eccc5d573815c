"""``rcsim``: the suite's command line (also ``python -m rc_sim_engine``).

Each subcommand lives in its own module that exposes ``register(subparsers)``; registration only
builds argparse parsers (heavy imports stay inside the command functions, so start-up is fast).
The parser's ``func(args) -> int`` runs the command; user errors (:class:`RcSimError`) print one
line and exit 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import importlib
import importlib.util
import sys

from rc_sim_description.cli_support import OneLineErrorParser, run_cli

__all__ = ['SUBCOMMAND_MODULES', 'build_parser', 'main']

# Order = order in --help. Each module: register(subparsers) adding one or more subcommands.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    'rc_sim_engine.cli_run',            # rcsim run
    'rc_sim_engine.cli_track',          # rcsim track, rcsim evaluate
    'rc_sim_engine.cli_map',            # rcsim map info|to-sdf|centerline
    'rc_sim_sensors.cli',               # rcsim lidar apply|stats
    'rc_sim_calibration.cli',           # rcsim fit, rcsim replay, rcsim protocol
    'rc_sim_description.cli',           # rcsim describe
    'rc_sim_description.cli_inspect',   # rcsim inspect
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every available subcommand registered."""
    parser = OneLineErrorParser(
        prog='rcsim', description='rc-sim: simulate, perturb, calibrate and evaluate a 1:10 '
        'Ackermann RC car (embedded engine; no ROS needed).')
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    for name in SUBCOMMAND_MODULES:
        if importlib.util.find_spec(name) is None:
            continue
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rcsim``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, 'func', None) is None:
        parser.print_help()
        return 1
    return run_cli(lambda: int(args.func(args)))


if __name__ == '__main__':
    sys.exit(main())
