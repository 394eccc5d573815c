"""Convert a FrictionMaps data set (an F1TENTH car's CSV logs) into a rosbag2 that
``recordings/example_frictionmaps.yaml`` describes (benchmark tooling: more held-out recordings
of the F1TENTH car than DS1-DS3).

Upstream ``AhmadAmine998/FrictionMaps``, ``DataSets/DS<n>/``: ``commandData.csv`` (``s, ns, V,
delta``), ``pfPoseData.csv`` (``s, ns, x, y, q.x, q.y, q.z, q.w``) and ``imuData.csv`` (``s, ns,
..., ax, ay, az, wx, wy, wz, q.x, q.y, q.z, q.w``, accelerations in g and rates in deg/s). The
same encoding as the realdata ``frictionmaps_DS1..DS3`` bags (realdata README): one message per
row, header stamp = log time = the row's ``s, ns``; ``/drive``
(ackermann_msgs/AckermannDriveStamped: ``drive.speed = V``, ``drive.steering_angle = delta``),
``/pf/pose`` (geometry_msgs/PoseStamped, frame ``map``), ``/sensors/imu`` (sensor_msgs/Imu,
frame ``imu``, times 9.80665 and pi/180 to SI).

    python benchmarks/realdata/frictionmaps_csv_to_bag.py DS_DIR OUT_BAG_DIR
"""

from __future__ import annotations

import math
from pathlib import Path
import sys

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))
from csv_logs import converter_main, read_columns

G = 9.80665
FILES = {'commandData.csv': ('s', 'ns', 'V', 'delta'),
         'pfPoseData.csv': ('s', 'ns', 'x', 'y', 'q.x', 'q.y', 'q.z', 'q.w'),
         'imuData.csv': ('s', 'ns', 'ax', 'ay', 'az', 'wx', 'wy', 'wz', 'q.x', 'q.y', 'q.z',
                         'q.w')}


def convert(folder: Path, out: Path) -> Path:
    """Write the rosbag2 (sqlite3) of the data set ``folder`` to the directory ``out``."""
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_engine.output.bags import typestore

    tables = {name: read_columns(folder / name, cols, 'FrictionMaps log')
              for name, cols in FILES.items()}
    types = typestore().types
    time_t, header_t = types['builtin_interfaces/msg/Time'], types['std_msgs/msg/Header']
    vec, quat = types['geometry_msgs/msg/Vector3'], types['geometry_msgs/msg/Quaternion']
    point, pose_t = types['geometry_msgs/msg/Point'], types['geometry_msgs/msg/Pose']
    stamped = types['geometry_msgs/msg/PoseStamped']
    drive_t = types['ackermann_msgs/msg/AckermannDrive']
    drive_stamped = types['ackermann_msgs/msg/AckermannDriveStamped']
    imu_t = types['sensor_msgs/msg/Imu']
    zeros9 = np.zeros(9)

    def header(c: dict[str, NDArray[np.float64]], i: int, frame: str) -> tuple[int, object]:
        sec, nsec = int(c['s'][i]), int(c['ns'][i])
        return sec * 10**9 + nsec, header_t(stamp=time_t(sec=sec, nanosec=nsec), frame_id=frame)

    def q(c: dict[str, NDArray[np.float64]], i: int) -> object:
        return quat(x=float(c['q.x'][i]), y=float(c['q.y'][i]), z=float(c['q.z'][i]),
                    w=float(c['q.w'][i]))

    events: list[tuple[int, str, str, object]] = []
    c = tables['commandData.csv']
    for i in range(c['s'].size):
        t_ns, h = header(c, i, '')
        events.append((t_ns, '/drive', 'ackermann_msgs/msg/AckermannDriveStamped', drive_stamped(
            header=h, drive=drive_t(steering_angle=float(c['delta'][i]),
                                    steering_angle_velocity=0.0, speed=float(c['V'][i]),
                                    acceleration=0.0, jerk=0.0))))
    c = tables['pfPoseData.csv']
    for i in range(c['s'].size):
        t_ns, h = header(c, i, 'map')
        events.append((t_ns, '/pf/pose', 'geometry_msgs/msg/PoseStamped', stamped(
            header=h, pose=pose_t(position=point(x=float(c['x'][i]), y=float(c['y'][i]), z=0.0),
                                  orientation=q(c, i)))))
    c = tables['imuData.csv']
    for i in range(c['s'].size):
        t_ns, h = header(c, i, 'imu')
        events.append((t_ns, '/sensors/imu', 'sensor_msgs/msg/Imu', imu_t(
            header=h, orientation=q(c, i), orientation_covariance=zeros9,
            angular_velocity=vec(x=math.radians(c['wx'][i]), y=math.radians(c['wy'][i]),
                                 z=math.radians(c['wz'][i])),
            angular_velocity_covariance=zeros9,
            linear_acceleration=vec(x=G * c['ax'][i], y=G * c['ay'][i], z=G * c['az'][i]),
            linear_acceleration_covariance=zeros9)))
    events.sort(key=lambda e: e[0])
    with BagWriter(out, storage='sqlite3') as bag:
        for t_ns, topic, msgtype, msg in events:
            bag.write(topic, msgtype, t_ns, msg)
    return out


def main(argv: list[str]) -> int:
    return converter_main(convert, __doc__.strip().splitlines()[-1].strip(), argv)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
