"""A small wall-following controller written for the live campaign test (not part of the product).

Subscribes ``/scan`` and ``/odom``, publishes ``/cmd_vel`` (yaw-rate mode). A P law on the side
distances: with ``d_l``, ``d_r`` the median ranges 30-85 degrees left and right of the nose,
``r = k (d_l - d_r) / (d_l + d_r)`` at the speed ``v`` (steer towards the side with more room,
i.e. centre between the walls). Event-driven, as lockstep needs: one command per ``/odom``
message (the simulator's cue for each control period), computed from the newest scan stamped at
least 1.5 control periods earlier (the lidar runs at 40 Hz: the scan stamped ``floor((t - 1.5
period) / scan_period) scan_period``); when that scan has not arrived yet (it went out before the
odometry, on another topic, and may still be in flight) the answer waits for it. Which scan
answers which period is thus fixed by the stamps alone, never by arrival order, so a lockstep
run is the same every time. Commands
computed before the publisher matched the simulator wait for the match.

Parameters: ``speed`` [m/s] (0.8), ``gain`` [1/s per unit balance] (2.4), ``period`` [s] (the
simulator's control period, 0.05), ``scan_period`` [s] (0.025), ``odom_log_dir`` ('': none):
when set, every ``/odom`` it receives is appended to ``<dir>/<RCSIM_RUN_ID>.csv`` (``t, x, y,
yaw``), the test's independent record of the run.
"""

import math
import os

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from sensor_msgs.msg import LaserScan

FAR_M = 10.0


def stamp_s(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return FAR_M if n == 0 else 0.5 * (values[(n - 1) // 2] + values[n // 2])


class WallFollower(Node):
    def __init__(self) -> None:
        super().__init__('wall_follower')
        self.speed = float(self.declare_parameter('speed', 0.8).value)
        self.gain = float(self.declare_parameter('gain', 2.4).value)
        self.period = float(self.declare_parameter('period', 0.05).value)
        self.scan_period = float(self.declare_parameter('scan_period', 0.025).value)
        self.waiting: list[float] = []  # stamps of the /odom messages not answered yet
        folder = str(self.declare_parameter('odom_log_dir', '').value)
        self.log = None
        if folder:
            run_id = os.environ.get('RCSIM_RUN_ID', 'run')
            self.log = open(os.path.join(folder, f'{run_id}.csv'), 'w',  # noqa: SIM115
                            encoding='utf-8')
        self.scans: list[tuple[float, float]] = []  # (stamp, balance), oldest first
        self.pub = self.create_publisher(Twist, 'cmd_vel', 100)
        # /scan first: a scan and an odometry message ready together are taken in this order
        self.create_subscription(LaserScan, 'scan', self.on_scan, 100)
        self.create_subscription(Odometry, 'odom', self.on_odom, 100)
        self.pending: list[Twist] = []
        # a wall-clock timer: with use_sim_time a sim-time timer would wait for /clock, which
        # waits for our first command
        self.create_timer(0.005, self.flush, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def on_scan(self, msg: LaserScan) -> None:
        left, right = [], []
        for i, r in enumerate(msg.ranges):
            a = msg.angle_min + i * msg.angle_increment
            r = r if math.isfinite(r) else FAR_M
            if 0.5 < a < 1.5:
                left.append(r)
            elif -1.5 < a < -0.5:
                right.append(r)
        d_l, d_r = median(left), median(right)
        self.scans.append((stamp_s(msg), (d_l - d_r) / max(d_l + d_r, 1e-6)))
        del self.scans[:-50]
        self.answer()

    def on_odom(self, msg: Odometry) -> None:
        t = stamp_s(msg)
        if self.log is not None:
            q = msg.pose.pose.orientation
            yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
            p = msg.pose.pose.position
            self.log.write(f'{t!r},{p.x!r},{p.y!r},{yaw!r}\n')
            self.log.flush()
        self.waiting.append(t)
        self.answer()

    def answer(self) -> None:
        """Answer the waiting /odom messages, in order, whose scan is here."""
        while self.waiting:
            latest = self.waiting[0] - 1.5 * self.period + 1e-6
            balance = 0.0
            if latest >= 0.0:
                need = math.floor(latest / self.scan_period) * self.scan_period
                if not self.scans or self.scans[-1][0] < need - 1e-6:
                    return  # that scan is still in flight
                balance = [b for s, b in self.scans if s <= latest][-1]
            self.waiting.pop(0)
            cmd = Twist()
            cmd.linear.x = self.speed
            cmd.angular.z = self.speed * self.gain * balance
            self.pending.append(cmd)
        self.flush()

    def flush(self) -> None:
        if self.pending and self.pub.get_subscription_count() > 0:
            for cmd in self.pending:
                self.pub.publish(cmd)
            self.pending.clear()


def main() -> None:
    rclpy.init()
    node = WallFollower()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node.log is not None:
            node.log.close()
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
