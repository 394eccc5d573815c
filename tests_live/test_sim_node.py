"""sim_node live: topics, types, frames, QoS, rates and /clock; any real-time factor; pause and
resume; lockstep determinism; contacts; hostile commands over DDS.

The references are outside the node: message stamps (every stream at its vehicle.yaml /
SimConfig rate in sim time), the probe's wall clock, the ROS graph as rclpy reports it, and for
lockstep a second run of the same thing.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
import subprocess
import sys
import time

from geometry_msgs.msg import Twist
from live_harness import LiveRos, wait_until
from nav_msgs.msg import Odometry
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState, LaserScan
from std_msgs.msg import Float64
from tf2_msgs.msg import TFMessage

from rc_sim_description.params import load_vehicle_params

DEEP = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE,
                  durability=DurabilityPolicy.VOLATILE)
NODES = Path(__file__).resolve().parent / 'nodes'
VEHICLE = load_vehicle_params()


def param_set(ros: LiveRos, node: str, name: str, value: str) -> None:
    """``ros2 param set`` as a user types it (no daemon; spin long enough to find the node)."""
    ros.cli('param', 'set', node, name, value, '--no-daemon', '--spin-time', '5')


def stamp_ns(msg) -> int:
    if hasattr(msg, 'transforms'):
        msg = msg.transforms[0]
    s = msg.header.stamp if hasattr(msg, 'header') else msg.clock
    return s.sec * 1_000_000_000 + s.nanosec


def clock_ns(msg: Clock) -> int:
    return msg.clock.sec * 1_000_000_000 + msg.clock.nanosec


def steps(stamps: list[int]) -> set[int]:
    return {b - a for a, b in itertools.pairwise(stamps)}


def test_topics_types_frames_qos_rates_and_clock(ros: LiveRos) -> None:
    node = ros.run('rc_sim_engine', 'sim_node', {'world': 'flat_track', 'realtime_factor': 2.0})
    probe = ros.probe
    boxes = {name: probe.subscribe(kind, name, DEEP) for name, kind in (
        ('/clock', Clock), ('/odom', Odometry), ('/tf', TFMessage), ('/imu', Imu),
        ('/joint_states', JointState), ('/scan_raw', LaserScan))}
    boxes['/clock'].wait(400, timeout=60)  # 4 s of sim time
    node.wait_output('sim_node: world flat_track')
    topics = probe.topics()
    for name, kind in (('/clock', 'rosgraph_msgs/msg/Clock'), ('/odom', 'nav_msgs/msg/Odometry'),
                       ('/tf', 'tf2_msgs/msg/TFMessage'), ('/imu', 'sensor_msgs/msg/Imu'),
                       ('/joint_states', 'sensor_msgs/msg/JointState'),
                       ('/scan_raw', 'sensor_msgs/msg/LaserScan'),
                       ('/steering_angle', 'std_msgs/msg/Float64'),
                       ('/rear_wheel_speed', 'std_msgs/msg/Float64')):
        assert topics.get(name) == [kind], (name, topics.get(name))
    assert '/scan' not in topics and '/cmd_vel' not in topics  # defaults: no errors, no cmd_vel
    for name in ('/odom', '/scan_raw', '/clock', '/tf'):
        (info,) = probe.node.get_publishers_info_by_topic(name)
        assert info.node_name == 'sim_node'
        assert info.qos_profile.reliability == ReliabilityPolicy.RELIABLE, name
        assert info.qos_profile.durability == DurabilityPolicy.VOLATILE, name
    odom = boxes['/odom'].messages
    assert {(m.header.frame_id, m.child_frame_id) for m in odom} == {('odom', 'base_link')}
    tf = boxes['/tf'].messages
    assert {(t.header.frame_id, t.child_frame_id) for m in tf for t in m.transforms} == {
        ('odom', 'base_link')}
    assert {m.header.frame_id for m in boxes['/imu'].messages} == {'imu_link'}
    assert {m.header.frame_id for m in boxes['/scan_raw'].messages} == {'laser'}
    joints = boxes['/joint_states'].messages[-1]
    assert sorted(joints.name) == sorted(
        ['front_left_steering_joint', 'front_right_steering_joint', 'front_left_wheel_joint',
         'front_right_wheel_joint', 'rear_left_wheel_joint', 'rear_right_wheel_joint'])
    scan = boxes['/scan_raw'].messages[-1]
    sens = VEHICLE.sensors
    assert len(scan.ranges) == sens.lidar_samples
    assert scan.angle_min == pytest.approx(sens.lidar_angle_min, abs=1e-6)
    assert scan.range_max == pytest.approx(sens.lidar_range_max)
    # every stream at its own rate in sim time, nothing missing, /clock steady and monotonic
    period_ns = {'/clock': 10_000_000, '/odom': 20_000_000, '/tf': 20_000_000,
                 '/imu': round(1e9 / sens.imu_update_rate),
                 '/joint_states': 20_000_000,
                 '/scan_raw': round(1e9 / sens.lidar_update_rate)}
    for name, box in boxes.items():
        stamps = [stamp_ns(m) for m in box.messages]
        assert steps(stamps) == {period_ns[name]}, (name, sorted(steps(stamps))[:5])
    assert node.interrupt() == 0, node.output()


def measure(ros: LiveRos, seconds: float) -> tuple[float, list[int]]:
    """(achieved real-time factor over ``seconds`` of wall time, scan stamps meanwhile)."""
    clock = ros.probe.subscribe(Clock, '/clock', DEEP)
    scans = ros.probe.subscribe(LaserScan, '/scan_raw', DEEP)
    clock.wait(5, timeout=60)
    clock.clear()
    scans.clear()
    time.sleep(seconds)
    got = clock.stamped
    (w0, c0), (w1, c1) = got[0], got[-1]
    return (clock_ns(c1) - clock_ns(c0)) * 1e-9 / (w1 - w0), [stamp_ns(m)
                                                              for m in scans.messages]


@pytest.mark.timing
@pytest.mark.parametrize('factor', [40.0, 0.0])
def test_any_realtime_factor_keeps_every_scan(ros: LiveRos, factor: float) -> None:
    """Defect 3: the factor topped out at 25 (a 100 Hz tick times a 0.25 s step) and above 1x
    the scans came one per tick. Now 40x runs at 40x, every scan there, 25 ms apart in sim time;
    0 (as fast as possible) runs faster still (faster than a Python reader can take every
    message: a consumer that needs them all uses lockstep)."""
    node = ros.run('rc_sim_engine', 'sim_node', {'world': 'flat_track',
                                                 'realtime_factor': factor})
    achieved, stamps = measure(ros, 4.0)
    # functional bounds only (speed is benchmarks/bench_sim_node.py's job): above the old cap
    # of 25, never above the factor asked for; as fast as possible is not paced at 1x
    if factor > 0:
        assert 26.0 < achieved < 1.1 * factor, node.output()[-2000:]
        assert len(stamps) > 50 and steps(stamps) == {25_000_000}
    else:  # faster than this Python reader can read: what arrives is on the 25 ms grid
        assert achieved > 3.0, node.output()[-2000:]
        assert len(stamps) > 50 and all(s % 25_000_000 == 0 for s in stamps)
        assert min(steps(stamps)) == 25_000_000
    assert node.interrupt() == 0


@pytest.mark.timing
def test_realtime_factor_set_live_and_pause_resume(ros: LiveRos) -> None:
    node = ros.run('rc_sim_engine', 'sim_node', {'world': 'flat_track', 'realtime_factor': 1.0})
    achieved, _ = measure(ros, 2.0)
    assert achieved == pytest.approx(1.0, rel=0.2)
    param_set(ros, '/sim_node', 'realtime_factor', '8.0')
    achieved, _ = measure(ros, 2.0)
    assert achieved == pytest.approx(8.0, rel=0.25)
    params = ros.probe.parameters('/sim_node')  # the same services, without a CLI process
    ok, why = params.set('realtime_factor', -2.0)
    assert not ok and 'realtime_factor' in why
    clock = ros.probe.subscribe(Clock, '/clock', DEEP)
    assert params.set('paused', True) == (True, '')
    node.wait_output('paused at t =')
    time.sleep(0.5)
    clock.clear()
    time.sleep(1.5)
    assert len(clock) == 0  # /clock stands still
    assert params.set('paused', False) == (True, '')
    got = clock.wait(20, timeout=20)
    out = node.wait_output('resumed at t =')
    paused_at = float(out.split('paused at t = ')[-1].split(' s')[0])
    assert clock_ns(got[0]) * 1e-9 == pytest.approx(paused_at + 0.01, abs=0.011)  # no jump
    achieved, _ = measure(ros, 2.0)
    assert achieved == pytest.approx(8.0, rel=0.25)  # the factor set before the pause
    assert node.interrupt() == 0


def record_lockstep_run(ros: LiveRos, load: bool) -> dict[str, list[bytes]]:
    """Every message of a lockstep run with the lane controller until /clock passes 3 s."""
    topics = {'/clock': Clock, '/odom': Odometry, '/tf': TFMessage, '/imu': Imu,
              '/joint_states': JointState, '/scan': LaserScan, '/scan_raw': LaserScan,
              '/cmd_vel': Twist}
    raw: dict[str, list[bytes]] = {name: [] for name in topics}
    subs = [ros.probe.node.create_subscription(kind, name, raw[name].append, DEEP, raw=True)
            for name, kind in topics.items()]
    burners = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
               for _ in range(2 if load else 0)]
    try:
        # started paused: the run waits for its controller only, so every recording
        # subscription (the controller's /cmd_vel too) is connected before it resumes
        node = ros.run('rc_sim_engine', 'sim_node', {
            'world': 'basic_track', 'x': -0.5, 'y': -1.875, 'lockstep': True,
            'use_cmd_vel': True, 'realtime_factor': 0.0, 'lidar_errors': 'harsh', 'seed': 7,
            'paused': True})
        controller = ros.start([sys.executable, str(NODES / 'lane_controller.py'), '--ros-args',
                                '-p', 'lane_y:=-1.6'], 'lane_controller')
        wait_until(lambda: all(sub.get_publisher_count() > 0 for sub in subs), 60,
                   'the recording to connect')
        assert ros.probe.parameters('/sim_node').set('paused', False)[0]
        clock = ros.probe.subscribe(Clock, '/clock', DEEP)
        wait_until(lambda: clock.last() is not None and clock_ns(clock.last()) > 3_200_000_000,
                   120, '3.2 s of lockstep sim time')
        assert node.interrupt() == 0, node.output()[-3000:]
        assert controller.interrupt() == 0
    finally:
        for b in burners:
            b.kill()
            b.wait()
    return raw


def until(messages: list[bytes], kind, limit_ns: int) -> list[bytes]:
    from rclpy.serialization import deserialize_message

    out = []
    for data in messages:
        msg = deserialize_message(data, kind)
        if kind is not Twist and stamp_ns(msg) > limit_ns:
            break
        out.append(data)
    return out


def test_lockstep_runs_are_identical_message_for_message(ros_factory) -> None:
    """Seed 003's time-compressed simulator, over ROS: in lockstep each control period waits for
    the controller's answer, so two runs (one with the CPU loaded) give the same bag."""
    runs = []
    for load in (False, True):
        world = ros_factory()
        runs.append(record_lockstep_run(world, load))
        world.close()
    kinds = {'/clock': Clock, '/odom': Odometry, '/tf': TFMessage, '/imu': Imu,
             '/joint_states': JointState, '/scan': LaserScan, '/scan_raw': LaserScan}
    limit = 3_000_000_000
    for name, kind in kinds.items():
        a, b = (until(run[name], kind, limit) for run in runs)
        assert len(a) > 0.9 * limit / 25_000_000, (name, len(a))
        assert a == b, f'{name}: {len(a)} and {len(b)} messages, first difference at ' \
            f'{next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))}'
    n_odom = len(until(runs[0]['/odom'], Odometry, limit))
    assert runs[0]['/cmd_vel'][:n_odom - 1] == runs[1]['/cmd_vel'][:n_odom - 1]
    # the car followed the controller: it drove, and the commands varied with the stamp
    from rclpy.serialization import deserialize_message

    last = deserialize_message(until(runs[0]['/odom'], Odometry, limit)[-1], Odometry)
    assert last.pose.pose.position.x > 0.5
    speeds = {round(deserialize_message(d, Twist).linear.x, 3) for d in runs[0]['/cmd_vel']}
    assert len(speeds) > 20


