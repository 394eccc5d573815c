"""Lidar ray casting equals an independent shapely computation (< 1 mm) and follows REP 117."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from shapely import affinity
from shapely.geometry import LineString, Point, box

from rc_sim_engine.world.raycast import BeamFan, cast_rays, cast_rays_world
from rc_sim_engine.world.sdf import World, ring_track

RANGE = 30.0


def shapely_ranges(world: World, x: float, y: float, heading: float, fan: BeamFan) -> np.ndarray:
    """Nearest intersection of each beam segment with the obstacle outlines (shapely)."""
    outlines = []
    for cx, cy, yaw, hx, hy in world.boxes:
        poly = affinity.rotate(box(-hx, -hy, hx, hy), yaw, origin=(0, 0), use_radians=True)
        outlines.append(affinity.translate(poly, cx, cy).exterior)
    for cx, cy, r in np.concatenate([world.circles, world.rings]):
        # 512 chords per quarter: the polygon is within r (1 - cos(pi / 2048)) < 2e-5 m of the circle
        outlines.append(Point(cx, cy).buffer(r, quad_segs=512).exterior)
    walls = shapely.union_all(outlines)
    angles = heading + fan.angles
    lines = [LineString([(x, y), (x + RANGE * math.cos(a), y + RANGE * math.sin(a))])
             for a in angles]
    hits = shapely.intersection(np.array(lines, dtype=object), walls)
    dist = shapely.distance(Point(x, y), hits)
    return np.where(shapely.is_empty(hits), np.inf, dist)


def random_world(rng: np.random.Generator) -> World:
    n_box, n_disc = 12, 6
    boxes = np.column_stack([rng.uniform(-8, 8, n_box), rng.uniform(-8, 8, n_box),
                             rng.uniform(-math.pi, math.pi, n_box), rng.uniform(0.05, 1.5, n_box),
                             rng.uniform(0.05, 1.5, n_box)])
    discs = np.column_stack([rng.uniform(-8, 8, n_disc), rng.uniform(-8, 8, n_disc),
                             rng.uniform(0.1, 1.0, n_disc)])
    return World('random', 'test', boxes=boxes, box_z=np.tile([0.0, 1.0], (n_box, 1)),
                 circles=discs, circle_z=np.tile([0.0, 1.0], (n_disc, 1)),
                 rings=np.array([[0.5, -0.3, 11.0]]), ring_z=np.array([[0.0, 1.0]]),
                 box_names=tuple(f'b{i}' for i in range(n_box)),
                 circle_names=tuple(f'c{i}' for i in range(n_disc)), ring_names=('ring',))


@pytest.mark.parametrize('seed', [0, 1, 2])
@pytest.mark.parametrize('fov', [math.radians(270.0), 2 * math.pi])
def test_ranges_equal_shapely(seed: int, fov: float) -> None:
    rng = np.random.default_rng(seed)
    world = random_world(rng)
    fan = BeamFan(-fov / 2, fov / 359, 360)
    for _ in range(3):
        x, y = rng.uniform(-9, 9, 2)
        heading = rng.uniform(-math.pi, math.pi)
        ours = cast_rays_world(world, x, y, heading, fan, 0.0, RANGE)
        ref = shapely_ranges(world, x, y, heading, fan)
        inside = np.isfinite(ref) & (ref < RANGE)
        np.testing.assert_array_equal(np.isfinite(ours), inside)
        np.testing.assert_allclose(ours[inside], ref[inside], atol=1e-3, rtol=0)


def test_ring_track_has_exact_circle_ranges() -> None:
    world = ring_track(5.0, 9.0)
    fan = BeamFan(-3 * math.pi / 4, 1.5 * math.pi / 1080, 1081)
    x, y, heading = 7.0, 0.0, math.pi / 2
    ranges = cast_rays_world(world, x, y, heading, fan, 0.0, RANGE)
    angles = heading + fan.angles
    d = np.column_stack([np.cos(angles), np.sin(angles)])
    # analytic: nearest positive root of |o + t d|^2 = r^2 over both circles
    o = np.array([x, y])
    b = d @ o
    expect = np.full(len(angles), np.inf)
    for r in (5.0, 9.0):
        disc = b * b - (o @ o - r * r)
        with np.errstate(invalid='ignore'):
            roots = np.stack([-b - np.sqrt(disc), -b + np.sqrt(disc)])
        roots[~np.isfinite(roots) | (roots < 0)] = np.inf
        expect = np.minimum(expect, roots.min(axis=0))
    np.testing.assert_allclose(ranges, expect, atol=1e-9)
    assert ranges[540] == pytest.approx(math.sqrt(81 - 49))  # straight ahead to the outer wall


def test_rep117_limits_and_no_obstacles() -> None:
    world = World('w', 's', boxes=np.array([[2.0, 0.0, 0.0, 0.5, 5.0]]),
                  box_z=np.array([[0.0, 1.0]]), box_names=('wall',))
    fan = BeamFan(-0.1, 0.1, 3)
    np.testing.assert_allclose(cast_rays_world(world, 0, 0, 0, fan, 0.0, 10.0),
                               1.5 / np.cos([0.1, 0.0, 0.1]))
    assert np.all(cast_rays_world(world, 0, 0, 0, fan, 0.0, 1.0) == np.inf)  # beyond range_max
    assert np.all(cast_rays_world(world, 0, 0, 0, fan, 2.0, 10.0) == -np.inf)  # closer than min
    assert np.all(cast_rays_world(world, 0, 0, math.pi, fan, 0.0, 10.0) == np.inf)  # facing away
    empty = World('e', 's')
    assert np.all(cast_rays(0, 0, 0, fan, empty.segments(), empty.round_obstacles()) == np.inf)


def test_obstacle_behind_the_angle_seam() -> None:
    """A wall straddling the +-pi direction (atan2 branch cut) is found by every beam."""
    world = World('w', 's', boxes=np.array([[-3.0, 0.0, 0.0, 0.2, 2.0]]),
                  box_z=np.array([[0.0, 1.0]]), box_names=('back',))
    fan = BeamFan(-math.pi, 2 * math.pi / 720, 721)
    ranges = cast_rays_world(world, 0.0, 0.0, 0.0, fan, 0.0, 20.0)
    back = np.abs(np.abs(fan.angles) - math.pi) < 0.3
    np.testing.assert_allclose(ranges[back], 2.8 / np.abs(np.cos(fan.angles[back])), atol=1e-9)
    assert np.all(np.isinf(ranges[~back & (np.abs(fan.angles) < 2.0)]))


def test_incidence_angles() -> None:
    """Flat wall x = 2: a beam at angle a meets it at incidence |a|; a beam through a disc's
    centre meets it head-on, one at offset d from the centre at asin(d / r)."""
    world = World('w', 's', boxes=np.array([[2.5, 0.0, 0.0, 0.5, 5.0]]),
                  box_z=np.array([[0.0, 1.0]]), box_names=('wall',))
    fan = BeamFan(-1.0, 0.01, 201)
    inc = np.empty(fan.n_beams)
    ranges = cast_rays(0.0, 0.0, 0.0, fan, world.segments(), world.round_obstacles(), 0.0, 50.0,
                       cull_back_faces=True, incidence_out=inc)
    assert np.all(np.isfinite(ranges))
    np.testing.assert_allclose(inc, np.abs(fan.angles), atol=1e-9)
    disc = np.array([[3.0, 0.0, 0.5]])
    single = BeamFan(0.0, 0.0, 1)
    for offset in (0.0, 0.3):
        out = np.empty(1)
        cast_rays(0.0, offset, 0.0, single, np.zeros((0, 4)), disc, incidence_out=out)
        assert out[0] == pytest.approx(math.asin(offset / 0.5), abs=1e-9)
    out = np.empty(1)
    cast_rays(0.0, 2.0, 0.0, single, np.zeros((0, 4)), disc, incidence_out=out)
    assert np.isnan(out[0])  # no hit
