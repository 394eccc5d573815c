"""Footprint collisions agree with shapely; the contact normal and depth separate the shapes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely import affinity
from shapely.geometry import Point, box

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.world.collision import (
    Footprint,
    WorldArrays,
    check_response,
    deepest_contacts,
    footprint_contact,
    footprint_from_params,
)
from rc_sim_engine.world.sdf import World

FOOT = Footprint(center_x=0.2, half_length=0.3, half_width=0.15)


def car_polygon(x: float, y: float, yaw: float, foot: Footprint = FOOT):
    rect = box(foot.center_x - foot.half_length, -foot.half_width,
               foot.center_x + foot.half_length, foot.half_width)
    return affinity.translate(affinity.rotate(rect, yaw, origin=(0, 0), use_radians=True), x, y)


def obstacle_polygon(kind: int, row: np.ndarray):
    if kind == 0:
        cx, cy, yaw, hx, hy = row
        return affinity.translate(affinity.rotate(box(-hx, -hy, hx, hy), yaw, origin=(0, 0),
                                                  use_radians=True), cx, cy)
    cx, cy, r = row
    disc = Point(cx, cy).buffer(r, quad_segs=256)
    return disc if kind == 1 else disc.exterior


def single(kind: int, row: np.ndarray) -> WorldArrays:
    empty5, empty3 = np.zeros((0, 5)), np.zeros((0, 3))
    rows = np.asarray(row, dtype=float)[None, :]
    return WorldArrays(rows if kind == 0 else empty5, rows if kind == 1 else empty3,
                       rows if kind == 2 else empty3)


@pytest.mark.parametrize('kind', [0, 1, 2])
def test_contact_agrees_with_shapely_and_normal_separates(kind: int) -> None:
    rng = np.random.default_rng(10 + kind)
    hits = 0
    for _ in range(300):
        if kind == 0:
            row = np.array([0.0, 0.0, rng.uniform(-3, 3), rng.uniform(0.05, 0.6),
                            rng.uniform(0.05, 0.6)])
        elif kind == 1:
            row = np.array([0.0, 0.0, rng.uniform(0.05, 0.6)])
        else:
            row = np.array([0.0, 0.0, rng.uniform(0.8, 3.0)])
        if kind == 2:
            r = rng.uniform(row[2] - 0.6, row[2] + 0.6)
            a = rng.uniform(-math.pi, math.pi)
            x, y = r * math.cos(a), r * math.sin(a)
        else:
            x, y = rng.uniform(-1.2, 1.2, 2)
        yaw = rng.uniform(-math.pi, math.pi)
        car, obstacle = car_polygon(x, y, yaw), obstacle_polygon(kind, row)
        contact = footprint_contact(x, y, yaw, FOOT, single(kind, row))
        gap = car.distance(obstacle)
        if gap > 1e-4:
            assert contact is None
            continue
        if contact is None:  # a miss is only allowed for a touch (circle polygon tolerance):
            # the car shrunk by 0.1 mm must then be clear (gap < 1e-4 holds here by construction)
            assert not car.buffer(-1e-4).intersects(obstacle)
            continue
        hits += 1
        assert contact.kind == kind and contact.index == 0
        assert math.hypot(contact.normal_x, contact.normal_y) == pytest.approx(1.0)
        moved = affinity.translate(car, (contact.depth + 1e-6) * contact.normal_x,
                                   (contact.depth + 1e-6) * contact.normal_y)
        # separated up to the circle polygon tolerance (an area test is vacuous for the ring,
        # a LineString)
        assert not moved.buffer(-1e-4).intersects(obstacle)
        if kind == 0:
            # minimum translation: moving slightly less still overlaps
            less = affinity.translate(car, 0.9 * contact.depth * contact.normal_x,
                                      0.9 * contact.depth * contact.normal_y)
            assert less.intersection(obstacle).area > 0
        if kind == 1 and not car.contains(Point(row[0], row[1])):
            centre_gap = car.distance(Point(row[0], row[1]))
            assert contact.depth == pytest.approx(row[2] - centre_gap, abs=1e-9)
    assert hits > 30


def test_deepest_of_several_and_batch() -> None:
    world = World('w', 's', boxes=np.array([[1.0, 0.0, 0.0, 0.1, 1.0]]),
                  box_z=np.array([[0.0, 1.0]]), circles=np.array([[-0.35, 0.0, 0.2]]),
                  circle_z=np.array([[0.0, 1.0]]), box_names=('wall',), circle_names=('post',))
    arrays = WorldArrays.from_world(world)
    # footprint spans x in [x - 0.1, x + 0.5]: car 0 is free (5 cm from the post), car 1's rear is
    # 0.1 m from the post centre (depth 0.2 - 0.1), car 2's front enters the wall by 0.1 m
    kind, index, depth, normal = deepest_contacts(np.array([0.0, -0.15, 0.5]), np.zeros(3),
                                                  np.zeros(3), FOOT, arrays)
    assert kind.tolist() == [-1, 1, 0]
    assert index.tolist() == [-1, 0, 0]
    np.testing.assert_allclose(depth, [0.0, 0.1, 0.1], atol=1e-12)
    np.testing.assert_allclose(normal, [[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]], atol=1e-12)


def test_footprint_from_vehicle_params() -> None:
    p = load_vehicle_params()
    foot = footprint_from_params(p)
    g = p.geometry
    assert foot.center_x == pytest.approx(g.wheelbase / 2)
    assert 2 * foot.half_length >= g.chassis_length and 2 * foot.half_length >= g.wheelbase
    assert 2 * foot.half_width >= g.track_width + g.wheel_width - 1e-12


def test_response_names() -> None:
    assert check_response('bounce') == 'bounce'
    with pytest.raises(ConfigError, match="unknown collision response 'crash'"):
        check_response('crash')
