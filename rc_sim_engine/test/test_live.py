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
