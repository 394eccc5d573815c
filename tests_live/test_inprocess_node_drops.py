"""rclpy nodes drop bad messages with a log line and keep running (NaN positions, mismatched joint
states, NaN odometry); the node classes in the test process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
import math
import time
from typing import Any

from nav_msgs.msg import Odometry
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState

NAMES = ['rear_left_wheel_joint', 'rear_right_wheel_joint']


@pytest.fixture
def ros() -> Iterator[None]:
    rclpy.init()
    yield
    rclpy.try_shutdown()


def spin_until(executor: SingleThreadedExecutor, done: Callable[[], bool],
               timeout: float = 3.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end and not done():
        executor.spin_once(timeout_sec=0.02)
    return done()


def test_wheel_odometry_drops_bad_joint_states_and_keeps_running(ros: None) -> None:
    from rc_sim_control.nodes.wheel_odometry import WheelOdometry

    odo = WheelOdometry()
    probe = Node('probe')
    ex = SingleThreadedExecutor()
    ex.add_node(odo)
    ex.add_node(probe)
    out: list[Any] = []
    probe.create_subscription(Odometry, 'wheel_odom', out.append, 10)
    pub = probe.create_publisher(JointState, 'joint_states', 10)

    def publish(names: list[str], positions: list[float]) -> None:
        msg = JointState()
        msg.header.stamp = probe.get_clock().now().to_msg()
        msg.name, msg.position = names, positions
        pub.publish(msg)

    for positions in ([math.nan, 0.0], [1.0], [math.inf, math.inf]):
        publish(NAMES, positions)
        spin_until(ex, lambda: False, timeout=0.1)
    assert odo._drops.total == 3 and not out  # dropped, nothing published
    angle = [0.0]

    def send() -> bool:
        angle[0] += 1.0
        publish(NAMES, [angle[0], angle[0]])
        return len(out) >= 2

    assert spin_until(ex, send)  # still running: valid messages integrate
    assert all(math.isfinite(o.pose.pose.position.x) for o in out)
    ex.shutdown()
    odo.destroy_node()
    probe.destroy_node()


def test_tracker_drops_nan_odometry(ros: None) -> None:
    from rc_sim_control.nodes.trajectory_tracker import TrajectoryTracker

    node = TrajectoryTracker()
    probe = Node('probe')
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    ex.add_node(probe)
    pub = probe.create_publisher(Odometry, 'odom', 10)
    bad = Odometry()
    bad.pose.pose.position.x = math.nan
    bad.pose.pose.orientation.w = 1.0

    def send() -> bool:
        pub.publish(bad)
        return node.drops.total > 0

    assert spin_until(ex, send)
    assert node.pose is None  # the NaN pose never reached the controller
    ex.shutdown()
    node.destroy_node()
    probe.destroy_node()
