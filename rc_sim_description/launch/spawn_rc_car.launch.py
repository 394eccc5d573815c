"""Spawn the rc_car in Gazebo Harmonic (backend:=gz) or in the embedded engine (backend:=embedded).

    ros2 launch rc_sim_description spawn_rc_car.launch.py world:=figure_eight rviz:=true
    ros2 launch rc_sim_description spawn_rc_car.launch.py backend:=embedded lidar_errors:=harsh

The arguments, their defaults and every decision (world path, start pose, which nodes run) live in
the ROS-free module ``rc_sim_description.launch_args`` (unit-tested without ROS); this file only
turns its LaunchPlan into launch actions. Bad arguments stop the launch with one line and a
non-zero exit status.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, LogInfo, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import Command, LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from rc_sim_description.launch_args import (
    LAUNCH_ARGUMENTS,
    MODEL_NAME,
    argument,
    bridge_config,
    plan_launch,
    rviz_config,
)
from rc_sim_description.paths import share_path


def _include(package, launch_file, arguments):
    path = os.path.join(get_package_share_directory(package), 'launch', launch_file)
    return IncludeLaunchDescription(PythonLaunchDescriptionSource(path),
                                    launch_arguments=list(arguments.items()))


def _setup(context, *args, **kwargs):
    values = {a.name: LaunchConfiguration(a.name).perform(context) for a in LAUNCH_ARGUMENTS}
    # A bad argument raises RcSimError here, before any process starts: launch logs it as one
    # line ("Caught exception in launch ...: <message>") and `ros2 launch` exits non-zero.
    plan = plan_launch(values)
    sim_time = {'use_sim_time': plan.use_sim_time}
    robot_description = ParameterValue(
        Command(plan.xacro_command(share_path('urdf/rc_car.urdf.xacro')), on_stderr='warn'),
        value_type=str)
    built = {
        'robot_state_publisher': lambda: Node(
            package='robot_state_publisher', executable='robot_state_publisher', output='screen',
            parameters=[{'robot_description': robot_description, **sim_time}]),
        'gz_sim': lambda: _include('ros_gz_sim', 'gz_sim.launch.py',
                                   {'gz_args': plan.gz_args, 'on_exit_shutdown': 'true'}),
        'create': lambda: Node(
            package='ros_gz_sim', executable='create', output='screen',
            arguments=plan.create_arguments()),
        'bridge': lambda: Node(
            package='ros_gz_bridge', executable='parameter_bridge', output='screen',
            parameters=[{'config_file': str(bridge_config()), **sim_time}]),
        'sim_node': lambda: Node(
            package='rc_sim_engine', executable='sim_node', output='screen',
            parameters=[plan.sim_node_parameters()]),
        'control': lambda: _include('rc_sim_control', 'control.launch.py', {
            'use_sim_time': str(plan.use_sim_time).lower(), 'params_file': plan.params_file}),
        'lidar_error_injector': lambda: Node(
            package='rc_sim_sensors', executable='lidar_error_injector', output='screen',
            parameters=[{**plan.lidar_error_params, **sim_time}]),
        'rviz': lambda: Node(
            package='rviz2', executable='rviz2', output='screen',
            arguments=['-d', str(rviz_config())], parameters=[sim_time]),
    }
    summary = (f'rc_sim: backend {plan.backend}, world {plan.world}, {MODEL_NAME} at '
               f'x={plan.x:g} y={plan.y:g} yaw={plan.yaw:g}'
               + (f', {plan.num_cars} cars under car_<i>/' if plan.num_cars > 1 else ''))
    return [LogInfo(msg=summary)] + [built[name]() for name in plan.actions]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('world', **argument('world')),
        DeclareLaunchArgument('x', **argument('x')),
        DeclareLaunchArgument('y', **argument('y')),
        DeclareLaunchArgument('yaw', **argument('yaw')),
        DeclareLaunchArgument('headless', **argument('headless')),
        DeclareLaunchArgument('use_sim_time', **argument('use_sim_time')),
        DeclareLaunchArgument('lidar', **argument('lidar')),
        DeclareLaunchArgument('rviz', **argument('rviz')),
        DeclareLaunchArgument('params_file', **argument('params_file')),
        DeclareLaunchArgument('lidar_errors', **argument('lidar_errors')),
        DeclareLaunchArgument('backend', **argument('backend')),
        DeclareLaunchArgument('num_cars', **argument('num_cars')),
        OpaqueFunction(function=_setup),
    ])
