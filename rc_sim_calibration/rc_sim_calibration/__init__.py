"""rc_sim_calibration: fit the simulator to real-car ros2 bags (ROS-free core)."""
