"""Tracking controllers and metrics on an exact kinematic bicycle (arc integration, independent plant)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_control.ackermann import MapperConfig, map_twist
from rc_sim_control.metrics import cg_positions, compute_metrics, tracking_errors
from rc_sim_control.tracking import (
    FeedbackLinearization,
    Kanayama,
    KanayamaGains,
    MeasuredPose,
    TrackingCommand,
    TrackingLimits,
    gains_problem,
    make_controller,
    rear_axle_reference,
    twist_from_command,
)
from rc_sim_control.trajectories import Circle, FigureEight, Line, Trajectory
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import load_vehicle_params

PARAMS = load_vehicle_params()
LIMITS = TrackingLimits.from_vehicle(PARAMS)


def drive(controller_name: str, traj: Trajectory, duration: float,
          offset: tuple[float, float, float] = (0.0, 0.0, 0.0),
          dt: float = 0.02) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[TrackingCommand]]:
    """Closed loop on an exact kinematic bicycle (rear axle moves on arcs, commands held per step).

    Starts with the CoM on the reference start, heading along it, plus ``offset`` (dx, dy, dyaw).
    Returns the times, the CoM errors (ex, ey) and the commands.
    """
    ctrl = make_controller(controller_name, PARAMS)
    L, lr = LIMITS.wheelbase, LIMITS.cg_to_rear_axle
    r0 = traj.sample(0.0)
    yaw = float(r0.heading) + offset[2]
    x = float(r0.x) - lr * math.cos(yaw) + offset[0]
    y = float(r0.y) - lr * math.sin(yaw) + offset[1]
    v = float(r0.speed)
    ts, xs, ys, yaws, cmds = [], [], [], [], []
    for i in range(round(duration / dt)):
        t = i * dt
        ts.append(t), xs.append(x), ys.append(y), yaws.append(yaw)
        cmd = ctrl.command(t, MeasuredPose(x, y, yaw, v), traj)
        cmds.append(cmd)
        v, k = cmd.speed, math.tan(cmd.steering_angle) / L
        dpsi = v * k * dt
        if abs(k) < 1e-9:
            x, y = x + v * dt * math.cos(yaw), y + v * dt * math.sin(yaw)
        else:
            x += (math.sin(yaw + dpsi) - math.sin(yaw)) / k
            y += (math.cos(yaw) - math.cos(yaw + dpsi)) / k
        yaw += dpsi
    t_arr = np.array(ts)
    cx, cy = cg_positions(xs, ys, yaws, lr)
    ref = traj.sample(t_arr)
    return t_arr, cx - ref.x, cy - ref.y, cmds


@pytest.mark.parametrize('name', ['kanayama', 'fl', 'pure_pursuit'])
def test_converges_from_half_a_metre_and_20_degrees(name: str) -> None:
    t, ex, ey, cmds = drive(name, Line(1.0, 0.0), 12.0, offset=(0.0, 0.5, math.radians(20)))
    err = np.hypot(ex, ey)
    assert err[0] > 0.45
    assert np.max(err[t > 8.0]) < 0.01
    assert all(abs(c.steering_angle) <= LIMITS.max_steering_angle for c in cmds)
    assert any(c.saturated for c in cmds)  # the 0.5 m offset needs full lock at first


def test_kanayama_converges_on_a_circle_with_offset() -> None:
    t, ex, ey, _ = drive('kanayama', Circle(2.0, 0.5), 25.0, offset=(0.0, -0.5, math.radians(20)))
    assert np.max(np.hypot(ex, ey)[t > 15.0]) < 0.01


@pytest.mark.parametrize('name', ['fl', 'kanayama', 'pure_pursuit'])
def test_steady_circle_is_tracked_exactly(name: str) -> None:
    """The rear-axle reference of a CoM circle is exact for the kinematic bicycle (beta = asin(lr k))."""
    t, ex, ey, _ = drive(name, Circle(1.5, 0.6), 20.0)
    assert np.max(np.hypot(ex, ey)[t > 10.0]) < 0.005


def test_fl_follows_the_figure_eight_on_the_kinematic_model() -> None:
    traj = FigureEight(3.0, 0.45)
    t, ex, ey, _ = drive('fl', traj, traj.period)
    assert compute_metrics(t, ex, ey, t_start=2.0).rmse < 0.03


def test_rear_axle_reference_of_a_circle_matches_geometry() -> None:
    r = Circle(2.0, 0.5).sample(np.linspace(0, 10, 7))
    lr = LIMITS.cg_to_rear_axle
    x, y, yaw, v, w = rear_axle_reference(r, lr)
    np.testing.assert_allclose(np.hypot(x, y - 2.0), math.sqrt(4.0 - lr ** 2), rtol=1e-12)
    np.testing.assert_allclose(v, 1.0 * math.sqrt(4.0 - lr ** 2) / 2.0, rtol=1e-12)
    np.testing.assert_allclose(w, 0.5, rtol=1e-9)
    # the rear axle moves along its heading: tangent to its own circle
    np.testing.assert_allclose(np.cos(yaw) * x + np.sin(yaw) * (y - 2.0), 0.0, atol=1e-12)


def test_fl_inverse_reproduces_the_point_velocity() -> None:
    """Forward kinematics of the output (v, delta) gives back the commanded P velocity (eq. 5.2.4)."""
    ctrl = FeedbackLinearization(LIMITS)
    traj = Line(1.0, 0.3)
    yaw, lr = 0.35, LIMITS.cg_to_rear_axle  # CoM 3 cm off the reference start, 4 deg off
    pose = MeasuredPose(0.02 - lr * math.cos(yaw), -0.02 - lr * math.sin(yaw), yaw, 1.0)
    error, _, v_ref = ctrl.point_error(0.0, pose, traj)
    v_p = v_ref + ctrl.gains.kp * error
    cmd = ctrl.command(0.0, pose, traj)
    assert not cmd.saturated
    eps = LIMITS.cg_to_rear_axle + ctrl.gains.point_distance
    w = cmd.speed * math.tan(cmd.steering_angle) / LIMITS.wheelbase
    vx = cmd.speed * math.cos(pose.yaw) - eps * w * math.sin(pose.yaw)
    vy = cmd.speed * math.sin(pose.yaw) + eps * w * math.cos(pose.yaw)
    np.testing.assert_allclose([vx, vy], v_p, rtol=1e-12)


def test_fl_anti_windup_freezes_the_integrator_while_saturated() -> None:
    ctrl = make_controller('fl', PARAMS, kp=1.0, ki=2.0, integral_limit=10.0)
    far = MeasuredPose(0.0, 20.0, 0.0, 0.0)  # 20 m off: saturated all the time
    for i in range(200):
        cmd = ctrl.command(0.02 * i, far, Line(1.0, 0.0))
    assert cmd.saturated
    assert np.all(np.abs(ctrl._integral) < 0.05)  # only the first step integrated


def test_commands_respect_the_vehicle_limits_and_nan_stops() -> None:
    sat = LIMITS.saturate(100.0, -2.0)
    assert sat == TrackingCommand(LIMITS.max_speed, -LIMITS.max_steering_angle, True)
    assert LIMITS.saturate(float('nan'), 0.1) == TrackingCommand(0.0, 0.0, True)


@pytest.mark.parametrize('mode', ['curvature', 'radius', 'steering_angle', 'yaw_rate'])
def test_twist_from_command_inverts_the_command_mapper(mode: str) -> None:
    cmd = TrackingCommand(1.2, -0.3)
    lin, ang = twist_from_command(cmd, LIMITS.wheelbase, mode)
    out = map_twist(lin, ang, MapperConfig.from_vehicle(PARAMS, mode=mode))
    assert math.isclose(float(out.steering_angle), -0.3, rel_tol=1e-9)
    assert math.isclose(float(out.wheel_speed), 1.2 / PARAMS.geometry.wheel_radius, rel_tol=1e-9)


def test_gain_validation_gives_one_line_reasons() -> None:
    assert gains_problem('fl', {'kp': 3.0}) is None
    assert "'kp': must be >= 0" in (gains_problem('fl', {'kp': -1.0}) or '')
    assert 'unknown gain(s) kq' in (gains_problem('kanayama', {'kq': 1.0}) or '')
    assert 'unknown controller' in (gains_problem('mpc', {}) or '')
    with pytest.raises(ConfigError, match='must be a finite number'):
        make_controller('pure_pursuit', PARAMS, lookahead_min=float('nan'))
    ctrl = Kanayama(LIMITS, KanayamaGains())
    ctrl.set_gains(ky=4.0)
    assert ctrl.gains.ky == 4.0
    with pytest.raises(ConfigError):
        ctrl.set_gains(ktheta=-2.0)
    assert ctrl.gains.ktheta == KanayamaGains().ktheta


def test_metrics_against_closed_forms() -> None:
    t = np.linspace(0.0, 10.0, 10001)
    m = compute_metrics(t, np.full_like(t, 0.03), np.full_like(t, 0.04))
    assert math.isclose(m.rmse, 0.05) and math.isclose(m.ise, 0.0025 * 10.0)
    # e = A (cos wt, sin wt): |e| = A, RMSE = A; e = (A sin wt, 0) over whole periods: A / sqrt(2)
    m2 = compute_metrics(t, 0.2 * np.sin(2 * np.pi * t), np.zeros_like(t), t_start=1.0)
    assert math.isclose(m2.rmse, 0.2 / math.sqrt(2), rel_tol=1e-3)
    assert math.isclose(m2.ise, 0.04 * 9.0 / 2, rel_tol=1e-6)
    assert m2.t_start == 1.0 and m2.samples == 9001


def test_tracking_errors_interpolate_the_reference() -> None:
    t, ex, ey = tracking_errors([0.5, 1.5, 5.0], [1.0, 2.0, 0.0], [0.0, 0.0, 0.0],
                                [0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(t, [0.5, 1.5])  # 5.0 is outside the reference span
    np.testing.assert_allclose(ex, [0.5, 0.5])
    np.testing.assert_allclose(ey, [0.0, -0.5])
    with pytest.raises(ConfigError, match='strictly increasing'):
        tracking_errors([0.0], [0.0], [0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])


def test_tracker_session_places_the_run_at_the_car_and_finishes() -> None:
    from rc_sim_control.tracking import TrackerSession

    session = TrackerSession(PARAMS, {'trajectory_type': 'circle', 'radius': 1.5,
                                      'angular_speed': 0.5, 'duration': 4.0})
    assert not session.active and session.step(0.0, MeasuredPose(0, 0, 0)) is None
    pose = MeasuredPose(2.0, 1.0, math.pi / 2, 0.0)
    traj = session.activate(10.0, pose)
    r0 = traj.sample(0.0)
    lr = LIMITS.cg_to_rear_axle
    assert math.isclose(float(r0.x), 2.0, abs_tol=1e-12)
    assert math.isclose(float(r0.y), 1.0 + lr, abs_tol=1e-12)
    assert math.isclose(float(r0.heading), math.pi / 2, abs_tol=1e-12)
    step = session.step(10.0, pose)
    assert step is not None and not step.finished
    assert math.hypot(step.error_x, step.error_y) < 1e-12
    t, x, y, yaw = session.reference_path()
    assert t[-1] == 4.0 and np.allclose(np.hypot(x - x[0] + 1.5, y - y[0]), 1.5)
    assert yaw[0] == pytest.approx(math.pi / 2)
    last = session.step(14.5, pose)
    assert last is not None and last.finished and last.command.speed == 0.0
    assert not session.active


def test_tracker_session_live_updates_are_validated() -> None:
    from rc_sim_control.tracking import TrackerSession

    session = TrackerSession(PARAMS)
    assert session.update({'kp': 3.0}) is None and session.controller.gains.kp == 3.0
    assert 'must be >= 0' in (session.update({'kp': -3.0}) or '')
    assert session.controller.gains.kp == 3.0
    assert "'radius': must be > 0" in (session.update({'trajectory_type': 'circle',
                                                       'radius': 0.0}) or '')
    assert session.update({'controller': 'kanayama'}) is None
    assert session.controller.name == 'kanayama'
    session.activate(0.0, MeasuredPose(0.0, 0.0, 0.0))
    assert 'while active' in (session.update({'amplitude': 2.0}) or '')
    assert session.update({'ky': 5.0}) is None and session.controller.gains.ky == 5.0
    session.deactivate()
    assert 'waypoints_file' in (session.update({'trajectory_type': 'waypoints'}) or '')
    with pytest.raises(ConfigError, match='unknown tracker parameter'):
        TrackerSession(PARAMS, {'gain': 1.0})
