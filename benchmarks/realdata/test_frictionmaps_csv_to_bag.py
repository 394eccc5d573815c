"""The FrictionMaps converter: the bag holds the CSV rows in the realdata encoding (SI units)."""

import math
from pathlib import Path
import sys

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from csv_logs import CsvError
from evaluate_predictions import read_recording
from frictionmaps_csv_to_bag import convert, main

from rc_sim_description.bags import open_bag, read_topic

T0 = 1651541648


def _write(path: Path, names: list[str], rows: np.ndarray) -> None:
    header = ',' + ','.join(names)
    body = np.column_stack([np.arange(len(rows)), rows])
    np.savetxt(path, body, delimiter=',', header=header, comments='', fmt='%.9f')


def _dataset(folder: Path, n: int = 30) -> dict[str, np.ndarray]:
    folder.mkdir()
    k = np.arange(n)
    ns = (k * 30_000_000) % 1_000_000_000
    s = T0 + (k * 30_000_000) // 1_000_000_000
    yaw = 0.05 * k
    q = np.column_stack([0 * k, 0 * k, np.sin(yaw / 2), np.cos(yaw / 2)])
    cmd = np.column_stack([s, ns + 1000, 1.5 + 0.01 * k, 0.2 * np.sin(k)])
    pose = np.column_stack([s, ns, 0.1 * k, -0.05 * k, q])
    imu = np.column_stack([s, ns + 2000, 0 * k, 0 * k, 30.0 + k,  # phi_r, phi_p, phi_y [deg]
                           0.1 + 0 * k, -0.2 + 0 * k, 1.0 + 0 * k,  # a [g]
                           0 * k, 0 * k, 57.29577951308232 * 0.5 + 0 * k, q])  # w [deg/s]
    _write(folder / 'commandData.csv', ['s', 'ns', 'V', 'delta'], cmd)
    _write(folder / 'pfPoseData.csv', ['s', 'ns', 'x', 'y', 'q.x', 'q.y', 'q.z', 'q.w'], pose)
    _write(folder / 'imuData.csv', ['s', 'ns', 'phi_r', 'phi_p', 'phi_y', 'ax', 'ay', 'az', 'wx',
                                    'wy', 'wz', 'q.x', 'q.y', 'q.z', 'q.w'], imu)
    return {'cmd': cmd, 'pose': pose, 'yaw': yaw}


def test_rows_become_the_realdata_topics_in_si_units(tmp_path):
    d = _dataset(tmp_path / 'DS9')
    bag = convert(tmp_path / 'DS9', tmp_path / 'bag')
    desc = tmp_path / 'rec.yaml'
    desc.write_text('command: {topic: /drive}\npose: {topic: /pf/pose}\n'
                    'imu: {topic: /sensors/imu}\n')
    rec = read_recording(bag, desc, ('command', 'imu'))
    t_pose = d['pose'][:, 0] + d['pose'][:, 1] * 1e-9
    np.testing.assert_allclose(rec.t, t_pose, atol=1e-9)
    np.testing.assert_allclose(rec.x, d['pose'][:, 2], atol=1e-12)
    np.testing.assert_allclose(np.angle(np.exp(1j * (rec.yaw - d['yaw']))), 0.0, atol=1e-8)
    np.testing.assert_allclose(rec.signals['command.speed'].value, d['cmd'][:, 2], atol=1e-9)
    np.testing.assert_allclose(rec.signals['command.steering_angle'].value, d['cmd'][:, 3],
                               atol=1e-9)
    np.testing.assert_allclose(rec.signals['imu'].value, 0.5, atol=1e-9)  # deg/s -> rad/s
    with open_bag(bag) as b:
        _, imu = read_topic(b, '/sensors/imu')
        assert {name: info.count for name, info in b.topics.items()} == {
            '/drive': 30, '/pf/pose': 30, '/sensors/imu': 30}
    msg = imu[0]
    assert msg.linear_acceleration.z == pytest.approx(9.80665)       # g -> m/s^2
    assert msg.linear_acceleration.y == pytest.approx(-0.2 * 9.80665)
    assert math.isclose(msg.angular_velocity.z, 0.5, abs_tol=1e-9)


def test_a_folder_without_the_logs_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / 'DS9').mkdir()
    with pytest.raises(CsvError, match=r'commandData\.csv: cannot read'):
        convert(tmp_path / 'DS9', tmp_path / 'bag')
    assert main([str(tmp_path / 'DS9'), str(tmp_path / 'bag')]) == 2
    assert capsys.readouterr().err.count('\n') == 1
    assert not (tmp_path / 'bag').exists()
