"""sim_node over real DDS, timed from outside (prints figures; not a test).

Workload: ``ros2 run rc_sim_engine sim_node`` on ``basic_track`` with the default car: 1 kHz
physics, a 1081-beam lidar at 40 Hz with the ``hokuyo_ust10lx`` error model (so both
``/scan_raw`` and ``/scan``), IMU and ``/clock`` at 100 Hz, odometry, ``/tf`` and joint states
at 50 Hz, ``/cmd_vel`` accepted: every topic published.

Printed:

* the highest real-time factor (``realtime_factor:=0``, as fast as the machine allows), with a
  probe that reads ``/clock`` only and with one that reads every topic (serialised, as a bag
  recorder would);
* the CPU share of the sim_node process at 1x (its user + system time over 20 s of wall time,
  from ``/proc``);
* the ``/cmd_vel`` -> ``/odom`` latency at 1x: wall time from publishing a speed step to the
  first ``/odom`` whose twist shows it (includes the wait for the next 100 Hz tick and the
  50 Hz odometry sample; the default car has no command latency).

Run (repository root): ``. scripts/setup_ros.sh && python benchmarks/bench_sim_node.py
[--rounds 3]``. Goal on a 2-core machine: >= 100x (50x at the very least), < 30 % of one core at
1x.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import shutil
import statistics
import sys
import tempfile
import time

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'tests_live'))

from live_harness import LiveRos, missing_ros, wait_until  # noqa: E402

WORKLOAD = {'world': 'basic_track', 'x': -0.5, 'y': -1.875, 'lidar_errors': 'hokuyo_ust10lx',
            'use_cmd_vel': True}
TOPICS = ('/clock', '/odom', '/tf', '/imu', '/joint_states', '/scan_raw', '/scan')


def _world(folder: Path) -> LiveRos:
    env = dict(os.environ)
    env.update(ROS_HOME=str(folder), ROS_LOG_DIR=str(folder / 'log'), TMPDIR=str(folder),
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1')
    env.pop('ROS_DOMAIN_ID', None)
    sub = Path(tempfile.mkdtemp(dir=folder))
    return LiveRos(sub, env)


def _sim_pid(ros: LiveRos) -> int:
    """The sim_node Python process (``ros2 run`` starts it as a child)."""
    leader = ros.processes[0].pid

    def child() -> int | None:
        for entry in Path('/proc').iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / 'stat').read_text()
                cmd = (entry / 'cmdline').read_bytes()
            except OSError:
                continue
            ppid = int(stat.rsplit(')', 1)[1].split()[1])
            if ppid == leader and b'sim_node' in cmd:
                return int(entry.name)
        return None

    return wait_until(child, 30, 'the sim_node process')


def _cpu_seconds(pid: int) -> float:
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def highest_factor(folder: Path, every_topic: bool, seconds: float = 8.0) -> float:
    from rclpy.qos import QoSProfile
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import LaserScan

    ros = _world(folder)
    try:
        ros.run('rc_sim_engine', 'sim_node', {**WORKLOAD, 'realtime_factor': 0.0})
        deep = QoSProfile(depth=1000)
        clock = ros.probe.subscribe(Clock, '/clock', deep)
        if every_topic:
            from geometry_msgs.msg import Twist  # noqa: F401 - types of the raw readers
            from nav_msgs.msg import Odometry
            from sensor_msgs.msg import Imu, JointState
            from tf2_msgs.msg import TFMessage

            kinds = {'/odom': Odometry, '/tf': TFMessage, '/imu': Imu,
                     '/joint_states': JointState, '/scan_raw': LaserScan, '/scan': LaserScan}
            for name, kind in kinds.items():
                ros.probe.node.create_subscription(kind, name, lambda _m: None, deep, raw=True)
        clock.wait(50, timeout=60)
        time.sleep(1.0)  # past discovery and start-up
        clock.clear()
        time.sleep(seconds)
        stamped = clock.stamped
        (w0, c0), (w1, c1) = stamped[0], stamped[-1]
        sim = (c1.clock.sec - c0.clock.sec) + (c1.clock.nanosec - c0.clock.nanosec) * 1e-9
        return sim / (w1 - w0)
    finally:
        ros.close()


def cpu_share_at_1x(folder: Path, seconds: float = 20.0) -> float:
    from rosgraph_msgs.msg import Clock

    ros = _world(folder)
    try:
        ros.run('rc_sim_engine', 'sim_node', {**WORKLOAD, 'realtime_factor': 1.0})
        ros.probe.subscribe(Clock, '/clock').wait(20, timeout=60)
        pid = _sim_pid(ros)
        time.sleep(2.0)
        c0, t0 = _cpu_seconds(pid), time.monotonic()
        time.sleep(seconds)
        return (_cpu_seconds(pid) - c0) / (time.monotonic() - t0)
    finally:
        ros.close()


def latency_at_1x(folder: Path, trials: int = 20) -> list[float]:
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry

    ros = _world(folder)
    try:
        ros.run('rc_sim_engine', 'sim_node', {**WORKLOAD, 'world': 'flat_track', 'x': 0.0,
                                              'y': 0.0, 'realtime_factor': 1.0})
        pub = ros.probe.publisher(Twist, '/cmd_vel')
        odom = ros.probe.subscribe(Odometry, '/odom')
        ros.probe.wait_matched(pub)
        odom.wait(10, timeout=60)
        out = []
        for k in range(trials):
            stop = Twist()
            pub.publish(stop)
            wait_until(lambda: abs(odom.last().twist.twist.linear.x) < 1e-4, 20, 'a stop')
            time.sleep(0.1 + 0.013 * k)  # spread the step over the tick phases
            go = Twist()
            go.linear.x = 1.0
            odom.clear()
            t0 = time.monotonic()
            pub.publish(go)

            def moving() -> float | None:
                for t, msg in odom.stamped:
                    if msg.twist.twist.linear.x > 1e-4:
                        return t
                return None

            out.append(wait_until(moving, 20, 'the step in /odom') - t0)
        return out
    finally:
        ros.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rounds', type=int, default=3, help='repetitions of the factor figure')
    args = parser.parse_args()
    missing = missing_ros()
    if missing:
        print(f'error: needs ROS 2 (. scripts/setup_ros.sh): {missing}', file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix='bench_sim_node_'))
    try:
        print(f'sim_node, {WORKLOAD["world"]}, 1081-beam lidar at 40 Hz with errors, every topic '
              f'({", ".join(TOPICS)}), {os.cpu_count()} cores')
        for every in (False, True):
            factors = [highest_factor(folder, every) for _ in range(args.rounds)]
            who = 'a reader of every topic' if every else 'a /clock reader only'
            print(f'  highest real-time factor, {who}: median {statistics.median(factors):.0f}x '
                  f'(rounds: {", ".join(f"{f:.0f}" for f in factors)})')
        share = cpu_share_at_1x(folder)
        print(f'  CPU at 1x: {100 * share:.1f} % of one core (sim_node process, 20 s)')
        lat = sorted(latency_at_1x(folder))
        print(f'  /cmd_vel -> /odom latency at 1x: median {1e3 * statistics.median(lat):.1f} ms, '
              f'max {1e3 * lat[-1]:.1f} ms over {len(lat)} steps')
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
