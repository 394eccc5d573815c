"""Trajectory-tracking controllers: (reference, measured pose) -> (rear-axle speed, steering).

The controllers (feedback linearisation, Kanayama, pure pursuit), their equations and sources
are documented in :mod:`rc_sim_control.tracking_controllers`.

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
