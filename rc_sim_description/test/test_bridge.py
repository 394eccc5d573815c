"""config/bridge.yaml matches the URDF plugin topics and the topic contract of docs/conventions.md."""

from __future__ import annotations

from pathlib import Path
import re
import xml.etree.ElementTree as ET

import pytest
import yaml

from rc_sim_description.launch_args import bridge_config, bridge_entries
from rc_sim_description.urdf import expand_car

REPO = Path(__file__).resolve().parents[2]
# ros_gz_bridge type pairs (ros_gz jazzy README, reference section 3.4)
GZ_TYPE = {
    'std_msgs/msg/Float64': 'gz.msgs.Double',
    'sensor_msgs/msg/JointState': 'gz.msgs.Model',
    'nav_msgs/msg/Odometry': 'gz.msgs.Odometry',
    'tf2_msgs/msg/TFMessage': 'gz.msgs.Pose_V',
    'sensor_msgs/msg/Imu': 'gz.msgs.IMU',
    'sensor_msgs/msg/LaserScan': 'gz.msgs.LaserScan',
    'rosgraph_msgs/msg/Clock': 'gz.msgs.Clock',
}
KEYS = {'ros_topic_name', 'gz_topic_name', 'ros_type_name', 'gz_type_name', 'direction'}


@pytest.fixture(scope='module')
def entries() -> list[dict[str, str]]:
    data = yaml.safe_load(bridge_config().read_text())
    assert isinstance(data, list)  # the bridge requires a top-level sequence
    return data


def contract() -> dict[str, str]:
    """Topic -> ROS type from the table in docs/conventions.md ('pkg/Type' -> 'pkg/msg/Type')."""
    table: dict[str, str] = {}
    for line in (REPO / 'docs' / 'conventions.md').read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) != 3 or not cells[0].startswith('`'):
            continue
        pkg, _, name = cells[1].partition('/')
        for topic in re.findall(r'`([^`]+)`', cells[0]):
            table[topic] = f'{pkg}/msg/{name}'
    return table


def test_entries_are_complete_and_explicit(entries: list[dict[str, str]]) -> None:
    for e in entries:
        assert set(e) == KEYS, e
        assert e['direction'] in ('GZ_TO_ROS', 'ROS_TO_GZ')
        assert GZ_TYPE[e['ros_type_name']] == e['gz_type_name']
        # commands go to gz, everything else comes from gz
        assert (e['direction'] == 'ROS_TO_GZ') == e['ros_topic_name'].startswith('joint_commands/')
    ros = [e['ros_topic_name'] for e in entries]
    assert len(ros) == len(set(ros))


def test_ros_side_follows_the_topic_contract(entries: list[dict[str, str]]) -> None:
    table = contract()
    assert len(table) >= 14  # the parser found the table
    bridged = {e['ros_topic_name']: e['ros_type_name'] for e in entries}
    expected = {'/clock', '/joint_states', '/odom', '/tf', '/imu', '/scan_raw',
                'joint_commands/front_left_steering', 'joint_commands/front_right_steering',
                'joint_commands/rear_left_wheel', 'joint_commands/rear_right_wheel'}
    assert set(bridged) == expected
    for topic, ros_type in bridged.items():
        assert table[topic] == ros_type, topic


def test_gz_side_matches_the_urdf_plugin_topics(entries: list[dict[str, str]]) -> None:
    robot = ET.fromstring(expand_car())
    urdf_topics = {t.text for tag in ('topic', 'odom_topic', 'tf_topic') for t in robot.iter(tag)}
    from_gz = {e['gz_topic_name'] for e in entries} - {'/clock'}  # /clock comes from gz-sim itself
    assert from_gz == urdf_topics
    for e in entries:
        if e['ros_topic_name'].startswith('/'):
            assert e['gz_topic_name'] == e['ros_topic_name']
        else:
            assert e['gz_topic_name'] == '/' + e['ros_topic_name']


@pytest.mark.parametrize('namespace', ['car_0', 'car_7'])
def test_a_car_among_several_bridges_its_own_namespaced_topics(namespace: str) -> None:
    """Each car's gz topics are those of its xacro expansion with ``namespace``; its ROS topics
    live under /<ns>/ but /tf, which all cars share (their frames carry the prefix); /clock is
    bridged once for all (``clock=True``)."""
    entries = bridge_entries(namespace)
    single = {e['ros_topic_name']: e for e in bridge_entries()}
    robot = ET.fromstring(expand_car(namespace=namespace))
    urdf_topics = {t.text for tag in ('topic', 'odom_topic', 'tf_topic') for t in robot.iter(tag)}
    assert {e['gz_topic_name'] for e in entries} == urdf_topics
    assert all(t.startswith(f'/{namespace}/') for t in urdf_topics)
    ros = {e['ros_topic_name'] for e in entries}
    assert '/clock' not in ros and '/tf' in ros
    assert all(t == '/tf' or t.startswith(f'/{namespace}/') for t in ros)
    for e in entries:  # types and directions as for a single car
        base = e['ros_topic_name'].removeprefix(f'/{namespace}/')
        one = single.get(base) or single.get('/' + base) or single['/tf']
        assert (e['ros_type_name'], e['gz_type_name'], e['direction']) == \
            (one['ros_type_name'], one['gz_type_name'], one['direction'])
    assert len(entries) == len(single) - 1
    clock = [e for e in bridge_entries(namespace, clock=True) if e['ros_topic_name'] == '/clock']
    assert [e['gz_topic_name'] for e in clock] == ['/clock']
