"""Configuration of the ``/cmd_vel`` mapper: :class:`MapperConfig` (vehicle numbers from
vehicle.yaml plus software settings), its modes (:data:`MAPPER_MODES`) and the validation of node
parameter values (:func:`mapper_config_problem`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams

__all__ = [
    'DEFAULT_COMMAND_TIMEOUT',
    'DEFAULT_STANDSTILL_SPEED',
    'MAPPER_MODES',
    'MapperConfig',
    'mapper_config_problem',
]

MAPPER_MODES: tuple[str, ...] = ('curvature', 'radius', 'steering_angle', 'yaw_rate')

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
ArrayLike = npt.ArrayLike

# Software (not vehicle) defaults of the mapper; the vehicle numbers come from vehicle.yaml.
DEFAULT_STANDSTILL_SPEED = 0.05  # [m/s] below this, yaw_rate mode holds the steering angle
DEFAULT_COMMAND_TIMEOUT = 0.5  # [s] without a command the car is stopped


@dataclass(frozen=True)
class MapperConfig:
    """Validated settings of the command mapper (vehicle numbers: use :meth:`from_vehicle`).

    Attributes:
        wheelbase: L [m]. track_width: W [m]. wheel_radius: r [m].
        max_steering_angle: mechanical |delta| limit [rad], in (0, pi/2).
        max_steering_rate: steering slew limit [rad/s] (``inf``: none) used by
            :class:`CommandMapper`; :func:`map_twist` is rate-free.
        max_wheel_speed: |omega_rear| limit [rad/s].
        mode: meaning of ``angular_z``, one of :data:`MAPPER_MODES`.
        standstill_speed: |v| [m/s] below which ``yaw_rate`` mode holds delta.
        command_timeout: [s] without input before :class:`CommandMapper` commands a stop
            (``inf``: never).
        electronic_differential: split the rear wheel speeds by the turn radius
            (:func:`rear_wheel_speeds`); off: both rear wheels get omega (mechanical differential).
    """

    wheelbase: float
    track_width: float
    wheel_radius: float
    max_steering_angle: float
    max_steering_rate: float
    max_wheel_speed: float
    mode: str = 'yaw_rate'
    standstill_speed: float = DEFAULT_STANDSTILL_SPEED
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT
    electronic_differential: bool = False

    def __post_init__(self) -> None:
        problem = mapper_config_problem(asdict(self))
        if problem:
            raise ConfigError(f'mapper config: {problem}')

    @classmethod
    def from_vehicle(cls, params: VehicleParams, mode: str = 'yaw_rate',
                     **overrides: Any) -> MapperConfig:
        """Config from vehicle parameters (vehicle.yaml), then ``overrides`` (field -> value)."""
        known = {f.name for f in fields(cls)}
        for key in overrides:
            if key not in known:
                raise ConfigError(f'mapper config: unknown key {key!r} '
                                  f'(known: {", ".join(sorted(known))})')
        g = params.geometry
        values: dict[str, Any] = {
            'wheelbase': g.wheelbase, 'track_width': g.track_width, 'wheel_radius': g.wheel_radius,
            'max_steering_angle': params.steering.max_steering_angle,
            'max_steering_rate': params.steering.max_steering_rate,
            'max_wheel_speed': params.drive.max_wheel_speed, 'mode': mode}
        values.update(overrides)
        return cls(**values)

    def with_values(self, **values: Any) -> MapperConfig:
        """Validated copy with some fields replaced."""
        return replace(self, **values)

    @property
    def min_turning_radius(self) -> float:
        """R_min = L / tan(delta_max) [m] (rear axle centre)."""
        return self.wheelbase / math.tan(self.max_steering_angle)

    @property
    def max_speed(self) -> float:
        """v_max = omega_max * r [m/s]."""
        return self.max_wheel_speed * self.wheel_radius


def _number(value: Any) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)


def mapper_config_problem(values: Mapping[str, Any]) -> str | None:
    """First problem of a (partial) mapping of :class:`MapperConfig` fields, or None when valid.

    One line naming the key, e.g. ``max_steering_angle: must be in (0, pi/2) rad, got 2.0``. Shared
    by :class:`MapperConfig` and the nodes' set-parameters callbacks.
    """
    positive_finite = ('wheelbase', 'track_width', 'wheel_radius', 'max_wheel_speed')
    for key, value in values.items():
        if key == 'mode':
            if value not in MAPPER_MODES:
                return f'mode: must be one of {", ".join(MAPPER_MODES)}, got {value!r}'
            continue
        if key == 'electronic_differential':
            if not isinstance(value, (bool, np.bool_)):
                return f'electronic_differential: must be true or false, got {value!r}'
            continue
        if not _number(value) or math.isnan(float(value)):
            return f'{key}: must be a number, got {value!r}'
        v = float(value)
        if key in positive_finite and not (0 < v < math.inf):
            return f'{key}: must be finite and > 0, got {v!r}'
        if key == 'max_steering_angle' and not 0 < v < math.pi / 2:
            return f'max_steering_angle: must be in (0, pi/2) rad, got {v!r}'
        if key in ('max_steering_rate', 'command_timeout') and not v > 0:
            return f'{key}: must be > 0 (inf: no limit), got {v!r}'
        if key == 'standstill_speed' and not 0 <= v < math.inf:
            return f'standstill_speed: must be finite and >= 0, got {v!r}'
    return None
