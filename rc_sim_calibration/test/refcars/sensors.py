"""Sensor models: motion-capture /odom, gyro /imu, wheel encoders /joint_states, /tf_static.

* /odom (nav_msgs/Odometry, frame ``odom``): pose of the MEASURED point (the mocap body frame,
  offset (x, y, yaw) in base_link) with white position and yaw noise; frames dropped with a small
  probability (occlusion). The twist is the velocity of that point in its own frame (REP 105:
  the twist is expressed in ``child_frame_id``) plus white noise. Header stamp = exposure time;
  log time = stamp + transport delay + jitter.
* /imu (sensor_msgs/Imu, frame ``imu_link``): yaw rate + bias + white noise, the bias a random
  walk from its start offset (the usual MEMS gyro model, e.g. IEEE Std 952 rate random walk);
  specific force at the mount point a_P = a_CG + dr/dt x rho + r x (r x rho) (rigid body,
  planar), + g on z. No orientation estimate: ``orientation_covariance[0] = -1`` (sensor_msgs/Imu
  definition).
* /joint_states: rear wheel angles and speeds with white speed noise.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .trace import TopicSeries

if TYPE_CHECKING:
    from .base import RefCar

__all__ = ['measure']

GRAVITY = 9.80665
DROPOUT_PROBABILITY = 0.002   # mocap frames lost (occlusion) when noise is on
LOG_JITTER = 0.0003           # s, sigma of |jitter| added to log times when noise is on


def _sample_times(duration: float, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Sensor clock: k / rate + a phase in [0, 1/rate), up to ``duration``."""
    phase = rng.uniform(0.0, 1.0 / rate)
    return phase + np.arange(math.floor((duration - phase) * rate) + 1) / rate


def _log_times(stamp: np.ndarray, transport: float, rng: np.random.Generator,
               noise: bool) -> np.ndarray:
    jitter = np.abs(rng.normal(0.0, LOG_JITTER, stamp.size)) if noise else 0.0
    return stamp + transport + jitter


def _interp(t: np.ndarray, true: dict[str, np.ndarray], key: str) -> np.ndarray:
    return np.interp(t, true['t'], true[key])


def _odom(car: RefCar, true: dict[str, np.ndarray], rng: np.random.Generator,
          noise: bool) -> TopicSeries:
    c = car.sensor
    stamp = _sample_times(float(true['t'][-1]), c['pose_rate'], rng)
    if noise:
        stamp = stamp[rng.random(stamp.size) >= DROPOUT_PROBABILITY]
    n = stamp.size
    k = 1.0 if noise else 0.0
    fields = {
        'x': _interp(stamp, true, 'x_meas') + k * rng.normal(0, c['pose_noise'], n),
        'y': _interp(stamp, true, 'y_meas') + k * rng.normal(0, c['pose_noise'], n),
        'yaw': _interp(stamp, true, 'yaw_meas') + k * rng.normal(0, c['yaw_noise'], n),
        'vx': _interp(stamp, true, 'vx_meas') + k * rng.normal(0, c['twist_noise'], n),
        'vy': _interp(stamp, true, 'vy_meas') + k * rng.normal(0, c['twist_noise'], n),
        'wz': _interp(stamp, true, 'yaw_rate') + k * rng.normal(0, c['twist_rate_noise'], n),
    }
    fields['yaw'] = np.angle(np.exp(1j * fields['yaw']))  # wrapped to (-pi, pi]
    pose_var = [c['pose_noise'] ** 2] * 3 + [c['yaw_noise'] ** 2] * 3
    twist_var = [c['twist_noise'] ** 2] * 3 + [c['twist_rate_noise'] ** 2] * 3
    return TopicSeries('/odom', 'nav_msgs/msg/Odometry',
                       _log_times(stamp, c['pose_transport'], rng, noise), fields, stamp,
                       {'frame_id': 'odom', 'child_frame_id': car.measured_frame,
                        'pose_covariance': np.diag(pose_var).ravel(),
                        'twist_covariance': np.diag(twist_var).ravel()})


def _imu(car: RefCar, true: dict[str, np.ndarray], rng: np.random.Generator,
         noise: bool) -> TopicSeries:
    c = car.sensor
    stamp = _sample_times(float(true['t'][-1]), c['imu_rate'], rng)
    n = stamp.size
    if noise:
        dt = np.diff(stamp, prepend=0.0)
        bias = c['gyro_bias'] + np.cumsum(c['gyro_bias_walk'] * np.sqrt(dt) * rng.normal(size=n))
        gyro_noise = rng.normal(0, c['gyro_noise'], n)
        acc_noise = rng.normal(0, c['accel_noise'], (3, n))
    else:
        bias = gyro_noise = np.zeros(n)
        acc_noise = np.zeros((3, n))
    r = _interp(stamp, true, 'yaw_rate')
    rdot = _interp(stamp, true, 'yaw_acc')
    rho = car.imu_mount_x - car.lr  # IMU ahead of the CG [m], on the centre line
    fields = {
        'wz': r + bias + gyro_noise,
        'ax': _interp(stamp, true, 'ax') - r * r * rho + acc_noise[0],
        'ay': _interp(stamp, true, 'ay') + rdot * rho + acc_noise[1],
        'az': GRAVITY + acc_noise[2],
        'bias': bias,  # ground truth, not written to the bag
    }
    return TopicSeries('/imu', 'sensor_msgs/msg/Imu', _log_times(stamp, 0.0015, rng, noise),
                       fields, stamp,
                       {'frame_id': 'imu_link', 'gyro_var': c['gyro_noise'] ** 2,
                        'accel_var': c['accel_noise'] ** 2})


def _joint_states(car: RefCar, true: dict[str, np.ndarray], rng: np.random.Generator,
                  noise: bool) -> TopicSeries:
    c = car.sensor
    stamp = _sample_times(float(true['t'][-1]), c['joint_rate'], rng)
    n = stamp.size
    k = 1.0 if noise else 0.0
    velocity = np.stack([_interp(stamp, true, 'wheel_speed_left'),
                         _interp(stamp, true, 'wheel_speed_right')], axis=1)
    position = np.stack([_interp(stamp, true, 'wheel_angle_left'),
                         _interp(stamp, true, 'wheel_angle_right')], axis=1)
    velocity = velocity + k * rng.normal(0, c['wheel_speed_noise'], (n, 2))
    return TopicSeries('/joint_states', 'sensor_msgs/msg/JointState',
                       _log_times(stamp, 0.001, rng, noise),
                       {'position': position, 'velocity': velocity}, stamp,
                       {'name': ['rear_left_wheel_joint', 'rear_right_wheel_joint']})


def _tf_static(car: RefCar) -> TopicSeries:
    x, y, yaw = car.odom_offset
    return TopicSeries('/tf_static', 'tf2_msgs/msg/TFMessage', np.array([0.0]),
                       {'x': np.array([x]), 'y': np.array([y]), 'yaw': np.array([yaw])},
                       np.array([0.0]),
                       {'frame_id': 'base_link', 'child_frame_id': car.measured_frame})


def measure(car: RefCar, true: dict[str, np.ndarray], rng: np.random.Generator, *,
            noise: bool = True, joint_states: bool = True,
            tf_static: bool = False) -> list[TopicSeries]:
    """All measurement topics of one run (``rng`` drives clocks, noise and bias)."""
    series = [_odom(car, true, rng, noise), _imu(car, true, rng, noise)]
    if joint_states:
        series.append(_joint_states(car, true, rng, noise))
    if tf_static:
        series.append(_tf_static(car))
    return series
