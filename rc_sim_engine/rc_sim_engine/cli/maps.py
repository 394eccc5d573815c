"""``rcsim map``: inspect ROS map_server track maps and write them as SDF worlds.

    rcsim map info chicane_track                       # or path/to/map.yaml
    rcsim map to-sdf path/to/map.yaml --out track.sdf  # extruded walls for Gazebo
    rcsim map centerline path/to/map.yaml --out line.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_description.errors import RcSimError

__all__ = ['map_inputs', 'register']


def register(subparsers: Any) -> None:
    """Add ``rcsim map info|to-sdf|centerline``."""
    p = subparsers.add_parser(
        'map', help='track maps (ROS map_server YAML + PGM/PNG): info, SDF export, centre line',
        description='Track maps in the ROS map_server format (YAML with image, resolution, '
        'origin, negate, occupied_thresh, free_thresh, mode). A map drives like an SDF world: '
        'rcsim run --world path/to/map.yaml. Example: rcsim map to-sdf chicane_track --out '
        'chicane_track.sdf')
    sub = p.add_subparsers(dest='map_command', metavar='ACTION', required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument('map', help='map YAML file or shipped map name (chicane_track)')
        q.add_argument('--unknown', choices=('occupied', 'free'), default='occupied',
                       help='unknown cells (and the outside of the image) are walls or free '
                       '(default: occupied)')

    info = sub.add_parser('info', help='print size, resolution, walls, start pose, lap length',
                          description='Print a summary of a track map.')
    common(info)
    info.set_defaults(func=_info)
    sdf = sub.add_parser('to-sdf', help='write the map as an SDF world with extruded walls',
                         description='Write the wall cells of a map, merged into rectangles, as '
                         'static boxes of an SDF 1.9 world (Gazebo drives the same track).')
    common(sdf)
    sdf.add_argument('--out', required=True, help='output .sdf file')
    sdf.add_argument('--wall-height', type=float, default=0.3,
                     help='height of the extruded walls [m] (default: 0.3)')
    sdf.add_argument('--force', action='store_true', help='overwrite an existing output')
    sdf.set_defaults(func=_to_sdf)
    line = sub.add_parser('centerline', help='write the centre line (given or extracted) as CSV',
                          description='Write the closed centre line of a track map as a CSV '
                          '(# x_m,y_m), oriented along the start pose.')
    common(line)
    line.add_argument('--out', required=True, help='output .csv file')
    line.add_argument('--force', action='store_true', help='overwrite an existing output')
    line.set_defaults(func=_centerline)


def map_inputs(path: str | Path) -> list[Path]:
    """The files a map YAML reads: itself, its image and its centre line (as far as the YAML can
    be read; a broken one fails later with its own error). Outputs must not overlap them."""
    from rc_sim_engine.world.track_map import read_map_spec

    out = [Path(path)]
    try:
        spec = read_map_spec(path)
    except RcSimError:
        return out
    out.append(spec.image)
    if spec.centerline is not None:
        out.append(spec.centerline)
    return out


def _info(args: argparse.Namespace) -> int:
    from rc_sim_engine.world.map_world import map_spawn_pose, map_world
    from rc_sim_engine.world.track import resolve_map_path
    from rc_sim_engine.world.track_map import load_map

    path = resolve_map_path(args.map)
    occ = load_map(path)
    h, w = occ.shape
    values = occ.values
    spec = occ.spec
    assert spec is not None
    world = map_world(occ, unknown=args.unknown)
    x, y, yaw = map_spawn_pose(occ, args.unknown)
    lines = [
        f'rcsim map info: {path}',
        f'  image               {spec.image.name}: {w} x {h} cells at {occ.resolution:g} m '
        f'({w * occ.resolution:.2f} m x {h * occ.resolution:.2f} m), mode {spec.mode}, '
        f'negate {int(spec.negate)}',
        f'  origin              x={occ.origin[0]:g} m, y={occ.origin[1]:g} m, '
        f'yaw={occ.origin[2]:g} rad (lower-left pixel)',
        f'  cells               {int(np.sum(values == 0)):,} free, '
        f'{int(np.sum(values >= 100)):,} occupied, {int(np.sum(values < 0)):,} unknown '
        f'({int(np.sum((values > 0) & (values < 100))):,} in between)',
        f'  walls               {len(world.boxes):,} boxes (unknown = {args.unknown})',
        f'  start pose          x={x:.3f} m, y={y:.3f} m, yaw={yaw:.3f} rad',
    ]
    try:
        from rc_sim_engine.world.centerline import extract_centerline, load_centerline_csv

        if spec.centerline is not None:
            cl = load_centerline_csv(spec.centerline)
            how = f'from {spec.centerline.name}'
        else:
            cl = extract_centerline(occ, unknown=args.unknown, start=(x, y, yaw))
            how = 'extracted'
        lines.append(f'  centre line         {cl.length:.2f} m ({how})')
    except RcSimError as exc:  # the summary still helps without a centre line
        lines.append(f'  centre line         none ({exc})')
    print('\n'.join(lines))
    return 0


def _to_sdf(args: argparse.Namespace) -> int:
    from rc_sim_description.atomic import check_output_path
    from rc_sim_engine.world.map_world import write_map_sdf
    from rc_sim_engine.world.track import resolve_map_path

    path = resolve_map_path(args.map)
    check_output_path(args.out, force=args.force, kind='file', inputs={'map': map_inputs(path)})
    out = write_map_sdf(path, args.out, unknown=args.unknown, wall_height=args.wall_height,
                        force=args.force)
    print(f'rcsim map to-sdf: wrote {out}')
    return 0


def _centerline(args: argparse.Namespace) -> int:
    from rc_sim_description.atomic import atomic_write_text, check_output_path
    from rc_sim_engine.world.centerline import (
        extract_centerline,
        load_centerline_csv,
        write_centerline_csv,
    )
    from rc_sim_engine.world.map_world import map_spawn_pose
    from rc_sim_engine.world.track import resolve_map_path
    from rc_sim_engine.world.track_map import load_map

    path = resolve_map_path(args.map)
    target = check_output_path(args.out, force=args.force, kind='file',
                               inputs={'map': map_inputs(path)})
    occ = load_map(path)
    start = map_spawn_pose(occ, args.unknown)
    spec = occ.spec
    if spec is not None and spec.centerline is not None:
        line = load_centerline_csv(spec.centerline).oriented(start)
    else:
        line = extract_centerline(occ, unknown=args.unknown, start=start)
    atomic_write_text(target, write_centerline_csv(line))
    print(f'rcsim map centerline: wrote {target} ({len(line.xy)} points, {line.length:.2f} m)')
    return 0

