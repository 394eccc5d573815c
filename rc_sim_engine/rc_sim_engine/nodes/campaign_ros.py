"""The ROS side of a ROS 2 campaign run (:mod:`rc_sim_engine.campaign.ros_run`): what is
missing for one, where ``sim_node`` is, and the in-process recorder of ``/odom``.

Imported only when a campaign spec uses ``driver: {kind: ros_launch}``.
"""

import math
import os

from ament_index_python.packages import PackageNotFoundError, get_package_prefix
from nav_msgs.msg import Odometry
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

#: Messages kept before the recorder takes them (sim_node publishes reliable, depth 100).
QOS_DEPTH = 1000


def ros_missing():
    """Why a ROS 2 campaign run cannot start here (one line), or None."""
    try:
        get_package_prefix('rc_sim_engine')
    except PackageNotFoundError:
        return 'rc_sim_engine is not colcon-built in it'
    return None


def sim_node_executable():
    """The path of the colcon-installed sim_node (what ``ros2 run`` would start)."""
    return os.path.join(get_package_prefix('rc_sim_engine'), 'lib', 'rc_sim_engine', 'sim_node')


class OdomRecorder:
    """An rclpy node in a context of its own (the run's domain) recording ``/odom`` as rows
    ``(t [s], x, y, yaw, vx, vy, yaw_rate)``; spun by :meth:`spin` from the caller's loop."""

    def __init__(self, domain_id, folder):
        keys = ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY', 'ROS_HOME', 'ROS_LOG_DIR')
        saved = {k: os.environ.get(k) for k in keys}
        os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                          ROS_HOME=os.path.join(folder, 'ros_home'),
                          ROS_LOG_DIR=os.path.join(folder, 'log'))
        os.environ.pop('ROS_LOCALHOST_ONLY', None)
        try:
            self.context = rclpy.Context()
            rclpy.init(args=['--ros-args', '--disable-external-lib-logs'], context=self.context,
                       domain_id=domain_id,  # Ctrl-C stays the campaign's
                       signal_handler_options=SignalHandlerOptions.NO)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self.node = rclpy.create_node('rcsim_campaign_recorder', context=self.context,
                                      enable_rosout=False, start_parameter_services=False)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.rows = []
        qos = QoSProfile(depth=QOS_DEPTH, history=HistoryPolicy.KEEP_LAST,
                         reliability=ReliabilityPolicy.RELIABLE)
        self.sub = self.node.create_subscription(Odometry, 'odom', self._on_odom, qos)

    def _on_odom(self, msg):
        q = msg.pose.pose.orientation
        yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        tw = msg.twist.twist
        self.rows.append((msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9,
                          msg.pose.pose.position.x, msg.pose.pose.position.y, yaw,
                          tw.linear.x, tw.linear.y, tw.angular.z))

    @property
    def sim_time(self):
        """Stamp of the newest odometry [s] (-1 before the first)."""
        return self.rows[-1][0] if self.rows else -1.0

    def connected(self):
        """True once sim_node's /odom publisher is matched."""
        return self.sub.get_publisher_count() >= 1

    def spin(self, timeout_s=0.05):
        """Take what arrived."""
        self.executor.spin_once(timeout_sec=timeout_s)

    def close(self):
        """Destroy the node and shut its context down."""
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self.context.try_shutdown()
        self.context.destroy()  # the DDS participant (and its shared memory) goes now
