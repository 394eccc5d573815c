"""Manoeuvres run closed loop in the engine: obstacle avoidance and parallel parking.

**Avoidance**: the car follows the racing line (lane centre line) of
``basic_track`` with the Kanayama law; a box stands on the line. Every lidar scan is projected onto
the line (arc length s, lateral offset d); returns in the car's corridor ahead are the obstacle.
On first detection, S_T,min = pi sqrt(k d_r / (2 C_max)) with C_max = min(tan(delta_max)/L,
gamma_max/v^2) is compared with the free distance to the obstacle: if it fits, the reference is
shifted by the quintic d(s) of W. Nelson (IEEE ICRA 1989) (out, hold past the obstacle, back); if
not, the car stops. The reference keeps its timing s(t) = s0 + v t, so the switch is seamless.

**Parallel parking** (the open-loop profile of I. E. Paromtchik and C. Laugier, IEEE Intelligent
Vehicles Symposium 1996): two parked boxes and a free slot beside the lane. The slot geometry
(measured by range sensors on a real car) is taken as known; the search evaluates the kinematic
model under the profile over a grid of (T, delta_max), vectorized, and keeps the pair whose final
footprint lies inside the slot with the largest clearance along the way; the engine then plays the
profile open loop.
This module re-exports the public names of its parts: the shared helpers
(:mod:`rc_sim_engine.scenarios.common`), avoidance (:mod:`rc_sim_engine.scenarios.avoidance`) and
parking (:mod:`rc_sim_engine.scenarios.parking`).
"""

from __future__ import annotations

from rc_sim_engine.scenarios.avoidance import (
    AvoidanceConfig,
    AvoidanceOutcome,
    AvoidancePlanner,
    run_avoidance,
)
from rc_sim_engine.scenarios.common import (
    footprint_corners,
    racing_line,
    with_boxes,
)
from rc_sim_engine.scenarios.parking import (
    ParkingConfig,
    ParkingOutcome,
    ParkingPlan,
    parking_world,
    plan_parking,
    run_parking,
)

__all__ = [
    'AvoidanceConfig',
    'AvoidanceOutcome',
    'AvoidancePlanner',
    'ParkingConfig',
    'ParkingOutcome',
    'ParkingPlan',
    'footprint_corners',
    'parking_world',
    'plan_parking',
    'racing_line',
    'run_avoidance',
    'run_parking',
    'with_boxes',
]
