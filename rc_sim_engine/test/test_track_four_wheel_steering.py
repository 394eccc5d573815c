"""Seed-004 four-wheel-steering kinematics (eq. 1-9) and the engine model ``kinematic_4ws``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.four_wheel_steering import (
    icr_projection,
    kinematic_4ws_rates,
    rear_speed_from_front,
    turning_radii,
)

PARAMS = load_vehicle_params()
L = PARAMS.geometry.wheelbase
K_CYCAB = 0.69


def test_geometry_of_the_rotation_centre() -> None:
    """Eq. 1-5 against the construction: G seen from R at angle k phi, from F at angle phi."""
    phi = np.linspace(0.05, 0.4, 8)
    rh, hf = icr_projection(phi, L, K_CYCAB)
    np.testing.assert_allclose(rh + hf, L, rtol=1e-12)  # RH + HF = L
    gh = hf / np.tan(phi)  # F's wheel is perpendicular to FG
    np.testing.assert_allclose(gh * np.tan(K_CYCAB * phi), rh, rtol=1e-12)  # eq. 1
    rho_r, rho_f = turning_radii(phi, L, K_CYCAB)
    np.testing.assert_allclose(rho_r, np.hypot(rh, gh), rtol=1e-12)
    np.testing.assert_allclose(rho_f, np.hypot(hf, gh), rtol=1e-12)
    # eq. 7: same yaw rate for both axle centres
    np.testing.assert_allclose(rear_speed_from_front(1.0, phi, K_CYCAB), rho_r / rho_f,
                               rtol=1e-12)
    # k = 0: the ordinary bicycle
    np.testing.assert_allclose(turning_radii(phi, L, 0.0)[0], L / np.tan(phi), rtol=1e-12)


def test_eq8_integrated_moves_the_rear_axle_on_the_eq5_circle() -> None:
    """Independent check of eq. 8 vs eq. 5: RK4 of the rear-axle ODE, fitted circle radius."""
    phi, v, dt = 0.3, 1.0, 1e-3
    state = np.zeros(3)

    def f(s: np.ndarray) -> np.ndarray:
        return np.array(kinematic_4ws_rates(s[2], v, phi, L, K_CYCAB), dtype=float)

    pts = []
    for _ in range(4000):
        k1 = f(state)
        k2 = f(state + 0.5 * dt * k1)
        k3 = f(state + 0.5 * dt * k2)
        k4 = f(state + dt * k3)
        state = state + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        pts.append(state[:2].copy())
    radius = _fit_circle(np.array(pts))
    assert radius == pytest.approx(float(turning_radii(phi, L, K_CYCAB)[0]), rel=1e-6)


def _fit_circle(p: np.ndarray) -> float:
    """Algebraic least-squares circle (Kasa fit)."""
    a = np.column_stack([2 * p[:, 0], 2 * p[:, 1], np.ones(len(p))])
    b = (p ** 2).sum(axis=1)
    cx, cy, c = np.linalg.lstsq(a, b, rcond=None)[0]
    return math.sqrt(c + cx * cx + cy * cy)


@pytest.mark.parametrize('k', [K_CYCAB, 0.0])
def test_engine_model_turning_radius_matches_eq5(k: float) -> None:
    """Car(model='kinematic_4ws') with rear_steering_ratio k at a steady 0.3 rad: base_link (the
    rear axle centre R) circles with rho_R = L cos(phi) / sin((1 + k) phi) (steady state: exact)."""
    params = PARAMS.with_values(rear_steering_ratio=k)
    car = Car(params, model='kinematic_4ws', dt=1e-3)
    car.reset(speed=1.0)
    car.step(0.3, 1.0 / params.geometry.wheel_radius, n_steps=1500)  # servo and speed settle
    pts, yaws = [], []
    for _ in range(300):
        car.step(0.3, 1.0 / params.geometry.wheel_radius, n_steps=10)
        x, y, yaw = car.base_link_pose()
        pts.append((float(x[0]), float(y[0])))
        yaws.append(float(yaw[0]))
    delta = float(car.steering_angle()[0])
    assert delta == pytest.approx(0.3, abs=1e-3)
    expected = float(turning_radii(delta, params.geometry.wheelbase, k)[0])
    assert _fit_circle(np.array(pts)) == pytest.approx(expected, rel=1e-6)  # issue: < 0.5 %
    # R moves along its (counter-steered) wheel, perpendicular to RG: at -k phi from the heading
    # (eq. 1: G lies GH = HF / tan(phi) to the side of H, RH = GH tan(k phi) ahead of R)
    p = np.array(pts)
    chord = p[2:] - p[:-2]  # central difference: direction at the middle sample
    slip = np.arctan2(chord[:, 1], chord[:, 0]) - np.array(yaws[1:-1])
    np.testing.assert_allclose(np.angle(np.exp(1j * slip)), -k * delta, atol=1e-4)
    if k > 0:  # counter-phase rear steering turns much tighter than the 2WS bicycle
        assert expected < 0.7 * params.geometry.wheelbase / math.tan(delta)
