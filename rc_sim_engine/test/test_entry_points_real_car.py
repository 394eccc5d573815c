"""A calibrated twin of a car whose real commands are a normalised servo and an ESC duty loads
alone and runs in every entry point of the engine (issue 27 items 1-2): ``rcsim run`` with a
named scenario, ``rcsim track``, ``rcsim manoeuvre``, the Gymnasium env. Before, each refused it
(``drive_kind 'wheel_speed' does not fit params[0] drive.drive_model 'throttle'``).

The file is what ``rcsim fit`` writes for the DART car (its measured values, the fitted ones, the
structure and the command kinds; rounded); the references are the commands: the speed asked
for, the distance a scenario's speeds cover, the slot of the parking manoeuvre.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from rc_sim_description.bags import open_bag, read_topic
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.cli import main as rcsim

CALIBRATED = {
    'geometry': {'wheelbase': 0.1735, 'cg_to_front_axle': 0.0805, 'track_width': 0.08,
                 'cg_height': 0.076},
    'mass_properties': {'mass': 1.58, 'yaw_inertia': 0.00478},
    'friction': {'mu2': 0.975},
    'steering': {'steering_offset': -0.0083, 'steering_gain_left': 0.381,
                 'steering_gain_right': 0.392, 'steering_curvature_left': 0.60,
                 'steering_curvature_right': 0.96, 'servo_natural_frequency': 42.7,
                 'servo_damping_ratio': 0.993, 'max_steering_rate': 3.75,
                 'steering_backlash': 0.0055, 'servo_model': 'second_order',
                 'steering_command': 'normalised'},
    'tyres': {'cornering_stiffness_front': 57.4, 'cornering_stiffness_rear': 57.6,
              'tyre_model': 'fiala'},
    'drive': {'motor_force_gain': 20.5, 'motor_back_emf_gain': 4.07, 'rolling_resistance': 1.92,
              'viscous_resistance': 0.001, 'drag_coefficient': 0.0097, 'steering_drag': 7.79,
              'throttle_dead_band': 0.163, 'throttle_time_constant': 0.0056,
              'drive_model': 'throttle', 'drive_command': 'throttle'},
    'timing': {'command_latency': 0.071},
}


@pytest.fixture(scope='module')
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp('twin') / 'calibrated.yaml'
    path.write_text(yaml.safe_dump(CALIBRATED, sort_keys=False))
    return path


def _odom(bag: Path) -> list:
    with open_bag(bag) as reader:
        return read_topic(reader, '/odom')[1]


def test_rcsim_run_drives_the_twin_through_a_named_scenario(calibrated: Path,
                                                            tmp_path: Path) -> None:
    out = tmp_path / 'run'
    assert rcsim(['run', '--world', 'flat_track', '--scenario', 'two_circles', '--params',
                  str(calibrated), '--out', str(out), '--no-plots']) == 0
    odom = _odom(out)
    xy = np.array([(m.pose.pose.position.x, m.pose.pose.position.y) for m in odom])
    travelled = float(np.hypot(*np.diff(xy, axis=0).T).sum())
    speeds = np.array([m.twist.twist.linear.x for m in odom])
    assert travelled > 8.0 and speeds.max() > 0.7  # two circles at the scenario's speed
    assert abs(odom[-1].twist.twist.linear.x) < 1e-6  # stopped at the end (the deadband holds)


def test_rcsim_track_and_manoeuvre_drive_the_twin(calibrated: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert rcsim(['track', '--trajectory', 'circle', '--controller', 'pure_pursuit', '--world',
                  'flat_track', '--params', str(calibrated), '--out', str(tmp_path / 'track'),
                  '--no-plots']) == 0
    text = capsys.readouterr().out
    rmse_cm = float(text.split('after the 3 s transient: RMSE ')[1].split(' cm')[0])
    assert rmse_cm < 2.0
    assert rcsim(['manoeuvre', 'park', '--params', str(calibrated), '--out',
                  str(tmp_path / 'park'), '--no-plots']) == 0
    assert 'inside the slot: True; collisions: 0' in capsys.readouterr().out


def test_the_gymnasium_env_drives_the_twin(calibrated: Path) -> None:
    from rc_sim_engine.racing.gym_env import RaceEnv

    env = RaceEnv('chicane_track', load_vehicle_params(overrides=[calibrated]), lidar=False)
    env.reset(seed=0)
    for _ in range(300):  # 3 s at 1.5 m/s, straight ahead
        obs, _, terminated, truncated, _ = env.step(np.array([0.0, 1.5], dtype=np.float32))
        assert not (terminated or truncated)
    assert obs['velocity'][0] == pytest.approx(1.5, rel=0.02)
