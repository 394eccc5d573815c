"""Drive models against independent truths: the speed-loop ESC's exponential and piecewise
limited ramps, the throttle model's closed-form steady speed and its transient against scipy's
solve_ivp of the published equation, standstill without creep, command kinds, rolling radius."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
import pytest
from scipy.integrate import solve_ivp

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams, load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.rollout import InitialState, rollout
from rc_sim_engine.vehicle.state import DUTY, VX, WHEEL_SPEED

BASE = load_vehicle_params()
THROTTLE = BASE.with_values(drive_model='throttle')


def _esc_car(p: VehicleParams, **kwargs: object) -> Car:
    """A car driven by duties."""
    return Car(p, drive_kind='throttle', **kwargs)  # type: ignore[arg-type]


def _wheel_and_speed(car: Car, steer: float, drive: float, n: int
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    w, v = [], []
    for _ in range(n):
        car.step(steer, drive)
        w.append(car.state[0, WHEEL_SPEED])
        v.append(car.state[0, VX])
    return np.array(w), np.array(v)


# --------------------------------------------------------------------------- speed-loop ESC
@pytest.mark.parametrize('dt', [1e-3, 1e-2])
def test_esc_small_step_is_the_exponential(dt: float) -> None:
    tau, target = 0.2, 10.0  # initial rate 50 rad/s^2, below the 190 rad/s^2 limit
    p = BASE.with_values(drive_model='first_order', drive_time_constant=tau)
    w, _ = _wheel_and_speed(Car(p, dt=dt), 0.0, target, int(1.0 / dt))
    t = dt * np.arange(1, len(w) + 1)
    assert np.max(np.abs(w - target * (1 - np.exp(-t / tau)))) < 1e-12


@pytest.mark.parametrize('dt', [1e-3, 1e-2])
def test_esc_reversal_brakes_then_accelerates_then_settles(dt: float) -> None:
    """From +60 to -40 rad/s: braking ramp at a_brake / R to zero, accelerating ramp at a_acc / R
    until the error is tau a_acc / R, then the exponential (piecewise closed form)."""
    tau, acc, brake, R = 0.2, 2.0, 6.0, 0.05
    p = BASE.with_values(drive_model='first_order', drive_time_constant=tau, max_acceleration=acc,
                         max_deceleration=brake)
    car = Car(p, dt=dt)
    car.reset(speed=60.0 * R)
    w, _ = _wheel_and_speed(car, 0.0, -40.0, int(3.0 / dt))
    t = dt * np.arange(1, len(w) + 1)
    a_b, a_a = brake / R, acc / R
    t0 = 60.0 / a_b  # stopped
    w_band = -40.0 + tau * a_a  # the accelerating ramp ends here
    t1 = t0 + (-w_band) / a_a
    ref = np.where(t < t0, 60.0 - a_b * t,
                   np.where(t < t1, -a_a * (t - t0), -40.0 + tau * a_a * np.exp(-(t - t1) / tau)))
    assert np.max(np.abs(w - ref)) < 1e-9
    assert w[-1] == pytest.approx(-40.0, abs=0.01)


def test_esc_command_saturates_at_the_wheel_speed_limit() -> None:
    p = BASE.with_values(drive_model='first_order')
    car = Car(p, dt=1e-2)
    car.step(0.0, 1e4, 1000)
    assert car.wheel_speed()[0] == pytest.approx(p.drive.max_wheel_speed, rel=1e-9)


# --------------------------------------------------------------------------- throttle
def _steady_speed(p: VehicleParams, duty: float) -> float:
    """Closed-form root of (C_m1 - C_m2 v) d = C_r0 + C_r1 v + C_r2 v^2 (d > 0, forward); the
    reverse speed is the mirror image."""
    d = p.drive
    eff = abs(duty) - d.throttle_dead_band
    a, b, c = d.drag_coefficient, d.motor_back_emf_gain * eff + d.viscous_resistance, \
        -(d.motor_force_gain * eff - d.rolling_resistance)
    v = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    return math.copysign(v, duty)


@pytest.mark.parametrize('duty', [0.15, 0.35, 1.0, -0.3])
@pytest.mark.parametrize('dt', [1e-3, 1e-2])
def test_throttle_steady_speed_is_the_closed_form_root(duty: float, dt: float) -> None:
    p = THROTTLE.with_values(throttle_dead_band=0.05, effective_wheel_radius=0.048)
    car = _esc_car(p, dt=dt)
    car.step(0.0, duty, int(30.0 / dt))  # 25 time constants m / (C_m2 d + C_r1)
    v_star = _steady_speed(p, duty)
    assert car.state[0, VX] == pytest.approx(v_star, rel=1e-9)
    assert car.wheel_speed()[0] * 0.048 == pytest.approx(v_star, rel=1e-9)  # no slip left


def test_throttle_transient_matches_the_published_equation() -> None:
    """solve_ivp of m dv/dt = (C_m1 - C_m2 v) d_eff - C_r0 - C_r1 v - C_r2 v^2 with the duty lag
    dd/dt = (u - d) / tau_d (Liniger et al. 2015 force, DART's duty lag and dead band), written
    here. The car starts when the motor force exceeds C_r0. The duty keeps the force below the
    rear tyres' grip (the engine caps it there; the published equation has no cap)."""
    p = THROTTLE.with_values(throttle_dead_band=0.04, throttle_time_constant=0.08)
    d = p.drive
    m = p.mass_properties.mass
    u = 0.3

    def rhs(_t: float, y: NDArray[np.float64]) -> list[float]:
        v, duty = y
        eff = max(duty - d.throttle_dead_band, 0.0)
        drive = (d.motor_force_gain - d.motor_back_emf_gain * v) * eff
        if v <= 0.0 and drive <= d.rolling_resistance:
            dv = 0.0  # static friction holds the car
        else:
            dv = (drive - d.rolling_resistance - d.viscous_resistance * v
                  - d.drag_coefficient * v * v) / m
        return [dv, (u - duty) / d.throttle_time_constant]

    t_end = 4.0
    ref = solve_ivp(rhs, (0.0, t_end), [0.0, 0.0], max_step=1e-3, rtol=1e-10, atol=1e-12,
                    dense_output=True)
    for dt, tol in ((1e-3, 1e-4), (1e-2, 5e-4)):
        car = _esc_car(p, dt=dt)
        car.step(0.0, 0.0, n_steps=0)  # the duty lag starts settled at 0, like the reference
        _, v = _wheel_and_speed(car, 0.0, u, int(t_end / dt))
        t = dt * np.arange(1, len(v) + 1)
        v_ref = ref.sol(t)[0]
        assert np.max(np.abs(v - v_ref)) < tol * v_ref[-1], dt
        assert car.wheel_speed()[0] * p.effective_wheel_radius == pytest.approx(v[-1])


@pytest.mark.parametrize('model', ['single_track', 'kinematic', 'kinematic_4ws'])
@pytest.mark.parametrize('dt', [1e-3, 1e-2])
def test_throttle_standstill_coast_down_and_reverse(model: str, dt: float) -> None:
    p = THROTTLE
    car = _esc_car(p, model=model, dt=dt)
    breakaway = p.drive.rolling_resistance / p.drive.motor_force_gain
    for duty in (0.0, 0.9 * breakaway, -0.9 * breakaway):  # static friction holds the car
        _, v = _wheel_and_speed(car, 0.2, duty, int(2.0 / dt))
        assert np.all(v == 0.0) and car.wheel_speed()[0] == 0.0
    _, v = _wheel_and_speed(car, 0.0, 0.4, int(3.0 / dt))  # drive off, then coast
    assert v[-1] > 2.0
    _, v = _wheel_and_speed(car, 0.0, 0.0, int(6.0 / dt))
    assert np.all(v >= 0.0)  # rolling resistance never pushes it backwards
    assert v[-1] == 0.0 and car.wheel_speed()[0] == 0.0
    car.reset(speed=2.0)  # reverse duty while rolling forwards: plug braking, then reverse
    _, v = _wheel_and_speed(car, 0.1, -0.4, int(6.0 / dt))
    assert v.min() < 0.0 and np.all(np.diff(v[:int(0.3 / dt)]) < 0)
    if model != 'kinematic_4ws':  # straight-line steady state (4WS turns tighter)
        assert v[-1] == pytest.approx(_steady_speed(p, -0.4), rel=0.05)
    assert np.all(np.isfinite(car.state))


def test_throttle_coast_down_time_matches_the_published_equation() -> None:
    """Coasting from 3 m/s: m dv/dt = -C_r0 - C_r1 v - C_r2 v^2 reaches 0 at the time computed
    here with solve_ivp (terminal event); the engine's car stops within 2 ms of it (static
    friction takes over below 1 cm/s) and then stays exactly at rest."""
    p = THROTTLE
    d = p.drive
    m = p.mass_properties.mass

    def stop(_t: float, y: NDArray[np.float64]) -> float:
        return float(y[0])
    stop.terminal = True  # type: ignore[attr-defined]
    ref = solve_ivp(lambda _t, y: [-(d.rolling_resistance + d.viscous_resistance * y[0]
                                     + d.drag_coefficient * y[0] ** 2) / m],
                    (0.0, 10.0), [3.0], events=stop, rtol=1e-10, atol=1e-12)
    t_stop = float(ref.t_events[0][0])
    car = _esc_car(p, dt=1e-3)
    car.reset(speed=3.0)
    _, v = _wheel_and_speed(car, 0.0, 0.0, 4000)
    assert np.all(v >= 0.0) and v[-1] == 0.0
    t_engine = 1e-3 * (np.argmax(v < 1e-3) + 1)
    assert t_engine == pytest.approx(t_stop, abs=2e-3)


def test_steering_drag_opposes_the_motion_is_even_and_ramps_in_from_rest() -> None:
    from rc_sim_engine.vehicle.drive_models import V_STEER_DRAG, steering_drag

    s = math.sin(0.3)
    assert steering_drag(0.0, s, 5.0) == 0.0
    assert steering_drag(2.0, s, 5.0) == pytest.approx(5.0 * s * s, rel=1e-14)
    assert steering_drag(-2.0, s, 5.0) == pytest.approx(-5.0 * s * s, rel=1e-14)
    assert steering_drag(2.0, -s, 5.0) == steering_drag(2.0, s, 5.0)
    assert steering_drag(0.5 * V_STEER_DRAG, s, 5.0) == pytest.approx(2.5 * s * s, rel=1e-14)


@pytest.mark.parametrize('drive_model, changes', [('throttle', True), ('first_order', False)])
def test_steering_drag_acts_on_the_throttle_drive_only(drive_model: str, changes: bool) -> None:
    """The speed loop of a first_order ESC absorbs a drag; the throttle's force does not."""
    from rc_sim_engine.vehicle.models import MODELS
    from rc_sim_engine.vehicle.packed import pack_params
    from rc_sim_engine.vehicle.state import N_STATE, STEER

    x = np.zeros(N_STATE)
    x[VX], x[STEER], x[DUTY], x[WHEEL_SPEED] = 2.0, 0.25, 0.3, 40.0
    dvx = [MODELS['single_track'].derivative(x, pack_params([THROTTLE.with_values(
        drive_model=drive_model, steering_drag=c)])[0])[VX] for c in (0.0, 6.0)]
    m = THROTTLE.mass_properties.mass
    assert dvx[0] - dvx[1] == pytest.approx(6.0 * math.sin(0.25) ** 2 / m if changes else 0.0,
                                            rel=1e-12, abs=1e-15)


# --------------------------------------------------------------------------- kinds
def test_drive_kind_must_fit_the_drive_model() -> None:
    """Duties need a throttle drive; wheel speeds drive every car (a throttle car through its
    speed controller, issue 27); a mismatch names the car's file and key, not params[i]."""
    assert Car(BASE).drive_kind == 'wheel_speed'  # the default: today's wheel-speed commands
    assert _esc_car(THROTTLE).drive_kind == 'throttle'
    with pytest.raises(ConfigError, match=r"vehicle.yaml: drive.drive_model 'pd_joint' takes "
                                          r"wheel speeds .* not duties in \[-1, 1\]: throttle "
                                          r"commands need drive_model throttle") as info:
        Car(BASE, drive_kind='throttle')
    assert 'params[' not in str(info.value)
    assert Car([BASE, THROTTLE]).drive_kind == 'wheel_speed'  # mixed: mapper commands for both
    with pytest.raises(ConfigError, match=r"drive.drive_model 'pd_joint' takes"):
        rollout([THROTTLE, BASE], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0], None, t_out=[0.0, 1.0],
                drive_kind='throttle')
    with pytest.raises(ConfigError, match="unknown drive command kind 'duty'"):
        Car(THROTTLE, drive_kind='duty')


