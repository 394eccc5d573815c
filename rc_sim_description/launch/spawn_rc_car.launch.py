"""Spawn the rc_car in Gazebo Harmonic (backend:=gz) or in the embedded engine (backend:=embedded).

    ros2 launch rc_sim_description spawn_rc_car.launch.py world:=figure_eight rviz:=true
    ros2 launch rc_sim_description spawn_rc_car.launch.py backend:=embedded lidar_errors:=harsh
    ros2 launch rc_sim_description spawn_rc_car.launch.py num_cars:=3

Several cars in Gazebo: one gz server and /clock bridge, then per car (namespace car_<i>) a
robot_state_publisher with frame_prefix car_<i>/, ``create -name rc_car_<i>``, a bridge whose
config (bridge_entries: gz and ROS topics under /car_<i>/, /tf shared) is written to a temporary
file, the control chain and the lidar error injector. Several cars in the embedded engine: one
sim_node for all of them (it applies the lidar errors itself), and per car the same
robot_state_publisher and control chain, so /car_<i>/cmd_vel drives car i.

The arguments, their defaults and every decision (world path, start pose, which nodes run) live in
the ROS-free module ``rc_sim_description.launch_args`` (unit-tested without ROS); this file only
turns its LaunchPlan into launch actions. Bad arguments stop the launch with one line and a
non-zero exit status.
"""

import os
import shutil
import tempfile

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    IncludeLaunchDescription,
    LogInfo,
    OpaqueFunction,
    RegisterEventHandler,
)
from launch.event_handlers import OnShutdown
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import Command, LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
import yaml

from rc_sim_description.launch_args import (
    LAUNCH_ARGUMENTS,
    MODEL_NAME,
    PER_CAR_ACTIONS,
    argument,
    bridge_config,
    bridge_entries,
    plan_launch,
    rviz_config,
)
from rc_sim_description.paths import share_path


def _include(package, launch_file, arguments):
    path = os.path.join(get_package_share_directory(package), 'launch', launch_file)
    return IncludeLaunchDescription(PythonLaunchDescriptionSource(path),
                                    launch_arguments=list(arguments.items()))


def _bridge_file(entries, name, folders):
    """A parameter_bridge config_file with ``entries`` (one per car, written at launch) in a new
    temporary folder, appended to ``folders`` (removed when the launch shuts down)."""
    folder = tempfile.mkdtemp(prefix='rc_sim_bridge_')
    folders.append(folder)
    path = os.path.join(folder, f'{name}.yaml')
    with open(path, 'w', encoding='utf-8') as f:
        yaml.safe_dump(entries, f, sort_keys=False)
    return path


def _remove(folders):
    """OnShutdown action: delete the bridge config folders (the bridges read them at start)."""
    def remove(event, context):
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    return remove


def _setup(context, *args, **kwargs):
    values = {a.name: LaunchConfiguration(a.name).perform(context) for a in LAUNCH_ARGUMENTS}
    # A bad argument raises RcSimError here, before any process starts: launch logs it as one
    # line ("Caught exception in launch ...: <message>") and `ros2 launch` exits non-zero.
    plan = plan_launch(values)
    sim_time = {'use_sim_time': plan.use_sim_time}
    several = len(plan.namespaces) > 1
    cars = plan.cars()
    xacro_file = share_path('urdf/rc_car.urdf.xacro')
    folders = []  # temporary bridge configs of several gz cars

    def ns(car):
        return car.namespace or None  # Node(namespace=None): the launch's own namespace

    def description(car):
        return ParameterValue(Command(plan.xacro_command(xacro_file, car.namespace),
                                      on_stderr='warn'), value_type=str)

    def bridge(car):
        config = str(bridge_config()) if not several else \
            _bridge_file(bridge_entries(car.namespace, clock=False), car.model_name, folders)
        return Node(package='ros_gz_bridge', executable='parameter_bridge', output='screen',
                    name=f'{car.model_name}_bridge' if several else None,
                    parameters=[{'config_file': config, **sim_time}])

    per_car = {
        'robot_state_publisher': lambda car: Node(
            package='robot_state_publisher', executable='robot_state_publisher', output='screen',
            namespace=ns(car), parameters=[{'robot_description': description(car),
                                            'frame_prefix': car.frame_prefix, **sim_time}]),
        'create': lambda car: Node(
            package='ros_gz_sim', executable='create', output='screen',
            arguments=plan.create_arguments(car)),
        'bridge': bridge,
        'control': lambda car: _include('rc_sim_control', 'control.launch.py', {
            'use_sim_time': str(plan.use_sim_time).lower(), 'params_file': plan.params_file,
            'namespace': car.namespace}),
        'lidar_error_injector': lambda car: Node(
            package='rc_sim_sensors', executable='lidar_error_injector', output='screen',
            namespace=ns(car), parameters=[plan.lidar_error_node_parameters(car)]),
    }
    once = {
        'gz_sim': lambda: _include('ros_gz_sim', 'gz_sim.launch.py',
                                   {'gz_args': plan.gz_args, 'on_exit_shutdown': 'true'}),
        'clock_bridge': lambda: Node(
            package='ros_gz_bridge', executable='parameter_bridge', output='screen',
            name='clock_bridge', parameters=[{
                'config_file': _bridge_file([e for e in bridge_entries(clock=True)
                                             if e['ros_topic_name'] == '/clock'], 'clock',
                                            folders),
                **sim_time}]),
        'sim_node': lambda: Node(
            package='rc_sim_engine', executable='sim_node', output='screen',
            parameters=[plan.sim_node_parameters()]),
        'rviz': lambda: Node(
            package='rviz2', executable='rviz2', output='screen',
            arguments=['-d', str(rviz_config())], parameters=[sim_time]),
    }
    summary = (f'rc_sim: backend {plan.backend}, world {plan.world}, {MODEL_NAME} at '
               f'x={plan.x:g} y={plan.y:g} yaw={plan.yaw:g}'
               + (f', {plan.num_cars} cars under car_<i>/' if plan.num_cars > 1 else ''))
    actions = [LogInfo(msg=summary)]
    for name in plan.actions:
        if name in PER_CAR_ACTIONS:
            actions += [per_car[name](car) for car in cars]
        else:
            actions.append(once[name]())
    if folders:
        actions.append(RegisterEventHandler(OnShutdown(on_shutdown=_remove(folders))))
    return actions


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
