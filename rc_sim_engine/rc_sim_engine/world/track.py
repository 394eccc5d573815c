"""A race track: occupancy map, wall grid, lidar table, centre line, start pose and start grid.

    track = load_track('maps/chicane_track.yaml')              # or a shipped name: 'chicane_track'
    track.start_pose, track.centerline.length, track.grid, track.lidar

The centre line comes from the YAML's ``centerline`` CSV when given, else it is extracted from the
map (:func:`rc_sim_engine.world.centerline.extract_centerline`); the start pose from
``start_pose``, else the start of the centre line. :meth:`Track.grid_poses` places N cars in two
staggered columns behind the start line (a race grid).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import math
import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.world.centerline import CenterLine, extract_centerline, load_centerline_csv
from rc_sim_engine.world.map_grid import MapGrid
from rc_sim_engine.world.map_lidar import MapLidar
from rc_sim_engine.world.track_map import OccupancyMap, TrackMapError, load_map

__all__ = ['Track', 'load_track', 'resolve_map_path']

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Track:
    """Everything the racing kernels need about one map (see module doc).

    ``line_index`` (H + 2, W + 2) int32: nearest centre-line vertex of each padded free cell (-1
    on walls), so the kernels project a position onto two segments only.

    ``cells`` (3, H + 2, W + 2) int32: the per-cell arrays of the racing kernels in one array,
    so that a step takes one argument for them: ``grid.skip`` (float32 bits), ``lidar.lut_index``
    and ``line_index``, which are views of it (built on construction when not given).
    """

    name: str
    occupancy: OccupancyMap
    grid: MapGrid
    lidar: MapLidar
    centerline: CenterLine
    start_pose: tuple[float, float, float]
    line_index: NDArray[np.int32]
    unknown: str = 'occupied'
    cells: NDArray[np.int32] | None = None

    def __post_init__(self) -> None:
        if self.cells is not None:
            return
        skip = np.ascontiguousarray(self.grid.skip, dtype=np.float32)
        cells = np.empty((3, *skip.shape), dtype=np.int32)
        cells[0] = skip.view(np.int32)
        cells[1] = self.lidar.lut_index
        cells[2] = self.line_index
        grid = replace(self.grid, skip=cells[0].view(np.float32))
        object.__setattr__(self, 'grid', grid)
        object.__setattr__(self, 'lidar', replace(self.lidar, grid=grid, lut_index=cells[1]))
        object.__setattr__(self, 'line_index', cells[2])
        object.__setattr__(self, 'cells', cells)

    def grid_poses(self, n: int, spacing: float = 1.0, stagger: float = 0.25
                   ) -> FloatArray:
        """(n, 3) base_link poses: car i at arc length ``-i spacing`` behind the start, offset
        ``+-stagger`` [m] to the left/right of the centre line, heading along it."""
        sx, sy, syaw = self.start_pose
        s0, lat0 = self.centerline.project(sx, sy)
        s = s0[0] - spacing * np.arange(n)
        x, y, yaw = self.centerline.pose_at(s)
        side = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * stagger if n > 1 else np.zeros(1)
        offset = lat0[0] + side
        poses = np.stack([x - offset * np.sin(yaw), y + offset * np.cos(yaw), yaw], axis=1)
        poses[0] = (sx, sy, syaw) if n == 1 else poses[0]
        return poses


def resolve_map_path(name_or_path: str | os.PathLike[str]) -> Path:
    """A map YAML path, or the name of a shipped map (``config/maps/<name>.yaml``)."""
    candidate = Path(name_or_path)
    if candidate.suffix.lower() in ('.yaml', '.yml') or candidate.exists():
        if not candidate.is_file():
            raise TrackMapError(f'map file {str(candidate)!r} not found')
        return candidate
    from rc_sim_description.paths import share_path
    from rc_sim_description.yamlio import did_you_mean

    shipped = share_path(f'config/maps/{name_or_path}.yaml', package='rc_sim_engine')
    if shipped.is_file():
        return shipped
    names = sorted(p.stem for p in shipped.parent.glob('*.yaml'))
    hint = did_you_mean(str(name_or_path), names)
    raise TrackMapError(f'unknown map {str(name_or_path)!r}{hint} (shipped: '
                        f'{", ".join(names) or "none"}; or a map YAML path)')


def _line_index(grid: MapGrid, line: CenterLine) -> NDArray[np.int32]:
    from scipy.spatial import cKDTree

    rows, cols = np.nonzero(grid.wall == 0)
    index = np.full(grid.wall.shape, -1, dtype=np.int32)
    if len(rows):
        g = grid.geo
        u = (cols + 0.5) * g[4]
        v = (rows + 0.5) * g[4]
        x = g[0] + g[2] * u - g[3] * v
        y = g[1] + g[3] * u + g[2] * v
        _, nearest = cKDTree(line.xy).query(np.stack([x, y], axis=1))
        index[rows, cols] = nearest.astype(np.int32)
    return index


def load_track(path: str | os.PathLike[str], *, unknown: str = 'occupied',
               lidar_mode: str = 'lut', range_cap: float = 10.0, lidar_bins: int = 1440,
               lidar_stride: int | None = None, centerline: str | os.PathLike[str] | None = None,
               start_pose: tuple[float, float, float] | None = None,
               cache_dir: str | os.PathLike[str] | None = None) -> Track:
    """Load a map YAML (or shipped map name) as a :class:`Track`.

    Args:
        unknown: ``'occupied'`` (default) or ``'free'``: what unknown cells are.
        lidar_mode: ``'lut'`` (lookup table) or ``'exact'`` (cell traversal for every beam).
        range_cap: longest range the table stores [m] (at least the lidar's range_max).
        lidar_bins, lidar_stride: table angle bins and cells per row side (None: automatic).
        centerline, start_pose: override the YAML's ``centerline`` and ``start_pose``.
        cache_dir: directory where lookup tables are kept between runs (None: not kept).
    """
    occ = load_map(resolve_map_path(path))
    spec = occ.spec
    assert spec is not None
    start = start_pose if start_pose is not None else spec.start_pose
    line_file = centerline if centerline is not None else spec.centerline
    if line_file is not None:
        line = load_centerline_csv(line_file).oriented(start)
    else:
        line = extract_centerline(occ, unknown=unknown, start=start)
    if start is None:
        x, y, yaw = line.pose_at(0.0)
        start = (float(x), float(y), float(yaw))
    grid = MapGrid.from_map(occ, unknown)
    row, col = grid.cell_of(start[0], start[1])
    if grid.wall[row, col]:
        raise TrackMapError(f'{spec.yaml_path}: start pose ({start[0]:g}, {start[1]:g}) lies on '
                            'a wall or unknown cell')
    if not all(math.isfinite(v) for v in start):
        raise TrackMapError(f'{spec.yaml_path}: start pose must be finite, got {start}')
    lidar = MapLidar.build(grid, mode=lidar_mode, range_cap=range_cap, n_bins=lidar_bins,
                           stride=lidar_stride, cache_dir=cache_dir)
    return Track(occ.name, occ, grid, lidar, line, (float(start[0]), float(start[1]),
                                                    float(start[2])), _line_index(grid, line),
                 unknown)
