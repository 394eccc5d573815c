"""The documented limits of a simulation run (:mod:`rc_sim_description.limits`), checked before
anything of that size is allocated: one-line :class:`~rc_sim_description.errors.ConfigError`
naming the limit and the environment variable that raises it (docs/limits.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rc_sim_description.errors import ConfigError
from rc_sim_description.limits import (
    MAX_BAG_GB,
    MAX_CARS,
    MAX_DURATION_S,
    MAX_MEMORY_MB,
    MAX_OBSTACLES,
    MAX_PACED_WALL_S,
    MAX_STEPS,
    MAX_WORLD_EXTENT_M,
)
from rc_sim_engine.vehicle.state import N_STATE
from rc_sim_engine.world.sdf import World

# a rc_sim_engine.sim.simulator.Simulator (not imported: the simulator imports this)
Simulator = Any

__all__ = ['bag_bytes_per_second', 'check_bag', 'check_cars', 'check_run', 'check_start',
           'check_world', 'recording_bytes']

#: Bytes a bag stores per message beyond its payload (sqlite3 row / MCAP record and index).
MESSAGE_OVERHEAD = 48
_DERIVED_FIELDS = 9 + 7 + 13  # odom, imu, joints (position, velocity, wheel speed) per sample


def check_cars(n: int) -> None:
    """The number of cars simulated together."""
    MAX_CARS.check(n, 'number of cars')


def check_world(world: World) -> None:
    """Obstacle count and extent of a world (ray casting and start-pose grids scale with them)."""
    where = f'{world.source}: world {world.name!r}' if world.source else f'world {world.name!r}'
    MAX_OBSTACLES.check(world.n_obstacles, f'{where}: obstacles')
    if world.n_obstacles:
        x0, x1, y0, y1 = world.bounds(0.0)
        MAX_WORLD_EXTENT_M.check(max(abs(x0), abs(x1), abs(y0), abs(y1)),
                                 f'{where}: its obstacles reach')


def check_start(poses: ArrayLike) -> None:
    """Start poses (N, 3) must lie within the world extent limit of the origin."""
    arr = np.asarray(poses, dtype=np.float64).reshape(-1, 3)
    far = np.max(np.abs(arr[:, :2]), axis=1)
    limit = MAX_WORLD_EXTENT_M.value
    if len(arr) and not float(np.max(far)) <= limit:
        i = int(np.argmax(far))
        raise ConfigError(f'start pose x={arr[i, 0]:g} y={arr[i, 1]:g} lies beyond the limit of '
                          f'{limit:,.0f} m from the world origin (raise it with the environment '
                          f'variable {MAX_WORLD_EXTENT_M.env})')


def _samples(sim: Simulator, duration: float) -> dict[str, float]:
    """Samples of each kind a run of ``duration`` seconds records (upper bounds)."""
    dt = sim.config.dt
    steps = duration / dt
    periods = sim.periods
    snaps = min(steps, sum(steps / periods[k] for k in ('odom', 'imu', 'joints'))) + 3
    scans = steps / periods['scan'] + 2 if 'scan' in periods else 0.0
    ticks = steps / periods['command'] + 2
    return {'snapshots': snaps, 'scans': scans, 'ticks': ticks}


def recording_bytes(sim: Simulator, duration: float) -> float:
    """Memory of the in-memory recordings of a run of ``duration`` seconds [bytes] (about: the
    snapshots, derived streams and scans, and the copies made while converting them)."""
    counts = _samples(sim, duration)
    n = sim.n
    beams = sim.lidars[0].fan.n_beams if sim.lidars else 0
    raw = 2 if sim.config.lidar_errors is not None else 1
    per_snapshot = n * (N_STATE + _DERIVED_FIELDS) * 8 * 2
    per_scan = n * (beams * 4 * raw * 2 + 17)
    return counts['snapshots'] * per_snapshot + counts['scans'] * per_scan


def check_run(sim: Simulator, duration: float, *, plan_ticks: int, streaming: bool = False,
              label: str | None = None) -> None:
    """Duration, physics steps, paced wall time and memory of a run of ``duration`` seconds."""
    from rc_sim_engine.sim.command_plan import plan_bytes

    subject = label or 'run duration'
    MAX_DURATION_S.check(duration, subject)
    MAX_STEPS.check(duration / sim.config.dt, f'a run of {duration:g} s at dt '
                                              f'{sim.config.dt:g} s')
    factor = sim.config.realtime_factor
    if factor > 0:
        MAX_PACED_WALL_S.check(duration / factor, f'realtime factor {factor:g} over '
                                                  f'{duration:g} s')
    memory = plan_bytes(plan_ticks, sim.n) + sim.buffer_bytes(streaming)
    if not streaming and sim.config.record:
        memory += recording_bytes(sim, duration)
    MAX_MEMORY_MB.check(math.ceil(memory / 1e6),
                        f'a run of {duration:g} s' + ('' if streaming else ' recorded in memory'))


def bag_bytes_per_second(sim: Simulator) -> float:
    """Bytes per simulated second of the bag a run writes (about, every topic)."""
    counts = _samples(sim, 1.0)
    n = sim.n
    beams = sim.lidars[0].fan.n_beams if sim.lidars else 0
    scan = (4 * beams + 64 + MESSAGE_OVERHEAD) * (2 if sim.config.lidar_errors else 1)
    per_tick = 3 * (40 + MESSAGE_OVERHEAD)  # /cmd_vel, /steering_angle, /rear_wheel_speed
    per_snapshot = 1400 + 3 * MESSAGE_OVERHEAD  # /odom, /tf, /imu, /joint_states (upper bound)
    clock = (12 + MESSAGE_OVERHEAD) / (sim.periods['clock'] * sim.config.dt)
    return (n * (counts['scans'] - 2) * scan + n * (counts['ticks'] - 2) * per_tick
            + n * (counts['snapshots'] - 3) * per_snapshot + clock)


def check_bag(sim: Simulator, duration: float, what: Any = 'the bag') -> None:
    """Estimated bag size of a run of ``duration`` seconds."""
    MAX_BAG_GB.check(round(bag_bytes_per_second(sim) * duration / 1e9, 3),
                     f'{what} of {duration:g} s')
