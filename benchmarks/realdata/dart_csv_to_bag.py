"""Convert a DART car's own data-logger CSV into a rosbag2 that ``recordings/example_dart_fast.yaml``
describes (benchmark tooling: more held-out recordings of the DART car than the two bags).

The builders publish their system-identification recordings as CSVs (``Lorenzo-Lyons/DART``,
``System_identification/Data/<folder>/car_1_Datarecording_*.csv``, columns ``elapsed time
sensors, current, voltage, acc x (IMU), acc y (IMU), W (IMU), vel encoder, safety_value,
throttle, steering, vicon time, vicon x, vicon y, vicon yaw``): one row per 10 ms logger tick
with the latest value of every channel. The 4 September rows match the realdata bags
``4_sept_random_driving_{fast,slow}.bag`` (``91_model_validation_long_term_predictions_fast``
and ``90_model_validation_long_term_predictions``); the 16 September ``91_free_driving_16_sept_2024``
rows are recordings the bags do not contain.

Each row becomes, stamped with its ``vicon time``: ``/vicon/jetracer1``
(geometry_msgs/PoseWithCovarianceStamped, frame ``map``, the Vicon body pose), ``/steering_1``,
``/throttle_1``, ``/safety_value`` (std_msgs/Float32) and ``/arduino_data_1``
(std_msgs/Float32MultiArray ``[acc x, acc y, W, vel encoder]``), the topics and types of the
bags. Rows whose Vicon time does not advance (the logger repeats a pose) are written once.

    python benchmarks/realdata/dart_csv_to_bag.py CSV OUT_BAG_DIR
"""

from __future__ import annotations

import math
from pathlib import Path
import sys

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))
from csv_logs import converter_main, read_columns

COLUMNS = ('elapsed time sensors', 'current', 'voltage', 'acc x (IMU)', 'acc y (IMU)',
           'W (IMU)', 'vel encoder', 'safety_value', 'throttle', 'steering', 'vicon time',
           'vicon x', 'vicon y', 'vicon yaw')


def read_dart_csv(path: Path) -> dict[str, NDArray[np.float64]]:
    """The columns of a DART logger CSV by name; rows with a non-finite value are dropped."""
    return read_columns(path, COLUMNS, 'DART logger CSV', min_rows=10)


def convert(csv: Path, out: Path) -> Path:
    """Write the rosbag2 (sqlite3) of ``csv`` to the directory ``out``; returns it."""
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_engine.output.bags import typestore

    cols = read_dart_csv(csv)
    t = cols['vicon time']
    keep = np.concatenate(([True], np.diff(t) > 0))   # one message per Vicon sample
    types = typestore().types
    f32 = types['std_msgs/msg/Float32']
    pose_cov = types['geometry_msgs/msg/PoseWithCovarianceStamped']
    with_cov_t, pose_t, point_t = (types['geometry_msgs/msg/PoseWithCovariance'],
                                   types['geometry_msgs/msg/Pose'],
                                   types['geometry_msgs/msg/Point'])
    quaternion = types['geometry_msgs/msg/Quaternion']
    header_t, time_t = types['std_msgs/msg/Header'], types['builtin_interfaces/msg/Time']
    array_t = types['std_msgs/msg/Float32MultiArray']
    layout_t = types['std_msgs/msg/MultiArrayLayout']
    with BagWriter(out, storage='sqlite3') as bag:
        for i in np.flatnonzero(keep):
            t_ns = round(float(t[i]) * 1e9)
            half = 0.5 * float(cols['vicon yaw'][i])
            header = header_t(stamp=time_t(sec=t_ns // 10**9, nanosec=t_ns % 10**9),
                              frame_id='map')
            point = point_t(x=float(cols['vicon x'][i]), y=float(cols['vicon y'][i]), z=0.0)
            bag.write('/vicon/jetracer1', 'geometry_msgs/msg/PoseWithCovarianceStamped', t_ns,
                      pose_cov(header=header, pose=with_cov_t(
                          pose=pose_t(position=point, orientation=quaternion(
                              x=0.0, y=0.0, z=math.sin(half), w=math.cos(half))),
                          covariance=np.zeros(36))))
            for topic, name in (('/steering_1', 'steering'), ('/throttle_1', 'throttle'),
                                ('/safety_value', 'safety_value')):
                bag.write(topic, 'std_msgs/msg/Float32', t_ns, f32(data=float(cols[name][i])))
            values = np.array([cols['acc x (IMU)'][i], cols['acc y (IMU)'][i],
                               cols['W (IMU)'][i], cols['vel encoder'][i]], dtype=np.float32)
            bag.write('/arduino_data_1', 'std_msgs/msg/Float32MultiArray', t_ns,
                      array_t(layout=layout_t(dim=[], data_offset=0), data=values))
    return out


def main(argv: list[str]) -> int:
    return converter_main(convert, __doc__.strip().splitlines()[-1].strip(), argv)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
