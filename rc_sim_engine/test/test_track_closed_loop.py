"""Closed-loop tracking in the engine (issue 7 item 8): FL on the dynamic model, Kanayama convergence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.scenarios.tracking import run_tracking
from rc_sim_engine.world.sdf import World

PARAMS = load_vehicle_params()
FLAT = World(name='flat', source='test')
EIGHT = {'trajectory_type': 'figure_eight', 'amplitude': 3.0, 'angular_speed': 0.45}


def test_fl_follows_the_figure_eight_on_the_dynamic_model() -> None:
    """a = 3 m, w = 0.45 rad/s (peak speed sqrt(2) a w = 1.91 m/s <= 2 m/s), default gains."""
    run = run_tracking(PARAMS, FLAT, {**EIGHT, 'controller': 'fl'}, model='single_track',
                       tyre_model='linear')
    after = run.evaluation.metrics_after
    assert run.evaluation.timed and after is not None
    assert after.t_start == pytest.approx(3.0, abs=0.05)
    assert after.rmse < 0.05
    assert run.evaluation.metrics.rmse > after.rmse  # the start from rest is the transient
    assert not run.result.collisions
    odom = run.result.streams['odom']
    speed = np.abs(odom['speed'][:, 0])[odom.t >= 3.0]  # catching up from rest is faster
    assert np.max(speed) <= 2.0


@pytest.mark.parametrize('model', ['single_track', 'kinematic'])
def test_kanayama_converges_from_half_a_metre_and_20_degrees(model: str) -> None:
    values = {'trajectory_type': 'circle', 'radius': 2.0, 'angular_speed': 0.5,
              'controller': 'kanayama', 'duration': 20.0}
    run = run_tracking(PARAMS, FLAT, values, model=model, offset=(0.0, 0.5, math.radians(20)))
    ev = run.evaluation
    err = np.hypot(ev.ex, ev.ey)
    assert err[0] > 0.45
    assert np.max(err[ev.t_err > 12.0]) < 0.03


def test_pure_pursuit_and_pacejka_run_and_track() -> None:
    run = run_tracking(PARAMS, FLAT, {**EIGHT, 'controller': 'pure_pursuit'},
                       model='single_track', tyre_model='pacejka')
    assert run.evaluation.metrics_after.rmse < 0.05
