"""An acceleration command kind (issue 27 item 6): a recording whose drive command is an
acceleration [m/s^2] (or a longitudinal force [N]) is read, fitted with the acceleration drive
(gain, lag, limits) and the calibrated twin drives like the hidden car.

The hidden car is the engine with an acceleration drive (gain 0.8, lag 70 ms, braking limited
at 3 m/s^2), driven through zig-zags with acceleration and braking phases; the bags carry the
commands on /steering_angle and /accel_cmd (std_msgs/Float64), motion-capture-like /odom with
noise and a gyro.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from rc_sim_calibration.dataset import load_dataset
from rc_sim_calibration.fit import fit, nominal_params
from rc_sim_calibration.settings import load_fit_settings
from rc_sim_description.params import load_vehicle_params

BASE = load_vehicle_params()
MEASURED = {'drive_model': 'acceleration', 'rolling_resistance': 0.5, 'viscous_resistance': 0.3,
            'drag_coefficient': 0.0}
HIDDEN = {**MEASURED, 'acceleration_gain': 0.8, 'acceleration_time_constant': 0.07,
          'max_deceleration': 3.0, 'command_latency': 0.03, 'servo_model': 'first_order',
          'servo_time_constant': 0.06}
START_NS = 1_700_000_000 * 1_000_000_000


def _commands(seed: int, duration: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """50 Hz steering (zig-zag) and acceleration (speed-up, hold, brake hard) commands."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration, 0.02)
    steer = 0.25 * np.sign(np.sin(2 * np.pi * t / rng.uniform(2.5, 3.5))) * (t > 1.0)
    phase = (t % 4.0)
    acc = np.where(phase < 1.2, 1.6, np.where(phase < 2.5, 0.2, -3.5)) * (t > 0.5)
    return t, steer, acc


def _write_bag(path: Path, truth, seed: int, kind: str) -> Path:
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_engine.output import bags as bagio
    from rc_sim_engine.vehicle.rollout import rollout

    t_cmd, steer, acc = _commands(seed, 14.0)
    t = np.arange(0.0, t_cmd[-1], 0.01)
    res = rollout([truth], t_cmd, steer, acc, None, t_out=t, dt=1e-3,
                  drive_kind='acceleration')
    rng = np.random.default_rng(seed + 100)
    drive = acc * truth.mass_properties.mass if kind == 'force' else acc
    events = []
    for tc, s, a in zip(t_cmd, steer, drive):
        ns = START_NS + round(tc * 1e9)
        events.append((ns, '/steering_angle', 'std_msgs/msg/Float64', bagio.float64_msg(s)))
        events.append((ns, '/accel_cmd', 'std_msgs/msg/Float64', bagio.float64_msg(a)))
    for i in range(t.size):
        ns = START_NS + round(t[i] * 1e9)
        events.append((ns, '/odom', 'nav_msgs/msg/Odometry', bagio.odometry_msg(
            ns, res.x[0, i] + rng.normal(0, 0.002), res.y[0, i] + rng.normal(0, 0.002),
            res.yaw[0, i] + rng.normal(0, 0.003), res.vx[0, i], res.vy[0, i],
            res.yaw_rate[0, i])))
        events.append((ns, '/imu', 'sensor_msgs/msg/Imu', bagio.imu_msg(
            ns, res.yaw[0, i], res.yaw_rate[0, i] + rng.normal(0, 0.01), 0.0, 0.0, 9.80665)))
    events.sort(key=lambda e: e[0])
    with BagWriter(path, storage='sqlite3') as bag:
        for ns, topic, msgtype, msg in events:
            bag.write(topic, msgtype, ns, msg)
    return path


@pytest.fixture(scope='module')
def bags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp('accel')
    truth = BASE.with_values(**HIDDEN)
    rec = out / 'car.yaml'
    rec.write_text('steering: {topic: /steering_angle, kind: angle}\n'
                   'drive: {topic: /accel_cmd, kind: acceleration}\n'
                   'odom: {topic: /odom}\nimu: {topic: /imu}\n')
    force = out / 'car_force.yaml'
    force.write_text(rec.read_text().replace('kind: acceleration', 'kind: force'))
    measured = out / 'measured.yaml'
    measured.write_text(yaml.safe_dump({'drive': MEASURED}))
    return {'truth': truth, 'recording': rec, 'force_recording': force, 'measured': measured,
            'a': _write_bag(out / 'a', truth, 1, 'acceleration'),
            'b': _write_bag(out / 'b', truth, 2, 'acceleration'),
            'force': _write_bag(out / 'f', truth, 3, 'force')}


def test_the_recording_kinds_read_as_accelerations(bags: dict) -> None:
    """acceleration commands are the drive command as they are; force commands / the mass."""
    base = load_vehicle_params(overrides=[bags['measured']])
    settings = load_fit_settings()
    ds = load_dataset(bags['a'], base, settings.data, recording=bags['recording'])
    assert (ds.steering_kind, ds.drive_kind, ds.drive_command) == ('angle', 'acceleration',
                                                                   'acceleration')
    assert set(np.round(ds.drive_cmd, 6)) <= {0.0, 1.6, 0.2, -3.5}
    f = load_dataset(bags['force'], base, settings.data, recording=bags['force_recording'])
    assert f.drive_kind == 'acceleration' and f.drive_command == 'force'
    assert set(np.round(f.drive_cmd, 6)) <= {0.0, 1.6, 0.2, -3.5}  # F / m
    assert nominal_params(BASE, 'acceleration').drive.drive_model == 'acceleration'


def test_fit_recovers_the_acceleration_drive(bags: dict) -> None:
    base = load_vehicle_params(overrides=[bags['measured']])
    settings = load_fit_settings(overrides={'optimizer': {'budget': 60, 'stage_budget': 60},
                                            'structures': {'servo': ['first_order']}})
    train = [load_dataset(bags[k], base, settings.data, recording=bags['recording'])
             for k in ('a', 'b')]
    result = fit(train, base, settings)
    d = result.params.drive
    assert d.drive_model == 'acceleration'
    assert d.acceleration_gain == pytest.approx(0.8, rel=0.05)
    assert d.acceleration_time_constant == pytest.approx(0.07, abs=0.03)
    assert d.max_deceleration == pytest.approx(3.0, rel=0.1)
    values = result.complete_values()
    assert values.get('drive_command') == 'acceleration'
    assert values['drive_model'] == 'acceleration'
