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

This module re-exports the public names of its parts: the interface and limits
(:mod:`rc_sim_control.trajectory_base`), the analytic shapes
(:mod:`rc_sim_control.trajectory_shapes`), paths and their traversal
(:mod:`rc_sim_control.trajectory_paths`), the lane shift
(:mod:`rc_sim_control.trajectory_lane_shift`), CSV waypoints
(:mod:`rc_sim_control.trajectory_waypoints`), the parking profile
(:mod:`rc_sim_control.trajectory_parking`) and the registry by name
(:mod:`rc_sim_control.trajectory_registry`).
"""

from __future__ import annotations

from rc_sim_control.trajectory_base import (
    MAX_ANGULAR_SPEED,
    MAX_PATH_LENGTH,
    MAX_TRAJECTORY_SIZE,
    MAX_TRAJECTORY_SPEED,
    MAX_WAYPOINT_BYTES,
    MAX_WAYPOINTS,
    Trajectory,
    TrajectorySample,
)
from rc_sim_control.trajectory_lane_shift import (
    LANE_SHIFT_K,
    LaneShift,
    lane_shift_max_curvature,
    min_lane_shift_length,
    quintic_shift,
)
from rc_sim_control.trajectory_parking import (
    ParkingProfile,
    parking_profile_limits,
)
from rc_sim_control.trajectory_paths import (
    PathPoint,
    PathTrajectory,
    SegmentPath,
    SplinePath,
    max_path_curvature,
)
from rc_sim_control.trajectory_registry import (
    TRAJECTORY_ALIASES,
    TRAJECTORY_NAMES,
    FigureEight,
    canonical_trajectory,
    make_trajectory,
    trajectory_limits,
)
from rc_sim_control.trajectory_shapes import (
    Circle,
    CurtateCycloid,
    Lemniscate,
    Line,
    Parabola,
    Placed,
)
from rc_sim_control.trajectory_waypoints import (
    TimedWaypoints,
    load_waypoints,
)

__all__ = [
    'LANE_SHIFT_K',
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