def drive(ros: LiveRos, steering: float, wheel_speed: float, sim_seconds: float) -> None:
    """Hold a joint-level command (the mapper's outputs) for ``sim_seconds`` of sim time."""
    probe = ros.probe
    if not hasattr(ros, '_cmd_pubs'):
        ros._cmd_pubs = (probe.publisher(Float64, '/steering_angle'),  # type: ignore[attr-defined]
                         probe.publisher(Float64, '/rear_wheel_speed'))
        ros._clock = probe.subscribe(Clock, '/clock')  # type: ignore[attr-defined]
        for pub in ros._cmd_pubs:  # type: ignore[attr-defined]
            probe.wait_matched(pub)
        ros._clock.wait(1, timeout=30)  # type: ignore[attr-defined]
    steer_pub, wheel_pub = ros._cmd_pubs  # type: ignore[attr-defined]
    start = clock_ns(ros._clock.last())  # type: ignore[attr-defined]
    while clock_ns(ros._clock.last()) - start < sim_seconds * 1e9:  # type: ignore[attr-defined]
        steer_pub.publish(Float64(data=steering))
        wheel_pub.publish(Float64(data=wheel_speed))
        time.sleep(0.02)


def yaw_of(msg: Odometry) -> float:
    q = msg.pose.pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def test_wheel_odometry_both_models_follow_ground_truth_on_curves(ros: LiveRos) -> None:
    """Defect 1: sim_node published identical rear wheel angles, so the default differential
    odometry integrated a straight line while the car turned. Now both models track the
    ground truth /odom through an S-curve (seed 001's odometry, docs/control.md eqs. 6-7)."""
    sim = ros.run('rc_sim_engine', 'sim_node', {'world': 'flat_track', 'realtime_factor': 3.0})
    odo = {model: ros.run('rc_sim_control', 'wheel_odometry',
                          {'model': model, 'odom_topic': f'wheel_odom_{model}'},
                          remap={'__node': f'wheel_odometry_{model}'})
           for model in ('differential', 'bicycle')}
    truth = ros.probe.subscribe(Odometry, '/odom', DEEP)
    est = {model: ros.probe.subscribe(Odometry, f'/wheel_odom_{model}', DEEP) for model in odo}
    for box in (truth, *est.values()):
        box.wait(3, timeout=60)
    # 0.5 m/s: the kinematic bicycle model ignores the tyres' slip, which grows with speed
    drive(ros, 0.25, 10.0, 8.0)  # most of a left circle, then a right turn
    drive(ros, -0.25, 10.0, 4.0)
    drive(ros, 0.0, 0.0, 1.5)
    time.sleep(0.5)
    t_end = truth.last()
    start = truth.messages[0]
    moved = math.hypot(t_end.pose.pose.position.x - start.pose.pose.position.x,
                       t_end.pose.pose.position.y - start.pose.pose.position.y)
    turned = yaw_of(t_end) - yaw_of(start)
    assert moved > 2.0 and abs(turned) > 0.5
    for model, box in est.items():
        first, last = box.messages[0], box.last()
        # the estimate starts at its own origin: compare displacements in the start frame
        dx = last.pose.pose.position.x - first.pose.pose.position.x
        dy = last.pose.pose.position.y - first.pose.pose.position.y
        c, s = math.cos(yaw_of(start)), math.sin(yaw_of(start))
        tx = t_end.pose.pose.position.x - start.pose.pose.position.x
        ty = t_end.pose.pose.position.y - start.pose.pose.position.y
        err = math.hypot(dx - (c * tx + s * ty), dy - (-s * tx + c * ty))
        assert err < 0.05 + 0.01 * moved, (model, err, moved)
        # 2 % of the turn: the kinematic models ignore the tyres' slip (as the 1 % of the path)
        assert yaw_of(last) - yaw_of(first) == pytest.approx(
            turned, abs=0.03 + 0.02 * abs(turned)), model
    for proc in (sim, *odo.values()):
        assert proc.interrupt() == 0


