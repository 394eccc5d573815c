"""The ROS-free core of the ``bag_recorder`` node: parameters, QoS choice, and a bag that the
bag layer reads back with the same topics, types, counts, times and bytes.

The CDR bytes are made by rosbags' serializer (the node receives the same bytes from DDS); the
read-back goes through :func:`rc_sim_description.bags.open_bag`, the reader every command uses.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rosbags.typesys import Stores, get_typestore
import yaml

from rc_sim_description.bags import open_bag
from rc_sim_description.bags.errors import BagError
from rc_sim_description.errors import ConfigError, OutputError
from rc_sim_description.recorder import (
    Recorder,
    RecorderSettings,
    parse_topics,
    recorder_settings,
    subscription_qos,
)

STORE = get_typestore(Stores.ROS2_JAZZY)


def cdr(msgtype: str, **fields: object) -> bytes:
    cls = STORE.types[msgtype]
    return bytes(STORE.serialize_cdr(cls(**fields), msgtype))


def float64(value: float) -> bytes:
    return cdr('std_msgs/msg/Float64', data=value)


def test_topics_as_list_or_string_become_absolute_names() -> None:
    assert parse_topics(['/cmd_vel', 'odom', '/car_1/scan']) == ('/cmd_vel', '/odom',
                                                                 '/car_1/scan')
    assert parse_topics('/cmd_vel, /odom /imu') == ('/cmd_vel', '/odom', '/imu')
    assert parse_topics('[/cmd_vel,/odom]') == ('/cmd_vel', '/odom')
    for bad, match in (([], 'no topics given'), ('', 'no topics given'), (None, 'no topics'),
                       (['/a b'], "'/a b' is not a topic name"), (['/1x'], 'not a topic name'),
                       (['//x'], 'not a topic name'), (['/odom', 'odom'], '/odom is given twice'),
                       (3, 'expected a list of topic names'), ([3], '3 is not a topic name')):
        with pytest.raises(ConfigError, match=match):
            parse_topics(bad)


def test_settings_are_checked_before_recording(tmp_path: Path) -> None:
    s = recorder_settings({'topics': ['/odom'], 'output': str(tmp_path / 'run')})
    assert s == RecorderSettings(('/odom',), tmp_path / 'run', 'sqlite3', False)
    (tmp_path / 'old').mkdir()
    with pytest.raises(OutputError, match=r'old exists already \(use -p force:=true'):
        recorder_settings({'topics': ['/odom'], 'output': str(tmp_path / 'old')})
    assert recorder_settings({'topics': '/odom', 'output': str(tmp_path / 'old'),
                              'force': True}).force
    for values, match in (({'topics': ['/odom']}, 'parameter output: no bag directory'),
                          ({'topics': ['/odom'], 'output': 'x', 'storage': 'zip'},
                           "storage: expected sqlite3 or mcap, got 'zip'"),
                          ({'topics': ['/odom'], 'output': 'x', 'force': 'yes'},
                           'force: expected true or false'),
                          ({'topics': ['/odom'], 'output': 'x', 'topic': '/a'},
                           "unknown parameter 'topic'")):
        with pytest.raises(ConfigError, match=match) as info:
            recorder_settings(values)
        assert '\n' not in str(info.value)


def test_qos_matches_every_publisher() -> None:
    """A reliable reader does not match a best-effort writer, a transient-local reader not a
    volatile one (the DDS request/offer rule): ask for the weakest any publisher offers."""
    assert subscription_qos([]) == subscription_qos([(True, False)])
    q = subscription_qos([(True, True)])  # robot_state_publisher's /tf_static
    assert (q.reliable, q.transient_local) == (True, True)
    q = subscription_qos([(False, False)])  # sensor data
    assert (q.reliable, q.transient_local) == (False, False)
    q = subscription_qos([(True, True), (True, False)])
    assert (q.reliable, q.transient_local) == (True, False)
    q = subscription_qos([(True, False), (False, False)])
    assert (q.reliable, q.transient_local) == (False, False)


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_recorded_bag_reads_back_exactly(tmp_path: Path, storage: str) -> None:
    out = tmp_path / 'run'
    rec = Recorder(recorder_settings({'topics': ['/steering_angle', '/tf_static', '/nope'],
                                      'output': str(out), 'storage': storage}))
    rec.open()
    assert not out.exists()  # written beside it, renamed at the end
    rec.add_topic('/tf_static', 'tf2_msgs/msg/TFMessage', latched=True)
    static = cdr('tf2_msgs/msg/TFMessage', transforms=[])
    rec.record('/tf_static', 0, static)  # before the sim clock ticked: held
    rec.add_topic('/steering_angle', 'std_msgs/msg/Float64')
    for k in range(5):
        rec.record('/steering_angle', 1_000_000_000 + k * 10_000_000, float64(0.1 * k))
    rec.record('/steering_angle', 900_000_000, float64(9.0))  # the clock stepped back
    assert rec.missing() == ['/nope']
    line = rec.close()
    assert line == (f'wrote {out}: 7 message(s) (/tf_static 1, /steering_angle 6); never '
                    'published, not in the bag: /nope')
    with open_bag(out) as bag:
        assert {t.name: (t.msgtype, t.count) for t in bag.topics.values()} == {
            '/steering_angle': ('std_msgs/msg/Float64', 6),
            '/tf_static': ('tf2_msgs/msg/TFMessage', 1)}
        got = [(c.topic, t, bytes(raw)) for c, t, raw in bag.messages()]
    assert got[0] == ('/tf_static', 1_000_000_000, static)  # stored at the first valid time
    steer = [(t, raw) for topic, t, raw in got if topic == '/steering_angle']
    assert [t for t, _ in steer] == [1_000_000_000 + k * 10_000_000 for k in range(5)] + [
        1_040_000_000]  # never before the last time stored
    assert [raw for _, raw in steer] == [float64(0.1 * k) for k in range(5)] + [float64(9.0)]
    meta = yaml.safe_load((out / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    qos = {t['topic_metadata']['name']: t['topic_metadata']['offered_qos_profiles']
           for t in meta['topics_with_message_count']}
    assert qos['/steering_angle'] == ''
    # rosbag2's enums: durability 1 = transient local, reliability 1 = reliable, depth 1
    (latched,) = yaml.safe_load(qos['/tf_static'])
    assert (latched['durability'], latched['reliability'], latched['depth']) == (1, 1, 1)


def test_unknown_type_is_refused_in_one_line_and_abort_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / 'run'
    rec = Recorder(recorder_settings({'topics': ['/x'], 'output': str(out)}))
    rec.open()
    with pytest.raises(BagError, match='no definition of my_pkg/msg/Thing'):
        rec.add_topic('/x', 'my_pkg/msg/Thing')
    with pytest.raises(OutputError, match='/x is not recorded'):
        rec.record('/x', 1, b'')
    rec.abort()
    assert list(tmp_path.iterdir()) == []
