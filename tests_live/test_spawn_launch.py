"""``ros2 launch rc_sim_description spawn_rc_car.launch.py backend:=embedded`` live, end to end.

Started as a user starts it (``ros2 launch ... name:=value``, its own process group, Ctrl-C to
end it), judged by the probe and the ``ros2`` CLI. References the launch did not produce:

* the graph a navigation stack needs (REP 105: ``odom -> base_link`` on /tf, the sensor frames
  below base_link on /tf_static, one tree; every message's frame id in that tree), and the
  joint names of /joint_states = the movable joints of the URDF on /robot_description;
* motion: ground-truth /odom under a constant ``ros2 topic pub /cmd_vel`` (yaw_rate mode: linear.x
  = speed [m/s], angular.z = yaw rate [rad/s], + = counter-clockwise, REP 103), measured from the
  poses (finite differences over seconds of sim time), not from the node's own twist alone;
* ``realtime_factor``: sim time (/clock) against the probe's wall clock, before and after
  ``ros2 param set``;
* Ctrl-C: ``ros2 launch`` exits 0 and every process it started is gone.

The gz branch cannot run here (no Gazebo): its launch actions are built and checked statically.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import importlib.util
from itertools import pairwise
import math
from pathlib import Path
import re
import signal
import tempfile
import time
from typing import Any
import xml.etree.ElementTree as ET

from live_harness import LiveRos, RosProcess, wait_until
from nav_msgs.msg import Odometry
import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState, LaserScan
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
import yaml

REPO = Path(__file__).resolve().parents[1]
LAUNCH_FILE = 'spawn_rc_car.launch.py'
LATCHED = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)
ONE_CAR_NODES = {'/sim_node', '/robot_state_publisher', '/turning_command_mapper',
                 '/rear_wheel_speed_bridge', '/wheel_odometry', '/lidar_error_injector'}
PER_CAR_NODES = ('robot_state_publisher', 'turning_command_mapper', 'rear_wheel_speed_bridge',
                 'wheel_odometry')
NAV_TOPICS = {'/scan': 'sensor_msgs/msg/LaserScan', '/odom': 'nav_msgs/msg/Odometry',
              '/tf': 'tf2_msgs/msg/TFMessage', '/tf_static': 'tf2_msgs/msg/TFMessage',
              '/joint_states': 'sensor_msgs/msg/JointState', '/imu': 'sensor_msgs/msg/Imu',
              '/robot_description': 'std_msgs/msg/String', '/clock': 'rosgraph_msgs/msg/Clock',
              '/cmd_vel': 'geometry_msgs/msg/Twist'}
START_TIMEOUT_S = 120.0  # a loaded 2-core machine starts 6-13 Python processes


# --------------------------------------------------------------------------- helpers
def launch(ros: LiveRos, nodes: Iterable[str], **arguments: Any) -> RosProcess:
    """Start the launch (embedded backend) and wait until every node in ``nodes`` is up."""
    proc = ros.launch('rc_sim_description', LAUNCH_FILE, backend='embedded', **arguments)
    want = set(nodes)

    def up() -> bool:
        if not proc.alive():
            raise AssertionError(f'ros2 launch exited ({proc.popen.returncode}):\n'
                                 f'{proc.output()[-4000:]}')
        return want <= set(ros.probe.node_names())
    try:
        wait_until(up, START_TIMEOUT_S, f'nodes {sorted(want)}', period=0.2)
    except AssertionError as exc:
        missing = sorted(want - set(ros.probe.node_names()))
        raise AssertionError(f'{exc}; missing {missing}:\n{proc.output()[-4000:]}') from None
    return proc


def stamp_s(msg: Any) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def yaw_of(msg: Odometry) -> float:
    q = msg.pose.pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def xy(msg: Odometry) -> tuple[float, float]:
    return msg.pose.pose.position.x, msg.pose.pose.position.y


def tf_edges(messages: Iterable[TFMessage]) -> dict[str, str]:
    """child frame -> parent frame; AssertionError when a child has two parents (not a tree)."""
    parent: dict[str, str] = {}
    for msg in messages:
        for t in msg.transforms:
            old = parent.setdefault(t.child_frame_id, t.header.frame_id)
            assert old == t.header.frame_id, (f'{t.child_frame_id} has two parents: {old} and '
                                              f'{t.header.frame_id}')
    return parent


def root_path(parent: dict[str, str], frame: str) -> list[str]:
    """The chain from ``frame`` up to the root of its tree."""
    chain = [frame]
    while chain[-1] in parent:
        chain.append(parent[chain[-1]])
        assert len(chain) < 50, f'cycle in the tf tree at {frame}'
    return chain


def urdf_joints(urdf: str) -> tuple[set[str], list[tuple[str, str]]]:
    """(movable joint names, [(parent link, child link)] of the fixed joints) of a URDF."""
    root = ET.fromstring(urdf)
    movable = {j.get('name') for j in root.findall('joint') if j.get('type') != 'fixed'}
    fixed = [(j.find('parent').get('link'), j.find('child').get('link'))
             for j in root.findall('joint') if j.get('type') == 'fixed']
    return movable, fixed


def pub_cmd_vel(ros: LiveRos, topic: str, v: float, z: float) -> RosProcess:
    """``ros2 topic pub -r 10 TOPIC geometry_msgs/msg/Twist ...`` as a user types it."""
    return ros.start(['ros2', 'topic', 'pub', '-r', '10', topic, 'geometry_msgs/msg/Twist',
                      f'{{linear: {{x: {v}}}, angular: {{z: {z}}}}}'], f'pub {topic}')


def odom_window(inbox: Any, after_s: float, span_s: float, timeout: float = 90.0
                ) -> list[Odometry]:
    """Odometry messages with sim stamps in [after_s, after_s + span_s] (waits for them)."""
    wait_until(lambda: inbox.last() is not None and stamp_s(inbox.last()) >= after_s + span_s,
               timeout, f'{span_s:g} s of {inbox.topic} after t = {after_s:.2f} s')
    return [m for m in inbox.messages if after_s <= stamp_s(m) <= after_s + span_s]


def measured_motion(msgs: Sequence[Odometry]) -> tuple[float, float]:
    """(mean speed [m/s], mean yaw rate [rad/s]) from the poses: path length / time and unwrapped
    heading change / time."""
    t = np.array([stamp_s(m) for m in msgs])
    p = np.array([xy(m) for m in msgs])
    yaw = np.unwrap([yaw_of(m) for m in msgs])
    duration = t[-1] - t[0]
    path = float(np.sum(np.hypot(*np.diff(p, axis=0).T)))
    return path / duration, float(yaw[-1] - yaw[0]) / duration


def drive_and_measure(ros: LiveRos, odom: Any, topic: str, v: float, z: float
                      ) -> tuple[float, float, RosProcess, list[Odometry]]:
    """Publish (v, z) until the car is at speed, then measure 2 s of sim time: (speed, yaw
    rate, the running ``ros2 topic pub``, the window's messages)."""
    pub = pub_cmd_vel(ros, topic, v, z)
    wait_until(lambda: odom.last() is not None
               and abs(odom.last().twist.twist.linear.x) > 0.8 * abs(v)
               and (abs(z) < 1e-9 or odom.last().twist.twist.angular.z * z > 0.5 * z * z),
               90.0, f'{topic} to take effect ({pub.output()[-500:]})', period=0.1)
    settle = stamp_s(odom.last()) + 1.0
    window = odom_window(odom, settle, 2.0)
    speed, yaw_rate = measured_motion(window)
    return speed, yaw_rate, pub, window


def ctrl_c(ros: LiveRos, proc: RosProcess, timeout: float = 60.0) -> int:
    """Ctrl-C the launch (SIGINT to its process group, as a terminal does); its exit status.
    AssertionError when a process it started is still there once it exited."""
    pids = [int(p) for p in re.findall(r'process started with pid \[(\d+)\]', proc.output())]
    assert pids, proc.output()[-2000:]
    proc.signal(signal.SIGINT)
    status = proc.popen.wait(timeout)

    def alive(pid: int) -> bool:
        try:
            with open(f'/proc/{pid}/stat', encoding='ascii') as f:
                return f.read().rsplit(')', 1)[1].split()[0] != 'Z'  # a zombie has ended
        except (FileNotFoundError, ProcessLookupError):
            return False
    deadline = time.monotonic() + 10.0  # orphans are reaped by init within moments
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if alive(p)]
    proc.wait(5.0)  # the harness's clean-up (SIGKILL to what is left of the group)
    assert not left, f'processes left after Ctrl-C: {left}\n{proc.output()[-3000:]}'
    return status


