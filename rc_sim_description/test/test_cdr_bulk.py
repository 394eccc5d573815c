"""Bulk CDR serialisation: byte for byte what the rosbags serializer writes, for every message
type the engine writes, with frame ids and names of every length modulo 8 (string padding and the
alignment of the doubles that follow), empty and non-empty sequences and any stamp."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.bags import cdr_bulk
from rc_sim_description.bags.typestore import base_typestore

STORE = base_typestore()
T = STORE.types
RNG = np.random.default_rng(20261124)
STAMPS = np.array([0, 1, 999_999_999, 1_000_000_000, 1_500_000_001, 123_456_789_012_345])
FRAMES = ['', 'a', 'ab', 'odom', 'laser', 'base_link', 'car_12/imu_link', 'x' * 13]


def serialize(msg: object, msgtype: str) -> bytes:
    return bytes(STORE.serialize_cdr(msg, msgtype))


def stamp(t_ns: int) -> object:
    sec, nanosec = divmod(int(t_ns), 1_000_000_000)
    return T['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec)


def header(t_ns: int, frame: str) -> object:
    return T['std_msgs/msg/Header'](stamp=stamp(t_ns), frame_id=frame)


def vec(v: np.ndarray) -> object:
    return T['geometry_msgs/msg/Vector3'](x=float(v[0]), y=float(v[1]), z=float(v[2]))


def quat(q: np.ndarray) -> object:
    return T['geometry_msgs/msg/Quaternion'](x=float(q[0]), y=float(q[1]), z=float(q[2]),
                                             w=float(q[3]))


def rows_equal(rows: np.ndarray, expected: list[bytes]) -> None:
    assert rows.dtype == np.uint8 and rows.shape[0] == len(expected)
    for k, ref in enumerate(expected):
        assert bytes(rows[k]) == ref, f'message {k} differs'


def values(n: int, width: int) -> np.ndarray:
    out = RNG.normal(size=(n, width)) * 10.0 ** RNG.integers(-3, 4, size=(n, 1))
    out[0, 0] = -0.0
    return out


def test_clock_and_float64() -> None:
    rows_equal(cdr_bulk.clock(STAMPS), [
        serialize(T['rosgraph_msgs/msg/Clock'](clock=stamp(t)), 'rosgraph_msgs/msg/Clock')
        for t in STAMPS])
    data = np.array([0.0, -0.0, 1.5, math.pi, np.inf, -1e300])
    rows_equal(cdr_bulk.float64(data), [
        serialize(T['std_msgs/msg/Float64'](data=float(v)), 'std_msgs/msg/Float64')
        for v in data])


def test_twist() -> None:
    lin, ang = values(5, 3), values(5, 3)
    rows_equal(cdr_bulk.twist(lin, ang), [
        serialize(T['geometry_msgs/msg/Twist'](linear=vec(lin[k]), angular=vec(ang[k])),
                  'geometry_msgs/msg/Twist') for k in range(5)])


@pytest.mark.parametrize('frame', FRAMES)
@pytest.mark.parametrize('child', ['base_link', 'b', ''])
def test_odometry(frame: str, child: str) -> None:
    n = len(STAMPS)
    pos, q, lin, ang = values(n, 3), values(n, 4), values(n, 3), values(n, 3)
    pose_cov, twist_cov = RNG.normal(size=36), RNG.normal(size=(n, 36))
    rows = cdr_bulk.odometry(STAMPS, frame, child, pos, q, lin, ang, pose_covariance=pose_cov,
                             twist_covariance=twist_cov)
    expected = []
    for k, t in enumerate(STAMPS):
        pose = T['geometry_msgs/msg/Pose'](position=T['geometry_msgs/msg/Point'](
            x=pos[k, 0], y=pos[k, 1], z=pos[k, 2]), orientation=quat(q[k]))
        expected.append(serialize(T['nav_msgs/msg/Odometry'](
            header=header(t, frame), child_frame_id=child,
            pose=T['geometry_msgs/msg/PoseWithCovariance'](pose=pose, covariance=pose_cov),
            twist=T['geometry_msgs/msg/TwistWithCovariance'](
                twist=T['geometry_msgs/msg/Twist'](linear=vec(lin[k]), angular=vec(ang[k])),
                covariance=twist_cov[k])), 'nav_msgs/msg/Odometry'))
    rows_equal(rows, expected)


@pytest.mark.parametrize('frame', FRAMES)
def test_tf_message_and_imu(frame: str) -> None:
    n = len(STAMPS)
    xyz, q, w, a = values(n, 3), values(n, 4), values(n, 3), values(n, 3)
    rows_equal(cdr_bulk.tf_message(STAMPS, frame, frame + '_child', xyz, q), [
        serialize(T['tf2_msgs/msg/TFMessage'](transforms=[
            T['geometry_msgs/msg/TransformStamped'](
                header=header(t, frame), child_frame_id=frame + '_child',
                transform=T['geometry_msgs/msg/Transform'](translation=vec(xyz[k]),
                                                           rotation=quat(q[k])))]),
                  'tf2_msgs/msg/TFMessage') for k, t in enumerate(STAMPS)])
    cov = RNG.normal(size=9)
    rows_equal(cdr_bulk.imu(STAMPS, frame, q, w, a, linear_acceleration_covariance=cov), [
        serialize(T['sensor_msgs/msg/Imu'](
            header=header(t, frame), orientation=quat(q[k]),
            orientation_covariance=np.zeros(9), angular_velocity=vec(w[k]),
            angular_velocity_covariance=np.zeros(9), linear_acceleration=vec(a[k]),
            linear_acceleration_covariance=cov), 'sensor_msgs/msg/Imu')
        for k, t in enumerate(STAMPS)])


@pytest.mark.parametrize('names', [
    ['front_left_steering_joint', 'front_right_steering_joint', 'front_left_wheel_joint',
     'front_right_wheel_joint', 'rear_left_wheel_joint', 'rear_right_wheel_joint'],
    ['a'], ['ab', 'abc', ''], []])
@pytest.mark.parametrize('with_velocity', [True, False])
@pytest.mark.parametrize('frame', ['', 'base_link', 'abc'])
def test_joint_state(names: list[str], with_velocity: bool, frame: str) -> None:
    n, j = len(STAMPS), len(names)
    pos, vel, eff = values(n, max(j, 1))[:, :j], values(n, max(j, 1))[:, :j], values(n, 1)
    effort = np.repeat(eff, j, axis=1) if j else None
    rows = cdr_bulk.joint_state(STAMPS, frame, names, pos, vel if with_velocity else None,
                                effort if with_velocity else None)
    rows_equal(rows, [serialize(T['sensor_msgs/msg/JointState'](
        header=header(t, frame), name=list(names), position=pos[k],
        velocity=vel[k] if with_velocity else np.zeros(0),
        effort=effort[k] if with_velocity and effort is not None else np.zeros(0)),
        'sensor_msgs/msg/JointState') for k, t in enumerate(STAMPS)])


@pytest.mark.parametrize('beams', [0, 1, 2, 3, 5, 1081])
@pytest.mark.parametrize('frame', ['laser', 'car_3/laser', ''])
@pytest.mark.parametrize('intensities', [0, 1, None])
def test_laser_scan(beams: int, frame: str, intensities: int | None) -> None:
    n = len(STAMPS)
    ranges = RNG.uniform(0.0, 30.0, size=(n, beams)).astype(np.float32)
    if beams:
        ranges[0, 0], ranges[-1, -1] = np.inf, -np.inf
    inten = (None if intensities is None
             else RNG.uniform(size=(n, beams * intensities)).astype(np.float32))
    fields = {'angle_min': -2.356, 'angle_max': 2.356, 'angle_increment': 0.004363,
              'time_increment': 0.0, 'scan_time': 0.025, 'range_min': 0.02, 'range_max': 30.0}
    rows = cdr_bulk.laser_scan(STAMPS, frame, ranges=ranges, intensities=inten, **fields)
    rows_equal(rows, [serialize(T['sensor_msgs/msg/LaserScan'](
        header=header(t, frame), ranges=ranges[k],
        intensities=np.zeros(0, np.float32) if inten is None else inten[k], **fields),
        'sensor_msgs/msg/LaserScan') for k, t in enumerate(STAMPS)])


def test_transforms_and_string() -> None:
    parents = ['base_link', 'chassis_link', 'chassis_link', 'car_1/x']
    children = ['chassis_link', 'imu_link', 'laser', 'y']
    xyz, q = values(4, 3), values(4, 4)
    t = 2_000_000_123
    rows = cdr_bulk.transforms(t, parents, children, xyz, q)
    assert rows.shape[0] == 1
    assert bytes(rows[0]) == serialize(T['tf2_msgs/msg/TFMessage'](transforms=[
        T['geometry_msgs/msg/TransformStamped'](
            header=header(t, parents[k]), child_frame_id=children[k],
            transform=T['geometry_msgs/msg/Transform'](translation=vec(xyz[k]),
                                                       rotation=quat(q[k])))
        for k in range(4)]), 'tf2_msgs/msg/TFMessage')
    for text in ('', 'a', '<robot name="ü">\n</robot>'):
        assert bytes(cdr_bulk.string(text)[0]) == serialize(
            T['std_msgs/msg/String'](data=text), 'std_msgs/msg/String')


def test_round_trip_decodes_and_no_rows() -> None:
    rows = cdr_bulk.odometry(STAMPS[:2], 'odom', 'base_link', [[1.0, 2.0, 0.0]] * 2,
                             [0.0, 0.0, 0.0, 1.0], np.zeros(3), np.zeros(3))
    msg = STORE.deserialize_cdr(bytes(rows[1]), 'nav_msgs/msg/Odometry')
    assert msg.pose.pose.position.y == 2.0 and msg.header.stamp.nanosec == 1
    assert cdr_bulk.clock(np.zeros(0, dtype=np.int64)).shape == (0, 12)


def test_layout_needs_every_field() -> None:
    layout = cdr_bulk.Layout()
    layout.field('a', '<f8')
    layout.field('b', '<u4', 3)
    with pytest.raises(ValueError, match="no values for \\['b'\\]"):
        layout.pack(2, a=[1.0, 2.0])
    assert layout.size == 4 + 8 + 12


def test_no_scans_make_no_rows() -> None:
    """A chunk in which every scan of a car was lost (a live step of a few ms with a lossy error
    model) serialises to zero messages instead of failing to shape zero beams."""
    rows = cdr_bulk.laser_scan(np.zeros(0, dtype=np.int64), 'laser', -1.0, 1.0, 0.01, 0.0, 0.025,
                          0.1, 10.0, np.zeros((0, 201), dtype=np.float32))
    assert rows.shape[0] == 0
