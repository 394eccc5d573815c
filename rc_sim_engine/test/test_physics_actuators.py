"""Actuators against closed forms: servo PD step response, slew limit, trim, wheel speed loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.actuators import (
    rear_wheel_inertia,
    steering_hinge_inertia,
    trim_steering,
)
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.state import VX, YAW


def test_hinge_inertias_from_wheel_and_knuckle() -> None:
    p = load_vehicle_params()
    g, m = p.geometry, p.mass_properties
    wheel = m.wheel_mass * (3 * g.wheel_radius ** 2 + g.wheel_width ** 2) / 12
    assert steering_hinge_inertia(p) == pytest.approx(
        wheel + 0.5 * m.steering_hinge_mass * (g.wheel_width / 2) ** 2)
    assert rear_wheel_inertia(p) == pytest.approx(0.5 * m.wheel_mass * g.wheel_radius ** 2)


def test_servo_small_step_follows_the_linear_pd_solution() -> None:
    """J th'' + Kd th' + Kp th = Kp th*: two real poles, th(t) = th*(1 - (p2 e^-p1t - p1 e^-p2t)/(p2-p1))."""
    p = load_vehicle_params()
    s = p.steering
    J, kp, kd = steering_hinge_inertia(p), s.servo_p_gain, s.servo_d_gain
    disc = kd * kd - 4 * J * kp
    assert disc > 0 and s.servo_i_gain == 0.0  # the default servo is over-damped PD
    p1 = (kd - math.sqrt(disc)) / (2 * J)
    p2 = (kd + math.sqrt(disc)) / (2 * J)
    target = 0.01  # small: no torque or slew limit is reached
    for dt in (1e-3, 1e-2):  # the servo step is exact (transition matrix), whatever dt
        car = Car(p, dt=dt)
        t, th = [], []
        for k in range(1, int(0.2 / dt) + 1):
            car.step(target, 0.0)
            t.append(k * dt)
            th.append(car.steering_angle()[0])
        tt = np.array(t)
        ref = target * (1 - (p2 * np.exp(-p1 * tt) - p1 * np.exp(-p2 * tt)) / (p2 - p1))
        assert np.max(np.abs(np.array(th) - ref)) < 1e-9 * target


def test_servo_slew_rate_limit_and_final_value() -> None:
    p = load_vehicle_params()
    dt = 1e-3
    car = Car(p, dt=dt)
    angles = [0.0]
    for _ in range(600):
        car.step(0.4, 0.0)
        angles.append(car.steering_angle()[0])
    rate = np.diff(angles) / dt
    assert rate.max() <= p.steering.max_steering_rate * (1 + 1e-12)
    assert rate.max() >= 0.999 * p.steering.max_steering_rate
    assert angles[-1] == pytest.approx(0.4, abs=1e-6)


@pytest.mark.parametrize(('gain', 'offset', 'cmd'), [(0.9, 0.02, 0.2), (1.1, -0.01, -0.3),
                                                     (1.0, 0.0, 2.0)])
def test_steering_trim_and_saturation(gain: float, offset: float, cmd: float) -> None:
    p = load_vehicle_params().with_values(steering_gain=gain, steering_offset=offset)
    expected = float(np.clip(gain * cmd + offset, -p.steering.max_steering_angle,
                             p.steering.max_steering_angle))
    assert float(trim_steering(cmd, p)) == pytest.approx(expected)
    car = Car(p, dt=1e-3)
    car.step(cmd, 0.0, 1000)
    assert car.steering_angle()[0] == pytest.approx(expected, abs=1e-7)


def test_wheel_speed_loop_reaches_command_and_saturates() -> None:
    p = load_vehicle_params()
    car = Car(p, dt=1e-3)
    car.step(0.0, 60.0, 3000)  # straight: no resisting force, P loop settles with zero error
    assert car.wheel_speed()[0] == pytest.approx(60.0, abs=1e-6)
    assert car.state[0, VX] == pytest.approx(60.0 * p.geometry.wheel_radius, abs=1e-6)
    car.step(0.0, 1e4, 3000)  # command beyond max_wheel_speed
    assert car.wheel_speed()[0] <= p.drive.max_wheel_speed + 1e-9
    assert car.wheel_speed()[0] == pytest.approx(p.drive.max_wheel_speed, rel=1e-3)


