"""Lidar on occupancy maps against independent computations.

* exact grid traversal == shapely on the union of the wall squares (1e-9 m) and == a brute-force
  march written here (within its step), on maps with a rotated origin;
* the SDF/World boxes of the same map give the same ranges through the polygon caster;
* the lookup table stays close to the exact ranges (statistics of the documented accuracy).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Point, box

from rc_sim_engine.world.map_grid import MapGrid, cast_grid_exact
from rc_sim_engine.world.map_lidar import MapLidar, scan_map
from rc_sim_engine.world.map_world import map_world, wall_rectangles
from rc_sim_engine.world.raycast import BeamFan, cast_rays_world
from rc_sim_engine.world.track_map import OccupancyMap, TrackMapError

RES = 0.1


def random_map(seed: int, yaw: float = 0.4) -> OccupancyMap:
    rng = np.random.default_rng(seed)
    v = np.zeros((40, 60), dtype=np.int8)
    v[[0, -1], :] = 100
    v[:, [0, -1]] = 100
    for _ in range(12):  # random blocks
        r, c = rng.integers(2, 36), rng.integers(2, 56)
        v[r:r + rng.integers(1, 5), c:c + rng.integers(1, 5)] = 100
    v[rng.random(v.shape) < 0.01] = -1  # scattered unknown cells
    v[18:22, 28:32] = 0  # keep the sensor area free
    return OccupancyMap(v, RES, (1.5, -0.7, yaw), name=f'random{seed}')


def wall_polygons(occ: OccupancyMap, unknown: str = 'occupied') -> shapely.Geometry:
    """Union of the wall squares in the world frame (+ the outside when unknown = occupied)."""
    rows, cols = np.nonzero(occ.walls(unknown))
    h, w = occ.shape
    squares = [box(c * RES, r * RES, (c + 1) * RES, (r + 1) * RES) for r, c in zip(rows, cols)]
    if unknown == 'occupied':  # the frame outside the image
        squares += [box(-RES, -RES, (w + 1) * RES, 0), box(-RES, h * RES, (w + 1) * RES,
                    (h + 1) * RES), box(-RES, 0, 0, h * RES), box(w * RES, 0, (w + 1) * RES,
                                                                  h * RES)]
    union = shapely.union_all(squares)
    ox, oy, yaw = occ.origin
    from shapely import affinity

    rotated = affinity.rotate(union, yaw, origin=(0, 0), use_radians=True)
    return affinity.translate(rotated, ox, oy)


def shapely_ranges(walls: shapely.Geometry, x: float, y: float, angles: np.ndarray,
                   reach: float = 20.0) -> np.ndarray:
    lines = np.array([LineString([(x, y), (x + reach * math.cos(a), y + reach * math.sin(a))])
                      for a in angles], dtype=object)
    hits = shapely.intersection(lines, walls.boundary)
    return np.where(shapely.is_empty(hits), np.inf, shapely.distance(Point(x, y), hits))


def march_ranges(occ: OccupancyMap, x: float, y: float, angles: np.ndarray,
                 step: float = 0.001, reach: float = 10.0) -> np.ndarray:
    """First sample (every ``step`` metres) that falls in a wall cell or outside the image."""
    t = np.arange(0.0, reach, step)
    wall = occ.walls('occupied')
    h, w = occ.shape
    out = np.full(len(angles), np.inf)
    for i, a in enumerate(angles):
        rows, cols = occ.to_cell(x + t * math.cos(a), y + t * math.sin(a))
        outside = (rows < 0) | (cols < 0) | (rows >= h) | (cols >= w)
        hit = outside.copy()
        inside = ~outside
        hit[inside] = wall[rows[inside], cols[inside]]
        k = np.argmax(hit)
        if hit[k]:
            out[i] = t[k]
    return out


def sensor(occ: OccupancyMap) -> tuple[float, float]:
    x, y = occ.cell_centers(np.array([20]), np.array([30]))
    return float(x[0]) + 0.013, float(y[0]) - 0.021


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_exact_grid_cast_equals_shapely(seed: int) -> None:
    occ = random_map(seed)
    grid = MapGrid.from_map(occ)
    x, y = sensor(occ)
    angles = np.linspace(-math.pi, math.pi, 721)[:-1] + 0.001
    ours = cast_grid_exact(grid, x, y, 0.0, angles)
    ref = shapely_ranges(wall_polygons(occ), x, y, angles)
    assert np.all(np.isfinite(ours))  # closed map
    np.testing.assert_allclose(ours, ref, atol=1e-9)


def test_exact_grid_cast_equals_brute_force_march() -> None:
    occ = random_map(3, yaw=-1.1)
    grid = MapGrid.from_map(occ)
    x, y = sensor(occ)
    angles = np.linspace(0.0, 2 * math.pi, 90, endpoint=False) + 0.003
    ours = cast_grid_exact(grid, x, y, 0.7, angles - 0.7)
    ref = march_ranges(occ, x, y, angles)
    assert np.all(np.abs(ours - ref) <= 0.001 + 1e-9)  # within the march step (<< half a cell)


def test_unknown_free_lets_rays_escape_and_range_limits() -> None:
    v = np.zeros((20, 20), dtype=np.int8)
    v[:, 15] = 100  # one wall to the right (map x = 1.5 .. 1.6 m)
    occ = OccupancyMap(v, RES, (0.0, 0.0, 0.0))
    grid = MapGrid.from_map(occ, unknown='free')
    r = cast_grid_exact(grid, 0.55, 1.05, 0.0, np.array([0.0, math.pi, math.pi / 2]),
                        range_max=5.0, range_min=0.5)
    assert r[0] == pytest.approx(0.95)
    assert r[1] == math.inf and r[2] == math.inf  # leaves the image: no return
    r = cast_grid_exact(grid, 1.3, 1.05, 0.0, np.array([0.0]), range_min=0.5)
    assert r[0] == -math.inf  # REP 117: closer than range_min
    closed = MapGrid.from_map(occ, unknown='occupied')
    assert cast_grid_exact(closed, 0.55, 1.05, 0.0, np.array([math.pi]))[0] == pytest.approx(0.55)


def test_world_boxes_cover_exactly_the_wall_cells() -> None:
    occ = random_map(4)
    wall = occ.walls('occupied')
    rects = wall_rectangles(wall)
    cover = np.zeros_like(wall, dtype=np.int64)
    for r0, c0, nr, nc in rects:
        cover[r0:r0 + nr, c0:c0 + nc] += 1
    assert np.array_equal(cover, wall.astype(np.int64))  # a partition of the wall cells
    world = map_world(occ)
    x, y = sensor(occ)
    fan = BeamFan(-math.pi, 2 * math.pi / 720, 720)
    boxes = cast_rays_world(world, x, y, 0.2, fan)
    grid = cast_grid_exact(MapGrid.from_map(occ), x, y, 0.2, fan.angles)
    np.testing.assert_allclose(boxes, grid, atol=1e-9)


def test_lookup_table_accuracy() -> None:
    """Documented accuracy of the table: unbiased, most beams well within half a cell."""
    occ = random_map(5, yaw=0.25)
    grid = MapGrid.from_map(occ)
    table = MapLidar.build(grid, range_cap=10.0, stride=1)
    rng = np.random.default_rng(5)
    angles = np.linspace(-2.35, 2.35, 1081)
    cos_b, sin_b = np.cos(angles), np.sin(angles)
    free_r, free_c = np.nonzero(grid.skip * RES > 0.15)
    errors = []
    out = np.empty(len(angles))
    for k in rng.choice(len(free_r), 40, replace=False):
        x, y = grid.center_of(int(free_r[k]), int(free_c[k]))
        x += rng.uniform(-0.05, 0.05)
        y += rng.uniform(-0.05, 0.05)
        heading = rng.uniform(-math.pi, math.pi)
        scan_map(grid.wall, grid.skip, grid.geo, table.lut, table.lut_index, table.centers,
                 table.meta, x, y, heading, angles[0], angles[1] - angles[0], cos_b,
                 sin_b, 10.0, out)
        exact = cast_grid_exact(grid, x, y, heading, angles, range_max=10.0)
        both = np.isfinite(exact) & np.isfinite(out)
        assert np.mean(both == np.isfinite(exact)) > 0.99
        errors.append((out - exact)[both])
    err = np.abs(np.concatenate(errors))
    assert np.median(err) < 0.005          # typical beam: millimetres
    assert np.mean(err < 0.5 * RES) > 0.85  # within half a cell
    assert abs(np.mean(np.concatenate(errors))) < 0.02


def test_lookup_table_exact_on_straight_walls() -> None:
    """In a rectangular room (rotated grid) the table scan is exact up to its range step
    (range_cap / 32766 = 0.3 mm) except near corners: the bin read, the position correction and
    the edge intersection are all seen (a bin direction off by the rounding angle gives 1-20 mm).
    Beams at a non-integer number of table bins apart."""
    v = np.zeros((60, 60), dtype=np.int8)
    v[[0, -1], :] = 100
    v[:, [0, -1]] = 100
    grid = MapGrid.from_map(OccupancyMap(v, RES, (1.5, -0.7, 0.4), name='room'))
    table = MapLidar.build(grid, range_cap=10.0, stride=1)
    rng = np.random.default_rng(7)
    angles = np.linspace(-2.35, 2.35, 1081)
    cos_b, sin_b = np.cos(angles), np.sin(angles)
    out = np.empty(len(angles))
    errors = []
    for _ in range(30):
        r, c = rng.integers(15, 45, size=2)
        x, y = grid.center_of(int(r), int(c))
        x += rng.uniform(-0.05, 0.05)
        y += rng.uniform(-0.05, 0.05)
        heading = rng.uniform(-math.pi, math.pi)
        scan_map(grid.wall, grid.skip, grid.geo, table.lut, table.lut_index, table.centers,
                 table.meta, x, y, heading, angles[0], angles[1] - angles[0], cos_b, sin_b,
                 10.0, out)
        errors.append(out - cast_grid_exact(grid, x, y, heading, angles, range_max=10.0))
    err = np.abs(np.concatenate(errors))
    assert np.quantile(err, 0.99) < 5e-4


def test_exact_mode_and_table_limits() -> None:
    occ = random_map(6)
    grid = MapGrid.from_map(occ)
    exact = MapLidar.build(grid, mode='exact', range_cap=10.0)
    x, y = sensor(occ)
    angles = np.linspace(-2.0, 2.0, 101)
    out = np.empty(len(angles))
    scan_map(grid.wall, grid.skip, grid.geo, exact.lut, exact.lut_index, exact.centers,
             exact.meta, x, y, 0.3, angles[0], angles[1] - angles[0],
             np.cos(angles), np.sin(angles), 10.0, out)
    np.testing.assert_allclose(out, cast_grid_exact(grid, x, y, 0.3, angles, 10.0), atol=1e-12)
    with pytest.raises(TrackMapError, match='lidar mode'):
        MapLidar.build(grid, mode='fast')
    with pytest.raises(TrackMapError, match='bins'):
        MapLidar.build(grid, n_bins=3)


def test_table_cache_round_trip(tmp_path: object) -> None:
    occ = random_map(7)
    grid = MapGrid.from_map(occ)
    first = MapLidar.build(grid, range_cap=5.0, n_bins=64, cache_dir=str(tmp_path))
    second = MapLidar.build(grid, range_cap=5.0, n_bins=64, cache_dir=str(tmp_path))
    assert np.array_equal(first.lut, second.lut)
    assert len(list(__import__('pathlib').Path(str(tmp_path)).glob('lut_*.npz'))) == 1
