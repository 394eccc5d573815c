"""Several cars in the Simulator: car-to-car contacts (time, response) and every lidar seeing the
other cars, against independent computations with shapely polygons of the footprints."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import LineString, Point, Polygon
from shapely.ops import unary_union

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.sim.loop_kernel import cast_scans
from rc_sim_engine.sim.simulator import SimConfig, Simulator
from rc_sim_engine.world.collision import footprint_from_params
from rc_sim_engine.world.sdf import World

P = load_vehicle_params()
FP = footprint_from_params(P)
EMPTY = World('empty', 'test')
R = P.effective_wheel_radius
LIDAR_TOL = 1e-9  # m: both are exact ray/segment intersections in float64


def polygon(x: float, y: float, yaw: float) -> Polygon:
    """Footprint of a car at base_link (x, y, yaw), built here from vehicle.yaml's footprint."""
    c, s = math.cos(yaw), math.sin(yaw)
    pts = []
    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
        px = FP.center_x + sx * FP.half_length
        py = sy * FP.half_width
        pts.append((x + c * px - s * py, y + s * px + c * py))
    return Polygon(pts)


def rolling(starts: list[tuple[float, float, float]], speeds: list[float],
            response: str = 'stop', restitution: float = 0.3) -> Simulator:
    """Cars at ``starts`` already rolling at ``speeds``, their wheel commands holding them."""
    sim = Simulator(P, EMPTY, SimConfig(lidar=False, collision_response=response,
                                        restitution=restitution),
                    n=len(starts), start=starts)
    arr = np.asarray(starts, dtype=float)
    sim.car.reset(arr[:, 0], arr[:, 1], arr[:, 2], np.asarray(speeds))
    sim.command(0.0, np.asarray(speeds) / R)
    return sim


def first_overlap_step(sim: Simulator, k_from: int, k_to: int) -> tuple[int, list[float]]:
    """Step the simulator one step at a time; first step whose footprints (shapely) overlap with
    positive area, judged from the poses the simulator reports, and the speeds just before."""
    dt = sim.config.dt
    speeds: list[float] = []
    for k in range(k_from, k_to):
        sim.step_to(k * dt)
        obs = sim.observe()
        polys = [polygon(obs.x[i], obs.y[i], obs.yaw[i]) for i in range(sim.n)]
        if polys[0].intersection(polys[1]).area > 0.0:
            return k, speeds
        speeds = obs.vx.tolist()
    raise AssertionError('no overlap')


def test_head_on_contact_time_matches_the_footprints_and_speeds() -> None:
    v = 1.0
    starts = [(0.0, 0.0, 0.0), (3.0, 0.2, math.pi)]
    gap = polygon(*starts[0]).distance(polygon(*starts[1]))  # shapely: free distance at t = 0
    t_analytic = gap / (2 * v)
    ref = rolling(starts, [v, v], response='ignore')  # same motion, nothing pushed
    k_ref, _ = first_overlap_step(ref, round(t_analytic / 1e-3) - 40, round(t_analytic / 1e-3)
                                  + 40)
    assert k_ref * 1e-3 == pytest.approx(t_analytic, abs=2e-3)  # speeds held within 1 %
    sim = rolling(starts, [v, v])
    sim.step_to(k_ref * 1e-3 + 0.3)
    events = sim.collisions
    assert [(e.car, e.obstacle, e.kind) for e in events] == [(0, 'car_1', 'car'),
                                                             (1, 'car_0', 'car')]
    assert {round(e.t / 1e-3) for e in events} == {k_ref}  # the first overlapping step
    assert events[0].normal_x == pytest.approx(-1.0) and events[1].normal_x == pytest.approx(1.0)
    assert events[0].speed == pytest.approx(v, rel=0.01)
    obs = sim.observe()  # stopped, and apart (pushed out by half the depth each)
    np.testing.assert_allclose(obs.vx, 0.0, atol=0.05)
    assert obs.in_contact.tolist() == [True, True]
    a, b = polygon(obs.x[0], obs.y[0], obs.yaw[0]), polygon(obs.x[1], obs.y[1], obs.yaw[1])
    assert a.intersection(b).area < 1e-4 * a.area