def test_joint_angles_on_a_kinematic_circle() -> None:
    """Each wheel rolls its own circle: angle = path radius * yaw change / r (no slip)."""
    from rc_sim_control.ackermann import ackermann_split

    p = load_vehicle_params()
    g = p.geometry
    delta, omega = 0.3, 20.0
    car = Car(p, model='kinematic', dt=1e-3)
    car.step(delta, omega, 2000)  # settle steering and speed
    a0, yaw0 = car.wheel_angles(), car.state[0, YAW]
    car.step(delta, omega, 2000)
    a1, dyaw = car.wheel_angles(), car.state[0, YAW] - yaw0
    R = g.wheelbase / math.tan(delta)
    r = g.wheel_radius
    left, right = ackermann_split(delta, g.wheelbase, g.track_width)
    assert a1['front_left_steering_joint'][0] == pytest.approx(float(left))
    assert a1['front_right_steering_joint'][0] == pytest.approx(float(right))
    expect = {
        'front_left_wheel_joint': math.hypot(R - g.track_width / 2, g.wheelbase),
        'front_right_wheel_joint': math.hypot(R + g.track_width / 2, g.wheelbase),
    }
    for name, radius in expect.items():
        assert a1[name][0] - a0[name][0] == pytest.approx(radius * dyaw / r, rel=1e-4), name
    # rear wheels: the commanded rate on average, split by the open differential about the
    # ICR: ground speeds (R -+ W/2) dpsi/dt, so the pair's angles differ by W dpsi / r
    rl = a1['rear_left_wheel_joint'][0] - a0['rear_left_wheel_joint'][0]
    rr = a1['rear_right_wheel_joint'][0] - a0['rear_right_wheel_joint'][0]
    assert 0.5 * (rl + rr) == pytest.approx(omega * 2.0, rel=1e-4)
    assert rr - rl == pytest.approx(g.track_width * dyaw / car.params[0].effective_wheel_radius,
                                    rel=1e-9)


@pytest.mark.parametrize(('q', 'c', 'cmd'), [(0.1, -0.4, 0.3), (-0.12, -0.2, -0.3),
                                             (0.0, -0.5, 0.25), (0.08, 0.3, 0.1)])
def test_steering_linkage_maps_the_trimmed_angle(q: float, c: float, cmd: float) -> None:
    """Wheel angle = u + q u^2 + c u^3 of u = gain cmd + offset, written out per term here; the
    car's servo settles there; the linkage is applied to the trimmed angle, not the command."""
    gain, offset = 0.95, 0.012
    p = load_vehicle_params().with_values(steering_gain=gain, steering_offset=offset,
                                          steering_linkage_quadratic=q,
                                          steering_linkage_cubic=c)
    u = gain * cmd + offset
    expected = u + q * u ** 2 + c * u ** 3
    assert abs(expected - u) > 1e-3          # the cases exercise the map
    assert float(trim_steering(cmd, p)) == pytest.approx(expected, rel=1e-12)
    car = Car(p, dt=1e-3)
    car.step(cmd, 0.0, 1000)
    assert car.steering_angle()[0] == pytest.approx(expected, abs=1e-7)


def test_a_linkage_map_that_turns_back_is_refused() -> None:
    """The map must rise over +-max_steering_angle: slope 1 + 2 q u + 3 c u^2 > 0.05."""
    from rc_sim_description.errors import VehicleParamsError

    with pytest.raises(VehicleParamsError, match='steering_linkage_quadratic'):
        load_vehicle_params().with_values(steering_linkage_quadratic=0.0,
                                          steering_linkage_cubic=-5.0)
    p = load_vehicle_params().with_values(steering_linkage_quadratic=0.3,
                                          steering_linkage_cubic=-1.0)
    assert p.steering.steering_linkage_cubic == -1.0
