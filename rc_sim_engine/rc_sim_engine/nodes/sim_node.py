"""sim_node: the embedded engine live in ROS 2 (``spawn_rc_car.launch.py backend:=embedded``).

Publishes ``/clock``, ``/odom`` (ground truth), ``/tf`` (odom -> base_link), ``/imu``,
``/joint_states``, ``/scan_raw`` (ideal) and, with the ``lidar_errors`` parameter, ``/scan``;
subscribes ``/steering_angle`` and ``/rear_wheel_speed`` (std_msgs/Float64, the mapper outputs)
and, with ``use_cmd_vel``, ``/cmd_vel`` through the control core's mapper. A wall-clock (steady)
timer steps the simulator so that sim time = realtime_factor x wall time; header stamps are sim
time, so consumers run with ``use_sim_time:=true``. All logic is in :mod:`rc_sim_engine.live` and
:mod:`rc_sim_engine.simulator`; NaN/inf commands are dropped with a throttled warning
(:mod:`rc_sim_engine.node_inputs`), the last valid command stays.
"""

import array
import time

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Quaternion, TransformStamped, Twist
from nav_msgs.msg import Odometry
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import Imu, JointState, LaserScan
from std_msgs.msg import Float64
from tf2_msgs.msg import TFMessage

from rc_sim_description.frames import yaw_to_quaternion
from rc_sim_description.nodes.parameters import declare_typed
from rc_sim_description.nodes.spin import run_node
from rc_sim_engine.live import NODE_PARAMETERS, LivePacer, build_simulator, node_parameter_problem
from rc_sim_engine.node_inputs import CommandInputs
from rc_sim_engine.sensors import JOINT_NAMES


