"""ROS-free message checks of the nodes: NaN/inf fields, zero quaternions, mismatched joint
states and encoder jumps are dropped with a one-line reason and a count; valid messages pass."""

from __future__ import annotations

import math

import pytest

from rc_sim_control.node_checks import (
    MAX_ODOM_POSITION,
    DropCounter,
    EncoderGuard,
    finite_problem,
    joint_state_problem,
    odometry_problem,
    twist_problem,
)
from rc_sim_control.odometry import JointStateOdometry, OdometryConfig
from rc_sim_description.params import load_vehicle_params

NAN, INF = math.nan, math.inf


def test_drop_counter_counts_per_topic_in_one_line() -> None:
    drops = DropCounter()
    assert drops.drop('cmd_vel', 'linear.x is nan') == \
        'dropped cmd_vel message: linear.x is nan (1 dropped so far)'
    drops.drop('odom', 'x')
    line = drops.drop('cmd_vel', 'angular.z is inf')
    assert line.endswith('(2 dropped so far)') and '\n' not in line
    assert drops.counts == {'cmd_vel': 2, 'odom': 1} and drops.total == 3


def test_drop_counter_report_throttles_per_topic() -> None:
    """One line per topic and period: a flood on cmd_vel does not hide ackermann_cmd (the live
    test tests_live/test_control_mapper.py found the nodes sharing one rclpy throttle)."""
    drops = DropCounter()
    assert drops.report('cmd_vel', 'linear.x is nan', 10.0) == \
        'dropped cmd_vel message: linear.x is nan (1 dropped so far)'
    assert all(drops.report('cmd_vel', 'linear.x is nan', 10.0 + k * 0.01) is None
               for k in range(1, 99))
    line = drops.report('ackermann_cmd', 'drive.speed is inf', 10.5)
    assert line == 'dropped ackermann_cmd message: drive.speed is inf (1 dropped so far)'
    assert drops.report('cmd_vel', 'angular.z is inf', 10.999) is None
    assert drops.report('cmd_vel', 'angular.z is inf', 11.0) == \
        'dropped cmd_vel message: angular.z is inf (101 dropped so far)'
    assert drops.report('ackermann_cmd', 'x', 11.2) is None
    assert drops.report('ackermann_cmd', 'x', 11.6, period_s=0.5) is not None
    # a clock that went backwards does not silence a topic for ever
    assert drops.report('cmd_vel', 'y', 3.0) is not None
    assert drops.counts == {'cmd_vel': 102, 'ackermann_cmd': 3} and drops.total == 105


@pytest.mark.parametrize(('fields', 'reason'), [
    ({'a': 1.0, 'b': NAN}, 'b is nan'),
    ({'a': INF}, 'a is inf'),
    ({'a': -INF}, 'a is -inf'),
    ({'a': 'x'}, "a is not a number ('x')"),
    ({'a': None}, 'a is not a number (None)'),
    ({'a': 1e308, 'b': -5}, None),
])
def test_finite_problem_names_the_first_bad_field(fields: dict, reason: str | None) -> None:
    assert finite_problem(**fields) == reason


@pytest.mark.parametrize(('v', 'z', 'mode', 'reason'), [
    (1.0, 0.5, 'yaw_rate', None),
    (NAN, 0.5, 'yaw_rate', 'linear.x is nan'),
    (1.0, INF, 'curvature', 'angular.z is inf'),
    (1.0, INF, 'radius', None),  # an infinite radius is straight ahead
    (1.0, NAN, 'radius', 'angular.z is nan'),
    (INF, INF, 'radius', 'linear.x is inf'),
])
def test_twist_problem_follows_the_mapper_modes(v: float, z: float, mode: str,
                                                reason: str | None) -> None:
    assert twist_problem(v, z, mode) == reason


def test_twist_problem_names_ackermann_fields() -> None:
    assert twist_problem(NAN, 0.1, 'steering_angle', ('drive.speed', 'drive.steering_angle')) \
        == 'drive.speed is nan'


@pytest.mark.parametrize(('pose', 'reason'), [
    ((1.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.5), None),
    ((NAN, 2.0, 0.0, 0.0, 0.0, 1.0, 0.5), 'pose.position.x is nan'),
    ((1.0, 2.0, 0.0, 0.0, INF, 1.0, 0.5), 'pose.orientation.z is inf'),
    ((1.0, 2.0, 0.0, 0.0, 0.0, 1.0, NAN), 'twist.linear.x is nan'),
    ((1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0), 'orientation quaternion has zero norm'),
    ((2 * MAX_ODOM_POSITION, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0), 'is beyond'),
])
def test_odometry_problem(pose: tuple, reason: str | None) -> None:
    got = odometry_problem(*pose)
    assert got == reason if reason is None else reason in got


def test_joint_state_problem() -> None:
    needed = ('rear_left_wheel_joint', 'rear_right_wheel_joint')
    names = ['rear_left_wheel_joint', 'rear_right_wheel_joint', 'front_left_steering_joint']
    assert joint_state_problem(names, [1.0, 2.0, NAN], needed) is None  # not needed: no problem
    assert joint_state_problem(names, [1.0, 2.0], needed) == '3 names but 2 positions'
    assert joint_state_problem(names, [1.0, INF, 0.0], needed) == \
        'position of rear_right_wheel_joint is inf'
    assert joint_state_problem(['x'], [1.0], needed) is None  # missing: the core reports it


def test_encoder_guard_refuses_jumps_no_wheel_can_make() -> None:
    guard = EncoderGuard(max_wheel_speed=200.0)
    assert guard.check(0.0, [0.0, 0.0]) is None
    assert guard.check(0.01, [2.0, 2.0]) is None  # 200 rad/s: the limit itself
    # 10 x 200 rad/s x 0.01 s + one turn = 26.3 rad is the largest accepted step
    assert guard.check(0.02, [2.0 + 26.0, 2.0]) is None
    reason = guard.check(0.03, [1e300, 28.0])
    assert reason is not None and reason.startswith('encoder jump of 1e+300 rad in 0.01 s')
    assert guard.check(0.04, [5.0, 5.0]) is None  # new reference after the refusal
    assert guard.check(0.05, [6.0, 6.0]) is None
    assert guard.check(0.05, [1e9, 1e9]) is None  # time not advancing: the core ignores it


def test_checked_joint_states_keep_the_odometry_finite() -> None:
    """The wheel_odometry node's flow: check, drop (restart the reference), else integrate."""
    p = load_vehicle_params()
    odo = JointStateOdometry(OdometryConfig.from_vehicle(p))
    guard, drops = EncoderGuard(p.drive.max_wheel_speed), DropCounter()
    names = ['rear_left_wheel_joint', 'rear_right_wheel_joint']
    stream = [[0.0, 0.0], [1.0, 1.0], [NAN, 2.0], [3.0, 3.0], [1e300, 4.0], [5.0, 5.0],
              [6.0, 6.0], [7.0]]
    for k, positions in enumerate(stream):
        t = 0.1 * k
        reason = joint_state_problem(names, positions, names) or guard.check(t, positions)
        if reason:
            drops.drop('joint_states', reason)
            x, y, yaw = odo.odometry.x, odo.odometry.y, odo.odometry.yaw
            odo.odometry.reset(x, y, yaw)
            continue
        odo.update(t, names, positions)
    assert drops.counts == {'joint_states': 3}
    o = odo.odometry
    assert all(math.isfinite(v) for v in (o.x, o.y, o.yaw))
    # integrated 0->1 and (after restarts) 5->6 rad of both wheels: 2 rad of travel
    assert o.x == pytest.approx(2.0 * p.geometry.wheel_radius)
