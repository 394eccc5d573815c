"""Trajectories from CSV waypoints: timed splines (columns t, x, y) or a constant-speed spline
path (columns x, y)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_control.trajectory_base import (
    MAX_TRAJECTORY_SIZE,
    MAX_WAYPOINT_BYTES,
    MAX_WAYPOINTS,
    Trajectory,
    TrajectorySample,
    _as_time,
    _sample,
)
from rc_sim_control.trajectory_paths import PathTrajectory, SplinePath
from rc_sim_description.errors import ConfigError

__all__ = [
    'TimedWaypoints',
    'load_waypoints',
]


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