# --------------------------------------------------------------------------- one car
def test_embedded_launch_serves_a_navigation_stack_and_ends_on_ctrl_c(ros):
    proc = launch(ros, ONE_CAR_NODES)
    probe = ros.probe
    odom = probe.subscribe(Odometry, '/odom')
    tf = probe.subscribe(TFMessage, '/tf', 100)
    scan = probe.subscribe(LaserScan, '/scan', qos_profile_sensor_data)
    imu = probe.subscribe(Imu, '/imu')
    joints = probe.subscribe(JointState, '/joint_states')
    clock = probe.subscribe(Clock, '/clock')
    for inbox in (odom, tf, scan, imu, joints, clock):
        inbox.wait(3, timeout=60)
    # latched: a subscriber that comes late still gets them (transient local)
    tf_static = probe.subscribe(TFMessage, '/tf_static', LATCHED)
    description = probe.subscribe(String, '/robot_description', LATCHED)
    tf_static.wait(1, timeout=30)
    urdf = description.wait(1, timeout=30)[0].data

    # what a user sees with the ros2 CLI
    for spin_s in (3, 6, 12):  # a loaded machine may need a longer discovery window
        nodes = ros.cli('node', 'list', '--no-daemon', '--spin-time', str(spin_s)).stdout.split()
        if set(nodes) >= ONE_CAR_NODES:
            break
    assert set(nodes) >= ONE_CAR_NODES, nodes
    listed = ros.cli('topic', 'list', '-t', '--no-daemon', '--spin-time', '3').stdout
    types = dict(re.findall(r'^(\S+) \[(\S+)\]$', listed, re.M))
    for topic, msgtype in NAV_TOPICS.items():
        assert types.get(topic) == msgtype, (topic, listed)

    # frames: one tree odom -> base_link -> ... -> laser, imu_link; every frame id in it
    movable, fixed = urdf_joints(urdf)
    static_edges = tf_edges(tf_static.messages)
    assert {(p, c) for c, p in static_edges.items()} == set(fixed)  # the URDF's fixed joints
    parent = {**static_edges, **tf_edges(tf.messages)}
    assert parent['base_link'] == 'odom'
    for frame in (scan.last().header.frame_id, imu.last().header.frame_id, 'laser', 'imu_link'):
        assert root_path(parent, frame)[-2:] == ['base_link', 'odom'], (frame, parent)
    assert scan.last().header.frame_id == 'laser'
    assert imu.last().header.frame_id == 'imu_link'
    last = odom.last()
    assert (last.header.frame_id, last.child_frame_id) == ('odom', 'base_link')
    assert set(joints.last().name) == movable  # what robot_state_publisher needs

    # stamps are sim time, from /clock (use_sim_time consumers)
    t_clock = [c.clock.sec + 1e-9 * c.clock.nanosec for c in clock.messages]
    assert t_clock[-1] > t_clock[0] and all(b >= a for a, b in pairwise(t_clock))
    assert abs(stamp_s(odom.last()) - t_clock[-1]) < 1.0

    assert ctrl_c(ros, proc) == 0


