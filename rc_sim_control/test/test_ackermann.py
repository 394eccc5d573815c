"""Command mapper and Ackermann geometry against seed 000 equations (1)-(4) and rigid-body geometry."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from rc_sim_control.ackermann import (
    MAPPER_MODES,
    BridgeState,
    CommandMapper,
    MapperConfig,
    ackermann_split,
    bicycle_steering_angle,
    hold_where,
    joint_commands,
    map_sequence,
    map_twist,
    rate_limit,
    rear_wheel_speeds,
)
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import load_vehicle_params

PARAMS = load_vehicle_params()
L = PARAMS.geometry.wheelbase
W = PARAMS.geometry.track_width
R_WHEEL = PARAMS.geometry.wheel_radius
D_MAX = PARAMS.steering.max_steering_angle
V_MAX = PARAMS.max_speed


def cfg(mode: str = 'yaw_rate', **kw: object) -> MapperConfig:
    return MapperConfig.from_vehicle(PARAMS, mode=mode, **kw)


# --------------------------------------------------------------------------- config
def test_config_from_vehicle_reads_vehicle_yaml() -> None:
    c = cfg()
    assert (c.wheelbase, c.track_width, c.wheel_radius) == (L, W, R_WHEEL)
    assert c.max_steering_angle == D_MAX
    assert c.max_steering_rate == PARAMS.steering.max_steering_rate
    assert c.max_wheel_speed == PARAMS.drive.max_wheel_speed
    assert c.mode == 'yaw_rate'
    assert c.min_turning_radius == pytest.approx(PARAMS.min_turning_radius)


@pytest.mark.parametrize(('kw', 'match'), [
    ({'mode': 'speed'}, r'mode: must be one of curvature, radius'),
    ({'wheelbase': -1.0}, r'wheelbase: must be finite and > 0'),
    ({'max_steering_angle': 2.0}, r'max_steering_angle: must be in \(0, pi/2\)'),
    ({'max_steering_rate': float('nan')}, r'max_steering_rate: must be a number'),
    ({'standstill_speed': -0.1}, r'standstill_speed: must be finite and >= 0'),
    ({'command_timeout': 0.0}, r'command_timeout: must be > 0'),
    ({'electronic_differential': 'yes'}, r'electronic_differential: must be true or false'),
    ({'wheel_base': 0.3}, r"unknown key 'wheel_base'"),
])
def test_config_rejects_bad_values_in_one_line(kw: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        cfg(**kw)  # type: ignore[arg-type]
    assert '\n' not in str(info.value)


# --------------------------------------------------------------------------- equations (1)-(3)
def test_each_mode_against_equations() -> None:
    v = 1.5
    expected_delta = math.atan(L * 0.5)  # kappa = 0.5 1/m, R = 2 m, psi_dot = v * kappa
    for mode, z in (('curvature', 0.5), ('radius', 2.0), ('steering_angle', expected_delta),
                    ('yaw_rate', v * 0.5)):
        out = map_twist(v, z, cfg(mode))
        assert float(out.steering_angle) == pytest.approx(expected_delta, rel=1e-12), mode
        assert float(out.wheel_speed) == pytest.approx(v / R_WHEEL)  # eq. (3)
        assert float(out.yaw_rate) == pytest.approx(v * math.tan(expected_delta) / L)  # eq. (2)
        assert float(out.turn_radius) == pytest.approx(2.0)
        assert not out.saturated and out.valid and not out.standstill


@pytest.mark.parametrize('mode', MAPPER_MODES)
def test_straight_driving(mode: str) -> None:
    zs = [0.0, math.inf, -math.inf] if mode == 'radius' else [0.0]
    out = map_twist(1.0, np.array(zs), cfg(mode))
    assert np.all(out.steering_angle == 0.0)
    assert np.all(out.yaw_rate == 0.0)
    assert np.all(np.isposinf(out.turn_radius))
    assert out.valid.all()


def test_reverse_signs() -> None:
    # yaw_rate: reversing while yawing left (CCW) needs right steering (psi_dot = v tan(d) / L)
    out = map_twist(-1.0, 0.5, cfg('yaw_rate'))
    assert float(out.steering_angle) == pytest.approx(-math.atan(0.5 * L))
    assert float(out.yaw_rate) == pytest.approx(0.5)
    assert float(out.wheel_speed) == pytest.approx(-1.0 / R_WHEEL)
    # curvature and radius describe the path: same steering forward and backward
    for mode, z in (('curvature', 0.5), ('radius', 2.0)):
        fwd, back = map_twist(1.0, z, cfg(mode)), map_twist(-1.0, z, cfg(mode))
        assert float(fwd.steering_angle) == float(back.steering_angle) > 0
        assert float(back.yaw_rate) == pytest.approx(-float(fwd.yaw_rate))


def test_radius_below_minimum_saturates_and_flags() -> None:
    c = cfg('radius')
    out = map_twist(1.0, np.array([0.5 * c.min_turning_radius, -0.5 * c.min_turning_radius,
                                   1.01 * c.min_turning_radius]), c)
    assert out.steering_angle[:2] == pytest.approx([D_MAX, -D_MAX])
    assert out.turn_radius[:2] == pytest.approx([c.min_turning_radius, -c.min_turning_radius])
    assert list(out.saturated) == [True, True, False]
    assert out.turn_radius[2] == pytest.approx(1.01 * c.min_turning_radius)


def test_steering_and_speed_limits() -> None:
    out = map_twist(np.array([1.0, 1.0, 2 * V_MAX]), np.array([1.0, -1.0, 0.0]),
                    cfg('steering_angle'))
    assert out.steering_angle == pytest.approx([D_MAX, -D_MAX, 0.0])
    assert out.wheel_speed[2] == pytest.approx(PARAMS.drive.max_wheel_speed)
    assert out.saturated.all()
    # yaw_rate beyond v tan(d_max) / L: the achieved yaw rate is the limit
    too_fast = map_twist(1.0, 10.0, cfg('yaw_rate'))
    assert float(too_fast.yaw_rate) == pytest.approx(math.tan(D_MAX) / L)
    assert bool(too_fast.saturated)


def test_speed_saturation_keeps_the_requested_curvature_in_yaw_rate_mode() -> None:
    v = 2 * V_MAX
    out = map_twist(v, 0.2 * v, cfg('yaw_rate'))  # kappa = 0.2 1/m
    assert float(out.steering_angle) == pytest.approx(math.atan(0.2 * L))
    assert float(out.yaw_rate) == pytest.approx(0.2 * V_MAX)


def test_yaw_rate_standstill_outputs_zero_and_flags() -> None:
    c = cfg('yaw_rate')
    out = map_twist(np.array([0.0, 0.5 * c.standstill_speed, -0.5 * c.standstill_speed,
                              c.standstill_speed]), 0.3, c)
    assert list(out.standstill) == [True, True, True, False]
    assert out.steering_angle[:3] == pytest.approx([0, 0, 0])
    assert np.isfinite(out.steering_angle).all()


@pytest.mark.parametrize('mode', MAPPER_MODES)
def test_non_finite_input_is_invalid_and_zero(mode: str) -> None:
    v = np.array([np.nan, np.inf, 1.0, 1.0, -np.inf])
    z = np.array([0.1, 0.1, np.nan, -np.inf if mode != 'radius' else np.nan, 0.1])
    out = map_twist(v, z, cfg(mode))
    assert not out.valid.any()
    for a in (out.steering_angle, out.wheel_speed, out.yaw_rate):
        assert np.all(a == 0.0)
    assert not np.isnan(out.turn_radius).any()
    assert not out.saturated.any()


# --------------------------------------------------------------------------- properties
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
anything = st.floats(allow_nan=True, allow_infinity=True)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(v=st.floats(min_value=-1.0, max_value=1.0), frac=st.floats(min_value=-1.0, max_value=1.0))
def test_yaw_rate_recovered_within_limits(v: float, frac: float) -> None:
    c = cfg('yaw_rate')
    speed = math.copysign(c.standstill_speed + abs(v) * (V_MAX - c.standstill_speed), v)
    psi_dot = frac * abs(speed) * math.tan(D_MAX) / L
    out = map_twist(speed, psi_dot, c)
    recovered = speed * math.tan(float(out.steering_angle)) / L  # eq. (2) on the output
    assert recovered == pytest.approx(psi_dot, rel=1e-9, abs=1e-12)
    assert float(out.yaw_rate) == pytest.approx(psi_dot, rel=1e-9, abs=1e-12)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(v=anything, z=anything, mode=st.sampled_from(MAPPER_MODES))
def test_outputs_never_nan_and_within_limits(v: float, z: float, mode: str) -> None:
    out = map_twist(v, z, cfg(mode))
    for a in (out.steering_angle, out.wheel_speed, out.yaw_rate, out.turn_radius):
        assert not np.isnan(a).any()
    assert abs(float(out.steering_angle)) <= D_MAX
    assert abs(float(out.wheel_speed)) <= PARAMS.drive.max_wheel_speed


@settings(max_examples=200, deadline=None, derandomize=True)
@given(v=finite, z=finite, mode=st.sampled_from(MAPPER_MODES))
def test_left_right_symmetry(v: float, z: float, mode: str) -> None:
    c = cfg(mode)
    a, b = map_twist(v, z, c), map_twist(v, -z, c)
    assert float(b.steering_angle) == -float(a.steering_angle)
    assert float(b.yaw_rate) == -float(a.yaw_rate)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(delta=st.floats(min_value=-D_MAX, max_value=D_MAX).filter(
    lambda d: d == 0 or abs(d) > 1e-300))  # no denormals (L * d underflows to 0)
def test_split_inner_at_least_outer_and_symmetric(delta: float) -> None:
    left, right = ackermann_split(delta, L, W)
    inner, outer = (left, right) if delta > 0 else (right, left)
    assert abs(float(inner)) >= abs(float(outer))
    assert np.sign(left) == np.sign(right) == np.sign(delta)
    ml, mr = ackermann_split(-delta, L, W)
    assert float(ml) == pytest.approx(-float(right)) and float(mr) == pytest.approx(-float(left))


# --------------------------------------------------------------------------- equation (4)
def test_split_matches_equation_4_for_both_turns() -> None:
    R = 1.2
    delta = math.atan(L / R)
    left, right = ackermann_split(np.array([delta, -delta, 0.0]), L, W)
    assert left[0] == pytest.approx(math.atan(L / (R - W / 2)))  # inner (left turn)
    assert right[0] == pytest.approx(math.atan(L / (R + W / 2)))  # outer
    assert right[1] == pytest.approx(-math.atan(L / (R - W / 2)))  # inner (right turn)
    assert left[1] == pytest.approx(-math.atan(L / (R + W / 2)))
    assert left[2] == right[2] == 0.0  # R -> inf


def test_split_wheel_axes_meet_at_the_instantaneous_centre() -> None:
    # Independent geometry: the axis of a front wheel at (L, +-W/2) steered by d crosses the rear
    # axle line x = 0 at y = +-W/2 + L / tan(d); Ackermann means both cross at y = R.
    for delta in (0.05, 0.2, D_MAX, -0.3):
        R = L / math.tan(delta)
        left, right = ackermann_split(delta, L, W)
        assert W / 2 + L / math.tan(float(left)) == pytest.approx(R, rel=1e-12)
        assert -W / 2 + L / math.tan(float(right)) == pytest.approx(R, rel=1e-12)


def test_bicycle_angle_inverts_the_split() -> None:
    delta = np.linspace(-D_MAX, D_MAX, 41)
    left, right = ackermann_split(delta, L, W)
    assert bicycle_steering_angle(left, right, L, W) == pytest.approx(delta, abs=1e-15)


def test_rear_wheel_speeds_rigid_body() -> None:
    omega, delta = 20.0, 0.3
    same = rear_wheel_speeds(omega, delta, L, W)
    assert float(same[0]) == float(same[1]) == omega
    left, right = rear_wheel_speeds(omega, np.array([delta, -delta]), L, W,
                                    electronic_differential=True)
    # each rear wheel rolls about the ICR (0, R): speed = psi_dot * distance to it
    R = L / math.tan(delta)
    v = omega * R_WHEEL
    psi_dot = v / R
    assert left[0] * R_WHEEL == pytest.approx(psi_dot * (R - W / 2))
    assert right[0] * R_WHEEL == pytest.approx(psi_dot * (R + W / 2))
    assert (left[1], right[1]) == pytest.approx((right[0], left[0]))
    assert 0.5 * (left + right) == pytest.approx([omega, omega])


# --------------------------------------------------------------------------- streaming mapper
def test_rate_limit_on_a_steering_step() -> None:
    c = cfg('steering_angle')
    m = CommandMapper(c)
    first = m.update(1.0, 0.0, 0.0)
    assert first is not None and first.steering_angle == 0.0
    dt = 0.01
    angles = []
    for k in range(1, 30):
        out = m.update(1.0, D_MAX, k * dt)
        assert out is not None
        angles.append(out.steering_angle)
    expected = np.minimum(c.max_steering_rate * dt * np.arange(1, 30), D_MAX)
    assert angles == pytest.approx(expected)


def test_rejected_input_is_counted_and_changes_nothing() -> None:
    m = CommandMapper(cfg('steering_angle'))
    m.update(1.0, 0.1, 0.0)
    assert m.update(math.nan, 0.1, 0.1) is None
    assert m.update(1.0, math.inf, 0.1) is None
    assert m.update(1.0, 0.1, math.nan) is None
    assert m.rejected_count == 3
    assert m.last_input_time == 0.0
    out = m.step(0.2)
    assert out.wheel_speed == pytest.approx(1.0 / R_WHEEL) and out.steering_angle == 0.1


def test_command_timeout_stops_and_holds_steering() -> None:
    c = cfg('steering_angle', command_timeout=0.5)
    m = CommandMapper(c)
    assert m.timeout(0.0) is not None  # no input yet: stopped
    m.update(2.0, 0.2, 1.0)
    assert m.timeout(1.4) is None
    assert m.step(1.4).wheel_speed == pytest.approx(2.0 / R_WHEEL)
    stop = m.timeout(1.6)
    assert stop is not None and stop.stopped
    assert stop.wheel_speed == 0.0 and stop.yaw_rate == 0.0
    assert stop.steering_angle == pytest.approx(0.2)
    resumed = m.update(1.0, 0.2, 2.0)
    assert resumed is not None and not resumed.stopped


def test_command_timeout_after_a_clock_jump_back() -> None:
    """A clock that went back before the last command (simulation reset) times out at once:
    the live test (tests_live/test_control_mapper.py) found the mapper driving on until the
    clock was back at the old time. The bridge state does the same for its wheel speed."""
    m = CommandMapper(cfg('steering_angle', command_timeout=0.5))
    m.update(1.0, 0.2, 100.0)
    assert not m.timed_out(100.3)
    assert m.timed_out(1.0) and m.timed_out(99.99)
    stop = m.step(1.0)
    assert stop.stopped and stop.wheel_speed == 0.0 and stop.steering_angle == pytest.approx(0.2)
    resumed = m.update(1.0, 0.1, 1.02)  # a command after the jump counts from its new time
    assert resumed is not None and not m.timed_out(1.5) and m.timed_out(1.53)
    bridge = BridgeState(cfg('steering_angle', command_timeout=0.5))
    bridge.set_steering_angle(0.1)
    bridge.set_wheel_speed(20.0, 100.0)
    assert bridge.commands(100.4).rear_left_wheel == 20.0
    assert bridge.timed_out(2.0) and bridge.commands(2.0).rear_right_wheel == 0.0
    assert bridge.commands(2.0).front_left_steering > 0.1  # the hinges keep their angle
    bridge.set_wheel_speed(-5.0, 2.1)
    assert bridge.commands(2.5).rear_left_wheel == -5.0


def test_yaw_rate_mode_holds_last_steering_at_standstill() -> None:
    c = cfg('yaw_rate', max_steering_rate=math.inf)
    m = CommandMapper(c)
    moving = m.update(1.0, 0.5, 0.0)
    assert moving is not None
    stopped = m.update(0.0, 0.5, 0.1)
    assert stopped is not None and stopped.standstill
    assert stopped.steering_angle == moving.steering_angle == pytest.approx(math.atan(0.5 * L))
    assert stopped.wheel_speed == 0.0


def test_time_jump_backwards_resets_rate_reference() -> None:
    m = CommandMapper(cfg('steering_angle'))
    m.update(1.0, 0.0, 10.0)
    out = m.update(1.0, 0.3, 0.0)  # simulation reset
    assert out is not None and out.steering_angle == pytest.approx(0.3)


def test_map_sequence_matches_the_streaming_mapper() -> None:
    rng = np.random.default_rng(3)
    c = cfg('yaw_rate')
    t = np.cumsum(rng.uniform(0.005, 0.05, 400))
    v = rng.choice([0.0, 0.02, 0.5, -1.0, 3.0], 400)
    z = rng.uniform(-3, 3, 400)
    batch = map_sequence(t, v, z, c)
    m = CommandMapper(c)
    stream = [m.update(a, b, tt) for a, b, tt in zip(v, z, t)]
    assert batch.steering_angle == pytest.approx([s.steering_angle for s in stream], abs=1e-12)
    assert batch.wheel_speed == pytest.approx([s.wheel_speed for s in stream])
    assert batch.yaw_rate == pytest.approx([s.yaw_rate for s in stream], abs=1e-12)


def test_hold_where_and_rate_limit() -> None:
    assert hold_where([1, 2, 3, 4, 5], [True, False, True, True, False], 9.0).tolist() == \
        [9, 2, 2, 2, 5]
    two_d = hold_where([[1, 2, 3], [4, 5, 6]], [[False, True, False], [True, True, False]], 0.0)
    assert two_d.tolist() == [[1, 1, 3], [0, 0, 6]]
    t = np.arange(6) * 0.1
    assert rate_limit([0, 1, 1, 1, -1, -1], t, 2.0) == pytest.approx([0, .2, .4, .6, .4, .2])
    assert rate_limit([0, 1], t[:2], math.inf).tolist() == [0, 1]


def test_mode_override_per_command_shares_the_state() -> None:
    m = CommandMapper(cfg('yaw_rate', max_steering_rate=math.inf))
    ack = m.update(0.0, 0.2, 0.0, mode='steering_angle')  # ackermann_msgs: delta at standstill
    assert ack is not None and ack.steering_angle == pytest.approx(0.2)
    held = m.update(0.0, 1.0, 0.1)  # yaw_rate at standstill holds the Ackermann angle
    assert held is not None and held.steering_angle == pytest.approx(0.2)
    assert m.step(0.2).steering_angle == pytest.approx(0.2)
    with pytest.raises(ConfigError, match='mode: must be one of'):
        m.update(1.0, 0.0, 0.3, mode='speed')


def test_joint_commands_clip_split_and_never_nan() -> None:
    c = cfg(electronic_differential=True)
    out = joint_commands(np.array([1.0, -0.2, np.nan]), np.array([1e4, 10.0, np.inf]), c)
    left, right = ackermann_split(np.array([D_MAX, -0.2]), L, W)
    assert out.front_left_steering[:2] == pytest.approx(left)
    assert out.front_right_steering[:2] == pytest.approx(right)
    w_max = PARAMS.drive.max_wheel_speed
    assert out.rear_left_wheel[0] <= w_max and out.rear_right_wheel[0] == pytest.approx(w_max)
    # the outer wheel at the limit, the inner one at eq. (5)'s ratio to it (both scaled down)
    ratio = rear_wheel_speeds(1.0, D_MAX, L, W, electronic_differential=True)
    assert out.rear_left_wheel[0] / out.rear_right_wheel[0] == pytest.approx(
        ratio[0] / ratio[1], rel=1e-12)
    rl, rr = rear_wheel_speeds(10.0, -0.2, L, W, electronic_differential=True)
    assert (out.rear_left_wheel[1], out.rear_right_wheel[1]) == pytest.approx((rl, rr))
    for a in (out.front_left_steering, out.front_right_steering, out.rear_left_wheel,
              out.rear_right_wheel):
        assert a[2] == 0.0


def test_reconfigure_keeps_target_and_timing() -> None:
    m = CommandMapper(cfg('steering_angle'))
    m.update(1.0, 0.2, 0.0)
    m.reconfigure(cfg('steering_angle', max_wheel_speed=0.5 / R_WHEEL))
    out = m.step(0.1)
    assert not out.stopped and out.steering_angle == pytest.approx(0.2)
    assert out.wheel_speed == pytest.approx(0.5 / R_WHEEL)  # new limit applies to the old target


def test_rate_limit_batch_equals_single_series() -> None:
    rng = np.random.default_rng(11)
    t = np.cumsum(rng.uniform(0.01, 0.1, 50))
    u = rng.uniform(-1, 1, (3, 50))
    batch = rate_limit(u, t, 2.0)
    for row in range(3):
        assert rate_limit(u[row], t, 2.0) == pytest.approx(batch[row], abs=1e-15)
    assert np.all(np.abs(np.diff(batch, axis=-1)) <= 2.0 * np.diff(t) + 1e-12)
