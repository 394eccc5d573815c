"""``rcsim describe``: validate and summarise the vehicle parameters, the car and the worlds."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ['DESCRIBE_FILES', 'command', 'register']

#: what ``--out`` holds (``--force`` replaces only such a directory)
DESCRIBE_FILES = ('rc_car.urdf', 'summary.txt')


def register(subparsers: Any) -> None:
    """Add ``describe`` to the ``rcsim`` subcommands."""
    parser = subparsers.add_parser(
        'describe', help='validate vehicle.yaml, the xacro car and the worlds; print a summary',
        description='Load and validate config/vehicle.yaml (+ --params override), expand the '
        'xacro car with PyPI xacro, parse the URDF, check the shipped worlds and print a summary.')
    parser.add_argument('--params', metavar='YAML', type=Path,
                        help='override YAML merged over vehicle.yaml (e.g. a calibration result)')
    parser.add_argument('--out', metavar='DIR', type=Path,
                        help='also write rc_car.urdf and summary.txt into this new directory')
    parser.add_argument('--no-lidar', action='store_true', help='expand the car without lidar')
    parser.add_argument('--force', action='store_true', help='replace an existing --out')
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """Run ``rcsim describe``; user errors raise RcSimError (one line, exit 2)."""
    from rc_sim_description.atomic import atomic_output_dir, check_output_path
    from rc_sim_description.params import load_vehicle_params
    from rc_sim_description.paths import list_worlds, world_path
    from rc_sim_description.urdf import (
        car_summary,
        car_xacro,
        expand_car,
        parse_urdf,
        vehicle_yaml_of,
    )
    from rc_sim_description.worlds import inspect_world

    if args.out is not None:
        check_output_path(args.out, force=args.force, kind='dir', names=DESCRIBE_FILES,
                          inputs={'--params': args.params})
    overrides = [args.params] if args.params else []
    params = load_vehicle_params(vehicle_yaml_of(car_xacro()), overrides=overrides)
    urdf = expand_car(args.params, lidar=not args.no_lidar)
    model = parse_urdf(urdf, 'rc_car.urdf')
    lines = [f'vehicle: {params.source}']
    lines += [f'  {label:<20} {value}' for label, value in car_summary(params, model).items()]
    lines.append('worlds:')
    for name in list_worlds():
        info = inspect_world(world_path(name))
        s = info.spawn
        lines.append(f'  {name:<14} SDF {info.sdf_version}, {info.boxes} wall boxes, '
                     f'{info.cylinders} cylinders, start x={s.x:g} y={s.y:g} yaw={s.yaw:.4g}')
    text = '\n'.join(lines) + '\n'
    if args.out is not None:
        with atomic_output_dir(args.out, force=args.force, names=DESCRIBE_FILES) as tmp:
            tmp.mkdir()
            (tmp / 'rc_car.urdf').write_text(urdf, encoding='utf-8')
            (tmp / 'summary.txt').write_text(text, encoding='utf-8')
        text += f'wrote {args.out}/rc_car.urdf and summary.txt\n'
    print(text, end='')
    return 0
