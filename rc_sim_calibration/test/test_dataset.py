"""Dataset preprocessing on hand-built message series with known truth (no engine involved)."""

import math

import numpy as np
import pytest

from rc_sim_calibration.dataset import (
    DatasetOptions,
    RawBag,
    build_dataset,
    hampel_mask,
    parse_topic_overrides,
    yaw_from_quaternion,
)
from rc_sim_calibration.errors import CalibrationError
from rc_sim_description.params import load_vehicle_params

PARAMS = load_vehicle_params()
V, WZ, REST, DRIVE = 1.0, 0.5, 1.0, 14.0  # circle: speed [m/s], yaw rate [rad/s], times [s]
BIAS = 0.03


def _truth(t):
    """Rest, then a circle of radius V/WZ starting at the origin heading +x."""
    tau = np.clip(t - REST, 0.0, DRIVE)
    yaw = WZ * tau
    moving = (t > REST) & (t < REST + DRIVE)
    return (V / WZ * np.sin(yaw), V / WZ * (1 - np.cos(yaw)), yaw,
            np.where(moving, V, 0.0), np.where(moving, WZ, 0.0))


def _raw(*, twist=True, commands='float', glitch_at=None, rng_seed=0, imu=True, end_rest=2.0):
    rng = np.random.default_rng(rng_seed)
    t = np.arange(0.0, REST + DRIVE + end_rest, 0.01)
    x, y, yaw, v, wz = _truth(t)
    x = x + rng.normal(0, 0.002, t.size)
    if glitch_at is not None:
        x[int(glitch_at / 0.01)] += 0.3
    odom = {'t': t, 'x': x, 'y': y, 'qx': 0 * t, 'qy': 0 * t, 'qz': np.sin(yaw / 2),
            'qw': np.cos(yaw / 2), 'vx': v if twist else 0 * t, 'vy': 0 * t,
            'yaw_rate': wz if twist else 0 * t}
    series = {'odom': odom}
    tc = np.arange(0.0, REST + DRIVE + end_rest, 0.02)
    on = (tc >= REST) & (tc < REST + DRIVE)
    delta = math.atan(PARAMS.geometry.wheelbase * WZ / V)
    if commands == 'float':
        series['steering'] = {'t': tc, 'value': np.where(on, delta, 0.0)}
        series['wheel_speed'] = {'t': tc, 'value': np.where(on, V / PARAMS.geometry.wheel_radius,
                                                            0.0)}
    elif commands == 'cmd_vel':
        series['cmd_vel'] = {'t': tc, 'linear_x': np.where(on, V, 0.0),
                             'angular_z': np.where(on, WZ, 0.0)}
    elif commands == 'ackermann':
        series['ackermann'] = {'t': tc, 'steering_angle': np.where(on, delta, 0.0),
                               'speed': np.where(on, V, 0.0)}
    if imu:
        series['imu'] = {'t': t, 'yaw_rate': wz + BIAS + rng.normal(0, 0.005, t.size)}
    roles = {'odom': '/odom', 'imu': '/imu', 'steering': '/steering_angle',
             'wheel_speed': '/rear_wheel_speed', 'cmd_vel': '/cmd_vel',
             'ackermann': '/ackermann_cmd'}
    return RawBag(path='mem.db3', start_ns=0, topics=dict.fromkeys(roles.values(), 'x'),
                  roles={k: roles[k] for k in series}, series=series)


def test_quaternion_yaw_and_hampel():
    yaw = np.linspace(-3.0, 3.0, 13)
    z, w = np.sin(yaw / 2), np.cos(yaw / 2)
    np.testing.assert_allclose(yaw_from_quaternion(0 * z, 0 * z, z, w), yaw, atol=1e-12)
    x = np.sin(np.linspace(0, 3, 50))
    x[20] += 1.0
    assert np.flatnonzero(hampel_mask(x)).tolist() == [20]


def test_circle_with_gyro_bias_and_glitch():
    ds = build_dataset(_raw(glitch_at=5.0), PARAMS)
    assert ds.gyro_bias == pytest.approx(BIAS, abs=0.003)
    moving = (ds.t > REST + 0.5) & (ds.t < REST + DRIVE - 0.5)
    np.testing.assert_allclose(ds.yaw_rate[moving], WZ, atol=0.02)
    x, y, _, _, _ = _truth(ds.t)
    assert np.max(np.hypot(ds.x - x, ds.y - y)) < 0.02  # the 0.3 m glitch is gone
    assert np.all(np.diff(ds.yaw) > -1e-3) and ds.yaw.max() > 2 * math.pi  # unwrapped
    # trimmed: rest at the end minus the 0.5 s margin
    assert ds.t[-1] == pytest.approx(REST + DRIVE + 0.5, abs=0.15)  # 0.2 s speed average
    assert ds.t[0] == pytest.approx(REST - 0.5, abs=0.15)
    assert any('rejected' in n for n in ds.notes)
    assert ds.commands_at(np.array([REST + 1.0]))[1][0] == pytest.approx(
        V / PARAMS.geometry.wheel_radius)


