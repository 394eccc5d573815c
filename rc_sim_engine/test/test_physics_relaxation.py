"""Tyre relaxation length (docs/engine.md, "Tyre relaxation length"): properties the equations
imply, independent of the implementation. The comparison with an independent scipy integration of
the same equations is in ``reference/``.

- sigma changes no steady state: the steady turn is the same with and without relaxation;
- it delays the lateral response: after a steering step the yaw rate rises later;
- settled, the transient slips are the geometric slip angles;
- stopped in a turn, the transient slips settle to 0 and the car drives off as the one without
  relaxation does (the target's speed floor; without it they crept towards -pi/2 and kicked the
  yaw rate by up to 1.3 rad/s on drive-off);
- a state built from velocities starts the transient slips settled (a rollout started on the
  steady turn stays on it);
- the relaxation rate is capped at 1 / 2.5 ms, so a sigma far below v * 2.5 ms behaves like the
  instantaneous tyre up to that lag.
"""

from __future__ import annotations

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.rollout import InitialState, rollout
from rc_sim_engine.vehicle.state import ALPHA_FRONT, ALPHA_REAR, STEER, VX, VY, YAW_RATE

SPEED = 2.5          # m/s
DELTA = 0.12         # rad: a gentle turn, well below saturation
DT = 0.005


def _params(sigma_f: float, sigma_r: float, tyre: str = 'linear'):
    return load_vehicle_params().with_values(tyre_model=tyre, relaxation_length_front=sigma_f,
                                             relaxation_length_rear=sigma_r)


def _turn(sigma: float, seconds: float = 4.0, step_at: float = 0.0) -> np.ndarray:
    """State history of a car at SPEED that steps to DELTA at ``step_at``."""
    p = _params(sigma, sigma)
    car = Car(p, dt=DT)
    car.reset(speed=SPEED)
    omega = SPEED / p.effective_wheel_radius
    out = []
    for k in range(round(seconds / DT)):
        car.step(DELTA if k * DT >= step_at else 0.0, omega)
        out.append(car.state[0].copy())
    return np.array(out)


def test_relaxation_changes_no_steady_state() -> None:
    plain, relaxed = _turn(0.0)[-1], _turn(0.08)[-1]
    assert relaxed[YAW_RATE] == pytest.approx(plain[YAW_RATE], rel=1e-6)
    assert relaxed[VY] == pytest.approx(plain[VY], abs=1e-6)
    assert relaxed[VX] == pytest.approx(plain[VX], rel=1e-6)


def test_relaxation_delays_the_yaw_response() -> None:
    plain, relaxed = _turn(0.0, 2.0, 0.5), _turn(0.08, 2.0, 0.5)
    final = plain[-1, YAW_RATE]

    def rise_time(h: np.ndarray) -> float:
        return float(np.argmax(h[:, YAW_RATE] >= 0.5 * final) * DT)

    lag = 0.08 / SPEED      # 32 ms: the force lag of each axle
    assert rise_time(relaxed) - rise_time(plain) > 0.3 * lag
    assert plain[:, ALPHA_FRONT].max() == 0.0 and plain[:, ALPHA_REAR].max() == 0.0


def test_the_settled_transient_slip_is_the_geometric_one() -> None:
    """At the steady turn both transient slips equal the geometric (atan2) slip angles."""
    sigma = 0.05
    x = _turn(sigma, 4.0)[-1]
    p = _params(sigma, sigma)
    lf, lr = p.geometry.cg_to_front_axle, p.geometry.cg_to_rear_axle
    alpha_r = -np.arctan2(x[VY] - lr * x[YAW_RATE], abs(x[VX]))
    vfy = x[VY] + lf * x[YAW_RATE]
    c, s = np.cos(x[STEER]), np.sin(x[STEER])
    alpha_f = -np.arctan2(-x[VX] * s + vfy * c, abs(x[VX] * c + vfy * s))
    assert abs(alpha_r) > 1e-3 and abs(alpha_f) > 1e-3
    assert x[ALPHA_REAR] == pytest.approx(alpha_r, rel=1e-6)
    assert x[ALPHA_FRONT] == pytest.approx(alpha_f, rel=1e-6)


