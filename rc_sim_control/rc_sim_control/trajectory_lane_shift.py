"""Quintic (minimum-jerk) lateral lane shift along a path.

W. Nelson, "Continuous-curvature paths for autonomous vehicles", IEEE ICRA 1989.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
import numpy.typing as npt

from rc_sim_control.trajectory_base import (
    MAX_PATH_LENGTH,
    MAX_TRAJECTORY_SIZE,
    FloatArray,
    _at_most,
    _nonzero,
    _positive,
)
from rc_sim_description.errors import ConfigError

__all__ = [
    'LANE_SHIFT_K',
    'LaneShift',
    'lane_shift_max_curvature',
    'min_lane_shift_length',
    'quintic_shift',
]

LANE_SHIFT_K = 1.17  # empirical constant of the shortest shift (pi^2 k / 2 ~ 10/sqrt(3), below)


def quintic_shift(s: npt.ArrayLike, d_r: float, s_t: float) -> tuple[FloatArray, FloatArray,
                                                                    FloatArray]:
    """Quintic lane shift d(s) = d_r (10 u^3 - 15 u^4 + 6 u^5), u = s / S_T clipped to [0, 1].

    Returns d [m], d' = dd/ds [-], d'' [1/m]; d' and d'' vanish at both ends (C2 joins).
    """
    u = np.clip(np.asarray(s, dtype=float) / s_t, 0.0, 1.0)
    d = d_r * u ** 3 * (10 - 15 * u + 6 * u * u)
    d1 = d_r / s_t * 30 * u ** 2 * (1 - u) ** 2
    d2 = d_r / s_t ** 2 * 60 * u * (1 - u) * (1 - 2 * u)
    return d, d1, d2


def lane_shift_max_curvature(max_steering_angle: float, wheelbase: float,
                             max_lateral_acceleration: float, speed: float) -> float:
    """Largest usable curvature C_max = min(tan(delta_max) / L, gamma_max / v^2) [1/m]."""
    c_steer = math.tan(max_steering_angle) / wheelbase
    if speed == 0.0:
        return c_steer
    return min(c_steer, max_lateral_acceleration / speed ** 2)


def min_lane_shift_length(d_r: float, c_max: float, k: float = LANE_SHIFT_K) -> float:
    """Shortest lane shift S_T,min = pi sqrt(k |d_r| / (2 C_max)) [m] for a curvature limit.

    The peak curvature of the quintic shift on a straight is max|d''| = 10/sqrt(3) |d_r|/S_T^2
    (small-slope limit); with k = 1.17, pi^2 k / 2 = 5.774 ~ 10/sqrt(3) = 5.774, so the shift of
    length S_T,min just reaches C_max.
    """
    if not c_max > 0:
        raise ConfigError(f'lane shift: maximum curvature must be > 0, got {c_max}')
    return math.pi * math.sqrt(k * abs(d_r) / (2.0 * c_max))


@dataclass(frozen=True)
class LaneShift:
    """Lateral offset along a path: quintic out over ``s_t``, hold ``d_r`` for ``s_hold``, back.

    The shift starts at arc length ``s_start``; d > 0 is to the left of the path direction.
    """

    s_start: float
    d_r: float
    s_t: float
    s_hold: float = 0.0
    s_t_back: float | None = None

    def __post_init__(self) -> None:
        _at_most('s_start', self.s_start, MAX_PATH_LENGTH, ' m')
        _at_most('d_r', _nonzero('d_r', self.d_r), MAX_TRAJECTORY_SIZE, ' m')
        _at_most('s_t', _positive('s_t', self.s_t), MAX_PATH_LENGTH, ' m')
        if _at_most('s_hold', self.s_hold, MAX_PATH_LENGTH, ' m') < 0:
            raise ConfigError(f"lane shift parameter 's_hold': must be >= 0, got {self.s_hold}")
        if self.s_t_back is not None:
            _at_most('s_t_back', _positive('s_t_back', self.s_t_back), MAX_PATH_LENGTH, ' m')

    @property
    def s_end(self) -> float:
        """Arc length where the offset is back to zero [m]."""
        back = self.s_t if self.s_t_back is None else self.s_t_back
        return self.s_start + self.s_t + self.s_hold + back

    def offset(self, s: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """d(s), d'(s), d''(s) of the whole out-hold-back profile."""
        ss = np.asarray(s, dtype=float)
        back = self.s_t if self.s_t_back is None else self.s_t_back
        d_out, d1_out, d2_out = quintic_shift(ss - self.s_start, self.d_r, self.s_t)
        s_back = self.s_start + self.s_t + self.s_hold
        d_in, d1_in, d2_in = quintic_shift(ss - s_back, self.d_r, back)
        return d_out - d_in, d1_out - d1_in, d2_out - d2_in
