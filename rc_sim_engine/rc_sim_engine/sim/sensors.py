"""Sensor models of the embedded engine: 2D lidar, IMU, joint states, ground-truth odometry.

All specs (mount poses, beams, field of view, ranges, rates) come from vehicle.yaml
(:class:`~rc_sim_description.params.SensorParams`), the same numbers the URDF gives gz.

* Lidar: exact ray casting (:mod:`rc_sim_engine.world.raycast`) in the scan plane at height
  ``wheel_radius + lidar_mount_z`` above the ground (base_link is at axle height), so only
  obstacles crossing that plane are seen. Beam i looks at ``angle_min + i * fov / (samples - 1)``
  in the ``laser`` frame, as gz computes it. Ideal ranges optionally go through ``rc_sim_sensors``'
  error model.
* IMU: specific force at the mount point r (from the CG) in the body frame,
  ``f = a_cg + omega x (omega x r) + g e_z`` = ``(ax - r^2 rx, ay - r^2 ry, g)`` for planar motion
  with yaw rate r. The tangential term ``alpha x r`` is left out: the yaw acceleration is not
  exposed by the car model and the lever arm of the default mount is about 1 cm (|alpha x r| < 0.1
  m/s^2 for |alpha| < 10 rad/s^2). Orientation is the yaw quaternion, angular velocity ``(0, 0,
  r)``.
* Joint states: the six joints of docs/conventions.md from :meth:`Car.wheel_angles`.
* Odometry: base_link pose in ``odom`` and its twist in base_link (ground truth, like gz
  OdometryPublisher).
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.params import VehicleParams
from rc_sim_engine.world.sdf import World

__all__ = ['JOINT_NAMES', 'Lidar', 'footprint_segments', 'imu_specific_force',
           'lidar_pose']

FloatArray = NDArray[np.float64]

JOINT_NAMES: tuple[str, ...] = (
    'front_left_steering_joint', 'front_right_steering_joint', 'front_left_wheel_joint',
    'front_right_wheel_joint', 'rear_left_wheel_joint', 'rear_right_wheel_joint',
)


def lidar_pose(x: float, y: float, yaw: float,
               params: VehicleParams) -> tuple[float, float, float]:
    """World pose (x, y, heading) of the ``laser`` frame for a base_link pose (x, y, yaw)."""
    s = params.sensors
    c, sn = math.cos(yaw), math.sin(yaw)
    return (x + c * s.lidar_mount_x - sn * s.lidar_mount_y,
            y + sn * s.lidar_mount_x + c * s.lidar_mount_y, yaw + s.lidar_mount_yaw)


@dataclass
class Lidar:
    """A 2D lidar of the vehicle.yaml spec scanning a static world (plus optional extra
    segments)."""

    params: VehicleParams
    world: World

    def __post_init__(self) -> None:
        from rc_sim_engine.world.raycast import BeamFan  # (numba: not needed by the plain helpers)

        s = self.params.sensors
        self.fan = BeamFan(s.lidar_angle_min, s.lidar_angle_increment, s.lidar_samples)
        self.angles = self.fan.angles
        self.tables = (np.cos(self.angles), np.sin(self.angles))
        self.scan_height = self.params.geometry.wheel_radius + s.lidar_mount_z
        self.segments = np.ascontiguousarray(self.world.segments(self.scan_height))
        self.circles = np.ascontiguousarray(self.world.round_obstacles(self.scan_height))
        self.range_min = s.lidar_range_min
        self.range_max = s.lidar_range_max
        self.period = 1.0 / s.lidar_update_rate

    def scan(self, x: float, y: float, yaw: float, *, extra_segments: FloatArray | None = None,
             out: FloatArray | None = None,
             incidence_out: FloatArray | None = None) -> FloatArray:
        """Ideal ranges (B,) [m] for the car's base_link at (x, y, yaw) (REP 117 +-inf).

        ``incidence_out`` (B,) receives the incidence angles of the hits [rad] (NaN: no hit).
        """
        from rc_sim_engine.world.raycast import cast_rays

        ox, oy, heading = lidar_pose(x, y, yaw, self.params)
        segments = self.segments
        if extra_segments is not None and len(extra_segments):
            segments = np.concatenate([segments, extra_segments])
        return cast_rays(ox, oy, heading, self.fan, segments, self.circles, self.range_min,
                         self.range_max, out=out, tables=self.tables, cull_back_faces=True,
                         incidence_out=incidence_out)


def imu_specific_force(ax: FloatArray, ay: FloatArray, yaw_rate: FloatArray,
                       params: VehicleParams) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Specific force (fx, fy, fz) [m/s^2] at the IMU mount in the body frame (see module doc)."""
    s, g = params.sensors, params.geometry
    rx = s.imu_mount_x - g.cg_to_rear_axle  # mount relative to the CG (base_link is the rear axle)
    ry = s.imu_mount_y
    w2 = np.asarray(yaw_rate) ** 2
    fx = np.asarray(ax) - w2 * rx
    fy = np.asarray(ay) - w2 * ry
    return fx, fy, np.full_like(fx, GRAVITY_MPS2)


def footprint_segments(x: FloatArray, y: FloatArray, yaw: FloatArray, center_x: float,
                       half_length: float, half_width: float) -> FloatArray:
    """(4 N, 4) outline segments of N car footprints (other cars seen by a lidar)."""
    local = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    px = center_x + local[:, 0] * half_length
    py = local[:, 1] * half_width
    c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
    cx = x[:, None] + c * px[None, :] - s * py[None, :]
    cy = y[:, None] + s * px[None, :] + c * py[None, :]
    corners = np.stack([cx, cy], axis=-1)
    return np.concatenate([corners, np.roll(corners, -1, axis=1)], axis=-1).reshape(-1, 4)
