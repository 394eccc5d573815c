"""Declare one statically typed ROS parameter with its description and range (all rc-sim nodes).

Reference: ros2_gz_reference.md §7.2. The parameter type is fixed by the default (declare floats
with a float default), the range fields of ``ParameterDescriptor`` are lists of at most one
``FloatingPointRange`` / ``IntegerRange`` (inclusive; ``step`` 0 means continuous), and an
override of the wrong type or out of range raises at declare time: that becomes a one-line
:class:`~rc_sim_description.errors.ConfigError` naming the node and the parameter.
"""

from __future__ import annotations

import math
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node

from rc_sim_description.errors import ConfigError

__all__ = ['declare_typed', 'descriptor']


def descriptor(default: Any, description: str, *, low: float | None = None,
               high: float | None = None, read_only: bool = False,
               additional_constraints: str = '') -> ParameterDescriptor:
    """ParameterDescriptor with a range matching the type of ``default`` (when both ends given).

    An infinite end is left out of a float range (the descriptor range needs finite numbers).
    """
    d = ParameterDescriptor(description=description, read_only=read_only,
                            additional_constraints=additional_constraints)
    if low is None or high is None or isinstance(default, bool):
        return d
    if isinstance(default, float) and math.isfinite(low) and math.isfinite(high):
        d.floating_point_range = [FloatingPointRange(from_value=float(low),
                                                     to_value=float(high), step=0.0)]
    elif isinstance(default, int):
        d.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=1)]
    return d


def declare_typed(node: Node, name: str, default: Any, description: str, *,
                  low: float | None = None, high: float | None = None,
                  read_only: bool = False, additional_constraints: str = '') -> Any:
    """Declare ``name`` (typed by ``default``) unless already declared; return its value."""
    if not node.has_parameter(name):
        try:
            node.declare_parameter(name, default, descriptor(
                default, description, low=low, high=high, read_only=read_only,
                additional_constraints=additional_constraints))
        except (InvalidParameterTypeException, InvalidParameterValueException) as exc:
            reason = ' '.join(str(exc).split())
            raise ConfigError(f'{node.get_name()}: parameter {name}: {reason}') from None
    return node.get_parameter(name).value
