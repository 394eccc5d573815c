"""Window protocol, measured-point transform and CTRV baseline (analytic references)."""

import numpy as np
import pytest

from rc_sim_calibration.baselines import (
    CSV_COLUMNS,
    PoseTrack,
    Windows,
    ctrv_predict,
    fit_half_width,
    local_quadratic_fit,
    make_pose_track,
    make_windows,
    measured_from_reference,
    reference_from_measured,
)

EPOCH = 1.7e9  # stamps on a real clock: the protocol must survive large absolute times


def rigid_circle(t, vx, vy, r, x0=0.3, y0=-0.2, yaw0=0.4):
    """Pose of a frame moving with constant body twist (vx, vy, r): closed form."""
    yaw = yaw0 + r * t
    c0, s0 = np.cos(yaw0), np.sin(yaw0)
    if r == 0.0:
        bx, by = vx * t, vy * t
    else:
        bx = (np.sin(r * t) * vx - (1 - np.cos(r * t)) * vy) / r
        by = ((1 - np.cos(r * t)) * vx + np.sin(r * t) * vy) / r
    return x0 + c0 * bx - s0 * by, y0 + s0 * bx + c0 * by, yaw


def exact_windows(track, horizon, vx, vy, r):
    """Windows of make_windows with their initial states replaced by the exact ones."""
    w = make_windows(track, horizon)
    x0, y0, yaw0 = rigid_circle(w.start - EPOCH, vx, vy, r)
    n = w.index.size
    return Windows(horizon=horizon, index=w.index, start=w.start, x0=x0, y0=y0, yaw0=yaw0,
                   vx0=np.full(n, vx), vy0=np.full(n, vy), yaw_rate0=np.full(n, r),
                   sample_window=w.sample_window, sample_t=w.sample_t, skipped=w.skipped)


def test_ctrv_exact_on_constant_turn():
    rng = np.random.default_rng(7)
    t = np.sort(rng.uniform(0.0, 6.0, 500)) + EPOCH
    vx, vy, r = 2.0, 0.3, 1.7
    x, y, yaw = rigid_circle(t - EPOCH, vx, vy, r)
    track = make_pose_track(t, x, y, yaw)
    pred = ctrv_predict(exact_windows(track, 1.0, vx, vy, r))
    xt, yt, yawt = rigid_circle(pred.t - EPOCH, vx, vy, r)
    assert pred.t.size > 300
    assert np.max(np.hypot(pred.x - xt, pred.y - yt)) < 1e-6  # CSV stamps are float64 at 1.7e9
    assert np.max(np.abs(pred.yaw - yawt)) < 1e-6
    assert np.all(pred.yaw_rate == r) and np.all(pred.vx == vx) and np.all(pred.vy == vy)


def test_ctrv_from_estimated_states_on_a_straight_line_is_exact():
    """Linear motion is inside the local quadratic: the whole pipeline has zero error."""
    t = EPOCH + np.arange(0.0, 5.0, 0.01)
    x, y, yaw = rigid_circle(t - EPOCH, 1.5, 0.0, 0.0)
    windows = make_windows(make_pose_track(t, x, y, yaw), 1.0)
    np.testing.assert_allclose(windows.vx0, 1.5, atol=1e-6)
    np.testing.assert_allclose(windows.vy0, 0.0, atol=1e-6)
    np.testing.assert_allclose(windows.yaw_rate0, 0.0, atol=1e-9)
    pred = ctrv_predict(windows)
    xt, yt, _ = rigid_circle(pred.t - EPOCH, 1.5, 0.0, 0.0)
    assert np.max(np.hypot(pred.x - xt, pred.y - yt)) < 1e-5


def test_ctrv_turn_rate_limit_is_continuous():
    t = EPOCH + np.arange(0.0, 3.0, 0.01)
    x, y, yaw = rigid_circle(t - EPOCH, 1.0, 0.2, 0.0)
    track = make_pose_track(t, x, y, yaw)
    straight = ctrv_predict(exact_windows(track, 1.0, 1.0, 0.2, 0.0))
    tiny = ctrv_predict(exact_windows(track, 1.0, 1.0, 0.2, 1e-9))
    assert np.max(np.hypot(straight.x - tiny.x, straight.y - tiny.y)) < 1e-8


def test_state_estimate_on_a_circle_is_close():
    """A quadratic cannot follow a circle exactly; its slope error is O(r^2 w^2) (< 0.3 %)."""
    t = EPOCH + np.arange(0.0, 4.0, 0.01)
    x, y, yaw = rigid_circle(t - EPOCH, 2.0, 0.1, 1.5)
    w = make_windows(make_pose_track(t, x, y, yaw), 1.0)
    np.testing.assert_allclose(w.vx0, 2.0, rtol=3e-3)
    np.testing.assert_allclose(w.vy0, 0.1, atol=6e-3)
    np.testing.assert_allclose(w.yaw_rate0, 1.5, rtol=1e-9)  # yaw is linear: exact


