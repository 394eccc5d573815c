"""Reference trajectories: positions, velocities and accelerations as functions of time.

Five analytic shapes: line, parabola, circle, lemniscate of Gerono (a figure eight) and
curtate cycloid, all starting at the origin at t = 0. Constant-speed traversal of a path (lines and
arcs, or a cubic spline through CSV waypoints) with an optional lateral offset: a quintic
(minimum-jerk) lane shift (W. Nelson, "Continuous-curvature paths for autonomous vehicles", IEEE
ICRA 1989). The
open-loop parallel-parking steering/speed profile of I. E. Paromtchik and C. Laugier ("Autonomous
parallel parking of a nonholonomic vehicle", IEEE Intelligent Vehicles Symposium 1996).

Every trajectory describes the reference of the vehicle centre of mass in the ``odom`` frame (the
trackers score the centre-of-mass error). All functions are vectorized over the time array;
parameters are validated at construction with a one-line :class:`ConfigError` naming the parameter;
absurd sizes and speeds are refused (:data:`MAX_TRAJECTORY_SIZE`, :data:`MAX_TRAJECTORY_SPEED`,
:data:`MAX_ANGULAR_SPEED`, :data:`MAX_PATH_LENGTH`, :data:`MAX_WAYPOINTS`), so that sampling,
projecting and plotting a trajectory stays within bounded memory.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
import csv
from dataclasses import dataclass, field
import math
import os
from pathlib import Path
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
    'TRAJECTORY_ALIASES',
    'TRAJECTORY_NAMES',
    'Circle',
    'CurtateCycloid',
    'FigureEight',
    'LaneShift',
    'Lemniscate',
    'Line',
    'Parabola',
    'ParkingProfile',
    'PathPoint',
    'PathTrajectory',
    'Placed',
    'SegmentPath',
    'SplinePath',
    'TimedWaypoints',
    'Trajectory',
    'TrajectorySample',
    'canonical_trajectory',
    'lane_shift_max_curvature',
    'load_waypoints',
    'make_trajectory',
    'max_path_curvature',
    'min_lane_shift_length',
    'parking_profile_limits',
    'quintic_shift',
    'trajectory_limits',
]

FloatArray = npt.NDArray[np.float64]
LANE_SHIFT_K = 1.17  # empirical constant of the shortest shift (pi^2 k / 2 ~ 10/sqrt(3), below)
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


# --------------------------------------------------------------------------- analytic shapes
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


# --------------------------------------------------------------------------- paths (arc length s)
@dataclass(frozen=True)
class PathPoint:
    """Arc-length parametrised path: position [m], tangent heading [rad], curvature [1/m]."""

    x: FloatArray
    y: FloatArray
    heading: FloatArray
    curvature: FloatArray


class _Path(ABC):
    length: float
    closed: bool

    @abstractmethod
    def point(self, s: npt.ArrayLike) -> PathPoint:
        """Path at arc length ``s`` [m] (wrapped when closed, clipped otherwise)."""

    def _wrap(self, s: npt.ArrayLike) -> FloatArray:
        arr = np.asarray(s, dtype=float)
        return np.mod(arr, self.length) if self.closed else np.clip(arr, 0.0, self.length)

    def project(self, x: float, y: float, s_guess: float | None = None,
                window: float | None = None) -> float:
        """Arc length of the point closest to (x, y) (dense search, near ``s_guess`` if given)."""
        if s_guess is None or window is None:
            grid = np.linspace(0.0, self.length, max(int(self.length / 0.01), 2))
        else:
            grid = np.linspace(s_guess - window, s_guess + window, max(int(2 * window / 0.005), 3))
        p = self.point(grid)
        i = int(np.argmin((p.x - x) ** 2 + (p.y - y) ** 2))
        return float(grid[i] % self.length) if self.closed else float(np.clip(grid[i], 0,
                                                                              self.length))


@dataclass(frozen=True)
class SegmentPath(_Path):
    """Lines and circular arcs joined with a continuous tangent, starting at (x0, y0, yaw0).

    ``segments``: ('line', length) or ('arc', radius, angle) with angle > 0 turning left.
    """

    segments: tuple[tuple[Any, ...], ...]
    x0: float = 0.0
    y0: float = 0.0
    yaw0: float = 0.0
    closed: bool = False
    _starts: tuple[tuple[float, float, float, float], ...] = field(init=False, repr=False)
    length: float = field(init=False)

    def __post_init__(self) -> None:
        starts = []
        x = _at_most('x0', self.x0, MAX_TRAJECTORY_SIZE, ' m')
        y = _at_most('y0', self.y0, MAX_TRAJECTORY_SIZE, ' m')
        yaw, s = _finite('yaw0', self.yaw0), 0.0
        if not self.segments:
            raise ConfigError('path: needs at least one segment')
        for i, seg in enumerate(self.segments):
            starts.append((s, x, y, yaw))
            kind = seg[0]
            if kind == 'line' and len(seg) == 2:
                ln = _at_most(f'segments[{i}].length', _positive(f'segments[{i}].length', seg[1]),
                              MAX_PATH_LENGTH, ' m')
                x, y, s = x + ln * math.cos(yaw), y + ln * math.sin(yaw), s + ln
            elif kind == 'arc' and len(seg) == 3:
                r = _at_most(f'segments[{i}].radius', _positive(f'segments[{i}].radius', seg[1]),
                             MAX_TRAJECTORY_SIZE, ' m')
                ang = _nonzero(f'segments[{i}].angle', seg[2])
                sign = math.copysign(1.0, ang)
                cx, cy = x - sign * r * math.sin(yaw), y + sign * r * math.cos(yaw)
                yaw += ang
                x, y = cx + sign * r * math.sin(yaw), cy - sign * r * math.cos(yaw)
                s += r * abs(ang)
            else:
                raise ConfigError(f'path: segments[{i}] must be (line, length) or '
                                  f'(arc, radius, angle), got {seg!r}')
            if s > MAX_PATH_LENGTH:
                raise ConfigError(f'path: longer than {MAX_PATH_LENGTH:g} m at segments[{i}]')
        object.__setattr__(self, '_starts', tuple(starts))
        object.__setattr__(self, 'length', s)

    @classmethod
    def stadium(cls, straight_length: float, radius: float, x0: float = 0.0, y0: float = 0.0,
                yaw0: float = 0.0) -> SegmentPath:
        """Closed counter-clockwise stadium: straight, half circle, straight, half circle."""
        return cls((('line', straight_length), ('arc', radius, math.pi),
                    ('line', straight_length), ('arc', radius, math.pi)),
                   x0=x0, y0=y0, yaw0=yaw0, closed=True)

    def point(self, s: npt.ArrayLike) -> PathPoint:
        ss = self._wrap(s)
        x, y = np.zeros_like(ss), np.zeros_like(ss)
        heading, curvature = np.zeros_like(ss), np.zeros_like(ss)
        bounds = [st[0] for st in self._starts] + [self.length + 1e-9]
        for i, seg in enumerate(self.segments):
            s0, px, py, yaw = self._starts[i]
            mask = (ss >= s0) & (ss < bounds[i + 1]) if i < len(self.segments) - 1 else ss >= s0
            u = ss[mask] - s0
            if seg[0] == 'line':
                x[mask], y[mask] = px + u * math.cos(yaw), py + u * math.sin(yaw)
                heading[mask] = yaw
            else:
                r, ang = float(seg[1]), float(seg[2])
                sign = math.copysign(1.0, ang)
                cx, cy = px - sign * r * math.sin(yaw), py + sign * r * math.cos(yaw)
                h = yaw + sign * u / r
                x[mask], y[mask] = cx + sign * r * np.sin(h), cy - sign * r * np.cos(h)
                heading[mask], curvature[mask] = h, sign / r
        return PathPoint(x, y, heading, curvature)


@dataclass(frozen=True)
class SplinePath(_Path):
    """C2 cubic spline through waypoints, re-parametrised by arc length (periodic if closed)."""

    x_waypoints: tuple[float, ...]
    y_waypoints: tuple[float, ...]
    closed: bool = False
    length: float = field(init=False)
    _splines: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        from scipy.interpolate import CubicSpline

        xw, yw = np.asarray(self.x_waypoints, float), np.asarray(self.y_waypoints, float)
        if xw.shape != yw.shape or xw.ndim != 1 or xw.size < 2:
            raise ConfigError('path: needs at least 2 waypoints with x and y')
        if not (np.all(np.isfinite(xw)) and np.all(np.isfinite(yw))):
            raise ConfigError('path: waypoints must be finite')
        if xw.size > MAX_WAYPOINTS:
            raise ConfigError(f'path: {xw.size} waypoints, more than {MAX_WAYPOINTS}')
        far = max(float(np.max(np.abs(xw))), float(np.max(np.abs(yw))))
        if far > MAX_TRAJECTORY_SIZE:
            raise ConfigError(f'path: waypoint coordinates must be within '
                              f'+-{MAX_TRAJECTORY_SIZE:g} m, got {far:g}')
        if self.closed and math.hypot(xw[-1] - xw[0], yw[-1] - yw[0]) > 1e-9:
            xw, yw = np.append(xw, xw[0]), np.append(yw, yw[0])
        chord = np.hypot(np.diff(xw), np.diff(yw))
        if np.any(chord < 1e-9):
            raise ConfigError('path: consecutive waypoints must be distinct')
        bc = 'periodic' if self.closed else 'not-a-knot'
        if xw.size < 4 and not self.closed:
            bc = 'natural'
        u = np.concatenate([[0.0], np.cumsum(chord)])
        if u[-1] > MAX_PATH_LENGTH:
            raise ConfigError(f'path: {u[-1]:.4g} m long, more than {MAX_PATH_LENGTH:g} m')
        sx, sy = CubicSpline(u, xw, bc_type=bc), CubicSpline(u, yw, bc_type=bc)
        # Arc-length re-parametrisation: dense samples, exact-enough cumulative length, refit.
        dense = np.linspace(0.0, u[-1], 200 * (xw.size - 1) + 1)
        dx, dy = sx(dense), sy(dense)
        ds = np.hypot(sx(dense, 1), sy(dense, 1))
        s = np.concatenate([[0.0], np.cumsum(0.5 * (ds[1:] + ds[:-1]) * np.diff(dense))])
        fx, fy = CubicSpline(s, dx, bc_type=bc), CubicSpline(s, dy, bc_type=bc)
        object.__setattr__(self, 'length', float(s[-1]))
        object.__setattr__(self, '_splines', (fx, fy))

    def derivatives(self, s: npt.ArrayLike, order: int) -> tuple[FloatArray, FloatArray]:
        """d^order (x, y) / ds^order at ``s``."""
        fx, fy = self._splines
        ss = self._wrap(s)
        return np.asarray(fx(ss, order), float), np.asarray(fy(ss, order), float)

    def point(self, s: npt.ArrayLike) -> PathPoint:
        x, y = self.derivatives(s, 0)
        dx, dy = self.derivatives(s, 1)
        ddx, ddy = self.derivatives(s, 2)
        n = np.hypot(dx, dy)
        return PathPoint(x, y, np.arctan2(dy, dx), (dx * ddy - dy * ddx) / n ** 3)


def max_path_curvature(path: _Path, step: float = 0.01) -> float:
    """max |curvature| over a dense sampling of ``path`` [1/m]."""
    s = np.linspace(0.0, path.length, max(int(path.length / step), 2))
    return float(np.max(np.abs(path.point(s).curvature)))


# --------------------------------------------------------------------------- quintic lane shift
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


@dataclass(frozen=True)
class PathTrajectory(Trajectory):
    """Constant ``speed`` along ``path`` from ``s_start``, with an optional lateral ``shift``.

    With unit-speed path P(s), tangent T, normal N, curvature k and offset d(s) (Frenet):
    Q = P + d N, Q' = (1 - k d) T + d' N, Q'' = -2 k d' T + (k (1 - k d) + d'') N  (k' = 0 a.e.);
    velocity = Q' v, acceleration = Q'' v^2 with s = s_start + v t.
    """

    path: _Path
    speed: float
    s_start: float = 0.0
    shift: LaneShift | None = None
    name: str = 'path'

    def __post_init__(self) -> None:
        _at_most('speed', _positive('speed', self.speed), MAX_TRAJECTORY_SPEED, ' m/s')
        _at_most('s_start', self.s_start, MAX_PATH_LENGTH, ' m')

    def arc_length(self, t: npt.ArrayLike) -> FloatArray:
        """Unwrapped arc length along the base path at time ``t`` [m]."""
        return self.s_start + self.speed * _as_time(t)

    def sample(self, t: npt.ArrayLike) -> TrajectorySample:
        tt = _as_time(t)
        s = self.arc_length(tt)
        p = self.path.point(s)
        ct, st = np.cos(p.heading), np.sin(p.heading)
        k = p.curvature
        if self.shift is None:
            d = d1 = d2 = np.zeros_like(s)
        else:
            d, d1, d2 = self.shift.offset(s)
        v = self.speed
        tan_c, nor_c = 1.0 - k * d, d1
        tan_a, nor_a = -2.0 * k * d1, k * (1.0 - k * d) + d2
        return _sample(tt, p.x - d * st, p.y + d * ct,
                       v * (tan_c * ct - nor_c * st), v * (tan_c * st + nor_c * ct),
                       v * v * (tan_a * ct - nor_a * st), v * v * (tan_a * st + nor_a * ct))

    @property
    def period(self) -> float | None:
        if self.path.closed and self.shift is None:
            return self.path.length / self.speed
        return None

    @property
    def default_duration(self) -> float:
        return self.path.length / self.speed

    def parameters(self) -> dict[str, float]:
        return {'speed': self.speed, 'length': self.path.length}


# --------------------------------------------------------------------------- CSV waypoints
@dataclass(frozen=True)
class TimedWaypoints(Trajectory):
    """Cubic splines x(t), y(t) through timed waypoints (CSV columns t, x, y)."""

    t_waypoints: tuple[float, ...]
    x_waypoints: tuple[float, ...]
    y_waypoints: tuple[float, ...]
    name: str = 'waypoints'
    _splines: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        from scipy.interpolate import CubicSpline

        t = np.asarray(self.t_waypoints, float)
        if t.size < 2 or np.any(np.diff(t) <= 0):
            raise ConfigError('waypoints: column t must be strictly increasing with >= 2 rows')
        if t.size > MAX_WAYPOINTS:
            raise ConfigError(f'waypoints: {t.size} rows, more than {MAX_WAYPOINTS}')
        xy = np.concatenate([np.asarray(self.x_waypoints, float),
                             np.asarray(self.y_waypoints, float)])
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(xy))):
            raise ConfigError('waypoints: values must be finite')
        if np.max(np.abs(t)) > 1e6 or np.max(np.abs(xy)) > MAX_TRAJECTORY_SIZE:
            raise ConfigError(f'waypoints: times must be within +-1e6 s and coordinates within '
                              f'+-{MAX_TRAJECTORY_SIZE:g} m')
        bc = 'not-a-knot' if t.size >= 4 else 'natural'
        object.__setattr__(self, '_splines', (
            CubicSpline(t, np.asarray(self.x_waypoints, float), bc_type=bc),
            CubicSpline(t, np.asarray(self.y_waypoints, float), bc_type=bc)))

    def sample(self, t: npt.ArrayLike) -> TrajectorySample:
        tt = np.clip(_as_time(t), self.t_waypoints[0], self.t_waypoints[-1])
        fx, fy = self._splines
        return _sample(_as_time(t), fx(tt), fy(tt), fx(tt, 1), fy(tt, 1), fx(tt, 2), fy(tt, 2))

    @property
    def default_duration(self) -> float:
        return self.t_waypoints[-1] - self.t_waypoints[0]


def load_waypoints(path: str | os.PathLike[str], speed: float | None = None,
                   closed: bool = False) -> Trajectory:
    """Trajectory from a CSV of waypoints (header row required).

    Columns ``t,x,y``: splines in time (the times set the speed). Columns ``x,y``: an arc-length
    spline path driven at constant ``speed`` [m/s] (required then). Extra columns are ignored.
    """
    p = Path(path)
    try:
        if p.is_file() and p.stat().st_size > MAX_WAYPOINT_BYTES:
            raise ConfigError(f'{p}: waypoint file larger than '
                              f'{MAX_WAYPOINT_BYTES // (1024 * 1024)} MiB')
        with p.open(newline='', encoding='utf-8') as fh:
            rows = []
            for row in csv.DictReader(fh):
                rows.append(row)
                if len(rows) > MAX_WAYPOINTS:
                    raise ConfigError(f'{p}: more than {MAX_WAYPOINTS} waypoints')
    except FileNotFoundError:
        raise ConfigError(f'{p}: waypoint file not found') from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(f'{p}: cannot read waypoints ({exc})') from None
    if not rows:
        raise ConfigError(f'{p}: no waypoints (a header row x,y or t,x,y then one row per point)')
    columns = {c.strip() for c in rows[0] if c is not None}
    if not {'x', 'y'} <= columns:
        raise ConfigError(f'{p}: needs columns x and y (found {", ".join(sorted(columns))})')

    def column(name: str) -> tuple[float, ...]:
        out = []
        for i, row in enumerate(rows, start=2):
            raw = {(k or '').strip(): v for k, v in row.items()}.get(name)
            try:
                v = float(raw)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise ConfigError(f'{p}: line {i}: column {name!r} is not a number: '
                                  f'{raw!r}') from None
            if not math.isfinite(v):
                raise ConfigError(f'{p}: line {i}: column {name!r} must be finite, got {raw!r}')
            out.append(v)
        return tuple(out)

    x, y = column('x'), column('y')
    try:
        if 't' in columns:
            return TimedWaypoints(column('t'), x, y)
        if speed is None:
            raise ConfigError(f'{p}: has no t column, so a speed is required')
        return PathTrajectory(SplinePath(x, y, closed=closed), speed, name='waypoints')
    except ConfigError as exc:
        raise ConfigError(f'{p}: {exc}') from None


# --------------------------------------------------------------------------- parking profile
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


# --------------------------------------------------------------------------- registry
_FACTORIES: Mapping[str, Callable[..., Trajectory]] = {
    'line': Line,
    'parabola': Parabola,
    'circle': Circle,
    'lemniscate': Lemniscate,
    'cycloid': CurtateCycloid,
}
TRAJECTORY_NAMES: tuple[str, ...] = tuple(_FACTORIES)
#: Old trajectory names that still work: old name -> new name (the CLIs print a deprecation note).
TRAJECTORY_ALIASES: dict[str, str] = {'figure_eight': 'lemniscate'}
#: Former name of :class:`Lemniscate`.
FigureEight = Lemniscate


def canonical_trajectory(name: str) -> tuple[str, str | None]:
    """(current name, deprecation note or None) of a trajectory name that may be an old alias."""
    new = TRAJECTORY_ALIASES.get(name)
    if new is None:
        return name, None
    return new, (f'trajectory {name!r} is now called {new!r} (lemniscate of Gerono); the old '
                 'name still works but will be removed')


def make_trajectory(name: str, **parameters: float) -> Trajectory:
    """An analytic trajectory by name (or old alias) with validated keyword parameters."""
    name, _ = canonical_trajectory(name)
    if name not in _FACTORIES:
        raise ConfigError(f'unknown trajectory {name!r} (known: {", ".join(TRAJECTORY_NAMES)})')
    try:
        return _FACTORIES[name](**parameters)
    except TypeError:
        import inspect

        known = list(inspect.signature(_FACTORIES[name]).parameters)
        bad = sorted(set(parameters) - set(known))
        raise ConfigError(f'trajectory {name!r}: unknown parameter(s) {", ".join(bad)} '
                          f'(known: {", ".join(known)})') from None


def trajectory_limits(trajectory: Trajectory, duration: float,
                      n: int = 4001) -> tuple[float, float]:
    """(max speed [m/s], max |curvature| [1/m]) of ``trajectory`` over [0, duration]."""
    s = trajectory.sample(np.linspace(0.0, duration, n))
    return float(np.max(s.speed)), float(np.max(np.abs(s.curvature)))
