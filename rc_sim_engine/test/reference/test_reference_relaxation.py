"""The reference's tyre relaxation against closed forms and limits (no engine involved).

- linearisation: at straight running, the reference's (vy, r, alpha'_f, alpha'_r) Jacobian and
  steering column equal the published linear single-track model with first-order relaxed slip
  angles (``linear_bicycle``: Rajamani 2012 §2.3 with Pacejka 2012 §7.2), so their eigenvalues
  agree too;
- frequency response: the reference's simulated small-amplitude sine steer gives the yaw-rate
  response ``H(j w)`` of that linear model (numpy, no integration) at 1, 3 and 6 Hz;
- step steer: the reference's small step follows the linear model's response (scipy ``lsim`` of
  the reference's own steering angle); relaxation delays the onset and lowers the damping;
- sigma -> 0: the rate cap (400 1/s) makes every sigma below v / 400 the same 2.5 ms lag, and the
  difference from sigma = 0 is first order in that lag (the quadratic through two uncapped lags
  predicts it);
- steady cornering: the equilibrium (solved with alpha' as unknowns) does not depend on sigma,
  and a relaxed car settles onto it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.signal import lsim

from rc_sim_description.params import load_vehicle_params

from . import single_track as st
from .linear_bicycle import lateral_matrices, yaw_rate_response
from .manoeuvres import Manoeuvre, batch_command, constant, ramp, sine
from .relaxation import RELAXATION_RATE_CAP

BASE = load_vehicle_params()
SPEED = 4.0  # m/s
SIGMA = (0.04, 0.06)  # m: front, rear (10 and 15 ms at 4 m/s)


def _params(tyre: str, load_transfer: bool, sigma_front: float,
            sigma_rear: float) -> st.RefParams:
    return st.RefParams.from_vehicle(BASE, tyre, load_transfer,
                                     relaxation_length_front=sigma_front,
                                     relaxation_length_rear=sigma_rear)


def _stiffness(p: st.RefParams) -> tuple[float, float]:
    """Cornering stiffness of each axle at alpha = 0 and static load: C, or B C D Fz."""
    if p.tyre_model == 'pacejka':
        b, c, d, _ = p.lateral
        return b * c * d * p.fz_front_static, b * c * d * p.fz_rear_static
    return p.c_front, p.c_rear


def _linear(p: st.RefParams, speed: float) -> tuple[np.ndarray, np.ndarray]:
    return lateral_matrices(p.m, p.iz, p.lf, p.lr, *_stiffness(p), speed,
                            p.relaxation_length_front, p.relaxation_length_rear)


def _simulate(cars: list[tuple[st.RefParams, Manoeuvre]], t: np.ndarray,
              rtol: float = 1e-9) -> st.Solution:
    p = st.RefParams.stack([c for c, _ in cars])
    man = [m for _, m in cars]
    z0 = st.initial_state(p, np.array([m.speed for m in man]), np.array([m.steering for m in man]))
    sol = st.simulate(p, z0, batch_command(man, 'delta_cmd'), batch_command(man, 'omega_cmd'), t,
                      rtol=rtol, atol=rtol * 1e-2)
    st.check_servo_linear(sol)
    return sol


@pytest.mark.parametrize('tyre', ['linear', 'fiala', 'pacejka'])
@pytest.mark.parametrize('sigma', [SIGMA, (SIGMA[0], 0.0), (0.0, SIGMA[1]), (0.0, 0.0)])
def test_linearisation_is_the_linear_bicycle_with_relaxation(
        tyre: str, sigma: tuple[float, float]) -> None:
    p = _params(tyre, True, *sigma)
    a, b = _linear(p, SPEED)
    idx = [st.VY, st.R] + [k for k, s in zip((st.ALPHA_F, st.ALPHA_R), sigma) if s > 0]
    z = np.zeros((st.N_REF, 1))
    z[st.VX], z[st.OMEGA] = SPEED, SPEED / p.radius
    h = 1e-7

    def column(k: int) -> np.ndarray:
        dz = np.zeros_like(z)
        dz[k] = h
        omega_cmd = np.array([SPEED / p.radius])
        plus = st.rhs(z + dz, z[st.DELTA], omega_cmd, p)
        minus = st.rhs(z - dz, z[st.DELTA], omega_cmd, p)
        return (plus - minus)[:, 0] / (2 * h)

    jac = np.stack([column(k) for k in idx], axis=1)
    # Fiala's |t| t term leaves C h / (3 mu Fz) ~ 2e-7 in a central difference (measured 1.8e-7;
    # linear 2.5e-16, Magic Formula 8.1e-14)
    assert np.max(np.abs(jac[idx] - a)) < 1e-5 * np.max(np.abs(a))
    assert np.max(np.abs(column(st.DELTA)[idx] - b)) < 1e-5 * np.max(np.abs(b))
    # the lateral block is decoupled from the longitudinal states at straight running
    assert np.max(np.abs(jac[[st.VX, st.OMEGA]])) < 1e-6
    lam_ref = np.sort_complex(np.linalg.eigvals(jac[idx]))
    lam = np.sort_complex(np.linalg.eigvals(a))
    assert np.max(np.abs(lam_ref - lam)) < 1e-4 * np.max(np.abs(lam))
    assert np.all(lam.real < 0)


#: small sine steers: 5 mrad command, 1 to 6 Hz, settled after 1.5 s (slowest pole -14 1/s)
FREQUENCIES_HZ = (1.0, 3.0, 6.0)
#: relative tolerance of the fitted response: the 3rd-order terms of the Magic Formula and the
#: atan geometry at 5 mrad (measured 1e-5 linear, 4.5e-5 Magic Formula)
H_TOL = 2e-4


def _phasor(t: np.ndarray, x: np.ndarray, frequency_hz: float) -> complex:
    """Least-squares complex amplitude at one frequency (offset and 2nd harmonic fitted too)."""
    w = 2 * np.pi * frequency_hz
    basis = np.stack([np.ones_like(t), np.sin(w * t), np.cos(w * t), np.sin(2 * w * t),
                      np.cos(2 * w * t)], axis=1)
    c = np.linalg.lstsq(basis, x, rcond=None)[0]
    return complex(c[1], c[2])


@pytest.mark.parametrize('tyre', ['linear', 'pacejka'])
def test_small_sine_steer_follows_the_linear_frequency_response(tyre: str) -> None:
    wheel = constant(SPEED / BASE.geometry.wheel_radius)
    cars = [(_params(tyre, False, *sigma), Manoeuvre(f'{f}', SPEED, 0.0, sine(0.005, f), wheel))
            for sigma in (SIGMA, (0.0, 0.0)) for f in FREQUENCIES_HZ]
    t = np.round(np.arange(0.0, 2.5 + 1e-9, 0.002), 9)
    sol = _simulate(cars, t)
    steady = t >= 1.5
    h = {}
    for i, (p, _) in enumerate(cars):
        f = FREQUENCIES_HZ[i % len(FREQUENCIES_HZ)]
        got = (_phasor(t[steady], sol['yaw_rate'][i, steady], f)
               / _phasor(t[steady], sol['steer'][i, steady], f))
        expected = complex(yaw_rate_response(*_linear(p, SPEED), np.array(f)))
        assert abs(got / expected - 1) < H_TOL, (p.relaxation_length_front, f, got, expected)
        h[(p.relaxation_length_front > 0, f)] = expected
    for f in FREQUENCIES_HZ:  # relaxation changes the response far beyond the tolerance
        assert abs(h[(True, f)] / h[(False, f)] - 1) > 50 * H_TOL


def test_small_step_steer_follows_the_linear_model_and_relaxation_delays_its_onset() -> None:
    step = Manoeuvre('step', SPEED, 0.0, ramp(0.0, 0.01, 0.1, 0.02),
                     constant(SPEED / BASE.geometry.wheel_radius))
    cars = [(_params('linear', False, *sigma), step) for sigma in (SIGMA, (0.0, 0.0))]
    t = np.round(np.arange(0.0, 0.6 + 1e-9, 2e-4), 9)
    sol = _simulate(cars, t)
    times = []
    for i, (p, _) in enumerate(cars):
        a, b = _linear(p, SPEED)
        c = np.zeros((1, len(b)))
        c[0, 1] = 1.0
        _, r_lin, _ = lsim((a, b[:, None], c, np.zeros((1, 1))), sol['steer'][i], t)
        r = sol['yaw_rate'][i]
        r_final = -np.linalg.solve(a, b)[1] * 0.01  # the linear model's steady yaw rate
        assert r[-1] == pytest.approx(r_final, rel=1e-3)
        # measured 6.9e-5 of the final value (2nd-order terms and the input's linear interpolation)
        assert np.max(np.abs(r - r_lin)) < 3e-4 * r_final
        times.append([t[np.argmax(r >= level * r_final)] for level in (0.1, 0.5)]
                     + [np.max(r) / r_final])
    (t10, t50, peak), (t10_0, t50_0, peak_0) = times
    # measured: t10 132.8 vs 126.4 ms, t50 161.8 vs 158.2 ms, peak 1.041 vs 1.011 of final
    assert t10 > t10_0 + 4e-3 and t50 > t50_0 + 2e-3  # the slip angles lag: a later onset
    assert peak > peak_0 + 0.02  # and less damping (the lag's phase loss)


def test_sigma_to_zero_converges_to_the_instantaneous_tyre_through_the_rate_cap() -> None:
    """Capped sigmas are one lag of 1/400 s; the difference from sigma = 0 is first order in it."""
    tau_cap = 1 / RELAXATION_RATE_CAP
    taus = (2 * tau_cap, 4 * tau_cap)  # uncapped lags: sigma = u tau
    mans = (Manoeuvre('step', SPEED, 0.0, ramp(0.0, 0.1, 0.3, 0.1), constant(80.0)),
            Manoeuvre('sine', SPEED, 0.0, sine(0.08, 1.0), constant(80.0)))
    sigmas = (0.0, 1e-4, 1e-5, SPEED * taus[0], SPEED * taus[1])
    cars = [(_params('fiala', True, s, s), m) for m in mans for s in sigmas]
    t = np.round(np.arange(0.0, 2.0 + 1e-9, 0.005), 9)
    sol = _simulate(cars, t)
    for j, m in enumerate(mans):
        for q in ('y', 'vx', 'vy', 'yaw_rate'):
            x0, cap, cap_lower, d1, d2 = (sol[q][j * len(sigmas) + k] for k in range(5))
            # below the cap every sigma is the same lag: identical trajectories
            assert np.max(np.abs(cap_lower - cap)) < 1e-12 * max(1.0, np.max(np.abs(cap)))
            # d(tau) = D tau + E tau^2 through the two uncapped lags, evaluated at tau_cap
            predicted = 0.75 * (d1 - x0) - 0.125 * (d2 - x0)
            diff = cap - x0
            size = np.max(np.abs(diff))
            # measured 0.1 % (vx) to 1.9 % (yaw rate) of the difference
            assert np.max(np.abs(diff - predicted)) < 0.05 * size, (m.name, q)
            # a lag of tau shifts a response by about tau |dx/dt|: measured 0.28 (y) to 1.96 (vy)
            assert size < 3 * tau_cap * np.max(np.abs(np.gradient(x0, t))), (m.name, q)


CIRCLES = ((2.0, 0.3), (4.0, 0.12), (6.0, 0.05))  # speed [m/s], steering [rad]


@pytest.mark.parametrize('tyre', ['linear', 'fiala', 'pacejka'])
@pytest.mark.parametrize('load_transfer', [False, True])
def test_steady_cornering_does_not_depend_on_the_relaxation_length(tyre: str,
                                                                  load_transfer: bool) -> None:
    p0, p = _params(tyre, load_transfer, 0.0, 0.0), _params(tyre, load_transfer, *SIGMA)
    for speed, delta in CIRCLES:
        free = st.steady_state(p0, delta, speed / p.radius)
        relaxed = st.steady_state(p, delta, speed / p.radius)  # alpha' unknowns: dalpha'/dt = 0
        for q, value in free.items():  # measured 9e-14
            assert relaxed[q] == pytest.approx(value, abs=1e-10), (speed, delta, q)


def test_a_relaxed_car_settles_onto_the_steady_circle() -> None:
    p = _params('fiala', True, *SIGMA)
    radius = BASE.geometry.wheel_radius
    cars = [(p, Manoeuvre(f'circle_{v}', v, d, constant(d), constant(v / radius)))
            for v, d in CIRCLES]
    t = np.round(np.arange(0.0, 4.0 + 1e-9, 0.05), 9)
    sol = _simulate(cars, t, rtol=1e-10)
    for i, (v, d) in enumerate(CIRCLES):
        eq = st.steady_state(dataclasses.replace(p, relaxation_length_front=0.0,
                                                 relaxation_length_rear=0.0), d, v / radius)
        for q, value in eq.items():
            assert sol[q][i, -1] == pytest.approx(value, abs=1e-10), (v, d, q)  # measured 7e-15


def test_below_the_blend_speed_alpha_relaxes_exponentially_with_the_speed_floor() -> None:
    """Kinematic rates (|vx| < 0.5 m/s): the chassis ignores alpha', so from an offset alpha'
    decays onto the fixed geometric alpha as ``exp(-lambda t)``, ``lambda = max(|v_x|, 0.2) /
    sigma``. In a kinematic turn the front contact slides along the wheel at ``vx / cos(delta)``
    and its slip angle is 0 (``v_fy = -vx sin(delta) + (vy + lf r) cos(delta) = 0``)."""
    # (vx [m/s], delta [rad]); not vx = 0 itself, where atan2(vy, |vx|) jumps with the sign of
    # the tiny vy of an implicit solver's iterate
    cases = ((0.05, 0.0), (0.1, 0.0), (0.3, 0.0), (0.4, 0.3), (-0.3, 0.2))
    p = _params('fiala', True, *SIGMA)
    radius = BASE.geometry.wheel_radius
    cars = [(p, Manoeuvre(f'rest_{v}', v, d, constant(d), constant(v / radius)))
            for v, d in cases]
    pp = st.RefParams.stack([c for c, _ in cars])
    z0 = st.initial_state(pp, np.array([v for v, _ in cases]), np.array([d for _, d in cases]))
    vx, delta = z0[st.VX], z0[st.DELTA]
    z0[st.R] = vx * np.tan(delta) / p.wheelbase  # on the kinematic constraint: stationary
    z0[st.VY] = p.lr * z0[st.R]
    alpha_f, alpha_r, _ = st.slip_angles(z0[st.VX][:, None], z0[st.VY][:, None],
                                         z0[st.R][:, None], z0[st.DELTA][:, None], pp)
    assert np.max(np.abs(alpha_f)) < 1e-15 and np.max(np.abs(alpha_r)) < 1e-15
    offset = np.array([[0.05], [-0.03]])
    z0[[st.ALPHA_F, st.ALPHA_R]] = offset
    man = [m for _, m in cars]
    t = np.round(np.arange(0.0, 1.0 + 1e-9, 0.01), 9)
    sol = st.simulate(pp, z0, batch_command(man, 'delta_cmd'), batch_command(man, 'omega_cmd'), t)
    speeds = np.maximum(np.abs(np.stack([vx / np.cos(delta), vx])), 0.2)  # front, rear
    lam = speeds / np.array([[SIGMA[0]], [SIGMA[1]]])
    expected = offset[..., None] * np.exp(-lam[..., None] * t)  # alpha' - alpha, alpha = 0
    got = np.stack([sol['alpha_front'], sol['alpha_rear']])
    assert np.max(np.abs(got - expected)) < 1e-10  # measured 9e-12 (Radau at rtol 1e-10)
    assert np.max(np.abs(sol['yaw_rate'] - z0[st.R][:, None])) < 1e-12  # the chassis is steady


def test_a_state_built_from_velocities_starts_alpha_at_its_steady_value() -> None:
    """initial_state puts alpha' at the geometric alpha: relaxed and instantaneous tyres give the
    same first rates (a car starting in a turn, as ``brake_in_turn`` does)."""
    p0, p = _params('pacejka', True, 0.0, 0.0), _params('pacejka', True, *SIGMA)
    speeds, steer = np.array([4.0, 2.0, -1.5]), np.array([0.1, -0.15, 0.2])
    rates = [st.rhs(st.initial_state(q, speeds, steer)[..., None], steer[:, None],
                    speeds[:, None] / q.radius, q)[..., 0]
             for q in (st.RefParams.stack([p0] * 3), st.RefParams.stack([p] * 3))]
    assert np.max(np.abs(rates[0][[st.VX, st.VY, st.R]] - rates[1][[st.VX, st.VY, st.R]])) == 0
    assert np.max(np.abs(rates[1][[st.ALPHA_F, st.ALPHA_R]])) == 0
    assert np.max(np.abs(rates[0][st.VY])) > 1.0  # the turn starts: a real force