def test_rollout_primes_the_duty_lag_and_equals_car() -> None:
    p = THROTTLE.with_values(command_latency=0.05)
    dt = 1e-3
    t_cmd = np.arange(0.0, 3.0, 0.01)
    duty = 0.3 + 0.2 * np.sign(np.sin(2 * t_cmd))
    res = rollout([p, p.with_values(throttle_time_constant=0.2)], t_cmd, np.zeros_like(t_cmd),
                  duty, InitialState(vx=1.0), t_out=np.arange(0.0, 3.0, dt), dt=dt,
                  drive_kind='throttle')
    car = _esc_car(p, dt=dt)
    car.reset(speed=1.0)
    for k in range(len(t_cmd) - 1):
        car.step(0.0, duty[k], 10)
        np.testing.assert_array_equal(car.state[0], res.states[0, 10 * (k + 1)])
    assert res.states[1, 0, DUTY] == duty[0]  # the lag starts settled on the first command


# --------------------------------------------------------------------------- rolling radius
def test_effective_radius_sets_speed_per_wheel_speed_and_slip() -> None:
    r_eff = 0.97 * BASE.geometry.wheel_radius
    p = BASE.with_values(effective_wheel_radius=r_eff)
    car = Car(p, dt=1e-3)
    car.step(0.0, 60.0, 3000)  # pd_joint wheel loop, straight: no slip at steady state
    assert car.state[0, VX] == pytest.approx(60.0 * r_eff, rel=1e-9)
    car.reset(speed=2.0)  # rolling without slip from the start: speed holds with the loop off
    assert car.wheel_speed()[0] == pytest.approx(2.0 / r_eff)
    free = Car(p.with_values(wheel_p_gain=0.0), dt=1e-3)
    free.reset(speed=2.0)
    free.step(0.0, 0.0, 500)
    assert free.state[0, VX] == pytest.approx(2.0, abs=1e-12)
    res = rollout(p, [0.0], [0.0], [40.0], InitialState(vx=2.0), t_out=[0.0])
    assert res.wheel_speed[0, 0] == pytest.approx(2.0 / r_eff)
    for model, kind in (('first_order', 'wheel_speed'), ('throttle', 'throttle')):
        c = Car(p.with_values(drive_model=model), dt=1e-3, drive_kind=kind)
        c.reset(speed=1.5)
        assert c.wheel_speed()[0] == pytest.approx(1.5 / r_eff)
