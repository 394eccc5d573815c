"""Several cars for one run: per-car vehicle parameters, start poses one behind the other, and
the check that every start is clear of the walls and of the other cars.

The starting grid (:func:`rc_sim_description.footprint.grid_starts`) puts car i straight behind
car i - 1 along the first car's heading, its footprint's front ``gap`` behind the rear of car
i - 1's footprint.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.footprint import GRID_GAP, footprint_from_params, grid_starts
from rc_sim_description.params import VehicleParams
from rc_sim_engine.sim.run_limits import check_cars
from rc_sim_engine.world.collision import WorldArrays, deepest_contacts
from rc_sim_engine.world.multicar import car_contacts
from rc_sim_engine.world.sdf import World

__all__ = ['GRID_GAP', 'check_starts', 'grid_starts', 'lined_up', 'load_car_params',
           'parse_car_options']

FloatArray = NDArray[np.float64]


def parse_car_options(specs: Sequence[str], n: int, flag: str) -> dict[int, list[str]]:
    """``I=VALUE`` options (car index I in 0..n-1) grouped by car, in the order given."""
    out: dict[int, list[str]] = {}
    for spec in specs:
        index, sep, value = spec.partition('=')
        if not sep or not value or not index.strip().isdigit():
            raise ConfigError(f'{flag} {spec!r}: expected I=VALUE with a car index I '
                              f'(e.g. {flag} 1=car1.yaml)')
        i = int(index)
        if i >= n:
            raise ConfigError(f'{flag} {spec!r}: car {i} does not exist (--cars {n}: cars 0 to '
                              f'{n - 1})')
        out.setdefault(i, []).append(value)
    return out


def load_car_params(n: int, common: Sequence[str], per_car: dict[int, list[str]]
                    ) -> list[VehicleParams]:
    """Parameters of ``n`` cars: vehicle.yaml, the ``common`` overrides, then each car's own
    (cars without their own share one object)."""
    from rc_sim_description.params import load_vehicle_params  # looked up at call time

    check_cars(n)
    shared = load_vehicle_params(overrides=list(common))
    return [load_vehicle_params(overrides=[*common, *per_car[i]]) if i in per_car else shared
            for i in range(n)]


def lined_up(world: World, params: VehicleParams, first: Sequence[float], n: int) -> FloatArray:
    """Start poses (n, 3) of ``n`` identical cars: car 0 at ``first``, the others lined up behind
    it (:func:`grid_starts`), each start checked clear (:func:`check_starts`; one-line error)."""
    check_cars(n)
    cars = [params] * n
    starts = grid_starts(first, cars)
    check_starts(world, cars, starts)
    return starts


def check_starts(world: World, params: Sequence[VehicleParams], starts: FloatArray) -> None:
    """One-line error when a car's start footprint touches an obstacle or another car."""
    arrays = WorldArrays.from_world(world)
    for i, p in enumerate(params):
        kind, index, _, _ = deepest_contacts(starts[i:i + 1, 0], starts[i:i + 1, 1],
                                             starts[i:i + 1, 2], footprint_from_params(p),
                                             arrays)
        if kind[0] >= 0:
            raise ConfigError(f'car {i}: start pose {_pose(starts[i])} touches '
                              f'{world.obstacle_name(int(kind[0]), int(index[0]))!r} of world '
                              f'{world.name!r} (give a free --start per car)')
    feet = np.array([[f.center_x, f.half_length, f.half_width]
                     for f in map(footprint_from_params, params)])
    depth, other, _ = car_contacts(starts[:, 0], starts[:, 1], starts[:, 2], feet)
    if np.any(depth > 0):
        i = int(np.argmax(depth > 0))
        raise ConfigError(f'cars {i} and {int(other[i])} overlap at their start poses '
                          f'{_pose(starts[i])} and {_pose(starts[int(other[i])])}')


def _pose(p: FloatArray) -> str:
    return f'({p[0]:g}, {p[1]:g}, {p[2]:g})'

