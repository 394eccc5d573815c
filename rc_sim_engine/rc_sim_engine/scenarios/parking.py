"""Parallel parking in the engine (open-loop profile, planned on the kinematic model).

**Parallel parking** (the open-loop profile of I. E. Paromtchik and C. Laugier, IEEE Intelligent
Vehicles Symposium 1996): two parked boxes and a free slot beside the lane. The slot geometry
(measured by range sensors on a real car) is taken as known; the search evaluates the kinematic
model under the profile over a grid of (T, delta_max), vectorized, and keeps the pair whose final
footprint lies inside the slot with the largest clearance along the way; the engine then plays the
profile open loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
import math
from typing import Any

import numpy as np

from rc_sim_description.errors import ConfigError
from rc_sim_engine.scenarios.common import (
    FloatArray,
    footprint_corners,
    with_boxes,
)

__all__ = [
    'ParkingConfig',
    'ParkingOutcome',
    'ParkingPlan',
    'parking_world',
    'plan_parking',
    'run_parking',
]


@dataclass(frozen=True)
class ParkingConfig:
    """A slot between two parked boxes on the right of the lane (lengths in m, REP 103).

    The lane runs along +x at y = 0 (the car's base_link starts there, at rest, with its rear
    axle ``start_ahead`` ahead of the front box's rear face); the parked boxes' centres are at
    y = -``slot_offset``; the slot between them is ``slot_length`` long and ``slot_width`` wide
    (centred on the parked row).
    """

    slot_length: float = 1.2
    slot_offset: float = 0.4
    slot_width: float = 0.4
    box_length: float = 0.45
    box_width: float = 0.25
    start_ahead: float = 0.3
    speed: float = 0.4  # v_max of eq. 15
    acceleration: float = 2.0  # v'_max of eq. 19
    margin: float = 0.03  # clearance kept by the search [m]

    def __post_init__(self) -> None:
        for key in ('slot_length', 'slot_offset', 'slot_width', 'box_length', 'box_width', 'speed',
                    'acceleration', 'margin'):
            v = getattr(self, key)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ConfigError(f'parking: {key} must be a number > 0, got {v!r}')

    def slot_rect(self) -> tuple[float, float, float, float]:
        """(x_min, x_max, y_min, y_max) of the free slot (origin: back box's front face)."""
        half = 0.5 * self.slot_width
        return (0.0, self.slot_length, -self.slot_offset - half, -self.slot_offset + half)


def parking_world(config: ParkingConfig) -> Any:
    """flat_track plus the two parked boxes of ``config``."""
    from rc_sim_description.paths import world_path
    from rc_sim_engine.world.sdf import load_world

    c = config
    half = 0.5 * c.box_length
    return with_boxes(load_world(world_path('flat_track')), [
        ('parked_back', -half, -c.slot_offset, 0.0, c.box_length, c.box_width, 0.3),
        ('parked_front', c.slot_length + half, -c.slot_offset, 0.0, c.box_length, c.box_width,
         0.3)])


@dataclass
class ParkingPlan:
    """The chosen profile and its kinematic prediction."""

    profile: Any  # rc_sim_control.trajectories.ParkingProfile
    start: tuple[float, float, float]
    final: tuple[float, float, float]
    clearance: float
    candidates: int
    feasible: int


def _kinematic_rollout(params: Any, profiles: Sequence[Any], start: tuple[float, float, float],
                       dt: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Rear-axle poses (P, K) of the kinematic bicycle under each profile (exact arcs per step)."""
    big_t = max(p.duration for p in profiles)
    t = np.arange(0.0, big_t + dt, dt)
    cmds = [p.commands(t) for p in profiles]
    v = np.stack([c[0] for c in cmds])
    k = np.tan(np.stack([c[1] for c in cmds])) / params.geometry.wheelbase
    from rc_sim_control.odometry import arc_poses

    return arc_poses(v * dt, v * k * dt, *start)


def plan_parking(params: Any, config: ParkingConfig, world: Any,
                 n_grid: int = 40, dt: float = 0.01) -> ParkingPlan:
    """Search (T, delta_max) of the parking profile on a grid with the kinematic model.

    Keeps the candidates whose final footprint is inside the slot rectangle shrunk by ``margin``
    and whose swept footprint keeps ``margin`` from the boxes;
    returns the one with the largest longitudinal clearance in the slot.
    """
    from rc_sim_control.trajectories import ParkingProfile, parking_profile_limits
    from rc_sim_engine.world.collision import (
        Footprint,
        WorldArrays,
        deepest_contacts,
        footprint_from_params,
    )

    c = config
    foot = footprint_from_params(params)
    start_x = c.slot_length + c.start_ahead
    start = (start_x, 0.0, 0.0)
    delta_lim = params.steering.max_steering_angle
    t_star, t_min = parking_profile_limits(delta_lim, params.steering.max_steering_rate,
                                           c.speed, c.acceleration)
    durations = np.linspace(max(t_min, 2.0 * t_star), max(4.0 * t_min, 12.0), n_grid)
    deltas = np.linspace(0.3 * delta_lim, delta_lim, n_grid)
    profiles = [ParkingProfile(float(T), min(t_star, float(T)), float(dm), c.speed,
                               k_delta=-1.0, k_v=-1.0)
                for T in durations for dm in deltas]
    x, y, yaw = _kinematic_rollout(params, profiles, start, dt)
    last = np.array([round(p.duration / dt) for p in profiles])
    rows = np.arange(len(profiles))
    xf, yf, yawf = x[rows, last], y[rows, last], yaw[rows, last]
    corners = footprint_corners(xf, yf, yawf, foot)
    x0, x1, y0, y1 = c.slot_rect()
    cx, cy = corners[..., 0], corners[..., 1]
    m = c.margin
    ok = (np.all((cx >= x0 + m) & (cx <= x1 - m) & (cy >= y0 + m) & (cy <= y1 - m), axis=-1)
          & (np.abs(yawf) < 0.05))
    grown = Footprint(foot.center_x, foot.half_length + c.margin, foot.half_width + c.margin)
    arrays = WorldArrays.from_world(world)
    best, best_gap = -1, -math.inf
    feasible = 0
    for i in np.nonzero(ok)[0]:
        step = slice(0, last[i] + 1, 5)
        kind, _, _, _ = deepest_contacts(x[i, step], y[i, step], yaw[i, step], grown, arrays)
        if np.any(kind >= 0):
            continue
        feasible += 1
        gap = float(min(np.min(cx[i]) - x0, x1 - np.max(cx[i])))
        if gap > best_gap:
            best, best_gap = int(i), gap
    if best < 0:
        raise ConfigError(f'parking: no (T, delta_max) in the search grid parks in a '
                          f'{c.slot_length:.2f} m slot without touching the boxes '
                          f'(try a longer slot)')
    return ParkingPlan(profiles[best], start, (float(xf[best]), float(yf[best]),
                                               float(yawf[best])),
                       best_gap, len(profiles), feasible)


@dataclass
class ParkingOutcome:
    """Result of :func:`run_parking`."""

    result: Any
    world: Any
    plan: ParkingPlan
    config: ParkingConfig
    final: tuple[float, float, float]
    in_slot: bool
    corners: FloatArray = field(repr=False)

    @property
    def collided(self) -> bool:
        """True if the car touched anything."""
        return bool(self.result.collisions)


def run_parking(params: Any, config: ParkingConfig | None = None, *,
                model: str = 'single_track', tyre_model: str | None = None, seed: int = 0,
                progress: Callable[[float], None] | None = None) -> ParkingOutcome:
    """Plan (kinematic search) then play the parking profile open loop in the engine."""
    from rc_sim_control.tracking import TrackingCommand, twist_from_command
    from rc_sim_engine.sim.simulator import SimConfig, Simulator
    from rc_sim_engine.world.collision import footprint_from_params

    cfg = config or ParkingConfig()
    world = parking_world(cfg)
    plan = plan_parking(params, cfg, world)
    sim = Simulator(params, world, SimConfig(model=model, tyre_model=tyre_model, seed=seed,
                                             lidar=False, mapper_mode='steering_angle'),
                    start=plan.start)
    wheelbase = params.geometry.wheelbase

    def control(t: float, obs: Any) -> tuple[float, float]:
        v, delta = plan.profile.commands(np.array([t]))
        return twist_from_command(TrackingCommand(float(v[0]), float(delta[0])), wheelbase,
                                  'steering_angle')

    result = sim.run(plan.profile.duration + 1.0, control, progress=progress)
    odom = result.streams['odom']
    final = (float(odom['x'][-1, 0]), float(odom['y'][-1, 0]), float(odom['yaw'][-1, 0]))
    corners = footprint_corners(final[0], final[1], final[2], footprint_from_params(params))
    x0, x1, y0, y1 = cfg.slot_rect()
    in_slot = bool(np.all((corners[:, 0] >= x0) & (corners[:, 0] <= x1)
                          & (corners[:, 1] >= y0) & (corners[:, 1] <= y1)))
    return ParkingOutcome(result, world, plan, cfg, final, in_slot, corners)
