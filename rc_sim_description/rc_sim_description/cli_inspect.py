"""``rcsim inspect --bag B [--write-recording R.yaml]``: what a bag holds and a proposed recording
description (the first command to run on a real recording)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ['command', 'register']


def register(subparsers: Any) -> None:
    """Add ``inspect`` to the ``rcsim`` subcommands."""
    p = subparsers.add_parser(
        'inspect', help='topics, types, counts and rates of a bag; a proposed recording '
        'description', description='Summarise a bag (rosbag2 directory, .db3/.mcap file or ROS 1 '
        '.bag): storage and metadata version, start time, duration, and per topic its type, '
        'message count and rate; then propose a recording description (roles guessed from the '
        'types and names; see docs/recordings.md) for --recording of fit, replay, evaluate and '
        'lidar.')
    p.add_argument('--bag', required=True, help='rosbag2 directory, .db3/.mcap file or ROS 1 .bag')
    p.add_argument('--write-recording', metavar='YAML', default=None,
                   help='write the proposed recording description to this file')
    p.add_argument('--force', action='store_true', help='overwrite --write-recording')
    p.add_argument('--skip-corrupt', action='store_true',
                   help='list a damaged bag with a warning instead of an error')
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """Run ``rcsim inspect``."""
    from rc_sim_description.atomic import atomic_write_text, check_output_path
    from rc_sim_description.bags import open_bag
    from rc_sim_description.inspect import propose_recording, summary_lines
    from rc_sim_description.recording import recording_yaml

    if args.write_recording is not None:  # never over the bag, with or without --force
        check_output_path(args.write_recording, force=args.force, kind='file',
                          label='--write-recording', inputs={'--bag': args.bag})
    with open_bag(args.bag, skip_corrupt=args.skip_corrupt, allow_empty=True) as bag:
        lines = summary_lines(bag)
        recording, notes = propose_recording(bag)
    print('\n'.join(lines))
    if recording is None:
        print('\nno role recognised: describe the recording by hand (docs/recordings.md)')
        return 0
    text = recording_yaml(recording, notes)
    print('\nproposed recording description (check it; docs/recordings.md):')
    print(text, end='')
    if args.write_recording is not None:
        header = (f'# Recording description of {args.bag}, proposed by rcsim inspect: roles '
                  'guessed from types and names.\n# Check every line (kinds, pose offset) '
                  'before use; format: docs/recordings.md\n')
        atomic_write_text(args.write_recording, header + text)
        print(f'wrote {args.write_recording}')
    return 0
