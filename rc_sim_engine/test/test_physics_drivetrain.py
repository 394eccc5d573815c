"""Locked-centre four-wheel drive (docs/engine.md, single_track, ``driven_axles: both_locked``):
properties the equations imply.

- straight ahead both axles roll on the same path: the car reaches the same speed as the rear
  drive and keeps going straight;
- in a steady turn the front axle runs on the longer path (its speed along the wheel is
  ``sqrt(v_r^2 + (L r)^2)``-like), so at the common wheel speed it brakes: the locked car turns
  less than the rear-driven one (understeer at low speed, where the tyres are linear);
- the throttle drive (force from the motor, no wheel slip) is not changed by the split.
"""

from __future__ import annotations

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.car import Car
from rc_sim_engine.state import VX, VY, YAW_RATE

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


def test_the_throttle_drive_is_not_changed_by_the_split() -> None:
    def run(axles: str) -> np.ndarray:
        p = load_vehicle_params().with_values(drive_model='throttle', driven_axles=axles,
                                              motor_force_gain=20.0, rolling_resistance=0.5)
        car = Car(p, dt=DT, drive_kind='throttle')
        car.step(0.2, 0.3, 600)
        return car.state[0].copy()

    np.testing.assert_allclose(run('both_locked'), run('rear'), rtol=0, atol=1e-12)
