"""sim_node: the embedded engine live in ROS 2 (``spawn_rc_car.launch.py backend:=embedded``).

Publishes ``/clock``, ``/odom`` (ground truth), ``/tf`` (odom -> base_link), ``/imu``,
``/joint_states``, ``/scan_raw`` (ideal) and, with the ``lidar_errors`` parameter, ``/scan``;
subscribes ``/steering_angle`` and ``/rear_wheel_speed`` (std_msgs/Float64, the mapper outputs)
and, with ``use_cmd_vel``, ``/cmd_vel`` through the control core's mapper. With ``num_cars`` > 1
every car has these topics under ``car_<i>/`` and frames ``car_<i>/odom``, ``car_<i>/base_link``,
``car_<i>/laser``... (as the bags of ``rcsim run --cars``); ``/clock`` and ``/tf`` are shared;
each lidar sees the other cars and cars collide with each other. A wall-clock (steady)
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
from rc_sim_engine.live import (
    NODE_PARAMETERS,
    LivePacer,
    build_simulator,
    car_namespaces,
    car_vector,
    node_parameter_problem,
)
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

    def __init__(self, **node_options):
        # node_options: rclpy Node keywords (e.g. parameter_overrides, for tests)
        super().__init__('sim_node', **node_options)
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
        self._ns = car_namespaces(self.sim.n)  # '' for one car, car_<i> for several
        self.pub_clock = self.create_publisher(ClockMsg, '/clock', qos)
        self.pub_tf = self.create_publisher(TFMessage, '/tf', 100)
        self.pub_odom = [self.create_publisher(Odometry, _name(ns, 'odom'), qos)
                         for ns in self._ns]
        self.pub_imu = [self.create_publisher(Imu, _name(ns, 'imu'), qos) for ns in self._ns]
        self.pub_joints = [self.create_publisher(JointState, _name(ns, 'joint_states'), qos)
                           for ns in self._ns]
        self.pub_scan_raw = [self.create_publisher(LaserScan, _name(ns, 'scan_raw'), qos)
                             for ns in self._ns]
        self.pub_scan = ([self.create_publisher(LaserScan, _name(ns, 'scan'), qos)
                          for ns in self._ns] if values['lidar_errors'] else None)
        self._inputs = [CommandInputs() for _ in self._ns]
        self._mapper_mode = values['mapper_mode']
        for i, ns in enumerate(self._ns):
            self.create_subscription(Float64, _name(ns, 'steering_angle'),
                                     lambda msg, i=i: self._on_steering(i, msg), qos)
            self.create_subscription(Float64, _name(ns, 'rear_wheel_speed'),
                                     lambda msg, i=i: self._on_wheel_speed(i, msg), qos)
            if values['use_cmd_vel']:
                self.create_subscription(Twist, _name(ns, 'cmd_vel'),
                                         lambda msg, i=i: self._on_cmd_vel(i, msg), qos)
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

    def _command(self, i):
        """Car i's last valid joint commands; the other cars keep theirs (NaN = hold)."""
        inputs, n = self._inputs[i], self.sim.n
        self.sim.command(car_vector(n, i, inputs.steering_angle),
                         car_vector(n, i, inputs.wheel_speed))

    def _on_steering(self, i, msg):
        line = self._inputs[i].steering(msg.data)
        if line:
            return self._dropped(f'{self._ns[i]}: {line}' if self._ns[i] else line)
        self._command(i)

    def _on_wheel_speed(self, i, msg):
        line = self._inputs[i].wheel(msg.data)
        if line:
            return self._dropped(f'{self._ns[i]}: {line}' if self._ns[i] else line)
        self._command(i)

    def _on_cmd_vel(self, i, msg):
        v, z = float(msg.linear.x), float(msg.angular.z)
        line = self._inputs[i].twist(v, z, self._mapper_mode)
        if line:
            return self._dropped(f'{self._ns[i]}: {line}' if self._ns[i] else line)
        n = self.sim.n
        self.sim.command_twist(car_vector(n, i, v), car_vector(n, i, z))

    # ------------------------------------------------------------------ stepping and publishing
    def _on_timer(self):
        target = self._pacer.target(time.monotonic(), self.sim.time)
        if target > self.sim.time:
            self.sim.step_to(target)
        snap = self.sim.snapshot()
        stamp = _stamp(snap['t_ns'])
        self.pub_clock.publish(ClockMsg(clock=stamp))
        transforms = []
        for i, ns in enumerate(self._ns):
            transforms.append(self._publish_car(i, ns, snap, stamp))
        self.pub_tf.publish(TFMessage(transforms=transforms))
        if self.sim.scan_count > self._scans_published and self.sim.last_scan_sample:
            self._scans_published = self.sim.scan_count
            for i, ns in enumerate(self._ns):
                self._publish_scan(i, ns, self.sim.last_scan_sample)

    def _publish_car(self, i, ns, snap, stamp):
        """Odometry, IMU and joint states of car i; returns its odom -> base_link transform."""
        x, y, yaw = float(snap['x'][i]), float(snap['y'][i]), float(snap['yaw'][i])
        odom = Odometry()
        odom.header.stamp = stamp
        odom.header.frame_id = _name(ns, 'odom')
        odom.child_frame_id = _name(ns, 'base_link')
        odom.pose.pose.position.x = x
        odom.pose.pose.position.y = y
        odom.pose.pose.orientation = _yaw_quaternion(yaw)
        odom.twist.twist.linear.x = float(snap['vx'][i])
        odom.twist.twist.linear.y = float(snap['vy'][i])
        odom.twist.twist.angular.z = float(snap['yaw_rate'][i])
        self.pub_odom[i].publish(odom)
        tf = TransformStamped()
        tf.header.stamp = stamp
        tf.header.frame_id = _name(ns, 'odom')
        tf.child_frame_id = _name(ns, 'base_link')
        tf.transform.translation.x = x
        tf.transform.translation.y = y
        tf.transform.rotation = _yaw_quaternion(yaw)
        imu = Imu()
        imu.header.stamp = stamp
        imu.header.frame_id = _name(ns, 'imu_link')
        imu.orientation = _yaw_quaternion(yaw)
        imu.angular_velocity.z = float(snap['yaw_rate'][i])
        imu.linear_acceleration.x = float(snap['fx'][i])
        imu.linear_acceleration.y = float(snap['fy'][i])
        imu.linear_acceleration.z = float(snap['fz'][i])
        self.pub_imu[i].publish(imu)
        joints = JointState()
        joints.header.stamp = stamp
        joints.name = list(JOINT_NAMES)
        joints.position = [float(v) for v in snap['position'][i]]
        joints.velocity = [float(v) for v in snap['velocity'][i]]
        self.pub_joints[i].publish(joints)
        return tf

    def _publish_scan(self, i, ns, sample):
        raw = sample.get('raw', sample['ranges'])
        self.pub_scan_raw[i].publish(self._scan_msg(int(sample['t_ns']), raw[i], ns))
        if self.pub_scan is not None and not bool(sample['lost'][i]):
            self.pub_scan[i].publish(self._scan_msg(int(sample['stamp_ns'][i]),
                                                    sample['ranges'][i], ns))

    def _scan_msg(self, t_ns, ranges, ns):
        msg = LaserScan(**self._scan_fields)
        msg.header.stamp = _stamp(t_ns)
        msg.header.frame_id = _name(ns, 'laser')
        msg.ranges = array.array('f', np.asarray(ranges, dtype=np.float32).tobytes())
        return msg


def _name(ns, name):
    """Topic or frame ``name`` of a car: relative, under its namespace when it has one."""
    return f'{ns}/{name}' if ns else name


def main(args=None):
    """Entry point (ros2 run rc_sim_engine sim_node)."""
    return run_node(SimNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