def test_local_quadratic_fit_is_exact_on_quadratics_and_invalid_at_edges():
    rng = np.random.default_rng(3)
    t = np.sort(rng.uniform(0.0, 2.0, 120))
    values = np.stack([3.0 - 2.0 * t + 0.7 * t**2, np.full_like(t, 5.0)], axis=1)
    fitted, slope, valid = local_quadratic_fit(t, values, 0.1)
    assert not valid[0] and not valid[1] and not valid[-1] and valid[60]
    np.testing.assert_allclose(fitted[valid, 0], values[valid, 0], atol=1e-9)
    np.testing.assert_allclose(slope[valid, 0], -2.0 + 1.4 * t[valid], atol=1e-8)
    np.testing.assert_allclose(slope[valid, 1], 0.0, atol=1e-9)
    assert np.all(np.isnan(fitted[~valid]))


def test_window_boundaries_gaps_and_standing():
    """Grid windows floor((t - t0)/H); window 0 has a one-sided fit; a hole and a halt skip."""
    dt = 0.01
    t = np.arange(0.0, 6.005, dt)
    t = t[(t < 2.3) | (t > 2.6)]  # 0.3 s hole in window 2 (> g = 0.25 s)
    speed = np.where((t >= 4.0) & (t < 5.0), 0.0, 1.0)  # standing in window 4
    x = np.concatenate(([0.0], np.cumsum(speed[:-1] * np.diff(t))))
    y = np.zeros_like(t)
    yaw = np.zeros_like(t)
    track = make_pose_track(t + EPOCH, x, y, yaw)
    assert fit_half_width(track.t) == pytest.approx(0.1)
    w = make_windows(track, 1.0)
    assert w.skipped == {'gap': [2], 'state': [0], 'standing': [4]}
    assert list(w.index) == [1, 3, 5]  # window 6 would be the partial remainder
    for j, k in enumerate(w.index):
        mine = w.sample_t[w.sample_window == j] - EPOCH
        assert mine[0] == pytest.approx(k * 1.0, abs=1e-6)
        assert np.all(mine >= k - 1e-6) and np.all(mine < k + 1.0 - 1e-6)
        assert mine.size == 100
        assert w.start[j] == w.sample_t[w.sample_window == j][0]
    assert np.all(w.tau >= 0) and np.all(w.tau < 1.0)


def test_pose_track_sorts_dedups_and_unwraps():
    t = np.array([3.0, 1.0, 2.0, 2.0, 4.0])
    yaw = np.array([3.1, 3.0, -3.1, 0.0, -3.0])
    track = make_pose_track(t, np.arange(5.0), np.zeros(5), yaw)
    assert isinstance(track, PoseTrack)
    np.testing.assert_array_equal(track.t, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(track.x, [1.0, 2.0, 0.0, 4.0])  # first of the repeated stamp
    assert np.all(np.abs(np.diff(track.yaw)) < 0.2)


def test_measured_point_transform_matches_the_rigid_body_motion():
    """Marker pose from the reference pose; its velocity vs a central difference of its path."""
    offset = (0.115, -0.01, -0.00769)
    vx, vy, r = 1.8, 0.05, 2.2
    t = np.array([1.0])
    h = 1e-6

    def marker(time):
        xr, yr, yawr = rigid_circle(time, vx, vy, r)
        n = np.ones_like(time)
        return measured_from_reference(xr, yr, yawr, vx * n, vy * n, r * n, offset)

    xm, ym, yawm, vxm, vym, rm = marker(t)
    xr, yr, yawr = rigid_circle(t, vx, vy, r)
    c, s = np.cos(yawr), np.sin(yawr)
    assert xm == pytest.approx(xr + 0.115 * c + 0.01 * s)
    assert yawm == pytest.approx(yawr - 0.00769)
    xp, yp = marker(t + h)[:2]
    xn, yn = marker(t - h)[:2]
    vwx, vwy = (xp - xn) / (2 * h), (yp - yn) / (2 * h)
    cm, sm = np.cos(yawm), np.sin(yawm)
    assert vxm == pytest.approx(cm * vwx + sm * vwy, abs=1e-6)
    assert vym == pytest.approx(-sm * vwx + cm * vwy, abs=1e-6)
    assert rm == pytest.approx(r)
    back = reference_from_measured(xm, ym, yawm, vxm, vym, rm, offset)
    np.testing.assert_allclose(np.concatenate(back), [xr[0], yr[0], yawr[0], vx, vy, r],
                               atol=1e-12)


def test_csv_text_has_the_fixed_columns():
    t = EPOCH + np.arange(0.0, 3.0, 0.01)
    x, y, yaw = rigid_circle(t - EPOCH, 1.0, 0.0, 0.5)
    pred = ctrv_predict(make_windows(make_pose_track(t, x, y, yaw), 1.0))
    lines = pred.to_csv_text().splitlines()
    assert lines[0] == ','.join(CSV_COLUMNS) == 'window,t,x,y,yaw,vx,vy,yaw_rate'
    assert len(lines) == pred.t.size + 1
    first = lines[1].split(',')
    assert int(first[0]) == 1 and float(first[1]) == pytest.approx(EPOCH + 1.0, abs=1e-5)


def test_bad_horizon_and_tiny_tracks_are_refused():
    t = np.arange(0.0, 2.0, 0.01)
    track = make_pose_track(t, t, 0 * t, 0 * t)
    with pytest.raises(ValueError, match='horizon'):
        make_windows(track, 0.0)
    with pytest.raises(ValueError, match='too few'):
        make_windows(make_pose_track(t[:3], t[:3], t[:3], t[:3]), 1.0)
