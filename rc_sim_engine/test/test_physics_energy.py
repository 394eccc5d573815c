"""Coast-down and braking sanity: energy never grows without drive, friction bounds deceleration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.actuators import rear_wheel_inertia
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.state import VX, VY, WHEEL_SPEED, YAW_RATE

G = GRAVITY_MPS2


def _energy(car: Car) -> float:
    """Kinetic energy of the chassis (translation + yaw) and of the two rear wheels' spin [J]."""
    p = car.params[0]
    s = car.state[0]
    m, iz = p.mass_properties.mass, p.mass_properties.yaw_inertia
    return (0.5 * m * (s[VX] ** 2 + s[VY] ** 2) + 0.5 * iz * s[YAW_RATE] ** 2
            + rear_wheel_inertia(p) * s[WHEEL_SPEED] ** 2)


@pytest.mark.parametrize('tyre_model', ['linear', 'fiala', 'pacejka'])
def test_free_rolling_coast_down_never_gains_energy(tyre_model: str) -> None:
    """Wheel loop off (gains 0): no drive torque, no losses modelled except tyre slip."""
    p = load_vehicle_params().with_values(wheel_p_gain=0.0, wheel_i_gain=0.0, wheel_d_gain=0.0)
    car = Car(p, dt=1e-3, tyre_model=tyre_model)
    car.reset(speed=3.0)
    car.step(0.0, 0.0, 500)  # straight: nothing dissipates, speed stays
    assert car.state[0, VX] == pytest.approx(3.0, abs=1e-6)
    energies = [_energy(car)]
    for _ in range(300):  # then a turn: lateral slip only dissipates
        car.step(0.3, 0.0, 10)
        energies.append(_energy(car))
    e = np.array(energies)
    assert np.all(np.diff(e) <= 1e-9 * e[0])
    assert e[-1] < 0.999 * e[0]
    assert np.all(np.isfinite(car.state))


def test_braking_deceleration_is_friction_limited_and_car_stops() -> None:
    """Command 0 rad/s at 4 m/s: the wheel loop brakes; |ax| <= max(MF) g lf / L (rear axle load)."""
    p = load_vehicle_params()
    g = p.geometry
    a_max = p.tyres.pacejka_longitudinal.D * G * g.cg_to_front_axle / g.wheelbase
    car = Car(p, dt=1e-3)
    car.reset(speed=4.0)
    v_prev, t_stop = 4.0, None
    for k in range(3000):
        car.step(0.0, 0.0)
        v = car.state[0, VX]
        assert (v_prev - v) / 1e-3 <= a_max * (1 + 1e-6)
        if t_stop is None and abs(v) < 1e-3:
            t_stop = (k + 1) * 1e-3
        v_prev = v
    assert t_stop is not None and t_stop >= 4.0 / a_max
    assert abs(car.state[0, VX]) < 1e-3 and abs(car.state[0, WHEEL_SPEED]) < 1e-1
    assert math.isfinite(car.state[0, VY])
