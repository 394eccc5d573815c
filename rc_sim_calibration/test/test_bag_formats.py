"""The same recording read from sqlite3, mcap and ROS 1 bags, as a directory or a storage file."""

import numpy as np
import pytest

from rc_sim_calibration.dataset import load_dataset, read_bag
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.output import bags as bagio

T0 = 1_700_000_000 * 1_000_000_000
N = 400  # 4 s at 100 Hz


def _messages():
    """(t_ns, topic, ros2 type, message): the car drives straight at 1 m/s after 1 s."""
    out = []
    for i in range(N):
        t = T0 + i * 10_000_000
        s = i * 0.01
        v = 1.0 if s >= 1.0 else 0.0
        x = max(s - 1.0, 0.0)
        if i % 2 == 0:
            out.append((t, '/steering_angle', 'std_msgs/msg/Float64', bagio.float64_msg(0.01)))
            out.append((t, '/rear_wheel_speed', 'std_msgs/msg/Float64',
                        bagio.float64_msg(20.0 * v)))
        out.append((t, '/odom', 'nav_msgs/msg/Odometry',
                    bagio.odometry_msg(t, x, 0.0, 0.0, v, 0.0, 0.0)))
        out.append((t, '/imu', 'sensor_msgs/msg/Imu',
                    bagio.imu_msg(t, 0.0, 0.02, 0.0, 0.0, 9.81)))
    return out


def _write_rosbag2(path, storage):
    with BagWriter(path, storage=storage) as bag:
        for t, topic, msgtype, msg in _messages():
            bag.write(topic, msgtype, t, msg)
    return path


def _write_ros1(path):
    from rosbags.rosbag1 import Writer
    from rosbags.typesys import Stores, get_typestore

    ts1 = get_typestore(Stores.ROS1_NOETIC)
    ts2 = bagio.typestore()
    conns = {}
    with Writer(path) as w:
        for t, topic, msgtype, msg in _messages():
            if topic not in conns:
                conns[topic] = w.add_connection(topic, msgtype, typestore=ts1)
            ros1_msg = ts1.deserialize_ros1(
                ts2.cdr_to_ros1(ts2.serialize_cdr(msg, msgtype), msgtype), msgtype)
            w.write(conns[topic], t, ts1.serialize_ros1(ros1_msg, msgtype))
    return path


@pytest.fixture(scope='module')
def bags(tmp_path_factory):
    root = tmp_path_factory.mktemp('formats')
    sq = _write_rosbag2(root / 'sq', 'sqlite3')
    mc = _write_rosbag2(root / 'mc', 'mcap')
    return {'sqlite3 dir': sq, 'db3 file': next(sq.glob('*.db3')), 'mcap dir': mc,
            'mcap file': next(mc.glob('*.mcap')), 'ros1': _write_ros1(root / 'r1.bag')}


@pytest.mark.parametrize('kind', ['sqlite3 dir', 'db3 file', 'mcap dir', 'mcap file', 'ros1'])
def test_every_format_gives_the_same_dataset(bags, kind):
    raw = read_bag(bags[kind])
    assert raw.roles['odom'] == '/odom' and raw.topics['/odom'] == 'nav_msgs/msg/Odometry'
    assert raw.series['odom']['t'][0] == pytest.approx(0.0)  # from the first message
    ds = load_dataset(bags[kind], load_vehicle_params())
    ref = load_dataset(bags['sqlite3 dir'], load_vehicle_params())
    np.testing.assert_allclose(ds.x, ref.x)
    np.testing.assert_allclose(ds.t, ref.t)
    assert ds.gyro_bias == pytest.approx(0.02)
    np.testing.assert_allclose(ds.steering_cmd, 0.01)


def _write_v9(path, stamp_offset_ns=0):
    """A Jazzy-style bag (metadata version 9) written with rosbags directly; odometry header
    stamps shifted by ``stamp_offset_ns`` from the receive times."""
    from rosbags.rosbag2 import Writer

    ts = bagio.typestore()
    conns = {}
    with Writer(path, version=9) as w:
        for t, topic, msgtype, msg in _messages():
            if topic == '/odom':
                p = msg.pose.pose.position
                tw = msg.twist.twist
                msg = bagio.odometry_msg(t + stamp_offset_ns, p.x, p.y, 0.0, tw.linear.x, 0.0,
                                         0.0)
            if topic not in conns:
                conns[topic] = w.add_connection(topic, msgtype, typestore=ts)
            w.write(conns[topic], t, ts.serialize_cdr(msg, msgtype))
    return path


def test_jazzy_bag_and_header_stamps(tmp_path):
    # header stamps 30 ms before reception (pose-source delay): the stamps are used
    raw = read_bag(_write_v9(tmp_path / 'delayed', -30_000_000))
    np.testing.assert_allclose(raw.series['odom']['t'][:3], [-0.03, -0.02, -0.01], atol=1e-9)
    # header stamps on another clock (sim time from 0 vs wall-clock receive times): ignored
    raw = read_bag(_write_v9(tmp_path / 'other_clock', -T0))
    np.testing.assert_allclose(raw.series['odom']['t'][:3], [0.0, 0.01, 0.02], atol=1e-9)
