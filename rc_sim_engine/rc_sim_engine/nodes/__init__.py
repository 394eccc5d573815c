"""rclpy nodes: thin shells over the ROS-free core (the only place rclpy is imported).

Top room of the engine beside ``cli``: its modules are executables (``sim_node``) and the ROS
side of campaign runs; their logic lives in ``live`` (``sim_node``) and lower rooms. No public
names: importing it requires ROS 2.
"""

from rc_sim_description.cli_support import require_ros

__all__: list[str] = []

require_ros()
