"""rclpy plumbing shared by the rc_sim_control nodes (parameters from ParamSpec, main loop).

The schema and every rule live in the ROS-free :mod:`rc_sim_control.node_params`; this module only
turns :class:`ParamSpec` into declared parameters (type from the default, ``FloatingPointRange``,
description, read-only flag) and wires the set-parameters callback (reference §7.2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import sys
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, SetParametersResult
import rclpy
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from rc_sim_control.node_params import VEHICLE_FILE_SPEC, ParamSpec, validate_changes
from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_description.params import VehicleParams, load_vehicle_params


def descriptor(spec: ParamSpec) -> ParameterDescriptor:
    """ParameterDescriptor of a spec (range: a list of at most one element; step 0: continuous)."""
    d = ParameterDescriptor(description=spec.description, read_only=spec.read_only)
    if isinstance(spec.default, float) and spec.min_value is not None and \
            spec.max_value is not None:
        d.floating_point_range = [FloatingPointRange(
            from_value=float(spec.min_value), to_value=float(spec.max_value), step=0.0)]
    if spec.choices:
        d.additional_constraints = 'one of: ' + ', '.join(spec.choices)
    return d


def _one_line(exc: Exception) -> str:
    return ' '.join(str(exc).split())


def declare(node: Node, specs: Sequence[ParamSpec]) -> dict[str, Any]:
    """Declare every spec not declared yet; returns name -> value (overrides applied)."""
    for spec in specs:
        if node.has_parameter(spec.name):
            continue
        try:
            node.declare_parameter(spec.name, spec.default, descriptor(spec))
        except (InvalidParameterTypeException, InvalidParameterValueException) as exc:
            raise ConfigError(f'{node.get_name()}: parameter {spec.name}: '
                              f'{_one_line(exc)}') from None
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


def run(node_factory: Callable[[], Node], args: list[str] | None = None) -> int:
    """Init, build, spin, shut down; user errors print ``error: <one line>`` and return 2."""
    rclpy.init(args=args)
    node = None
    try:
        node = node_factory()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RcSimError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
