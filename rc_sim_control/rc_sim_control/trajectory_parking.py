"""The open-loop parallel-parking steering/speed profile of I. E. Paromtchik and C. Laugier
("Autonomous parallel parking of a nonholonomic vehicle", IEEE Intelligent Vehicles Symposium
1996)."""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
import numpy.typing as npt

from rc_sim_control.trajectory_base import (
    FloatArray,
    _as_time,
    _positive,
)
from rc_sim_description.errors import ConfigError

__all__ = [
    'ParkingProfile',
    'parking_profile_limits',
]


@dataclass(frozen=True)
class ParkingProfile:
    """Open-loop parallel-parking commands over a manoeuvre of duration T (Paromtchik & Laugier).

    delta(t) = delta_max k_d A(t), v(t) = v_max k_v B(t) with A = 1 on [0, t'),
    cos(pi (t - t') / T*) on [t', T - t'], -1 after,
    t' = (T - T*) / 2; B(t) = (1 - cos(4 pi t / T)) / 2.
    ``k_delta`` = +1 steers left first (REP 103: positive angles turn left), ``k_v`` = -1
    reverses.
    """

    duration: float
    steer_time: float
    max_steering: float
    max_speed: float
    k_delta: float = 1.0
    k_v: float = -1.0

    def __post_init__(self) -> None:
        _positive('duration', self.duration)
        _positive('steer_time', self.steer_time)
        _positive('max_steering', self.max_steering)
        _positive('max_speed', self.max_speed)
        if self.steer_time > self.duration:
            raise ConfigError(f"parking parameter 'steer_time': T* must be <= T "
                              f'({self.duration}), '
                              f'got {self.steer_time}')
        for key in ('k_delta', 'k_v'):
            if getattr(self, key) not in (-1.0, 1.0):
                raise ConfigError(f'parking parameter {key!r}: must be +1 or -1')

    def commands(self, t: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """(speed [m/s], steering angle [rad]) at times ``t``; zero outside [0, T]."""
        tt = _as_time(t)
        big_t, t_star = self.duration, self.steer_time
        t1 = 0.5 * (big_t - t_star)
        a = np.where(tt < t1, 1.0, np.where(tt > big_t - t1, -1.0,
                                            np.cos(math.pi * (tt - t1) / t_star)))
        b = 0.5 * (1.0 - np.cos(4.0 * math.pi * tt / big_t))
        inside = (tt >= 0.0) & (tt <= big_t)
        return (np.where(inside, self.max_speed * self.k_v * b, 0.0),
                np.where(inside, self.max_steering * self.k_delta * a, 0.0))


def parking_profile_limits(max_steering: float, max_steering_rate: float, max_speed: float,
                           max_acceleration: float,
                           max_steering_acceleration: float | None = None) -> tuple[float, float]:
    """The shortest (T*, T) of :class:`ParkingProfile` the actuator limits allow.

    The steering cosine has peak rate pi delta_max / T* and peak acceleration
    pi^2 delta_max / T*^2, so T*_min = pi max(delta_max / rate_max, sqrt(delta_max / accel_max))
    The speed profile has peak acceleration 2 pi v_max / T, so
    T_min = max(2 pi v_max / a_max, T*) (the exact peak of B).
    """
    t_star = math.pi * max_steering / max_steering_rate
    if max_steering_acceleration is not None:
        t_star = max(t_star, math.pi * math.sqrt(max_steering / max_steering_acceleration))
    return t_star, max(2.0 * math.pi * max_speed / max_acceleration, t_star)
