"""wheel_odometry: /joint_states -> /wheel_odom (nav_msgs/Odometry), optional TF odom -> base_link.

Thin shell over :class:`rc_sim_control.odometry.JointStateOdometry`: rear wheel encoder angles
(``model`` differential) or rear wheels + steering hinges (``model`` bicycle),
integrated exactly along arcs, with the covariance growth documented in
:mod:`rc_sim_control.odometry`. Publishes on ``odom_topic`` (default ``wheel_odom``: the ground
truth owns ``/odom``); ``publish_tf`` (default false: the ground truth owns odom -> base_link)
broadcasts the transform on ``/tf``. Stamps come from the joint_states header (sim time).
Messages with names and positions of different lengths, non-finite positions or encoder jumps no
wheel can make are dropped with a throttled warning (:mod:`rc_sim_control.node_checks`); the next
message restarts the encoder reference, the pose is kept.
"""

from __future__ import annotations

from typing import Any

from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
import numpy as np
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from rc_sim_control.node_checks import DropCounter, EncoderGuard, joint_state_problem
from rc_sim_control.node_params import odometry_config, odometry_specs
from rc_sim_control.nodes._common import setup_parameters, vehicle_params
from rc_sim_control.odometry import (
    JointStateOdometry,
    OdometryJoints,
    OdometryState,
    pose_covariance_6x6,
    yaw_to_quaternion,
)
from rc_sim_description.nodes.spin import run_node

TF_QOS_DEPTH = 100  # as tf2_ros.TransformBroadcaster


class WheelOdometry(Node):
    """joint_states -> wheel odometry (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__('wheel_odometry')
        vehicle = vehicle_params(self)
        self._specs = odometry_specs(vehicle)
        self._odo: JointStateOdometry | None = None
        self._values: dict[str, Any] = {}
        self._drops = DropCounter()
        self._encoders = EncoderGuard(vehicle.drive.max_wheel_speed)
        values = setup_parameters(self, self._specs, odometry_config, self._apply)
        self._pub = self.create_publisher(Odometry, values['odom_topic'], 10)
        self._tf = self.create_publisher(TFMessage, '/tf', TF_QOS_DEPTH)
        # best effort matches both reliable (ros_gz_bridge) and best-effort publishers
        self.create_subscription(JointState, 'joint_states', self._on_joints,
                                 qos_profile_sensor_data)

    def _apply(self, values: dict[str, Any]) -> None:
        joints = OdometryJoints(values['rear_left_joint'], values['rear_right_joint'],
                                values['front_left_steering_joint'],
                                values['front_right_steering_joint'])
        old = self._values
        geometry_keys = ('model', 'wheel_radius', 'track_width', 'wheelbase', 'distance_noise',
                         'steering_noise', 'rear_left_joint', 'rear_right_joint',
                         'front_left_steering_joint', 'front_right_steering_joint')
        if self._odo is None or any(old.get(k) != values[k] for k in geometry_keys):
            previous = self._odo.odometry if self._odo else None
            self._odo = JointStateOdometry(odometry_config(values), values['model'], joints)
            if previous is not None:  # keep the pose; restart the encoder reference
                self._odo.odometry.reset(previous.x, previous.y, previous.yaw)
                self._odo.odometry.covariance = previous.covariance.copy()
        self._values = dict(values)

    def _on_joints(self, msg: JointState) -> None:
        assert self._odo is not None
        stamp = msg.header.stamp
        t = stamp.sec + stamp.nanosec * 1e-9
        if t == 0.0:
            t = self.get_clock().now().nanoseconds * 1e-9
            stamp = self.get_clock().now().to_msg()
        names, positions = list(msg.name), list(msg.position)
        needed = self._odo.needed()
        reason = joint_state_problem(names, positions, needed)
        if reason is None and all(n in names for n in needed[:2]):
            reason = self._encoders.check(t, [positions[names.index(n)] for n in needed[:2]])
        if reason:
            self.get_logger().warning(self._drops.drop('joint_states', reason),
                                      throttle_duration_sec=1.0)
            self._restart_reference()
            return
        missing = self._odo.missing_count
        state = self._odo.update(t, names, positions)
        if self._odo.missing_count > missing:
            self.get_logger().warning(
                f'joint_states lacks positions of {", ".join(self._odo.needed())}',
                throttle_duration_sec=5.0)
        if state is not None:
            self._publish(state, stamp)

    def _restart_reference(self) -> None:
        """Next message is a new encoder reference; pose and covariance are kept."""
        assert self._odo is not None
        odo = self._odo.odometry
        x, y, yaw, cov = odo.x, odo.y, odo.yaw, odo.covariance.copy()
        odo.reset(x, y, yaw)
        odo.covariance = cov

    def _publish(self, s: OdometryState, stamp: Any) -> None:
        v = self._values
        qx, qy, qz, qw = yaw_to_quaternion(s.yaw)
        msg = Odometry()
        msg.header.stamp = stamp
        msg.header.frame_id = v['odom_frame']
        msg.child_frame_id = v['base_frame']
        msg.pose.pose.position.x = float(s.x)
        msg.pose.pose.position.y = float(s.y)
        msg.pose.pose.orientation.x, msg.pose.pose.orientation.y = qx, qy
        msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = qz, qw
        msg.pose.covariance = pose_covariance_6x6(s.covariance)
        msg.twist.twist.linear.x = float(s.linear_velocity)
        msg.twist.twist.angular.z = float(s.yaw_rate)
        twist3 = np.zeros((3, 3))
        twist3[np.ix_([0, 2], [0, 2])] = s.twist_covariance
        msg.twist.covariance = pose_covariance_6x6(twist3)
        self._pub.publish(msg)
        if v['publish_tf']:
            tf = TransformStamped()
            tf.header = msg.header
            tf.child_frame_id = msg.child_frame_id
            tf.transform.translation.x = float(s.x)
            tf.transform.translation.y = float(s.y)
            tf.transform.rotation = msg.pose.pose.orientation
            self._tf.publish(TFMessage(transforms=[tf]))


def main(args: list[str] | None = None) -> int:
    """Entry point (ros2 run rc_sim_control wheel_odometry)."""
    return run_node(WheelOdometry, args)


if __name__ == '__main__':
    raise SystemExit(main())
