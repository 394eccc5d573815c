"""ROS-free core of sim_node: parameter checks, simulator set-up, pacing; the node with rclpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.errors import ConfigError
from rc_sim_engine.live import NODE_PARAMETERS, LivePacer, build_simulator, node_parameter_problem


def defaults() -> dict:
    return {p.name: p.default for p in NODE_PARAMETERS}


def test_parameter_checks() -> None:
    for p in NODE_PARAMETERS:
        assert node_parameter_problem(p.name, p.default) is None, p.name
    assert 'realtime_factor' in node_parameter_problem('realtime_factor', 0.0)
    assert 'finite' in node_parameter_problem('x', math.nan)
    assert 'stop' in node_parameter_problem('collision_response', 'crash')
    assert 'yaw_rate' in node_parameter_problem('mapper_mode', 'speed')
    assert 'true or false' in node_parameter_problem('use_cmd_vel', 1)
    assert node_parameter_problem('use_sim_time', True) is None


def test_build_simulator_and_live_snapshot() -> None:
    values = {**defaults(), 'x': -0.5, 'y': -1.875, 'lidar_errors': 'hokuyo_ust10lx'}
    sim = build_simulator(values)
    assert sim.world.name == 'basic_track' and not sim.config.record
    sim.command(0.0, 10.0)
    sim.step_to(0.5)
    snap = sim.snapshot()
    assert snap['t_ns'] == 500_000_000
    assert snap['x'][0] > -0.5 and snap['position'].shape == (1, 6)
    assert sim.scan_count == 21 and sim.last_scan_sample is not None
    assert 'raw' in sim.last_scan_sample
    assert sim.result().streams['odom']['t_ns'].size == 0  # nothing recorded in live mode
    with pytest.raises(ConfigError, match='unknown world'):
        build_simulator({**defaults(), 'world': 'nowhere'})
    with pytest.raises(ConfigError, match='sim_node parameter seed'):
        build_simulator({**defaults(), 'seed': -3})


def test_pacer_follows_wall_clock_and_never_spirals() -> None:
    pacer = LivePacer(2.0, now=10.0)
    assert pacer.target(10.1, 0.0) == pytest.approx(0.2)
    assert pacer.target(20.0, 0.2) == pytest.approx(0.45)  # lagging: at most max_step ahead
    assert pacer.target(20.1, 0.45) == pytest.approx(0.65)
    pacer.set_realtime_factor(0.5, now=30.0, sim_time=1.0)
    assert pacer.target(32.0, 1.0) == pytest.approx(1.25)  # capped at max_step
    assert np.isfinite(pacer.target(32.1, 1.25))


def test_sim_node_publishes() -> None:
    rclpy = pytest.importorskip('rclpy')
    from rc_sim_engine.nodes.sim_node import SimNode

    rclpy.init()
    try:
        node = SimNode()
        received = []
        from nav_msgs.msg import Odometry

        node.create_subscription(Odometry, 'odom', received.append, 10)
        for _ in range(50):
            rclpy.spin_once(node, timeout_sec=0.05)
        assert received and received[-1].child_frame_id == 'base_link'
        node.destroy_node()
    finally:
        rclpy.try_shutdown()


def test_several_cars_live() -> None:
    """num_cars: car 0 at (x, y, yaw), the others lined up behind, namespaces car_<i>, and a
    command for one car leaves the others' commands alone."""
    from rc_sim_engine.live import car_namespaces, car_vector

    values = {**defaults(), 'world': 'flat_track', 'num_cars': 3, 'yaw': 0.3}
    sim = build_simulator(values)
    assert sim.n == 3
    obs = sim.observe()
    assert (obs.x[0], obs.y[0]) == (0.0, 0.0) and np.all(obs.yaw == 0.3)
    behind = obs.x * math.cos(0.3) + obs.y * math.sin(0.3)
    assert behind[0] > behind[1] > behind[2]
    assert car_namespaces(1) == [''] and car_namespaces(3) == ['car_0', 'car_1', 'car_2']
    sim.command(car_vector(3, 1, 0.1), car_vector(3, 1, 20.0))
    sim.step_to(0.5)
    snap = sim.snapshot()
    assert snap['vx'][1] > 0.3 and snap['vx'][0] == 0.0 and snap['vx'][2] == 0.0
    assert snap['position'].shape == (3, 6) and sim.last_scan_sample['ranges'].shape[0] == 3
    with pytest.raises(ConfigError, match='num_cars'):
        build_simulator({**values, 'num_cars': 0})
    with pytest.raises(ConfigError, match='touches'):  # the grid behind the spawn hits a wall
        build_simulator({**defaults(), 'x': -0.5, 'y': -1.875, 'num_cars': 12})


def test_sim_node_publishes_every_car() -> None:
    rclpy = pytest.importorskip('rclpy')
    from nav_msgs.msg import Odometry
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    from rc_sim_engine.nodes.sim_node import SimNode

    rclpy.init()
    try:
        node = SimNode(parameter_overrides=[Parameter('num_cars', value=2),
                                            Parameter('world', value='flat_track')])
        probe = Node('probe')
        received: dict[str, list] = {'car_0': [], 'car_1': []}
        for ns, box in received.items():
            probe.create_subscription(Odometry, f'/{ns}/odom', box.append, 10)
        for _ in range(50):
            rclpy.spin_once(node, timeout_sec=0.02)
            rclpy.spin_once(probe, timeout_sec=0.02)
        assert received['car_0'] and received['car_1']
        assert received['car_1'][-1].child_frame_id == 'car_1/base_link'
        node.destroy_node()
        probe.destroy_node()
    finally:
        rclpy.try_shutdown()
