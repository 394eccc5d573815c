"""The DART builders' model: their stated facts, their code's numbers, an independent integrator."""

import os
from pathlib import Path
import sys

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dart_published_model import (
    PUBLISHED,
    body_accelerations,
    held_product,
    lagged_command,
    longitudinal_force,
    predict_recording,
    rollout,
    steering_angle,
)
from evaluate_predictions import Signal, protocol_truth, read_recording, score

from rc_sim_calibration.baselines import (
    Windows,
    ctrv_predict,
    make_pose_track,
    make_windows,
    measured_from_reference,
    reference_from_measured,
)

MARKER = (0.115, -0.01, -0.00769)  # Vicon frame in base_link (the recording description)


def test_steering_map_matches_the_builders_stated_values():
    """δ(+1) = +0.320, δ(0) = -0.014, δ(-1) = -0.403 rad (their fit, README of the recordings)."""
    delta = steering_angle(np.array([1.0, 0.0, -1.0]))
    np.testing.assert_allclose(delta, [0.320, -0.014, -0.403], atol=5e-4)
    s = np.linspace(-1, 1, 401)
    assert np.all(np.diff(steering_angle(s)) > 0)  # monotone
    assert steering_angle(np.array(-PUBLISHED.c_s)) == pytest.approx(0.0, abs=1e-15)


def test_measured_geometry():
    """lr = 0.0930 m, lf = 0.0805 m, J_z = m (l^2 + w^2)/12 = 0.00481 kg m^2 (their numbers)."""
    assert PUBLISHED.cg_to_rear_axle == pytest.approx(0.0930, abs=5e-5)
    assert PUBLISHED.cg_to_front_axle == pytest.approx(0.0805, abs=5e-5)
    assert PUBLISHED.yaw_inertia == pytest.approx(0.00481, abs=5e-6)


# (vx, vy, r, lagged throttle, lagged steering) -> (vx', vy', r') computed by running the
# builders' own dyn_model_culomb_tires(steering_friction_flag=True, pitch_dynamics_flag=False)
# .forward (its numpy branch, torch stubbed) from dart_dynamic_models.py at commit 4b52523.
BUILDERS = [
    ((1.5, 0.05, 1.2, 0.48, 0.3), (1.7700186963432116, 1.0083240585435007, -17.030015641476517)),
    ((0.4, -0.02, -0.6, 0.3, -0.6), (-0.11742178864025425, -2.5932319883042023,
                                     5.191233482195584)),
    ((3.0, 0.2, 3.0, 0.5, 0.9), (-1.0209229835986289, -5.019541651518009, 43.333091611187285)),
]


@pytest.mark.parametrize('state, expected', BUILDERS)
def test_accelerations_match_the_builders_code(state, expected):
    got = body_accelerations(*(np.array(v) for v in state))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_lag_is_exact_against_an_ode_solver():
    t_cmd = np.array([0.0, 0.1, 0.25, 0.3, 0.7])
    u_cmd = np.array([0.2, 1.0, -0.5, 0.4, 0.0])
    lag = lagged_command(t_cmd, u_cmd, 0.0843)
    hold = lambda t: u_cmd[np.searchsorted(t_cmd, t, side='right') - 1]  # noqa: E731
    times = np.linspace(0.0, 1.0, 57)
    ref = solve_ivp(lambda t, x: (hold(t) - x) / 0.0843, (0.0, 1.0), [0.2], t_eval=times,
                    max_step=1e-3, rtol=1e-10, atol=1e-12).y[0]
    np.testing.assert_allclose(lag(times), ref, atol=1e-7)
    assert lag(np.array([-5.0]))[0] == 0.2


