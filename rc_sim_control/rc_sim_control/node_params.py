"""ROS-free parameter schema and validation of the rc_sim_control nodes.

Each node declares the :class:`ParamSpec` list returned here (type from the default, range,
description; vehicle defaults read from vehicle.yaml) and validates live changes with
:func:`validate_changes`, which merges the changes into the current values and builds the node's
config object: the first problem is returned as the one-line rejection reason.
Ranges are sanity bounds for a small car (``FloatingPointRange`` is inclusive); strict checks
(> 0, < pi/2, ...) come from the config classes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import math
from pathlib import Path
import re
from typing import Any

from rc_sim_control.ackermann import (
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_STANDSTILL_SPEED,
    MAPPER_MODES,
    MapperConfig,
)
from rc_sim_control.odometry import (
    DEFAULT_DISTANCE_NOISE,
    DEFAULT_STEERING_NOISE,
    ODOMETRY_MODELS,
    OdometryConfig,
)
from rc_sim_control.teleop import TeleopLimits
from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_description.launch_args import launch_bool
from rc_sim_description.params import VehicleParams, load_vehicle_params, param_range

__all__ = [
    'CONTROL_LAUNCH_ARGUMENTS',
    'JOINT_COMMAND_TOPICS',
    'VEHICLE_FILE_SPEC',
    'ParamSpec',
    'bridge_config',
    'bridge_specs',
    'check_spec',
    'control_launch_parameters',
    'launch_namespace',
    'mapper_config',
    'mapper_specs',
    'odometry_config',
    'odometry_specs',
    'publisher_specs',
    'teleop_specs',
    'validate_changes',
]

# docs/conventions.md: bridge outputs (relative names, remappable), in joint order
JOINT_COMMAND_TOPICS: dict[str, str] = {
    'front_left_steering': 'joint_commands/front_left_steering',
    'front_right_steering': 'joint_commands/front_right_steering',
    'rear_left_wheel': 'joint_commands/rear_left_wheel',
    'rear_right_wheel': 'joint_commands/rear_right_wheel',
}

Value = float | int | str | bool


@dataclass(frozen=True)
class ParamSpec:
    """One ROS parameter: name, typed default, description, optional inclusive range/choices."""

    name: str
    default: Value
    description: str
    min_value: float | None = None
    max_value: float | None = None
    choices: tuple[str, ...] = ()
    read_only: bool = False


def check_spec(spec: ParamSpec, value: Any) -> str | None:
    """Type, range and choice check of one value against its spec; one-line reason or None."""
    want = type(spec.default)
    if want is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f'{spec.name}: must be a number, got {value!r}'
        if math.isnan(value):
            return f'{spec.name}: must not be NaN'
    elif not isinstance(value, want):
        return f'{spec.name}: must be {want.__name__}, got {value!r}'
    if spec.min_value is not None and value < spec.min_value:
        return f'{spec.name}: must be >= {spec.min_value:g}, got {value!r}'
    if spec.max_value is not None and value > spec.max_value:
        return f'{spec.name}: must be <= {spec.max_value:g}, got {value!r}'
    if spec.choices and value not in spec.choices:
        return f'{spec.name}: must be one of {", ".join(spec.choices)}, got {value!r}'
    return None


def validate_changes(specs: Sequence[ParamSpec], current: Mapping[str, Any],
                     changes: Mapping[str, Any],
                     build: Callable[[Mapping[str, Any]], object] | None = None) -> str | None:
    """Reason to reject ``changes`` (name -> value) given ``current`` values, or None to accept.

    Checks names, read-only flags, each spec, then ``build(merged values)`` (the node's config
    constructor) for cross-parameter rules; an :class:`RcSimError` becomes the reason.
    """
    by_name = {s.name: s for s in specs}
    for name, value in changes.items():
        spec = by_name.get(name)
        if spec is None:
            continue  # parameters not owned by this schema (use_sim_time, qos overrides ...)
        if spec.read_only and value != current.get(name):
            return f'{name}: read-only (set it at launch)'
        problem = check_spec(spec, value)
        if problem:
            return problem
    if build is not None:
        merged = {**current, **changes}
        try:
            build(merged)
        except RcSimError as exc:
            return str(exc)
    return None


# --------------------------------------------------------------------------- shared pieces
VEHICLE_FILE_SPEC = ParamSpec(
    'vehicle_params_file', '', 'Partial vehicle.yaml override merged over the installed '
    'vehicle.yaml at start-up (e.g. a calibration result); empty: none.', read_only=True)


def _geometry(p: VehicleParams, *names: str) -> list[ParamSpec]:
    """Specs of vehicle keys: default from vehicle.yaml, range from its valid range."""
    g = p.geometry
    table = {
        'wheelbase': (g.wheelbase, 'L: front to rear axle [m].'),
        'track_width': (g.track_width, 'W: distance between left and right wheel centres [m].'),
        'wheel_radius': (g.wheel_radius, 'r: wheel radius [m].'),
        'max_steering_angle': (p.steering.max_steering_angle,
                               'Mechanical limit of the bicycle steering angle |delta| [rad].'),
        'max_steering_rate': (p.steering.max_steering_rate,
                              'Steering slew-rate limit |d delta/dt| [rad/s].'),
        'max_wheel_speed': (p.drive.max_wheel_speed, 'Rear wheel speed limit |omega| [rad/s].'),
    }
    specs = []
    for name in names:
        default, doc = table[name]
        valid = param_range(name)  # inclusive here; open ends are refused by the config classes
        specs.append(ParamSpec(name, default, doc, valid.lo, valid.hi))
    return specs


_RATE = (1e-2, 1000.0)


# --------------------------------------------------------------------------- mapper
def mapper_specs(p: VehicleParams, mode: str = 'yaw_rate') -> list[ParamSpec]:
    """Parameters of ``turning_command_mapper``."""
    return [
        VEHICLE_FILE_SPEC,
        ParamSpec('mode', mode, 'Meaning of cmd_vel angular.z: curvature [1/m], radius [m], '
                  'steering_angle [rad] or yaw_rate [rad/s].', choices=MAPPER_MODES),
        *_geometry(p, 'wheelbase', 'track_width', 'wheel_radius', 'max_steering_angle',
                   'max_steering_rate', 'max_wheel_speed'),
        ParamSpec('standstill_speed', DEFAULT_STANDSTILL_SPEED,
                  'yaw_rate mode: below this |v| [m/s] the steering angle is held.', 0.0, 10.0),
        ParamSpec('command_timeout', DEFAULT_COMMAND_TIMEOUT,
                  'Stop the car when no command arrives for this long [s].', 1e-3, 3600.0),
        ParamSpec('publish_rate', 50.0, 'Output rate of /steering_angle and /rear_wheel_speed '
                  '(rate limit and timeout are applied at this rate) [Hz].', *_RATE),
        ParamSpec('use_ackermann_cmd', True, 'Also accept ackermann_msgs/AckermannDriveStamped '
                  'on ackermann_cmd (steering_angle [rad], speed [m/s]).', read_only=True),
        ParamSpec('publish_debug', True, 'Publish the achieved yaw_rate and turn_radius.'),
    ]


def mapper_config(values: Mapping[str, Any]) -> MapperConfig:
    """MapperConfig from node parameter values (raises ConfigError with a one-line reason)."""
    keys = ('wheelbase', 'track_width', 'wheel_radius', 'max_steering_angle',
            'max_steering_rate', 'max_wheel_speed', 'mode', 'standstill_speed',
            'command_timeout')
    return _full_lock_checked(MapperConfig(**{k: values[k] for k in keys}))


def _full_lock_checked(config: MapperConfig) -> MapperConfig:
    """The vehicle.yaml rule: full lock turns wider than half the track."""
    if not config.min_turning_radius > 0.5 * config.track_width:
        raise ConfigError(f'max_steering_angle: full lock turns tighter (R = '
                          f'{config.min_turning_radius:.4g} m) than half the track width')
    return config


# --------------------------------------------------------------------------- bridge
def bridge_specs(p: VehicleParams) -> list[ParamSpec]:
    """Parameters of ``rear_wheel_speed_bridge``."""
    return [
        VEHICLE_FILE_SPEC,
        *_geometry(p, 'wheelbase', 'track_width', 'max_steering_angle', 'max_wheel_speed'),
        ParamSpec('publish_rate', 50.0, 'Rate at which the last command is republished to the '
                  'joint controllers [Hz].', *_RATE),
        ParamSpec('electronic_differential', False, 'Split the rear wheel speeds by the turn '
                  'radius (omega (1 -+ W tan(delta) / 2L)); false: both get omega.'),
        ParamSpec('command_timeout', DEFAULT_COMMAND_TIMEOUT, 'Command wheel speed 0 when '
                  'rear_wheel_speed is silent for this long [s].', 1e-3, 3600.0),
    ]


def bridge_config(values: Mapping[str, Any]) -> MapperConfig:
    """Geometry/limits of the bridge as a MapperConfig (rate and mode are unused there)."""
    return _full_lock_checked(MapperConfig(
        wheelbase=values['wheelbase'], track_width=values['track_width'], wheel_radius=1.0,
        max_steering_angle=values['max_steering_angle'], max_steering_rate=math.inf,
        max_wheel_speed=values['max_wheel_speed'], mode='steering_angle',
        command_timeout=values['command_timeout'],
        electronic_differential=values['electronic_differential']))


# --------------------------------------------------------------------------- publisher
def publisher_specs(p: VehicleParams) -> list[ParamSpec]:
    """Parameters of ``rear_wheel_speed_publisher`` (fixed command, sequence file or manoeuvre)."""
    return [
        VEHICLE_FILE_SPEC,
        ParamSpec('speed', 0.0, 'Fixed mode: speed v [m/s] (published as omega = v / r).',
                  -100.0, 100.0),
        ParamSpec('steering_angle', 0.0, 'Fixed mode: steering angle [rad].', -1.57, 1.57),
        ParamSpec('publish_rate', 20.0, 'Publication rate [Hz].', *_RATE),
        ParamSpec('sequence_file', '', 'Play this command-sequence YAML instead of the fixed '
                  'command (rc_sim_control.commands format).', read_only=True),
        ParamSpec('manoeuvre', '', 'Play this named manoeuvre (line, circle_left, ...) '
                  'generated from vehicle.yaml instead of the fixed command.', read_only=True),
        ParamSpec('loop', False, 'Restart the sequence when it ends (else hold its last '
                  'sample).'),
        *_geometry(p, 'wheelbase', 'track_width', 'wheel_radius', 'max_steering_angle',
                   'max_steering_rate', 'max_wheel_speed'),
    ]


# --------------------------------------------------------------------------- odometry
def odometry_specs(p: VehicleParams) -> list[ParamSpec]:
    """Parameters of ``wheel_odometry``."""
    return [
        VEHICLE_FILE_SPEC,
        ParamSpec('model', 'differential', 'differential: rear wheel encoders only; '
                  'bicycle: mean rear wheel + steering hinge angles.', choices=ODOMETRY_MODELS),
        *_geometry(p, 'wheelbase', 'track_width', 'wheel_radius'),
        ParamSpec('distance_noise', DEFAULT_DISTANCE_NOISE,
                  'k: wheel travel variance k^2 |ds| per wheel [m^0.5].', 0.0, 1.0),
        ParamSpec('steering_noise', DEFAULT_STEERING_NOISE,
                  'Std of the steering angle per step (bicycle model) [rad].', 0.0, 1.0),
        ParamSpec('odom_topic', 'wheel_odom', 'Output nav_msgs/Odometry topic.',
                  read_only=True),
        ParamSpec('odom_frame', 'odom', 'Header frame of the odometry.'),
        ParamSpec('base_frame', 'base_link', 'child_frame_id of the odometry.'),
        ParamSpec('publish_tf', False, 'Broadcast odom -> base_link (off: the ground truth '
                  'owns that transform).'),
        ParamSpec('rear_left_joint', 'rear_left_wheel_joint', 'Joint name in joint_states.'),
        ParamSpec('rear_right_joint', 'rear_right_wheel_joint', 'Joint name in joint_states.'),
        ParamSpec('front_left_steering_joint', 'front_left_steering_joint',
                  'Joint name in joint_states (bicycle model).'),
        ParamSpec('front_right_steering_joint', 'front_right_steering_joint',
                  'Joint name in joint_states (bicycle model).'),
    ]


def odometry_config(values: Mapping[str, Any]) -> OdometryConfig:
    """OdometryConfig from node parameter values."""
    return OdometryConfig(wheel_radius=values['wheel_radius'],
                          track_width=values['track_width'], wheelbase=values['wheelbase'],
                          distance_noise=values['distance_noise'],
                          steering_noise=values['steering_noise'])


# --------------------------------------------------------------------------- teleop
def teleop_specs(p: VehicleParams, mode: str = 'yaw_rate') -> list[ParamSpec]:
    """Parameters of ``teleop_keyboard`` (initial speed/turn: fractions of the limits)."""
    limits = TeleopLimits.from_vehicle(p, mode)
    speed = min(1.0, 0.5 * limits.max_speed)
    # half of the limit; in yaw_rate mode half of what full lock gives at the initial speed
    turn = 0.5 * (speed * math.tan(p.steering.max_steering_angle) / p.geometry.wheelbase
                  if mode == 'yaw_rate' else limits.max_turn)
    return [
        VEHICLE_FILE_SPEC,
        ParamSpec('mode', mode, 'Mapper mode the turn value is sent in.', choices=MAPPER_MODES,
                  read_only=True),
        ParamSpec('speed', speed, 'Initial speed [m/s].', 0.0, 100.0),
        ParamSpec('turn', turn, 'Initial turn (unit of the mode).', 0.0, 1e3),
        ParamSpec('repeat_rate', 10.0, 'Republish the current command at this rate [Hz].',
                  *_RATE),
        ParamSpec('key_timeout', 0.6, 'Stop when no key arrives for this long [s] (dead man).',
                  0.05, 60.0),
    ]


# --------------------------------------------------------------------------- control.launch.py
CONTROL_LAUNCH_ARGUMENTS: dict[str, tuple[str, str]] = {
    'use_sim_time': ('true', 'Nodes follow the simulation /clock.'),
    'params_file': ('', 'Partial vehicle.yaml override (e.g. a calibration result); '
                    'empty: the installed vehicle.yaml.'),
    'mode': ('yaw_rate', 'Meaning of cmd_vel angular.z: ' + ', '.join(MAPPER_MODES) + '.'),
    'wheel_odometry': ('true', 'Start wheel_odometry (publishes /wheel_odom).'),
    'namespace': ('', 'Namespace of the nodes (a car among several: car_<i>); the odometry '
                  'frames then carry its prefix (car_<i>/odom, car_<i>/base_link).'),
}
_NAMESPACE = re.compile(r'[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*')


def launch_namespace(value: str) -> str:
    """A launch ``namespace`` argument without its slashes ('' for none); one-line error unless
    it is a valid ROS name (letters, digits, underscores; not starting with a digit)."""
    ns = value.strip().strip('/')
    if ns and not _NAMESPACE.fullmatch(ns):
        raise ConfigError(f'launch argument namespace: {value!r} is not a valid ROS namespace '
                          '(letters, digits and underscores, not starting with a digit)')
    return ns


def control_launch_parameters(values: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Node name -> ROS parameters for ``control.launch.py`` (validated, one-line errors).

    The vehicle override is loaded once here, so a bad file stops the launch before any node
    starts; the nodes receive its absolute path as ``vehicle_params_file``.
    """
    unknown = sorted(set(values) - set(CONTROL_LAUNCH_ARGUMENTS))
    if unknown:
        raise ConfigError(f'unknown launch argument {unknown[0]!r} '
                          f'(known: {", ".join(CONTROL_LAUNCH_ARGUMENTS)})')
    v = {k: values.get(k, default) for k, (default, _) in CONTROL_LAUNCH_ARGUMENTS.items()}
    use_sim_time = launch_bool('use_sim_time', v['use_sim_time'])
    mode = v['mode'].strip()
    if mode not in MAPPER_MODES:
        raise ConfigError(f'launch argument mode: expected one of {", ".join(MAPPER_MODES)}, '
                          f'got {mode!r}')
    params_file = ''
    if v['params_file'].strip():
        params_file = str(Path(v['params_file'].strip()).expanduser().resolve())
    load_vehicle_params(overrides=[params_file] if params_file else [])
    common: dict[str, Any] = {'use_sim_time': use_sim_time, 'vehicle_params_file': params_file}
    nodes = {'turning_command_mapper': {**common, 'mode': mode},
             'rear_wheel_speed_bridge': dict(common)}
    ns = launch_namespace(v['namespace'])
    if launch_bool('wheel_odometry', v['wheel_odometry']):
        frames = {'odom_frame': f'{ns}/odom', 'base_frame': f'{ns}/base_link'} if ns else {}
        nodes['wheel_odometry'] = {**common, **frames}
    return nodes
