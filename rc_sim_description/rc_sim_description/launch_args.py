"""ROS-free decision logic of ``launch/spawn_rc_car.launch.py`` (unit-tested without ROS).

The launch file only declares :data:`LAUNCH_ARGUMENTS`, reads their values and turns the
:class:`LaunchPlan` returned by :func:`plan_launch` into launch actions. Everything that can be
wrong in a user's arguments (unknown world, bad number, bad boolean, invalid vehicle override) is
reported here as a one-line :class:`~rc_sim_description.errors.ConfigError` /
:class:`~rc_sim_description.errors.VehicleParamsError` before any process starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from pathlib import Path
import shlex
from typing import Any

from rc_sim_description.errors import ConfigError
from rc_sim_description.footprint import grid_starts
from rc_sim_description.frames import car_namespaces, frame_prefix
from rc_sim_description.limits import MAX_CARS
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.paths import share_path, world_path
from rc_sim_description.worlds import spawn_pose

__all__ = ['BACKENDS', 'LAUNCH_ARGUMENTS', 'MODEL_NAME', 'PER_CAR_ACTIONS', 'CarSpawn',
           'LaunchArgument', 'LaunchPlan', 'argument', 'bridge_config', 'bridge_entries',
           'launch_bool', 'lidar_error_parameters', 'plan_launch', 'rviz_config']

MODEL_NAME = 'rc_car'
BACKENDS = ('gz', 'embedded')
#: actions the launch file starts once per car (``LaunchPlan.cars``); the others once
PER_CAR_ACTIONS = ('robot_state_publisher', 'create', 'bridge', 'control', 'lidar_error_injector')


@dataclass(frozen=True)
class LaunchArgument:
    """A launch argument: name, default (string, as launch wants) and description."""

    name: str
    default: str
    description: str


LAUNCH_ARGUMENTS: tuple[LaunchArgument, ...] = (
    LaunchArgument('world', 'basic_track',
                   'World name (basic_track, flat_track, figure_eight) or path to an SDF file.'),
    LaunchArgument('x', '', 'Spawn x of base_link in the world frame [m]; empty: the start '
                   'pose documented in the world file.'),
    LaunchArgument('y', '', 'Spawn y of base_link in the world frame [m]; empty: world start '
                   'pose.'),
    LaunchArgument('yaw', '', 'Spawn yaw [rad], counter-clockwise from x; empty: world start '
                   'pose.'),
    LaunchArgument('headless', 'false', 'true: gz server only, no GUI (headless EGL rendering '
                   'for the lidar).'),
    LaunchArgument('use_sim_time', 'true', 'Nodes follow the simulation /clock.'),
    LaunchArgument('lidar', 'true', 'Add the 2D lidar (scan_raw -> lidar_error_injector -> '
                   'scan).'),
    LaunchArgument('rviz', 'false', 'Start RViz with rviz/rc_car.rviz.'),
    LaunchArgument('params_file', '', 'Override YAML merged over config/vehicle.yaml (e.g. a '
                   'calibration result); empty: defaults.'),
    LaunchArgument('lidar_errors', 'ideal', 'Lidar error model of rc_sim_sensors: a preset name '
                   'or the path of a YAML file.'),
    LaunchArgument('backend', 'gz', 'gz: Gazebo Harmonic; embedded: the rc_sim_engine '
                   'simulator (no Gazebo).'),
    LaunchArgument('num_cars', '1', 'Number of cars (at most RC_SIM_MAX_CARS): car 0 at x, y, '
                   'yaw, the others lined up behind it, with topics under car_<i>/ and frames '
                   'car_<i>/..., each with its own robot_state_publisher and control chain. '
                   'backend:=gz spawns model rc_car_<i> per car with its bridge and lidar '
                   'errors (seed i); backend:=embedded runs one sim_node for all of them, which '
                   'applies the lidar errors itself.'),
)



@dataclass(frozen=True)
class CarSpawn:
    """One car of a launch: index, namespace (``''`` for a single car) and start pose of
    base_link in the world [m, rad]."""

    index: int
    namespace: str
    x: float
    y: float
    yaw: float

    @property
    def model_name(self) -> str:
        """gz model name (``create -name``): rc_car, or rc_car_<i> among several."""
        return f'{MODEL_NAME}_{self.index}' if self.namespace else MODEL_NAME

    @property
    def frame_prefix(self) -> str:
        """robot_state_publisher's ``frame_prefix``: ``car_<i>/`` or none."""
        return frame_prefix(self.namespace)


