"""Trajectory-tracking controllers: (reference, measured pose) -> (rear-axle speed, steering).

* :class:`FeedbackLinearization` (input/output linearisation of a point ahead of the axle; B.
  Siciliano et al., *Robotics: Modelling, Planning and Control*, Springer 2009, ch. 11). A point
  P at ``point_distance``
  ahead of the centre of mass (epsilon = lr + PL ahead of the rear axle) is driven by two PIDs with
  feed-forward, v_P = dP_ref/dt + Kp e + Ki int(e) + Kd d(-P)/dt, then the kinematic bicycle is
  inverted exactly: v = v_Px cos(th) + v_Py sin(th), th_dot = (v_Py cos(th) - v_Px sin(th)) / eps,
  delta = atan(L th_dot / v).
* :class:`Kanayama` (Y. Kanayama et al., "A stable tracking control method for an autonomous
  mobile robot", IEEE ICRA 1990): v = v_r cos(th_e) + kx x_e,
  w = w_r + v_r (ky y_e + kth sin(th_e)), delta = atan(L w / v) (exact for the 2WS bicycle).
* :class:`PurePursuit`: the geometric baseline (Coulter 1992): curvature 2 sin(alpha) / l_d to a
  look-ahead point on the reference, speed v_r + kx x_e to keep the timing.

References are the centre-of-mass trajectories of :mod:`rc_sim_control.trajectories`; the measured
pose is base_link (rear-axle centre) as on ``/odom``. Outputs respect the vehicle limits
(|delta| <= max_steering_angle, |v| <= max_speed from vehicle.yaml) and say when they saturate.

This module re-exports the public names of its parts: the controllers, their gains and command
types (:mod:`rc_sim_control.tracking_controllers`), the reference limits
(:mod:`rc_sim_control.tracking_limits`) and the node/CLI core
(:mod:`rc_sim_control.tracker_session`).
"""

from __future__ import annotations

from rc_sim_control.tracker_session import (
    MAX_PATH_POSES,
    MAX_TRACKER_VALUE,
    MAX_TRACKING_DURATION,
    SHAPE_KEYS,
    TRACKER_DEFAULTS,
    TrackerSession,
    TrackerStep,
    tracker_values_problem,
    trajectory_from_values,
)
from rc_sim_control.tracking_controllers import (
    CONTROLLER_NAMES,
    GAINS,
    FeedbackLinearization,
    FLGains,
    Kanayama,
    KanayamaGains,
    MeasuredPose,
    PurePursuit,
    PurePursuitGains,
    TrackingCommand,
    TrackingController,
    TrackingLimits,
    gains_problem,
    make_controller,
    rear_axle_reference,
    twist_from_command,
    wrap_angle,
)
from rc_sim_control.tracking_limits import (
    CURVATURE_MARGIN,
    SIZE_KEYS,
    ReferenceLimits,
    reference_limits,
)

__all__ = [
    'CONTROLLER_NAMES',
    'CURVATURE_MARGIN',
    'GAINS',
    'MAX_PATH_POSES',
    'MAX_TRACKER_VALUE',
    'MAX_TRACKING_DURATION',
    'SHAPE_KEYS',
    'SIZE_KEYS',
    'TRACKER_DEFAULTS',
    'FLGains',
    'FeedbackLinearization',
    'Kanayama',
    'KanayamaGains',
    'MeasuredPose',
    'PurePursuit',
    'PurePursuitGains',
    'ReferenceLimits',
    'TrackerSession',
    'TrackerStep',
    'TrackingCommand',
    'TrackingController',
    'TrackingLimits',
    'gains_problem',
    'make_controller',
    'rear_axle_reference',
    'reference_limits',
    'tracker_values_problem',
    'trajectory_from_values',
    'twist_from_command',
    'wrap_angle',
]
