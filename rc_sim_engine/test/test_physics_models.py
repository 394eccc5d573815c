"""Model building blocks: axle loads, load transfer, registry, pure derivative."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.constants import GRAVITY_MPS2 as GRAVITY
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.models import KINEMATIC_RELAXATION, MODELS, axle_loads, get_model
from rc_sim_engine.vehicle.packed import pack_params
from rc_sim_engine.vehicle.state import N_STATE, STEER, VX, VY, WHEEL_SPEED, YAW, YAW_RATE


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


def test_load_transfer_scales_the_linear_cornering_stiffness_with_axle_load() -> None:
    """Forces recovered from the derivative by Newton-Euler (module docstring equations):
    with load transfer, Fz_f,r = m g (lr, lf) / L -+ Fx_r h / L and each linear axle force
    Fy = C (Fz / Fz_static) alpha, so Fy_lt / Fy_static = Fz_lt / Fz_static per axle."""
    p = load_vehicle_params().with_values(tyre_model='linear')
    g, mp = p.geometry, p.mass_properties
    m, iz, lf, lr, L, h = (mp.mass, mp.yaw_inertia, g.cg_to_front_axle, g.cg_to_rear_axle,
                           g.wheelbase, g.cg_height)
    delta = 0.2
    x = np.zeros(N_STATE)
    x[VX], x[VY], x[YAW_RATE], x[STEER] = 3.0, 0.1, 0.5, delta
    forces = {}
    for lt in (False, True):
        x[WHEEL_SPEED] = 3.3 / g.wheel_radius  # drive slip: Fx_r > 0
        d = get_model('single_track').derivative(x, pack_params([p], load_transfer=lt)[0])
        a = np.array([[math.cos(delta), 1.0], [lf * math.cos(delta), -lr]])
        fy_f, fy_r = np.linalg.solve(a, [m * (d[VY] + x[VX] * x[YAW_RATE]), iz * d[YAW_RATE]])
        fx_r = m * (d[VX] - x[VY] * x[YAW_RATE]) + fy_f * math.sin(delta)
        forces[lt] = (fy_f, fy_r, fx_r)
    (f0, r0, x0), (f1, r1, x1) = forces[False], forces[True]
    fz_f, fz_r = m * GRAVITY * lr / L, m * GRAVITY * lf / L
    shift = x0 * h / L
    assert x0 > 0.05 * fz_r and abs(r0) > 0.1 and abs(f0) > 0.1  # a real test point
    assert x1 / x0 == pytest.approx((fz_r + shift) / fz_r, rel=1e-9)
    assert r1 / r0 == pytest.approx((fz_r + shift) / fz_r, rel=1e-9)
    assert f1 / f0 == pytest.approx((fz_f - shift) / fz_f, rel=1e-9)
