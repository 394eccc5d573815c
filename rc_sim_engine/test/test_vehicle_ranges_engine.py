"""The vehicle ranges and cross-field checks against the engine they protect.

* the engine constants the checks use are the engine's;
* the chassis mode rate of the check is the spectral radius of the engine's own lateral/yaw
  Jacobian (finite differences of its right-hand side);
* at the edge of the chassis step check both integrators follow a 0.1 ms reference, beyond it
  (a car the check refuses, built without the loader) they do not;
* every range end of every key and the real 1:43 and 1:5 cars drive
  through the engine with finite, bounded states.
"""

from __future__ import annotations

import dataclasses
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from rc_sim_description import plausibility as pl
from rc_sim_description.errors import RcSimError
from rc_sim_description.params import SECTIONS, VehicleParams, load_vehicle_params
from rc_sim_description.testing import LINIGER_1_43, ONE_FIFTH
from rc_sim_engine.vehicle import integrators, models
from rc_sim_engine.vehicle.packed import pack_params
from rc_sim_engine.vehicle.rollout import rollout

BASE = load_vehicle_params()


def test_the_checks_use_the_engine_constants() -> None:
    assert pl.ENGINE_MAX_SUBSTEP == integrators.MAX_SUBSTEP
    assert pl.ENGINE_BLEND_SPEEDS == (models.V_BLEND_LOW, models.V_BLEND_HIGH)
    assert pl.ENGINE_KINEMATIC_RELAXATION == models.KINEMATIC_RELAXATION


def _engine_jacobian_radius(p: VehicleParams, v: float) -> float:
    """Spectral radius of d(dvy, dr)/d(vy, r) of the engine's single track, straight at v."""
    row = pack_params([p], tyre_model='linear')[0]
    omega = v / p.effective_wheel_radius

    def rates(vy: float, r: float) -> np.ndarray:
        _, dvy, dr, _, _ = models.velocity_rates(1, v, vy, r, 1.0, 0.0, 0.0, omega, 0.0, 0.0,
                                                 row)
        return np.array([dvy, dr])

    h = 1e-6
    jac = np.column_stack([(rates(h, 0.0) - rates(-h, 0.0)) / (2 * h),
                           (rates(0.0, h) - rates(0.0, -h)) / (2 * h)])
    return float(np.max(np.abs(np.linalg.eigvals(jac))))


@pytest.mark.parametrize('values', [{}, {'yaw_inertia': 0.0085},
                                    {'cornering_stiffness_front': 300.0, 'mass': 2.0}])
def test_chassis_rate_is_the_engine_jacobian(values: dict) -> None:
    p = BASE.with_values(**values)
    rate, _ = pl.chassis_mode_rate(p)
    at_full_blend = _engine_jacobian_radius(p, pl.ENGINE_BLEND_SPEEDS[1])
    assert at_full_blend <= rate <= 1.06 * at_full_blend  # the max over speeds lies near 1 m/s
    grid = max(_engine_jacobian_radius(p, v) for v in np.linspace(0.5, 4.0, 351))
    assert rate == pytest.approx(grid, rel=0.02)


def _lap(p: VehicleParams, dt: float, integrator: str, speed: float = 0.95) -> np.ndarray:
    t = np.arange(0.0, 6.0, 0.02)
    omega = np.where(t < 0.5, 0.0, speed / p.effective_wheel_radius)
    delta = p.steering.max_steering_angle * np.sign(np.sin(np.pi * t)) * (t > 1.0)
    return rollout(p, t, delta, omega, None, t_out=t, dt=dt, integrator=integrator).yaw_rate[0]


def _unchecked(yaw_inertia: float) -> VehicleParams:
    return dataclasses.replace(BASE, mass_properties=dataclasses.replace(
        BASE.mass_properties, yaw_inertia=yaw_inertia))


