"""ROS-free logic behind the nodes: parameter schema/validation, bridge state, sequence player,
joint-state odometry, teleop key table, control.launch.py plan."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
import math
from pathlib import Path
import re
from typing import Any

import pytest

from rc_sim_control.ackermann import MAPPER_MODES, BridgeState, ackermann_split
from rc_sim_control.commands import CommandSequence, SequencePlayer
from rc_sim_control.node_params import (
    CONTROL_LAUNCH_ARGUMENTS,
    JOINT_COMMAND_TOPICS,
    ParamSpec,
    bridge_config,
    bridge_specs,
    check_spec,
    control_launch_parameters,
    launch_namespace,
    mapper_config,
    mapper_specs,
    odometry_config,
    odometry_specs,
    publisher_specs,
    teleop_specs,
    validate_changes,
)
from rc_sim_control.odometry import JointStateOdometry, OdometryConfig
from rc_sim_control.teleop import (
    MOVE_BINDINGS,
    SCALE_BINDINGS,
    TeleopLimits,
    TeleopState,
    handle_idle,
    handle_key,
    help_text,
    twist_of,
)
from rc_sim_description.errors import ConfigError, VehicleParamsError
from rc_sim_description.params import VehicleParams, load_vehicle_params

PARAMS = load_vehicle_params()
L = PARAMS.geometry.wheelbase
W = PARAMS.geometry.track_width
PKG = Path(__file__).resolve().parents[1]


def defaults(specs: list[ParamSpec]) -> dict[str, Any]:
    return {s.name: s.default for s in specs}


# --------------------------------------------------------------------------- parameters
@pytest.mark.parametrize('make', [mapper_specs, bridge_specs, publisher_specs, odometry_specs,
                                  teleop_specs])
def test_specs_are_typed_described_and_defaults_valid(
        make: Callable[[VehicleParams], list[ParamSpec]]) -> None:
    specs = make(PARAMS)
    names = [s.name for s in specs]
    assert len(names) == len(set(names))
    for s in specs:
        assert s.description and isinstance(s.default, (float, bool, str))
        assert check_spec(s, s.default) is None, s.name
        if s.min_value is not None:
            assert isinstance(s.default, float) and s.max_value is not None


def test_vehicle_defaults_come_from_vehicle_yaml() -> None:
    v = defaults(mapper_specs(PARAMS))
    assert v['wheelbase'] == L and v['track_width'] == W
    assert v['max_steering_angle'] == PARAMS.steering.max_steering_angle
    assert v['max_wheel_speed'] == PARAMS.drive.max_wheel_speed
    other = PARAMS.with_values(wheelbase=0.5)
    assert defaults(bridge_specs(other))['wheelbase'] == 0.5


@pytest.mark.parametrize(('changes', 'reason'), [
    ({'mode': 'fast'}, r'mode: must be one of curvature, radius'),
    ({'wheelbase': -0.1}, r'wheelbase: must be >= 0.02'),
    ({'wheelbase': 5.0}, r'wheelbase: must be <= 2'),
    ({'max_steering_angle': 1.5707963}, r'max_steering_angle: full lock turns tighter'),
    ({'max_steering_angle': 1.6}, r'max_steering_angle: must be <= 1.5708'),
    ({'publish_rate': 1e5}, r'publish_rate: must be <= 1000'),
    ({'command_timeout': math.nan}, r'command_timeout: must not be NaN'),
    ({'publish_debug': 'yes'}, r'publish_debug: must be bool'),
    ({'use_ackermann_cmd': False}, r'use_ackermann_cmd: read-only'),
    ({'wheelbase': 1}, None),  # ints are fine for doubles here (rclpy does its own type check)
    ({'mode': 'radius', 'standstill_speed': 0.2}, None),
])
def test_mapper_parameter_changes(changes: dict[str, Any], reason: str | None) -> None:
    specs = mapper_specs(PARAMS)
    got = validate_changes(specs, defaults(specs), changes, mapper_config)
    if reason is None:
        assert got is None
    else:
        assert got is not None and '\n' not in got
        assert re.search(reason, got), got


def test_cross_parameter_rules_go_through_the_config() -> None:
    specs = odometry_specs(PARAMS)
    assert validate_changes(specs, defaults(specs), {'wheel_radius': 0.0},
                            odometry_config) == 'wheel_radius: must be >= 0.003, got 0.0'

    def build(values: Mapping[str, Any]) -> None:
        odometry_config(values)
        if values['model'] == 'bicycle' and values['steering_noise'] == 0.0:
            raise ConfigError('bicycle model needs steering_noise > 0')

    assert validate_changes(specs, defaults(specs), {'model': 'bicycle', 'steering_noise': 0.0},
                            build) == 'bicycle model needs steering_noise > 0'
    assert validate_changes(specs, defaults(specs), {'model': 'bicycle'}, build) is None
    bspecs = bridge_specs(PARAMS)
    assert validate_changes(bspecs, defaults(bspecs), {'electronic_differential': True},
                            bridge_config) is None


def test_unowned_parameters_are_ignored() -> None:
    specs = bridge_specs(PARAMS)
    assert validate_changes(specs, defaults(specs), {'use_sim_time': True}, bridge_config) is None


# --------------------------------------------------------------------------- bridge
def test_bridge_state_republishes_split_and_times_out() -> None:
    v = defaults(bridge_specs(PARAMS))
    state = BridgeState(bridge_config(v))
    assert state.commands(0.0).rear_left_wheel == 0.0  # nothing received yet
    assert state.set_steering_angle(0.3) and state.set_wheel_speed(20.0, 1.0)
    cmd = state.commands(1.2)
    left, right = ackermann_split(0.3, L, W)
    assert (cmd.front_left_steering, cmd.front_right_steering) == pytest.approx((left, right))
    assert cmd.rear_left_wheel == cmd.rear_right_wheel == 20.0
    assert not state.set_wheel_speed(math.nan, 1.3) and not state.set_steering_angle(math.inf)
    assert state.rejected_count == 2
    late = state.commands(1.0 + v['command_timeout'] + 0.01)
    assert late.rear_left_wheel == 0.0 and late.front_left_steering == pytest.approx(left)
    assert set(JOINT_COMMAND_TOPICS) == {'front_left_steering', 'front_right_steering',
                                         'rear_left_wheel', 'rear_right_wheel'}


# --------------------------------------------------------------------------- publisher
def test_sequence_player_holds_and_loops() -> None:
    seq = CommandSequence([0.0, 1.0, 2.0], [1.0, 2.0, 0.0], [0.1, 0.2, 0.0])
    once = SequencePlayer(seq)
    assert once.command(0.0) == (1.0, 0.1, False)
    assert once.command(1.5) == (2.0, 0.2, False)
    assert once.command(5.0) == (0.0, 0.0, True)
    looped = SequencePlayer(seq, loop=True)
    assert looped.cycle == pytest.approx(3.0)
    assert looped.command(3.5) == (1.0, 0.1, False)


# --------------------------------------------------------------------------- odometry
def test_joint_state_odometry_both_models() -> None:
    cfg = OdometryConfig.from_vehicle(PARAMS)
    names = ['front_left_steering_joint', 'rear_right_wheel_joint', 'rear_left_wheel_joint',
             'front_right_steering_joint']
    diff = JointStateOdometry(cfg)
    assert diff.update(0.0, names, [0.0, 0.0, 0.0, 0.0]) is None
    state = diff.update(0.1, names, [0.0, 2.0, 2.0, 0.0])
    assert state is not None and state.x == pytest.approx(2.0 * cfg.wheel_radius)
    assert diff.update(0.2, names[:2], [0.0, 1.0]) is None and diff.missing_count == 1
    bike = JointStateOdometry(cfg, 'bicycle')
    left, right = ackermann_split(0.25, L, W)
    bike.update(0.0, names, [left, 0.0, 0.0, right])
    state = bike.update(0.1, names, [left, 4.0, 4.0, right])
    assert state is not None
    assert state.yaw == pytest.approx(4.0 * cfg.wheel_radius * math.tan(0.25) / L)


# --------------------------------------------------------------------------- teleop
@pytest.mark.parametrize('mode', MAPPER_MODES)
def test_teleop_keys_map_to_car_controls(mode: str) -> None:
    lim = TeleopLimits.from_vehicle(PARAMS, mode)
    s = TeleopState(speed=1.0, turn=0.5 * lim.max_turn)
    fwd_left = twist_of(handle_key(s, 'u', lim), lim)
    back_left = twist_of(handle_key(s, 'm', lim), lim)
    assert fwd_left[0] == 1.0 and back_left[0] == -1.0
    # steer left: delta > 0 in every mode; yaw rate flips sign when reversing
    if mode == 'yaw_rate':
        assert fwd_left[1] > 0 > back_left[1]
    else:
        assert fwd_left[1] > 0 and back_left[1] > 0
    if mode == 'radius':
        assert fwd_left[1] == pytest.approx(1.0 / s.turn)
        assert twist_of(handle_key(s, 'i', lim), lim)[1] == 0.0  # R = 0: straight
    assert twist_of(handle_key(s, 'k', lim), lim) == (0.0, 0.0)
    assert twist_of(handle_key(handle_key(s, 'i', lim), '#', lim), lim)[0] == 0.0


def test_teleop_scaling_is_clamped_to_vehicle_limits() -> None:
    lim = TeleopLimits.from_vehicle(PARAMS, 'steering_angle')
    assert lim.max_turn == PARAMS.steering.max_steering_angle
    s = TeleopState(speed=1.0, turn=0.1)
    assert handle_key(s, 'w', lim).speed == pytest.approx(1.1)
    assert handle_key(s, 'c', lim).turn == pytest.approx(0.09)
    for _ in range(200):
        s = handle_key(s, 'q', lim)
    assert s.speed == PARAMS.max_speed and s.turn == PARAMS.steering.max_steering_angle
    assert set(MOVE_BINDINGS).isdisjoint(SCALE_BINDINGS)
    assert 'mode steering_angle' in help_text(s, lim)
    moving = handle_key(s, 'i', lim)
    assert handle_idle(moving, 0.1, 0.6) == moving
    assert twist_of(handle_idle(moving, 0.7, 0.6), lim) == (0.0, 0.0)


# --------------------------------------------------------------------------- launch
def test_control_launch_plan() -> None:
    plan = control_launch_parameters({'mode': 'steering_angle', 'use_sim_time': 'false'})
    assert set(plan) == {'turning_command_mapper', 'rear_wheel_speed_bridge', 'wheel_odometry'}
    assert plan['turning_command_mapper'] == {'use_sim_time': False, 'vehicle_params_file': '',
                                              'mode': 'steering_angle'}
    assert 'wheel_odometry' not in control_launch_parameters({'wheel_odometry': 'false'})


def test_control_launch_plan_in_a_car_namespace() -> None:
    plan = control_launch_parameters({'namespace': '/car_2/'})
    assert plan['wheel_odometry']['odom_frame'] == 'car_2/odom'
    assert plan['wheel_odometry']['base_frame'] == 'car_2/base_link'
    assert 'odom_frame' not in control_launch_parameters({})['wheel_odometry']
    assert launch_namespace(' /car_2 ') == 'car_2' and launch_namespace('') == ''
    for bad in ('2car', 'car-1', 'car 1'):
        with pytest.raises(ConfigError, match='not a valid ROS namespace'):
            control_launch_parameters({'namespace': bad, 'wheel_odometry': 'false'})


def test_control_launch_plan_with_override(tmp_path: Path) -> None:
    override = tmp_path / 'calib.yaml'
    override.write_text('geometry:\n  wheelbase: 0.35\n')
    plan = control_launch_parameters({'params_file': str(override)})
    assert plan['rear_wheel_speed_bridge']['vehicle_params_file'] == str(override.resolve())


@pytest.mark.parametrize(('values', 'error', 'match'), [
    ({'mode': 'turbo'}, ConfigError, r'launch argument mode: expected one of'),
    ({'use_sim_time': 'maybe'}, ConfigError, r'use_sim_time: expected true or false'),
    ({'params_file': '/nonexistent/x.yaml'}, VehicleParamsError, r'x.yaml: file not found'),
    ({'speed': '1'}, ConfigError, r"unknown launch argument 'speed'"),
])
def test_control_launch_plan_errors(values: dict[str, str], error: type[Exception],
                                    match: str) -> None:
    with pytest.raises(error, match=match):
        control_launch_parameters(values)


def test_launch_file_declares_the_documented_arguments() -> None:
    source = (PKG / 'launch' / 'control.launch.py').read_text()
    ast.parse(source)
    assert 'generate_launch_description' in source
    assert {'use_sim_time', 'params_file', 'mode'} <= set(CONTROL_LAUNCH_ARGUMENTS)


def test_no_vehicle_number_is_written_in_the_package() -> None:
    """Distinctive vehicle.yaml numbers (>= 3 significant digits, e.g. the wheelbase) must not
    appear as literals in our sources (short ones like 0.05 collide with software defaults)."""
    numbers = {repr(float(v)) for v in PARAMS.leaf_values().values()
               if isinstance(v, float) and len(f'{abs(v):.10g}'.replace('.', '').strip('0')) >= 3}
    assert repr(PARAMS.geometry.wheelbase) in numbers
    sources = list((PKG / 'rc_sim_control').rglob('*.py')) + \
        list((PKG / 'launch').glob('*.py'))
    ours = [p for p in sources if p.name not in ('trajectories.py', 'tracking.py',
                                                  'trajectory_tracker.py', 'metrics.py')]
    assert ours
    for path in ours:
        tokens = {repr(float(n.value)) for n in ast.walk(ast.parse(path.read_text()))
                  if isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
                  and not isinstance(n.value, bool)}
        assert not tokens & numbers, f'{path.name}: {tokens & numbers}'


def test_every_node_parameter_is_documented() -> None:
    doc = (PKG.parent / 'docs' / 'control.md').read_text()
    for make in (mapper_specs, bridge_specs, publisher_specs, odometry_specs, teleop_specs):
        for spec in make(PARAMS):
            assert f'`{spec.name}`' in doc, spec.name
    for name in CONTROL_LAUNCH_ARGUMENTS:
        assert f'{name}:=' in doc, name
