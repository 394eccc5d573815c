"""Steady circles against closed forms: kinematic radius L / tan(delta), linear-tyre understeer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import Car


def _fit_circle_radius(x: np.ndarray, y: np.ndarray) -> float:
    """Algebraic (Kasa) least-squares circle fit: x^2 + y^2 + D x + E y + F = 0."""
    a = np.column_stack([x, y, np.ones_like(x)])
    b = -(x ** 2 + y ** 2)
    d, e, f = np.linalg.lstsq(a, b, rcond=None)[0]
    return float(math.sqrt(d * d / 4 + e * e / 4 - f))


def _circle(model: str, delta: float, speed: float, dt: float = 1e-3, settle: float = 3.0,
            record: float = 3.0, **kw: object) -> tuple[float, Car]:
    p = load_vehicle_params()
    car = Car(p, model=model, dt=dt, **kw)  # type: ignore[arg-type]
    car.reset(speed=speed)
    omega = speed / p.geometry.wheel_radius
    car.step(delta, omega, int(settle / dt))
    xs, ys = [], []
    for _ in range(int(record / 0.01)):
        car.step(delta, omega, int(0.01 / dt))
        bx, by, _ = car.base_link_pose()
        xs.append(bx[0])
        ys.append(by[0])
    return _fit_circle_radius(np.array(xs), np.array(ys)), car


@pytest.mark.parametrize(('model', 'integrator', 'speed', 'dt'), [
    ('kinematic', 'rk4', 2.0, 1e-3),
    ('kinematic', 'semi_implicit_euler', 2.0, 1e-3),
    ('kinematic', 'rk4', 1.0, 1e-2),
    ('single_track', 'rk4', 0.3, 1e-3),   # below the blend speed: kinematic regime
])
def test_kinematic_circle_radius_is_wheelbase_over_tan_delta(model: str, integrator: str,
                                                              speed: float, dt: float) -> None:
    p = load_vehicle_params()
    delta = 0.3
    radius, car = _circle(model, delta, speed, dt=dt, integrator=integrator)
    expected = p.geometry.wheelbase / math.tan(delta)  # base_link (rear axle) path radius
    assert abs(radius - expected) / expected < 0.005
    assert car.steering_angle()[0] == pytest.approx(delta, abs=1e-9)


def test_linear_tyre_understeer_gradient() -> None:
    """delta = L / R + K a_y with K = m / L (lr / Cf - lf / Cr) (Rajamani eq. 3.15; Gillespie)."""
    p = load_vehicle_params().with_values(tyre_model='linear')
    g, t, m = p.geometry, p.tyres, p.mass_properties.mass
    lf, lr, L = g.cg_to_front_axle, g.cg_to_rear_axle, g.wheelbase
    k_expected = m / L * (lr / t.cornering_stiffness_front - lf / t.cornering_stiffness_rear)
    delta = 0.02
    lhs, ay = [], []
    for speed in (4.0, 6.0, 8.0):
        _, car = _circle('single_track', delta, speed, settle=4.0, record=0.1)
        s = car.state[0]
        vx, vy, r = s[3], s[4], s[5]
        v = math.hypot(vx, vy)
        lhs.append(delta - L * r / v)   # delta - L / R, R = v / r (CG path radius)
        ay.append(v * r)
    k_fit = np.polyfit(ay, lhs, 1)[0]
    assert k_expected > 0
    assert abs(k_fit - k_expected) / k_expected < 0.02