@pytest.mark.parametrize('integrator', ['rk4', 'semi_implicit_euler'])
def test_chassis_step_check_sits_where_the_engine_step_breaks(integrator: str) -> None:
    """Accepted at |lambda| h = 1.95: within 2 % of a 0.1 ms reference at the largest sub-step;
    refused at 2.75: the yaw rate is off by more than 15 %."""
    h = integrators.MAX_SUBSTEP
    edge = BASE.with_values(yaw_inertia=0.0070)
    assert pl.chassis_mode_rate(edge)[0] * h == pytest.approx(1.95, abs=0.02)
    ref = _lap(edge, 1e-4, 'rk4')
    assert np.max(np.abs(_lap(edge, h, integrator) - ref)) < 0.02 * np.max(np.abs(ref))
    beyond = _unchecked(0.00497)
    assert pl.chassis_mode_rate(beyond)[0] * h == pytest.approx(2.75, abs=0.02)
    with pytest.raises(RcSimError, match='too fast for the engine step'):
        BASE.with_values(yaw_inertia=0.00497)
    ref = _lap(beyond, 1e-4, 'rk4')
    assert np.max(np.abs(_lap(beyond, h, integrator) - ref)) > 0.15 * np.max(np.abs(ref))


def _range_ends() -> list[tuple[str, object]]:
    """(key, value) at both ends of every numeric key's range (open ends nudged inside)."""
    out: list[tuple[str, object]] = []
    for cls in SECTIONS.values():
        for f in fields(cls):
            valid = f.metadata.get('range')
            if valid is None or f.name == 'fdir1':
                continue
            lo = valid.lo * (1 + 1e-9) + 1e-12 if valid.lo_open else valid.lo
            hi = valid.hi * (1 - 1e-9) if valid.hi_open else valid.hi
            for v in (lo, hi):
                out.append((f.name, int(v) if f.name == 'lidar_samples' else v))
    return out


def _drive(plist: list[VehicleParams], throttle: bool = False) -> np.ndarray:
    t = np.arange(0.0, 3.0, 0.02)
    n = len(plist)
    if throttle:
        wheel = np.broadcast_to(np.where(t < 0.2, 0.0, 0.7), (n, t.size))
    else:
        speed = np.array([min(0.6 * p.max_speed, 6.0) for p in plist])[:, None]
        radius = np.array([p.effective_wheel_radius for p in plist])[:, None]
        wheel = np.where(t < 0.2, 0.0, speed / radius)
    steer = np.array([p.steering.max_steering_angle for p in plist])[:, None] * \
        np.sign(np.sin(2 * np.pi * t)) * (t > 1.0)
    res = rollout(plist, t, np.ascontiguousarray(steer), np.ascontiguousarray(wheel), None,
                  t_out=t, dt=1e-3, drive_kind='throttle' if throttle else 'wheel_speed')
    return res.states


def test_every_range_end_drives_through_the_engine() -> None:
    """Each key at each end of its range (others at the defaults; ends a cross-field rule
    refuses are skipped), with each servo and drive model, gives finite states and speeds
    bounded by the car's top speed."""
    groups: dict[tuple[str, str], list[VehicleParams]] = {}
    refused = 0
    for key, value in _range_ends():
        for servo, drive in (('pd_joint', 'pd_joint'), ('second_order', 'first_order'),
                             ('first_order', 'throttle')):
            try:
                p = BASE.with_values(**{key: value, 'servo_model': servo, 'drive_model': drive})
            except RcSimError:
                refused += 1
                continue
            groups.setdefault((servo, drive), []).append(p)
    assert sum(len(g) for g in groups.values()) > 3 * refused  # most ends are valid alone
    for (_, drive), plist in groups.items():
        states = _drive(plist, throttle=drive == 'throttle')
        assert np.all(np.isfinite(states)), drive
        # the throttle drive is limited by its motor, not by max_wheel_speed
        top = np.array([pl.MAX_TOP_SPEED if drive == 'throttle' else 1.5 * p.max_speed + 1.0
                        for p in plist])
        assert np.all(np.max(np.abs(states[:, :, 3]), axis=1) <= top), drive


@pytest.mark.parametrize('car', [LINIGER_1_43, ONE_FIFTH], ids=['1:43', '1:5'])
def test_real_scale_cars_drive_through_the_engine(tmp_path: Path, car: dict) -> None:
    import yaml

    path = tmp_path / 'car.yaml'
    path.write_text(yaml.safe_dump(car))
    p = load_vehicle_params(overrides=[path])
    throttle = p.drive.drive_model == 'throttle'
    states = _drive([p], throttle=throttle)
    assert np.all(np.isfinite(states))
    assert 0.05 < np.max(np.abs(states[0, :, 3])) < 1.5 * p.max_speed
