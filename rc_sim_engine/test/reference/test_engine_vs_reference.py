"""The engine against the scipy-integrated reference of its documented equations.

Every manoeuvre drives the engine through its public ``rollout`` with commands only: the engine
integrates its own speed from the wheel torque of its speed loop, its own steering from the servo.
The reference (``reference/single_track.py``) integrates the same commands with Radau at
rtol 1e-8 (its own error, measured against rtol 1e-11: at most 0.1 % of the tightest bound).

Tolerances. The engine's splitting (backward-Euler wheel loop with vx held, midpoint actuator
values in the chassis step) is first order in dt: halving dt halves every error below (ratios
1.9-2.1 at 1, 0.5 and 0.25 ms), so the engine converges TO the reference and what remains at
1 kHz is discretisation, not a model difference. Two checks per quantity:

- model check: the Richardson extrapolation ``2 x(dt/2) - x(dt)`` cancels the O(dt) term; its
  residual is O(dt^2) plus the kinks (torque saturation, slip-ratio floor) that break the error
  expansion. Bound: 3x the largest residual measured over the six tyre/load-transfer configs;
- accuracy check: the 1 kHz engine itself, bound 1.5x its largest measured error.

Measured (max over configs) and bounds, see ``TOLERANCES``. Sensitivity: flipping the sign of
any term of the reference's right-hand side (vy r, vx r, Fy_f sin/cos delta, the yaw moments,
the contact-point velocities, the slip ratio, the load shift, the wheel torque balance, the
pose kinematics, Fiala's terms) moves some compared quantity by 1.4e3 to 7e6 times its bound; a
1 % change of Iz or m by 80 to 250 times; the slip-ratio floor 0.2 -> 0.1 m/s by 2.6 times.

Steady circles are compared with the exact equilibrium of the reference instead (root finding,
no integration error): the engine settles onto it to 1e-13.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.state import STEER, VX, VY, WHEEL_SPEED, YAW, YAW_RATE, X, Y

from . import single_track as st
from .cache import cached
from .manoeuvres import Manoeuvre, batch_command, constant, ramp, run_engine, sine

BASE = load_vehicle_params()
RADIUS = BASE.geometry.wheel_radius
TYRES = ('linear', 'fiala', 'pacejka')
CONFIGS = [(tyre, lt) for tyre in TYRES for lt in (False, True)]
T_END, T_SAMPLE, DT = 2.0, 0.005, 1e-3

#: delta = 0: the lateral law plays no part, so they run with the linear law only
STRAIGHT = (
    Manoeuvre('launch', 0.0, 0.0, constant(0.0), constant(120.0)),  # from rest to 6 m/s
    Manoeuvre('launch_reverse', 0.0, 0.0, constant(0.0), constant(-60.0)),
    Manoeuvre('brake', 5.0, 0.0, constant(0.0), constant(0.0)),  # to standstill
)
LATERAL = (
    Manoeuvre('step_steer', 4.0, 0.0, ramp(0.0, 0.1, 0.3, 0.1), constant(4.0 / RADIUS)),
    Manoeuvre('sine_steer', 4.0, 0.0, sine(0.08, 1.0), constant(4.0 / RADIUS)),
    Manoeuvre('brake_in_turn', 4.0, 0.1, constant(0.1), ramp(80.0, 30.0, 1.0, 0.05)),
    Manoeuvre('power_in_turn', 2.0, 0.15, constant(0.15), ramp(40.0, 100.0, 0.5, 0.05)),
)
#: through the kinematic blend (0.5 to 1 m/s) and below it, steering: the low-speed rates
LOW_SPEED = (
    Manoeuvre('slow_turn', 0.3, 0.2, constant(0.2), ramp(6.0, 30.0, 0.3, 1.2)),
    Manoeuvre('slow_slalom', 0.6, 0.0, sine(0.25, 1.0), ramp(12.0, 24.0, 0.5, 1.0)),
    Manoeuvre('slow_brake_turn', 1.5, 0.15, constant(0.15), ramp(30.0, 0.0, 0.5, 0.5)),
)
#: actuator variants (vehicle.yaml values other than the defaults), one configuration
ACTUATORS = (
    # PI wheel loop whose integral term sits at its clamp during the launch (no wind-up)
    Manoeuvre('pi_launch', 0.0, 0.0, constant(0.0), constant(100.0),
              (('wheel_i_gain', 5.0), ('wheel_i_max', 0.3))),
    # wheel-loop D term (on the measured speed), torque never saturated
    Manoeuvre('pd_cruise', 2.0, 0.0, sine(0.1, 0.7), ramp(40.0, 80.0, 0.2, 1.0),
              (('wheel_d_gain', 2e-4),)),
    # PI servo whose integral term reaches its clamp
    Manoeuvre('servo_pi', 3.0, 0.0, sine(0.12, 1.5), constant(60.0),
              (('servo_i_gain', 0.5), ('servo_i_max', 5e-4))),
    Manoeuvre('trim_step', 3.0, 0.0, ramp(0.0, 0.15, 0.3, 0.1), constant(60.0),
              (('steering_gain', 0.9), ('steering_offset', 0.02))),
)
ACTUATOR_CONFIG = ('pacejka', True)
#: stiff tyres: the front axle slides beyond Fiala's full-sliding angle (0.15 rad) at full lock
SLIDE = Manoeuvre('slide', 4.0, 0.0, ramp(0.0, 0.38, 0.2, 0.3), constant(80.0),
                  (('cornering_stiffness_front', 400.0), ('cornering_stiffness_rear', 450.0)))
SLIDE_CONFIGS = [(tyre, lt) for tyre in ('fiala', 'fiala_unsaturated') for lt in (False, True)]
SLIDE_CONFIGS.append(('pacejka', True))
LOW_SPEED_CONFIGS = [('linear', False), ('pacejka', True)]
#: steady circles (speed [m/s], steering [rad]): lateral acceleration 2.7 to 5.9 m/s^2
CIRCLES = ((1.5, 0.4), (2.0, 0.3), (3.0, -0.2), (4.0, 0.12), (5.0, -0.08), (6.0, 0.05))

QUANTITIES = {'x': X, 'y': Y, 'yaw': YAW, 'vx': VX, 'vy': VY, 'yaw_rate': YAW_RATE,
              'steer': STEER, 'wheel_speed': WHEEL_SPEED}

#: (Richardson bound, 1 kHz bound) per manoeuvre and quantity [SI]: 3x the largest Richardson
#: residual and 1.5x the largest 1 kHz error measured over the configs, rounded up; a quantity
#: not listed stays within (1e-12, 1e-12) (lateral quantities of the straight runs are exactly 0).
TOLERANCES: dict[str, dict[str, tuple[float, float]]] = {
    'launch': {'x': (0.00012, 0.0012), 'vx': (0.00013, 0.0012), 'wheel_speed': (0.84, 1.2)},
    # measured x 4.0e-05/7.9e-04, vx 4.1e-05/7.7e-04, wheel_speed 2.8e-01/7.7e-01
    'launch_reverse': {'x': (0.00013, 0.00049), 'vx': (0.00017, 0.00072),
                       'wheel_speed': (0.083, 0.96)},
    # measured x 4.3e-05/3.2e-04, vx 5.4e-05/4.8e-04, wheel_speed 2.8e-02/6.4e-01
    'brake': {'x': (0.0015, 0.001), 'vx': (0.0015, 0.0065), 'wheel_speed': (1.1, 1.6)},
    # measured x 5.0e-04/6.6e-04, vx 4.9e-04/4.3e-03, wheel_speed 3.5e-01/1.0e+00
    'step_steer': {'x': (4.7e-07, 7.5e-06), 'y': (1.7e-06, 7.3e-06), 'yaw': (3.5e-06, 3.6e-06),
                   'vx': (4.6e-07, 2.6e-05), 'vy': (9e-06, 9.1e-06),
                   'yaw_rate': (5.9e-05, 6.4e-05), 'steer': (2e-06, 2e-06),
                   'wheel_speed': (4e-06, 0.00056)},
    # measured x 1.6e-07/5.0e-06, y 5.4e-07/4.8e-06, yaw 1.2e-06/2.3e-06, vx 1.5e-07/1.7e-05, vy
    #  3.0e-06/6.0e-06, yaw_rate 1.9e-05/4.2e-05, steer 6.5e-07/1.3e-06, wheel_speed
    #  1.3e-06/3.7e-04
    'sine_steer': {'x': (6.3e-07, 3.3e-06), 'y': (3e-06, 1.1e-05), 'yaw': (2.2e-06, 3.7e-06),
                   'vx': (2.8e-07, 1.7e-05), 'vy': (3.7e-06, 3.7e-06),
                   'yaw_rate': (2.1e-05, 2.4e-05), 'steer': (2.2e-06, 2.2e-06),
                   'wheel_speed': (3.5e-06, 0.00039)},
    # measured x 2.1e-07/2.1e-06, y 9.8e-07/7.2e-06, yaw 7.3e-07/2.4e-06, vx 9.1e-08/1.1e-05, vy
    #  1.2e-06/2.4e-06, yaw_rate 6.9e-06/1.6e-05, steer 7.2e-07/1.4e-06, wheel_speed
    #  1.2e-06/2.6e-04
    'brake_in_turn': {'x': (3.8e-05, 0.00066), 'y': (9.6e-05, 0.0018), 'yaw': (2.9e-05, 0.00055),
                      'vx': (0.00021, 0.0038), 'vy': (4.8e-05, 0.00082),
                      'yaw_rate': (0.00046, 0.009), 'wheel_speed': (0.022, 1.2)},
    # measured x 1.3e-05/4.4e-04, y 3.2e-05/1.2e-03, yaw 9.6e-06/3.6e-04, vx 6.7e-05/2.5e-03, vy
    #  1.6e-05/5.4e-04, yaw_rate 1.5e-04/6.0e-03, wheel_speed 7.1e-03/7.6e-01
    'power_in_turn': {'x': (0.00016, 0.0013), 'y': (0.00022, 0.0018), 'yaw': (9.8e-05, 0.00081),
                      'vx': (0.00046, 0.004), 'vy': (0.00017, 0.0014),
                      'yaw_rate': (0.00028, 0.0026), 'wheel_speed': (0.032, 1.4)},
    # measured x 5.1e-05/8.4e-04, y 7.0e-05/1.2e-03, yaw 3.2e-05/5.4e-04, vx 1.5e-04/2.6e-03, vy
    #  5.4e-05/9.0e-04, yaw_rate 9.3e-05/1.7e-03, wheel_speed 1.1e-02/9.1e-01
    'slow_turn': {'x': (1.1e-05, 0.0022), 'y': (1.3e-05, 0.0027), 'yaw': (8.3e-06, 0.0017),
                  'vx': (5.9e-05, 0.0036), 'vy': (6.3e-06, 0.00038), 'yaw_rate': (3.7e-05, 0.0022),
                  'wheel_speed': (0.00085, 0.072)},
    # measured x 3.5e-06/1.4e-03, y 4.1e-06/1.7e-03, yaw 2.7e-06/1.1e-03, vx 2.0e-05/2.4e-03, vy
    #  2.1e-06/2.5e-04, yaw_rate 1.2e-05/1.5e-03, wheel_speed 2.8e-04/4.8e-02
    'slow_slalom': {'x': (5.5e-06, 0.0013), 'y': (2.2e-06, 0.00017), 'yaw': (4e-06, 0.00036),
                    'vx': (2.3e-05, 0.0019), 'vy': (5.1e-06, 0.00017),
                    'yaw_rate': (6.3e-05, 0.0013), 'steer': (6.8e-06, 6.8e-06),
                    'wheel_speed': (0.00022, 0.039)},
    # measured x 1.8e-06/8.5e-04, y 7.2e-07/1.1e-04, yaw 1.3e-06/2.4e-04, vx 7.4e-06/1.3e-03, vy
    #  1.7e-06/1.1e-04, yaw_rate 2.1e-05/8.3e-04, steer 2.2e-06/4.5e-06, wheel_speed
    #  7.3e-05/2.5e-02
    'slow_brake_turn': {'x': (7.6e-05, 0.0023), 'y': (5e-05, 0.0015), 'yaw': (4.2e-05, 0.0013),
                        'vx': (0.0011, 0.013), 'vy': (8.5e-05, 0.00096),
                        'yaw_rate': (0.0005, 0.0056), 'wheel_speed': (0.026, 0.25)},
    # measured x 2.5e-05/1.5e-03, y 1.6e-05/9.9e-04, yaw 1.4e-05/8.2e-04, vx 3.6e-04/8.1e-03, vy
    #  2.8e-05/6.4e-04, yaw_rate 1.6e-04/3.7e-03, wheel_speed 8.5e-03/1.6e-01
    'pi_launch': {'x': (9.8e-05, 0.00097), 'vx': (0.00012, 0.0012), 'wheel_speed': (0.84, 1.2)},
    # measured x 3.3e-05/6.4e-04, vx 4.0e-05/7.8e-04, wheel_speed 2.8e-01/7.7e-01
    'pd_cruise': {'x': (3e-06, 0.0022), 'y': (1.1e-05, 0.00073), 'yaw': (3.7e-06, 0.00016),
                  'vx': (9.5e-06, 0.0032), 'vy': (3.5e-06, 0.00039),
                  'yaw_rate': (1.8e-05, 0.00086), 'steer': (1.9e-06, 1.9e-06),
                  'wheel_speed': (0.00017, 0.066)},
    # measured x 1.0e-06/1.4e-03, y 3.7e-06/4.8e-04, yaw 1.2e-06/1.0e-04, vx 3.2e-06/2.1e-03, vy
    #  1.1e-06/2.6e-04, yaw_rate 6.0e-06/5.7e-04, steer 6.3e-07/1.3e-06, wheel_speed
    #  5.5e-05/4.4e-02
    'servo_pi': {'x': (5.3e-07, 2.2e-06), 'y': (3.9e-06, 8.7e-06), 'yaw': (3.7e-06, 4.1e-06),
                 'vx': (3.4e-07, 1.7e-05), 'vy': (4.7e-06, 3.7e-06),
                 'yaw_rate': (4.6e-05, 3.3e-05), 'steer': (4.9e-06, 4.9e-06),
                 'wheel_speed': (4.6e-06, 0.00038)},
    # measured x 1.8e-07/1.4e-06, y 1.3e-06/5.8e-06, yaw 1.2e-06/2.7e-06, vx 1.1e-07/1.1e-05, vy
    #  1.6e-06/2.4e-06, yaw_rate 1.5e-05/2.1e-05, steer 1.6e-06/3.3e-06, wheel_speed
    #  1.5e-06/2.5e-04
    'trim_step': {'x': (2.3e-07, 5.8e-06), 'y': (1.4e-06, 5.9e-06), 'yaw': (3.9e-06, 3.7e-06),
                  'vx': (9.8e-07, 3.2e-05), 'vy': (7.5e-06, 7.6e-06),
                  'yaw_rate': (6.9e-05, 8.2e-05), 'steer': (2.7e-06, 2.7e-06),
                  'wheel_speed': (8.3e-06, 0.00083)},
    # measured x 7.5e-08/3.8e-06, y 4.5e-07/3.9e-06, yaw 1.3e-06/2.4e-06, vx 3.2e-07/2.1e-05, vy
    #  2.5e-06/5.0e-06, yaw_rate 2.3e-05/5.4e-05, steer 8.7e-07/1.8e-06, wheel_speed
    #  2.8e-06/5.5e-04
    'slide': {'x': (1.2e-05, 9.3e-05), 'y': (1.6e-05, 6.8e-05), 'yaw': (7.1e-06, 5.4e-05),
              'vx': (4.6e-06, 0.00021), 'vy': (1.6e-05, 0.00013), 'yaw_rate': (0.00014, 0.00034),
              'steer': (1.4e-06, 1.4e-06), 'wheel_speed': (2.5e-05, 0.0046)},
    # measured x 3.9e-06/6.1e-05, y 5.2e-06/4.5e-05, yaw 2.4e-06/3.5e-05, vx 1.5e-06/1.4e-04, vy
    #  5.2e-06/8.1e-05, yaw_rate 4.6e-05/2.2e-04, steer 4.4e-07/8.8e-07, wheel_speed
    #  8.2e-06/3.0e-03
}


@dataclass(frozen=True)
class Runs:
    """Reference solution per (tyre, load transfer, manoeuvre) and engine runs at dt and dt/2."""

    t: np.ndarray
    reference: dict[tuple[str, bool, str], np.ndarray]  # (N_REF, M) reference states
    engine: dict[tuple[str, bool, str, float], np.ndarray]  # (M, N_STATE) engine states


def _ref_params(tyre: str, load_transfer: bool, m: Manoeuvre | None = None) -> st.RefParams:
    return st.RefParams.from_vehicle(m.params(BASE) if m else BASE, tyre, load_transfer)


@pytest.fixture(scope='module')
def runs(request: pytest.FixtureRequest) -> Runs:
    return compute_runs(request)


def _groups() -> list[tuple[tuple[str, bool], tuple[Manoeuvre, ...]]]:
    groups = [(('linear', lt), STRAIGHT) for lt in (False, True)]
    groups += [(cfg, LATERAL + (LOW_SPEED if cfg in LOW_SPEED_CONFIGS else ())
                + (ACTUATORS if cfg == ACTUATOR_CONFIG else ())
                + ((SLIDE,) if cfg in SLIDE_CONFIGS else ())) for cfg in CONFIGS]
    return groups + [(cfg, (SLIDE,)) for cfg in SLIDE_CONFIGS if cfg not in CONFIGS]


def reference_runs(t: np.ndarray) -> dict[str, np.ndarray]:
    """'tyre|lt|name' -> (N_REF, M): one Radau solve per manoeuvre for all its configurations
    (a batch shares its step sizes, so cars with the same command events go together)."""
    cars = [(cfg, m) for cfg, ms in _groups() for m in ms]
    out = {}
    for name in dict.fromkeys(m.name for _, m in cars):
        batch = [(cfg, m) for cfg, m in cars if m.name == name]
        p = st.RefParams.stack([_ref_params(*cfg, m) for cfg, m in batch])
        man = [m for _, m in batch]
        z0 = st.initial_state(p, np.array([m.speed for m in man]),
                              np.array([m.steering for m in man]))
        sol = st.simulate(p, z0, batch_command(man, 'delta_cmd'), batch_command(man, 'omega_cmd'),
                          t, rtol=1e-8, atol=1e-9)
        st.check_servo_linear(sol)
        out.update({f'{tyre}|{lt}|{m.name}': sol.z[:, i] for i, ((tyre, lt), m) in enumerate(batch)})
    return out


def compute_runs(request: pytest.FixtureRequest | None = None) -> Runs:
    """Reference (cached between runs, see ``reference/cache.py``) and the engine rollouts."""
    t = np.round(np.arange(0.0, T_END + 0.5 * T_SAMPLE, T_SAMPLE), 9)
    description = repr((BASE, _groups(), t.tolist(), 'rtol=1e-8'))
    ref = (cached(request, description, lambda: reference_runs(t)) if request is not None
           else reference_runs(t))
    reference = {}
    for key, z in ref.items():
        tyre, lt, name = key.split('|')
        reference[(tyre, lt == 'True', name)] = z
    engine = {}
    for (tyre, lt), ms in _groups():
        for dt in (DT, DT / 2):
            states = run_engine(BASE, ms, t, dt=dt, tyre_model=tyre, load_transfer=lt)
            for i, m in enumerate(ms):
                engine[(tyre, lt, m.name, dt)] = states[i]
    return Runs(t=t, reference=reference, engine=engine)


def _errors(runs: Runs, tyre: str, lt: bool, name: str) -> dict[str, tuple[float, float]]:
    """Max |engine - reference| over time: (Richardson-extrapolated, 1 kHz) per quantity."""
    ref = runs.reference[(tyre, lt, name)]
    coarse, fine = runs.engine[(tyre, lt, name, DT)], runs.engine[(tyre, lt, name, DT / 2)]
    out = {}
    for q, j in QUANTITIES.items():
        truth = ref[st.FIELDS.index(q)]
        out[q] = (float(np.max(np.abs(2 * fine[:, j] - coarse[:, j] - truth))),
                  float(np.max(np.abs(coarse[:, j] - truth))))
    return out


def _check(errors: dict[str, tuple[float, float]], name: str) -> None:
    bounds = TOLERANCES[name]
    bad = {q: (e, bounds.get(q, (1e-12, 1e-12))) for q, e in errors.items()
           if e[0] > bounds.get(q, (1e-12, 1e-12))[0] or e[1] > bounds.get(q, (1e-12, 1e-12))[1]}
    assert not bad, f'{name}: (Richardson, 1 kHz) error vs bound: {bad}'


@pytest.mark.parametrize('load_transfer', [False, True])
def test_straight_line_launch_and_braking_integrate_their_own_speed(runs: Runs,
                                                                    load_transfer: bool) -> None:
    """From rest to 6 m/s (wheelspin, slip-ratio floor), reverse, and braking to standstill."""
    for m in STRAIGHT:
        _check(_errors(runs, 'linear', load_transfer, m.name), m.name)
    ref = runs.reference[('linear', load_transfer, 'launch')]
    vx = ref[st.VX]
    assert vx[-1] > 4.0  # a real launch: 0 -> 4+ m/s in 2 s
    assert runs.reference[('linear', load_transfer, 'brake')][st.VX][-1] < 1e-2  # stopped


@pytest.mark.parametrize(('tyre', 'load_transfer'), CONFIGS)
def test_step_sine_and_combined_transients(runs: Runs, tyre: str, load_transfer: bool) -> None:
    """Step steer, sine steer, braking and powering in a turn, for each tyre law."""
    for m in LATERAL:
        _check(_errors(runs, tyre, load_transfer, m.name), m.name)
    r_peak = np.max(np.abs(runs.reference[(tyre, load_transfer, 'step_steer')][st.R]))
    assert r_peak > 0.8  # a real manoeuvre (about 1 rad/s)


@pytest.mark.parametrize(('tyre', 'load_transfer'), LOW_SPEED_CONFIGS)
def test_low_speed_turns_through_the_kinematic_blend(runs: Runs, tyre: str,
                                                     load_transfer: bool) -> None:
    """Accelerating from 0.3 m/s, slaloming at 0.6-1.2 m/s, braking to rest in a turn."""
    for m in LOW_SPEED:
        _check(_errors(runs, tyre, load_transfer, m.name), m.name)
        vx = runs.reference[(tyre, load_transfer, m.name)][st.VX]
        assert np.min(vx) < 0.65 and np.max(vx) > 1.1  # crosses the blend band


def test_actuator_variants(runs: Runs) -> None:
    """PI and PD wheel loops, a PI servo with its integral clamp, steering trim."""
    tyre, lt = ACTUATOR_CONFIG
    for m in ACTUATORS:
        _check(_errors(runs, tyre, lt, m.name), m.name)
    ref = {m.name: runs.reference[(tyre, lt, m.name)] for m in ACTUATORS}
    p = {m.name: _ref_params(tyre, lt, m) for m in ACTUATORS}
    # the clamps were reached (or the test would not see them) ...
    pi = p['pi_launch']
    assert np.max(pi.wheel_ki * ref['pi_launch'][st.WHEEL_INT]) > 0.99 * pi.wheel_i_max
    sp = p['servo_pi']
    assert np.max(np.abs(sp.servo_ki * ref['servo_pi'][st.SERVO_INT])) > 0.99 * sp.servo_i_max
    # ... and the D-term case never saturates the torque (gz clamps P + I + D together)
    pd, z = p['pd_cruise'], ref['pd_cruise']
    omega_target = ACTUATORS[1].omega_cmd(runs.t)
    assert np.max(np.abs(pd.wheel_kp * (omega_target - z[st.OMEGA]))) < 0.9 * pd.wheel_max_torque


@pytest.mark.parametrize(('tyre', 'load_transfer'), SLIDE_CONFIGS)
def test_front_axle_sliding_at_full_lock(runs: Runs, tyre: str, load_transfer: bool) -> None:
    """Stiff tyres at full lock: the front axle works beyond the full-sliding angle."""
    _check(_errors(runs, tyre, load_transfer, SLIDE.name), SLIDE.name)
    s = _ref_params(tyre, load_transfer, SLIDE)
    z = runs.reference[(tyre, load_transfer, SLIDE.name)]
    f = st.forces(*(z[k] for k in (st.VX, st.VY, st.R, st.DELTA, st.OMEGA)), s)
    alpha_sliding = math.atan(3 * s.mu_lat * s.fz_front_static / s.c_front)
    assert np.max(np.abs(f.alpha_front)) > 1.5 * alpha_sliding


def test_load_transfer_changes_the_reference_far_beyond_the_bounds(runs: Runs) -> None:
    """The on/off comparisons are not interchangeable: the loads matter in these manoeuvres."""
    for name, q in (('launch', 'vx'), ('brake', 'vx'), ('brake_in_turn', 'yaw_rate')):
        off = runs.reference[('linear', False, name)][st.FIELDS.index(q)]
        on = runs.reference[('linear', True, name)][st.FIELDS.index(q)]
        assert np.max(np.abs(on - off)) > 30 * TOLERANCES[name][q][1]


@pytest.fixture(scope='module')
def circle_cars() -> dict[tuple[str, bool], Car]:
    return {cfg: Car(BASE, n=len(CIRCLES), dt=DT, tyre_model=cfg[0], load_transfer=cfg[1])
            for cfg in CONFIGS}


@pytest.mark.parametrize(('tyre', 'load_transfer'), CONFIGS)
def test_steady_cornering_equals_the_reference_equilibrium(
        circle_cars: dict[tuple[str, bool], Car], tyre: str, load_transfer: bool) -> None:
    """Settled circles equal the exact equilibrium of the reference (no integration error).

    A fixed point of the engine's step is a zero of the documented right-hand side (RK4 stages
    vanish there and the backward-Euler wheel sits on its root), so after the transients die out
    the two agree to rounding. The transient left after T is bounded from the reference's
    linearisation at the equilibrium: 10 |x(0) - x*| exp(-sigma T), sigma its slowest decay rate.
    """
    p = _ref_params(tyre, load_transfer)
    speeds = np.array([v for v, _ in CIRCLES])
    steer = np.array([d for _, d in CIRCLES])
    car = circle_cars[(tyre, load_transfer)]
    car.reset(speed=speeds)
    car.step(steer, speeds / RADIUS, n_steps=1)  # steering starts centred: let it settle too
    t_settle = 3.0
    car.step(steer, speeds / RADIUS, n_steps=round(t_settle / DT) - 1)
    ax, ay = car.body_acceleration()
    for i, (v, d) in enumerate(CIRCLES):
        eq = st.steady_state(p, d, v / RADIUS)
        sigma = _slowest_decay(p, d, v / RADIUS, eq)
        dev0 = max(abs(v - eq['vx']), abs(eq['vy']), abs(eq['yaw_rate']), RADIUS * abs(v / RADIUS - eq['wheel_speed']), abs(d))
        transient = 10 * dev0 * math.exp(-sigma * t_settle)
        got = car.state[i]
        for q, j in (('vx', VX), ('vy', VY), ('yaw_rate', YAW_RATE)):
            assert got[j] == pytest.approx(eq[q], abs=1e-9 + transient), (v, d, q)
        assert got[WHEEL_SPEED] * RADIUS == pytest.approx(eq['wheel_speed'] * RADIUS,
                                                          abs=1e-9 + transient)
        assert got[STEER] == pytest.approx(d, abs=1e-9)
        # body-frame acceleration on a circle: (-vy r, vx r) (the velocity rotates at r)
        assert ax[i] == pytest.approx(-eq['vy'] * eq['yaw_rate'], abs=1e-7 + 10 * transient)
        assert ay[i] == pytest.approx(eq['vx'] * eq['yaw_rate'], abs=1e-7 + 10 * transient)
        assert abs(eq['vx'] * eq['yaw_rate']) > 2.5  # well into the nonlinear tyre range


def _slowest_decay(p: st.RefParams, delta: float, omega_cmd: float, eq: dict[str, float]) -> float:
    """Smallest |Re lambda| of the reference's (vx, vy, r, omega) Jacobian at the equilibrium."""
    idx = (st.VX, st.VY, st.R, st.OMEGA)
    z = np.zeros((st.N_REF, 1))
    z[st.VX], z[st.VY], z[st.R], z[st.OMEGA] = eq['vx'], eq['vy'], eq['yaw_rate'], eq['wheel_speed']
    z[st.DELTA] = delta
    jac = np.empty((4, 4))
    for c, k in enumerate(idx):
        dz = np.zeros_like(z)
        dz[k] = 1e-6 * max(1.0, abs(z[k, 0]))
        fp = st.rhs(z + dz, np.array([delta]), np.array([omega_cmd]), p)
        fm = st.rhs(z - dz, np.array([delta]), np.array([omega_cmd]), p)
        jac[:, c] = [(fp[i, 0] - fm[i, 0]) / (2 * dz[k, 0]) for i in idx]
    re = np.linalg.eigvals(jac).real
    assert np.all(re < 0), 'the reference circle is not stable'
    return float(np.min(-re))