def argument(name: str) -> dict[str, str]:
    """``default_value`` and ``description`` keyword arguments of DeclareLaunchArgument(name)."""
    for arg in LAUNCH_ARGUMENTS:
        if arg.name == name:
            return {'default_value': arg.default, 'description': arg.description}
    raise ConfigError(f'unknown launch argument {name!r}')


@dataclass(frozen=True)
class LaunchPlan:
    """What the launch file starts, decided from the argument values.

    ``actions`` lists the action names in start order: ``robot_state_publisher``, ``gz_sim``,
    ``create``, ``bridge``, ``sim_node``, ``control``, ``lidar_error_injector``, ``rviz``.
    """

    backend: str
    world: Path
    world_name: str
    x: float
    y: float
    z: float
    yaw: float
    headless: bool
    use_sim_time: bool
    lidar: bool
    rviz: bool
    params_file: str
    lidar_error_params: dict[str, str]
    actions: tuple[str, ...]
    num_cars: int = 1
    #: start poses (x, y, yaw) of the cars (:attr:`namespaces`; gz spawns them there)
    car_poses: tuple[tuple[float, float, float], ...] = ()

    @property
    def gz_args(self) -> str:
        """``gz_args`` of ros_gz_sim's gz_sim.launch.py: run at once, server-only when headless."""
        flags = '-r -v 3 ' + ('-s --headless-rendering ' if self.headless else '')
        return flags + shlex.quote(str(self.world))  # gz_sim.launch.py runs it through a shell

    @property
    def namespaces(self) -> list[str]:
        """The namespace of every car (its topics and its nodes: robot_state_publisher, control
        chain and, in gz, bridge and lidar errors): ``['']`` for one car, ``car_<i>`` for
        several, the names sim_node gives its cars."""
        return car_namespaces(self.num_cars)

    def cars(self, poses: Sequence[Sequence[float]] | None = None) -> list[CarSpawn]:
        """The cars of :attr:`namespaces` at ``poses`` ((x, y, yaw) per car), by default at
        :attr:`car_poses`."""
        names = self.namespaces
        poses = self.car_poses if poses is None else poses
        if len(poses) != len(names):
            raise ConfigError(f'{len(poses)} start poses for {len(names)} cars')
        return [CarSpawn(i, ns, float(p[0]), float(p[1]), float(p[2]))
                for i, (ns, p) in enumerate(zip(names, poses))]

    def xacro_command(self, xacro_file: Path, namespace: str = '') -> str:
        """Shell command line that expands the car (for launch's ``Command`` substitution)."""
        parts = ['xacro', str(xacro_file), f'lidar:={str(self.lidar).lower()}']
        if namespace:
            parts.append(f'namespace:={namespace}')
        if self.params_file:
            parts.append(f'params_file:={self.params_file}')
        return ' '.join(shlex.quote(p) for p in parts)

    def create_arguments(self, car: CarSpawn | None = None) -> list[str]:
        """Command line of ``ros_gz_sim create`` (``-flag=value`` keeps negative numbers safe):
        the car's description from its robot_state_publisher, under its model name."""
        car = car or self.cars()[0]
        topic = f'/{car.namespace}/robot_description' if car.namespace else 'robot_description'
        return ['-topic', topic, '-name', car.model_name, '-world', self.world_name,
                f'-x={car.x!r}', f'-y={car.y!r}', f'-z={self.z!r}', f'-Y={car.yaw!r}']

    def lidar_error_node_parameters(self, car: CarSpawn) -> dict[str, Any]:
        """``lidar_error_injector`` parameters of one car: the chosen model; among several cars
        car i draws with seed i (independent noise per car)."""
        extra = {'seed': car.index} if car.namespace else {}
        return {**self.lidar_error_params, **extra, 'use_sim_time': self.use_sim_time}

    def sim_node_parameters(self) -> dict[str, Any]:
        """ROS parameters of ``rc_sim_engine sim_node`` (embedded backend)."""
        return {'world': str(self.world), 'x': self.x, 'y': self.y, 'yaw': self.yaw,
                'params_file': self.params_file, 'use_sim_time': self.use_sim_time,
                **self._several_cars()}

    def _several_cars(self) -> dict[str, Any]:
        """Several cars: their count, and the lidar error model sim_node then applies itself
        (no per-car injector)."""
        if self.num_cars == 1:
            return {}
        spec = self.lidar_error_params
        errors = {'lidar_errors': spec.get('preset') or spec['config_file']} if spec else {}
        return {'num_cars': self.num_cars, **errors}


