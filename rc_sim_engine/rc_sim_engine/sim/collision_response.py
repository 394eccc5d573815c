"""Collision response of the loop: schedule, responses and events (compiled part in
:func:`rc_sim_engine.sim.loop_kernel._collide`).

Checks are scheduled adaptively: after a check, the next one comes when a car could first have
covered the conservative gap between its footprint's bounding circle and the nearest obstacle
(speed now plus a margin, accelerating at twice the friction limit 2 mu g), and at least
``1 / collision_rate`` later; far from walls the loop skips checks, near walls it checks at
``collision_rate``. A contact event is reported when a car that was clear (by 5 mm) touches an
obstacle or another car, so pressing against a wall is one event; the response is ``stop``
(push out along the contact normal, zero the velocities), ``bounce`` (push out, reflect the
normal velocity with ``restitution``) or ``ignore`` (events only). Several cars collide with each
other through their footprints with the same policies (each car of a pair is pushed out by half
the depth; ``bounce`` is the two-body impulse, see :mod:`rc_sim_engine.sim.loop_cars`); such an
event names the other car (``obstacle='car_<j>'``, ``kind='car'``) and checks are scheduled on the
gaps between cars too.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.params import VehicleParams
from rc_sim_engine.sim.loop_cars import KIND_CAR
from rc_sim_engine.sim.loop_kernel import (
    E_CAR,
    E_DEPTH,
    E_INDEX,
    E_KIND,
    E_NX,
    E_NY,
    E_SIZE,
    E_SPEED,
    E_STEP,
    E_X,
    E_Y,
)
from rc_sim_engine.sim.sim_config import CollisionEvent, SimConfig, period_steps
from rc_sim_engine.world.collision import (
    COLLISION_RESPONSES,
    KIND_NAMES,
    Footprint,
    WorldArrays,
    box_trig,
    footprint_from_params,
)
from rc_sim_engine.world.sdf import World

__all__ = ['CollisionRig']

FloatArray = NDArray[np.float64]


class CollisionRig:
    """Obstacles, footprints and contact state of N cars for the compiled loop."""

    def __init__(self, params: list[VehicleParams], world: World, config: SimConfig,
                 event_capacity: int = 256) -> None:
        self.world = world
        self.arrays = WorldArrays.from_world(world)
        self.box_cos, self.box_sin = box_trig(self.arrays.boxes)
        self.footprints: list[Footprint] = [footprint_from_params(p) for p in params]
        self.foot = np.array([[f.center_x, f.half_length, f.half_width]
                              for f in self.footprints], dtype=np.float64)
        self.radius = np.array([p.effective_wheel_radius for p in params], dtype=np.float64)
        self.mass = np.array([p.mass_properties.mass for p in params], dtype=np.float64)
        self.mu_g = max(max(p.friction.mu1, p.friction.mu2) for p in params) * GRAVITY_MPS2
        self.min_period = (period_steps(config.collision_rate, config.dt)
                           if config.collision_rate > 0 and (world.n_obstacles or len(params) > 1)
                           else 0)
        self.response = COLLISION_RESPONSES.index(config.collision_response)
        self.restitution = float(config.restitution)
        self.events = np.zeros((max(event_capacity, 2 * len(params)), E_SIZE))
        n = len(params)
        self.touching = np.zeros(n, dtype=bool)
        self.in_contact = np.zeros(n, dtype=bool)

    def reset(self) -> None:
        """No car touches anything."""
        self.touching[:] = False
        self.in_contact[:] = False

    def take_events(self, count: int, dt: float) -> list[CollisionEvent]:
        """The first ``count`` event rows of the buffer as :class:`CollisionEvent` records."""
        out = []
        for row in self.events[:count]:
            kind, index = int(row[E_KIND]), int(row[E_INDEX])
            car = kind == KIND_CAR
            out.append(CollisionEvent(
                t=int(row[E_STEP]) * dt, car=int(row[E_CAR]),
                obstacle=f'car_{index}' if car else self.world.obstacle_name(kind, index),
                kind='car' if car else KIND_NAMES[kind],
                depth=float(row[E_DEPTH]), normal_x=float(row[E_NX]),
                normal_y=float(row[E_NY]), speed=float(row[E_SPEED]), x=float(row[E_X]),
                y=float(row[E_Y])))
        return out
