"""The reference itself against closed-form results (a wrong reference would pass a wrong engine).

- tyre laws: Fiala's slope ``C`` at the origin, full sliding ``mu Fz`` from ``atan(3 mu Fz / C)``
  on, continuity there (Pacejka 2012 §3.2); the Magic Formula's peak ``D`` and slope ``B C D``
  (Pacejka & Bakker 1987);
- steady cornering with linear tyres at small steering: the yaw rate of Rajamani's understeer
  gradient, ``r = v delta / (L + K v^2)`` with ``K = m / L (lr / Cf - lf / Cr)`` (Rajamani 2012,
  ch. 3), up to the O(delta^2) terms the closed form drops;
- energy: with the wheel loop off (gains 0) the reference conserves chassis plus wheel kinetic
  energy on a straight line and only loses it in a turn (tyre slip dissipates).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params

from . import single_track as st
from .manoeuvres import batch_command, constant, ramp

BASE = load_vehicle_params()


def test_fiala_slope_saturation_and_continuity() -> None:
    c, mu, fz = 94.3, 1.05, 19.0
    h = 1e-7
    assert st.fiala(np.array(h), c, mu, fz) / h == pytest.approx(c, rel=1e-6)
    alpha_sl = math.atan(3 * mu * fz / c)
    below = st.fiala(np.array(alpha_sl * (1 - 1e-9)), c, mu, fz)
    assert below == pytest.approx(mu * fz, rel=1e-7)
    assert st.fiala(np.array([alpha_sl, 1.0, -1.0]), c, mu, fz) == pytest.approx(
        [mu * fz, mu * fz, -mu * fz])
    a = np.linspace(-alpha_sl, alpha_sl, 101)
    assert np.all(np.diff(st.fiala(a, c, mu, fz)) > 0)  # monotone up to full sliding


def test_magic_formula_peak_and_slope() -> None:
    b, c, d, e = 10.0, 1.65, 1.05, 0.3
    x_peak = math.tan(math.pi / (2 * c)) / b  # with E = 0: C atan(B x) = pi / 2
    assert st.magic_formula(np.array(x_peak), (b, c, d, 0.0)) == pytest.approx(d, rel=1e-12)
    h = 1e-8
    assert st.magic_formula(np.array(h), (b, c, d, e)) / h == pytest.approx(b * c * d, rel=1e-6)
    x = np.linspace(-1, 1, 11)
    assert st.magic_formula(-x, (b, c, d, e)) == pytest.approx(-st.magic_formula(x, (b, c, d, e)))


@pytest.mark.parametrize('speed', [3.0, 6.0])
def test_linear_steady_yaw_rate_follows_the_understeer_gradient(speed: float) -> None:
    p = st.RefParams.from_vehicle(BASE, 'linear')
    delta = 0.004  # small: the closed form drops O(delta^2) geometry and drive-force terms
    eq = st.steady_state(p, delta, speed / p.radius)
    k = p.m / p.wheelbase * (p.lr / p.c_front - p.lf / p.c_rear)
    expected = eq['vx'] * delta / (p.wheelbase + k * eq['vx'] ** 2)
    assert eq['yaw_rate'] == pytest.approx(expected, rel=2e-4)
    # the CG sideslip of the same closed form: beta = (lr - m lf vx^2 / (L Cr)) r / vx
    beta = (p.lr - p.m * p.lf * eq['vx'] ** 2 / (p.wheelbase * p.c_rear)) * expected / eq['vx']
    assert eq['vy'] / eq['vx'] == pytest.approx(beta, rel=2e-3, abs=1e-7)


def test_energy_is_conserved_straight_and_dissipated_in_a_turn() -> None:
    p = dataclasses.replace(st.RefParams.from_vehicle(BASE, 'fiala'), wheel_kp=0.0)
    t = np.linspace(0.0, 1.5, 151)
    manoeuvre = ramp(0.0, 0.25, 1.0, 0.2)  # straight for 1 s, then a turn

    class M:
        delta_cmd = manoeuvre
        omega_cmd = constant(0.0)

    z0 = st.initial_state(p, np.array([3.0]))
    sol = st.simulate(p, z0, batch_command([M], 'delta_cmd'), batch_command([M], 'omega_cmd'), t)
    energy = (0.5 * p.m * (sol['vx'][0] ** 2 + sol['vy'][0] ** 2)
              + 0.5 * p.iz * sol['yaw_rate'][0] ** 2 + p.j_wheel * sol['wheel_speed'][0] ** 2)
    straight = t <= 1.0
    assert np.max(np.abs(energy[straight] - energy[0])) < 1e-9 * energy[0]
    assert np.all(np.diff(energy) <= 1e-9 * energy[0])
    assert energy[-1] < 0.99 * energy[0]