def launch_bool(name: str, value: str) -> bool:
    """A launch argument string as a bool (true/false, 1/0, yes/no, on/off); one-line error."""
    v = value.strip().lower()
    if v in ('true', '1', 'yes', 'on'):
        return True
    if v in ('false', '0', 'no', 'off'):
        return False
    raise ConfigError(f'launch argument {name}: expected true or false, got {value!r}')


def _float(name: str, value: str, default: float) -> float:
    if value.strip() == '':
        return default
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f'launch argument {name}: expected a number, got {value!r}') from None
    if not math.isfinite(number):
        raise ConfigError(f'launch argument {name}: must be finite, got {value!r}')
    return number


def _count(name: str, value: str) -> int:
    v = value.strip()
    if not v.lstrip('-').isdigit():
        raise ConfigError(f'launch argument {name}: expected a whole number, got {value!r}')
    n = int(v)
    if n < 1:
        raise ConfigError(f'launch argument {name}: must be >= 1, got {n}')
    MAX_CARS.check(n, f'launch argument {name}')
    return n


def _world_name(path: Path) -> str:
    """``<world name=...>`` of an SDF file (the gz world name ``create`` needs)."""
    from rc_sim_description.xmlio import read_xml_file

    root = read_xml_file(path, 'SDF')
    world = root.find('world')
    if world is None or not world.get('name'):
        raise ConfigError(f'world file {str(path)!r}: no <world name=...> element')
    return str(world.get('name'))


def lidar_error_parameters(value: str) -> dict[str, str]:
    """``lidar_error_injector`` parameters: ``preset`` (a name) or ``config_file`` (a path)."""
    v = value.strip()
    if not v:
        raise ConfigError('launch argument lidar_errors: empty (use a preset name such as ideal)')
    if v.endswith(('.yaml', '.yml')) or '/' in v:
        path = Path(v).expanduser()
        if not path.is_file():
            raise ConfigError(f'launch argument lidar_errors: file {v!r} not found')
        return {'config_file': str(path.resolve())}
    return {'preset': v}


