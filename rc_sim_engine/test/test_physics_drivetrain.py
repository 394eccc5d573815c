"""Locked-centre four-wheel drive (docs/engine.md, single_track, ``driven_axles: both_locked``):
properties the equations imply.

- straight ahead both axles roll on the same path: the car reaches the same speed as the rear
  drive and keeps going straight;
- in a steady turn the front axle runs on the longer path (its speed along the wheel is
  ``sqrt(v_r^2 + (L r)^2)``-like), so at the common wheel speed it brakes: the locked car turns
  less than the rear-driven one (understeer at low speed, where the tyres are linear);
- the throttle drive (force from the motor, no wheel slip) drives both axles in proportion to
  their loads: straight ahead the car is the rear-driven one; in a turn the front share acts
  along the steered wheel (a lateral force and a yaw moment the rear drive lacks).
"""

from __future__ import annotations

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.state import VX, VY, YAW_RATE

DT = 0.005
SPEED = 2.0


def _run(axles: str, delta: float, seconds: float = 5.0) -> np.ndarray:
    p = load_vehicle_params().with_values(drive_model='first_order', driven_axles=axles,
                                          tyre_model='linear')
    car = Car(p, dt=DT)
    car.reset(speed=SPEED)
    omega = SPEED / p.effective_wheel_radius
    car.step(delta, omega, round(seconds / DT))
    return car.state[0].copy()


def test_straight_ahead_both_layouts_agree() -> None:
    rear, both = _run('rear', 0.0), _run('both_locked', 0.0)
    assert both[VX] == pytest.approx(rear[VX], rel=1e-6)
    assert abs(both[VY]) < 1e-9 and abs(both[YAW_RATE]) < 1e-9


@pytest.mark.parametrize('delta', [0.1, 0.25])
def test_a_locked_centre_understeers(delta: float) -> None:
    rear, both = _run('rear', delta), _run('both_locked', delta)
    assert 0.0 < both[YAW_RATE] < (1.0 - 1e-3) * rear[YAW_RATE]


def test_the_understeer_grows_with_the_steering_angle() -> None:
    """The path-length difference of the axles grows with the curvature."""
    loss = [1.0 - _run('both_locked', d)[YAW_RATE] / _run('rear', d)[YAW_RATE]
            for d in (0.1, 0.25)]
    assert 0.0 < loss[0] < loss[1]


def _throttle_car(axles: str) -> tuple[Car, object]:
    p = load_vehicle_params().with_values(drive_model='throttle', driven_axles=axles,
                                          motor_force_gain=20.0, rolling_resistance=0.5)
    return Car(p, dt=DT, drive_kind='throttle'), p


def test_the_throttle_drive_straight_ahead_is_the_rear_drive() -> None:
    def run(axles: str) -> np.ndarray:
        car, _ = _throttle_car(axles)
        car.step(0.0, 0.3, 600)
        return car.state[0].copy()

    np.testing.assert_allclose(run('both_locked'), run('rear'), rtol=0, atol=1e-12)


def test_the_throttle_drive_in_a_turn_pulls_the_nose_in() -> None:
    """Under power the front share of a locked 4WD acts along the steered wheel: more yaw rate
    than the rear-driven car with the same commands (the sign of ``lf Fx_f sin(delta)``)."""
    rates = {}
    for axles in ('rear', 'both_locked'):
        car, _ = _throttle_car(axles)
        car.step(0.2, 0.3, 600)
        rates[axles] = car.state[0][YAW_RATE]
    assert rates['both_locked'] > (1.0 + 1e-3) * rates['rear'] > 0.0


@pytest.mark.parametrize('axles, c_rd', [('both_locked', 0.0), ('both_locked', 6.0),
                                          ('rear', 0.0), ('rear', 6.0)])
def test_the_body_rates_share_the_throttle_force_by_the_axle_loads(axles: str,
                                                                   c_rd: float) -> None:
    """d(vx, vy, r)/dt of one throttle state: F = C_m1 d - C_m2 d v - C_r0 - C_r1 v - C_r2 v|v|
    - C_rd sin^2(delta), shared (locked 4WD) as Fx_f = F Fz_f / (Fz_f + Fz_r) along the front
    wheel, the rest at the rear; all at the rear for a rear drive."""
    import math

    from rc_sim_description.constants import GRAVITY_MPS2 as G
    from rc_sim_engine.vehicle.models import MODELS
    from rc_sim_engine.vehicle.packed import pack_params
    from rc_sim_engine.vehicle.state import DUTY, N_STATE, STEER

    _, p = _throttle_car(axles)
    p = p.with_values(tyre_model='linear', steering_drag=c_rd)
    vx, vy, r, delta, duty = 3.0, 0.1, 0.8, 0.2, 0.4
    x = np.zeros(N_STATE)
    x[VX], x[VY], x[YAW_RATE], x[STEER], x[DUTY] = vx, vy, r, delta, duty
    d = MODELS['single_track'].derivative(x, pack_params([p])[0])

    dr = p.drive
    m, iz = p.mass_properties.mass, p.mass_properties.yaw_inertia
    lf, lr, L = p.geometry.cg_to_front_axle, p.geometry.cg_to_rear_axle, p.geometry.wheelbase
    fz_f, fz_r = m * G * lr / L, m * G * lf / L
    c, s = math.cos(delta), math.sin(delta)
    force = (dr.motor_force_gain * duty - dr.motor_back_emf_gain * duty * vx
             - dr.rolling_resistance - dr.viscous_resistance * vx - dr.drag_coefficient * vx * vx
             - c_rd * s * s)
    share = fz_f / (fz_f + fz_r) if axles == 'both_locked' else 0.0
    fx_f, fx_r = force * share, force * (1.0 - share)
    v_fy = -vx * s + (vy + lf * r) * c
    fy_f = p.tyres.cornering_stiffness_front * -math.atan2(v_fy, vx * c + (vy + lf * r) * s)
    fy_r = p.tyres.cornering_stiffness_rear * -math.atan2(vy - lr * r, vx)
    assert abs(fx_f * s) > 0.1 or axles == 'rear'             # the term matters here
    expected = ((fx_r + fx_f * c - fy_f * s) / m + vy * r,
                (fy_r + fy_f * c + fx_f * s) / m - vx * r,
                (lf * (fy_f * c + fx_f * s) - lr * fy_r) / iz)
    np.testing.assert_allclose([d[VX], d[VY], d[YAW_RATE]], expected, rtol=1e-12, atol=1e-12)


