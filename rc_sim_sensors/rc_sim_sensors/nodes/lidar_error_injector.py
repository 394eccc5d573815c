"""lidar_error_injector: scan_raw -> scan (sensor_msgs/LaserScan) through the lidar error model.

Thin shell over :class:`rc_sim_sensors.lidar_errors.LidarErrorModel`. The starting config comes
from the ``config_file`` parameter (a lidar error YAML) or the ``preset`` parameter (default
``ideal``); every YAML key is then a declared ROS parameter whose default is that config's value,
so launch arguments / parameter files override single keys, and live ``ros2 param set`` changes are
validated by :class:`LidarErrorConfig` (rejected with its one-line reason). A change of ``seed``
restarts the random stream; ``~/reset_bias`` (std_srvs/Trigger) brings the drifting bias back to
``bias_initial``. Both topics use the sensor-data QoS (best effort, depth 5), which also matches
the reliable ros_gz_bridge publisher. The kernels are compiled (or loaded from numba's cache)
before the node subscribes, so no scan waits for a compile. Lost scans are not published. Every
scan keeps its own geometry; a scan with unusable fields (zero or NaN angle_increment,
intensities that do not match the ranges, range_min >= range_max, too many beams, ...) is dropped
with a warning naming the topic and the problem, throttled per kind of problem
(:func:`rc_sim_sensors.scan_io.corrupt_message`).
"""

from __future__ import annotations

import time
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan
from std_srvs.srv import Trigger

from rc_sim_description.errors import RcSimError
from rc_sim_description.nodes.parameters import declare_typed
from rc_sim_description.nodes.spin import run_node
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel, compile_kernels
from rc_sim_sensors.scan_io import (
    SOURCE_PARAMETERS,
    ProblemThrottle,
    base_config,
    corrupt_message,
    parameter_specs,
    updated_config,
)

#: Seconds between two warnings about the same kind of unusable input.
WARNING_PERIOD_S = 5.0


class LidarErrorInjector(Node):
    """scan_raw -> scan with injected errors (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__('lidar_error_injector')
        for name, doc in (('preset', 'Starting preset (ideal, hokuyo_ust10lx, hokuyo_utm30lx, '
                           'rplidar_a1, harsh); ignored when config_file is set.'),
                          ('config_file', 'Starting lidar error YAML (empty: use preset).')):
            declare_typed(self, name, '', doc, read_only=True)
        input_topic = declare_typed(self, 'input_topic', 'scan_raw',
                                    'Ideal LaserScan input topic.', read_only=True)
        output_topic = declare_typed(self, 'output_topic', 'scan', 'LaserScan output topic.',
                                     read_only=True)
        preset, config_file = (str(self.get_parameter(n).value) for n in SOURCE_PARAMETERS)
        base = base_config(preset, config_file)
        self._specs = parameter_specs(base)
        values = {s.name: declare_typed(self, s.name, s.default, s.description)
                  for s in self._specs}
        config = LidarErrorConfig.from_mapping(values, f'{self.get_name()} parameters')
        self._model = LidarErrorModel(config)
        self._dropped = 0
        self._throttle = ProblemThrottle(WARNING_PERIOD_S)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._warm_up()
        self._pub = self.create_publisher(LaserScan, output_topic, qos_profile_sensor_data)
        self._sub = self.create_subscription(LaserScan, input_topic, self._on_scan,
                                             qos_profile_sensor_data)
        self.create_service(Trigger, '~/reset_bias', self._on_reset_bias)
        source = config_file or f'preset {preset or "ideal"}'
        self.get_logger().info(f'lidar errors from {source} (seed {config.seed}): '
                               f'{self._sub.topic_name} -> {self._pub.topic_name}')

    def _warm_up(self) -> None:
        """Compile (or load) the model's kernels before subscribing: a compile in the first
        scan's callback would take seconds while the input queue (depth 5) overflows."""
        t0 = time.monotonic()
        compiled = compile_kernels()
        if compiled:
            self.get_logger().info(f'compiled {compiled} lidar error kernel variant(s) in '
                                   f'{time.monotonic() - t0:.1f} s (cached for later runs)')

    def _on_set_parameters(self, params: list[Any]) -> SetParametersResult:
        changes = {p.name: p.value for p in params}
        try:
            config = updated_config(self._model.config, changes)
        except RcSimError as exc:
            self.get_logger().warning(f'rejected parameter change: {exc}')
            return SetParametersResult(successful=False, reason=str(exc))
        if config.seed != self._model.config.seed:
            self._model = LidarErrorModel(config)
        else:
            self._model.set_config(config)
        return SetParametersResult(successful=True)

    def _on_reset_bias(self, request: Any, response: Any) -> Any:
        self._model.reset_bias()
        response.success = True
        response.message = f'bias reset to {self._model.config.bias_initial} m'
        return response

    def _on_scan(self, msg: LaserScan) -> None:
        result = corrupt_message(self._model, msg)
        if result is True:
            self._pub.publish(msg)
        elif isinstance(result, str):  # unusable fields: dropped, logged (throttled)
            self._dropped += 1
            held = self._throttle.report(result, time.monotonic())
            if held is not None:
                also = f', {held} more like it since the last warning' if held else ''
                self.get_logger().warning(
                    f'{self._sub.topic_name}: dropped a LaserScan ({self._dropped} dropped so '
                    f'far{also}): {result}')


def main(args: list[str] | None = None) -> int:
    """Entry point ``lidar_error_injector``; a bad config prints one line and exits 2."""
    return run_node(LidarErrorInjector, args)


if __name__ == '__main__':
    raise SystemExit(main())
