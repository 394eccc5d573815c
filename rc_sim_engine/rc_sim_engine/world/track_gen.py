"""Generator of the rc-sim track maps (``map_server`` PGM + YAML + centre-line CSV).

A track is a closed centre line through control points (periodic cubic spline, parameterised by
chord length), a lane of constant width around it and walls of constant thickness outside the
lane; the rest of the image is unknown, as in a SLAM map. Pixels: free 254, wall 0, unknown 205
(the values ``map_saver`` writes), ``negate: 0``, thresholds 0.65 / 0.196.

    python -m rc_sim_engine.world.track_gen --write      # regenerate config/maps/*.{pgm,yaml,csv}

:data:`TRACKS` holds the shipped ``chicane_track`` (a 16 m x 9 m circuit with a chicane, for tests
and demos) and ``bench_circuit`` (a 50 m x 50 m circuit: 1000 x 1000 cells at 5 cm, written on
demand by the benchmarks, not shipped).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import math
import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.world.centerline import CenterLine, write_centerline_csv

__all__ = ['TRACKS', 'TrackDesign', 'render_track', 'spline_centerline', 'write_track']

FREE_PIXEL = 254
WALL_PIXEL = 0
UNKNOWN_PIXEL = 205


@dataclass(frozen=True)
class TrackDesign:
    """Control points of the centre line [m], lane width, wall thickness, cell size, map size."""

    name: str
    description: str
    points: tuple[tuple[float, float], ...]
    lane_width: float
    wall_thickness: float = 0.15
    resolution: float = 0.05
    size: tuple[int, int] | None = None  # (width, height) pixels; None: bounding box + margin
    margin: float = 1.0


TRACKS: dict[str, TrackDesign] = {
    'chicane_track': TrackDesign(
        name='chicane_track',
        description='16 m x 9 m circuit, 1.6 m lane, a chicane on the top straight; '
                    'counter-clockwise laps from the bottom straight',
        points=((0.0, -3.0), (4.0, -3.0), (6.3, -2.0), (6.8, 0.0), (6.3, 2.0), (4.5, 3.0),
                (2.6, 3.0), (1.2, 2.1), (0.0, 1.8), (-1.2, 2.1), (-2.6, 3.0), (-4.5, 3.0),
                (-6.3, 2.0), (-6.8, 0.0), (-6.3, -2.0), (-4.0, -3.0)),
        lane_width=1.6),
    'bench_circuit': TrackDesign(
        name='bench_circuit',
        description='50 m x 50 m circuit (1000 x 1000 cells at 5 cm), 2.2 m lane, '
                    'hairpins and esses; for the benchmarks',
        points=((25.0, 4.5), (40.0, 5.0), (45.5, 9.0), (44.5, 15.0), (37.0, 17.5),
                (31.0, 21.5), (32.0, 27.5), (39.5, 29.0), (45.0, 34.0), (44.5, 42.0),
                (38.0, 45.5), (27.0, 45.0), (19.5, 41.5), (20.5, 34.0), (15.5, 27.5),
                (8.0, 29.0), (4.5, 22.0), (9.0, 15.5), (4.5, 10.0), (8.0, 5.0)),
        lane_width=2.2, size=(1000, 1000), margin=0.0),
}


def spline_centerline(points: tuple[tuple[float, float], ...], spacing: float) -> CenterLine:
    """Periodic cubic spline through the control points, sampled every ``spacing`` metres."""
    from scipy.interpolate import CubicSpline

    pts = np.asarray(points, dtype=np.float64)
    closed = np.vstack([pts, pts[:1]])
    t = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(closed, axis=0), axis=1))])
    spline = CubicSpline(t, closed, bc_type='periodic')
    dense = spline(np.linspace(0.0, t[-1], 20 * len(pts) * 50, endpoint=False))
    return CenterLine.from_points(dense).resampled(spacing)


def render_track(design: TrackDesign) -> tuple[NDArray[np.uint8], tuple[float, float, float],
                                               CenterLine]:
    """Image (rows top-down) of the track, the map origin and the centre line."""
    from scipy.spatial import cKDTree

    res = design.resolution
    line = spline_centerline(design.points, res / 4.0)
    half = 0.5 * design.lane_width
    lo = line.xy.min(axis=0) - half - design.wall_thickness - design.margin
    hi = line.xy.max(axis=0) + half + design.wall_thickness + design.margin
    if design.size is None:
        width, height = (math.ceil(v) for v in (hi - lo) / res)
    else:
        width, height = design.size
        lo = 0.5 * (lo + hi) - 0.5 * res * np.array([width, height])
    lo = np.round(lo / res) * res
    cols = (np.arange(width) + 0.5) * res + lo[0]
    rows = (np.arange(height) + 0.5) * res + lo[1]
    gx, gy = np.meshgrid(cols, rows)
    dist, _ = cKDTree(line.xy).query(np.stack([gx.ravel(), gy.ravel()], axis=1))
    dist = dist.reshape(height, width)
    grid = np.full((height, width), UNKNOWN_PIXEL, dtype=np.uint8)  # row 0 = bottom
    grid[dist <= half + design.wall_thickness] = WALL_PIXEL
    grid[dist <= half] = FREE_PIXEL
    origin = (float(lo[0]), float(lo[1]), 0.0)
    return np.ascontiguousarray(grid[::-1]), origin, line.resampled(0.1)


def write_track(design: TrackDesign, directory: str | os.PathLike[str]) -> Path:
    """Write ``<name>.pgm``, ``<name>.yaml`` and ``<name>_centerline.csv``; returns the YAML."""
    from PIL import Image

    from rc_sim_description.atomic import atomic_write_text

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    image, origin, line = render_track(design)
    start_x, start_y, start_yaw = (float(v[0]) for v in line.pose_at(np.array([0.0])))
    tmp = out / f'.{design.name}.pgm.tmp'
    Image.fromarray(image, mode='L').save(tmp, format='PPM')
    os.replace(tmp, out / f'{design.name}.pgm')
    atomic_write_text(out / f'{design.name}_centerline.csv', write_centerline_csv(line))
    yaml_text = (
        f'# {design.name}: {design.description}.\n'
        '# Generated by rc_sim_engine/world/track_gen.py '
        '(python -m rc_sim_engine.world.track_gen --write).\n'
        '# map_server keys; start_pose and centerline are rc-sim extensions map_server ignores.\n'
        f'image: {design.name}.pgm\n'
        f'resolution: {design.resolution}\n'
        f'origin: [{origin[0]:.4f}, {origin[1]:.4f}, 0.0]\n'
        'negate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.196\nmode: trinary\n'
        f'start_pose: [{start_x:.4f}, {start_y:.4f}, {start_yaw:.6f}]\n'
        f'centerline: {design.name}_centerline.csv\n')
    atomic_write_text(out / f'{design.name}.yaml', yaml_text)
    return out / f'{design.name}.yaml'


def shipped_maps_dir() -> Path:
    """``rc_sim_engine/config/maps`` of the source tree or the installed share directory."""
    from rc_sim_description.paths import share_path

    return share_path('config/maps', package='rc_sim_engine')


def main(argv: list[str] | None = None) -> int:
    """``python -m rc_sim_engine.world.track_gen [--write] [--name NAME] [--out DIR]``."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--write', action='store_true', help='write the shipped maps')
    parser.add_argument('--name', choices=sorted(TRACKS), help='write only this track')
    parser.add_argument('--out', help='output directory (default: config/maps)')
    args = parser.parse_args(argv)
    names = [args.name] if args.name else ['chicane_track']
    out = Path(args.out) if args.out else shipped_maps_dir()
    for name in names:
        design = TRACKS[name]
        if args.write or args.out:
            print(write_track(design, out))
        else:
            image, origin, line = render_track(design)
            print(f'{name}: {image.shape[1]} x {image.shape[0]} px, origin {origin}, '
                  f'lap {line.length:.2f} m (use --write to write it)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
