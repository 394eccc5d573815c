"""spawn_rc_car.launch.py: compiles, declares exactly the documented arguments, and its ROS-free
decision logic (rc_sim_description.launch_args) picks the right actions; a real launch smoke test
runs where ROS 2 is installed."""

from __future__ import annotations

import ast
import importlib.util
from itertools import pairwise
import math
from pathlib import Path
import py_compile

import pytest

from rc_sim_description.errors import ConfigError, VehicleParamsError
from rc_sim_description.launch_args import (
    LAUNCH_ARGUMENTS,
    PER_CAR_ACTIONS,
    argument,
    lidar_error_parameters,
    plan_launch,
)
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.paths import world_path

PKG = Path(__file__).resolve().parents[1]
REPO = PKG.parent
LAUNCH_FILES = sorted((PKG / 'launch').glob('*.launch.py'))
SPAWN = PKG / 'launch' / 'spawn_rc_car.launch.py'
DOCUMENTED = ['world', 'x', 'y', 'yaw', 'headless', 'use_sim_time', 'lidar', 'rviz', 'params_file',
              'lidar_errors', 'backend', 'num_cars']


def declared_arguments(path: Path) -> list[tuple[str, str]]:
    """(name, name passed to argument()) of every DeclareLaunchArgument call, from the AST."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'DeclareLaunchArgument':
            name = node.args[0]
            assert isinstance(name, ast.Constant), 'argument names must be literals'
            (spec,) = [kw.value for kw in node.keywords if kw.arg is None]
            assert isinstance(spec, ast.Call) and spec.func.id == 'argument'
            found.append((name.value, spec.args[0].value))
    return found


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_compiles(path: Path, tmp_path: Path) -> None:
    py_compile.compile(str(path), cfile=str(tmp_path / 'x.pyc'), doraise=True)


def test_spawn_declares_exactly_the_documented_arguments() -> None:
    declared = declared_arguments(SPAWN)
    assert [name for name, _ in declared] == DOCUMENTED
    assert all(name == spec for name, spec in declared)  # description/default from the table
    assert [a.name for a in LAUNCH_ARGUMENTS] == DOCUMENTED
    for a in LAUNCH_ARGUMENTS:
        assert a.description.endswith('.') and len(a.description) > 20
        assert argument(a.name) == {'default_value': a.default, 'description': a.description}
    doc = (REPO / 'docs' / 'architecture.md').read_text()
    for name in DOCUMENTED:
        assert f'| `{name}` |' in doc, f'{name} missing from the launch table of architecture.md'
    with pytest.raises(ConfigError, match='unknown launch argument'):
        argument('wrold')


def test_defaults_run_gazebo_on_basic_track_at_its_start_pose() -> None:
    plan = plan_launch({})
    assert plan.backend == 'gz'
    assert plan.world == world_path('basic_track').resolve()
    assert plan.world_name == 'basic_track'
    assert (plan.x, plan.y, plan.yaw) == (-0.5, -1.875, 0.0)
    assert plan.z == load_vehicle_params().geometry.wheel_radius
    assert plan.actions == ('robot_state_publisher', 'gz_sim', 'create', 'bridge', 'control',
                            'lidar_error_injector')
    assert plan.lidar_error_params == {'preset': 'ideal'}
    assert plan.gz_args == f'-r -v 3 {plan.world}'
    assert plan.use_sim_time and plan.lidar and not plan.rviz and not plan.headless
    assert plan.params_file == ''


def test_embedded_backend_runs_the_engine_instead_of_gazebo() -> None:
    plan = plan_launch({'backend': 'embedded', 'world': 'figure_eight', 'lidar': 'false',
                        'rviz': 'true'})
    assert plan.actions == ('robot_state_publisher', 'sim_node', 'control', 'rviz')
    assert plan.lidar_error_params == {}
    params = plan.sim_node_parameters()
    assert params == {'world': str(world_path('figure_eight').resolve()), 'x': 0.0, 'y': 0.0,
                      'yaw': math.pi / 4, 'params_file': '', 'use_sim_time': True}
    assert all(isinstance(params[k], float) for k in ('x', 'y', 'yaw'))  # ROS double params


def test_explicit_pose_headless_and_create_arguments() -> None:
    plan = plan_launch({'x': '-1.5', 'y': '2', 'yaw': '-0.5', 'headless': 'true',
                        'world': 'flat_track'})
    assert (plan.x, plan.y, plan.yaw) == (-1.5, 2.0, -0.5)
    assert plan.gz_args.startswith('-r -v 3 -s --headless-rendering ')
    args = plan.create_arguments()
    assert args[:6] == ['-topic', 'robot_description', '-name', 'rc_car', '-world', 'flat_track']
    assert args[6:] == ['-x=-1.5', '-y=2.0', f'-z={plan.z!r}', '-Y=-0.5']


def test_params_file_is_resolved_validated_and_passed_on(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / 'cal.yaml').write_text('geometry:\n  wheel_radius: 0.06\n')
    monkeypatch.chdir(tmp_path)
    plan = plan_launch({'params_file': 'cal.yaml'})
    assert plan.params_file == str(tmp_path / 'cal.yaml')
    assert plan.z == 0.06
    assert plan.sim_node_parameters()['params_file'] == plan.params_file
    command = plan.xacro_command(tmp_path / 'my dir' / 'rc_car.urdf.xacro')
    assert command == (f"xacro '{tmp_path}/my dir/rc_car.urdf.xacro' lidar:=true "
                       f'params_file:={tmp_path}/cal.yaml')
    (tmp_path / 'bad.yaml').write_text('geometry:\n  wheel_radius: 0\n')
    with pytest.raises(VehicleParamsError, match=r'geometry\.wheel_radius: must be in \[0\.003, 0\.5\] m'):
        plan_launch({'params_file': 'bad.yaml'})


def test_lidar_errors_preset_or_file(tmp_path: Path) -> None:
    assert lidar_error_parameters('harsh') == {'preset': 'harsh'}
    cfg = tmp_path / 'errors.yaml'
    cfg.write_text('noise_std: 0.01\n')
    assert lidar_error_parameters(str(cfg)) == {'config_file': str(cfg)}
    with pytest.raises(ConfigError, match=r"lidar_errors: file '.*nope\.yaml' not found"):
        lidar_error_parameters(str(tmp_path / 'nope.yaml'))
    with pytest.raises(ConfigError, match='lidar_errors: empty'):
        lidar_error_parameters(' ')


@pytest.mark.parametrize(('values', 'message'), [
    ({'backend': 'unity'}, "backend: expected gz or embedded, got 'unity'"),
    ({'lidar': 'maybe'}, "lidar: expected true or false, got 'maybe'"),
    ({'x': 'one'}, "x: expected a number, got 'one'"),
    ({'yaw': 'nan'}, "yaw: must be finite, got 'nan'"),
    ({'world': 'moon'}, "unknown world 'moon'"),
    ({'world': '/no/such.sdf'}, "world file '/no/such.sdf' not found"),
    ({'wrold': 'x'}, "unknown launch argument 'wrold'"),
])
def test_bad_arguments_give_one_line_errors(values: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plan_launch(values)
    assert message in str(info.value)
    assert '\n' not in str(info.value)


def test_real_launch_smoke() -> None:
    """With ROS 2: build the launch description and the actions of both backends."""
    launch = pytest.importorskip('launch')
    pytest.importorskip('launch_ros')
    ament = pytest.importorskip('ament_index_python.packages')
    for package in ('ros_gz_sim', 'rc_sim_control'):
        try:
            ament.get_package_share_directory(package)
        except Exception:  # PackageNotFoundError
            pytest.skip(f'{package} not installed')
    spec = importlib.util.spec_from_file_location('spawn_rc_car_launch', SPAWN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    declared = [e for e in description.entities
                if isinstance(e, launch.actions.DeclareLaunchArgument)]
    assert [d.name for d in declared] == DOCUMENTED
    for backend, cars in (('gz', '1'), ('embedded', '1'), ('gz', '3'), ('embedded', '3')):
        context = launch.LaunchContext()
        for d in declared:
            context.launch_configurations[d.name] = d.default_value[0].perform(context) \
                if d.default_value else ''
        context.launch_configurations['backend'] = backend
        context.launch_configurations['num_cars'] = cars
        actions = module._setup(context)
        plan = plan_launch({'backend': backend, 'num_cars': cars})
        per_car = sum(name in PER_CAR_ACTIONS for name in plan.actions)
        cleanup = backend == 'gz' and cars != '1'  # OnShutdown: remove the bridge configs
        assert len(actions) == (1 + len(plan.actions) + per_car * (len(plan.namespaces) - 1)
                                + cleanup)


def test_rviz_config_shows_car_tf_scan_and_odometry() -> None:
    import yaml

    from rc_sim_description.launch_args import rviz_config

    config = yaml.safe_load(rviz_config().read_text())
    manager = config['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'odom'
    displays = {d['Class'].split('/')[1]: d for d in manager['Displays']}
    assert {'RobotModel', 'TF', 'LaserScan', 'Odometry'} <= set(displays)
    assert displays['RobotModel']['Description Topic']['Value'] == '/robot_description'
    assert displays['LaserScan']['Topic']['Value'] == '/scan'
    assert displays['Odometry']['Topic']['Value'] == '/odom'


def test_num_cars_in_gazebo_spawns_every_car_in_its_namespace() -> None:
    plan = plan_launch({'num_cars': '3', 'rviz': 'true'})
    assert plan.actions == ('gz_sim', 'clock_bridge', 'robot_state_publisher', 'create',
                            'bridge', 'control', 'lidar_error_injector', 'rviz')
    assert set(PER_CAR_ACTIONS) >= set(plan.actions) - {'gz_sim', 'clock_bridge', 'rviz'}
    assert plan.namespaces == ['car_0', 'car_1', 'car_2']
    cars = plan.cars([(0.0, 0.0, 0.5), (-1.0, -0.5, 0.5), (-2.0, -1.0, 0.5)])
    assert [c.model_name for c in cars] == ['rc_car_0', 'rc_car_1', 'rc_car_2']
    assert [c.frame_prefix for c in cars] == ['car_0/', 'car_1/', 'car_2/']
    args = plan.create_arguments(cars[1])
    assert args[:4] == ['-topic', '/car_1/robot_description', '-name', 'rc_car_1']
    assert '-x=-1.0' in args and '-y=-0.5' in args and '-Y=0.5' in args
    assert plan.xacro_command(Path('car.xacro'), 'car_1').split()[-1] == 'namespace:=car_1'
    # independent lidar noise per car
    assert [plan.lidar_error_node_parameters(c)['seed'] for c in cars] == [0, 1, 2]
    with pytest.raises(ConfigError, match='2 start poses for 3 cars'):
        plan.cars([(0, 0, 0)] * 2)
    # by default the starting grid of rcsim run --cars: lined up behind car 0 along its heading
    from rc_sim_description.footprint import GRID_GAP, footprint_from_params

    foot = footprint_from_params(load_vehicle_params())
    grid = plan.cars()
    assert (grid[0].x, grid[0].y, grid[0].yaw) == (plan.x, plan.y, plan.yaw)
    for a, b in pairwise(grid):
        assert math.hypot(a.x - b.x, a.y - b.y) == pytest.approx(2 * foot.half_length + GRID_GAP)
        assert math.atan2(a.y - b.y, a.x - b.x) == pytest.approx(plan.yaw)
    # one car keeps its names, its pose and the shipped bridge config
    one = plan_launch({})
    (car,) = one.cars()
    assert (car.namespace, car.model_name, car.frame_prefix) == ('', 'rc_car', '')
    assert one.create_arguments()[:4] == ['-topic', 'robot_description', '-name', 'rc_car']
    assert 'seed' not in one.lidar_error_node_parameters(car)


def test_num_cars_runs_one_sim_node_for_every_car(monkeypatch: pytest.MonkeyPatch) -> None:
    assert plan_launch({}).num_cars == 1
    one = plan_launch({'backend': 'embedded'})
    assert one.num_cars == 1 and 'lidar_errors' not in one.sim_node_parameters()
    plan = plan_launch({'backend': 'embedded', 'num_cars': '3', 'lidar_errors': 'harsh',
                        'rviz': 'true'})
    # one sim_node (lidar errors inside), and per car its static frames and its control chain:
    # without them /car_<i>/cmd_vel drove nothing and /tf_static was empty
    assert plan.actions == ('robot_state_publisher', 'sim_node', 'control', 'rviz')
    params = plan.sim_node_parameters()
    assert params['num_cars'] == 3 and params['lidar_errors'] == 'harsh'
    assert plan.namespaces == ['car_0', 'car_1', 'car_2']
    cars = plan.cars()
    assert [(c.namespace, c.frame_prefix) for c in cars] == [
        ('car_0', 'car_0/'), ('car_1', 'car_1/'), ('car_2', 'car_2/')]
    assert (cars[0].x, cars[0].y, cars[0].yaw) == (plan.x, plan.y, plan.yaw)
    for bad, match in (('0', 'must be >= 1, got 0'), ('-2', 'must be >= 1'),
                       ('two', 'expected a whole number'), ('1.5', 'expected a whole number')):
        with pytest.raises(ConfigError, match=match):
            plan_launch({'backend': 'embedded', 'num_cars': bad})
    monkeypatch.setenv('RC_SIM_MAX_CARS', '4')
    with pytest.raises(ConfigError, match='RC_SIM_MAX_CARS'):
        plan_launch({'backend': 'embedded', 'num_cars': '5'})
