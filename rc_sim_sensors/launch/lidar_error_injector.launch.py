"""Start lidar_error_injector: scan_raw -> scan with injectable, reproducible lidar errors.

    ros2 launch rc_sim_sensors lidar_error_injector.launch.py preset:=hokuyo_ust10lx
    ros2 launch rc_sim_sensors lidar_error_injector.launch.py config_file:=/path/errors.yaml \\
        noise_stddev:=0.02 seed:=7

Every key of the lidar error YAML (docs/lidar_errors.md) is also a launch argument; an empty value
(the default) keeps the preset's / file's value. Values are typed and range-checked by
rc_sim_sensors.scan_io.launch_parameters before the node starts; a bad value or a misspelt
argument name stops the launch with one line (exit 1).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch_ros.actions import Node

from rc_sim_description.errors import ConfigError
from rc_sim_sensors.lidar_config import config_fields
from rc_sim_sensors.scan_io import LAUNCH_ARGUMENTS, launch_parameters, misspelt_launch_argument


def _node(context, *args, **kwargs):
    names = list(LAUNCH_ARGUMENTS) + [f.name for f in config_fields()]
    typo = misspelt_launch_argument(context.argv, names)
    if typo is not None:
        raise ConfigError(typo)
    values = {name: context.launch_configurations.get(name, '') for name in names}
    return [Node(package='rc_sim_sensors', executable='lidar_error_injector',
                 name='lidar_error_injector', output='screen',
                 parameters=[launch_parameters(values)])]


def generate_launch_description():
    arguments = [DeclareLaunchArgument(name, default_value=default, description=doc)
                 for name, (default, doc) in LAUNCH_ARGUMENTS.items()]
    arguments += [DeclareLaunchArgument(
        f.name, default_value='',
        description=f'[{f.metadata["unit"]}] {f.metadata["doc"]} (empty: keep the preset value)')
        for f in config_fields()]
    return LaunchDescription([*arguments, OpaqueFunction(function=_node)])
