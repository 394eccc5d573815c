"""lidar_error_injector node and launch file in the test process (the node class directly)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / 'rc_sim_sensors'


def test_node_corrupts_a_scan_and_rejects_bad_parameters():
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import LaserScan

    from rc_sim_sensors.nodes.lidar_error_injector import LidarErrorInjector

    rclpy.init()
    try:
        node = LidarErrorInjector()
        published = []
        node._pub.publish = published.append  # capture without a subscriber
        result = node.set_parameters([Parameter('dropout_probability', value=2.0)])
        assert not result[0].successful and 'dropout_probability' in result[0].reason
        result = node.set_parameters([Parameter('dropout_probability', value=1.0)])
        assert result[0].successful
        msg = LaserScan()
        msg.angle_min, msg.angle_increment = -1.0, 0.5
        msg.range_min, msg.range_max = 0.05, 20.0
        msg.ranges = [1.0, 2.0, 3.0, 4.0, 5.0]
        node._on_scan(msg)
        assert len(published) == 1
        assert all(r == float('inf') for r in published[0].ranges)
        node.destroy_node()
    finally:
        rclpy.try_shutdown()


def test_launch_file_builds_a_description():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        'lidar_launch', PACKAGE / 'launch' / 'lidar_error_injector.launch.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    names = {getattr(e, 'name', None) for e in description.entities}
    assert {'preset', 'config_file', 'noise_stddev', 'seed', 'range_max'} <= names
