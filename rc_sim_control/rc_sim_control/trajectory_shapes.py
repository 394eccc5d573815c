"""Analytic reference shapes: line, parabola, circle, lemniscate of Gerono, curtate cycloid.

All start at the origin at t = 0; :class:`Placed` rotates and moves any trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np
import numpy.typing as npt

from rc_sim_control.trajectory_base import (
    MAX_ANGULAR_SPEED,
    MAX_TRAJECTORY_SIZE,
    MAX_TRAJECTORY_SPEED,
    Trajectory,
    TrajectorySample,
    _as_time,
    _at_most,
    _finite,
    _nonzero,
    _positive,
    _sample,
)
from rc_sim_description.errors import ConfigError

__all__ = [
    'Circle',
    'CurtateCycloid',
    'Lemniscate',
    'Line',
    'Parabola',
    'Placed',
]


@dataclass(frozen=True)
class Line(Trajectory):
    """x = a t, y = b t: a line along (a, b) at speed sqrt(a^2 + b^2)."""

    a: float = 1.0
    b: float = 0.0
    name: str = field(default='line', init=False)

    def __post_init__(self) -> None:
        _finite('a', self.a)
        _finite('b', self.b)
        if self.a == 0.0 and self.b == 0.0:
            raise ConfigError("trajectory parameters 'a', 'b': direction (a, b) must be non-zero")
        _at_most('a, b (speed)', math.hypot(self.a, self.b), MAX_TRAJECTORY_SPEED, ' m/s')

    def sample(self, t: npt.ArrayLike) -> TrajectorySample:
        tt = _as_time(t)
        return _sample(tt, self.a * tt, self.b * tt, self.a, self.b, 0.0, 0.0)

    def parameters(self) -> dict[str, float]:
        return {'a': self.a, 'b': self.b}


@dataclass(frozen=True)
class Parabola(Trajectory):
    """x = 2 a t, y = a t^2 (the parabola y = x^2 / (4 a), focal length a)."""

    a: float = 0.5
    name: str = field(default='parabola', init=False)

    def __post_init__(self) -> None:
        _nonzero('a', self.a)
        _at_most('a', self.a, MAX_TRAJECTORY_SPEED / 2, ' m/s')  # initial speed 2 a

    def sample(self, t: npt.ArrayLike) -> TrajectorySample:
        tt = _as_time(t)
        a = self.a
        return _sample(tt, 2 * a * tt, a * tt ** 2, 2 * a, 2 * a * tt, 0.0, 2 * a)

    @property
    def default_duration(self) -> float:
        return 6.0  # speed sqrt(4a^2 + 4a^2 t^2): 6.1 m/s at 6 s for a = 0.5

    def parameters(self) -> dict[str, float]:
        return {'a': self.a}


@dataclass(frozen=True)
class Circle(Trajectory):
    """x = r cos(w t - pi/2), y = r sin(w t - pi/2) + r: starts at the origin.

    ``angular_speed`` < 0 turns clockwise.
    """

    radius: float = 2.0
    angular_speed: float = 0.3
    name: str = field(default='circle', init=False)

    def __post_init__(self) -> None:
        _at_most('radius', _positive('radius', self.radius), MAX_TRAJECTORY_SIZE, ' m')
        _at_most('angular_speed', _nonzero('angular_speed', self.angular_speed),
                 MAX_ANGULAR_SPEED, ' rad/s')
        _at_most('radius * angular_speed (speed)', self.radius * self.angular_speed,
                 MAX_TRAJECTORY_SPEED, ' m/s')

    def sample(self, t: npt.ArrayLike) -> TrajectorySample:
        tt = _as_time(t)
        r, w = self.radius, self.angular_speed
        c, s = np.cos(w * tt - math.pi / 2), np.sin(w * tt - math.pi / 2)
        return _sample(tt, r * c, r * s + r, -w * r * s, w * r * c, -w * w * r * c, -w * w * r * s)

    @property
    def period(self) -> float:
        return 2 * math.pi / abs(self.angular_speed)

    def parameters(self) -> dict[str, float]:
        return {'radius': self.radius, 'angular_speed': self.angular_speed}


@dataclass(frozen=True)
class Lemniscate(Trajectory):
    """Lemniscate of Gerono (a figure eight): x = a sin(w t), y = a sin(w t) cos(w t).

    Peak speed sqrt(2) a w at the crossing; the tightest curvature, 4.79 / a [1/m], lies between
    the crossing and the lobe tips (1 / a at the tips). The defaults (a = 4.5 m, w = 0.3 rad/s:
    1.06 1/m, 1.9 m/s, 0.85 m/s^2 lateral) stay inside the default car's limits with a margin.
    """

    amplitude: float = 4.5
    angular_speed: float = 0.3
    name: str = field(default='lemniscate', init=False)

    def __post_init__(self) -> None:
        _at_most('amplitude', _positive('amplitude', self.amplitude), MAX_TRAJECTORY_SIZE, ' m')
        _at_most('angular_speed', _nonzero('angular_speed', self.angular_speed),
                 MAX_ANGULAR_SPEED, ' rad/s')
        _at_most('amplitude * angular_speed (peak speed / sqrt(2))',
                 self.amplitude * self.angular_speed, MAX_TRAJECTORY_SPEED / math.sqrt(2), ' m/s')

    def sample(self, t: npt.ArrayLike) -> TrajectorySample:
        tt = _as_time(t)
        a, w = self.amplitude, self.angular_speed
        s1, c1 = np.sin(w * tt), np.cos(w * tt)
        s2, c2 = np.sin(2 * w * tt), np.cos(2 * w * tt)
        # y = (a/2) sin(2 w t)
        return _sample(tt, a * s1, 0.5 * a * s2, a * w * c1, a * w * c2,
                       -a * w * w * s1, -2 * a * w * w * s2)

    @property
    def period(self) -> float:
        return 2 * math.pi / abs(self.angular_speed)

    def parameters(self) -> dict[str, float]:
        return {'amplitude': self.amplitude, 'angular_speed': self.angular_speed}


@dataclass(frozen=True)
class CurtateCycloid(Trajectory):
    """x = r wt - d sin(wt), y = d - d cos(wt), d < r: a wheel of radius r rolling at w.

    ``angular_speed`` w [rad/s] maps the rolling angle to time. Tightest curvature d / (r - d)^2
    at the cusps (r = 0.5, d = 0.25 would give 4 1/m, beyond a 1:10 car's steering; the defaults
    give 0.61 1/m).
    """

    radius: float = 1.0
    distance: float = 0.3
    angular_speed: float = 0.8
    name: str = field(default='cycloid', init=False)

    def __post_init__(self) -> None:
        _at_most('radius', _positive('radius', self.radius), MAX_TRAJECTORY_SIZE, ' m')
        _positive('distance', self.distance)
        _at_most('angular_speed', _positive('angular_speed', self.angular_speed),
                 MAX_ANGULAR_SPEED, ' rad/s')
        _at_most('(radius + distance) * angular_speed (peak speed)',
                 (self.radius + self.distance) * self.angular_speed, MAX_TRAJECTORY_SPEED,
                 ' m/s')
        if not self.distance < self.radius:
            raise ConfigError(f"trajectory parameter 'distance': must be < radius ({self.radius}) "
                              f'for a curtate cycloid, got {self.distance}')

    def sample(self, t: npt.ArrayLike) -> TrajectorySample:
        tt = _as_time(t)
        r, d, w = self.radius, self.distance, self.angular_speed
        s, c = np.sin(w * tt), np.cos(w * tt)
        return _sample(tt, r * w * tt - d * s, d - d * c, w * (r - d * c), w * d * s,
                       w * w * d * s, w * w * d * c)

    @property
    def period(self) -> float:
        return 2 * math.pi / self.angular_speed

    @property
    def default_duration(self) -> float:
        return 3 * self.period

    def parameters(self) -> dict[str, float]:
        return {'radius': self.radius, 'distance': self.distance,
                'angular_speed': self.angular_speed}


@dataclass(frozen=True)
class Placed(Trajectory):
    """``base`` rotated by ``yaw`` about the origin, then moved: p' = R(yaw) p + (x, y)."""

    base: Trajectory
    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0

    def __post_init__(self) -> None:
        for key in ('x', 'y'):
            _at_most(key, getattr(self, key), MAX_TRAJECTORY_SIZE, ' m')
        _finite('yaw', self.yaw)

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.base.name

    def sample(self, t: npt.ArrayLike) -> TrajectorySample:
        b = self.base.sample(t)
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return TrajectorySample(b.t, c * b.x - s * b.y + self.x, s * b.x + c * b.y + self.y,
                                c * b.vx - s * b.vy, s * b.vx + c * b.vy,
                                c * b.ax - s * b.ay, s * b.ax + c * b.ay)

    @property
    def period(self) -> float | None:
        return self.base.period

    @property
    def default_duration(self) -> float:
        return self.base.default_duration

    def parameters(self) -> dict[str, float]:
        return self.base.parameters()
