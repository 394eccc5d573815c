"""sim_node: the embedded engine live in ROS 2 (``spawn_rc_car.launch.py backend:=embedded``).

Publishes what ``rcsim run`` writes into its bags, each message at its own simulated time and
rate: ``/clock``, ``/odom`` (ground truth) and ``/tf`` (odom -> base_link) at ``command_rate``,
``/imu``, ``/joint_states``, ``/scan_raw`` (ideal) and, with the ``lidar_errors`` parameter,
``/scan``. Subscribes ``/steering_angle`` and ``/rear_wheel_speed`` (std_msgs/Float64, the mapper
outputs; a normalised-servo or throttle car takes them through its own code's chain: the inverse
of its servo map, its speed controller) and, with ``use_cmd_vel``, ``/cmd_vel`` through the
control core's mapper. With ``recording`` (a recording description) it drives the car with the
command topics that names instead, as the real car takes them: its own steering, drive and
deadman topics (std_msgs Float32/Float64, ``raw_command_type``), so on-car code and recorded
bags drive the twin unchanged; or an Ackermann command, or a twist on the named topic. With
``num_cars`` > 1 every car has these topics under ``car_<i>/`` and frames ``car_<i>/odom``,
``car_<i>/base_link``, ``car_<i>/laser``... (as the bags of ``rcsim run --cars``); ``/clock``
and ``/tf`` are shared; each lidar sees the other cars and cars collide with each other.

Time: a wall-clock (steady) timer steps the simulator so that sim time = ``realtime_factor`` x
wall time (0: as fast as the machine allows); ``paused`` stops it; in ``lockstep`` mode every
control period waits for that period's command. Header stamps are sim time, so consumers run with
``use_sim_time:=true``. All logic is in :mod:`rc_sim_engine.live.core` and
:mod:`rc_sim_engine.sim.simulator`; NaN/inf commands are dropped with a throttled warning
(:mod:`rc_sim_engine.live.inputs`), the last valid command stays; contacts are logged.
"""

import math
import time

from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import Imu, JointState, LaserScan
from std_msgs.msg import Float32, Float32MultiArray, Float64, Float64MultiArray
from tf2_msgs.msg import TFMessage

from rc_sim_description.nodes.parameters import declare_typed
from rc_sim_description.nodes.spin import run_node
from rc_sim_engine.live.core import (
    NODE_PARAMETERS,
    STRETCH_S,
    TICK_BUDGET_S,
    LiveOutput,
    LivePacer,
    LockstepGate,
    build_simulator,
    car_namespaces,
    car_vector,
    collision_line,
    lockstep_waits_for,
    node_parameter_problem,
)
from rc_sim_engine.live.inputs import CommandInputs, RawInputs, Throttle, raw_commands, raw_value

MESSAGE_TYPES = {'rosgraph_msgs/msg/Clock': ClockMsg, 'tf2_msgs/msg/TFMessage': TFMessage,
                 'nav_msgs/msg/Odometry': Odometry, 'sensor_msgs/msg/Imu': Imu,
                 'sensor_msgs/msg/JointState': JointState,
                 'sensor_msgs/msg/LaserScan': LaserScan}
RAW_MESSAGES = {('Float32', False): Float32, ('Float64', False): Float64,
                ('Float32', True): Float32MultiArray, ('Float64', True): Float64MultiArray}
QOS_DEPTH = 10  # commands in: reliable, volatile (as the ros_gz_bridge subscribes)
# out: reliable, volatile, deep enough for a burst: a time-compressed run publishes up to
# BURST_S of sim time at once (50 /clock and IMU messages, 20 scans), and a KEEP_LAST writer
# would drop what a reader has not acknowledged yet
OUT_QOS_DEPTH = 100
BURST_S = 0.5


