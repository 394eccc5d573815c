"""Ackermann geometry: the bicycle steering angle split into the two front hinge angles (and
back), rear wheel speeds with an electronic differential, the four joint commands, and the
``rear_wheel_speed_bridge`` state that republishes them.

R. Rajamani, *Vehicle Dynamics and Control*, ch. 2: ``delta_in = atan(L / (R - W/2))``,
``delta_out = atan(L / (R + W/2))`` (signed R, see :func:`ackermann_split`).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any

import numpy as np

from rc_sim_control.mapper_config import (
    ArrayLike,
    FloatArray,
    MapperConfig,
)

__all__ = [
    'BridgeState',
    'JointCommands',
    'ackermann_split',
    'bicycle_steering_angle',
    'joint_commands',
    'rear_wheel_speeds',
]


def ackermann_split(steering_angle: ArrayLike, wheelbase: float,
                    track_width: float) -> tuple[FloatArray, FloatArray]:
    """Left and right front wheel angles [rad] of the bicycle angle delta: eq. (4).

    With the signed radius R = L / tan(delta) (+ = left turn), ``delta_left = atan(L / (R - W/2))``
    and ``delta_right = atan(L / (R + W/2))``: in a left turn the left wheel is the inner one, in a
    right turn (R < 0) the right one, and |delta_inner| >= |delta_outer|. Written as
    ``atan(L tan(delta) / (L -+ W/2 tan(delta)))``, so delta = 0 (R = inf) needs no special case.
    """
    tan_delta = np.tan(np.asarray(steering_angle, dtype=np.float64))
    num = wheelbase * tan_delta
    half = 0.5 * track_width * tan_delta
    with np.errstate(divide='ignore', over='ignore'):
        left = np.arctan(num / (wheelbase - half))
        right = np.arctan(num / (wheelbase + half))
    return left, right


def rear_wheel_speeds(wheel_speed: ArrayLike, steering_angle: ArrayLike, wheelbase: float,
                      track_width: float, *,
                      electronic_differential: bool = False) -> tuple[FloatArray, FloatArray]:
    """Left and right rear wheel speeds [rad/s] for the centre speed omega = v / r [rad/s].

    Mechanical differential (default): both get omega (the joint controllers share the command).
    Electronic differential: ``omega_{l,r} = omega (1 -+ W / (2 R)) = omega (1 -+ W tan(delta) /
    (2 L))`` (each wheel rolls on its own circle around the instantaneous centre).
    """
    omega = np.asarray(wheel_speed, dtype=np.float64)
    if not electronic_differential:
        omega_b = np.broadcast_to(omega, np.broadcast_shapes(
            omega.shape, np.shape(steering_angle))).astype(np.float64)
        return omega_b, omega_b.copy()
    k = 0.5 * track_width * np.tan(np.asarray(steering_angle, dtype=np.float64)) / wheelbase
    return omega * (1.0 - k), omega * (1.0 + k)


@dataclass(frozen=True)
class JointCommands:
    """Per-joint commands of the bridge: hinge angles [rad] and rear wheel speeds [rad/s]."""

    front_left_steering: FloatArray
    front_right_steering: FloatArray
    rear_left_wheel: FloatArray
    rear_right_wheel: FloatArray


def joint_commands(steering_angle: ArrayLike, wheel_speed: ArrayLike,
                   config: MapperConfig) -> JointCommands:
    """``rear_wheel_speed_bridge`` core: (delta, omega) -> the four joint commands.

    delta is clipped to +-max_steering_angle and split by :func:`ackermann_split` (eq. 4); omega is
    clipped to +-max_wheel_speed and split by :func:`rear_wheel_speeds` (electronic differential
    per ``config``; when the outer wheel would pass max_wheel_speed both wheels are scaled down
    together, keeping eq. (5)'s ratio: clipping the outer one alone would make the pair slip).
    Non-finite inputs count as 0 (never NaN out).
    """
    delta = np.nan_to_num(np.asarray(steering_angle, dtype=np.float64), nan=0.0, posinf=0.0,
                          neginf=0.0)
    omega = np.nan_to_num(np.asarray(wheel_speed, dtype=np.float64), nan=0.0, posinf=0.0,
                          neginf=0.0)
    delta = np.clip(delta, -config.max_steering_angle, config.max_steering_angle)
    omega = np.clip(omega, -config.max_wheel_speed, config.max_wheel_speed)
    left, right = ackermann_split(delta, config.wheelbase, config.track_width)
    rear_l, rear_r = rear_wheel_speeds(omega, delta, config.wheelbase, config.track_width,
                                       electronic_differential=config.electronic_differential)
    w_max = config.max_wheel_speed
    fastest = np.maximum(np.abs(rear_l), np.abs(rear_r))
    scale = np.where(fastest > w_max, w_max / np.maximum(fastest, 1e-300), 1.0)
    return JointCommands(front_left_steering=left, front_right_steering=right,
                         rear_left_wheel=rear_l * scale, rear_right_wheel=rear_r * scale)


class BridgeState:
    """``rear_wheel_speed_bridge`` state: last steering angle and wheel speed, republished.

    Non-finite inputs are rejected (counted, state unchanged). The wheel speed falls to 0 when no
    wheel-speed input arrived for ``config.command_timeout`` s (or none yet, or the clock went
    back before the last one); the steering angle is held (a servo keeps its position).

    ``drive`` (a throttle or acceleration car, :class:`rc_sim_control.drive_twin.
    LongitudinalTwin`): the wheel speed received is the target of the car's speed controller,
    and the command published is the speed of its drive model, integrated between calls of
    :meth:`commands`. ``steering_range`` (a normalised-servo car): the angle is held within the
    ends of its map.
    """

    def __init__(self, config: MapperConfig, drive: Any = None,
                 steering_range: tuple[float, float] | None = None) -> None:
        self.config = config
        self.drive = drive
        self.steering_range = steering_range
        self.steering_angle = 0.0
        self.wheel_speed = 0.0
        self.rejected_count = 0
        self._speed_t: float | None = None
        self._drive_t: float | None = None

    def set_steering_angle(self, value: float) -> bool:
        """Store delta [rad]; False (rejected) if not finite."""
        if not math.isfinite(value):
            self.rejected_count += 1
            return False
        self.steering_angle = float(value)
        return True

    def set_wheel_speed(self, value: float, t: float) -> bool:
        """Store omega [rad/s] received at ``t`` [s]; False (rejected) if not finite."""
        if not (math.isfinite(value) and math.isfinite(t)):
            self.rejected_count += 1
            return False
        self.wheel_speed = float(value)
        self._speed_t = float(t)
        return True

    def timed_out(self, t: float) -> bool:
        """No wheel speed for more than ``command_timeout`` s before ``t`` (or none yet, or
        ``t`` before the last one: the clock jumped back, the age of the command is unknown)."""
        if self._speed_t is None:
            return True
        return not 0.0 <= t - self._speed_t <= self.config.command_timeout

    def commands(self, t: float) -> JointCommands:
        """Joint commands to publish at ``t`` (:func:`joint_commands` of the held values; with
        a drive model, of its speed advanced to ``t``)."""
        omega = 0.0 if self.timed_out(t) else self.wheel_speed
        delta = self.steering_angle
        if self.steering_range is not None:
            delta = min(max(delta, self.steering_range[0]), self.steering_range[1])
        if self.drive is not None:
            dt = 0.0 if self._drive_t is None or not math.isfinite(t) else t - self._drive_t
            if math.isfinite(t):
                self._drive_t = t
            omega = self.drive.advance(omega, delta, dt) if dt > 0.0 else \
                self.drive.speed / self.drive.params.effective_wheel_radius
        return joint_commands(delta, omega, self.config)


def bicycle_steering_angle(left_angle: ArrayLike, right_angle: ArrayLike, wheelbase: float,
                           track_width: float) -> FloatArray:
    """Bicycle angle delta from measured hinge angles: the inverse of :func:`ackermann_split`.

    Each wheel gives ``tan(delta) = L tan(d) / (L +- W/2 tan(d))`` (+ left, - right); the two
    estimates are averaged in tan space (they agree for an exact Ackermann linkage).
    """
    tl = np.tan(np.asarray(left_angle, dtype=np.float64))
    tr = np.tan(np.asarray(right_angle, dtype=np.float64))
    half = 0.5 * track_width
    with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
        tan_left = wheelbase * tl / (wheelbase + half * tl)
        tan_right = wheelbase * tr / (wheelbase - half * tr)
    return np.arctan(0.5 * (tan_left + tan_right))
