"""Command mapping ``/cmd_vel`` -> (front steering angle, rear wheel speed) and Ackermann geometry.

Kinematic bicycle (R. Rajamani, *Vehicle Dynamics and Control*, ch. 2) with Ackermann steering,
reference point on the rear axle (base_link):

* (1) ``delta = atan(L * kappa)`` or ``delta = atan(L / R)``
* (2) ``yaw_rate = v * tan(delta) / L``
* (3) ``omega_rear = v / r``
* (4) ``delta_in = atan(L / (R - W/2))``, ``delta_out = atan(L / (R + W/2))`` (signed R, see
  :func:`ackermann_split`).

``angular.z`` of ``/cmd_vel`` means, per :data:`MAPPER_MODES`:

==================  =========================================  =================================
mode                angular_z                                  tan(delta) before saturation
==================  =========================================  =================================
``curvature``       path curvature kappa = dpsi/ds [1/m]       ``L * kappa``
``radius``          signed turn radius R [m] (+: centre left)  ``L / R`` (R = 0, +-inf: straight)
``steering_angle``  bicycle steering angle delta [rad]         ``tan(delta)``
``yaw_rate``        yaw rate psi_dot [rad/s] (ROS standard)    ``L * psi_dot / v``
==================  =========================================  =================================

Reverse (v < 0) needs no special case: kappa, R and delta describe the path, so reversing on a
left-curving path steers left; in ``yaw_rate`` mode kappa = psi_dot / v flips sign with v.
``radius`` mode reads R = 0 (the Twist default) as straight, not as a pivot the car cannot do.
In ``yaw_rate`` mode the request is undefined at |v| < ``standstill_speed``: :func:`map_twist`
outputs delta = 0 there and flags ``standstill``; :class:`CommandMapper` (and :func:`map_sequence`)
hold the last steering target instead, so the wheels do not snap straight at every stop.
Limits: |delta| <= max_steering_angle (i.e. |R| >= R_min = L / tan(delta_max)), |omega| <=
max_wheel_speed; clipped values are flagged ``saturated``. In ``yaw_rate`` mode the curvature
psi_dot / v of the request is kept when the speed saturates (the path, not the yaw rate, is kept).
Steering trim (``steering_gain``/``steering_offset``) and latency belong to the plant (engine, real
servo), not to this mapper.
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
