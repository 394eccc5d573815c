"""rc_sim_sensors: lidar error model (ROS-free core) and the lidar_error_injector node."""