def test_ctrl_c_ends_every_node_cleanly(ros):
    """Every rc-sim node of the launch ends cleanly on Ctrl-C, although it gets SIGINT twice
    (the terminal's, to the whole process group, and the one ``ros2 launch`` forwards). The
    robot_state_publisher stand-in of the overlay kit is not rc-sim's and is left out."""
    proc = launch(ros, ONE_CAR_NODES)
    assert ctrl_c(ros, proc) == 0
    out = proc.output()
    ours = ('sim_node', 'turning_command_mapper', 'rear_wheel_speed_bridge', 'wheel_odometry',
            'lidar_error_injector')
    for name in ours:
        assert re.search(rf'\[{name}-\d+\]: process has finished cleanly', out), (
            name, out[-3000:])
        printed = [line for line in out.splitlines() if re.match(rf'\[{name}-\d+\] ', line)]
        assert not any('Traceback' in line for line in printed), '\n'.join(printed)


def test_cmd_vel_from_ros2_topic_pub_drives_the_car_as_commanded(ros):
    launch(ros, ONE_CAR_NODES, world='flat_track')  # no walls in the way
    odom = ros.probe.subscribe(Odometry, '/odom', 100)
    odom.wait(3, timeout=60)
    v, z = 0.5, 0.4  # yaw_rate mode: a left circle of radius v / z = 1.25 m
    speed, yaw_rate, pub, _ = drive_and_measure(ros, odom, '/cmd_vel', v, z)
    assert speed == pytest.approx(v, rel=0.1, abs=0.03)
    assert yaw_rate == pytest.approx(z, rel=0.15, abs=0.03)  # counter-clockwise: + (REP 103)
    pub.interrupt()
    speed, yaw_rate, pub, window = drive_and_measure(ros, odom, '/cmd_vel', v, -z)  # a right turn
    assert speed == pytest.approx(v, rel=0.1, abs=0.03)
    assert yaw_rate == pytest.approx(-z, rel=0.15, abs=0.03)
    # the node's own twist agrees with its poses (base_link frame: forward, no side slip to
    # speak of at 0.2 m/s^2 lateral acceleration)
    twist = np.mean([[m.twist.twist.linear.x, m.twist.twist.linear.y, m.twist.twist.angular.z]
                     for m in window], axis=0)
    assert twist == pytest.approx([speed, 0.0, yaw_rate], abs=0.03)
    pub.interrupt()