def plan_launch(values: Mapping[str, str]) -> LaunchPlan:
    """Validate the argument values (missing ones take their default) and decide the actions."""
    known = {a.name for a in LAUNCH_ARGUMENTS}
    unknown = sorted(set(values) - known)
    if unknown:
        names = ', '.join(sorted(known))
        raise ConfigError(f'unknown launch argument {unknown[0]!r} (known: {names})')
    v = {a.name: values.get(a.name, a.default) for a in LAUNCH_ARGUMENTS}
    backend = v['backend'].strip()
    if backend not in BACKENDS:
        raise ConfigError(f'launch argument backend: expected gz or embedded, got {backend!r}')
    params_file = ''
    if v['params_file'].strip():
        params_file = str(Path(v['params_file'].strip()).expanduser().resolve())
    params = load_vehicle_params(overrides=[params_file] if params_file else [])
    world = world_path(v['world'].strip()).resolve()
    start = spawn_pose(world)
    lidar = launch_bool('lidar', v['lidar'])
    rviz = launch_bool('rviz', v['rviz'])
    num_cars = _count('num_cars', v['num_cars'])
    if num_cars > 1 and backend == 'embedded':  # one sim_node simulates every car
        actions = ['robot_state_publisher', 'sim_node', 'control']
    elif num_cars > 1:  # gz: one server and clock, the rest per car (PER_CAR_ACTIONS)
        actions = ['gz_sim', 'clock_bridge', 'robot_state_publisher', 'create', 'bridge',
                   'control']
    elif backend == 'gz':
        actions = ['robot_state_publisher', 'gz_sim', 'create', 'bridge', 'control']
    else:
        actions = ['robot_state_publisher', 'sim_node', 'control']
    if lidar and (num_cars == 1 or backend == 'gz'):  # sim_node applies its own lidar_errors
        actions.append('lidar_error_injector')
    if rviz:
        actions.append('rviz')
    x, y, yaw = _float('x', v['x'], start.x), _float('y', v['y'], start.y), \
        _float('yaw', v['yaw'], start.yaw)
    # the starting grid of rcsim run --cars and sim_node (their wall check needs the engine;
    # in Gazebo, contacts push a car that starts in a wall out of it); the embedded sim_node
    # places its cars itself from car 0's pose
    poses = tuple((float(p[0]), float(p[1]), float(p[2]))
                  for p in grid_starts((x, y, yaw), [params] * num_cars))
    return LaunchPlan(
        backend=backend, world=world, world_name=_world_name(world), x=x, y=y,
        z=params.geometry.wheel_radius,  # base_link is at axle height: wheels touch the ground
        yaw=yaw,
        headless=launch_bool('headless', v['headless']),
        use_sim_time=launch_bool('use_sim_time', v['use_sim_time']),
        lidar=lidar, rviz=rviz, params_file=params_file,
        lidar_error_params=lidar_error_parameters(v['lidar_errors']) if lidar else {},
        actions=tuple(actions), num_cars=num_cars, car_poses=poses)


def bridge_config() -> Path:
    """Installed ``config/bridge.yaml`` (ros_gz_bridge parameter_bridge ``config_file``)."""
    return share_path('config/bridge.yaml')


def bridge_entries(namespace: str = '', *, clock: bool | None = None) -> list[dict[str, str]]:
    """The ros_gz_bridge entries of one car: ``config/bridge.yaml`` as is for a single car;
    under ``namespace`` every gz topic becomes ``/<ns>/...`` (the xacro's ``namespace``
    argument) and every ROS topic ``/<ns>/...``, except ``/tf``, which stays shared (the frames
    carry the prefix). ``/clock`` is kept when ``clock`` (default: only without namespace); a
    launch of several cars bridges it once (``clock=True`` on the first, or its own bridge)."""
    from rc_sim_description.yamlio import read_yaml

    data = read_yaml(bridge_config(), label='bridge config ')
    keep_clock = not namespace if clock is None else clock
    out = []
    for entry in data:
        e = {k: str(v) for k, v in entry.items()}
        if e['ros_topic_name'] == '/clock':
            if keep_clock:
                out.append(e)
            continue
        if namespace:
            ros = e['ros_topic_name'].lstrip('/')
            e['gz_topic_name'] = f'/{namespace}/' + e['gz_topic_name'].lstrip('/')
            e['ros_topic_name'] = '/tf' if ros == 'tf' else f'/{namespace}/{ros}'
        out.append(e)
    return out


def rviz_config() -> Path:
    """Installed ``rviz/rc_car.rviz``."""
    return share_path('rviz/rc_car.rviz')
