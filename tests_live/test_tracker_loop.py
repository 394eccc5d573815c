"""trajectory_tracker closing the loop around sim_node over DDS.

The tracker (its own process, sim time) reads the ground truth /odom of sim_node and sends
/cmd_vel, which sim_node maps itself (``use_cmd_vel``). The error is computed here, independently
of the tracker's own /tracking_error: the centre of mass of /odom (c = base_link + lr (cos psi,
sin psi), docs/tracking.md) against the reference path the tracker latched on /reference_path,
whose poses carry their reference times. docs/tracking.md states the figures over ROS.
"""

from __future__ import annotations

import math
import time

from geometry_msgs.msg import Vector3Stamped
from live_harness import LiveRos, wait_until
from nav_msgs.msg import Odometry, Path
import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile

from rc_sim_description.params import load_vehicle_params

LR = load_vehicle_params().geometry.cg_to_rear_axle
TRANSIENT_S = 3.0
#: RMSE bound of the CoM error after the transient over ROS (docs/tracking.md, "Over ROS 2").
ROS_RMSE_BOUND_M = {'fl': 0.03, 'kanayama': 0.03}


def param_set(ros: LiveRos, node: str, name: str, value: str) -> None:
    """``ros2 param set`` as a user types it (no daemon; spin long enough to find the node)."""
    ros.cli('param', 'set', node, name, value, '--no-daemon', '--spin-time', '5')


def stamp_s(header) -> float:
    return header.stamp.sec + header.stamp.nanosec * 1e-9


def yaw_of(msg: Odometry) -> float:
    q = msg.pose.pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


@pytest.mark.timing  # a free-running loop over DDS: its latency grows with the machine's load
@pytest.mark.parametrize('controller', ['fl', 'kanayama'])
def test_tracker_follows_the_lemniscate_around_sim_node(ros: LiveRos, controller: str) -> None:
    sim = ros.run('rc_sim_engine', 'sim_node', {'world': 'flat_track', 'use_cmd_vel': True,
                                                'realtime_factor': 2.0})
    tracker = ros.run('rc_sim_control', 'trajectory_tracker', {
        'use_sim_time': True, 'controller': controller, 'trajectory_type': 'lemniscate'})
    probe = ros.probe
    deep = QoSProfile(depth=10000)
    odom = probe.subscribe(Odometry, '/odom', deep)
    errors = probe.subscribe(Vector3Stamped, '/tracking_error', deep)
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    path = probe.subscribe(Path, '/reference_path', latched)
    odom.wait(5, timeout=60)
    wait_until(lambda: 'trajectory_tracker' in ' '.join(probe.node_names()), 30, 'the tracker')
    param_set(ros, '/trajectory_tracker', 'active', 'true')
    out = tracker.wait_output('tracking lemniscate', timeout=30)
    assert controller in out
    tracker.wait_output('trajectory finished', timeout=120)
    (ref,) = path.wait(1, timeout=10)
    t_ref = np.array([stamp_s(p.header) for p in ref.poses])
    x_ref = np.array([p.pose.position.x for p in ref.poses])
    y_ref = np.array([p.pose.position.y for p in ref.poses])
    t0, t1 = t_ref[0], t_ref[-1]
    samples = [m for m in odom.messages if t0 + TRANSIENT_S <= stamp_s(m.header) <= t1]
    assert len(samples) > 100
    t = np.array([stamp_s(m.header) for m in samples])
    cx = np.array([m.pose.pose.position.x + LR * math.cos(yaw_of(m)) for m in samples])
    cy = np.array([m.pose.pose.position.y + LR * math.sin(yaw_of(m)) for m in samples])
    e = np.hypot(cx - np.interp(t, t_ref, x_ref), cy - np.interp(t, t_ref, y_ref))
    rmse = float(np.sqrt(np.mean(e * e)))
    print(f'{controller}: CoM RMSE over ROS after {TRANSIENT_S:g} s: {100 * rmse:.2f} cm')
    assert rmse < ROS_RMSE_BOUND_M[controller], rmse
    # the tracker's own error agrees with the independent one
    own = [m.vector.z for m in errors.messages if stamp_s(m.header) >= t0 + TRANSIENT_S]
    assert float(np.sqrt(np.mean(np.square(own)))) == pytest.approx(rmse, abs=0.01)
    # the car went round: the lemniscate spans +-3 m in x
    assert np.ptp(cx) > 4.0
    time.sleep(0.2)
    for proc in (tracker, sim):
        assert proc.interrupt() == 0