@pytest.mark.timing
def test_ros2_param_set_realtime_factor_takes_effect(ros):
    launch(ros, {'/sim_node'}, world='flat_track', lidar=False)
    clock = ros.probe.subscribe(Clock, '/clock', 100)
    clock.wait(3, timeout=60)

    def ratio(span_s: float = 4.0) -> float:
        """Sim seconds per wall second over ``span_s`` of the probe's monotonic clock (slope of a
        least-squares line through the /clock receipts)."""
        clock.clear()
        wait_until(lambda: len(clock) > 2 and clock.stamped[-1][0] - clock.stamped[0][0] > span_s,
                   span_s + 30.0, f'{span_s:g} s of /clock')
        wall, sim = zip(*((t, m.clock.sec + 1e-9 * m.clock.nanosec) for t, m in clock.stamped))
        return float(np.polyfit(wall, sim, 1)[0])

    before = ratio()
    done = ros.cli('param', 'set', '--no-daemon', '--spin-time', '3', '/sim_node',
                   'realtime_factor', '2.0')
    assert 'Set parameter successful' in done.stdout, done.stdout + done.stderr
    after = ratio()
    assert before == pytest.approx(1.0, abs=0.25)
    assert after == pytest.approx(2.0, rel=0.2), (before, after)
    got = ros.cli('param', 'get', '--no-daemon', '--spin-time', '3', '/sim_node',
                  'realtime_factor').stdout
    assert '2.0' in got, got
    bad = ros.cli('param', 'set', '--no-daemon', '--spin-time', '3', '/sim_node',
                  'realtime_factor', '-1.0', check=False)
    assert 'Set parameter successful' not in bad.stdout, bad.stdout
    assert '2.0' in ros.cli('param', 'get', '--no-daemon', '--spin-time', '3', '/sim_node',
                            'realtime_factor').stdout


def nonfinite_fraction(msgs: Sequence[LaserScan]) -> float:
    r = np.concatenate([np.asarray(m.ranges, dtype=float) for m in msgs])
    return float(np.mean(~np.isfinite(r)))


def test_lidar_errors_harsh_reach_scan(ros):
    """harsh (rc_sim_sensors/config/lidar_errors/harsh.yaml): dropout 0.1 (+inf), latency 0.05 s:
    /scan has more holes than the ideal /scan_raw and lags it."""
    launch(ros, ONE_CAR_NODES, lidar_errors='harsh')
    raw = ros.probe.subscribe(LaserScan, '/scan_raw', qos_profile_sensor_data)
    scan = ros.probe.subscribe(LaserScan, '/scan', qos_profile_sensor_data)
    scan.wait(20, timeout=90)
    raw.wait(20, timeout=90)
    assert scan.last().header.frame_id == 'laser'
    holes = nonfinite_fraction(scan.messages) - nonfinite_fraction(raw.messages)
    assert holes > 0.05, holes
    raw_stamps = {stamp_s(m) for m in raw.messages}
    lagged = [s for s in (stamp_s(m) for m in scan.messages)
              if any(abs(s - 0.05 - r) < 1e-3 for r in raw_stamps)]
    assert len(lagged) >= len(scan.messages) // 2, 'stamps of /scan are not /scan_raw + 0.05 s'