class SimNode(Node):
    """Thin rclpy shell around :class:`rc_sim_engine.sim.simulator.Simulator`."""

    def __init__(self, **node_options):
        # node_options: rclpy Node keywords (e.g. parameter_overrides, for tests)
        super().__init__('sim_node', **node_options)
        values = {spec.name: declare_typed(self, spec.name, spec.default, spec.description,
                                           low=spec.min_value, high=spec.max_value,
                                           read_only=spec.read_only)
                  for spec in NODE_PARAMETERS}
        self.sim = build_simulator(values)  # RcSimError -> run_node prints one line, exit 2
        self._response = values['collision_response']
        self._out = LiveOutput(self.sim, bool(values['lidar_errors']))
        self._pubs = [self.create_publisher(MESSAGE_TYPES[msgtype], name, OUT_QOS_DEPTH)
                      for name, msgtype in (self._out.topics[k] for k in self._out.names)]
        self._ns = car_namespaces(self.sim.n)  # '' for one car, car_<i> for several
        self._inputs = [CommandInputs() for _ in self._ns]
        self._throttle = Throttle()
        self._mapper_mode = values['mapper_mode']
        self._cmd_vel = bool(values['use_cmd_vel'])
        self._raw = raw_commands(values['recording']) if values['recording'] else None
        raw_roles = self._raw.roles if self._raw is not None else ()
        self._raw_inputs = [RawInputs(self._raw) for _ in self._ns] if self._raw else []
        mapper_topics = 'steering' not in raw_roles  # raw steering + drive replace them
        if self._raw is not None:
            inputs = self._raw.lockstep_inputs
        elif self._cmd_vel:
            inputs = ('cmd_vel',)
        else:
            inputs = ('steering_angle', 'rear_wheel_speed')
        self._gate = LockstepGate(inputs) if values['lockstep'] else None
        if self._gate is not None and self.sim.n > 1:
            from rc_sim_description.errors import ConfigError

            raise ConfigError('sim_node: lockstep runs one car (num_cars 1)')
        self._period = 1.0 / float(values['command_rate'])
        self._command_subs = {}  # the lockstep inputs' subscriptions by resolved topic
        for i, ns in enumerate(self._ns):
            subs = {}
            if mapper_topics:
                subs['steering_angle'] = self.create_subscription(
                    Float64, _name(ns, 'steering_angle'),
                    lambda msg, i=i: self._on_steering(i, msg), QOS_DEPTH)
                subs['rear_wheel_speed'] = self.create_subscription(
                    Float64, _name(ns, 'rear_wheel_speed'),
                    lambda msg, i=i: self._on_wheel_speed(i, msg), QOS_DEPTH)
            if self._cmd_vel:
                subs['cmd_vel'] = self.create_subscription(
                    Twist, _name(ns, 'cmd_vel'), lambda msg, i=i: self._on_cmd_vel(i, msg),
                    QOS_DEPTH)
            if self._raw is not None:
                subs.update(self._raw_subscriptions(i, ns, values['raw_command_type']))
            if self._gate is not None:
                self._command_subs = {subs[name].topic_name: subs[name]
                                      for name in self._gate.inputs}
        self._paused = bool(values['paused'])
        self._pacer = LivePacer(values['realtime_factor'], time.monotonic(), self.sim.time,
                                chunk=self._period if self._gate else STRETCH_S)
        self._started = self._gate is None
        self._waited = 0.0
        self._window = (time.monotonic(), self.sim.time)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        wall = Clock(clock_type=ClockType.STEADY_TIME)  # /clock comes from us: never wait on it
        # as fast as possible: a timer due at once after each callback (the executor takes the
        # commands in between); else the wall-clock tick (lockstep: start-up and pacing; its
        # periods are stepped as their commands arrive)
        free = values['realtime_factor'] == 0.0 and self._gate is None
        self.create_timer(1e-4 if free else 1.0 / values['publish_rate'], self._on_timer,
                          clock=wall)
        if self._gate is None:
            self.sim.step_to(0.0)  # /clock and the sensors at t = 0
            self._publish()
        factor = values['realtime_factor']
        self.get_logger().info(
            f'sim_node: world {self.sim.world.name}, {self.sim.n} car(s), '
            + (f'realtime_factor {factor:g}' if factor > 0 else 'as fast as possible')
            + (', lockstep (one command per control period of '
               f'{self._period * 1e3:g} ms)' if self._gate else '')
            + (', paused' if self._paused else ''))

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, params):
        for p in params:
            problem = node_parameter_problem(p.name, p.value)
            if problem:
                return SetParametersResult(successful=False, reason=problem)
        now = time.monotonic()
        for p in params:
            if p.name == 'realtime_factor':
                self._pacer.set_realtime_factor(p.value, now, self.sim.time)
            elif p.name == 'paused':
                if self._paused and not p.value:  # resume where it stood, no catch-up
                    self._pacer.set_realtime_factor(self._pacer.realtime_factor, now,
                                                    self.sim.time)
                self._paused = bool(p.value)
                self.get_logger().info(f'{"paused" if self._paused else "resumed"} at '
                                       f't = {self.sim.time:.3f} s')
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ commands
    def _raw_subscriptions(self, i, ns, width):
        """Car i's subscriptions of the recording description's command topics (under its
        namespace among several cars), by role."""
        subs = {}
        for topic in self._raw.topics:
            name = topic.topic if not ns else _name(ns, topic.topic.lstrip('/'))
            if topic.role == 'command':
                msgtype, callback = AckermannDriveStamped, self._on_ackermann
            elif topic.role == 'cmd_vel':
                msgtype, callback = Twist, self._on_cmd_vel
            else:
                msgtype = RAW_MESSAGES[(width, topic.index is not None)]
                callback = self._on_raw_callback(topic)
            subs[topic.role] = self.create_subscription(
                msgtype, name, lambda msg, i=i, cb=callback: cb(i, msg), QOS_DEPTH)
        return subs

    def _on_raw_callback(self, topic):
        def on_raw(i, msg):
            value, problem = raw_value(msg.data, topic.index)
            inputs = self._raw_inputs[i]
            line = inputs.take(topic, value, problem)
            if line:
                return self._dropped(i, topic.topic, line)
            if self._gate is not None:
                if topic.role in self._gate.inputs:
                    self._gate.offer(topic.role, value)
                    return self._lockstep()
                return None  # the deadman acts when the next period is taken
            steering, drive = inputs.commands()
            n = self.sim.n
            self.sim.command(car_vector(n, i, steering), car_vector(n, i, drive))
            return None
        return on_raw

    def _on_ackermann(self, i, msg):
        """An Ackermann command: steering angle [rad] and speed [m/s] (as a wheel speed)."""
        drive = msg.drive
        angle, speed = float(drive.steering_angle), float(drive.speed)
        topic = next(t.topic for t in self._raw.topics if t.role == 'command')
        line = self._inputs[i].ackermann(topic, speed, angle)
        if line:
            return self._dropped(i, topic, line)
        wheel = speed / self.sim.params[i].effective_wheel_radius
        if self._gate is not None:
            self._gate.offer('command', angle, wheel)
            return self._lockstep()
        n = self.sim.n
        self.sim.command(car_vector(n, i, angle), car_vector(n, i, wheel))
        return None

    def _dropped(self, i, topic, line):
        """One warning per second and topic (the line counts the drops)."""
        if self._throttle.due(f'{self._ns[i]}/{topic}'):
            self.get_logger().warning(f'{self._ns[i]}: {line}' if self._ns[i] else line)

    def _command(self, i):
        """Car i's last valid joint commands; the other cars keep theirs (NaN = hold)."""
        inputs, n = self._inputs[i], self.sim.n
        self.sim.command(car_vector(n, i, inputs.steering_angle),
                         car_vector(n, i, inputs.wheel_speed))

    def _on_steering(self, i, msg):
        line = self._inputs[i].steering(msg.data)
        if line:
            return self._dropped(i, 'steering_angle', line)
        if self._gate is not None:
            self._gate.offer('steering_angle', float(msg.data))
            return self._lockstep()
        self._command(i)

    def _on_wheel_speed(self, i, msg):
        line = self._inputs[i].wheel(msg.data)
        if line:
            return self._dropped(i, 'rear_wheel_speed', line)
        if self._gate is not None:
            self._gate.offer('rear_wheel_speed', float(msg.data))
            return self._lockstep()
        self._command(i)

    def _on_cmd_vel(self, i, msg):
        v, z = float(msg.linear.x), float(msg.angular.z)
        line = self._inputs[i].twist(v, z, self._mapper_mode)
        if line:
            return self._dropped(i, 'cmd_vel', line)
        if self._gate is not None:
            self._gate.offer('cmd_vel', v, z)
            return self._lockstep()
        n = self.sim.n
        self.sim.command_twist(car_vector(n, i, v), car_vector(n, i, z))

    # ------------------------------------------------------------------ stepping and publishing
    def _on_timer(self):
        if self._paused:
            return
        if self._gate is not None:
            return self._lockstep()
        start = time.monotonic()
        factor = self._pacer.realtime_factor
        target = self._pacer.target(start, self.sim.time) if factor > 0 else math.inf
        # the largest bursts the readers can take (fewer, larger pieces cost less per sim second)
        piece = min(STRETCH_S * factor, BURST_S) if factor > 0 else BURST_S
        while self.sim.time < target - 0.5 * self.sim.config.dt:
            self.sim.step_to(min(target, self.sim.time + piece))
            self._publish()
            if time.monotonic() - start > TICK_BUDGET_S:
                break  # let the executor take the commands that came meanwhile
        self._report_rate()

    def _lockstep(self):
        """One control period per command, in order; paced by realtime_factor when > 0; none
        while paused (the commands queue and are taken on resume)."""
        if self._paused:
            return
        if not self._started:
            if not self._ready_for_lockstep():
                return
            self._started = True
            self.get_logger().info('lockstep: controller found, running')
        start = time.monotonic()
        while time.monotonic() - start < TICK_BUDGET_S:
            target = self._pacer.target(time.monotonic(), self.sim.time)
            if self.sim.time + self._period > target + 0.5 * self.sim.config.dt:
                return  # paced: not yet due
            command = self._gate.take()
            if command is None:
                self._waiting(start)
                return
            self._waited = 0.0
            if 'cmd_vel' in command:
                self.sim.command_twist(*command['cmd_vel'])
            elif 'command' in command:
                self.sim.command(*command['command'])
            elif 'steering' in command:
                raw = self._raw_inputs[0]
                drive = command['drive'][0] if raw.enabled else 0.0
                self.sim.command(command['steering'][0], drive)
            else:
                self.sim.command(command['steering_angle'][0], command['rear_wheel_speed'][0])
            self.sim.step_to(self.sim.time + self._period)
            self._publish()
        if self._gate.backlog() > 2:
            self.get_logger().warning(
                f'lockstep: {self._gate.backlog()} periods of commands queued: the controller '
                'sends more than one command per control period', throttle_duration_sec=5.0)

    def _ready_for_lockstep(self):
        """Start once the controller is connected both ways (:func:`lockstep_waits_for`), then
        publish the state at the start time: the controller's cue for the first period."""
        def nodes(infos):
            return {f'{i.node_namespace.rstrip("/")}/{i.node_name}' for i in infos}

        publishers, publishers_matched = {}, {}
        for topic, sub in self._command_subs.items():
            publishers[topic] = nodes(self.get_publishers_info_by_topic(topic))
            publishers_matched[topic] = sub.get_publisher_count()
        readers, readers_matched = {}, {}
        for pub in self._pubs:
            readers[pub.topic_name] = nodes(self.get_subscriptions_info_by_topic(pub.topic_name))
            readers_matched[pub.topic_name] = pub.get_subscription_count()
        missing = lockstep_waits_for(publishers, publishers_matched, readers, readers_matched)
        if missing is not None:
            self.get_logger().info(f'lockstep: waiting for {missing}', throttle_duration_sec=5.0)
            return False
        self.sim.step_to(self.sim.time)
        self._publish()
        return True

    def _waiting(self, start):
        self._waited += time.monotonic() - start
        self.get_logger().info(
            f'lockstep: waiting for the command of the period at t = {self.sim.time:.3f} s',
            throttle_duration_sec=5.0)

    def _publish(self):
        """Every message due since the last call, in time order; contacts logged."""
        topics, data = self._out.take()
        pubs = self._pubs
        for k, raw in zip(topics, data):
            pubs[k].publish(raw)
        if self.sim.collisions:
            for event in self.sim.collisions:
                self.get_logger().warning(collision_line(event, self._ns, self._response),
                                          throttle_duration_sec=1.0)
            self.sim.collisions.clear()

    def _report_rate(self):
        now = time.monotonic()
        wall0, sim0 = self._window
        if now - wall0 < 5.0:
            return
        self._window = (now, self.sim.time)
        achieved = self._pacer.achieved(now - wall0, self.sim.time - sim0)
        factor = self._pacer.realtime_factor
        if factor > 0 and achieved < 0.9 * factor:
            self.get_logger().warning(
                f'running at {achieved:.3g}x real time, below the requested realtime_factor '
                f'{factor:g} (this machine cannot go faster)', throttle_duration_sec=30.0)


def _name(ns, name):
    """Topic or frame ``name`` of a car: relative, under its namespace when it has one."""
    return f'{ns}/{name}' if ns else name


def main(args=None):
    """Entry point (ros2 run rc_sim_engine sim_node)."""
    return run_node(SimNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
