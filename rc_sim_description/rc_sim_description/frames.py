"""Planar rotations as quaternions (REP 103: z up, yaw counter-clockwise), vectorised, and the
names of several cars' topics and frames.

A rotation by yaw psi about z is q = (x, y, z, w) = (0, 0, sin(psi/2), cos(psi/2)); the yaw of
a unit quaternion in the ZYX (yaw-pitch-roll) convention is
psi = atan2(2 (w z + x y), 1 - 2 (y^2 + z^2)) (Diebel, "Representing Attitude", 2006, eq. 290).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ['car_namespaces', 'frame_prefix', 'quaternion_to_yaw', 'yaw_to_quaternion']

FloatArray = npt.NDArray[np.float64]


def yaw_to_quaternion(yaw: npt.ArrayLike) -> FloatArray:
    """(x, y, z, w) of rotations by ``yaw`` [rad] about z: shape ``yaw.shape + (4,)``."""
    half = 0.5 * np.asarray(yaw, dtype=np.float64)
    zeros = np.zeros_like(half)
    return np.stack([zeros, zeros, np.sin(half), np.cos(half)], axis=-1)


def quaternion_to_yaw(qx: npt.ArrayLike, qy: npt.ArrayLike, qz: npt.ArrayLike,
                      qw: npt.ArrayLike) -> FloatArray:
    """Yaw [rad] in (-pi, pi] of unit quaternions, element-wise (ZYX convention)."""
    x, y, z, w = (np.asarray(v, dtype=np.float64) for v in (qx, qy, qz, qw))
    return np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def car_namespaces(n: int) -> list[str]:
    """Namespace of each car's topics and frames: none for one car, ``car_<i>`` for several
    (bags, ``sim_node`` and the Gazebo launch alike)."""
    return [''] if n == 1 else [f'car_{i}' for i in range(n)]


def frame_prefix(namespace: str) -> str:
    """Prefix of a car's frame ids (robot_state_publisher's ``frame_prefix``): ``car_1/`` or
    none."""
    return f'{namespace}/' if namespace else ''