def test_wall_contact_is_logged_and_stalls_the_wheels(ros: LiveRos) -> None:
    """Defect 4: after a wall contact (collision_response stop) nothing was logged and the
    wheel joints kept spinning (/wheel_odom 4.8 m where the car moved 1.9 m)."""
    sim = ros.run('rc_sim_engine', 'sim_node', {'world': 'basic_track', 'x': -0.5,
                                                'y': -1.875, 'realtime_factor': 2.0})
    odo = ros.run('rc_sim_control', 'wheel_odometry')
    truth = ros.probe.subscribe(Odometry, '/odom', DEEP)
    wheel = ros.probe.subscribe(Odometry, '/wheel_odom', DEEP)
    truth.wait(2, timeout=60)
    wheel.wait(2, timeout=60)
    drive(ros, 0.0, 30.0, 3.5)  # 1.5 m/s straight: the wall is about 3 m ahead
    out = sim.wait_output(' hit ')
    assert 'stopped there' in out and "hit box 'walls::" in out
    time.sleep(0.3)
    at_wall = truth.last().pose.pose.position.x, wheel.last().pose.pose.position.x
    drive(ros, 0.0, 30.0, 4.0)  # keep pushing against the wall for 4 s
    time.sleep(0.3)
    pushed = truth.last().pose.pose.position.x - at_wall[0]
    reported = wheel.last().pose.pose.position.x - at_wall[1]
    assert abs(pushed) < 0.02  # the car stands at the wall ...
    assert abs(reported) < 0.05  # ... and its wheel encoders with it (were 0.7 m/s)
    for proc in (sim, odo):
        assert proc.interrupt() == 0


