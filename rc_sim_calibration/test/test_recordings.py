"""Recording descriptions: validation errors, extraction from real bags, the Dataset they build
(kinds, deadman, measured pose + offset), and the descriptions rcsim inspect proposes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rc_sim_calibration.dataset import load_dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_description.bags import BagError, open_bag
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.recording import (
    base_link_pose,
    extract,
    load_recording,
    recording_from_mapping,
)
from rc_sim_description.testing import realdata_dir

ROOT = realdata_dir()
DOCS = Path(__file__).resolve().parents[2] / 'docs' / 'recordings'
P = load_vehicle_params()
needs_data = pytest.mark.skipif(ROOT is None, reason='real-recording corpus not available')


@pytest.mark.parametrize(('body', 'fragment'), [
    ({'steerng': {'topic': '/s'}}, "unknown role 'steerng' (did you mean 'steering'?)"),
    ({'pose': {'topic': '/p', 'ofset': [0, 0, 0]}}, "unknown key 'ofset' (did you mean 'offset'?)"),
    ({'steering': {'topic': '/s', 'kind': 'normalized'}, 'drive': {'topic': '/d'}},
     "unknown kind 'normalized' (did you mean 'normalised'?)"),
    ({'steering': {'topic': '/s'}}, 'steering and drive go together (drive is missing)'),
    ({'pose': {'topic': '/p', 'offset': [0, 'x', 0]}}, 'offset: must be a finite number'),
    ({'pose': {}}, 'pose: needs a topic'),
    ({'wheel_speed': {'topic': '/w', 'index': -1}}, 'index: must be an integer >= 0'),
])
def test_description_errors_are_one_line(body, fragment):
    with pytest.raises(ConfigError) as info:
        recording_from_mapping(body, 'r.yaml')
    assert fragment in str(info.value) and '\n' not in str(info.value)


def test_base_link_pose_inverts_the_mount():
    # a frame 0.2 m ahead and 0.1 m left of base_link, yawed 0.3 rad; base_link at (1, 2, 0.5)
    xb, yb, yawb = 1.0, 2.0, 0.5
    ox, oy, oyaw = 0.2, 0.1, 0.3
    xm = xb + np.cos(yawb) * ox - np.sin(yawb) * oy
    ym = yb + np.sin(yawb) * ox + np.cos(yawb) * oy
    x, y, yaw = base_link_pose(np.array([xm]), np.array([ym]), np.array([yawb + oyaw]),
                               (ox, oy, oyaw))
    np.testing.assert_allclose([x[0], y[0], yaw[0]], [xb, yb, yawb], atol=1e-12)


@needs_data
def test_description_against_the_bag_names_missing_topic_and_wrong_type():
    dart = ROOT / 'dart/4_sept_random_driving_fast.bag'
    with open_bag(dart) as bag:
        with pytest.raises(BagError, match=r'imu: topic /imu not in bag .*\(it has: '):
            extract(recording_from_mapping({'imu': {'topic': '/imu'}}, 'r'), bag)
        with pytest.raises(BagError, match=r'odom: topic /vicon/jetracer1 has type '
                           r'geometry_msgs/msg/PoseWithCovarianceStamped, expected '
                           r'nav_msgs/msg/Odometry'):
            extract(recording_from_mapping({'odom': {'topic': '/vicon/jetracer1'}}, 'r'), bag)
        with pytest.raises(BagError, match='give the element with index'):
            extract(recording_from_mapping({'wheel_speed': {'topic': '/arduino_data_1'}}, 'r'),
                    bag)


@needs_data
def test_dart_channels_and_clocks():
    rec = load_recording(DOCS / 'dart_fast.yaml')
    with open_bag(ROOT / 'dart/4_sept_random_driving_fast.bag') as bag:
        ch = extract(rec, bag)
    assert ch['pose'].clock == 'header' and ch['steering'].clock == 'log'
    assert ch['pose'].t_ns.size == 3227 and ch['steering'].t_ns.size == 321
    enable = ch['enable']
    on = enable.t_ns[enable.values['value'] != 0]
    start = 1725446068011037290  # the bag's first log time
    assert (on[0] - start) * 1e-9 == pytest.approx(5.11, abs=0.15)
    assert (on[-1] - start) * 1e-9 == pytest.approx(27.62, abs=0.15)
    assert 1.0 < np.nanmax(ch['wheel_speed'].values['value']) < 5.0  # encoder speed [m/s]


@needs_data
def test_dart_dataset_keeps_kinds_deadman_and_measured_pose():
    ds = load_dataset(ROOT / 'dart/4_sept_random_driving_fast.bag', P,
                      recording=DOCS / 'dart_fast.yaml')
    assert ds.steering_kind == 'normalised' and ds.drive_kind == 'throttle'
    assert ds.pose_offset == (0.115, -0.01, -0.00769)
    assert set(np.unique(np.round(ds.steering_cmd, 2))) <= {-0.67, -0.47, -0.02, 0.01, 0.91, 0.0}
    assert 0.44 <= np.max(ds.drive_cmd) <= 0.5
    assert ds.enabled_at(ds.t).min() == 0.0 and ds.enabled_at(ds.t).max() == 1.0
    x, y, yaw = base_link_pose(ds.pose_x, ds.pose_y, ds.pose_yaw, ds.pose_offset)
    np.testing.assert_allclose([x, y, yaw], [ds.x, ds.y, ds.yaw], atol=1e-12)
    assert np.hypot(ds.pose_x - ds.x, ds.pose_y - ds.y).mean() == pytest.approx(
        np.hypot(0.115, 0.01), abs=1e-6)
    assert np.isfinite(ds.wheel_speed).mean() > 0.9  # encoder speed, m/s -> rad/s
    with pytest.raises(CalibrationError, match="steering kind 'normalised' is not supported by "
                       'the fit yet'):
        ds.commands_at(ds.t)


@needs_data
def test_fit_refuses_unsupported_kinds_in_one_line(capsys, tmp_path):
    from rc_sim_engine.cli import main

    code = main(['fit', '--bag', str(ROOT / 'dart/4_sept_random_driving_fast.bag'),
                 '--recording', str(DOCS / 'dart_fast.yaml'), '--out',
                 str(tmp_path / 'c.yaml'), '--budget', '4'])
    err = capsys.readouterr().err
    assert code == 2 and err.count('\n') == 1 and 'not supported by the fit yet' in err
    assert not (tmp_path / 'c.yaml').exists()


@needs_data
def test_frictionmaps_dataset_from_the_description():
    ds = load_dataset(ROOT / 'frictionmaps/frictionmaps_DS1', P,
                      recording=DOCS / 'frictionmaps.yaml')
    assert ds.steering_kind == 'angle' and ds.drive_kind == 'wheel_speed'
    steer, wheel = ds.commands_at(ds.t)
    assert np.abs(steer).max() <= 0.35 and np.abs(wheel).max() * P.geometry.wheel_radius <= 5.01
    assert ds.yaw_rate_source.startswith('/sensors/imu')
    assert ds.duration > 20


@needs_data
@pytest.mark.parametrize(('bag', 'shared'), [
    ('dart/4_sept_random_driving_fast.bag', 'example_dart_fast.yaml'),
    ('frictionmaps/frictionmaps_DS2', 'example_frictionmaps.yaml'),
])
def test_inspect_proposes_a_working_description(tmp_path, capsys, bag, shared):
    from rc_sim_engine.cli import main

    out = tmp_path / 'r.yaml'
    assert main(['inspect', '--bag', str(ROOT / bag), '--write-recording', str(out)]) == 0
    text = capsys.readouterr().out
    assert 'duration' in text and 'nan' not in text
    proposed = load_recording(out)
    reference = load_recording(ROOT / 'recordings' / shared)
    for name, role in reference.roles.items():
        if name == 'wheel_speed':  # a MultiArray element: its index is not guessed
            continue
        assert proposed.roles[name].topic == role.topic, name
        assert proposed.roles[name].kind == role.kind, name
    ds = load_dataset(ROOT / bag, P, recording=out)  # it works: the dataset builds
    assert ds.duration > 10


def test_topic_shorthand_and_recording_are_exclusive(tmp_path):
    with pytest.raises(CalibrationError, match='either --recording or --topic'):
        load_dataset(tmp_path, P, topic_overrides=['odom=/x'], recording=DOCS / 'dart_fast.yaml')
