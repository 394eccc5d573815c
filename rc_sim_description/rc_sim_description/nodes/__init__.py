"""rclpy nodes: thin shells over the ROS-free core (the only place rclpy is imported)."""

from rc_sim_description.cli_support import require_ros

require_ros()
