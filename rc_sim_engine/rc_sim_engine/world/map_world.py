"""Track maps as engine worlds and as SDF worlds (extruded wall cells) for Gazebo.

The wall cells of a map are merged into axis-aligned rectangles (in the map frame): runs of wall
cells along each row, then runs with the same column span in consecutive rows are joined. Their
union is exactly the set of wall cells, so the exact lidar of :mod:`rc_sim_engine.world.raycast`
and the box contacts of :mod:`rc_sim_engine.world.collision` see the same walls as the grid kernels
of
:mod:`rc_sim_engine.world.map_grid`. With ``unknown='occupied'`` a one-cell frame around the image
closes the map (the outside is unknown). Each rectangle becomes a static ``<box>`` of
``wall_height`` metres in the SDF, so Gazebo and the engine drive the same track.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.world.sdf import World
from rc_sim_engine.world.track_map import (
    OccupancyMap,
    TrackMapError,
    check_unknown_policy,
    load_map,
)

__all__ = ['DEFAULT_WALL_HEIGHT', 'load_map_world', 'map_sdf', 'map_spawn_pose', 'map_world',
           'wall_rectangles']

DEFAULT_WALL_HEIGHT = 0.3  # m, as the walls of the generated SDF tracks
#: Most rectangles written into one SDF world (Gazebo loads each as a static link).
MAX_SDF_BOXES = 20_000


def wall_rectangles(wall: NDArray[np.bool_]) -> NDArray[np.int64]:
    """(R, 4) rectangles ``row0, col0, rows, cols`` (row 0 at the bottom) covering exactly the
    True cells of ``wall``: row runs merged with identical runs of the rows above."""
    h, _ = wall.shape
    padded = np.zeros((h, wall.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = wall
    edges = np.diff(padded, axis=1)
    open_runs: dict[tuple[int, int], int] = {}  # (col0, col1) -> first row
    out: list[tuple[int, int, int, int]] = []
    for r in range(h):
        starts = np.nonzero(edges[r] == 1)[0]
        ends = np.nonzero(edges[r] == -1)[0]
        runs = set(zip(starts.tolist(), ends.tolist()))
        for key in [k for k in open_runs if k not in runs]:
            row0 = open_runs.pop(key)
            out.append((row0, key[0], r - row0, key[1] - key[0]))
        for key in runs:
            open_runs.setdefault(key, r)
    for key, row0 in open_runs.items():
        out.append((row0, key[0], h - row0, key[1] - key[0]))
    return np.array(sorted(out), dtype=np.int64).reshape(-1, 4)


def _closed_walls(occ: OccupancyMap, unknown: str) -> NDArray[np.bool_]:
    """Wall cells, framed by one ring of wall cells when the outside is unknown = occupied."""
    check_unknown_policy(unknown)
    wall = occ.walls(unknown)
    if unknown != 'occupied':
        return wall
    framed = np.ones((wall.shape[0] + 2, wall.shape[1] + 2), dtype=bool)
    framed[1:-1, 1:-1] = wall
    return framed


def map_world(occ: OccupancyMap, *, unknown: str = 'occupied',
              wall_height: float = DEFAULT_WALL_HEIGHT) -> World:
    """The map's walls as the boxes of a :class:`World` (names ``map::walls::wall_<i>``)."""
    wall = _closed_walls(occ, unknown)
    shift = 1 if unknown == 'occupied' else 0
    rects = wall_rectangles(wall)
    res = occ.resolution
    ox, oy, yaw = occ.origin
    c, s = math.cos(yaw), math.sin(yaw)
    rows = rects[:, 0] - shift + 0.5 * rects[:, 2]
    cols = rects[:, 1] - shift + 0.5 * rects[:, 3]
    u, v = cols * res, rows * res
    boxes = np.stack([ox + c * u - s * v, oy + s * u + c * v, np.full(len(rects), yaw),
                      0.5 * rects[:, 3] * res, 0.5 * rects[:, 2] * res], axis=1)
    z = np.tile([0.0, wall_height], (len(rects), 1))
    names = tuple(f'map::walls::wall_{i}' for i in range(len(rects)))
    source = str(occ.spec.yaml_path) if occ.spec is not None else occ.name
    return World(name=occ.name, source=source, boxes=boxes.reshape(-1, 5), box_z=z,
                 box_names=names)


