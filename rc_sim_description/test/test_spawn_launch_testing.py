"""launch_testing integration test for the ROS 2 container workflow (skipped without ROS and gz).

Starts spawn_rc_car.launch.py headless on flat_track without lidar (no GPU needed), then checks that
the bridge delivers ground-truth /odom and /joint_states from Gazebo, and that the car stays on
the ground at its start pose. Run with `colcon test` or `launch_test <this file>`.
"""

import shutil
import time
import unittest

import pytest

for _module in ('launch_testing', 'launch', 'nav_msgs', 'sensor_msgs'):
    pytest.importorskip(_module)
rclpy = pytest.importorskip('rclpy')
if shutil.which('gz') is None:
    pytest.skip('gz (Gazebo Harmonic) not installed', allow_module_level=True)

import launch  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
import launch_testing.actions  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from rc_sim_description.paths import share_path  # noqa: E402

TIMEOUT_S = 90.0


@pytest.mark.launch_test
def generate_test_description():
    spawn = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(share_path('launch/spawn_rc_car.launch.py'))),
        launch_arguments={'world': 'flat_track', 'headless': 'true', 'lidar': 'false',
                          'rviz': 'false', 'backend': 'gz'}.items())
    return launch.LaunchDescription([spawn, launch_testing.actions.ReadyToTest()])


class TestGazeboBridge(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node('rc_sim_launch_test')

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.try_shutdown()

    def wait_for(self, msg_type, topic):
        received = []
        sub = self.node.create_subscription(msg_type, topic, received.append, 10)
        deadline = time.monotonic() + TIMEOUT_S
        while not received and time.monotonic() < deadline:
            rclpy.spin_once(self.node, timeout_sec=0.5)
        self.node.destroy_subscription(sub)
        self.assertTrue(received, f'no message on {topic} within {TIMEOUT_S} s')
        return received[-1]

    def test_ground_truth_odometry(self):
        odom = self.wait_for(Odometry, '/odom')
        self.assertEqual(odom.header.frame_id, 'odom')
        self.assertEqual(odom.child_frame_id, 'base_link')
        p = odom.pose.pose.position
        self.assertLess(abs(p.x) + abs(p.y), 0.05)  # flat_track start pose: the origin
        self.assertLess(abs(p.z - 0.05), 0.02)  # base_link at axle height (wheel radius)

    def test_joint_states(self):
        state = self.wait_for(JointState, '/joint_states')
        for name in ('front_left_steering_joint', 'front_right_steering_joint',
                     'rear_left_wheel_joint', 'rear_right_wheel_joint'):
            self.assertIn(name, state.name)