def test_hostile_commands_are_dropped_with_one_throttled_warning(ros: LiveRos) -> None:
    sim = ros.run('rc_sim_engine', 'sim_node', {'world': 'flat_track', 'use_cmd_vel': True,
                                                'realtime_factor': 1.0})
    probe = ros.probe
    truth = probe.subscribe(Odometry, '/odom', DEEP)
    steer = probe.publisher(Float64, '/steering_angle')
    twist = probe.publisher(Twist, '/cmd_vel')
    for pub in (steer, twist):
        probe.wait_matched(pub)
    truth.wait(2, timeout=60)
    for k in range(3000):  # a flood of garbage, as fast as possible
        steer.publish(Float64(data=(math.nan, math.inf, -math.inf)[k % 3]))
        bad = Twist()
        bad.linear.x = math.nan if k % 2 else 1e300 * 1e300
        twist.publish(bad)
    time.sleep(1.0)
    out = sim.output()
    assert 'steering_angle' in out and 'cmd_vel' in out
    warnings = [line for line in out.splitlines() if '[WARN]' in line]
    assert 1 <= len(warnings) <= 20, warnings[:30]  # throttled, not one per message
    # still alive and still obeying valid commands
    good = Twist()
    good.linear.x, good.angular.z = 1.0, 0.0
    start = truth.last().pose.pose.position.x
    for _ in range(60):
        twist.publish(good)
        time.sleep(0.02)
    wait_until(lambda: truth.last().pose.pose.position.x - start > 0.3, 20, 'the car to move')
    assert sim.interrupt() == 0
