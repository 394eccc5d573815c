"""Write the bag set of one independent reference car (rc_sim_calibration/test/refcars).

Six training bags (01_line .. 06_speed_steps), two held-out bags (07_slalom, 08_steering_chirp),
``measured.yaml`` (the rc-sim override a team would pass as ``--params``: mass, wheelbase, CG,
track, nominal wheel radius) and ``truth.yaml`` (what a perfect calibration finds; definitions in
rc_sim_calibration/test/refcars/README.md). Storage alternates sqlite3 / mcap unless --storage.

    python benchmarks/make_refcar_bags.py --car dc_double_track --seed 3 --out runs/refcar_b
    rcsim fit --bag runs/refcar_b/0[1-6]_* --params runs/refcar_b/measured.yaml --out cal.yaml
    rcsim replay --params cal.yaml --bag runs/refcar_b/07_slalom --out pred.csv

Prints the wall time of the set (simulation + bag writing) and the main truths.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'rc_sim_calibration' / 'test'))

import refcars

from rc_sim_description.atomic import atomic_output_dir
from rc_sim_description.cli_support import OneLineErrorParser, run_cli
from rc_sim_description.errors import ConfigError


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = OneLineErrorParser(description=__doc__.splitlines()[0])
    parser.add_argument('--car', required=True, choices=refcars.CAR_NAMES)
    parser.add_argument('--seed', type=int, required=True, help='seed of the parameter draw')
    parser.add_argument('--out', required=True, help='output directory (created)')
    parser.add_argument('--interface', choices=refcars.INTERFACES,
                        help="command interface (default: the car's own)")
    parser.add_argument('--storage', choices=('mixed', *refcars.STORAGES), default='mixed')
    parser.add_argument('--only', help='comma-separated manoeuvres to write (default: all 8)')
    parser.add_argument('--no-noise', action='store_true', help='ideal sensors')
    parser.add_argument('--tf-static', action='store_true',
                        help='also record base_link -> mocap frame on /tf_static')
    parser.add_argument('--yaw-inertia', action='store_true',
                        help='add a box estimate of the yaw inertia to measured.yaml')
    parser.add_argument('--force', action='store_true', help='replace an existing --out')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.seed < 0:
        raise ConfigError(f'--seed: must be >= 0, got {args.seed}')
    car = refcars.make_car(args.car, args.seed)
    if args.interface and args.interface not in car.interfaces:
        raise ConfigError(f'--interface {args.interface}: {args.car} takes '
                          f'{", ".join(car.interfaces)}')
    names = refcars.MANOEUVRES
    if args.only:
        names = tuple(n.strip() for n in args.only.split(','))
        unknown = [n for n in names if n not in refcars.MANOEUVRES]
        if unknown:
            raise ConfigError(f'--only: unknown manoeuvre {unknown[0]!r} '
                              f'(known: {", ".join(refcars.MANOEUVRES)})')
    sim = {'noise': not args.no_noise, 'tf_static': args.tf_static}
    start = time.perf_counter()
    with atomic_output_dir(args.out, force=args.force) as tmp:
        tmp.mkdir()
        written = []
        for name in names:
            path, trace = refcars.write_manoeuvre_bag(car, name, tmp, interface=args.interface,
                                                      storage=args.storage, **sim)
            storage = refcars.storage_for(refcars.MANOEUVRES.index(name), args.storage)
            written.append((path.name, storage, trace.duration))
        refcars.write_car_files(car, tmp, yaw_inertia=args.yaw_inertia)
    wall = time.perf_counter() - start
    truth = car.truth()
    print(f'{args.car} seed {args.seed} -> {args.out} ({wall:.1f} s wall, measured under load)')
    for name, storage, duration in written:
        print(f'  {name:<20} {storage:<7} {duration:5.1f} s')
    print(f'  interface {args.interface or car.default_interface}; command_latency '
          f'{truth["command_latency"] * 1e3:.1f} ms, steering_gain {truth["steering_gain"]:.4f}, '
          f'steering_offset {truth["steering_offset"]:+.4f} rad, effective radius '
          f'{truth["effective_rolling_radius"]:.5f} m (nominal {truth["wheel_radius_nominal"]}), '
          f'odom offset {truth["odom_offset"][0]:.3f}, {truth["odom_offset"][1]:+.3f} m')
    return 0


if __name__ == '__main__':
    sys.exit(run_cli(main))
