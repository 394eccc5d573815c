"""rear_wheel_speed_bridge: /steering_angle, /rear_wheel_speed -> the four joint commands.

Thin shell over :class:`rc_sim_control.ackermann.BridgeState` (Ackermann split): listens to
``steering_angle`` [rad] and ``rear_wheel_speed`` [rad/s] (std_msgs/Float64) and republishes, at
``publish_rate``, the Ackermann hinge angles on ``joint_commands/front_{left,right}_steering`` and
the rear wheel speeds on ``joint_commands/rear_{left,right}_wheel`` (std_msgs/Float64, mapped to
the gz JointPositionController / JointController by config/bridge.yaml). The wheel speed falls to
0 after ``command_timeout`` s without ``rear_wheel_speed``; non-finite inputs are dropped with a
throttled warning naming the topic and the count (:mod:`rc_sim_control.node_checks`). A throttle
or acceleration car (``drive.drive_model``) gets the speed of its drive model, integrated here
from the target wheel speed (:mod:`rc_sim_control.drive_twin`); a normalised-servo car's angle
stays within its map's ends.
"""

from __future__ import annotations

import time
from typing import Any

from rclpy.node import Node
from std_msgs.msg import Float64

from rc_sim_control.ackermann import BridgeState
from rc_sim_control.drive_twin import drive_twin_of
from rc_sim_control.node_checks import DropCounter, finite_problem
from rc_sim_control.node_params import JOINT_COMMAND_TOPICS, bridge_config, bridge_specs
from rc_sim_control.nodes._common import now_seconds, retime, setup_parameters, vehicle_params
from rc_sim_description.nodes.spin import run_node

QOS_DEPTH = 10  # reliable: the ros_gz_bridge subscription is reliable (reference §3.3)


class RearWheelSpeedBridge(Node):
    """Steering angle and wheel speed -> per-joint commands at a fixed rate."""

    def __init__(self) -> None:
        super().__init__('rear_wheel_speed_bridge')
        vehicle = vehicle_params(self)
        self._vehicle = vehicle
        self._specs = bridge_specs(vehicle)
        self._state: BridgeState | None = None
        self._timer: Any = None
        self._rate = 0.0
        self._drops = DropCounter()
        self._pubs = {name: self.create_publisher(Float64, topic, QOS_DEPTH)
                      for name, topic in JOINT_COMMAND_TOPICS.items()}
        setup_parameters(self, self._specs, bridge_config, self._apply)
        self.create_subscription(Float64, 'steering_angle', self._on_steering, QOS_DEPTH)
        self.create_subscription(Float64, 'rear_wheel_speed', self._on_speed, QOS_DEPTH)

    def _apply(self, values: dict[str, Any]) -> None:
        config = bridge_config(values)
        if self._state is None:
            self._state = BridgeState(config, **drive_twin_of(self._vehicle))
        else:
            self._state.config = config  # held commands and timing are kept
        rate = float(values['publish_rate'])
        if rate != self._rate:
            self._timer = retime(self, self._timer, rate, self._on_timer)
            self._rate = rate

    def _rejected(self, topic: str, value: float) -> None:
        reason = finite_problem(data=value) or 'clock not finite'
        line = self._drops.report(topic, reason, time.monotonic())
        if line:  # throttled per topic
            self.get_logger().warning(line)

    def _on_steering(self, msg: Float64) -> None:
        assert self._state is not None
        if not self._state.set_steering_angle(msg.data):
            self._rejected('steering_angle', msg.data)

    def _on_speed(self, msg: Float64) -> None:
        assert self._state is not None
        if not self._state.set_wheel_speed(msg.data, now_seconds(self)):
            self._rejected('rear_wheel_speed', msg.data)

    def _on_timer(self) -> None:
        assert self._state is not None
        cmd = self._state.commands(now_seconds(self))
        for name, pub in self._pubs.items():
            pub.publish(Float64(data=float(getattr(cmd, name))))


def main(args: list[str] | None = None) -> int:
    """Entry point (ros2 run rc_sim_control rear_wheel_speed_bridge)."""
    return run_node(RearWheelSpeedBridge, args)


if __name__ == '__main__':
    raise SystemExit(main())
