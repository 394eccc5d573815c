"""Command mapping ``/cmd_vel`` -> (front steering angle, rear wheel speed) and Ackermann geometry.

The equations, the ``angular.z`` modes and the limits are documented in
:mod:`rc_sim_control.cmd_vel_mapping`.

This module re-exports the public names of its parts: the mapper configuration
(:mod:`rc_sim_control.mapper_config`), the mapping itself, vectorized and streaming
(:mod:`rc_sim_control.cmd_vel_mapping`), and the Ackermann geometry and joint commands
(:mod:`rc_sim_control.ackermann_geometry`).
"""

from __future__ import annotations

from rc_sim_control.ackermann_geometry import (
    BridgeState,
    JointCommands,
    ackermann_split,
    bicycle_steering_angle,
    joint_commands,
    rear_wheel_speeds,
)
from rc_sim_control.cmd_vel_mapping import (
    CommandMapper,
    MappedCommand,
    MappedCommands,
    hold_where,
    map_sequence,
    map_twist,
    rate_limit,
)
from rc_sim_control.mapper_config import (
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_STANDSTILL_SPEED,
    MAPPER_MODES,
    MapperConfig,
    mapper_config_problem,
)

__all__ = [
    'DEFAULT_COMMAND_TIMEOUT',
    'DEFAULT_STANDSTILL_SPEED',
    'MAPPER_MODES',
    'BridgeState',
    'CommandMapper',
    'JointCommands',
    'MappedCommand',
    'MappedCommands',
    'MapperConfig',
    'ackermann_split',
    'bicycle_steering_angle',
    'hold_where',
    'joint_commands',
    'map_sequence',
    'map_twist',
    'mapper_config_problem',
    'rate_limit',
    'rear_wheel_speeds',
]
