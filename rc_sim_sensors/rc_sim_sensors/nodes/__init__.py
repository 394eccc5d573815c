"""rclpy nodes: thin shells over the ROS-free core (the only place rclpy is imported)."""
