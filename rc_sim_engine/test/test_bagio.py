"""rosbag2 output read back with rosbags; atomic writes; one-line errors for bad bags."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from rc_sim_control.commands import CommandSequence
from rc_sim_description.bags import BagError, open_bag, read_topic, require_topics
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.errors import OutputError
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.output.bags import float64_msg, path_msg, write_sim_result
from rc_sim_engine.sim.simulator import SimConfig, Simulator
from rc_sim_engine.world.sdf import World

P = load_vehicle_params()
TOPICS = {
    '/clock': 'rosgraph_msgs/msg/Clock',
    '/cmd_vel': 'geometry_msgs/msg/Twist',
    '/steering_angle': 'std_msgs/msg/Float64',
    '/rear_wheel_speed': 'std_msgs/msg/Float64',
    '/joint_states': 'sensor_msgs/msg/JointState',
    '/odom': 'nav_msgs/msg/Odometry',
    '/imu': 'sensor_msgs/msg/Imu',
    '/scan': 'sensor_msgs/msg/LaserScan',
    '/tf': 'tf2_msgs/msg/TFMessage',
}


@pytest.fixture(scope='module')
def result():
    world = World('w', 't', boxes=np.array([[3.0, 0.0, 0.0, 0.05, 2.0]]),
                  box_z=np.array([[0.0, 0.3]]), box_names=('wall',))
    seq = CommandSequence(np.array([0.0, 0.4, 1.0]), np.array([1.0, 1.0, 0.0]),
                          np.array([0.0, 0.1, 0.0]), 'steering_angle')
    return Simulator(P, world, SimConfig()).play(seq)


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_bag_round_trip(tmp_path: Path, result, storage: str) -> None:
    out = tmp_path / 'run'
    reference = path_msg(0, [0.0, 1.0], [0.0, 0.5], [0.0, 0.2])
    with BagWriter(out, storage=storage) as bag:
        write_sim_result(bag, result, extra=[('/reference_path', 'nav_msgs/msg/Path', 0,
                                              reference)])
        (bag.directory / 'note.txt').write_text('extra file', encoding='utf-8')
    ext = '.db3' if storage == 'sqlite3' else '.mcap'
    assert sorted(p.name for p in out.iterdir()) == sorted(['metadata.yaml', f'run{ext}',
                                                             'note.txt'])
    meta = yaml.safe_load((out / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['version'] == 8 and meta['relative_file_paths'] == [f'run{ext}']
    assert meta['storage_identifier'] == storage
    with open_bag(out) as reader:
        types = require_topics(reader, TOPICS, out)
        for topic, msgtype in TOPICS.items():
            assert types[topic] == msgtype
        t_odom, odom = read_topic(reader, '/odom')
        _, scans = read_topic(reader, '/scan')
        _, paths = read_topic(reader, '/reference_path')
        _, joints = read_topic(reader, '/joint_states')
    s = result.streams
    assert len(odom) == len(s['odom']['t_ns'])
    np.testing.assert_array_equal(t_odom, s['odom']['t_ns'])
    last = odom[-1]
    assert last.header.frame_id == 'odom' and last.child_frame_id == 'base_link'
    assert last.pose.pose.position.x == pytest.approx(s['odom']['x'][-1, 0])
    yaw = 2 * np.arctan2(last.pose.pose.orientation.z, last.pose.pose.orientation.w)
    assert yaw == pytest.approx(s['odom']['yaw'][-1, 0])
    scan = scans[0]
    assert scan.header.frame_id == 'laser' and len(scan.ranges) == P.sensors.lidar_samples
    assert scan.angle_increment == pytest.approx(P.sensors.lidar_angle_increment, rel=1e-6)
    np.testing.assert_array_equal(scan.ranges, s['scan']['ranges'][0, 0])
    assert len(paths[0].poses) == 2
    assert next(iter(joints[0].name)) == 'front_left_steering_joint'


def test_failed_write_leaves_nothing(tmp_path: Path, result) -> None:
    out = tmp_path / 'broken'
    with pytest.raises(RuntimeError), BagWriter(out) as bag:
        write_sim_result(bag, result)
        raise RuntimeError('boom')
    assert list(tmp_path.iterdir()) == []


def test_existing_output_needs_force(tmp_path: Path, result) -> None:
    out = tmp_path / 'run'
    out.mkdir()
    with pytest.raises(OutputError, match='exists already'), BagWriter(out):
        pass
    # issue 28: --force replaces only what the command writes, not a directory it did not make
    with pytest.raises(OutputError, match='not a bag'), BagWriter(out, force=True):
        pass
    assert out.is_dir()
    out.rmdir()
    for _ in range(2):  # a bag (the first run's) is replaced
        with BagWriter(out, force=True) as bag:
            write_sim_result(bag, result)
    assert (out / 'run.db3').is_file()


def test_open_bag_errors(tmp_path: Path) -> None:
    with pytest.raises(BagError, match='not found'), open_bag(tmp_path / 'missing'):
        pass
    (tmp_path / 'plain').mkdir()
    with pytest.raises(BagError, match=r'no metadata\.yaml'), open_bag(tmp_path / 'plain'):
        pass
    junk = tmp_path / 'junk.txt'
    junk.write_text('x')
    with pytest.raises(BagError, match='not a bag'), open_bag(junk):
        pass
    empty = tmp_path / 'empty'
    with BagWriter(empty):
        pass
    with pytest.raises(BagError, match='no messages') as info, open_bag(empty):
        pass
    assert '\n' not in str(info.value)
    corrupt = tmp_path / 'corrupt'
    with BagWriter(corrupt) as bag:
        bag.write('/x', 'std_msgs/msg/Float64', 0,
                  float64_msg(1.0))
    (corrupt / 'corrupt.db3').write_bytes(b'this is not sqlite' * 100)
    with pytest.raises(BagError, match='cannot read bag') as info, open_bag(corrupt):
        pass
    assert '\n' not in str(info.value)


def test_db3_file_path_and_missing_topic(tmp_path: Path, result) -> None:
    out = tmp_path / 'run'
    with BagWriter(out) as bag:
        write_sim_result(bag, result)
    with open_bag(out / 'run.db3') as reader, pytest.raises(
            BagError, match=r'topic /nope not in bag \(it has: /clock'):
        require_topics(reader, ['/nope'], out)


def test_several_cars_get_namespaces(tmp_path: Path) -> None:
    seq = CommandSequence(np.array([0.0, 0.5]), np.array([1.0, 0.0]), np.zeros(2),
                          'steering_angle')
    res = Simulator(P, World('e', 't'), SimConfig(), n=2,
                    start=[(0.0, 0.0, 0.0), (0.0, 2.0, 0.0)]).play(seq)
    out = tmp_path / 'two'
    with BagWriter(out) as bag:
        write_sim_result(bag, res)
    with open_bag(out) as reader:
        require_topics(reader, ['/clock', '/tf', '/car_0/odom', '/car_1/odom', '/car_1/scan'], out)
        _, odom = read_topic(reader, '/car_1/odom')
    assert odom[0].header.frame_id == 'car_1/odom' and odom[0].child_frame_id == 'car_1/base_link'
    assert odom[0].pose.pose.position.y == pytest.approx(2.0)


def test_bag_has_tf_static_and_robot_description(tmp_path: Path, result) -> None:
    from rc_sim_description.urdf import parse_urdf

    out = tmp_path / 'run'
    with BagWriter(out, storage='mcap') as bag:
        write_sim_result(bag, result)
    with open_bag(out) as reader:
        _, static = read_topic(reader, '/tf_static')
        _, desc = read_topic(reader, '/robot_description')
        assert 'transient_local' in reader.topics['/tf_static'].connections[0].qos or \
            'durability: 1' in reader.topics['/tf_static'].connections[0].qos
    assert len(static) == 1 and len(desc) == 1
    frames = {(t.header.frame_id, t.child_frame_id): t.transform.translation
              for t in static[0].transforms}
    assert set(frames) == {('base_link', 'chassis_link'), ('chassis_link', 'imu_link'),
                           ('chassis_link', 'laser')}
    s = P.sensors
    laser = frames[('chassis_link', 'laser')]
    assert (laser.x, laser.y, laser.z) == pytest.approx((s.lidar_mount_x, s.lidar_mount_y,
                                                         s.lidar_mount_z))
    imu = frames[('chassis_link', 'imu_link')]
    assert (imu.x, imu.y, imu.z) == pytest.approx((s.imu_mount_x, s.imu_mount_y, s.imu_mount_z))
    model = parse_urdf(desc[0].data, 'robot_description')
    assert {'base_link', 'chassis_link', 'laser', 'imu_link'} <= {link.name for link in model.links}
    wheel = model.joint('rear_left_wheel_joint')
    assert wheel.xyz[1] == pytest.approx(0.5 * P.geometry.track_width)
