"""turning_command_mapper: /cmd_vel (and ackermann_cmd) -> /steering_angle, /rear_wheel_speed.

Thin shell over :class:`rc_sim_control.ackermann.CommandMapper` (the four mapper modes). Subscribes
``cmd_vel`` (geometry_msgs/Twist, angular.z read per parameter ``mode``) and, optionally,
``ackermann_cmd`` (ackermann_msgs/AckermannDriveStamped: drive.speed [m/s], drive.steering_angle
[rad]). Publishes ``steering_angle`` and ``rear_wheel_speed`` (std_msgs/Float64) on every accepted
command and at ``publish_rate`` while commands keep coming (steering-rate limit); after
``command_timeout`` s without input it publishes the stop command once and falls silent.
Debug: ``yaw_rate`` and ``turn_radius`` (achieved, after saturation). NaN/inf commands are
dropped (nothing published; a throttled warning names the topic, the field and the count:
:mod:`rc_sim_control.node_checks`).
"""

from __future__ import annotations

import time
from typing import Any

from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import Twist
from rclpy.node import Node
from std_msgs.msg import Float64

from rc_sim_control.ackermann import CommandMapper, MappedCommand
from rc_sim_control.node_checks import DropCounter, twist_problem
from rc_sim_control.node_params import mapper_config, mapper_specs
from rc_sim_control.nodes._common import now_seconds, retime, setup_parameters, vehicle_params
from rc_sim_description.nodes.spin import run_node

QOS_DEPTH = 10  # reliable, volatile (ros_gz_bridge and the engine subscribe reliably)


class TurningCommandMapper(Node):
    """cmd_vel -> steering angle and rear wheel speed (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__('turning_command_mapper')
        vehicle = vehicle_params(self)
        self._specs = mapper_specs(vehicle)
        self._mapper: CommandMapper | None = None
        self._timer: Any = None
        self._rate = 0.0
        self._debug = True
        self._was_active = False
        self._drops = DropCounter()
        self._pub_steer = self.create_publisher(Float64, 'steering_angle', QOS_DEPTH)
        self._pub_speed = self.create_publisher(Float64, 'rear_wheel_speed', QOS_DEPTH)
        self._pub_yaw = self.create_publisher(Float64, 'yaw_rate', QOS_DEPTH)
        self._pub_radius = self.create_publisher(Float64, 'turn_radius', QOS_DEPTH)
        values = setup_parameters(self, self._specs, mapper_config, self._apply)
        self.create_subscription(Twist, 'cmd_vel', self._on_twist, QOS_DEPTH)
        if values['use_ackermann_cmd']:
            self.create_subscription(AckermannDriveStamped, 'ackermann_cmd', self._on_ackermann,
                                     QOS_DEPTH)
        self.get_logger().info(f'mode {values["mode"]}: cmd_vel angular.z -> steering_angle, '
                               f'rear_wheel_speed (vehicle: {vehicle.source})')

    def _apply(self, values: dict[str, Any]) -> None:
        config = mapper_config(values)
        if self._mapper is None:
            self._mapper = CommandMapper(config)
        else:
            self._mapper.reconfigure(config)
        self._debug = bool(values['publish_debug'])
        rate = float(values['publish_rate'])
        if rate != self._rate:
            self._timer = retime(self, self._timer, rate, self._on_timer)
            self._rate = rate

    def _accept(self, topic: str, reason: str | None, v: float, z: float,
                mode: str | None = None) -> None:
        assert self._mapper is not None
        out = None if reason else self._mapper.update(v, z, now_seconds(self), mode=mode)
        if out is None:
            line = self._drops.report(topic, reason or 'clock not finite', time.monotonic())
            if line:  # throttled per topic (a flood on one input hides nothing on the other)
                self.get_logger().warning(line)
            return
        self._was_active = True
        self._publish(out)

    def _on_twist(self, msg: Twist) -> None:
        assert self._mapper is not None
        v, z = msg.linear.x, msg.angular.z
        self._accept('cmd_vel', twist_problem(v, z, self._mapper.config.mode), v, z)

    def _on_ackermann(self, msg: AckermannDriveStamped) -> None:
        v, z = float(msg.drive.speed), float(msg.drive.steering_angle)
        reason = twist_problem(v, z, 'steering_angle', ('drive.speed', 'drive.steering_angle'))
        self._accept('ackermann_cmd', reason, v, z, mode='steering_angle')

    def _on_timer(self) -> None:
        assert self._mapper is not None
        t = now_seconds(self)
        if self._mapper.timed_out(t):
            if self._was_active:  # publish the stop once, then leave the topics to others
                self._publish(self._mapper.step(t))
                self._was_active = False
                self.get_logger().info('command timeout: stop')
            return
        self._publish(self._mapper.step(t))

    def _publish(self, out: MappedCommand) -> None:
        self._pub_steer.publish(Float64(data=float(out.steering_angle)))
        self._pub_speed.publish(Float64(data=float(out.wheel_speed)))
        if self._debug:
            self._pub_yaw.publish(Float64(data=float(out.yaw_rate)))
            self._pub_radius.publish(Float64(data=float(out.turn_radius)))


def main(args: list[str] | None = None) -> int:
    """Entry point (ros2 run rc_sim_control turning_command_mapper)."""
    return run_node(TurningCommandMapper, args)


if __name__ == '__main__':
    raise SystemExit(main())
