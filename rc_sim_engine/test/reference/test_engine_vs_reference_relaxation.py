"""The engine with tyre relaxation lengths against the scipy-integrated reference.

docs/engine.md, "Tyre relaxation length": an axle with sigma > 0 takes its lateral force at the
transient slip angle alpha', ``dalpha'/dt = min(max(|v_x|, 0.2) / sigma, 400) (alpha - alpha')``
(Pacejka 2012 §7.2). The reference (``single_track`` with ``relaxation``) integrates it with
Radau; the self-checks of that reference are in ``test_reference_relaxation.py``.

The manoeuvres are those of ``test_engine_vs_reference.py`` at 2 to 4 m/s (step steer, sine
steer, braking and powering in a turn) plus a braking turn to standstill through the kinematic
blend and the speed floor, with sigma_f = 0.04 m and sigma_r = 0.06 m (10 and 15 ms at 4 m/s),
for the linear and the Fiala law with load transfer on and off. The engine runs through its
public ``rollout`` with commands only, at dt and dt/2; as there, two checks per quantity (the
engine is first order in dt): the Richardson extrapolation ``2 x(dt/2) - x(dt)`` with 3x the
largest residual measured over the configurations, and the 1 kHz run with 1.5x its largest
measured error (``TOLERANCES``). The transient slip angles themselves (state fields
``alpha_front``, ``alpha_rear``) are compared too.

Sensitivity: relaxation moves the reference by more than 30 times these bounds (the last test),
so an engine that ignored sigma could not pass.

Needs the engine feature (``VehicleParams.tyres.relaxation_length_front``); skipped before it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.state import STATE_FIELDS

from . import single_track as st
from .cache import cached
from .manoeuvres import Manoeuvre, batch_command, constant, ramp, run_engine, sine

BASE = load_vehicle_params()
RADIUS = BASE.geometry.wheel_radius
HAS_RELAXATION = hasattr(BASE.tyres, 'relaxation_length_front')
SIGMA = (('relaxation_length_front', 0.04), ('relaxation_length_rear', 0.06))
T_END, T_SAMPLE, DT = 2.0, 0.005, 1e-3

LATERAL = (
    Manoeuvre('step_steer', 4.0, 0.0, ramp(0.0, 0.1, 0.3, 0.1), constant(4.0 / RADIUS), SIGMA),
    Manoeuvre('sine_steer', 4.0, 0.0, sine(0.08, 1.0), constant(4.0 / RADIUS), SIGMA),
    Manoeuvre('brake_in_turn', 4.0, 0.1, constant(0.1), ramp(80.0, 30.0, 1.0, 0.05), SIGMA),
    Manoeuvre('power_in_turn', 2.0, 0.15, constant(0.15), ramp(40.0, 100.0, 0.5, 0.05), SIGMA),
)
#: from 1.5 m/s to rest in a turn: the kinematic blend, the speed floor, alpha' at standstill
LOW_SPEED = (Manoeuvre('slow_brake_turn', 1.5, 0.15, constant(0.15), ramp(30.0, 0.0, 0.5, 0.5),
                       SIGMA),)
CONFIGS = [(tyre, lt) for tyre in ('linear', 'fiala') for lt in (False, True)]
LOW_SPEED_CONFIGS = [('linear', False), ('fiala', True)]
QUANTITIES = ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'steer', 'wheel_speed', 'alpha_front',
              'alpha_rear')

#: alpha' is compared while the car moves: at standstill the geometric slip angle is the ratio of
#: two vanishing velocities (-atan2(v_y, |v_x|) with both -> 0 at step-dependent rates: 1e-13 m/s
#: in the engine, 1e-17 m/s in the reference 0.4 s after stopping), so both drive alpha' towards
#: different limits up to pi/2 there, while the chassis (kinematic rates, alpha' unused) agrees.
V_ALPHA_MIN = 1e-3  # m/s

#: (Richardson bound, 1 kHz bound) per manoeuvre and quantity [SI], 3x and 1.5x the largest
#: measured over the configurations, rounded up; a quantity not listed stays within
#: (1e-12, 1e-12) (the steering of the constant-steer runs is exact).
TOLERANCES: dict[str, dict[str, tuple[float, float]]] = {
    'step_steer': {'x': (8.5e-07, 6.1e-06), 'y': (2.3e-06, 6.7e-06), 'yaw': (3.8e-06, 3.9e-06),
                   'vx': (4.1e-07, 2.5e-05), 'vy': (7.3e-06, 7.4e-06),
                   'yaw_rate': (6.9e-05, 6.9e-05), 'steer': (2e-06, 2e-06),
                   'wheel_speed': (4.6e-06, 0.00054), 'alpha_front': (1.8e-05, 1.8e-05),
                   'alpha_rear': (3e-06, 3e-06)},
    # measured x 2.8e-07/4.0e-06, y 7.5e-07/4.4e-06, yaw 1.3e-06/2.5e-06, vx 1.4e-07/1.6e-05, vy
    #  2.4e-06/4.9e-06, yaw_rate 2.3e-05/4.6e-05, steer 6.5e-07/1.3e-06, wheel_speed
    #  1.5e-06/3.6e-04, alpha_front 5.9e-06/1.2e-05, alpha_rear 9.8e-07/2.0e-06
    'sine_steer': {'x': (6.6e-07, 3.2e-06), 'y': (3e-06, 9e-06), 'yaw': (2.1e-06, 2.9e-06),
                   'vx': (3.2e-07, 1.5e-05), 'vy': (2.5e-06, 2.5e-06),
                   'yaw_rate': (3e-05, 3e-05), 'steer': (2.2e-06, 2.2e-06),
                   'wheel_speed': (3.4e-06, 0.00035), 'alpha_front': (6.2e-06, 6.6e-06),
                   'alpha_rear': (1.3e-06, 1.3e-06)},
    # measured x 2.2e-07/2.1e-06, y 9.9e-07/5.9e-06, yaw 6.7e-07/1.9e-06, vx 1.1e-07/9.7e-06, vy
    #  8.1e-07/1.6e-06, yaw_rate 9.9e-06/2.0e-05, steer 7.2e-07/1.4e-06, wheel_speed
    #  1.1e-06/2.3e-04, alpha_front 2.0e-06/4.4e-06, alpha_rear 4.2e-07/8.5e-07
    'brake_in_turn': {'x': (3.9e-05, 0.00068), 'y': (9.6e-05, 0.0018), 'yaw': (2.6e-05, 0.00045),
                      'vx': (0.00021, 0.0037), 'vy': (4.5e-05, 0.00077),
                      'yaw_rate': (0.00047, 0.0087), 'wheel_speed': (0.022, 1.2),
                      'alpha_front': (1.3e-05, 0.0002), 'alpha_rear': (2e-05, 0.0004)},
    # measured x 1.3e-05/4.5e-04, y 3.2e-05/1.2e-03, yaw 8.6e-06/3.0e-04, vx 6.7e-05/2.5e-03, vy
    #  1.5e-05/5.1e-04, yaw_rate 1.5e-04/5.8e-03, wheel_speed 7.1e-03/7.6e-01, alpha_front
    #  4.3e-06/1.3e-04, alpha_rear 6.6e-06/2.6e-04
    'power_in_turn': {'x': (0.00016, 0.0013), 'y': (0.00022, 0.0018), 'yaw': (7.7e-05, 0.00065),
                      'vx': (0.00046, 0.004), 'vy': (0.00014, 0.0011),
                      'yaw_rate': (0.0003, 0.0033), 'wheel_speed': (0.032, 1.4),
                      'alpha_front': (2.4e-05, 0.00021), 'alpha_rear': (3.3e-05, 0.00024)},
    # measured x 5.0e-05/8.3e-04, y 7.0e-05/1.2e-03, yaw 2.6e-05/4.3e-04, vx 1.5e-04/2.6e-03, vy
    #  4.5e-05/7.0e-04, yaw_rate 9.8e-05/2.1e-03, wheel_speed 1.1e-02/9.1e-01, alpha_front
    #  7.9e-06/1.4e-04, alpha_rear 1.1e-05/1.6e-04
    'slow_brake_turn': {'x': (7.5e-05, 0.0023), 'y': (5.1e-05, 0.0016), 'yaw': (4.2e-05, 0.0013),
                        'vx': (0.0011, 0.013), 'vy': (8.5e-05, 0.00096),
                        'yaw_rate': (0.0005, 0.0056), 'wheel_speed': (0.026, 0.25),
                        'alpha_front': (2.3e-06, 0.00017), 'alpha_rear': (1.5e-06, 0.00016)},
    # measured x 2.5e-05/1.5e-03, y 1.7e-05/1.0e-03, yaw 1.4e-05/8.1e-04, vx 3.6e-04/8.1e-03, vy
    #  2.8e-05/6.3e-04, yaw_rate 1.6e-04/3.7e-03, wheel_speed 8.5e-03/1.6e-01, alpha_front
    #  7.4e-07/1.1e-04, alpha_rear 4.9e-07/1.1e-04 (alpha' while |vx| >= V_ALPHA_MIN)
}


def _groups() -> list[tuple[tuple[str, bool], tuple[Manoeuvre, ...]]]:
    return [(cfg, LATERAL + (LOW_SPEED if cfg in LOW_SPEED_CONFIGS else ())) for cfg in CONFIGS]


def _ref_params(tyre: str, lt: bool, m: Manoeuvre, relaxed: bool) -> st.RefParams:
    """The reference's parameters: sigma from the manoeuvre (or 0), without the engine's keys."""
    sigma = dict(m.overrides) if relaxed else {k: 0.0 for k, _ in m.overrides}
    return st.RefParams.from_vehicle(BASE, tyre, lt, **sigma)


def reference_runs(t: np.ndarray) -> dict[str, np.ndarray]:
    """'tyre|lt|name|relaxed' -> (N_REF, M): one Radau solve per manoeuvre (relaxed and not)."""
    cars = [(cfg, m, relaxed) for cfg, ms in _groups() for m in ms for relaxed in (True, False)]
    out = {}
    for name in dict.fromkeys(m.name for _, m, _ in cars):
        batch = [c for c in cars if c[1].name == name]
        p = st.RefParams.stack([_ref_params(*cfg, m, relaxed) for cfg, m, relaxed in batch])
        man = [m for _, m, _ in batch]
        z0 = st.initial_state(p, np.array([m.speed for m in man]),
                              np.array([m.steering for m in man]))
        sol = st.simulate(p, z0, batch_command(man, 'delta_cmd'), batch_command(man, 'omega_cmd'),
                          t, rtol=1e-8, atol=1e-9)
        st.check_servo_linear(sol)
        out.update({f'{tyre}|{lt}|{m.name}|{relaxed}': sol.z[:, i]
                    for i, ((tyre, lt), m, relaxed) in enumerate(batch)})
    return out


def _time_grid() -> np.ndarray:
    return np.round(np.arange(0.0, T_END + 0.5 * T_SAMPLE, T_SAMPLE), 9)


def compute_reference(request: pytest.FixtureRequest | None) -> dict[tuple[str, bool, str, bool],
                                                                     np.ndarray]:
    t = _time_grid()
    description = repr((BASE, _groups(), t.tolist(), 'rtol=1e-8', 'relaxation'))
    ref = (cached(request, description, lambda: reference_runs(t)) if request is not None
           else reference_runs(t))
    out = {}
    for key, z in ref.items():
        tyre, lt, name, relaxed = key.split('|')
        out[(tyre, lt == 'True', name, relaxed == 'True')] = z
    return out


def compute_engine() -> dict[tuple[str, bool, str, float], np.ndarray]:
    """Engine states (M, N_STATE) per (tyre, lt, manoeuvre, dt), sigma from the overrides."""
    t = _time_grid()
    out = {}
    for (tyre, lt), ms in _groups():
        for dt in (DT, DT / 2):
            states = run_engine(BASE, ms, t, dt=dt, tyre_model=tyre, load_transfer=lt)
            out.update({(tyre, lt, m.name, dt): states[i] for i, m in enumerate(ms)})
    return out


@dataclass(frozen=True)
class Runs:
    t: np.ndarray
    reference: dict[tuple[str, bool, str, bool], np.ndarray]  # (N_REF, M)
    engine: dict[tuple[str, bool, str, float], np.ndarray]  # (M, N_STATE)


@pytest.fixture(scope='module')
def reference(request: pytest.FixtureRequest) -> dict[tuple[str, bool, str, bool], np.ndarray]:
    return compute_reference(request)


@pytest.fixture(scope='module')
def runs(reference: dict[tuple[str, bool, str, bool], np.ndarray]) -> Runs:
    if not HAS_RELAXATION:
        pytest.skip('the engine has no tyre relaxation yet (VehicleParams.tyres has no '
                    'relaxation_length_front)')
    return Runs(t=_time_grid(), reference=reference, engine=compute_engine())


def errors(runs: Runs, tyre: str, lt: bool, name: str) -> dict[str, tuple[float, float]]:
    """Max |engine - reference| over time: (Richardson-extrapolated, 1 kHz) per quantity."""
    ref = runs.reference[(tyre, lt, name, True)]
    coarse, fine = runs.engine[(tyre, lt, name, DT)], runs.engine[(tyre, lt, name, DT / 2)]
    moving = np.abs(ref[st.VX]) >= V_ALPHA_MIN
    out = {}
    for q in QUANTITIES:
        j, truth = STATE_FIELDS.index(q), ref[st.FIELDS.index(q)]
        at = moving if q.startswith('alpha') else np.full(moving.shape, True)
        out[q] = (float(np.max(np.abs(2 * fine[at, j] - coarse[at, j] - truth[at]))),
                  float(np.max(np.abs(coarse[at, j] - truth[at]))))
    return out


def _check(errs: dict[str, tuple[float, float]], name: str) -> None:
    bounds = TOLERANCES[name]
    default = (1e-12, 1e-12)
    bad = {q: (e, bounds.get(q, default)) for q, e in errs.items()
           if e[0] > bounds.get(q, default)[0] or e[1] > bounds.get(q, default)[1]}
    assert not bad, f'{name}: (Richardson, 1 kHz) error vs bound: {bad}'


def test_reference_reads_the_relaxation_lengths_from_vehicle_params() -> None:
    if not HAS_RELAXATION:
        pytest.skip('VehicleParams.tyres has no relaxation_length_front yet')
    assert BASE.tyres.relaxation_length_front == 0.0  # default: off
    assert BASE.tyres.relaxation_length_rear == 0.0
    p = st.RefParams.from_vehicle(LATERAL[0].params(BASE), 'linear')
    assert (p.relaxation_length_front, p.relaxation_length_rear) == (0.04, 0.06)


@pytest.mark.parametrize(('tyre', 'load_transfer'), CONFIGS)
def test_relaxed_step_sine_and_combined_transients(runs: Runs, tyre: str,
                                                   load_transfer: bool) -> None:
    for m in LATERAL:
        _check(errors(runs, tyre, load_transfer, m.name), m.name)


@pytest.mark.parametrize(('tyre', 'load_transfer'), LOW_SPEED_CONFIGS)
def test_relaxed_braking_turn_to_standstill(runs: Runs, tyre: str, load_transfer: bool) -> None:
    m = LOW_SPEED[0]
    _check(errors(runs, tyre, load_transfer, m.name), m.name)
    vx = runs.reference[(tyre, load_transfer, m.name, True)][st.VX]
    assert vx[0] > 1.0 and vx[-1] < 1e-6  # through the blend band and the speed floor, to rest
    assert np.mean(np.abs(vx) >= V_ALPHA_MIN) > 0.45  # alpha' compared over half the run


def test_relaxation_changes_the_reference_far_beyond_the_bounds(
        reference: dict[tuple[str, bool, str, bool], np.ndarray]) -> None:
    """An engine that ignored sigma (or used the geometric angle) would fail the bounds above.

    Measured: at least 97 (power_in_turn) to 850 (step_steer) times the Richardson bound and 12
    to 550 times the 1 kHz bound (which the wheel loop's splitting error dominates in the
    combined manoeuvres), for each of y, vy and the yaw rate in every configuration.
    """
    for (tyre, lt), ms in _groups():
        for m in ms:
            on, off = reference[(tyre, lt, m.name, True)], reference[(tyre, lt, m.name, False)]
            for q in ('y', 'vy', 'yaw_rate'):
                k = st.FIELDS.index(q)
                change = np.max(np.abs(on[k] - off[k]))
                richardson, one_khz = TOLERANCES[m.name][q]
                assert change > 30 * richardson and change > 10 * one_khz, (tyre, lt, m.name, q)