def test_velocities_from_the_pose_when_the_twist_is_empty():
    ds = build_dataset(_raw(twist=False, imu=False), PARAMS)
    moving = (ds.t > REST + 0.5) & (ds.t < REST + DRIVE - 0.5)
    np.testing.assert_allclose(ds.vx[moving], V, atol=0.05)
    np.testing.assert_allclose(ds.vy[moving], 0.0, atol=0.05)
    np.testing.assert_allclose(ds.yaw_rate[moving], WZ, atol=0.02)
    assert 'differentiated' in ds.yaw_rate_source


def test_cmd_vel_goes_through_the_mapper():
    ds = build_dataset(_raw(commands='cmd_vel'), PARAMS)
    steer, wheel = ds.commands_at(np.array([REST + 5.0]))
    # yaw_rate mode: delta = atan(L wz / v), omega = v / r
    assert steer[0] == pytest.approx(math.atan(PARAMS.geometry.wheelbase * WZ / V), rel=1e-6)
    assert wheel[0] == pytest.approx(V / PARAMS.geometry.wheel_radius)
    assert 'mapper mode yaw_rate' in ds.command_source


def test_ackermann_commands():
    ds = build_dataset(_raw(commands='ackermann'), PARAMS)
    _, wheel = ds.commands_at(np.array([REST + 5.0]))
    assert wheel[0] == pytest.approx(V / PARAMS.geometry.wheel_radius)


def test_missing_topics_name_what_the_bag_has():
    with pytest.raises(CalibrationError, match=r'no command topics .* the bag has: '
                       r'.*--topic steering=NAME'):
        build_dataset(_raw(commands='none'), PARAMS)
    raw = _raw()
    raw.series.pop('odom')
    with pytest.raises(CalibrationError, match=r'no odometry topic /odom .*--topic odom=NAME'):
        build_dataset(raw, PARAMS)


def test_no_motion():
    raw = _raw()
    odom = raw.series['odom']
    for k in ('x', 'y', 'vx', 'yaw_rate'):
        odom[k] = 0 * odom[k]
    odom['qz'], odom['qw'] = 0 * odom['qz'], 1 + 0 * odom['qw']
    raw.series['wheel_speed']['value'][:] = 0.0
    with pytest.raises(CalibrationError, match='no motion in the data'):
        build_dataset(raw, PARAMS)


def test_topic_overrides():
    topics = parse_topic_overrides(['odom=/vicon/odom', 'imu=imu/data'])
    assert topics['odom'] == '/vicon/odom' and topics['imu'] == '/imu/data'
    assert topics['steering'] == '/steering_angle'
    with pytest.raises(CalibrationError, match="unknown role 'gps'"):
        parse_topic_overrides(['gps=/fix'])
    with pytest.raises(CalibrationError, match='expected ROLE=/topic'):
        parse_topic_overrides(['odom'])


def test_rate_option():
    ds = build_dataset(_raw(), PARAMS, DatasetOptions(rate_hz=20.0))
    np.testing.assert_allclose(np.diff(ds.t), 0.05)


def test_a_clipped_bag_keeps_the_span_and_the_commands_in_force_at_its_start():
    from rc_sim_calibration.bagread import clip_raw

    raw = _raw()
    part = clip_raw(raw, 5.005, 9.0)
    t = part.series['odom']['t']
    assert t.min() >= 5.005 and t.max() < 9.0
    np.testing.assert_array_equal(part.series['odom']['x'],
                                  raw.series['odom']['x'][(raw.series['odom']['t'] >= 5.005)
                                                          & (raw.series['odom']['t'] < 9.0)])
    for key in ('steering', 'wheel_speed'):  # the command sent at 5.00 s holds from 5.005 s
        tc, value = part.series[key]['t'], part.series[key]['value']
        assert tc[0] == 5.005 and value[0] == raw.series[key]['value'][250]
        assert np.all(np.diff(tc) > 0) and tc[-1] < 9.0
    ds = build_dataset(part, PARAMS)
    assert ds.t[-1] - ds.t[0] == pytest.approx(4.0, abs=0.05)
    assert np.median(ds.vx) == pytest.approx(V, abs=0.02)  # the car drives from the first sample
    with pytest.raises(CalibrationError, match=r'fewer than two odom messages in the time '
                                               r'span 40:50 s'):
        clip_raw(raw, 40.0, 50.0)
    with pytest.raises(CalibrationError, match='time span 3:1 s is empty'):
        clip_raw(raw, 3.0, 1.0)
