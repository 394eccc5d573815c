"""``rcsim run --cars N``: one bag with namespaced topics and frames, a starting grid whose
lidars see the car ahead at the distance the footprints give, and one-line errors."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from shapely.geometry import Polygon
import yaml

from rc_sim_description.bags import open_bag, read_topic, require_topics
from rc_sim_description.params import VehicleParams, load_vehicle_params
from rc_sim_engine.cli import main
from rc_sim_engine.sim.car_grid import GRID_GAP
from rc_sim_engine.world.collision import footprint_from_params

P = load_vehicle_params()


def footprint(params: VehicleParams, x: float, y: float, yaw: float) -> Polygon:
    f = footprint_from_params(params)
    c, s = math.cos(yaw), math.sin(yaw)
    local = [(f.center_x + sx * f.half_length, sy * f.half_width)
             for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    return Polygon([(x + c * u - s * v, y + s * u + c * v) for u, v in local])


def error_of(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> str:
    out = tmp_path / 'out'
    assert main(['run', '--out', str(out), *args]) == 2
    err = '\n'.join(line for line in capsys.readouterr().err.strip().splitlines()
                    if not line.startswith("compiling the engine's kernels"))
    assert err.startswith('error: ') and '\n' not in err and 'Traceback' not in err, err
    assert not out.exists()
    return err


def test_three_cars_write_one_bag_with_namespaces(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / 'grid'
    assert main(['run', '--world', 'flat_track', '--scenario', 'line', '--cars', '3',
                 '--duration', '1', '--no-plots', '--out', str(out)]) == 0
    text = capsys.readouterr().out
    assert '(3 cars)' in text and 'car_2' in text and '(per car)' in text
    summary = yaml.safe_load((out / 'summary.yaml').read_text())
    assert summary['cars'] == 3 and summary['namespaces'] == ['car_0', 'car_1', 'car_2']
    with open_bag(out) as reader:
        topics = [f'/car_{i}/{name}' for i in range(3)
                  for name in ('odom', 'scan', 'imu', 'joint_states', 'cmd_vel')]
        require_topics(reader, [*topics, '/clock', '/tf'], out)
        _, odom = read_topic(reader, '/car_1/odom')
        _, scans = read_topic(reader, '/car_1/scan')
        _, tfs = read_topic(reader, '/tf')
    assert odom[0].header.frame_id == 'car_1/odom'
    assert odom[0].child_frame_id == 'car_1/base_link'
    assert scans[0].header.frame_id == 'car_1/laser'
    children = {t.child_frame_id for msg in tfs for t in msg.transforms}
    assert {'car_0/base_link', 'car_1/base_link', 'car_2/base_link'} <= children
    # car 1 sees car 0's rear straight ahead, GRID_GAP beyond its own front
    f = footprint_from_params(P)
    ahead = min(range(len(scans[0].ranges)),
                key=lambda b: abs(scans[0].angle_min + b * scans[0].angle_increment))
    expected = GRID_GAP + f.center_x + f.half_length - P.sensors.lidar_mount_x
    assert scans[0].ranges[ahead] == pytest.approx(expected, abs=1e-4)  # float32 ranges
    assert main(['inspect', '--bag', str(out)]) == 0
    listing = capsys.readouterr().out
    assert all(topic in listing for topic in topics)


def test_per_car_params_and_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    longer = tmp_path / 'long.yaml'
    longer.write_text('geometry:\n  chassis_length: 0.6\n')
    out = tmp_path / 'mixed'
    assert main(['run', '--world', 'flat_track', '--scenario', 'line', '--cars', '3',
                 '--duration', '0.5', '--no-plots', '--car-params', f'1={longer}',
                 '--start', '1', '2', '0.5', '--out', str(out)]) == 0
    summary = yaml.safe_load((out / 'summary.yaml').read_text())
    cars = [P, load_vehicle_params(overrides=[longer]), P]
    assert footprint_from_params(cars[1]).half_length == pytest.approx(0.3)
    starts = np.array(summary['starts'])
    assert starts[0].tolist() == [1.0, 2.0, 0.5] and np.all(starts[:, 2] == 0.5)
    behind = (starts[1:, :2] - starts[0, :2]) @ [math.cos(0.5), math.sin(0.5)]
    across = (starts[1:, :2] - starts[0, :2]) @ [-math.sin(0.5), math.cos(0.5)]
    assert np.all(behind < 0) and np.allclose(across, 0.0, atol=1e-12)
    feet = [footprint(p, *pose) for p, pose in zip(cars, starts)]
    for a, b in itertools.pairwise(feet):  # shapely: GRID_GAP free between neighbours
        assert a.distance(b) == pytest.approx(GRID_GAP, abs=1e-9)
    out2 = tmp_path / 'given'
    assert main(['run', '--world', 'flat_track', '--scenario', 'line', '--cars', '2',
                 '--duration', '0.5', '--no-plots', '--start', '0', '0', '0', '--start', '0',
                 '3', '1', '--out', str(out2)]) == 0
    assert yaml.safe_load((out2 / 'summary.yaml').read_text())['starts'] == [[0, 0, 0],
                                                                             [0, 3, 1]]
    capsys.readouterr()


def test_bad_car_options_are_one_line_errors(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    base = ['--world', 'flat_track', '--scenario', 'line']
    assert '--cars: must be an integer >= 1, got 0' in error_of(capsys, tmp_path, *base,
                                                                  '--cars', '0')
    assert 'got -2' in error_of(capsys, tmp_path, *base, '--cars', '-2')
    monkeypatch.setenv('RC_SIM_MAX_CARS', '4')
    err = error_of(capsys, tmp_path, *base, '--cars', '5')
    assert '5 cars exceeds the limit of 4 cars' in err and 'RC_SIM_MAX_CARS' in err
    err = error_of(capsys, tmp_path, *base, '--cars', '3', '--start', '0', '0', '0',
                   '--start', '0', '2', '0')
    assert '--start given 2 times for --cars 3' in err
    err = error_of(capsys, tmp_path, *base, '--cars', '2', '--start', '0', '0', '0',
                   '--start', '0.3', '0.1', '0')
    assert 'cars 0 and 1 overlap at their start poses' in err
    err = error_of(capsys, tmp_path, '--world', 'basic_track', '--scenario', 'line',
                   '--cars', '3')  # the grid behind the spawn pose meets a wall
    assert err.startswith('error: car ') and 'touches' in err and '--start per car' in err
    err = error_of(capsys, tmp_path, *base, '--cars', '2', '--car-params', '2=x.yaml')
    assert 'car 2 does not exist (--cars 2: cars 0 to 1)' in err
    assert 'expected I=VALUE' in error_of(capsys, tmp_path, *base, '--cars', '2',
                                          '--car-params', 'x.yaml')
