"""``trajectory_tracker``: ``/odom`` -> ``/cmd_vel`` along a reference trajectory.

Thin rclpy shell over :class:`rc_sim_control.tracking.TrackerSession` (all logic and validation is
ROS-free there). Parameters: the trajectory (``trajectory_type`` and its shape parameters), the
controller (``fl`` | ``kanayama`` | ``pure_pursuit``) and its gains, ``cmd_vel_mode`` (the
turning_command_mapper mode, default ``yaw_rate``), ``control_rate`` [Hz], ``params_file`` (vehicle
override YAML) and the ``active`` switch: setting it true starts the trajectory at the current
odometry pose, false stops the car. Gains change live (validated); shape parameters only while
inactive. Publishes ``/cmd_vel``, ``/reference_path`` (nav_msgs/Path, every pose stamped with its
reference time, latched) and ``/tracking_error`` (geometry_msgs/Vector3Stamped: x, y = the
centre-of-mass error in odom [m], z = its norm).
"""

from __future__ import annotations

import math

from geometry_msgs.msg import PoseStamped, Twist, Vector3Stamped
from nav_msgs.msg import Odometry, Path
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.time import Time

from rc_sim_control.ackermann import MAPPER_MODES
from rc_sim_control.node_checks import DropCounter, odometry_problem
from rc_sim_control.tracking import (
    TRACKER_DEFAULTS,
    MeasuredPose,
    TrackerSession,
    twist_from_command,
)
from rc_sim_control.trajectories import canonical_trajectory
from rc_sim_description.errors import ConfigError
from rc_sim_description.frames import quaternion_to_yaw
from rc_sim_description.nodes.parameters import declare_typed
from rc_sim_description.nodes.spin import run_node
from rc_sim_description.params import load_vehicle_params

DESCRIPTIONS = {
    'trajectory_type': 'line | parabola | circle | lemniscate | cycloid | waypoints',
    'a_coeff': 'line: x = a t [m/s]', 'b_coeff': 'line: y = b t [m/s]',
    'focal_length': 'parabola: x = 2 a t, y = a t^2 [m]',
    'radius': 'circle radius [m]', 'amplitude': 'lemniscate (figure eight) amplitude a [m]',
    'angular_speed': 'circle / lemniscate angular speed [rad/s]',
    'cycloid_radius': 'rolling circle radius r [m]',
    'cycloid_distance': 'point distance d < r [m]',
    'cycloid_angular_speed': 'cycloid rolling rate [rad/s]',
    'waypoints_file': 'CSV with columns t,x,y or x,y', 'waypoints_speed': 'speed along x,y [m/s]',
    'waypoints_closed': 'x,y waypoints form a loop', 'duration': 'run length [s]; 0 = one period',
    'controller': 'fl | kanayama | pure_pursuit',
}


def _yaw_from_quaternion(q: object) -> float:
    return float(quaternion_to_yaw(*(float(getattr(q, k)) for k in ('x', 'y', 'z', 'w'))))