def test_deadman_gates_the_throttle():
    throttle = Signal(t=np.array([0.0, 1.0, 2.0]), value=np.array([0.5, 0.45, 0.5]))
    safety = Signal(t=np.array([0.5, 1.5, 2.5]), value=np.array([0.0, 1.0, 0.0]))
    gated = held_product(throttle, safety)
    np.testing.assert_array_equal(gated.t, [0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
    np.testing.assert_array_equal(gated.value, [0.0, 0.0, 0.0, 0.45, 0.5, 0.0])


def one_window(x0, horizon, dt=0.01):
    """A Windows object with one window at t = 10 s, measured state x0 (marker frame)."""
    n = round(horizon / dt)
    return Windows(horizon=horizon, index=np.array([0]), start=np.array([10.0]),
                   x0=np.array([x0[0]]), y0=np.array([x0[1]]), yaw0=np.array([x0[2]]),
                   vx0=np.array([x0[3]]), vy0=np.array([x0[4]]), yaw_rate0=np.array([x0[5]]),
                   sample_window=np.zeros(n, dtype=np.int64), sample_t=10.0 + dt * np.arange(n),
                   skipped={})


def test_rollout_matches_an_independent_integrator():
    """RK4 + interpolation + marker transform vs scipy DOP853 on the same equations."""
    throttle = lagged_command(np.array([0.0, 10.3, 10.6]), np.array([0.3, 0.5, 0.0]), 0.0843)
    steering = lagged_command(np.array([0.0, 10.2, 10.5]), np.array([0.1, -0.7, 0.9]), 0.1285)
    x0 = (1.0, -2.0, 0.3, 1.2, 0.04, 0.5)
    win = one_window(x0, 1.0)
    pred = rollout(win, throttle, steering, MARKER)
    off = (MARKER[0] - PUBLISHED.cg_to_rear_axle, MARKER[1], MARKER[2])
    z0 = np.concatenate(reference_from_measured(*(np.array([v]) for v in x0), off))

    def f(t, z):
        ax, ay, ar = body_accelerations(z[3], z[4], z[5], throttle(np.array(t)),
                                        steering(np.array(t)))
        return [z[3] * np.cos(z[2]) - z[4] * np.sin(z[2]),
                z[3] * np.sin(z[2]) + z[4] * np.cos(z[2]), z[5], ax, ay, ar]

    sol = solve_ivp(f, (10.0, 11.0), z0, method='DOP853', t_eval=win.sample_t, rtol=1e-10,
                    atol=1e-12, max_step=0.01)
    ref = measured_from_reference(*sol.y, off)
    assert pred.x[0] == pytest.approx(x0[0]) and pred.yaw_rate[0] == pytest.approx(x0[5])
    np.testing.assert_allclose(pred.x, ref[0], atol=2e-5)
    np.testing.assert_allclose(pred.y, ref[1], atol=2e-5)
    np.testing.assert_allclose(pred.yaw, ref[2], atol=1e-4)
    np.testing.assert_allclose(pred.yaw_rate, ref[5], atol=2e-3)
    assert np.ptp(pred.yaw_rate) > 1.0  # the window actually turns both ways


def test_straight_line_speed_settles_at_the_published_force_balance():
    """δ = 0 (s = -c): the speed tends to the root of F_motor + F_rolling + F_steer = 0."""
    d = 0.40
    v_star = brentq(lambda v: longitudinal_force(np.array(d), np.array(v), np.array(0.0)),
                    0.05, 6.0)
    throttle = lagged_command(np.array([0.0]), np.array([d]), PUBLISHED.tau_throttle)
    steering = lagged_command(np.array([0.0]), np.array([-PUBLISHED.c_s]), 1.0)
    off = (MARKER[0] - PUBLISHED.cg_to_rear_axle, MARKER[1], MARKER[2])
    start = measured_from_reference(*(np.array([v]) for v in (0, 0, 0, 0.5, 0, 0)), off)
    pred = rollout(one_window([v[0] for v in start], 20.0), throttle, steering, MARKER, step=0.01)
    assert 1.0 < v_star < 4.0
    assert pred.vx[-1] * np.cos(MARKER[2]) == pytest.approx(v_star, rel=1e-4)  # tau ~ 1.4 s
    assert np.max(np.abs(pred.yaw_rate)) < 1e-9


def realdata():
    root = Path(os.environ.get('RC_SIM_REALDATA', '/work/shared/realdata'))
    if not root.is_dir():
        pytest.skip(f'real recordings not found at {root}')
    return root


def test_published_model_beats_constant_turn_on_the_slow_recording():
    root = realdata()
    rec = read_recording(root / 'dart/4_sept_random_driving_slow.bag',
                         root / 'recordings/example_dart_fast.yaml', ('steering', 'drive', 'enable'))
    windows = make_windows(make_pose_track(rec.t, rec.x, rec.y, rec.yaw), 1.0)
    truth = protocol_truth(rec.t, rec.x, rec.y, rec.yaw, 1.0)

    def rows(table):
        out = {}
        for k in np.unique(table.window):
            m = table.window == k
            out[int(k)] = np.column_stack([table.t[m], table.x[m], table.y[m], table.yaw[m],
                                           table.vx[m], table.vy[m], table.yaw_rate[m]])
        return out

    dart = score(truth, rows(predict_recording(rec, windows)))
    ctrv = score(truth, rows(ctrv_predict(windows)))
    assert dart.windows == ctrv.windows > 40
    assert dart.pos_rmse < 0.8 * ctrv.pos_rmse
    assert dart.yaw_rate_rmse < 0.5 * ctrv.yaw_rate_rmse
