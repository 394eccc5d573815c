"""What a reference-car run produces: true states on the integration grid and topic series."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ['INTERFACES', 'TopicSeries', 'Trace']

# Command interfaces a car may accept (see README.md):
#   steering_wheel       /steering_angle + /rear_wheel_speed (std_msgs/Float64)
#   cmd_vel              /cmd_vel (geometry_msgs/Twist), mapped on board (yaw_rate mode)
#   normalised_throttle  /steering_norm + /throttle (+ /safety_value) (std_msgs/Float32)
INTERFACES = ('steering_wheel', 'cmd_vel', 'normalised_throttle')


@dataclass(frozen=True)
class TopicSeries:
    """Messages of one topic: log times [s from bag start], header stamps [s] and fields.

    ``fields`` holds one array per message field (first axis = message index); scalars of the
    message that do not change (frames, joint names) are in ``constants``.
    """

    topic: str
    msgtype: str
    log_time: np.ndarray
    fields: dict[str, np.ndarray]
    stamp: np.ndarray | None = None
    constants: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.log_time.size)


@dataclass(frozen=True)
class Trace:
    """One simulated manoeuvre of one car.

    ``true`` holds noise-free arrays on the integration grid ``true['t']`` [s]: rear-axle pose
    (``x``, ``y``, ``yaw``), rear-axle velocity in the body frame (``vx``, ``vy``), ``yaw_rate``,
    CG velocity (``vx_cg``, ``vy_cg``), ``ax``, ``ay`` (CG acceleration, body frame), ``delta``
    (actual bicycle steering angle), ``wheel_speed`` (mean rear wheel [rad/s]), the measured
    point's pose (``x_meas``, ``y_meas``, ``yaw_meas``) and velocity in its own frame
    (``vx_meas``, ``vy_meas``). ``commands`` and ``measurements`` are what goes into the bag.
    """

    car: str
    manoeuvre: str
    interface: str
    start_time_ns: int
    true: dict[str, np.ndarray]
    commands: list[TopicSeries]
    measurements: list[TopicSeries]
    noise: bool = True

    @property
    def series(self) -> list[TopicSeries]:
        """Commands then measurements (all topics of the bag)."""
        return [*self.commands, *self.measurements]

    def topic(self, name: str) -> TopicSeries:
        """The series of topic ``name``."""
        for s in self.series:
            if s.topic == name:
                return s
        raise KeyError(f'{name}: not in this trace ({", ".join(s.topic for s in self.series)})')

    @property
    def duration(self) -> float:
        """Simulated time span [s]."""
        return float(self.true['t'][-1])