@pytest.mark.parametrize('e', [0.0, 0.5])
def test_bounce_exchanges_momentum_like_two_equal_point_masses(e: float) -> None:
    """Car 0 at v runs into car 1 at rest: after the impact v0 = v (1 - e) / 2, v1 = v (1 + e)
    / 2 (Newton's impact law, equal masses)."""
    v = 1.0
    sim = rolling([(0.0, 0.0, 0.0), (1.0, 0.0, 0.0)], [v, 0.0], response='bounce',
                  restitution=e)
    before = sim.observe().vx
    for k in range(1, 2000):  # one step at a time up to the impact (the check of step k)
        sim.step_to(k * 1e-3)
        if sim.collisions:
            break
        before = sim.observe().vx
    assert [ev.car for ev in sim.collisions] == [0, 1]
    vx = sim.observe().vx  # right after the response
    v_in = before[0] - before[1]  # closing speed just before the impact
    assert v_in == pytest.approx(v, rel=0.02)
    assert vx[0] == pytest.approx(before[1] + v_in * (1 - e) / 2, abs=1e-3)
    assert vx[1] == pytest.approx(before[1] + v_in * (1 + e) / 2, abs=1e-3)


def test_cars_far_apart_never_collide_and_one_car_is_unchanged() -> None:
    sim = rolling([(0.0, 0.0, 0.0), (0.0, 3.0, 0.0)], [1.0, 1.0])
    sim.step_to(1.0)
    assert sim.collisions == []
    one = rolling([(0.0, 0.0, 0.0)], [1.0])
    one.step_to(1.0)
    np.testing.assert_array_equal(one.car.state[0], sim.car.state[0])  # bitwise


def scan_reference(sensor: tuple[float, float, float], angles: np.ndarray,
                   others: list[tuple[float, float, float]]) -> np.ndarray:
    """Range of each beam to the union of the other cars' footprint polygons (shapely)."""
    ox, oy, heading = sensor
    shape = unary_union([polygon(*pose) for pose in others])
    out = np.full(len(angles), np.inf)
    for b, a in enumerate(angles):
        far = (ox + 20 * math.cos(heading + a), oy + 20 * math.sin(heading + a))
        hit = LineString([(ox, oy), far]).intersection(shape)
        if not hit.is_empty:
            out[b] = Point(ox, oy).distance(hit)
    return out


def test_every_lidar_sees_the_other_cars_at_the_shapely_range() -> None:
    poses = [(0.0, 0.0, 0.1), (2.5, 0.7, 0.6), (4.2, 1.3, -1.0), (-1.5, -2.0, 2.0)]
    sim = Simulator(P, EMPTY, SimConfig(), n=4, start=poses)
    sim.step_to(0.0)
    scan = sim.observe().scan
    assert scan is not None
    s = P.sensors
    for j, (x, y, yaw) in enumerate(poses):
        sensor = (x + math.cos(yaw) * s.lidar_mount_x, y + math.sin(yaw) * s.lidar_mount_x,
                  yaw + s.lidar_mount_yaw)
        ref = scan_reference(sensor, sim.scan_angles, [p for i, p in enumerate(poses) if i != j])
        ref[ref > s.lidar_range_max] = np.inf
        hit = np.isfinite(ref)
        assert hit.sum() > 20  # every car sees some other car
        assert np.array_equal(np.isfinite(scan[j]), hit)
        np.testing.assert_allclose(scan[j][hit], ref[hit], atol=LIDAR_TOL, rtol=0)


def test_overlay_equals_the_cars_cast_as_boxes() -> None:
    """The culled overlay (default) and the boxes cast with the walls (incidence path) agree, on
    a world with walls where some cars hide behind others and behind walls."""
    world = World('walls', 'test', boxes=np.array([[3.0, 0.0, 0.0, 0.05, 1.0],
                                                   [0.0, 4.0, 0.0, 5.0, 0.05]]),
                  box_z=np.array([[0.0, 0.3], [0.0, 0.3]]), box_names=('a', 'b'))
    rng = np.random.default_rng(3)
    poses = np.column_stack([rng.uniform(-4, 6, 6), rng.uniform(-3, 3, 6),
                             rng.uniform(-math.pi, math.pi, 6)])
    sim = Simulator(P, world, SimConfig(collision_rate=0.0), n=6, start=poses)
    rig = sim._lidar
    assert rig is not None
    scans = np.empty((2, 1, 6, rig.n_beams))
    incidence = np.empty((1, 6, rig.n_beams))
    for k, want in enumerate((False, True)):
        cast_scans(poses[None], rig.rows, rig.cos_beam, rig.sin_beam, rig.segments,
                   rig.n_segments, rig.circles, rig.n_circles, rig.foot, want, scans[k],
                   incidence)
    both = np.isfinite(scans[0])
    assert np.array_equal(both, np.isfinite(scans[1])) and both.sum() > 1000
    np.testing.assert_allclose(scans[0][both], scans[1][both], atol=1e-9, rtol=0)