def map_spawn_pose(occ: OccupancyMap, unknown: str = 'occupied') -> tuple[float, float, float]:
    """Start pose of a map: its ``start_pose`` key, else the start of its centre line."""
    spec = occ.spec
    if spec is not None and spec.start_pose is not None:
        return spec.start_pose
    from rc_sim_engine.world.centerline import extract_centerline, load_centerline_csv

    if spec is not None and spec.centerline is not None:
        line = load_centerline_csv(spec.centerline).oriented(None)
    else:
        line = extract_centerline(occ, unknown=unknown)
    x, y, yaw = line.pose_at(0.0)
    return (float(x), float(y), float(yaw))


def load_map_world(path: str | os.PathLike[str], *, unknown: str = 'occupied'
                   ) -> tuple[World, tuple[float, float, float]]:
    """``rcsim run --world map.yaml``: the world and its start pose."""
    occ = load_map(path)
    return map_world(occ, unknown=unknown), map_spawn_pose(occ, unknown)


def map_sdf(occ: OccupancyMap, *, unknown: str = 'occupied',
            wall_height: float = DEFAULT_WALL_HEIGHT) -> str:
    """SDF 1.9 world text: the shipped worlds' header and systems, and one static box per wall
    rectangle (same generator as ``rc_sim_description.worlds``)."""
    from rc_sim_description.worlds import SpawnPose, TrackSpec, WallBox, world_sdf

    if not (math.isfinite(wall_height) and 0 < wall_height <= 10.0):
        raise TrackMapError(f'wall height must be in (0, 10] m, got {wall_height!r}')
    world = map_world(occ, unknown=unknown, wall_height=wall_height)
    if len(world.boxes) > MAX_SDF_BOXES:
        raise TrackMapError(f'{occ.name}: {len(world.boxes):,} wall boxes exceed the SDF limit '
                            f'of {MAX_SDF_BOXES:,}')
    x, y, yaw = map_spawn_pose(occ, unknown)
    h, w = occ.shape
    spec = TrackSpec(name=_sdf_name(occ.name), shape='none', size=(), lane_width=0.0,
                     spawn=SpawnPose(x, y, yaw),
                     description=f'track map {occ.name} ({w} x {h} cells at '
                                 f'{occ.resolution:g} m), {len(world.boxes)} wall boxes '
                                 f'{wall_height:g} m high; written by rcsim map to-sdf')
    walls = [WallBox(float(b[0]), float(b[1]), float(b[2]), 2.0 * float(b[3]),
                     2.0 * float(b[4]), wall_height) for b in world.boxes]
    text = world_sdf(spec, walls)
    return text.replace(
        'Generated by rc_sim_description/worlds.py (python -m rc_sim_description.worlds -w):\n'
        '  edit the generator, not this file.',
        f'Written by rcsim map to-sdf from the map {occ.name}: regenerate it from the map\n'
        '  rather than editing it.')


def _sdf_name(name: str) -> str:
    cleaned = ''.join(ch if ch.isalnum() or ch == '_' else '_' for ch in name)
    return cleaned or 'track_map'


def write_map_sdf(path: str | os.PathLike[str], out: str | os.PathLike[str], *,
                  unknown: str = 'occupied', wall_height: float = DEFAULT_WALL_HEIGHT,
                  force: bool = False) -> Path:
    """Write the SDF of map YAML ``path`` to ``out`` atomically; returns ``out``."""
    from rc_sim_description.atomic import atomic_write_text, check_output_path

    target = check_output_path(out, force=force)
    text = map_sdf(load_map(path), unknown=unknown, wall_height=wall_height)
    atomic_write_text(target, text)
    return target
