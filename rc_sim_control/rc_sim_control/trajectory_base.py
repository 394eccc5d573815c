"""The trajectory interface: :class:`Trajectory`, :class:`TrajectorySample`, limits and checks.

Every trajectory describes the reference of the vehicle centre of mass in the ``odom`` frame;
``sample(t)`` is vectorized over the time array. Parameters are validated at construction with a
one-line :class:`ConfigError` naming the parameter (the ``_finite``, ``_at_most``, ``_positive``,
``_nonzero`` helpers shared by every family); absurd sizes and speeds are refused
(:data:`MAX_TRAJECTORY_SIZE`, :data:`MAX_TRAJECTORY_SPEED`, :data:`MAX_ANGULAR_SPEED`,
:data:`MAX_PATH_LENGTH`, :data:`MAX_WAYPOINTS`), so that sampling, projecting and plotting a
trajectory stays within bounded memory.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_description.errors import ConfigError
from rc_sim_description.plausibility import MAX_TOP_SPEED

__all__ = [
    'MAX_ANGULAR_SPEED',
    'MAX_PATH_LENGTH',
    'MAX_TRAJECTORY_SIZE',
    'MAX_TRAJECTORY_SPEED',
    'MAX_WAYPOINTS',
    'MAX_WAYPOINT_BYTES',
    'FloatArray',
    'Trajectory',
    'TrajectorySample',
]

FloatArray = npt.NDArray[np.float64]
#: Largest length parameter and placement [m] (radius, amplitude, offsets, segments): 10 km.
MAX_TRAJECTORY_SIZE = 1e4
#: Largest speed [m/s] of a reference (the vehicle top speed limit).
MAX_TRAJECTORY_SPEED = MAX_TOP_SPEED
#: Largest angular speed [rad/s] of the analytic shapes.
MAX_ANGULAR_SPEED = 1000.0
#: Longest path [m] (projection and curvature sampling take length / 1 cm points).
MAX_PATH_LENGTH = 1e4
#: Most rows of a waypoint CSV, and its largest size in bytes.
MAX_WAYPOINTS = 10_000
MAX_WAYPOINT_BYTES = 8 * 1024 * 1024


# --------------------------------------------------------------------------- validation helpers
def _finite(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f'trajectory parameter {name!r}: must be a number, '
                          f'got {value!r}') from None
    if not math.isfinite(v):
        raise ConfigError(f'trajectory parameter {name!r}: must be finite, got {value!r}')
    return v


def _at_most(name: str, value: float, limit: float, unit: str) -> float:
    """``value`` if |value| <= limit, else a one-line error giving the limit."""
    v = _finite(name, value)
    if abs(v) > limit:
        raise ConfigError(f'trajectory parameter {name!r}: magnitude must be <= {limit:g}{unit}, '
                          f'got {value!r}')
    return v


def _positive(name: str, value: float) -> float:
    v = _finite(name, value)
    if v <= 0.0:
        raise ConfigError(f'trajectory parameter {name!r}: must be > 0, got {value!r}')
    return v


def _nonzero(name: str, value: float) -> float:
    v = _finite(name, value)
    if v == 0.0:
        raise ConfigError(f'trajectory parameter {name!r}: must be non-zero')
    return v


def _as_time(t: npt.ArrayLike) -> FloatArray:
    arr = np.asarray(t, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ConfigError('trajectory time: must be finite')
    return arr


# --------------------------------------------------------------------------- samples
@dataclass(frozen=True)
class TrajectorySample:
    """Reference at times ``t`` [s]: position [m], velocity [m/s], acceleration [m/s^2] in odom."""

    t: FloatArray
    x: FloatArray
    y: FloatArray
    vx: FloatArray
    vy: FloatArray
    ax: FloatArray
    ay: FloatArray

    @property
    def speed(self) -> FloatArray:
        """|v| [m/s]."""
        return np.hypot(self.vx, self.vy)

    @property
    def heading(self) -> FloatArray:
        """Direction of the velocity, atan2(vy, vx) [rad]."""
        return np.arctan2(self.vy, self.vx)

    @property
    def yaw_rate(self) -> FloatArray:
        """Heading rate (vx ay - vy ax) / |v|^2 [rad/s] (0 where the speed vanishes)."""
        v2 = self.vx ** 2 + self.vy ** 2
        num = self.vx * self.ay - self.vy * self.ax
        return np.divide(num, v2, out=np.zeros_like(num), where=v2 > 1e-12)

    @property
    def curvature(self) -> FloatArray:
        """Signed path curvature (vx ay - vy ax) / |v|^3 [1/m] (0 where the speed vanishes)."""
        v = self.speed
        num = self.vx * self.ay - self.vy * self.ax
        return np.divide(num, v ** 3, out=np.zeros_like(num), where=v > 1e-6)

    def __getitem__(self, index: Any) -> TrajectorySample:
        return TrajectorySample(*(np.asarray(getattr(self, f))[index] for f in _SAMPLE_FIELDS))


_SAMPLE_FIELDS = ('t', 'x', 'y', 'vx', 'vy', 'ax', 'ay')


class Trajectory(ABC):
    """A reference trajectory of the centre of mass; ``sample(t)`` is vectorized over ``t``."""

    name: str = 'trajectory'

    @abstractmethod
    def sample(self, t: npt.ArrayLike) -> TrajectorySample:
        """Reference at times ``t`` [s] (any shape)."""

    @property
    def period(self) -> float | None:
        """Time after which the shape repeats [s], or None."""
        return None

    @property
    def default_duration(self) -> float:
        """A sensible run length [s]: one period, else 20 s."""
        return self.period if self.period is not None else 20.0

    def parameters(self) -> dict[str, float]:
        """The shape parameters (for logs and reports)."""
        return {}


def _sample(t: FloatArray, x: Any, y: Any, vx: Any, vy: Any, ax: Any, ay: Any) -> TrajectorySample:
    def full(v: Any) -> FloatArray:
        return np.broadcast_to(np.asarray(v, dtype=float), t.shape).copy()

    return TrajectorySample(t, full(x), full(y), full(vx), full(vy), full(ax), full(ay))
