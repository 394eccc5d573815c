"""lidar_error_injector.launch.py live: ``ros2 launch`` as a user types it, judged by the probe and
the ros2 CLI.

The launched node must carry the arguments (``ros2 param get``: the overrides, and the preset's
values for the keys not given), process scans with them (the pooled within-scan spread of z - d
is sqrt(sigma^2 + q^2 / 12): noise plus the rounding to the preset's 1 mm quantum, Sheppard's
correction; the per-scan mean is removed, which takes out the slowly drifting bias), stop on a
bad argument with one error line and a non-zero exit, and end with exit 0 on Ctrl-C.
"""

from __future__ import annotations

import math
import time

from live_harness import wait_until
import numpy as np
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import LaserScan

LAUNCH = 'lidar_error_injector.launch.py'
NODE = '/lidar_error_injector'
Z = 5.0
BEAMS = 1081
INCREMENT = 1.5 * math.pi / (BEAMS - 1)


def _get(ros, name: str) -> str:
    done = ros.cli('param', 'get', '--no-daemon', '--spin-time', '3', NODE, name)
    return done.stdout.strip()


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if 'ERROR' in line or 'error:' in line]


def test_launch_starts_the_node_with_its_arguments_and_ends_on_ctrl_c(ros):
    proc = ros.launch('rc_sim_sensors', LAUNCH, preset='hokuyo_ust10lx', noise_stddev=0.02,
                      seed=7)
    out = ros.probe.subscribe(LaserScan, '/scan',
                              QoSProfile(depth=500, reliability=ReliabilityPolicy.BEST_EFFORT))
    pub = ros.probe.publisher(LaserScan, '/scan_raw', qos_profile_sensor_data)
    ros.probe.wait_matched(pub, timeout=60.0)
    sub = next(s for s in ros.probe.node.subscriptions if s.topic_name == '/scan')
    wait_until(lambda: sub.get_publisher_count() >= 1, 30.0, 'the node to publish /scan')
    assert proc.alive(), proc.output()
    # the arguments, and the preset's values of the keys not given (hokuyo_ust10lx.yaml)
    assert _get(ros, 'noise_stddev') == 'Double value is: 0.02'
    assert _get(ros, 'seed') == 'Integer value is: 7'
    assert _get(ros, 'range_max') == 'Double value is: 10.0'
    assert _get(ros, 'range_resolution') == 'Double value is: 0.001'
    assert _get(ros, 'preset') == 'String value is: hokuyo_ust10lx'
    # scans go through with sigma = 0.02 (not the preset's 0.0133)
    d = np.full(BEAMS, 3.0)
    t0 = 10**12
    for k in range(80):
        msg = LaserScan()
        msg.header.frame_id = 'laser'
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t0 + k * 25_000_000, 10**9)
        msg.angle_min, msg.angle_increment = -0.75 * math.pi, INCREMENT
        msg.range_min, msg.range_max = 0.02, 30.0
        msg.ranges = d.astype(np.float32).tolist()
        pub.publish(msg)
        time.sleep(0.02)
    wait_until(lambda: len(out) >= 70, 30.0, '70 scans on /scan')
    time.sleep(1.0)
    z = np.array([m.ranges for m in out.messages], dtype=np.float64)
    assert all(m.range_max == pytest.approx(10.0) for m in out.messages)  # the preset's limit
    dropped = ~np.isfinite(z)
    assert dropped.mean() < 0.01  # preset: 0.1 % dropout
    within = []
    for row, gone in zip(z, dropped):
        e = row[~gone] - 3.0
        within.append((e - e.mean()) ** 2)
    n = sum(w.size for w in within) - len(within)  # one degree of freedom per scan mean
    var = sum(w.sum() for w in within) / n
    expected = 0.02**2 + 0.001**2 / 12.0
    assert abs(var - expected) < Z * expected * math.sqrt(2.0 / n), math.sqrt(var)
    steps = z[~dropped] / 0.001
    np.testing.assert_allclose(steps, np.round(steps), rtol=0, atol=1e-3)
    # Ctrl-C: the launch forwards it, the node ends cleanly, exit 0
    assert proc.interrupt() == 0, proc.output()[-3000:]
    assert 'process has finished cleanly' in proc.output(), proc.output()[-3000:]


@pytest.mark.parametrize(('arguments', 'fragment'), [
    ({'preset': 'hokuyo_ust10lx', 'noise_stddev': -1}, 'noise_stddev: must be >= 0'),
    ({'preset': 'hokuyo'}, "unknown lidar error preset 'hokuyo'"),
    ({'seed': 'abc'}, 'seed: must be an integer'),
    ({'noise_stdev': 0.02}, "did you mean 'noise_stddev'"),
    ({'dropout_probability': 1.5}, 'dropout_probability: must be a probability'),
    ({'range_min': 12.0, 'preset': 'hokuyo_ust10lx'}, 'range_min: must be < range_max'),
])
def test_bad_argument_stops_the_launch_with_one_line(ros, arguments, fragment):
    proc = ros.launch('rc_sim_sensors', LAUNCH, **arguments)
    status = proc.wait(60.0)
    output = proc.output()
    assert status not in (0, None) and status > 0, (status, output)
    errors = _error_lines(output)
    assert len(errors) == 1 and fragment in errors[0], output
    assert 'Traceback' not in output
    assert 'process started' not in output, output
