"""ROS 2 campaigns (driver ``kind: ros_launch``), the ROS-free parts: the spec's one-line errors,
the one-line refusal without ROS 2, sim_node's parameters and the user's command of a run, the
metrics of recorded odometry (contacts, distance) and the process / domain plumbing. The live
run is tests_live/test_campaign_ros.py."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from rc_sim_description.errors import ConfigError
from rc_sim_engine.campaign import expand, load_spec
from rc_sim_engine.campaign.ros_run import (
    CONTACT_MARGIN_M,
    DomainLease,
    contact_events,
    recorded_result,
    sim_parameters,
    stop_process,
    user_command,
)
from rc_sim_engine.cli import main

SPEC = '''
driver:
  kind: ros_launch
  launch: {path: stack.launch.py}
  args: {gain: 2.5, verbose: true, name: wf}
  duration_s: 3.0
  control_rate_hz: 20
fixed: {lidar_errors: {preset: rplidar_a1, set: {noise_stddev: 0.02}}}
factors:
  grid:
    world: [basic_track]
    seed: [4, 5]
  list:
    start: [null, [0.5, -0.2, 4.0]]
'''


def write(folder: Path, text: str) -> Path:
    (folder / 'stack.launch.py').write_text('# a launch file\n', encoding='utf-8')
    path = folder / 'spec.yaml'
    path.write_text(text, encoding='utf-8')
    return path


def test_a_ros_launch_spec_expands_with_its_settings_in_the_ids(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    runs = expand(spec)
    assert len(runs) == 4
    assert 'max_lateral_acceleration_mps2' not in spec.metrics  # not measured over ROS
    assert 'distance_m' in spec.metrics
    other = load_spec(write(tmp_path, SPEC.replace('gain: 2.5', 'gain: 2.6')))
    assert {r.run_id for r in runs}.isdisjoint(r.run_id for r in expand(other))


@pytest.mark.parametrize('change, culprit', [
    (('  launch: {path: stack.launch.py}\n', ''), 'give launch'),
    (('  launch: {path: stack.launch.py}\n',
      '  launch: {path: stack.launch.py}\n  run: {package: p, executable: e}\n'), 'give launch'),
    (('{path: stack.launch.py}', '{path: nowhere.launch.py}'), 'driver.launch.path'),
    (('{path: stack.launch.py}', '{package: my_stack}'), "missing key 'file'"),
    (('{path: stack.launch.py}', '{path: stack.launch.py, file: x}'), 'not both'),
    (('gain: 2.5', 'gain: [1, 2]'), 'args.gain'),
    (('  duration_s: 3.0\n', ''), 'duration_s'),
    (('  control_rate_hz: 20\n', '  control_rate_hz: 20\n  mode: yaw\n'), 'driver.mode'),
    (('    seed: [4, 5]\n', '    seed: [4, 5]\n    model: [kinematic]\n'), 'model'),
    (('    seed: [4, 5]\n', '    seed: [4, 5]\n    vehicle: [{mass_properties: {mass: 3}}]\n'),
     'vehicle'),
    (('  control_rate_hz: 20\n', '  control_rate_hz: 20\n  timeout_s: 0\n'), 'timeout_s'),
])
def test_bad_ros_launch_specs_are_one_line(tmp_path: Path, change: tuple[str, str],
                                           culprit: str) -> None:
    assert change[0] in SPEC
    with pytest.raises(ConfigError) as err:
        load_spec(write(tmp_path, SPEC.replace(*change)))
    assert culprit in str(err.value) and '\n' not in str(err.value)


@pytest.mark.parametrize('extra, culprit', [
    ('metrics: [distance_m, max_lateral_acceleration_mps2]\n', 'not measured in ros_launch'),
    ('keep: {bags: failures}\n', 'keep.bags'),
])
def test_what_a_ros_run_does_not_give_is_refused(tmp_path: Path, extra: str,
                                                 culprit: str) -> None:
    with pytest.raises(ConfigError, match=culprit):
        load_spec(write(tmp_path, SPEC + extra))


def test_track_maps_and_override_lists_are_refused(tmp_path: Path) -> None:
    from rc_sim_description.paths import share_path

    (tmp_path / 'a.yaml').write_text('{}\n', encoding='utf-8')
    with pytest.raises(ConfigError, match='one vehicle override file'):
        load_spec(write(tmp_path, SPEC.replace(
            'fixed: {lidar_errors', 'fixed: {params: [a.yaml, a.yaml], lidar_errors')))
    track = share_path('config/maps/chicane_track.yaml', package='rc_sim_engine')
    with pytest.raises(ConfigError, match='SDF worlds'):
        load_spec(write(tmp_path, SPEC.replace('world: [basic_track]', f'world: [{track}]')))


@pytest.mark.skipif(importlib.util.find_spec('rclpy') is not None,
                    reason='ROS 2 is here: the refusal is for an environment without it')
def test_without_ros_a_ros_launch_campaign_is_one_line_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write(tmp_path, SPEC)
    out = tmp_path / 'out'
    assert main(['campaign', 'run', str(spec), '--out', str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith('error: driver kind ros_launch needs ROS 2 (source '
                          '/opt/ros/jazzy/setup.bash or . scripts/setup_ros.sh)'), err
    assert '\n' not in err
    assert not out.exists()


def test_sim_node_parameters_of_a_run(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    runs = expand(spec)
    spawn = (1.0, 2.0, 0.5)
    first = sim_parameters(spec, runs[0], spawn, tmp_path)
    assert first['x'] == 1.0 and first['y'] == 2.0 and first['yaw'] == 0.5  # null: the spawn
    assert first['lockstep'] is True and first['use_cmd_vel'] is True
    assert first['realtime_factor'] == 0.0 and first['command_rate'] == 20.0
    assert first['seed'] == 4 and first['world'] == 'basic_track'
    assert first['mapper_mode'] == 'yaw_rate' and first['params_file'] == ''
    # the preset with its override, as a file sim_node reads
    from rc_sim_sensors.lidar_config import LidarErrorConfig

    config = LidarErrorConfig.from_yaml(first['lidar_errors'])
    assert config.noise_stddev == 0.02
    assert config.to_dict() == LidarErrorConfig.from_preset('rplidar_a1').with_values(
        noise_stddev=0.02).to_dict()
    second = sim_parameters(spec, runs[1], spawn, tmp_path)
    assert second['yaw'] == pytest.approx(4.0 - 2 * math.pi)  # wrapped into [-pi, pi]
    plain = load_spec(write(tmp_path, SPEC.replace(
        'fixed: {lidar_errors: {preset: rplidar_a1, set: {noise_stddev: 0.02}}}', '')))
    assert sim_parameters(plain, expand(plain)[0], spawn, tmp_path)['lidar_errors'] == 'ideal'


def test_the_users_command(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    assert user_command(spec) == ['ros2', 'launch', str(tmp_path / 'stack.launch.py'),
                                  'gain:=2.5', 'name:=wf', 'verbose:=true']
    pkg = load_spec(write(tmp_path, SPEC.replace('{path: stack.launch.py}',
                                                 '{package: my_stack, file: sim.launch.py}')))
    assert user_command(pkg)[:4] == ['ros2', 'launch', 'my_stack', 'sim.launch.py']
    exe = load_spec(write(tmp_path, SPEC.replace('launch: {path: stack.launch.py}',
                                                 'run: {package: my_stack, executable: drive}')))
    assert user_command(exe) == ['ros2', 'run', 'my_stack', 'drive', '--ros-args', '-p',
                                 'use_sim_time:=true', '-p', 'gain:=2.5', '-p', 'name:=wf', '-p',
                                 'verbose:=true']


def _world_and_params() -> tuple[object, object, tuple[float, float, float]]:
    from rc_sim_description.params import load_vehicle_params
    from rc_sim_engine.campaign.execute import _load_world
    from rc_sim_engine.world.sdf import World

    world, spawn = _load_world('basic_track')
    assert isinstance(world, World)
    return world, load_vehicle_params(), spawn


def test_contacts_of_recorded_odometry_are_counted_at_their_onsets() -> None:
    world, params, spawn = _world_and_params()
    box = np.asarray(world.boxes, dtype=np.float64).reshape(-1, 5)[0]  # a wall's centre
    free = (spawn[0], spawn[1], spawn[2])
    inside = (float(box[0]), float(box[1]), float(box[2]))
    poses = [free, free, inside, inside, free, inside, free]
    t = np.arange(len(poses)) * 0.1
    x, y, yaw = (np.array(c) for c in zip(*poses))
    events = contact_events(t, x, y, yaw, np.ones(len(t)), params, world)
    assert [e.t for e in events] == pytest.approx([0.2, 0.5])
    assert events[0].x == inside[0] and events[0].car == 0
    # a car touching the surface (pushed out by the stop response) is a contact; one a
    # centimetre away is not
    from rc_sim_engine.world.collision import WorldArrays, clearance, footprint_from_params

    assert CONTACT_MARGIN_M < 0.01
    assert not contact_events(t[:1], x[:1], y[:1], yaw[:1], np.ones(1), params, world)
    gap = clearance(x[:1], y[:1], yaw[:1], footprint_from_params(params),
                    WorldArrays.from_world(world))
    assert gap > 0.01


def test_the_metrics_of_recorded_odometry(tmp_path: Path) -> None:
    from rc_sim_engine.campaign.execute import RunContext, _measure

    world, params, spawn = _world_and_params()
    t = np.arange(0.0, 3.05, 0.05)
    v = 0.8
    x = spawn[0] + v * t * math.cos(spawn[2])
    y = spawn[1] + v * t * math.sin(spawn[2])
    rows = np.column_stack([t, x, y, np.full_like(t, spawn[2]), np.full_like(t, v),
                            np.zeros_like(t), np.zeros_like(t)])
    extra = np.array([[3.05, x[-1] + 5.0, y[-1], spawn[2], v, 0.0, 0.0]])  # past the duration
    result = recorded_result(np.vstack([rows, extra]), params, world, 3.0, 1.0, 'yaw_rate')
    spec = load_spec(write(tmp_path, SPEC))
    ctx = RunContext('id', 1, {'world': 'basic_track'}, params, world,
                     np.random.default_rng(1))
    metrics = _measure(spec, result, None, ctx)
    assert metrics['distance_m'] == pytest.approx(v * 3.0, rel=1e-12)
    assert metrics['max_speed_mps'] == pytest.approx(v)
    assert metrics['progress_m'] is None  # an SDF world
    assert metrics['collisions'] == float(len(result.collisions))
    assert (metrics['first_contact_s'] is None) == (not result.collisions)
    assert metrics['min_wall_distance_m'] is not None and metrics['min_wall_distance_m'] >= 0.0


def test_domain_leases_are_exclusive() -> None:
    a, b = DomainLease(), DomainLease()
    try:
        assert a.domain_id != b.domain_id
    finally:
        a.release()
        b.release()
    c = DomainLease()
    try:
        assert c.domain_id == min(a.domain_id, b.domain_id) or c.domain_id > 0
    finally:
        c.release()


def test_a_process_ignoring_ctrl_c_is_terminated() -> None:
    code = ('import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n'
            'print("ready", flush=True)\ntime.sleep(60)\n')
    proc = subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE,
                            start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b'ready'
    t0 = time.monotonic()
    status = stop_process(proc, (0.3, 5.0))
    assert status == -signal.SIGTERM
    assert time.monotonic() - t0 < 5.0
    proc.stdout.close()
