"""Tyre laws against their closed forms and a 1:10 car's Pacejka table (independent numpy code)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import PacejkaCoefficients, load_vehicle_params
from rc_sim_engine.vehicle.tyres import (
    RACECAR_TABLE_WHEEL_LOAD,
    fiala_lateral_force,
    linear_lateral_force,
    magic_formula,
    magic_formula_force,
    racecar_pacejka_preset,
    with_racecar_pacejka,
)


def _mf_reference(x: np.ndarray, B: float, C: float, D: float, E: float) -> np.ndarray:
    """Pacejka & Bakker (1987) Magic Formula, written independently with numpy."""
    return D * np.sin(C * np.arctan(B * x - E * (B * x - np.arctan(B * x))))


@pytest.mark.parametrize('which', ['pacejka_lateral', 'pacejka_longitudinal'])
def test_magic_formula_equals_formula_for_vehicle_yaml(which: str) -> None:
    c = getattr(load_vehicle_params().tyres, which)
    x = np.linspace(-1.0, 1.0, 401)
    np.testing.assert_allclose(magic_formula(x, c), _mf_reference(x, c.B, c.C, c.D, c.E),
                               rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(magic_formula_force(x, 20.0, c),
                               20.0 * _mf_reference(x, c.B, c.C, c.D, c.E), rtol=1e-13)


def test_magic_formula_peak_and_slope_are_d_and_bcd() -> None:
    c = PacejkaCoefficients(B=7.0, C=1.6, D=0.9, E=-0.5)
    x = np.linspace(0.0, 2.0, 200_001)
    y = magic_formula(x, c)
    assert y.max() == pytest.approx(c.D, rel=1e-9)  # sin(C atan(.)) reaches 1 since C > 1
    h = 1e-7
    slope = (magic_formula(h, c) - magic_formula(-h, c)) / (2 * h)
    assert float(slope) == pytest.approx(c.B * c.C * c.D, rel=1e-8)


def test_racecar_preset_reproduces_the_table_in_newtons() -> None:
    lateral, longitudinal = racecar_pacejka_preset()
    fz = 5.5922 * 9.8065 / 4.0  # seed: M_tot g / 4 = 13.71 N
    assert fz == pytest.approx(13.71, abs=5e-3)
    assert pytest.approx(fz) == RACECAR_TABLE_WHEEL_LOAD
    # table: Fx B=3 C=1.45 D=19.0569 N E=0.52 ; Fy B=10 C=1.45 D=1.371 N E=0.97
    assert (longitudinal.B, longitudinal.C, longitudinal.E) == (3.0, 1.45, 0.52)
    assert (lateral.B, lateral.C, lateral.E) == (10.0, 1.45, 0.97)
    assert longitudinal.D * fz == pytest.approx(19.0569, rel=1e-12)
    assert lateral.D * fz == pytest.approx(1.371, rel=1e-12)
    # the force curve at the seed load equals the seed's newton formula
    s = np.linspace(-0.5, 0.5, 101)
    np.testing.assert_allclose(magic_formula_force(s, fz, longitudinal),
                               _mf_reference(s, 3.0, 1.45, 19.0569, 0.52), rtol=1e-12)
    np.testing.assert_allclose(magic_formula_force(s, fz, lateral),
                               _mf_reference(s, 10.0, 1.45, 1.371, 0.97), rtol=1e-12)


def test_racecar_preset_rejects_bad_load() -> None:
    with pytest.raises(ConfigError, match='wheel_load'):
        racecar_pacejka_preset(0.0)


def test_fiala_small_angle_slope_saturation_and_continuity() -> None:
    c_alpha, mu, fz = 90.0, 1.0, 18.0
    a_sl = math.atan(3 * mu * fz / c_alpha)
    # slope at 0 is C
    assert float(fiala_lateral_force(1e-7, c_alpha, mu, fz)) / 1e-7 == pytest.approx(c_alpha,
                                                                                     rel=1e-6)
    # saturated beyond the sliding angle, continuous there, odd
    assert float(fiala_lateral_force(a_sl * 1.5, c_alpha, mu, fz)) == pytest.approx(mu * fz)
    assert float(fiala_lateral_force(a_sl * (1 - 1e-9), c_alpha, mu, fz)) == pytest.approx(
        mu * fz, rel=1e-6)
    a = np.linspace(-0.4, 0.4, 81)
    f = fiala_lateral_force(a, c_alpha, mu, fz)
    np.testing.assert_allclose(f, -fiala_lateral_force(-a, c_alpha, mu, fz), atol=1e-12)
    assert np.all(np.abs(f) <= mu * fz + 1e-9)
    # unsaturated = the cubic polynomial everywhere (fiala_unsaturated)
    t = np.tan(a)
    cubic = (c_alpha * t - c_alpha ** 2 * np.abs(t) * t / (3 * mu * fz)
             + c_alpha ** 3 * t ** 3 / (27 * mu ** 2 * fz ** 2))
    np.testing.assert_allclose(fiala_lateral_force(a, c_alpha, mu, fz, saturate=False), cubic,
                               rtol=1e-12, atol=1e-12)


def test_linear_tyre() -> None:
    np.testing.assert_allclose(linear_lateral_force([-0.1, 0.0, 0.2], 100.0), [-10.0, 0.0, 20.0])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(B=st.floats(0.5, 20.0), C=st.floats(0.5, 1.9), D=st.floats(0.05, 2.0),
       E=st.floats(-2.0, 1.0), x=st.floats(-2.0, 2.0))
def test_magic_formula_is_odd_and_bounded_by_d(B: float, C: float, D: float, E: float,
                                               x: float) -> None:
    c = PacejkaCoefficients(B=B, C=C, D=D, E=E)
    y = float(magic_formula(x, c))
    assert abs(y) <= D * (1 + 1e-12)
    assert float(magic_formula(-x, c)) == pytest.approx(-y, abs=1e-12)
    assert y * x >= -1e-12  # same sign as the slip below the first zero (C < 2)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(alpha=st.floats(-1.2, 1.2), c_alpha=st.floats(10.0, 500.0), mu=st.floats(0.1, 2.0),
       fz=st.floats(1.0, 100.0))
def test_fiala_saturated_is_bounded_and_monotone(alpha: float, c_alpha: float, mu: float,
                                                 fz: float) -> None:
    f = float(fiala_lateral_force(alpha, c_alpha, mu, fz))
    assert abs(f) <= mu * fz * (1 + 1e-9)
    a2 = alpha + 1e-3
    assert float(fiala_lateral_force(a2, c_alpha, mu, fz)) >= f - 1e-9 * mu * fz


def test_racecar_preset_drives_the_single_track() -> None:
    """With the seed's lateral D = 0.1 (mu) the car can only corner at about 0.1 g: it slides."""
    from rc_sim_engine.vehicle.car import Car

    p = with_racecar_pacejka(load_vehicle_params())
    assert p.tyres.tyre_model == 'pacejka'
    assert pytest.approx(1.371 / RACECAR_TABLE_WHEEL_LOAD) == p.tyres.pacejka_lateral.D
    car = Car(p, dt=1e-3)
    car.reset(speed=3.0)
    car.step(0.3, 60.0, 3000)
    _, ay = car.body_acceleration()
    assert np.all(np.isfinite(car.state))
    assert 0.0 < ay[0] <= 0.1 * GRAVITY_MPS2 * 1.02