def _stamp(t_ns):
    sec, nanosec = divmod(int(t_ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def _yaw_quaternion(yaw):
    x, y, z, w = (float(v) for v in yaw_to_quaternion(yaw))
    return Quaternion(x=x, y=y, z=z, w=w)


class SimNode(Node):
    """Thin rclpy shell around :class:`rc_sim_engine.simulator.Simulator`."""

    def __init__(self):
        super().__init__('sim_node')
        values = {spec.name: declare_typed(self, spec.name, spec.default, spec.description,
                                           low=spec.min_value, high=spec.max_value,
                                           read_only=spec.read_only)
                  for spec in NODE_PARAMETERS}
        self.sim = build_simulator(values)  # RcSimError -> run_node prints one line, exit 2
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._params = self.sim.params[0]
        sens = self._params.sensors
        self._scan_fields = {
            'angle_min': float(sens.lidar_angle_min), 'angle_max': float(sens.lidar_angle_max),
            'angle_increment': float(sens.lidar_angle_increment), 'time_increment': 0.0,
            'scan_time': float(1.0 / sens.lidar_update_rate),
            'range_min': float(sens.lidar_range_min), 'range_max': float(sens.lidar_range_max)}
        qos = 10
        self.pub_clock = self.create_publisher(ClockMsg, '/clock', qos)
        self.pub_odom = self.create_publisher(Odometry, 'odom', qos)
        self.pub_tf = self.create_publisher(TFMessage, '/tf', 100)
        self.pub_imu = self.create_publisher(Imu, 'imu', qos)
        self.pub_joints = self.create_publisher(JointState, 'joint_states', qos)
        self.pub_scan_raw = self.create_publisher(LaserScan, 'scan_raw', qos)
        self.pub_scan = (self.create_publisher(LaserScan, 'scan', qos)
                         if values['lidar_errors'] else None)
        self._inputs = CommandInputs()
        self._mapper_mode = values['mapper_mode']
        self.create_subscription(Float64, 'steering_angle', self._on_steering, qos)
        self.create_subscription(Float64, 'rear_wheel_speed', self._on_wheel_speed, qos)
        if values['use_cmd_vel']:
            self.create_subscription(Twist, 'cmd_vel', self._on_cmd_vel, qos)
        self._scans_published = 0
        self._pacer = LivePacer(values['realtime_factor'], time.monotonic())
        wall = Clock(clock_type=ClockType.STEADY_TIME)  # /clock comes from us: never wait on it
        self.create_timer(1.0 / values['publish_rate'], self._on_timer, clock=wall)
        self.get_logger().info(
            f'sim_node: world {self.sim.world.name}, {self.sim.n} car(s), '
            f'realtime_factor {values["realtime_factor"]:g}')

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, params):
        for p in params:
            problem = node_parameter_problem(p.name, p.value)
            if problem:
                return SetParametersResult(successful=False, reason=problem)
        for p in params:
            if p.name == 'realtime_factor':
                self._pacer.set_realtime_factor(p.value, time.monotonic(), self.sim.time)
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ commands
    def _dropped(self, line):
        self.get_logger().warning(line, throttle_duration_sec=1.0)

    def _on_steering(self, msg):
        line = self._inputs.steering(msg.data)
        if line:
            return self._dropped(line)
        self.sim.command(self._inputs.steering_angle, self._inputs.wheel_speed)

    def _on_wheel_speed(self, msg):
        line = self._inputs.wheel(msg.data)
        if line:
            return self._dropped(line)
        self.sim.command(self._inputs.steering_angle, self._inputs.wheel_speed)

    def _on_cmd_vel(self, msg):
        v, z = float(msg.linear.x), float(msg.angular.z)
        line = self._inputs.twist(v, z, self._mapper_mode)
        if line:
            return self._dropped(line)
        self.sim.command_twist(v, z)

    # ------------------------------------------------------------------ stepping and publishing
    def _on_timer(self):
        target = self._pacer.target(time.monotonic(), self.sim.time)
        if target > self.sim.time:
            self.sim.step_to(target)
        snap = self.sim.snapshot()
        stamp = _stamp(snap['t_ns'])
        self.pub_clock.publish(ClockMsg(clock=stamp))
        x, y, yaw = float(snap['x'][0]), float(snap['y'][0]), float(snap['yaw'][0])
        odom = Odometry()
        odom.header.stamp = stamp
        odom.header.frame_id = 'odom'
        odom.child_frame_id = 'base_link'
        odom.pose.pose.position.x = x
        odom.pose.pose.position.y = y
        odom.pose.pose.orientation = _yaw_quaternion(yaw)
        odom.twist.twist.linear.x = float(snap['vx'][0])
        odom.twist.twist.linear.y = float(snap['vy'][0])
        odom.twist.twist.angular.z = float(snap['yaw_rate'][0])
        self.pub_odom.publish(odom)
        tf = TransformStamped()
        tf.header.stamp = stamp
        tf.header.frame_id = 'odom'
        tf.child_frame_id = 'base_link'
        tf.transform.translation.x = x
        tf.transform.translation.y = y
        tf.transform.rotation = _yaw_quaternion(yaw)
        self.pub_tf.publish(TFMessage(transforms=[tf]))
        imu = Imu()
        imu.header.stamp = stamp
        imu.header.frame_id = 'imu_link'
        imu.orientation = _yaw_quaternion(yaw)
        imu.angular_velocity.z = float(snap['yaw_rate'][0])
        imu.linear_acceleration.x = float(snap['fx'][0])
        imu.linear_acceleration.y = float(snap['fy'][0])
        imu.linear_acceleration.z = float(snap['fz'][0])
        self.pub_imu.publish(imu)
        joints = JointState()
        joints.header.stamp = stamp
        joints.name = list(JOINT_NAMES)
        joints.position = [float(v) for v in snap['position'][0]]
        joints.velocity = [float(v) for v in snap['velocity'][0]]
        self.pub_joints.publish(joints)
        if self.sim.scan_count > self._scans_published and self.sim.last_scan_sample:
            self._scans_published = self.sim.scan_count
            self._publish_scan(self.sim.last_scan_sample)

    def _publish_scan(self, sample):
        raw = sample.get('raw', sample['ranges'])
        self.pub_scan_raw.publish(self._scan_msg(int(sample['t_ns']), raw[0]))
        if self.pub_scan is not None and not bool(sample['lost'][0]):
            self.pub_scan.publish(self._scan_msg(int(sample['stamp_ns'][0]), sample['ranges'][0]))

    def _scan_msg(self, t_ns, ranges):
        msg = LaserScan(**self._scan_fields)
        msg.header.stamp = _stamp(t_ns)
        msg.header.frame_id = 'laser'
        msg.ranges = array.array('f', np.asarray(ranges, dtype=np.float32).tobytes())
        return msg


def main(args=None):
    """Entry point (ros2 run rc_sim_engine sim_node)."""
    return run_node(SimNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
