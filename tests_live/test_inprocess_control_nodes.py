"""rclpy nodes of the command chain in the test process: parameters, live validation, message
flow, bad messages dropped with a log line while the node keeps running (NaN positions,
mismatched joint states, NaN odometry); the node classes directly (the processes as users start
them: test_control_*.py, test_sim_node.py)."""

from __future__ import annotations

import math
from typing import Any

from geometry_msgs.msg import Twist
from live_harness import spin_until
from nav_msgs.msg import Odometry
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64

from rc_sim_control.ackermann import ackermann_split
from rc_sim_description.params import load_vehicle_params

PARAMS = load_vehicle_params()
NAMES = ['rear_left_wheel_joint', 'rear_right_wheel_joint']




def collector(node: Node, topic: str, msg_type: Any = Float64) -> list[Any]:
    got: list[Any] = []
    node.create_subscription(msg_type, topic, got.append, 10)
    return got


def test_mapper_maps_cmd_vel_and_rejects_nan(rclpy_init: None) -> None:
    from rc_sim_control.nodes.turning_command_mapper import TurningCommandMapper

    mapper = TurningCommandMapper()
    probe = Node('probe')
    ex = SingleThreadedExecutor()
    ex.add_node(mapper)
    ex.add_node(probe)
    steer = collector(probe, 'steering_angle')
    speed = collector(probe, 'rear_wheel_speed')
    pub = probe.create_publisher(Twist, 'cmd_vel', 10)
    assert mapper.get_parameter('wheelbase').value == PARAMS.geometry.wheelbase
    msg = Twist()
    msg.linear.x, msg.angular.z = 1.0, 0.5

    def send() -> bool:
        pub.publish(msg)
        return bool(speed)

    assert spin_until(ex, send)
    assert speed[-1].data == pytest.approx(1.0 / PARAMS.geometry.wheel_radius)
    assert spin_until(ex, lambda: abs(steer[-1].data - math.atan(0.5 * PARAMS.geometry.wheelbase))
                      < 1e-9)
    n = len(speed)
    bad = Twist()
    bad.linear.x = math.nan
    pub.publish(bad)
    for _ in range(10):
        ex.spin_once(timeout_sec=0.01)
    assert all(math.isfinite(m.data) for m in speed[n:])
    ex.shutdown()
    mapper.destroy_node()
    probe.destroy_node()


def test_mapper_rejects_bad_parameters_with_a_reason(rclpy_init: None) -> None:
    from rc_sim_control.nodes.turning_command_mapper import TurningCommandMapper

    node = TurningCommandMapper()
    result = node.set_parameters([Parameter('mode', Parameter.Type.STRING, 'fast')])[0]
    assert not result.successful and 'mode' in result.reason
    result = node.set_parameters([Parameter('wheelbase', Parameter.Type.DOUBLE, -1.0)])[0]
    assert not result.successful
    ok = node.set_parameters([Parameter('mode', Parameter.Type.STRING, 'steering_angle')])[0]
    assert ok.successful and node.get_parameter('mode').value == 'steering_angle'
    node.destroy_node()


def test_bridge_publishes_the_ackermann_split(rclpy_init: None) -> None:
    from rc_sim_control.nodes.rear_wheel_speed_bridge import RearWheelSpeedBridge

    bridge = RearWheelSpeedBridge()
    probe = Node('probe')
    ex = SingleThreadedExecutor()
    ex.add_node(bridge)
    ex.add_node(probe)
    left = collector(probe, 'joint_commands/front_left_steering')
    rear = collector(probe, 'joint_commands/rear_right_wheel')
    p_steer = probe.create_publisher(Float64, 'steering_angle', 10)
    p_speed = probe.create_publisher(Float64, 'rear_wheel_speed', 10)

    def send() -> bool:
        p_steer.publish(Float64(data=0.2))
        p_speed.publish(Float64(data=15.0))
        return bool(rear) and rear[-1].data == 15.0

    assert spin_until(ex, send)
    expected, _ = ackermann_split(0.2, PARAMS.geometry.wheelbase, PARAMS.geometry.track_width)
    assert left[-1].data == pytest.approx(float(expected))
    ex.shutdown()
    bridge.destroy_node()
    probe.destroy_node()


def test_wheel_odometry_integrates_joint_states(rclpy_init: None) -> None:
    from rc_sim_control.nodes.wheel_odometry import WheelOdometry

    odo = WheelOdometry()
    probe = Node('probe')
    ex = SingleThreadedExecutor()
    ex.add_node(odo)
    ex.add_node(probe)
    out = collector(probe, 'wheel_odom', Odometry)
    pub = probe.create_publisher(JointState, 'joint_states', 10)
    angle = [0.0]

    def send() -> bool:
        msg = JointState()
        msg.header.stamp = probe.get_clock().now().to_msg()
        msg.name = ['rear_left_wheel_joint', 'rear_right_wheel_joint']
        angle[0] += 1.0
        msg.position = [angle[0], angle[0]]
        pub.publish(msg)
        return len(out) >= 2

    assert spin_until(ex, send)
    assert out[-1].header.frame_id == 'odom' and out[-1].child_frame_id == 'base_link'
    assert out[-1].pose.pose.position.x > 0.0
    assert out[-1].pose.covariance[0] > 0.0
    ex.shutdown()
    odo.destroy_node()
    probe.destroy_node()


def test_control_launch_description_declares_its_arguments() -> None:
    import importlib.util
    from pathlib import Path

    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    path = Path(__file__).resolve().parents[1] / 'rc_sim_control' / 'launch' / 'control.launch.py'
    spec = importlib.util.spec_from_file_location('control_launch', path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ld = module.generate_launch_description()
    declared = {e.name for e in ld.entities if isinstance(e, DeclareLaunchArgument)}
    assert {'use_sim_time', 'params_file', 'mode'} <= declared
    assert any(isinstance(e, OpaqueFunction) for e in ld.entities)


# ------------------------------------------------------------------ bad messages dropped
def test_wheel_odometry_drops_bad_joint_states_and_keeps_running(rclpy_init: None) -> None:
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


def test_tracker_drops_nan_odometry(rclpy_init: None) -> None:
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
