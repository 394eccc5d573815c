"""ROS-free input guard of ``sim_node``: joint command topics and /cmd_vel, checked per message.

``/steering_angle`` and ``/rear_wheel_speed`` arrive on separate topics; the simulator takes
both at once. :class:`CommandInputs` keeps the last valid value of each, so a NaN on one topic
is dropped (with a log line naming the topic, the field and the count) and never blocks the
other topic or later valid messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import time

from rc_sim_control.node_checks import DropCounter, finite_problem, twist_problem

__all__ = ['CommandInputs', 'Throttle']


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
