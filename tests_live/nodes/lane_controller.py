"""A small navigation-like controller written for the live tests (not part of the product).

Event-driven, as lockstep needs: one ``/cmd_vel`` (yaw-rate mode) per ``/odom`` message, computed
from that message alone, so a lockstep run is deterministic: hold the lane ``y = lane_y`` at a
speed that varies with the stamp, ``v = 0.8 + 0.3 sin(t)``, ``r = k_y (lane_y - y) - k_psi
sin(psi)`` (saturated). Commands computed before its publisher matched the simulator wait
for the match (a message published earlier would be lost).
Parameters: ``lane_y`` [m] (default 0.5).
"""

import math

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node


class LaneController(Node):
    def __init__(self) -> None:
        super().__init__('lane_controller')
        self.lane_y = float(self.declare_parameter('lane_y', 0.5).value)
        self.pub = self.create_publisher(Twist, 'cmd_vel', 100)
        self.create_subscription(Odometry, 'odom', self.on_odom, 100)
        self.pending: list[Twist] = []
        self.create_timer(0.005, self.flush)

    def flush(self) -> None:
        if self.pending and self.pub.get_subscription_count() > 0:
            for cmd in self.pending:
                self.pub.publish(cmd)
            self.pending.clear()

    def on_odom(self, msg: Odometry) -> None:
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        q = msg.pose.pose.orientation
        yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        y = msg.pose.pose.position.y
        cmd = Twist()
        cmd.linear.x = 0.8 + 0.3 * math.sin(t)
        cmd.angular.z = max(-1.5, min(1.5, 2.0 * (self.lane_y - y) - 3.0 * math.sin(yaw)))
        self.pending.append(cmd)
        self.flush()


def main() -> None:
    rclpy.init()
    node = LaneController()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
