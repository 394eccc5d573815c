"""ROS-free input guard of ``sim_node``: joint command topics, /cmd_vel and the raw command
topics of a recording description, checked per message.

``/steering_angle`` and ``/rear_wheel_speed`` arrive on separate topics; the simulator takes
both at once. :class:`CommandInputs` keeps the last valid value of each, so a NaN on one topic
is dropped (with a log line naming the topic, the field and the count) and never blocks the
other topic or later valid messages. :func:`raw_commands` reads which raw topics a recording
description names (a real car's own steering, drive and deadman topics, an Ackermann command
or a twist) and :class:`RawInputs` keeps their last valid values in the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
import time
from typing import Any

from rc_sim_control.node_checks import DropCounter, finite_problem, twist_problem

__all__ = ['RAW_TYPES', 'CommandInputs', 'RawCommands', 'RawInputs', 'RawTopic', 'Throttle',
           'raw_commands', 'raw_value']


@dataclass
class CommandInputs:
    """Last valid steering angle [rad] and rear wheel speed [rad/s]; drops counted per topic."""

    steering_angle: float = 0.0
    wheel_speed: float = 0.0
    drops: DropCounter = field(default_factory=DropCounter)

    def steering(self, value: float) -> str | None:
        """Take a ``steering_angle`` message; the log line when it is dropped, else None."""
        reason = finite_problem(data=value)
        if reason:
            return self.drops.drop('steering_angle', reason)
        self.steering_angle = float(value)
        return None

    def wheel(self, value: float) -> str | None:
        """Take a ``rear_wheel_speed`` message; the log line when it is dropped, else None."""
        reason = finite_problem(data=value)
        if reason:
            return self.drops.drop('rear_wheel_speed', reason)
        self.wheel_speed = float(value)
        return None

    def twist(self, linear_x: float, angular_z: float, mode: str) -> str | None:
        """Check a ``cmd_vel`` message read in mapper ``mode``; the log line when dropped."""
        reason = twist_problem(linear_x, angular_z, mode)
        return self.drops.drop('cmd_vel', reason) if reason else None

    def ackermann(self, topic: str, speed: float, steering_angle: float) -> str | None:
        """Check an Ackermann command on ``topic``; the log line when dropped."""
        reason = finite_problem(**{'drive.speed': speed, 'drive.steering_angle': steering_angle})
        return self.drops.drop(topic, reason) if reason else None


@dataclass
class Throttle:
    """At most one log line per ``period_s`` per key (e.g. per topic): a flood of bad messages
    on one topic never hides the first bad message of another (rclpy's own throttle is per
    call site)."""

    period_s: float = 1.0
    last: dict[str, float] = field(default_factory=dict)

    def due(self, key: str, now: float | None = None) -> bool:
        """True when a line for ``key`` may be logged now (and remember that it was)."""
        now = time.monotonic() if now is None else now
        if now - self.last.get(key, -float('inf')) < self.period_s:
            return False
        self.last[key] = now
        return True


# --------------------------------------------------------------------------- raw commands
#: Scalar message types sim_node takes raw commands in (``raw_command_type``), and their
#: MultiArray twins for a role with an ``index``.
RAW_TYPES = {'Float32': 'std_msgs/msg/Float32MultiArray',
             'Float64': 'std_msgs/msg/Float64MultiArray'}


@dataclass(frozen=True)
class RawTopic:
    """One raw command topic: its role (steering, drive, enable, command, cmd_vel), name, the
    element of a MultiArray (None: a scalar ``data``)."""

    role: str
    topic: str
    index: int | None = None


@dataclass(frozen=True)
class RawCommands:
    """What sim_node subscribes for a recording description (its ``recording`` parameter):
    the car's own command topics, as the recording names them.

    * ``steering`` + ``drive`` (+ ``enable``): std_msgs scalars of their kinds (``steering_kind``
      angle | normalised, ``drive_kind`` speed | wheel_speed | throttle | acceleration | force),
      which the simulator takes as they are (:class:`~rc_sim_engine.sim.simulator.Simulator`
      ``steering_kind`` / ``drive_kind``); the deadman multiplies the drive command by
      (enable != 0), as the calibrator reads recordings (rc_sim_calibration.dataset);
    * ``command``: ackermann_msgs AckermannDriveStamped (steering angle [rad], speed [m/s]);
    * ``cmd_vel``: geometry_msgs Twist through the control core's mapper.
    """

    source: str
    topics: tuple[RawTopic, ...]
    steering_kind: str = 'angle'
    drive_kind: str = 'wheel_speed'

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(t.role for t in self.topics)

    @property
    def simulator_kinds(self) -> tuple[str, str]:
        """(steering_kind, drive_kind) of the simulator: the raw ones for steering + drive, the
        mapper's for an Ackermann command (its speed becomes a wheel speed) or a twist."""
        if 'steering' in self.roles:
            return self.steering_kind, self.drive_kind
        return 'angle', 'wheel_speed'

    @property
    def lockstep_inputs(self) -> tuple[str, ...]:
        """The roles a lockstep period needs one message of each."""
        return tuple(r for r in self.roles if r != 'enable')


def raw_commands(path: str) -> RawCommands:
    """The command roles of the recording description at ``path`` (one-line ConfigError)."""
    from rc_sim_description.errors import ConfigError
    from rc_sim_description.recording import load_recording

    rec = load_recording(path)
    roles = rec.roles
    if 'steering' in roles:  # load_recording checked that drive goes with it
        names = ['steering', 'drive'] + (['enable'] if 'enable' in roles else [])
        topics = tuple(RawTopic(n, roles[n].topic, roles[n].index) for n in names)
        return RawCommands(rec.source, topics, roles['steering'].kind, roles['drive'].kind)
    for name in ('command', 'cmd_vel'):
        if name in roles:
            return RawCommands(rec.source, (RawTopic(name, roles[name].topic),))
    raise ConfigError(f'{rec.source}: no command to subscribe (give steering + drive, command '
                      'or cmd_vel)')


@dataclass
class RawInputs:
    """Last valid raw command of each role of one car; drops counted per topic. The deadman
    starts off when the description has one (commands act once it says so)."""

    spec: RawCommands
    steering: float = 0.0
    drive: float = 0.0
    enabled: bool = True
    drops: DropCounter = field(default_factory=DropCounter)

    def __post_init__(self) -> None:
        self.enabled = 'enable' not in self.spec.roles

    def take(self, topic: RawTopic, value: float, reason: str | None = None) -> str | None:
        """Take one scalar of ``topic`` (``reason``: why it is unusable, e.g. a missing array
        element); the log line when it is dropped, else None."""
        reason = reason or finite_problem(data=value)
        if reason:
            return self.drops.drop(topic.topic, reason)
        if topic.role == 'steering':
            self.steering = float(value)
        elif topic.role == 'drive':
            self.drive = float(value)
        else:
            self.enabled = value != 0.0
        return None

    def commands(self) -> tuple[float, float]:
        """(steering, drive) in the raw kinds; the drive is 0 while the deadman is off."""
        return self.steering, self.drive if self.enabled else 0.0


def raw_value(data: Any, index: int | None) -> tuple[float, str | None]:
    """(value, problem) of a std_msgs message's ``data``: the scalar, or element ``index`` of
    a MultiArray (NaN and the problem when the array is too short)."""
    if index is None:
        return float(data), None
    if index >= len(data):
        return math.nan, f'data[{index}] is missing (the array has {len(data)} elements)'
    return float(data[index]), None
