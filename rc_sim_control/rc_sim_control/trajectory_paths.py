"""Arc-length paths (lines and arcs, or a cubic spline through waypoints) and their
constant-speed traversal with an optional lateral lane shift (:class:`PathTrajectory`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_control.trajectory_base import (
    MAX_PATH_LENGTH,
    MAX_TRAJECTORY_SIZE,
    MAX_TRAJECTORY_SPEED,
    MAX_WAYPOINTS,
    FloatArray,
    Trajectory,
    TrajectorySample,
    _as_time,
    _at_most,
    _finite,
    _nonzero,
    _positive,
    _sample,
)
from rc_sim_control.trajectory_lane_shift import LaneShift
from rc_sim_description.errors import ConfigError

__all__ = [
    'PathPoint',
    'PathTrajectory',
    'SegmentPath',
    'SplinePath',
    'max_path_curvature',
]


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
