"""Every file of the real-recording corpus (/work/shared/realdata, README there): counts and a
decoded field, not only "opens". That rcsim refuses the bad ones in one line is checked in
rc_sim_engine/test/test_cli_lower_layer_inputs.py."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rc_sim_description.bags import BagError, open_bag
from rc_sim_description.testing import realdata_dir

ROOT = realdata_dir()
pytestmark = pytest.mark.skipif(ROOT is None, reason='real-recording corpus not available')
R2 = 'rosbag2_tests/'


def _path(rel: str) -> Path:
    assert ROOT is not None
    return ROOT / rel


def _counts(rel: str) -> dict[str, int]:
    with open_bag(_path(rel), allow_empty=True) as bag:
        return {t: i.count for t, i in bag.topics.items()}


def _first(rel: str, topic: str):
    with open_bag(_path(rel)) as bag:
        got = bag.read(topic)
        assert len(got) == bag.topics[topic].count  # every message decodes
        return got


def test_dart_fast_two_connections_on_rosout_and_commands():
    rel = 'dart/4_sept_random_driving_fast.bag'
    assert _counts(rel) == {
        '/arduino_data_1': 322, '/rosout': 12, '/safety_value': 322, '/sensors_and_input_1': 323,
        '/steering_1': 321, '/steering_angle_1': 323, '/tf': 3217, '/throttle_1': 325,
        '/v_ref_1': 324, '/vicon/jetracer1': 3227}
    with open_bag(_path(rel)) as bag:
        assert bag.storage == 'ros1' and bag.message_count == 8716
        assert len(bag.topics['/rosout'].connections) == 2
        assert bag.start_ns / 1e9 == pytest.approx(1725446068.01, abs=0.01)
        assert bag.duration == pytest.approx(32.22, abs=0.01)
        assert bag.topics['/vicon/jetracer1'].rate_hz == pytest.approx(100.0, rel=0.01)
    vicon = _first(rel, '/vicon/jetracer1')
    assert vicon.messages[0].header.frame_id == 'map'
    steering = np.array([m.data for m in _first(rel, '/steering_1').messages])
    assert np.unique(np.round(steering, 2)).tolist() == [-0.67, -0.47, -0.02, 0.01, 0.91]
    rosout = _first(rel, '/rosout')
    assert len(rosout) == 12


def test_dart_slow():
    with open_bag(_path('dart/4_sept_random_driving_slow.bag')) as bag:
        assert bag.message_count == 17081
        assert bag.duration == pytest.approx(63.2, abs=0.1)
    throttle = np.array([m.data for m in _first('dart/4_sept_random_driving_slow.bag',
                                               '/throttle_1').messages])
    assert len(throttle) == 634


@pytest.mark.parametrize(('name', 'counts', 'duration'), [
    ('frictionmaps_DS1', {'/drive': 1320, '/pf/pose': 1428, '/sensors/imu': 1427, '/odom': 1427},
     43.5),
    ('frictionmaps_DS2', {'/drive': 3918, '/pf/pose': 4504, '/sensors/imu': 4654, '/odom': 4651},
     159.2),
    ('frictionmaps_DS3', {'/drive': 2719, '/pf/pose': 2736, '/sensors/imu': 2736, '/odom': 2735},
     127.1),
])
def test_frictionmaps(name, counts, duration):
    rel = f'frictionmaps/{name}'
    assert _counts(rel) == counts
    with open_bag(_path(rel)) as bag:
        assert bag.metadata_version == 8 and bag.storage == 'sqlite3'
        assert bag.duration == pytest.approx(duration, abs=0.1)
    drive = _first(rel, '/drive').messages
    speeds = np.array([m.drive.speed for m in drive])
    assert np.all(np.abs(speeds) <= 5.0 + 1e-6) and np.abs(speeds).max() > 1.0
    pose = _first(rel, '/pf/pose').messages
    assert pose[0].header.frame_id == 'map'


def test_hokuyo_malformed_index_is_read_by_walking_the_chunks():
    scans = _first('ccny_hokuyo/laser_scan_matcher_demo.bag', '/scan')
    assert len(scans) == 360
    m = scans.messages[0]
    assert len(m.ranges) == 681 and m.angle_increment == pytest.approx(0.0061359, rel=1e-4)
    assert m.header.frame_id == '/laser'


@pytest.mark.parametrize(('rel', 'counts', 'topic', 'check'), [
    (R2 + 'rosbag2_py/test/resources/sqlite3/talker',
     {'/topic': 10, '/rosout': 10, '/parameter_events': 0}, '/topic',
     lambda m: m.data == 'Hello, world! 0'),
    (R2 + 'rosbag2_py/test/resources/mcap/talker',
     {'/topic': 10, '/rosout': 10, '/parameter_events': 0}, '/topic',
     lambda m: m.data.startswith('Hello, world!')),
    (R2 + 'rosbag2_py/test/resources/mcap/wbag',
     dict.fromkeys(['AAA', 'BBB', 'CCC', 'DDD', 'EEE', 'FFF', 'GGG', 'HHH'], None), 'AAA',
     lambda m: m.data.startswith('Hello, world!')),
    (R2 + 'rosbag2_transport/test/resources/mcap/rewriter_b', {'c_strings': 50, 'a_empty': 25},
     'c_strings', lambda m: m.string_value == 'stringval0'),
    (R2 + 'rosbag2_tests/resources/sqlite3/cdr_test', {'/array_topic': 4, '/test_topic': 3},
     '/test_topic', lambda m: m.int32_value == 123),
    (R2 + 'rosbag2_tests/resources/sqlite3/bag_with_topics_and_service_events',
     {'/test_service1/_service_event': 4, '/test_service2/_service_event': 4, '/test_topic1': 1,
      '/test_topic2': 1, '/events/write_split': 0}, '/test_service1/_service_event',
     lambda m: m.info.stamp.sec > 1.6e9),
    (R2 + 'rosbag2_cpp/test/rosbag2_cpp/bags/only_topics.mcap',
     {'/parameter_events': 7, '/rosout': 0, '/events/write_split': 0}, '/parameter_events',
     lambda m: m.node == '/introspection_client'),
])
def test_rosbag2_test_bags(rel, counts, topic, check):
    got = _counts(rel)
    assert set(got) == set(counts)
    assert all(got[t] == n for t, n in counts.items() if n is not None)
    msgs = _first(rel, topic).messages
    assert msgs and check(msgs[0])


def test_split_mcap_counts_every_file():
    with open_bag(_path(R2 + 'rosbag2_py/test/resources/mcap/wbag')) as bag:
        assert len(bag.files) == 5 and bag.message_count == 6074
        assert bag.topics['AAA'].count == 804
        assert bag.duration < 1e-5  # timestamps 0 to 1998 ns


def test_old_schema_lists_topics_and_names_the_undefined_type():
    rel = R2 + 'rosbag2_py/test/resources/sqlite3/convert_a'
    assert _counts(rel) == {'a_empty': 100, 'b_basictypes': 50}  # rosbags' Reader yields 0
    with open_bag(_path(rel)) as bag, pytest.raises(
            BagError, match='test_msgs/msg/BasicTypes is neither defined in the bag nor a '
            'standard ROS type') as info:
        bag.read('b_basictypes')
    assert '\n' not in str(info.value)


@pytest.mark.parametrize('name', ['example.bag', 'example-lz4.bag', 'example-bz2.bag'])
def test_rosbagjs_compressions(name):
    rel = f'rosbagjs/{name}'
    assert _counts(rel) == {
        '/rosout': 10, '/tf': 2688, '/tf_static': 1, '/turtle1/cmd_vel': 357,
        '/turtle1/color_sensor': 1351, '/turtle1/pose': 1344, '/turtle2/cmd_vel': 208,
        '/turtle2/color_sensor': 1344, '/turtle2/pose': 1344}
    with open_bag(_path(rel)) as bag:
        assert bag.message_count == 8647 and bag.duration == pytest.approx(21.70, abs=0.01)
        assert bag.topics['/tf'].msgtype == 'tf/msg/tfMessage'
        if name == 'example.bag':
            assert len(bag.topics['/rosout'].connections) == 3
            assert len(bag.topics['/tf'].connections) == 2
    pose = _first(rel, '/turtle1/pose').messages[0]  # turtlesim/Pose: defined by the bag only
    assert math.isclose(pose.x, 5.5444, abs_tol=1e-3)
    assert len(_first(rel, '/tf').messages) == 2688


def test_rosbagjs_no_messages():
    with open_bag(_path('rosbagjs/no-messages.bag'), allow_empty=True) as bag:
        assert bag.message_count == 0 and bag.storage == 'ros1'
    with pytest.raises(BagError, match='holds no messages'), open_bag(
            _path('rosbagjs/no-messages.bag')):
        pass
