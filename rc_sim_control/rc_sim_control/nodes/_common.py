"""rclpy plumbing shared by the rc_sim_control nodes (parameters from ParamSpec).

The schema and every rule live in the ROS-free :mod:`rc_sim_control.node_params`; this module only
turns :class:`ParamSpec` into declared parameters (through
:func:`rc_sim_description.nodes.parameters.declare_typed`: type from the default,
``FloatingPointRange``, description, read-only flag) and wires the set-parameters callback
(reference §7.2). The nodes' ``main`` is :func:`rc_sim_description.nodes.spin.run_node`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node

from rc_sim_control.node_params import VEHICLE_FILE_SPEC, ParamSpec, validate_changes
from rc_sim_description.errors import ConfigError
from rc_sim_description.nodes.parameters import declare_typed
from rc_sim_description.params import VehicleParams, load_vehicle_params


def declare(node: Node, specs: Sequence[ParamSpec]) -> dict[str, Any]:
    """Declare every spec not declared yet; returns name -> value (overrides applied)."""
    for spec in specs:
        declare_typed(node, spec.name, spec.default, spec.description,
                      low=spec.min_value, high=spec.max_value, read_only=spec.read_only,
                      additional_constraints=('one of: ' + ', '.join(spec.choices)
                                              if spec.choices else ''))
    return current_values(node, specs)


def current_values(node: Node, specs: Sequence[ParamSpec]) -> dict[str, Any]:
    """Current value of each spec'd parameter."""
    return {s.name: node.get_parameter(s.name).value for s in specs}


def vehicle_params(node: Node) -> VehicleParams:
    """Declare ``vehicle_params_file`` and load vehicle.yaml merged with it (defaults source)."""
    path = declare(node, [VEHICLE_FILE_SPEC])[VEHICLE_FILE_SPEC.name]
    return load_vehicle_params(overrides=[path] if path else [])


def setup_parameters(node: Node, specs: Sequence[ParamSpec],
                     build: Callable[[Mapping[str, Any]], object] | None,
                     apply: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Declare ``specs``, validate the start values, call ``apply`` and watch later changes.

    A change is validated by :func:`validate_changes` (rejected with its one-line reason) and
    applied after it is set (post-set callback on Iron/Jazzy, on-set callback on Humble).
    """
    values = declare(node, specs)
    problem = validate_changes(specs, values, values, build)
    if problem:
        raise ConfigError(f'{node.get_name()}: {problem}')
    apply(values)

    def on_set(params: list[Any]) -> SetParametersResult:
        changes = {p.name: p.value for p in params}
        reason = validate_changes(specs, current_values(node, specs), changes, build)
        if reason:
            node.get_logger().warning(f'rejected parameter change: {reason}')
            return SetParametersResult(successful=False, reason=reason)
        if not hasattr(node, 'add_post_set_parameters_callback'):  # Humble: no post-set hook
            apply({**current_values(node, specs), **changes})
        return SetParametersResult(successful=True)

    def post_set(params: list[Any]) -> None:
        apply(current_values(node, specs))

    node.add_on_set_parameters_callback(on_set)
    if hasattr(node, 'add_post_set_parameters_callback'):
        node.add_post_set_parameters_callback(post_set)
    return values


def now_seconds(node: Node) -> float:
    """Node clock (sim time with use_sim_time) in seconds."""
    return node.get_clock().now().nanoseconds * 1e-9


def retime(node: Node, timer: Any, rate_hz: float, callback: Callable[[], None]) -> Any:
    """(Re)create the node's periodic timer at ``rate_hz``; returns the timer to keep.

    Used by the live ``publish_rate`` parameter: the old timer (if any) is destroyed first.
    """
    if timer is not None:
        node.destroy_timer(timer)
    return node.create_timer(1.0 / rate_hz, callback)
