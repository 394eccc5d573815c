"""Where the pose is measured: --odom-offset parsing, /tf_static chains, the precedence of the
sources, the lever-arm regression on rigid-body kinematics, and the gyro's clock offset."""

import math

import numpy as np
import pytest

from rc_sim_calibration.bagread import StaticTransform
from rc_sim_calibration.baselines import measured_from_reference
from rc_sim_calibration.dataset import gyro_time_shift
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.measured_point import (
    lever_arm_regression,
    parse_offset,
    resolve_offset,
    static_chain,
)


def test_parse_offset():
    assert parse_offset('0.115,-0.01') == (0.115, -0.01, 0.0)
    assert parse_offset(' 0.1, 0.02, -0.0077 ') == (0.1, 0.02, -0.0077)
    for bad in ('0.1', 'a,b', '1,2,3,4', 'nan,0', '20,0'):
        with pytest.raises(CalibrationError, match='--odom-offset'):
            parse_offset(bad)


def test_static_chain_composes_planar_transforms():
    tfs = [StaticTransform('base_link', 'chassis', 1.0, 0.0, math.pi / 2),
           StaticTransform('chassis', 'mocap', 1.0, 0.0, 0.1)]
    x, y, yaw = static_chain(tfs, 'mocap')
    assert (x, y, yaw) == pytest.approx((1.0, 1.0, math.pi / 2 + 0.1), abs=1e-12)
    assert static_chain(tfs, 'other') is None
    assert static_chain([StaticTransform('a', 'b', 0, 0, 0), StaticTransform('b', 'a', 0, 0, 0)],
                        'a') is None                       # a loop, not base_link


def test_offset_sources_in_order():
    tf = [StaticTransform('base_link', 'mocap_body', 0.12, 0.01, 0.0)]
    given = resolve_offset(explicit=(0.2, 0.0, 0.0), declared=True,
                           recording_offset=(0.1, 0.0, 0.0), frame='mocap_body', static_tf=tf)
    assert given.offset == (0.2, 0.0, 0.0) and given.source == '--odom-offset'
    rec = resolve_offset(explicit=None, declared=True, recording_offset=(0.1, 0.0, 0.0),
                         frame='mocap_body', static_tf=tf)
    assert rec.offset == (0.1, 0.0, 0.0) and rec.known
    from_tf = resolve_offset(explicit=None, declared=False, recording_offset=(0, 0, 0),
                             frame='mocap_body', static_tf=tf)
    assert from_tf.offset == pytest.approx((0.12, 0.01, 0.0)) and 'tf_static' in from_tf.source
    base = resolve_offset(explicit=None, declared=False, recording_offset=(0, 0, 0),
                          frame='rc_car/base_link', static_tf=())
    assert base.offset == (0.0, 0.0, 0.0) and base.known
    unknown = resolve_offset(explicit=None, declared=False, recording_offset=(0, 0, 0),
                             frame='mocap_body', static_tf=())
    assert not unknown.known


def test_lever_arm_regression_recovers_the_mount_from_rigid_body_motion():
    """base_link moves with speed v, yaw rate r and the rear-axle slip v_y = c v r; a frame at
    (o_x, o_y, o_yaw) sees v_m = R(-o_yaw) (v + r x o) (the rigid-body velocity transform)."""
    rng = np.random.default_rng(1)
    t = np.arange(0.0, 60.0, 0.02)
    v = 1.5 + 0.7 * np.sin(0.3 * t)
    r = 1.2 * np.sin(0.9 * t) + 0.4 * np.sin(2.3 * t)
    vy = -0.02 * v * r
    o = (0.16, 0.02, -0.008)
    _, _, _, vxm, vym, _ = measured_from_reference(0 * t, 0 * t, 0 * t, v, vy, r, o)
    lever = lever_arm_regression(vxm, vym + rng.normal(0, 0.01, t.size), r)
    assert lever is not None and lever.significant
    # first order in o_yaw: v_my = o_x r - o_yaw v + c v r - o_yaw r o_y ...
    assert lever.x == pytest.approx(0.16, abs=0.005)
    assert lever.yaw == pytest.approx(-0.008, abs=0.002)
    assert lever_arm_regression(vxm[:20], vym[:20], r[:20]) is None      # too few samples


def test_gyro_clock_offset_from_cross_correlation():
    grid = np.arange(0.0, 30.0, 0.02)
    rate = np.sin(1.3 * grid) + 0.5 * np.sin(3.1 * grid + 0.4)
    t_imu = np.arange(0.0, 30.0, 0.005)
    gyro = np.sin(1.3 * (t_imu + 0.031)) + 0.5 * np.sin(3.1 * (t_imu + 0.031) + 0.4)  # leads
    assert gyro_time_shift(t_imu, gyro, grid, rate) == pytest.approx(-0.031, abs=0.001)
    same = np.sin(1.3 * t_imu) + 0.5 * np.sin(3.1 * t_imu + 0.4)
    assert gyro_time_shift(t_imu, same, grid, rate) == 0.0            # below 5 ms: one clock
    flat = np.zeros_like(grid)
    assert gyro_time_shift(t_imu, gyro, grid, flat) == 0.0            # nothing to correlate