# --------------------------------------------------------------------------- several cars
def three_cars(ros: LiveRos, **arguments: Any) -> tuple[list[Any], list[Any], list[Any]]:
    """Launch 3 cars (on flat_track unless ``world`` says otherwise); their /odom, /scan and
    /scan_raw inboxes (1 message each)."""
    names = {'/sim_node'} | {f'/car_{i}/{n}' for i in range(3) for n in PER_CAR_NODES}
    arguments.setdefault('world', 'flat_track')
    proc = launch(ros, names, num_cars=3, **arguments)
    probe = ros.probe
    odom = [probe.subscribe(Odometry, f'/car_{i}/odom', 100) for i in range(3)]
    scans = [probe.subscribe(LaserScan, f'/car_{i}/scan', qos_profile_sensor_data)
             for i in range(3)]
    raws = [probe.subscribe(LaserScan, f'/car_{i}/scan_raw', qos_profile_sensor_data)
            for i in range(3)]
    try:
        for inbox in (*odom, *scans, *raws):
            inbox.wait(1, timeout=90)
    except AssertionError as exc:
        raise AssertionError(f'{exc}\n{proc.output()[-3000:]}') from None
    return odom, scans, raws


def test_three_cars_each_with_its_topics_frames_and_own_commands(ros):
    odom, scans, _ = three_cars(ros)
    probe = ros.probe
    tf = probe.subscribe(TFMessage, '/tf', 100)
    tf_static = probe.subscribe(TFMessage, '/tf_static', LATCHED)
    descriptions = [probe.subscribe(String, f'/car_{i}/robot_description', LATCHED)
                    for i in range(3)]
    for inbox in descriptions:
        inbox.wait(1, timeout=60)
    wait_until(lambda: len(tf_edges(tf_static.messages)) >= 9, 60, "the 3 cars' /tf_static")
    tf.wait(10, timeout=30)
    parent = {**tf_edges(tf_static.messages), **tf_edges(tf.messages)}
    for i in range(3):
        p = f'car_{i}/'
        last = odom[i].last()
        assert (last.header.frame_id, last.child_frame_id) == (p + 'odom', p + 'base_link')
        assert scans[i].last().header.frame_id == p + 'laser'
        for frame in (p + 'laser', p + 'imu_link'):
            assert root_path(parent, frame)[-2:] == [p + 'base_link', p + 'odom'], parent

    # commanding car 2 (the last of the grid: reversing takes it away from the others) moves it
    # alone
    start = [xy(o.last()) for o in odom]
    speed, _, pub, _ = drive_and_measure(ros, odom[2], '/car_2/cmd_vel', -0.4, 0.0)
    assert speed == pytest.approx(0.4, rel=0.15, abs=0.03)
    now = [xy(o.last()) for o in odom]
    moved = [math.dist(a, b) for a, b in zip(start, now)]
    assert moved[2] > 0.5 and moved[0] < 0.01 and moved[1] < 0.01, moved
    pub.interrupt()


def test_three_cars_with_lidar_errors_harsh(ros):
    """sim_node applies the model itself among several cars: every car's /scan has the preset's
    holes (dropout 0.1) that its /scan_raw has not, for at least 20 s (on basic_track: on
    flat_track car 0 sees nothing but infinity, where a hole is no different)."""
    _, scans, raws = three_cars(ros, lidar_errors='harsh', world='basic_track')
    for i in range(3):
        scans[i].clear()
        raws[i].clear()
    for i in range(3):
        scans[i].wait(200, timeout=90)  # 40 Hz: 5 s or more of scans
        holes = nonfinite_fraction(scans[i].messages) - nonfinite_fraction(raws[i].messages)
        assert holes > 0.05, (i, holes)
        assert scans[i].last().header.frame_id == f'car_{i}/laser'


# --------------------------------------------------------------------------- gz, statically
def _gz_actions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cars: str) -> list[Any]:
    """The launch actions of backend:=gz (its _setup on a LaunchContext); ros_gz_sim's share
    directory is faked (Gazebo and ros_gz are not installed here)."""
    import launch as launch_pkg

    from rc_sim_description.paths import share_path

    spec = importlib.util.spec_from_file_location('spawn_rc_car_launch',
                                                  share_path(f'launch/{LAUNCH_FILE}'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    real = module.get_package_share_directory
    fake = tmp_path / 'ros_gz_sim'
    (fake / 'launch').mkdir(parents=True, exist_ok=True)
    (fake / 'launch' / 'gz_sim.launch.py').write_text('')
    monkeypatch.setattr(module, 'get_package_share_directory',
                        lambda pkg: str(fake) if pkg == 'ros_gz_sim' else real(pkg))
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))  # the per-car bridge files
    description = module.generate_launch_description()
    context = launch_pkg.LaunchContext()
    for entity in description.entities:
        if isinstance(entity, launch_pkg.actions.DeclareLaunchArgument):
            context.launch_configurations[entity.name] = ''.join(
                s.perform(context) for s in entity.default_value or [])
    context.launch_configurations.update(backend='gz', num_cars=cars)
    return module._setup(context)


