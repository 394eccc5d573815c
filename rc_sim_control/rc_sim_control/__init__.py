"""rc_sim_control: /cmd_vel to Ackermann steering and wheel commands, odometry, tracking."""