def test_rollout_starts_the_transient_slips_settled() -> None:
    sigma = 0.06
    p = _params(sigma, sigma)
    steady = _turn(sigma)[-1]
    lr = p.geometry.cg_to_rear_axle
    t = np.arange(0.0, 1.0, 0.01)
    omega = steady[VX] / p.effective_wheel_radius
    res = rollout([p], t, np.full(t.size, DELTA), np.full(t.size, omega),
                  InitialState(vx=steady[VX], vy=steady[VY] - lr * steady[YAW_RATE],
                               yaw_rate=steady[YAW_RATE], steering=DELTA),
                  t_out=t, dt=DT)
    r = res.states[0, :, YAW_RATE]
    assert np.max(np.abs(r - steady[YAW_RATE])) < 2e-3 * abs(steady[YAW_RATE])


def test_a_tiny_relaxation_length_is_the_capped_lag() -> None:
    """sigma = 0.1 mm at 2.5 m/s asks for a 40 us lag; the cap makes it 2.5 ms, which
    at this speed is within a few percent of the instantaneous tyre's response."""
    plain, tiny = _turn(0.0, 1.5, 0.5), _turn(1e-4, 1.5, 0.5)
    err = np.max(np.abs(tiny[:, YAW_RATE] - plain[:, YAW_RATE]))
    assert err < 0.05 * abs(plain[-1, YAW_RATE])
    assert err > 0.0


def test_stopped_in_a_turn_the_slips_settle_and_the_drive_off_has_no_kick() -> None:
    def run(sigma: float) -> tuple[np.ndarray, np.ndarray]:
        p = _params(sigma, sigma)
        car = Car(p, dt=DT)
        car.reset(speed=1.5)
        omega = 1.5 / p.effective_wheel_radius
        car.step(0.15, omega, round(2.0 / DT))       # turning
        car.step(0.15, 0.0, round(3.0 / DT))         # brake to rest, wheels still turned
        at_rest = car.state[0].copy()
        r = []
        for _ in range(round(1.5 / DT)):              # drive off, still turning
            car.step(0.15, 1.0 / p.effective_wheel_radius)
            r.append(car.state[0, YAW_RATE])
        return at_rest, np.array(r)

    rest, r_relaxed = run(0.06)
    assert abs(rest[VX]) < 1e-3
    assert abs(rest[ALPHA_FRONT]) < 0.02 and abs(rest[ALPHA_REAR]) < 0.02
    _, r_plain = run(0.0)
    assert np.max(np.abs(r_relaxed - r_plain)) < 0.1 * np.max(np.abs(r_plain))


def test_the_relaxation_target_floors_the_speed() -> None:
    """d(alpha')/dt = lambda (alpha_bar - alpha'), alpha_bar with |v_x| floored at 0.2 m/s
    (docs/engine.md): at rest with a creeping lateral velocity the target stays near 0 (the
    geometric angle would be -pi/2), and above the floor it is the geometric angle."""
    import math

    from rc_sim_engine.vehicle.models import MODELS
    from rc_sim_engine.vehicle.packed import pack_params
    from rc_sim_engine.vehicle.state import N_STATE

    sigma = 0.05
    p = _params(sigma, sigma)
    row = pack_params([p])[0]
    for vx, vy in ((0.0, 1e-4), (2.0, 0.15)):
        x = np.zeros(N_STATE)
        x[VX], x[VY], x[STEER] = vx, vy, 0.1
        d = MODELS['single_track'].derivative(x, row)
        lam = max(vx, 0.2) / sigma
        c, s = math.cos(0.1), math.sin(0.1)
        v_fx, v_fy = vx * c + vy * s, -vx * s + vy * c
        target_f = -math.atan2(v_fy, max(abs(v_fx), 0.2))
        target_r = -math.atan2(vy, max(abs(vx), 0.2))
        assert d[ALPHA_FRONT] == pytest.approx(min(max(abs(v_fx), 0.2) / sigma, 400.0)
                                               * target_f, rel=1e-12)
        assert d[ALPHA_REAR] == pytest.approx(min(lam, 400.0) * target_r, rel=1e-12)
