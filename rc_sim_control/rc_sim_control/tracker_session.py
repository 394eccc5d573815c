"""The ROS-free core of the ``trajectory_tracker`` node and of ``rcsim track``: the tracker
parameters (defaults, limits, validation), the trajectory they describe, and
:class:`TrackerSession` (activate, step, deactivate a run)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
import math
from typing import Any

import numpy as np

from rc_sim_control.tracking_controllers import (
    CONTROLLER_NAMES,
    GAINS,
    FLGains,
    KanayamaGains,
    MeasuredPose,
    PurePursuitGains,
    TrackingCommand,
    _ref,
    gains_problem,
    make_controller,
)
from rc_sim_control.trajectory_base import Trajectory, TrajectorySample
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams

__all__ = [
    'MAX_PATH_POSES',
    'MAX_TRACKER_VALUE',
    'MAX_TRACKING_DURATION',
    'SHAPE_KEYS',
    'TRACKER_DEFAULTS',
    'TrackerSession',
    'TrackerStep',
    'tracker_values_problem',
    'trajectory_from_values',
]

#: Parameters of the ``trajectory_tracker`` node and of ``rcsim track --set``.
#: Gains of every controller share one flat namespace (kx and min_speed are common).
TRACKER_DEFAULTS: dict[str, Any] = {
    'trajectory_type': 'lemniscate',  # line|parabola|circle|lemniscate|cycloid|waypoints
    'a_coeff': 1.0, 'b_coeff': 0.0,  # line direction/speed (a, b) [m/s]
    'focal_length': 0.5,  # parabola a [m/s] (its focal length after 1 s)
    'radius': 2.0, 'amplitude': 4.5,  # circle r [m], lemniscate a [m]
    'angular_speed': 0.3,  # circle and lemniscate w [rad/s]
    'cycloid_radius': 1.0, 'cycloid_distance': 0.3, 'cycloid_angular_speed': 0.8,
    'waypoints_file': '', 'waypoints_speed': 1.0, 'waypoints_closed': False,
    'duration': 0.0,  # [s]; 0: one period (or the default length) of the trajectory
    'controller': 'fl',
    **asdict(FLGains()),
    **asdict(KanayamaGains()),
    **asdict(PurePursuitGains()),
}
#: Longest run [s] of the tracker (``duration``; the default length of a trajectory is shorter).
MAX_TRACKING_DURATION = 1e6
#: Largest magnitude of any numeric tracker parameter (gains and shape parameters).
MAX_TRACKER_VALUE = 1e6
#: Most poses of the published reference path.
MAX_PATH_POSES = 100_000
#: Keys that change the trajectory (not allowed while a run is active).
SHAPE_KEYS = frozenset({'trajectory_type', 'a_coeff', 'b_coeff', 'focal_length', 'radius',
                        'amplitude', 'angular_speed', 'cycloid_radius', 'cycloid_distance',
                        'cycloid_angular_speed', 'waypoints_file', 'waypoints_speed',
                        'waypoints_closed', 'duration', 'controller'})


def trajectory_from_values(values: Mapping[str, Any]) -> Trajectory:
    """The (unplaced) trajectory described by tracker parameter ``values``."""
    from rc_sim_control import trajectories as tr

    kind, _ = tr.canonical_trajectory(values['trajectory_type'])
    if kind == 'line':
        return tr.Line(values['a_coeff'], values['b_coeff'])
    if kind == 'parabola':
        return tr.Parabola(values['focal_length'])
    if kind == 'circle':
        return tr.Circle(values['radius'], values['angular_speed'])
    if kind == 'lemniscate':
        return tr.Lemniscate(values['amplitude'], values['angular_speed'])
    if kind == 'cycloid':
        return tr.CurtateCycloid(values['cycloid_radius'], values['cycloid_distance'],
                                 values['cycloid_angular_speed'])
    if kind == 'waypoints':
        if not values['waypoints_file']:
            raise ConfigError("trajectory_type 'waypoints' needs the parameter 'waypoints_file'")
        return tr.load_waypoints(values['waypoints_file'], values['waypoints_speed'],
                                 bool(values['waypoints_closed']))
    raise ConfigError(f'unknown trajectory_type {kind!r} (known: '
                      f'{", ".join((*tr.TRAJECTORY_NAMES, "waypoints"))})')


def _gains_of(values: Mapping[str, Any]) -> dict[str, Any]:
    name = values['controller']
    if name not in GAINS:
        raise ConfigError(f'unknown controller {name!r} (known: {", ".join(CONTROLLER_NAMES)})')
    return {f.name: values[f.name] for f in fields(GAINS[name]) if f.name in values}


def tracker_values_problem(values: Mapping[str, Any]) -> str | None:
    """Why a full set of tracker parameter ``values`` is invalid (one line), or None."""
    unknown = sorted(set(values) - set(TRACKER_DEFAULTS))
    if unknown:
        return f'unknown tracker parameter(s) {", ".join(unknown)}'
    for key, value in values.items():  # every number, used now or after a later switch
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if not (math.isfinite(value) and abs(value) <= MAX_TRACKER_VALUE):
            return (f'{key!r}: must be a finite number of magnitude <= {MAX_TRACKER_VALUE:g}, '
                    f'got {value!r}')
    try:
        duration = float(values['duration'])
        if not 0.0 <= duration <= MAX_TRACKING_DURATION:
            return (f"'duration': must be in [0, {MAX_TRACKING_DURATION:g}] s (0: one period), "
                    f"got {values['duration']!r}")
        trajectory_from_values(values)
        problem = gains_problem(values['controller'], _gains_of(values))
    except ConfigError as exc:
        return str(exc)
    except (TypeError, ValueError) as exc:
        return f'invalid tracker parameter ({exc})'
    return problem


@dataclass(frozen=True)
class TrackerStep:
    """One control step: the command, the reference sample and the CoM error (ex, ey) [m]."""

    command: TrackingCommand
    reference: TrajectorySample
    error_x: float
    error_y: float
    finished: bool


class TrackerSession:
    """ROS-free core of the ``trajectory_tracker`` node and of ``rcsim track``.

    Holds the validated parameter values, the ``active`` switch and the run: on
    :meth:`activate` the trajectory is placed so that it starts at the car's centre of mass with
    the car's heading, and time restarts at zero. Gains may change live; the shape only while
    inactive.
    """

    def __init__(self, params: VehicleParams, values: Mapping[str, Any] | None = None) -> None:
        self.params = params
        merged = {**TRACKER_DEFAULTS, **(values or {})}
        problem = tracker_values_problem(merged)
        if problem:
            raise ConfigError(problem)
        self.values: dict[str, Any] = merged
        self.controller = make_controller(merged['controller'], params, **_gains_of(merged))
        self.trajectory: Trajectory | None = None
        self.t_start = 0.0
        self.duration = 0.0

    @property
    def active(self) -> bool:
        """True while a run is in progress."""
        return self.trajectory is not None

    def update(self, changes: Mapping[str, Any]) -> str | None:
        """Apply parameter ``changes`` if valid; returns the reason of a rejection or None."""
        if self.active and SHAPE_KEYS & set(changes):
            keys = ', '.join(sorted(SHAPE_KEYS & set(changes)))
            return f'cannot change {keys} while active (set active to false first)'
        merged = {**self.values, **changes}
        problem = tracker_values_problem(merged)
        if problem:
            return problem
        self.values = merged
        gains = _gains_of(merged)
        if merged['controller'] != self.controller.name:
            self.controller = make_controller(merged['controller'], self.params, **gains)
        else:
            self.controller.set_gains(**gains)
        return None

    def activate(self, t_now: float, pose: MeasuredPose) -> Trajectory:
        """Start a run at time ``t_now`` [s] from the measured base_link ``pose``."""
        from rc_sim_control.trajectories import Placed

        base = trajectory_from_values(self.values)
        lr = self.params.geometry.cg_to_rear_axle
        cx, cy = pose.x + lr * math.cos(pose.yaw), pose.y + lr * math.sin(pose.yaw)
        s0 = base.sample(0.0)
        yaw = pose.yaw - float(s0.heading)
        c, s = math.cos(yaw), math.sin(yaw)
        self.trajectory = Placed(base, cx - (c * float(s0.x) - s * float(s0.y)),
                                 cy - (s * float(s0.x) + c * float(s0.y)), yaw)
        duration = float(self.values['duration'])
        self.duration = duration if duration > 0.0 else base.default_duration
        self.t_start = t_now
        self.controller.reset()
        return self.trajectory

    def deactivate(self) -> None:
        """End the run (the caller publishes a stop command)."""
        self.trajectory = None

    def step(self, t_now: float, pose: MeasuredPose) -> TrackerStep | None:
        """Command at ``t_now`` [s]; None when inactive. The run finishes after ``duration``."""
        if self.trajectory is None:
            return None
        t = t_now - self.t_start
        finished = t >= self.duration
        ref = _ref(self.trajectory, min(t, self.duration))
        lr = self.params.geometry.cg_to_rear_axle
        ex = pose.x + lr * math.cos(pose.yaw) - float(ref.x)
        ey = pose.y + lr * math.sin(pose.yaw) - float(ref.y)
        if finished:
            cmd = TrackingCommand(0.0, 0.0, False)
            self.deactivate()
        else:
            cmd = self.controller.command(t, pose, self.trajectory)
        return TrackerStep(cmd, ref, ex, ey, finished)

    def reference_path(self, spacing: float = 0.05) -> tuple[np.ndarray, ...]:
        """(t [s since activation], x, y, yaw) of the active run, about ``spacing`` [s] apart
        (wider for very long runs: at most :data:`MAX_PATH_POSES` poses)."""
        if self.trajectory is None:
            raise ConfigError('no active trajectory')
        n = min(max(int(self.duration / spacing) + 1, 2), MAX_PATH_POSES)
        t = np.linspace(0.0, self.duration, n)
        s = self.trajectory.sample(t)
        return t, s.x, s.y, s.heading
