"""Tracking references against the car's limits: the defaults fit the default car."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_control.tracking import (
    SIZE_KEYS,
    TRACKER_DEFAULTS,
    reference_limits,
    trajectory_from_values,
)
from rc_sim_control.trajectories import TRAJECTORY_NAMES, Lemniscate, canonical_trajectory
from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.params import load_vehicle_params

P = load_vehicle_params()


@pytest.mark.parametrize('name', TRAJECTORY_NAMES)
def test_every_default_shape_fits_the_default_car(name: str) -> None:
    traj = trajectory_from_values({**TRACKER_DEFAULTS, 'trajectory_type': name})
    limits = reference_limits(traj, traj.default_duration, P)
    assert limits.problems() == []
    # the default figure eight keeps a margin for the feedback (it used to need 1.60 1/m)
    if name == 'lemniscate':
        assert limits.curvature < 0.85 * limits.car_curvature


def test_car_curvature_is_that_of_the_centre_of_mass() -> None:
    """R_cg = sqrt(R_min^2 + lr^2) for a rear-axle radius R_min = L / tan(delta_max)."""
    limits = reference_limits(Lemniscate(), 1.0, P)
    g = P.geometry
    r_min = g.wheelbase / math.tan(P.steering.max_steering_angle)
    assert limits.car_curvature == pytest.approx(1 / math.hypot(r_min, g.cg_to_rear_axle))
    assert limits.friction_limit == pytest.approx(P.friction.mu2 * GRAVITY_MPS2)


def test_a_too_tight_eight_is_reported_with_a_size_that_fits() -> None:
    tight = Lemniscate(3.0, 0.45)
    limits = reference_limits(tight, tight.period, P)
    (problem,) = limits.problems(SIZE_KEYS['lemniscate'], 3.0)
    assert 'steering saturates' in problem and '--set amplitude=' in problem
    suggested = float(problem.split('--set amplitude=')[1].split()[0])
    bigger = Lemniscate(suggested, 0.45)
    assert reference_limits(bigger, bigger.period, P).problems() == []


def test_lateral_acceleration_is_checked_against_mu_g() -> None:
    fast = Lemniscate(4.5, 1.2)
    limits = reference_limits(fast, fast.period, P)
    s = fast.sample(np.linspace(0, fast.period, 4001))
    assert limits.lateral_acceleration == pytest.approx(np.max(s.speed ** 2 *
                                                               np.abs(s.curvature)))
    assert any('mu g' in p for p in limits.problems())


def test_old_trajectory_name_is_an_alias() -> None:
    assert canonical_trajectory('figure_eight')[0] == 'lemniscate'
    assert canonical_trajectory('circle') == ('circle', None)
    old = trajectory_from_values({**TRACKER_DEFAULTS, 'trajectory_type': 'figure_eight'})
    assert isinstance(old, Lemniscate)
