"""Properties the engine must have whatever its formulas: sub-step consistency, exact
trigonometry, the kinematic constraint, the servo's limits in closed form, mirror symmetry.

None of these recomputes an engine formula: the truths are the semigroup property of a fixed
sub-step, ``math.cos``/``math.sin``, the documented constraint, Newton's law for a constant
saturated torque, the documented limits and the left/right symmetry of the car.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.params import PacejkaCoefficients, load_vehicle_params
from rc_sim_engine.vehicle.actuators import steering_hinge_inertia
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.integrators import rotate
from rc_sim_engine.vehicle.models import MODELS
from rc_sim_engine.vehicle.packed import pack_params
from rc_sim_engine.vehicle.state import (
    N_STATE,
    STEER,
    STEER_RATE,
    VX,
    VY,
    WHEEL_SPEED,
    YAW,
    YAW_RATE,
    X,
    Y,
)
from rc_sim_engine.vehicle.tyres import (
    fiala_lateral_force,
    linear_lateral_force,
    magic_formula,
    racecar_pacejka_preset,
)

BASE = load_vehicle_params()
CHASSIS = [X, Y, YAW, VX, VY, YAW_RATE, STEER, WHEEL_SPEED]


@pytest.mark.parametrize('integrator', ['rk4', 'semi_implicit_euler'])
def test_a_long_step_is_its_sub_steps(integrator: str) -> None:
    """dt = 10 ms is documented as 4 sub-steps of 2.5 ms, 5 ms as 2: with the commands held,
    one long step must equal the same number of 2.5 ms steps (a fixed-step map composes)."""
    cars = {dt: Car(BASE, integrator=integrator, dt=dt, tyre_model='pacejka')
            for dt in (0.01, 0.005, 0.0025)}
    for car in cars.values():
        car.reset(speed=3.0)
    for k in range(40):  # 0.4 s of a slalom, commands changing every 10 ms
        steer, wheel = 0.25 * math.sin(0.5 * k), 60.0 + 20.0 * math.cos(0.3 * k)
        cars[0.01].step(steer, wheel)
        cars[0.005].step(steer, wheel, n_steps=2)
        cars[0.0025].step(steer, wheel, n_steps=4)
    ref = cars[0.0025].state[0, CHASSIS]
    assert np.max(np.abs(ref[[VX, YAW_RATE]])) > 0.5  # a real manoeuvre
    for dt in (0.01, 0.005):
        np.testing.assert_allclose(cars[dt].state[0, CHASSIS], ref, rtol=1e-12, atol=1e-12)


def test_rk4_stage_rotation_equals_cos_sin_of_the_sum() -> None:
    theta = np.linspace(-3.0, 3.0, 7)
    for angle in (*np.linspace(-0.0499, 0.0499, 41), -0.3, 0.05, 0.7):
        for th in theta:
            c, s = rotate(math.cos(th), math.sin(th), float(angle))
            assert c == pytest.approx(math.cos(th + angle), abs=2e-15)
            assert s == pytest.approx(math.sin(th + angle), abs=2e-15)


def test_kinematic_model_stays_on_its_constraint() -> None:
    """Documented: after every sub-step VY and YAW_RATE are projected onto r = vx tan(delta) / L,
    vy = lr r (here while accelerating and steering)."""
    g = BASE.geometry
    car = Car(BASE, model='kinematic', dt=1e-3)
    car.reset(speed=0.5)
    for k in range(300):
        car.step(0.3 * math.sin(0.02 * k), 20.0 + 0.2 * k)
        s = car.state[0]
        r = s[VX] * math.tan(s[STEER]) / g.wheelbase
        assert s[YAW_RATE] == pytest.approx(r, rel=1e-12, abs=1e-15)
        assert s[VY] == pytest.approx(g.cg_to_rear_axle * r, rel=1e-12, abs=1e-15)
    assert abs(car.state[0, YAW_RATE]) > 0.1


def test_derivative_moves_only_the_chassis() -> None:
    """``VehicleModel.derivative``: pose and body-velocity rates, 0 for actuator fields."""
    x = np.zeros(N_STATE)
    x[VX], x[VY], x[YAW_RATE], x[STEER], x[WHEEL_SPEED], x[YAW] = 3.0, 0.1, 0.4, 0.2, 70.0, 0.5
    chassis = {X, Y, YAW, VX, VY, YAW_RATE}
    for model in MODELS.values():
        d = model.derivative(x, pack_params([BASE])[0])
        assert all(d[i] == 0.0 for i in range(N_STATE) if i not in chassis), model.name
        assert d[X] == pytest.approx(3.0 * math.cos(0.5) - 0.1 * math.sin(0.5))
        assert d[Y] == pytest.approx(3.0 * math.sin(0.5) + 0.1 * math.cos(0.5))
        assert d[YAW] == 0.4


def test_saturated_servo_torque_gives_constant_angular_acceleration() -> None:
    """With a torque limit far below Kp e, J_h d2(delta)/dt2 = tau_max: a parabola until the
    slew limit, then a constant rate (Newton's law; the limits are documented)."""
    tau_max = 2e-4  # N m: Kp e = 0.4 N m for e = 0.2 rad
    p = BASE.with_values(servo_max_torque=tau_max, servo_d_gain=1e-6)  # saturated: Kp e - Kd w >> tau_max
    accel = tau_max / steering_hinge_inertia(p)  # about 2.3 rad/s^2
    car = Car(p, dt=1e-3)
    t, angle, rate = [], [], []
    for k in range(1, 401):
        car.step(0.2, 0.0)
        t.append(k * 1e-3)
        angle.append(car.steering_angle()[0])
        rate.append(car.state[0, STEER_RATE])
    tt = np.array(t)
    np.testing.assert_allclose(angle, 0.5 * accel * tt ** 2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rate, accel * tt, rtol=1e-9)
    p_neg = p.with_values()
    car = Car(p_neg, dt=1e-3)
    car.step(-0.2, 0.0, 200)
    assert car.steering_angle()[0] == pytest.approx(-0.5 * accel * 0.2 ** 2, rel=1e-9)


@pytest.mark.parametrize('sign', [1.0, -1.0])
def test_servo_slew_limit_and_mechanical_stop_both_ways(sign: float) -> None:
    """An under-damped servo (Kd = 0.001, damping ratio 0.04) commanded to 0.33 rad overshoots
    towards 0.45 rad: the stop at max_steering_angle (0.42 rad) must catch it; the slew rate
    stays within its limit in both directions."""
    p = BASE.with_values(servo_d_gain=0.001, max_steering_rate=20.0)
    lim, rate_max = p.steering.max_steering_angle, p.steering.max_steering_rate
    car = Car(p, dt=1e-3)
    angles = [0.0]
    for target in (0.33, -0.33):
        for _ in range(300):
            car.step(sign * target, 0.0)
            angles.append(car.steering_angle()[0])
    a = np.array(angles)
    rates = np.diff(a) / 1e-3
    assert np.max(np.abs(a)) <= lim * (1 + 1e-12)
    assert np.max(sign * a) == pytest.approx(lim, rel=1e-12)  # caught by the stop ...
    assert np.min(sign * a) == pytest.approx(-lim, rel=1e-12)  # ... on both sides
    assert np.max(np.abs(rates)) <= rate_max * (1 + 1e-12)
    assert np.max(rates) > 0.99 * rate_max and np.min(rates) < -0.99 * rate_max
    assert a[-1] == pytest.approx(-sign * 0.33, abs=0.02)  # and it still settles


def test_mirror_symmetry_of_a_turn() -> None:
    """Steering right is steering left mirrored: y, yaw, vy, r change sign, x and vx do not."""
    for tyre in ('linear', 'fiala', 'fiala_unsaturated', 'pacejka'):
        car = Car(BASE, n=2, dt=1e-3, tyre_model=tyre, load_transfer=True)
        car.reset(speed=np.array([3.0, 3.0]))
        for k in range(500):
            d = 0.3 * math.sin(0.01 * k) + 0.1
            car.step(np.array([d, -d]), 60.0 + 0.1 * k)
        a, b = car.state
        np.testing.assert_allclose([a[X], a[VX], a[WHEEL_SPEED]], [b[X], b[VX], b[WHEEL_SPEED]],
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose([a[Y], a[YAW], a[VY], a[YAW_RATE], a[STEER]],
                                   [-b[Y], -b[YAW], -b[VY], -b[YAW_RATE], -b[STEER]],
                                   rtol=1e-12, atol=1e-12)
        assert abs(a[YAW]) > 0.3
        # the wheels swap sides: the left wheel of one car turns like the right of the other
        w = car.wheel_angles()
        for left, right in (('front_left_wheel_joint', 'front_right_wheel_joint'),
                            ('rear_left_wheel_joint', 'rear_right_wheel_joint')):
            assert w[left][0] == pytest.approx(w[right][1], rel=1e-12)
            assert w[right][0] == pytest.approx(w[left][1], rel=1e-12)
        assert w['front_left_steering_joint'][0] == pytest.approx(
            -w['front_right_steering_joint'][1], rel=1e-12)
        assert w['front_left_wheel_joint'][0] != pytest.approx(w['front_right_wheel_joint'][0])


def test_magic_formula_with_curvature_factor_one_plateaus_below_d() -> None:
    """E = 1 turns the argument into C atan(atan(B x)): the large-slip plateau is
    D sin(C atan(pi / 2)) (Pacejka & Bakker 1987 with E = 1), not D sin(C pi / 2)."""
    c = PacejkaCoefficients(B=10.0, C=1.65, D=1.0, E=1.0)
    assert float(magic_formula(1e7, c)) == pytest.approx(math.sin(1.65 * math.atan(math.pi / 2)),
                                                         rel=1e-6)
    assert float(magic_formula(-1e7, c)) == pytest.approx(-math.sin(1.65 * math.atan(math.pi / 2)),
                                                          rel=1e-6)


@pytest.mark.parametrize(('mu', 'fz'), [(0.8, 0.5), (1.0, 19.0), (1.5, 200.0)])
def test_fiala_cornering_stiffness_at_the_origin_for_any_load_and_friction(mu: float,
                                                                           fz: float) -> None:
    """The brush model's slope at zero slip is C whatever mu and Fz (Pacejka 2012 §3.2): light
    loads and mu <= 1 included."""
    c_alpha, h = 90.0, 1e-8
    for saturate in (True, False):
        f = fiala_lateral_force(np.array([-h, h]), c_alpha, mu, fz, saturate=saturate)
        assert (f[1] - f[0]) / (2 * h) == pytest.approx(c_alpha, rel=1e-6)


def test_fiala_lifted_wheel_carries_no_force() -> None:
    for fz in (0.0, -3.0):
        for saturate in (True, False):
            f = fiala_lateral_force(np.array([-0.3, 0.1, 0.5]), 90.0, 1.0, fz, saturate=saturate)
            assert np.all(f == 0.0)


def test_linear_law_is_linear_with_slope_c() -> None:
    alpha = np.array([-0.4, -0.01, 0.0, 0.02, 0.3])
    f = linear_lateral_force(alpha, 101.0)
    np.testing.assert_allclose(linear_lateral_force(2 * alpha, 101.0), 2 * f, rtol=1e-15)
    assert (f[3] - f[1]) / (alpha[3] - alpha[1]) == pytest.approx(101.0, rel=1e-12)


def test_racecar_preset_accepts_any_positive_wheel_load() -> None:
    """Only loads <= 0 are rejected: a light car's wheel load (0.5 N) converts like any other,
    the force curve in newtons staying the seed table's (D_N = D_mu * load)."""
    for load in (0.5, 13.71, 80.0):
        lateral, longitudinal = racecar_pacejka_preset(load)
        assert lateral.D * load == pytest.approx(1.371, rel=1e-12)
        assert longitudinal.D * load == pytest.approx(19.0569, rel=1e-12)


@pytest.mark.parametrize('tyre', ['linear', 'pacejka'])
def test_tall_car_load_transfer_never_reverses_the_tyres(tyre: str) -> None:
    """A tyre can only push: with a CG 0.5 m high the load shift of a hard launch exceeds the
    front static load and that of hard braking the rear one, yet braking must never speed the
    car up and a car steered left while launching must not yaw right."""
    p = BASE.with_values(cg_height=0.5)
    car = Car(p, n=2, dt=1e-3, tyre_model=tyre, load_transfer=True)
    car.reset(speed=np.array([1.0, 5.0]))
    for _ in range(600):
        v_before = car.state[1, VX]
        car.step(np.array([0.2, 0.0]), np.array([120.0, 0.0]))  # launch left / brake straight
        assert car.state[1, VX] <= v_before
        assert car.state[0, YAW_RATE] >= 0.0
    assert car.state[1, VX] < 4.9 and car.state[0, YAW_RATE] > 0.1