#: vx, vy [m/s], yaw rate [rad/s], steering angle [rad] of the derivative tests (above the
#: blend speed; the wheels turn 5 % faster than the car)
VX0, VY0, R0, DELTA0 = 3.0, 0.1, 0.8, 0.2


def _locked_derivative(load_transfer: bool) -> tuple[object, np.ndarray]:
    """(params, state derivative) of the locked four-wheel drive with linear tyres."""
    from rc_sim_engine.vehicle.models import MODELS
    from rc_sim_engine.vehicle.packed import pack_params
    from rc_sim_engine.vehicle.state import N_STATE, STEER, WHEEL_SPEED

    p = load_vehicle_params().with_values(drive_model='first_order', driven_axles='both_locked',
                                          tyre_model='linear')
    x = np.zeros(N_STATE)
    x[VX], x[VY], x[YAW_RATE], x[STEER] = VX0, VY0, R0, DELTA0
    x[WHEEL_SPEED] = 1.05 * VX0 / p.effective_wheel_radius
    return p, MODELS['single_track'].derivative(
        x, pack_params([p], load_transfer=load_transfer)[0])


def _hand_written(p, load_transfer: bool) -> tuple[tuple[float, float, float], float]:  # type: ignore[no-untyped-def]
    """docs/engine.md's body rates written out here; also the front drive's share of the load
    shift [N] (0 without load transfer)."""
    import math

    from rc_sim_description.constants import GRAVITY_MPS2 as G

    m, iz, h = p.mass_properties.mass, p.mass_properties.yaw_inertia, p.geometry.cg_height
    lf, lr, L = p.geometry.cg_to_front_axle, p.geometry.cg_to_rear_axle, p.geometry.wheelbase
    fz_f0, fz_r0 = m * G * lr / L, m * G * lf / L
    lon = p.tyres.pacejka_longitudinal

    def mf(k: float) -> float:
        bx = lon.B * k
        return lon.D * math.sin(lon.C * math.atan(bx - lon.E * (bx - math.atan(bx))))

    vx, vy, r, c, s = VX0, VY0, R0, math.cos(DELTA0), math.sin(DELTA0)
    wheel = 1.05 * vx  # R omega
    v_fx = vx * c + (vy + lf * r) * s
    v_fy = -vx * s + (vy + lf * r) * c
    kappa_r, kappa_f = (wheel - vx) / vx, (wheel - v_fx) / v_fx
    front_share = fz_f0 * mf(kappa_f) * c * h / L if load_transfer else 0.0
    shift = fz_r0 * mf(kappa_r) * h / L + front_share if load_transfer else 0.0
    fz_f, fz_r = fz_f0 - shift, fz_r0 + shift
    fx_r, fx_f = fz_r * mf(kappa_r), fz_f * mf(kappa_f)
    fy_f = p.tyres.cornering_stiffness_front * fz_f / fz_f0 * -math.atan2(v_fy, v_fx)
    fy_r = p.tyres.cornering_stiffness_rear * fz_r / fz_r0 * -math.atan2(vy - lr * r, vx)
    assert abs(fx_f) > 1.0 and abs(fx_f * s) > 0.1          # the terms matter here
    return ((fx_r + fx_f * c - fy_f * s) / m + vy * r,
            (fy_r + fy_f * c + fx_f * s) / m - vx * r,
            (lf * (fy_f * c + fx_f * s) - lr * fy_r) / iz), front_share


def test_the_body_rates_hold_the_front_drive_force_as_documented() -> None:
    """d(vx, vy, r)/dt of one state above the blend speed, from docs/engine.md's equations
    written out here (linear tyres, static loads, both axles at the common wheel speed)."""
    p, d = _locked_derivative(load_transfer=False)
    expected, _ = _hand_written(p, load_transfer=False)
    np.testing.assert_allclose([d[VX], d[VY], d[YAW_RATE]], expected, rtol=1e-12, atol=1e-12)


def test_load_transfer_with_both_axles_locked_counts_the_front_drive_force() -> None:
    """With load transfer the axle loads shift by ``F_x h / L``, F_x the drive force at static
    loads: with both axles locked the rear's AND the front's (along the car, ``Fx_f cos
    delta``); the forces then act at the shifted loads (linear tyres scale with the load)."""
    p, d = _locked_derivative(load_transfer=True)
    expected, front_share = _hand_written(p, load_transfer=True)
    assert abs(front_share) > 0.2                            # the front's share matters here
    np.testing.assert_allclose([d[VX], d[VY], d[YAW_RATE]], expected, rtol=1e-12, atol=1e-12)
