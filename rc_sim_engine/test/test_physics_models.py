"""Model building blocks: axle loads, load transfer, registry, pure derivative."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.car import Car
from rc_sim_engine.models import KINEMATIC_RELAXATION, MODELS, axle_loads, get_model
from rc_sim_engine.packed import GRAVITY, pack_params
from rc_sim_engine.state import N_STATE, STEER, VX, WHEEL_SPEED, YAW, YAW_RATE


@pytest.mark.parametrize('fx', [-30.0, 0.0, 12.5])
def test_axle_loads_static_split_and_transfer(fx: float) -> None:
    p = load_vehicle_params()
    g, m = p.geometry, p.mass_properties.mass
    static = pack_params([p])[0]
    fz_f, fz_r = axle_loads(static, fx)  # load transfer off: static split whatever fx
    assert fz_f == pytest.approx(m * GRAVITY * g.cg_to_rear_axle / g.wheelbase)
    assert fz_r == pytest.approx(m * GRAVITY * g.cg_to_front_axle / g.wheelbase)
    lt = pack_params([p], load_transfer=True)[0]
    tf, tr = axle_loads(lt, fx)
    assert tf + tr == pytest.approx(m * GRAVITY)
    assert tr - fz_r == pytest.approx(fx * g.cg_height / g.wheelbase)


def test_load_transfer_helps_a_rear_driven_launch() -> None:
    """Accelerating moves load onto the driven rear axle: more traction, faster launch."""
    p = load_vehicle_params()
    speeds = []
    for lt in (False, True):
        car = Car(p, dt=1e-3, load_transfer=lt)
        car.step(0.0, 150.0, 300)
        speeds.append(car.state[0, VX])
    assert speeds[1] > speeds[0] * 1.01


def test_registry_and_pure_derivative() -> None:
    assert {'kinematic', 'single_track'} <= set(MODELS)
    p = pack_params([load_vehicle_params()])[0]
    x = np.zeros(N_STATE)
    x[VX], x[STEER], x[YAW], x[WHEEL_SPEED] = 2.0, 0.2, 0.3, 40.0
    d = get_model('kinematic').derivative(x, p)
    # kinematic: yaw rate relaxes towards vx tan(delta) / L from 0, pose moves along the heading
    L = load_vehicle_params().geometry.wheelbase
    assert d[YAW_RATE] > 0 and d[0] == pytest.approx(2.0 * math.cos(0.3))
    assert d[YAW_RATE] == pytest.approx(d[VX] * math.tan(0.2) / L
                                        + (2.0 * math.tan(0.2) / L) / KINEMATIC_RELAXATION)
    d2 = MODELS['single_track'].derivative(x, p)
    assert np.all(np.isfinite(d2)) and d2[STEER] == 0.0