def _node_info(action: Any) -> tuple[str, str, str | None, list[str]]:
    """(package, executable, namespace, arguments) of a launch_ros Node before execution."""
    def text(value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str):
            return value
        return ''.join(getattr(s, 'text', str(s)) for s in value)
    return (text(action.node_package), text(action.node_executable),
            text(getattr(action, '_Node__node_namespace', None)),
            [text(a) for a in (getattr(action, '_Node__arguments', None) or [])])


@pytest.mark.parametrize('cars', ['1', '3'])
def test_gz_branch_builds_the_documented_actions(monkeypatch, tmp_path, cars):
    from launch import LaunchContext
    from launch.actions import IncludeLaunchDescription, RegisterEventHandler
    from launch.events import Shutdown
    from launch_ros.actions import Node

    actions = _gz_actions(monkeypatch, tmp_path, cars)
    nodes = [_node_info(a) for a in actions if isinstance(a, Node)]
    includes = [a for a in actions if isinstance(a, IncludeLaunchDescription)]
    by_exe: dict[str, list[tuple[str, str, str | None, list[str]]]] = {}
    for info in nodes:
        by_exe.setdefault(info[1], []).append(info)
    n = int(cars)
    assert len(by_exe['robot_state_publisher']) == n
    assert len(by_exe['create']) == n and all(i[0] == 'ros_gz_sim' for i in by_exe['create'])
    assert len(by_exe['lidar_error_injector']) == n
    names = [a[a.index('-name') + 1] for *_, a in by_exe['create']]
    assert names == (['rc_car'] if n == 1 else [f'rc_car_{i}' for i in range(n)])
    if n > 1:
        assert sorted(i[2] for i in by_exe['robot_state_publisher']) == [
            f'car_{i}' for i in range(n)]
        assert len(by_exe['parameter_bridge']) == n + 1  # one per car and the /clock bridge
    # gz server + one control chain per car
    sources = [''.join(getattr(t, 'text', str(t)) for t in
                       a.launch_description_source._LaunchDescriptionSource__location)
               for a in includes]
    assert sum(s.endswith('gz_sim.launch.py') for s in sources) == 1
    assert sum(s.endswith('control.launch.py') for s in sources) == n
    for i in by_exe.get('sim_node', []):
        raise AssertionError(f'sim_node in the gz branch: {i}')
    # several cars: each bridge's config file holds that car's topics; the files go at shutdown
    configs = sorted(tmp_path.glob('rc_sim_bridge_*/*.yaml'))
    assert len(configs) == (0 if n == 1 else n + 1)
    for config in configs:
        entries = yaml.safe_load(config.read_text())
        car = config.stem.removeprefix('rc_car_')
        for e in entries:
            assert (e['ros_topic_name'] in ('/clock', '/tf')) == (config.stem == 'clock' or
                                                                  e['ros_topic_name'] == '/tf')
            if config.stem != 'clock' and e['ros_topic_name'] != '/tf':
                assert e['ros_topic_name'].startswith(f'/car_{car}/'), e
    handlers = [a for a in actions if isinstance(a, RegisterEventHandler)]
    assert len(handlers) == (0 if n == 1 else 1)
    for handler in handlers:
        handler.event_handler.handle(Shutdown(), LaunchContext())
    assert not list(tmp_path.glob('rc_sim_bridge_*'))


def test_pid_check_of_ctrl_c_sees_a_leftover_process(ros):
    """The check of :func:`ctrl_c` can fail: a process that ignores SIGINT outlives the shell
    that started it and is reported."""
    proc = ros.start(['bash', '-c', 'trap "" INT; (trap "" INT; exec sleep 60) & '
                      'echo "process started with pid [$!]"; trap - INT; sleep 60'], 'leftover')
    proc.wait_output('process started with pid')
    with pytest.raises(AssertionError, match='processes left after Ctrl-C'):
        ctrl_c(ros, proc, timeout=20)
