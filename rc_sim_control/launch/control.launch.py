"""Command chain of the rc_car: turning_command_mapper, rear_wheel_speed_bridge, wheel_odometry.

Included by rc_sim_description's spawn_rc_car.launch.py; also usable alone:
``ros2 launch rc_sim_control control.launch.py mode:=steering_angle params_file:=calib.yaml``;
``namespace:=car_1`` runs the chain of one car among several.
Arguments and validation live in ``rc_sim_control.node_params`` (CONTROL_LAUNCH_ARGUMENTS,
control_launch_parameters): a bad mode or override file stops the launch with one line.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from rc_sim_control.node_params import (
    CONTROL_LAUNCH_ARGUMENTS,
    control_launch_parameters,
    launch_namespace,
)


def _nodes(context, *args, **kwargs):
    values = {name: LaunchConfiguration(name).perform(context)
              for name in CONTROL_LAUNCH_ARGUMENTS}
    plan = control_launch_parameters(values)
    namespace = launch_namespace(values['namespace']) or None
    return [Node(package='rc_sim_control', executable=name, name=name, output='screen',
                 namespace=namespace, parameters=[params])
            for name, params in plan.items()]


def generate_launch_description():
    return LaunchDescription([
        *[DeclareLaunchArgument(name, default_value=default, description=description)
          for name, (default, description) in CONTROL_LAUNCH_ARGUMENTS.items()],
        OpaqueFunction(function=_nodes),
    ])
