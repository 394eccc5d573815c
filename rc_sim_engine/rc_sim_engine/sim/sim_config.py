"""Settings and plain records of the simulation loop: :class:`SimConfig`, :class:`Observation`,
:class:`CollisionEvent` and the step arithmetic shared by the loop's modules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_engine.world.collision import check_response

__all__ = [
    'SETTLE_TIME',
    'CollisionEvent',
    'CommandSource',
    'Observation',
    'SimConfig',
    'period_steps',
]

FloatArray = NDArray[np.float64]
SETTLE_TIME = 1.0  # s simulated after a sequence's last command by default
CommandSource = Callable[[float, 'Observation'], tuple[ArrayLike, ArrayLike]]


def period_steps(rate: float, dt: float) -> int:
    """Whole physics steps of a period of ``rate`` [Hz] (at least one)."""
    return max(1, round(1.0 / (rate * dt)))


@dataclass(frozen=True)
class SimConfig:
    """Loop settings; sensor specs and vehicle numbers come from vehicle.yaml, not from here.

    Attributes:
        dt: physics step [s] (default 1 kHz).
        model, integrator, tyre_model: passed to :class:`~rc_sim_engine.vehicle.car.Car`.
        command_rate: rate of ``/cmd_vel`` -> mapper -> actuator commands [Hz] (the command
            bridge's 50 Hz).
        odom_rate: ground-truth ``/odom`` and ``/tf`` [Hz] (gz OdometryPublisher default 50 Hz).
        joint_state_rate: ``/joint_states`` [Hz]. clock_rate: ``/clock`` [Hz].
        collision_rate: highest collision check rate [Hz] (near obstacles); 0 disables collisions.
        collision_response: ``stop`` | ``bounce`` | ``ignore``. restitution: bounce coefficient.
        lidar: simulate the lidar. lidar_errors: an ``rc_sim_sensors`` ``LidarErrorConfig`` or
        None. seed: seed of every random generator of the run.
        realtime_factor: 0 = as fast as possible, else sim time / wall time to keep.
        mapper_mode: meaning of ``angular_z`` for controllers (scenarios carry their own mode).
        record: keep every sample for :meth:`Simulator.result` (False for endless live runs:
            only the latest scan is kept, see :meth:`Simulator.snapshot`).
    """

    dt: float = 1e-3
    model: str = 'single_track'
    integrator: str = 'rk4'
    tyre_model: str | None = None
    command_rate: float = 50.0
    odom_rate: float = 50.0
    joint_state_rate: float = 50.0
    clock_rate: float = 100.0
    collision_rate: float = 1000.0
    collision_response: str = 'stop'
    restitution: float = 0.3
    lidar: bool = True
    lidar_errors: Any = None
    seed: int = 0
    realtime_factor: float = 0.0
    mapper_mode: str = 'yaw_rate'
    record: bool = True

    def __post_init__(self) -> None:
        if not (math.isfinite(self.dt) and 0 < self.dt <= 0.1):
            raise ConfigError(f'sim config: dt must be in (0, 0.1] s, got {self.dt!r}')
        for name in ('command_rate', 'odom_rate', 'joint_state_rate', 'clock_rate'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f'sim config: {name} must be > 0 Hz, got {value!r}')
        if not (math.isfinite(self.collision_rate) and self.collision_rate >= 0):
            raise ConfigError(f'sim config: collision_rate must be >= 0 Hz, got '
                              f'{self.collision_rate!r}')
        check_response(self.collision_response)
        if not 0 <= self.restitution <= 1:
            raise ConfigError(f'sim config: restitution must be in [0, 1], got '
                              f'{self.restitution!r}')
        if not (math.isfinite(self.realtime_factor) and self.realtime_factor >= 0):
            raise ConfigError(f'sim config: realtime_factor must be >= 0 (0 = as fast as '
                              f'possible), got {self.realtime_factor!r}')
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f'sim config: seed must be an integer >= 0, got {self.seed!r}')

    def with_values(self, **values: Any) -> SimConfig:
        """Validated copy with some fields replaced."""
        known = {f.name for f in fields(self)}
        for key in values:
            if key not in known:
                raise ConfigError(f'sim config: unknown key {key!r}')
        return replace(self, **values)


@dataclass(frozen=True)
class CollisionEvent:
    """A car started touching an obstacle, or another car (``obstacle`` ``car_<j>``, ``kind``
    ``car``)."""

    t: float
    car: int
    obstacle: str
    kind: str
    depth: float
    normal_x: float
    normal_y: float
    speed: float
    x: float
    y: float


@dataclass(frozen=True)
class Observation:
    """What a controller sees at time ``t``; arrays are (N,) (ground truth of base_link)."""

    t: float
    x: FloatArray
    y: FloatArray
    yaw: FloatArray
    vx: FloatArray
    vy: FloatArray
    yaw_rate: FloatArray
    steering_angle: FloatArray
    wheel_speed: FloatArray
    scan: FloatArray | None
    scan_angles: FloatArray | None
    in_contact: NDArray[np.bool_]
