"""Command kinds of real cars (issue 27): an angle to a normalised-servo car through the inverse
of its map, a speed to a throttle or acceleration car through its speed controller, the
acceleration drive and the acceleration / force / speed command kinds, against equations
written here (the map, the closed-form steady duty, constant-acceleration kinematics)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.errors import ConfigError, VehicleParamsError
from rc_sim_description.params import VehicleParams, load_vehicle_params
from rc_sim_description.testing import DART_TWIN
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.rollout import rollout
from rc_sim_engine.vehicle.servo_models import inverse_normalised_steering, normalised_steering
from rc_sim_engine.vehicle.state import DUTY, SPEED_REFERENCE, VX, WHEEL_INTEGRAL

BASE = load_vehicle_params()
#: A DART-like calibrated car: the measured geometry and mass, a fitted normalised servo map and
#: throttle drive (values of an ``rcsim fit`` on the DART bags, rounded).
DART = BASE.with_values(**DART_TWIN)
#: An acceleration-drive car without resistances (the kinematics are then closed form).
ACCEL = BASE.with_values(drive_model='acceleration', servo_model='first_order',
                         rolling_resistance=0.0, viscous_resistance=0.0, drag_coefficient=0.0,
                         acceleration_gain=0.8, acceleration_time_constant=0.05,
                         max_acceleration=3.0, max_deceleration=4.0)  # below the grip


def _speeds(car: Car, steer: float, drive: float, seconds: float) -> np.ndarray:
    out = []
    for _ in range(round(seconds / car.dt)):
        car.step(steer, drive)
        out.append(car.state[0, VX])
    return np.array(out)


# --------------------------------------------------------------------------- steering
@pytest.mark.parametrize('k', [0.0, 0.56, 3.0])
def test_inverse_normalised_map_round_trips(k: float) -> None:
    """map(inverse(delta)) = delta inside [map(-1), map(+1)]; beyond, the inverse is +-1."""
    off, gl, gr = -0.01, 0.387, 0.416
    tk = math.tanh(k)
    for s in np.linspace(-1.0, 1.0, 41):
        delta = normalised_steering(s, off, gl, gr, k, 1.3 * k, tk, math.tanh(1.3 * k))
        back = inverse_normalised_steering(delta, off, gl, gr, k, 1.3 * k, tk,
                                           math.tanh(1.3 * k))
        assert back == pytest.approx(s, abs=1e-9)
    assert inverse_normalised_steering(1.0, off, gl, gr, k, k, tk, tk) == 1.0
    assert inverse_normalised_steering(-1.0, off, gl, gr, k, k, tk, tk) == -1.0


@pytest.mark.parametrize('delta', [0.3, 0.1, 0.0, -0.2, -0.39, 0.5, -0.6])
def test_an_angle_to_a_normalised_car_turns_the_wheels_by_that_angle(delta: float) -> None:
    """The car's own code sends s = map^-1(delta): the wheels settle at delta within the map's
    ends, delta(+1) = offset + gain_left and delta(-1) = offset - gain_right (the car's
    asymmetric limits), not at the trimmed angle (offset + delta) of an angle car; and within
    max_steering_angle."""
    st = DART.steering
    lo = st.steering_offset - st.steering_gain_right
    hi = st.steering_offset + st.steering_gain_left
    car = Car(DART, dt=1e-3)
    car.step(delta, 0.0, 1500)
    backlash = 0.5 * st.steering_backlash  # the wheels trail the servo by half the play
    lim = st.max_steering_angle  # and stop at the mechanical limit
    expected = min(max(min(max(delta, lo), hi), -lim), lim)
    assert car.steering_angle()[0] == pytest.approx(expected, abs=backlash + 1e-4)


def test_a_normalised_command_still_drives_the_map_directly() -> None:
    car = Car(DART, dt=1e-3, steering_kind='normalised', drive_kind='throttle')
    car.step(1.0, 0.0, 1500)
    st = DART.steering
    assert car.steering_angle()[0] == pytest.approx(
        st.steering_offset + st.steering_gain_left, abs=0.5 * st.steering_backlash + 1e-4)


# --------------------------------------------------------------------------- speed controller
def _steady_duty(p: VehicleParams, v: float) -> float:
    """Duty that holds speed v > 0 on a straight (Liniger et al. 2015 force balance):
    (C_m1 - C_m2 v) d_eff = C_r0 + C_r1 v + C_r2 v^2, d = d_eff + d0."""
    d = p.drive
    resist = d.rolling_resistance + d.viscous_resistance * v + d.drag_coefficient * v * v
    return resist / (d.motor_force_gain - d.motor_back_emf_gain * v) + d.throttle_dead_band


@pytest.mark.parametrize('target', [0.8, 2.0])
def test_a_speed_drives_a_throttle_car_through_its_speed_controller(target: float) -> None:
    """Wheel-speed commands (the mapper's) reach the target speed on a straight, overshooting by
    at most 6 % (the ESC lag is inside the loop), and the controller then holds the duty of the
    force balance."""
    p = DART.with_values(command_latency=0.0)
    car = Car(p, dt=1e-3)
    v = _speeds(car, 0.0, target / p.effective_wheel_radius, 4.0)
    assert v.max() < 1.06 * target
    assert abs(v[-1] - target) < 0.005 * target
    t90 = np.argmax(v > 0.9 * target) * car.dt
    assert 0.1 < t90 < 0.6  # Kp = 8 1/s: a reference lag of 0.125 s, the ESC lag on top
    assert car.state[0, DUTY] == pytest.approx(_steady_duty(p, float(v[-1])), abs=2e-3)


def test_the_speed_controller_stops_the_car_and_clears_its_state() -> None:
    car = Car(DART, dt=1e-3)
    _speeds(car, 0.2, 2.0 / DART.effective_wheel_radius, 3.0)
    assert car.state[0, WHEEL_INTEGRAL] != 0.0  # it took up the steering drag
    v = _speeds(car, 0.2, 0.0, 3.0)
    assert v[-1] == 0.0 and car.state[0, SPEED_REFERENCE] == 0.0
    assert car.state[0, WHEEL_INTEGRAL] == 0.0


def test_the_speed_controller_gains_come_from_the_vehicle_file() -> None:
    """A loop four times slower (Kp 2 1/s against 8) takes about four times as long to 90 %."""
    p = DART.with_values(command_latency=0.0)
    t90 = []
    for kp in (8.0, 2.0):
        q = p.with_values(speed_controller_p_gain=kp, speed_controller_i_gain=kp * kp / 4.0)
        v = _speeds(Car(q, dt=1e-3), 0.0, 1.0 / q.effective_wheel_radius, 6.0)
        t90.append(np.argmax(v > 0.9) * 1e-3)
    assert 3.0 < t90[1] / t90[0] < 5.0


def test_a_speed_drives_an_acceleration_car_through_its_speed_controller() -> None:
    p = ACCEL.with_values(rolling_resistance=0.5, viscous_resistance=0.3)
    car = Car(p, dt=1e-3, drive_kind='speed')  # speeds [m/s] (an /ackermann_cmd's)
    v = _speeds(car, 0.0, 1.5, 4.0)
    assert v.max() < 1.06 * 1.5 and abs(v[-1] - 1.5) < 0.01


# --------------------------------------------------------------------------- acceleration drive
def test_acceleration_command_is_lagged_gained_and_integrated() -> None:
    """a_f = a (1 - exp(-t / tau)); v = k a (t - tau (1 - exp(-t / tau))) (no resistances)."""
    p = ACCEL
    car = Car(p, dt=1e-3, drive_kind='acceleration')
    car.reset()
    car.state[0, DUTY] = 0.0
    car._primed = True  # start the lag from 0, not settled on the first command
    v = _speeds(car, 0.0, 2.0, 1.0)
    t = 1e-3 * np.arange(1, v.size + 1)
    k, tau = p.drive.acceleration_gain, p.drive.acceleration_time_constant
    ref = k * 2.0 * (t - tau * (1.0 - np.exp(-t / tau)))
    assert np.max(np.abs(v - ref)) < 2e-3 * ref[-1]


@pytest.mark.parametrize(('a_cmd', 'limit'), [(10.0, 3.0), (-10.0, -4.0)])
def test_acceleration_drive_limits(a_cmd: float, limit: float) -> None:
    """Speeding up at most max_acceleration; braking (a moving car) at most max_deceleration."""
    car = Car(ACCEL, dt=1e-3, drive_kind='acceleration')
    car.reset(speed=4.0)
    v = _speeds(car, 0.0, a_cmd, 0.5)
    assert (v[-1] - v[-101]) / 0.1 == pytest.approx(limit, rel=1e-6)


def test_force_command_is_an_acceleration_times_the_mass() -> None:
    m = ACCEL.mass_properties.mass
    a = _speeds(Car(ACCEL, dt=1e-3, drive_kind='acceleration'), 0.1, 1.2, 1.5)
    f = _speeds(Car(ACCEL, dt=1e-3, drive_kind='force'), 0.1, 1.2 * m, 1.5)
    assert np.max(np.abs(a - f)) < 1e-12


def test_acceleration_car_at_rest_below_break_away_stays_put() -> None:
    p = ACCEL.with_values(rolling_resistance=2.0)
    m = p.mass_properties.mass
    small = 0.9 * 2.0 / (m * p.drive.acceleration_gain)  # m k a below C_r0
    v = _speeds(Car(p, dt=1e-3, drive_kind='acceleration'), 0.0, small, 1.0)
    assert np.all(v == 0.0)
    v = _speeds(Car(p, dt=1e-3, drive_kind='acceleration'), 0.0, 1.2 * 2.0 / (
        m * p.drive.acceleration_gain), 1.0)
    assert v[-1] > 0.0


def test_speed_command_kind_is_a_wheel_speed_times_the_radius() -> None:
    p = BASE.with_values(drive_model='first_order')
    r = p.effective_wheel_radius
    w = _speeds(Car(p, dt=1e-3), 0.0, 2.0 / r, 1.0)
    s = _speeds(Car(p, dt=1e-3, drive_kind='speed'), 0.0, 2.0, 1.0)
    assert np.max(np.abs(w - s)) < 1e-12


def test_rollout_takes_the_new_kinds_like_car() -> None:
    """rollout (the calibrator's batch) and Car agree on an acceleration command, lag primed."""
    t_cmd = np.arange(0.0, 2.0, 0.01)
    acc = 1.5 * np.sin(2.0 * t_cmd)
    res = rollout(ACCEL, t_cmd, np.zeros_like(t_cmd), acc, None, t_out=[0.0, 2.0], dt=1e-3,
                  drive_kind='acceleration')
    car = Car(ACCEL, dt=1e-3, drive_kind='acceleration')
    for a in acc:
        car.step(0.0, float(a), 10)
    assert res.vx[0, -1] == pytest.approx(car.state[0, VX], abs=1e-9)


# --------------------------------------------------------------------------- vehicle file
def test_the_vehicle_file_declares_command_kinds() -> None:
    assert BASE.steering.steering_command == 'angle' and BASE.drive.drive_command is None
    assert BASE.drive_command_kind == 'wheel_speed'
    assert DART.drive_command_kind == 'throttle'
    assert ACCEL.drive_command_kind == 'acceleration'
    assert ACCEL.with_values(drive_command='force').drive_command_kind == 'force'
    with pytest.raises(VehicleParamsError, match=r"drive.drive_command: 'throttle' is not a "
                                                 r"command of drive_model 'first_order'"):
        BASE.with_values(drive_model='first_order', drive_command='throttle')


@pytest.mark.parametrize(('car', 'kind', 'text'), [
    (BASE, 'acceleration', "drive.drive_model 'pd_joint' takes wheel speeds [rad/s] or speeds "
                           '[m/s] (or speeds through its speed controller), not accelerations '
                           '[m/s^2]: acceleration commands need drive_model acceleration'),
    (DART, 'force', "drive.drive_model 'throttle' takes duties in [-1, 1] (or speeds through "
                    'its speed controller), not forces [N]: force commands need drive_model '
                    'acceleration'),
])
def test_a_kind_the_car_cannot_take_is_refused_in_the_users_terms(car: VehicleParams,
                                                                  kind: str, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        Car(car, drive_kind=kind)
    assert str(info.value) == f'{car.source}: {text}'


def test_a_calibration_alone_names_its_file_and_the_measured_defaults(tmp_path) -> None:
    """The issue's first error: a fit output loaded without the measured values it was fitted
    with is refused naming that file and the key, with the defaults it was combined with."""
    cal = tmp_path / 'calibrated.yaml'
    cal.write_text('mass_properties: {yaw_inertia: 0.00316}\n'
                   'tyres: {cornering_stiffness_front: 59.1, cornering_stiffness_rear: 64.2, '
                   'tyre_model: fiala}\n')
    with pytest.raises(VehicleParamsError) as info:
        load_vehicle_params(overrides=[cal])
    text = str(info.value)
    assert text.startswith(f'{cal}: mass_properties.yaw_inertia: the stiffest lateral/yaw mode')
    assert 'mass 3.74 kg, wheelbase 0.3302 m, cg_to_front_axle 0.15875 m are the defaults' in text
    assert f'--params measured.yaml --params {cal}' in text and 'pacejka' not in text
    measured = tmp_path / 'measured.yaml'
    measured.write_text('geometry: {wheelbase: 0.1735, cg_to_front_axle: 0.0805, '
                        'track_width: 0.08}\nmass_properties: {mass: 1.58, yaw_inertia: 0.00481}\n')
    assert load_vehicle_params(overrides=[measured, cal]).mass_properties.mass == 1.58


def test_a_tyre_model_override_checks_the_law_it_runs() -> None:
    """A Fiala car is not refused for Pacejka coefficients it never uses; a run that switches to
    the Magic Formula is, naming it."""
    p = DART.with_values(pacejka_lateral={'B': 30.0, 'C': 1.9, 'D': 1.0, 'E': 0.0})
    Car(p)
    with pytest.raises(ConfigError, match=r'tyre model pacejka: .* lower tyres.pacejka_lateral'):
        Car(p, tyre_model='pacejka')

