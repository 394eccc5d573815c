"""Simulation loop: rates, determinism, sensors against geometry, collisions, controller API."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_control.commands import CommandSequence
from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.sim.simulator import SimConfig, Simulator
from rc_sim_engine.world.sdf import World

P = load_vehicle_params()


def wall_world(x: float = 3.0) -> World:
    """One wall across the x axis at x (2 cm thick, 4 m wide, 30 cm high)."""
    return World('wall', 'test', boxes=np.array([[x, 0.0, 0.0, 0.01, 2.0]]),
                 box_z=np.array([[0.0, 0.3]]), box_names=('wall',))


def straight(v: float, duration: float) -> CommandSequence:
    return CommandSequence(np.array([0.0, duration]), np.array([v, 0.0]), np.zeros(2),
                           'steering_angle', 'straight')


def test_stream_rates_and_stamps() -> None:
    cfg = SimConfig(odom_rate=50.0, joint_state_rate=25.0, clock_rate=100.0)
    sim = Simulator(P, World('empty', 'test'), cfg)
    res = sim.play(straight(0.5, 2.0), duration=2.0)
    s = res.streams
    lidar_rate, imu_rate = P.sensors.lidar_update_rate, P.sensors.imu_update_rate
    assert len(s['odom']['t_ns']) == 2 * 50 + 1
    assert len(s['joints']['t_ns']) == 2 * 25 + 1
    assert len(s['clock']['t_ns']) == 2 * 100 + 1
    assert len(s['imu']['t_ns']) == round(2 * imu_rate) + 1
    assert len(s['scan']['t_ns']) == round(2 * lidar_rate) + 1
    np.testing.assert_array_equal(np.diff(s['odom']['t_ns']), 20_000_000)
    assert s['scan']['ranges'].shape == (len(s['scan']['t_ns']), 1, P.sensors.lidar_samples)
    assert np.all(np.isinf(s['scan']['ranges']))  # empty world: no returns (REP 117 +inf)
    assert res.sim_time == pytest.approx(2.0)


def test_same_seed_same_run_other_seed_differs() -> None:
    from rc_sim_sensors.lidar_config import LidarErrorConfig

    errors = LidarErrorConfig.from_preset('harsh')
    seq = CommandSequence(np.array([0.0, 0.5, 1.5]), np.array([1.0, 1.0, 0.0]),
                          np.array([0.0, 0.2, 0.0]), 'steering_angle')

    def run(seed: int) -> dict:
        sim = Simulator(P, wall_world(4.0), SimConfig(lidar_errors=errors, seed=seed))
        return sim.play(seq).streams

    a, b, c = run(3), run(3), run(4)
    sim = Simulator(P, wall_world(4.0), SimConfig(lidar_errors=errors, seed=3))
    sim.play(seq)
    sim.reset()
    again = sim.play(seq).streams  # a reset replays the same random sequence
    np.testing.assert_array_equal(again['scan']['ranges'], a['scan']['ranges'])
    np.testing.assert_array_equal(a['scan']['ranges'], b['scan']['ranges'])
    np.testing.assert_array_equal(a['odom']['x'], b['odom']['x'])
    assert 'raw' in a['scan']
    np.testing.assert_array_equal(a['scan']['raw'], c['scan']['raw'])  # ideal part is seed-free
    assert not np.array_equal(a['scan']['ranges'], c['scan']['ranges'])


def test_lidar_range_to_a_wall_ahead() -> None:
    wall_x, half = 3.0, 0.01
    sim = Simulator(P, wall_world(wall_x), SimConfig())
    sim.step_to(0.0)
    ranges = sim.observe().scan
    assert ranges is not None
    mid = P.sensors.lidar_samples // 2
    assert sim.scan_angles[mid] == pytest.approx(0.0, abs=1e-12)
    expected = wall_x - half - P.sensors.lidar_mount_x
    assert ranges[0, mid] == pytest.approx(expected, abs=1e-6)
    # a beam at angle a hits the wall plane at expected / cos(a)
    k = mid + 100
    a = sim.scan_angles[k]
    assert ranges[0, k] == pytest.approx(expected / math.cos(a), abs=1e-6)


def test_imu_on_a_steady_circle_matches_circular_motion() -> None:
    """Kinematic bicycle on a circle of radius R about (0, R) in base_link: every body point p has
    acceleration -w^2 (p - c); the IMU at (x_i, 0) measures (-w^2 x_i, w^2 R, g)."""
    delta, v = 0.2, 1.0
    seq = CommandSequence(np.array([0.0, 6.0]), np.array([v, v]), np.array([delta, delta]),
                          'steering_angle')
    sim = Simulator(P, World('empty', 'test'), SimConfig(model='kinematic', lidar=False))
    res = sim.play(seq, duration=6.0)
    imu = res.streams['imu']
    last = -1
    w = imu['yaw_rate'][last, 0]
    R = P.geometry.wheelbase / math.tan(delta)
    assert w == pytest.approx(v / R, rel=2e-3)
    assert imu['fy'][last, 0] == pytest.approx(w * w * R, rel=5e-3)
    assert imu['fx'][last, 0] == pytest.approx(-w * w * P.sensors.imu_mount_x, abs=2e-3)
    assert imu['fz'][last, 0] == pytest.approx(GRAVITY_MPS2)


@pytest.mark.parametrize('response', ['stop', 'bounce', 'ignore'])
def test_collision_with_a_wall(response: str) -> None:
    wall_x = 2.0
    sim = Simulator(P, wall_world(wall_x), SimConfig(collision_response=response, lidar=False))
    res = sim.play(straight(1.5, 3.0))
    events = res.collisions
    front = P.geometry.wheelbase / 2 + max(P.geometry.chassis_length,
                                           P.geometry.wheelbase + 2 * P.geometry.wheel_radius) / 2
    assert events, 'no collision reported'
    first = events[0]
    assert first.obstacle == 'wall' and first.car == 0
    assert first.x + front == pytest.approx(wall_x - 0.01, abs=0.02)  # touching the wall face
    x = res.streams['odom']['x'][:, 0]
    if response == 'ignore':
        assert len(events) == 1
        assert x[-1] > wall_x + 0.5  # drove through
    else:
        assert x.max() + front < wall_x - 0.01 + 0.02  # never deep inside the wall
        if response == 'stop':
            assert len(events) == 1  # pressing against the wall is one contact, not many
    if response == 'bounce':
        assert np.min(res.streams['odom']['vx'][:, 0]) < -0.1  # bounced back


def test_controller_callback_sees_observations_at_its_rate() -> None:
    seen: list[float] = []

    def controller(t: float, obs):  # hold heading 0 with a P law on yaw
        seen.append(t)
        return 1.0, -2.0 * float(obs.yaw[0])

    sim = Simulator(P, World('empty', 'test'), SimConfig(command_rate=20.0, lidar=False),
                    start=(0.0, 0.0, 0.3))
    res = sim.run(3.0, controller)
    assert seen == pytest.approx(np.arange(0, 3.0 + 1e-9, 0.05).tolist())
    assert abs(res.streams['odom']['yaw'][-1, 0]) < 0.05
    cmd = res.streams['commands']
    assert len(cmd['t_ns']) == len(seen)
    assert np.all(cmd['accepted'])


def test_nan_commands_are_rejected_and_held() -> None:
    sim = Simulator(P, World('empty', 'test'), SimConfig(lidar=False))
    sim.command_twist(1.0, 0.0)
    sim.step_to(0.5)
    sim.command_twist(float('nan'), 0.0)
    sim.step_to(1.0)
    cmd = sim.result().streams['commands']
    assert cmd['accepted'][:, 0].tolist() == [True, False]
    assert cmd['wheel_speed'][1, 0] == cmd['wheel_speed'][0, 0]
    assert sim.observe().vx[0] > 0.5


def test_two_cars_see_each_other() -> None:
    sim = Simulator(P, World('empty', 'test'), SimConfig(), n=2,
                    start=[(0.0, 0.0, 0.0), (3.0, 0.0, math.pi)])
    sim.step_to(0.0)
    scan = sim.observe().scan
    assert scan is not None and scan.shape[0] == 2
    mid = P.sensors.lidar_samples // 2
    g = P.geometry
    half_len = max(g.chassis_length, g.wheelbase + 2 * g.wheel_radius) / 2
    other_rear_face = 3.0 - (g.wheelbase / 2 + half_len)  # car 1 faces us: its front is nearest
    assert scan[0, mid] == pytest.approx(other_rear_face - P.sensors.lidar_mount_x, abs=1e-6)
    assert scan[1, mid] == pytest.approx(scan[0, mid], abs=1e-6)


def test_bad_config_is_one_line_error() -> None:
    with pytest.raises(ConfigError, match='collision response'):
        SimConfig(collision_response='explode')
    with pytest.raises(ConfigError, match='odom_rate'):
        SimConfig(odom_rate=0.0)
    with pytest.raises(ConfigError, match='start pose'):
        Simulator(P, World('e', 't'), SimConfig(lidar=False), start=(0.0, float('nan'), 0.0))
    with pytest.raises(ConfigError, match='duration'):
        Simulator(P, World('e', 't'), SimConfig(lidar=False)).run(-1.0)


def test_incidence_reaches_the_error_model() -> None:
    """Incidence dropout (rc_sim_sensors) drops grazing beams only: the engine feeds incidences."""
    from rc_sim_sensors.lidar_config import LidarErrorConfig

    errors = LidarErrorConfig().with_values(incidence_dropout_probability=1.0,
                                            incidence_dropout_start=1.2)
    world = World('wall', 'test', boxes=np.array([[0.9, 0.0, 0.0, 0.05, 20.0]]),
                  box_z=np.array([[0.0, 0.3]]), box_names=('wall',))
    sim = Simulator(P, world, SimConfig(lidar_errors=errors, seed=1))
    res = sim.play(straight(0.0, 1.0))
    raw, ranges = res.streams['scan']['raw'][:, 0], res.streams['scan']['ranges'][:, 0]
    angles = np.abs(sim.scan_angles)
    hit = np.isfinite(raw[0])
    steep = hit & (angles < 1.1)      # incidence = |angle| < alpha0: never dropped
    grazing = hit & (angles > 1.4)    # p >= (1.4 - 1.2) / (pi/2 - 1.2) = 0.54
    assert steep.sum() > 100 and grazing.sum() > 10
    assert np.all(np.isfinite(ranges[:, steep]))
    assert np.mean(np.isinf(ranges[:, grazing])) > 0.4


def test_cars_with_different_wheelbases_get_their_own_mapping() -> None:
    """The same curvature command maps to delta = atan(L kappa) for each car's own L."""
    short = P.with_values(wheelbase=0.25, cg_to_front_axle=0.12)
    kappa = 0.8
    seq = CommandSequence(np.array([0.0, 2.0]), np.array([1.0, 1.0]), np.array([kappa, kappa]),
                          'curvature')
    sim = Simulator([P, short], World('e', 't'), SimConfig(lidar=False),
                    start=[(0.0, 0.0, 0.0), (0.0, 5.0, 0.0)])
    first = sim.play(seq, duration=1.0)
    cmd = first.streams['commands']
    np.testing.assert_allclose(cmd['steering_angle'][-1],
                               [math.atan(P.geometry.wheelbase * kappa), math.atan(0.25 * kappa)])
    second = sim.play(seq, duration=1.0)  # commands of both plays are kept
    assert len(second.streams['commands']['t_ns']) == 2 * len(cmd['t_ns']) - 1


def test_realtime_factor_paces_against_the_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a fake clock that only sleeping advances, wall time ends at sim time / factor."""
    import rc_sim_engine.sim.pacing as simulator

    class FakeTime:
        now = 100.0

        def perf_counter(self) -> float:
            return self.now

        def sleep(self, seconds: float) -> None:
            assert seconds > 0
            self.now += seconds

    fake = FakeTime()
    monkeypatch.setattr(simulator, 'time', fake)
    sim = Simulator(P, World('e', 't'), SimConfig(realtime_factor=4.0, lidar=False))
    sim.play(straight(1.0, 2.0), duration=2.0)
    assert fake.now - 100.0 == pytest.approx(2.0 / 4.0, abs=2e-3)
