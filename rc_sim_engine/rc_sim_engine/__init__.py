"""rc_sim_engine: the embedded fast simulator (default backend) and the rcsim CLI."""
