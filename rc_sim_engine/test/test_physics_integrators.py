"""Chassis integrators against an independent high-accuracy solver (scipy DOP853) on the same ODE.

The model right-hand side is taken from ``VehicleModel.derivative`` (steering and wheel speed held,
as the stepper does within a sub-step); scipy integrates it to 1e-12. The fixed-step kernels must
then show their textbook global error orders: 4 for ``rk4``, 1 for ``semi_implicit_euler``
(Hairer, Norsett & Wanner, Solving ODEs I, §II.1 and §II.3).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.integrators import INTEGRATORS, integrate_chassis
from rc_sim_engine.vehicle.models import MODELS
from rc_sim_engine.vehicle.packed import pack_params
from rc_sim_engine.vehicle.state import N_STATE, STEER, VX, VY, WHEEL_SPEED, YAW, YAW_RATE, X, Y

CHASSIS = [X, Y, YAW, VX, VY, YAW_RATE]
T_END = 0.4


def _start(model: str) -> tuple[np.ndarray, np.ndarray, float, float]:
    """A transient: speed, sideslip and yaw rate far from the steady state of the held inputs."""
    p = pack_params([load_vehicle_params().with_values(tyre_model='linear')])[0]
    x = np.zeros(N_STATE)
    x[X], x[Y], x[YAW] = 0.2, -0.1, 0.3
    x[VX], x[VY], x[YAW_RATE] = 3.0, 0.15 if model == 'single_track' else 0.0, -0.8
    delta, omega = 0.25, 95.0
    x[STEER], x[WHEEL_SPEED] = delta, omega
    return x, p, delta, omega


def _reference(model: str) -> np.ndarray:
    x0, p, _, _ = _start(model)
    derivative = MODELS[model].derivative

    def f(_t: float, y: np.ndarray) -> np.ndarray:
        x = x0.copy()
        x[CHASSIS] = y
        return derivative(x, p)[CHASSIS]

    sol = solve_ivp(f, (0.0, T_END), x0[CHASSIS], method='DOP853', rtol=1e-12, atol=1e-12)
    assert sol.success
    return sol.y[:, -1]


def _fixed_step(model: str, integrator: str, h: float) -> np.ndarray:
    x, p, delta, omega = _start(model)
    kernel_model, kernel_integ = MODELS[model].kernel_id, INTEGRATORS[integrator]
    for _ in range(round(T_END / h)):
        integrate_chassis(kernel_model, kernel_integ, x, p, h, math.cos(delta), math.sin(delta),
                          math.tan(delta), omega)
    return x[CHASSIS]


@pytest.mark.parametrize(('integrator', 'order', 'h'), [('rk4', 4, 2.5e-3),
                                                        ('semi_implicit_euler', 1, 1e-3)])
@pytest.mark.parametrize('model', ['single_track', 'kinematic'])
def test_global_error_order_against_dop853(model: str, integrator: str, order: int,
                                           h: float) -> None:
    ref = _reference(model)
    assert np.linalg.norm(ref[3:] - _start(model)[0][[VX, VY, YAW_RATE]]) > 0.1  # a transient
    errors = [float(np.max(np.abs(_fixed_step(model, integrator, hh) - ref)))
              for hh in (h, h / 2)]
    ratio = errors[0] / errors[1]
    assert 2 ** order * 0.75 < ratio < 2 ** order * 1.33, (errors, ratio)
    if integrator == 'rk4':
        assert errors[0] < 1e-7, errors