class TrajectoryTracker(Node):
    """ROS interface of :class:`TrackerSession`."""

    def __init__(self) -> None:
        super().__init__('trajectory_tracker')
        params_file = declare_typed(self, 'params_file', '', 'vehicle override YAML ("" = '
                                    'vehicle.yaml defaults)', read_only=True)
        control_rate = declare_typed(self, 'control_rate', 50.0, 'control loop rate [Hz]',
                                     low=1.0, high=1000.0, read_only=True)
        self.mode = declare_typed(self, 'cmd_vel_mode', 'yaw_rate',
                                  'meaning of /cmd_vel angular.z: ' + ' | '.join(MAPPER_MODES))
        declare_typed(self, 'active', False,
                      'true: start the trajectory at the current pose; false: stop')
        values = {name: declare_typed(self, name, default, DESCRIPTIONS.get(
                      name, 'controller gain (see docs/tracking.md)'))
                  for name, default in TRACKER_DEFAULTS.items()}
        if self.mode not in MAPPER_MODES:
            raise ConfigError(f'trajectory_tracker: parameter cmd_vel_mode must be one of '
                              f'{", ".join(MAPPER_MODES)}, got {self.mode!r}')
        vehicle = load_vehicle_params(overrides=[params_file] if params_file else [])
        self.session = TrackerSession(vehicle, values)  # RcSimError: one line via run_node
        self.wheelbase = vehicle.geometry.wheelbase
        self.pose: MeasuredPose | None = None
        self.frame_id = 'odom'
        self.drops = DropCounter()
        self.want_active = bool(self.get_parameter('active').value)
        self.cmd_pub = self.create_publisher(Twist, 'cmd_vel', 10)
        self.err_pub = self.create_publisher(Vector3Stamped, 'tracking_error', 10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.path_pub = self.create_publisher(Path, 'reference_path', latched)
        self.create_subscription(Odometry, 'odom', self.on_odom, 10)
        self.add_on_set_parameters_callback(self.on_parameters)
        self.create_timer(1.0 / float(control_rate), self.on_timer)

    # ------------------------------------------------------------------ callbacks
    def on_odom(self, msg: Odometry) -> None:
        p = msg.pose.pose
        q = p.orientation
        reason = odometry_problem(p.position.x, p.position.y, q.x, q.y, q.z, q.w,
                                  msg.twist.twist.linear.x)
        if reason:
            self.get_logger().warning(self.drops.drop('odom', reason), throttle_duration_sec=1.0)
            return
        self.frame_id = msg.header.frame_id or 'odom'
        self.pose = MeasuredPose(float(p.position.x), float(p.position.y),
                                 _yaw_from_quaternion(p.orientation),
                                 float(msg.twist.twist.linear.x))

    def on_parameters(self, params: list[Parameter]) -> SetParametersResult:
        changes = {p.name: p.value for p in params if p.name in TRACKER_DEFAULTS}
        for p in params:
            if p.name == 'cmd_vel_mode' and p.value not in MAPPER_MODES:
                modes = ', '.join(MAPPER_MODES)
                return SetParametersResult(successful=False,
                                           reason=f'cmd_vel_mode must be one of {modes}')
        reason = self.session.update(changes) if changes else None
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        for p in params:
            if p.name == 'cmd_vel_mode':
                self.mode = p.value
            elif p.name == 'active':
                self.want_active = bool(p.value)
        return SetParametersResult(successful=True)

    def now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def on_timer(self) -> None:
        if self.want_active and not self.session.active:
            if self.pose is None:
                self.get_logger().warning('active but no /odom received yet',
                                          throttle_duration_sec=2.0)
                return
            note = canonical_trajectory(str(self.session.values['trajectory_type']))[1]
            if note:
                self.get_logger().warning(f'deprecated: {note}')
            self.session.activate(self.now(), self.pose)
            self.publish_path()
            self.get_logger().info(f'tracking {self.session.values["trajectory_type"]} with '
                                   f'{self.session.controller.name} for '
                                   f'{self.session.duration:.1f} s')
        elif not self.want_active and self.session.active:
            self.session.deactivate()
            self.cmd_pub.publish(Twist())
            return
        if not self.session.active or self.pose is None:
            return
        step = self.session.step(self.now(), self.pose)
        if step is None:
            return
        lin, ang = twist_from_command(step.command, self.wheelbase, self.mode)
        cmd = Twist()
        cmd.linear.x, cmd.angular.z = float(lin), float(ang)
        self.cmd_pub.publish(cmd)
        err = Vector3Stamped()
        err.header.stamp = self.get_clock().now().to_msg()
        err.header.frame_id = self.frame_id
        err.vector.x, err.vector.y = float(step.error_x), float(step.error_y)
        err.vector.z = float(math.hypot(step.error_x, step.error_y))
        self.err_pub.publish(err)
        if step.finished:
            self.get_logger().info('trajectory finished')
            self.want_active = False
            self.set_parameters([Parameter('active', Parameter.Type.BOOL, False)])

    def publish_path(self) -> None:
        t, x, y, yaw = self.session.reference_path()
        msg = Path()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self.frame_id
        start_ns = int(self.session.t_start * 1e9)
        for ti, xi, yi, yawi in zip(t, x, y, yaw):
            pose = PoseStamped()
            pose.header.frame_id = self.frame_id
            pose.header.stamp = Time(nanoseconds=start_ns + int(ti * 1e9)).to_msg()
            pose.pose.position.x, pose.pose.position.y = float(xi), float(yi)
            pose.pose.orientation.z = math.sin(0.5 * float(yawi))
            pose.pose.orientation.w = math.cos(0.5 * float(yawi))
            msg.poses.append(pose)
        self.path_pub.publish(msg)


def main(args: list[str] | None = None) -> int:
    """Entry point (ros2 run rc_sim_control trajectory_tracker)."""
    return run_node(TrajectoryTracker, args)


if __name__ == '__main__':
    raise SystemExit(main())
