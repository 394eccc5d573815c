"""Several cars: car-to-car contacts, footprints against map walls and mutual lidar visibility,
against shapely polygons; the batched race step against Car and its serial/threaded variants."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from shapely import affinity
from shapely.geometry import LineString, Point, box

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.racing.race_core import RaceCore
from rc_sim_engine.racing.race_kernels import OBS_CAR_DEPTH, OBS_OTHER_CAR, OBS_WALL_DEPTH
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.world.collision import footprint_from_params
from rc_sim_engine.world.map_grid import MapGrid, grid_contacts
from rc_sim_engine.world.multicar import car_contacts, overlay_cars
from rc_sim_engine.world.track_map import OccupancyMap

P = load_vehicle_params()
F = footprint_from_params(P)
FP = np.array([F.center_x, F.half_length, F.half_width])


def polygon(x: float, y: float, yaw: float) -> shapely.Geometry:
    rect = box(F.center_x - F.half_length, -F.half_width, F.center_x + F.half_length,
               F.half_width)
    return affinity.translate(affinity.rotate(rect, yaw, origin=(0, 0), use_radians=True), x, y)


def test_car_contacts_match_shapely() -> None:
    rng = np.random.default_rng(0)
    for _ in range(60):
        n = 6
        x, y = rng.uniform(0, 1.5, n), rng.uniform(0, 1.5, n)
        yaw = rng.uniform(-math.pi, math.pi, n)
        depth, other, normal = car_contacts(x, y, yaw, np.tile(FP, (n, 1)))
        polys = [polygon(x[i], y[i], yaw[i]) for i in range(n)]
        for i in range(n):
            touching = [j for j in range(n) if j != i and polys[i].intersection(polys[j]).area
                        > 1e-9]
            assert (depth[i] > 0) == bool(touching)
            if touching:
                j = int(other[i])
                assert j in touching
                # moving car i by depth * normal separates it from car j (minimum translation)
                moved = affinity.translate(polys[i], normal[i, 0] * (depth[i] + 1e-7),
                                           normal[i, 1] * (depth[i] + 1e-7))
                assert moved.intersection(polys[j]).area < 1e-9


@pytest.mark.parametrize(('fov', 'wall'), [(4.7, math.inf), (4.7, 2.5), (2.0 * math.pi, math.inf),
                                         (2.0 * math.pi, 1.5)])
def test_overlay_sees_other_cars_like_shapely(fov: float, wall: float) -> None:
    """Random cars (some behind a 'wall' at a fixed range, hidden; some around the sensor with a
    360-degree scan, across the wrap of the beam angles; some close enough that the sensor is
    inside their bounding disc) against shapely."""
    rng = np.random.default_rng(1)
    samples = 541 if fov < 6.0 else 720
    angles = -0.5 * fov + fov / samples * np.arange(samples) if fov > 6.0 else \
        np.linspace(-0.5 * fov, 0.5 * fov, samples)
    reach = math.hypot(F.half_length, F.half_width)
    tested = 0
    for trial in range(60):
        n = 4
        x, y = rng.uniform(-3, 3, n), rng.uniform(-3, 3, n)
        yaw = rng.uniform(-math.pi, math.pi, n)
        sx, sy, sh = 0.0, 0.0, rng.uniform(-math.pi, math.pi)
        if trial % 3 == 0:  # car 0 so close that the sensor is inside its bounding disc
            bearing = rng.uniform(-math.pi, math.pi)
            cx = 0.9 * reach * math.cos(bearing)
            cy = 0.9 * reach * math.sin(bearing)
            x[0] = cx - F.center_x * math.cos(yaw[0])
            y[0] = cy - F.center_x * math.sin(yaw[0])
        polys = [polygon(x[i], y[i], yaw[i]) for i in range(n)]
        if any(p.contains(Point(sx, sy)) for p in polys):
            continue
        tested += 1
        ranges = overlay_cars(np.full(len(angles), wall), (sx, sy, sh), angles, x, y, yaw,
                              np.tile(FP, (n, 1)), range_max=20.0)
        union = shapely.union_all(polys)
        lines = np.array([LineString([(sx, sy), (sx + 20 * math.cos(sh + a),
                                                 sy + 20 * math.sin(sh + a))])
                          for a in angles], dtype=object)
        hits = shapely.intersection(lines, union.boundary)
        ref = np.where(shapely.is_empty(hits), np.inf, shapely.distance(Point(sx, sy), hits))
        np.testing.assert_allclose(ranges, np.minimum(ref, wall), atol=1e-9)
    assert tested >= 40


def test_grid_footprint_contacts_match_shapely() -> None:
    rng = np.random.default_rng(2)
    v = np.zeros((30, 30), dtype=np.int8)
    v[rng.random(v.shape) < 0.05] = 100
    occ = OccupancyMap(v, 0.1, (0.0, 0.0, 0.3))
    grid = MapGrid.from_map(occ, unknown='free')
    rows, cols = np.nonzero(v >= 100)
    squares = [box(c * 0.1, r * 0.1, (c + 1) * 0.1, (r + 1) * 0.1) for r, c in zip(rows, cols)]
    walls = affinity.rotate(shapely.union_all(squares), 0.3, origin=(0, 0), use_radians=True)
    n = 200
    x, y = rng.uniform(0.5, 2.0, n), rng.uniform(0.8, 2.5, n)
    yaw = rng.uniform(-math.pi, math.pi, n)
    out = grid_contacts(grid, x, y, yaw, np.tile(FP, (n, 1)))
    for i in range(n):
        overlap = polygon(x[i], y[i], yaw[i]).intersection(walls).area > 1e-10
        assert (out[i, 0] > 0) == overlap


@pytest.fixture(scope='module')
def track():  # type: ignore[no-untyped-def]
    from rc_sim_engine.world.track import load_track

    return load_track('chicane_track', lidar_mode='exact')


def test_race_step_physics_equals_car(track) -> None:  # type: ignore[no-untyped-def]
    core = RaceCore(track, P, n_worlds=3, dt=0.01, lidar=False)
    poses = np.tile(track.start_pose, (3, 1))
    core.reset_cars(np.arange(3), poses)
    car = Car(P, dt=0.01, n=3)
    car.reset(poses[:, 0], poses[:, 1], poses[:, 2])
    rng = np.random.default_rng(3)
    for _ in range(50):
        steer, speed = rng.uniform(-0.3, 0.3, 3), rng.uniform(0.5, 2.0, 3)
        core.step(np.stack([steer, speed], axis=1))
        car.step(steer, speed / P.geometry.wheel_radius)
    np.testing.assert_array_equal(core.states, car.state)


@pytest.mark.parametrize(('n_worlds', 'n_cars', 'threads'), [
    (2, 3, None),  # one car per claimed chunk
    (10, 4, None),  # 40 cars on 2 threads: chunks of 2
    (2, 3, 1),  # the core was built for numba's threads, the step runs on one: no wait forever
])
def test_serial_and_threaded_steps_identical(track, n_worlds: int, n_cars: int,
                                             threads: int | None) -> None:
    import numba

    n = n_worlds * n_cars
    rng = np.random.default_rng(5)
    actions = np.stack([rng.uniform(-0.3, 0.3, (20, n)), rng.uniform(0.5, 2.5, (20, n))], axis=2)
    outs = []
    before = numba.get_num_threads()
    for parallel in (False, True):
        core = RaceCore(track, P, n_worlds=n_worlds, n_cars=n_cars, parallel=parallel)
        core.reset_cars(np.arange(n), np.tile(track.grid_poses(n_cars), (n_worlds, 1)))
        try:
            if threads is not None:
                numba.set_num_threads(threads)
            for a in actions:
                core.step(a)
        finally:
            numba.set_num_threads(before)
        outs.append((core.states.copy(), core.scans.copy(), core.obs.copy(), core.rect.copy()))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_mutual_visibility_and_contact_in_race_step(track) -> None:  # type: ignore[no-untyped-def]
    core = RaceCore(track, P, n_worlds=2, n_cars=2)
    x0, y0, yaw0 = track.start_pose
    c, s = math.cos(yaw0), math.sin(yaw0)
    ahead = (x0 + 2.0 * c, y0 + 2.0 * s, yaw0)
    # world 0: car 1 two metres ahead of car 0; world 1: the same two cars overlapping
    core.reset_cars(np.arange(4), np.array([track.start_pose, ahead, track.start_pose,
                                            (x0 + 0.1 * c, y0 + 0.1 * s, yaw0)]))
    core.observe()
    mid = core.scans.shape[1] // 2  # the beam straight ahead
    lidar_x = P.sensors.lidar_mount_x
    rear_of_car_1 = 2.0 + F.center_x - F.half_length
    assert core.scans[0, mid] == pytest.approx(rear_of_car_1 - lidar_x, abs=1e-6)
    # car 1 looks away from car 0; car 0 is not in its scan (the walls are farther or absent)
    assert core.obs[0, OBS_CAR_DEPTH] == 0.0 and core.obs[2, OBS_CAR_DEPTH] > 0.0
    assert int(core.obs[2, OBS_OTHER_CAR]) == 3 and int(core.obs[3, OBS_OTHER_CAR]) == 2
    assert np.all(core.obs[:, OBS_WALL_DEPTH] == 0.0)
    # worlds are independent: without car 1 the beam ahead of car 0 is longer
    alone = RaceCore(track, P)
    alone.reset_cars([0], [track.start_pose])
    alone.observe()
    assert alone.scans[0, mid] > core.scans[0, mid] + 0.5
