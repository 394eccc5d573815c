"""Closed-loop manoeuvres in the engine: obstacle avoidance, parallel parking and trajectory
tracking runs.

May import: ``compiled``, ``vehicle``, ``world``, ``sim``.
"""

from rc_sim_description.lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    'avoidance': ('AvoidanceConfig', 'AvoidanceOutcome', 'AvoidancePlanner', 'run_avoidance'),
    'common': ('FloatArray', 'footprint_corners', 'racing_line', 'with_boxes'),
    'manoeuvres': (),
    'parking': ('ParkingConfig', 'ParkingOutcome', 'ParkingPlan', 'parking_world',
        'plan_parking', 'run_parking'),
    'tracking': ('OPTION_KEYS', 'TrackingRun', 'evaluate_result', 'run_tracking',
        'tracker_settings'),
})
