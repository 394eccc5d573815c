"""ROS-free checks of the messages the rc-sim nodes receive (the nodes are thin shells over them).

Every node passes each incoming message through one of these checks before it reaches the core:
a problem (a NaN or infinite field, a zero quaternion, names and positions of different lengths,
an encoder jump no wheel can make) is returned as a one-line reason, the node drops the message
and logs :meth:`DropCounter.drop` (throttled, with the count so far) and keeps running; a node
with several inputs throttles per topic with :meth:`DropCounter.report`, so a flood on one topic
never hides bad input on another. Parameter changes are validated by
:mod:`rc_sim_control.node_params` (rejected with their reason).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math

__all__ = [
    'DROP_LOG_PERIOD',
    'MAX_ODOM_POSITION',
    'DropCounter',
    'EncoderGuard',
    'finite_problem',
    'joint_state_problem',
    'odometry_problem',
    'twist_problem',
]

#: Largest |x|, |y| [m] of a pose the nodes accept (1000 km: beyond, the message is corrupt).
MAX_ODOM_POSITION = 1e6


#: Default period [s] of the per-topic warning throttle of :meth:`DropCounter.report`.
DROP_LOG_PERIOD = 1.0


@dataclass
class DropCounter:
    """Counts dropped messages per topic and words the log line of each drop."""

    counts: dict[str, int] = field(default_factory=dict)
    _reported_at: dict[str, float] = field(default_factory=dict, init=False, repr=False,
                                           compare=False)

    def drop(self, topic: str, reason: str) -> str:
        """Count one dropped ``topic`` message; the log line ``dropped <topic> message: ...``."""
        n = self.counts.get(topic, 0) + 1
        self.counts[topic] = n
        return f'dropped {topic} message: {reason} ({n} dropped so far)'

    def report(self, topic: str, reason: str, now_s: float,
               period_s: float = DROP_LOG_PERIOD) -> str | None:
        """Count one dropped ``topic`` message; its log line (as :meth:`drop`) unless a line
        of the same topic was returned less than ``period_s`` before ``now_s`` [s, monotonic],
        else None. The throttle is per topic: one line per topic and period at most."""
        line = self.drop(topic, reason)
        last = self._reported_at.get(topic)
        if last is not None and 0.0 <= now_s - last < period_s:
            return None
        self._reported_at[topic] = now_s
        return line

    @property
    def total(self) -> int:
        """Messages dropped on every topic."""
        return sum(self.counts.values())


def finite_problem(**fields_: float) -> str | None:
    """``<field> is nan`` for the first non-finite (or non-numeric) field, else None."""
    for name, value in fields_.items():
        try:
            v = float(value)
        except (TypeError, ValueError):
            return f'{name} is not a number ({value!r})'
        if not math.isfinite(v):
            return f'{name} is {v!r}'
    return None


def twist_problem(linear_x: float, angular_z: float, mode: str,
                  names: tuple[str, str] = ('linear.x', 'angular.z')) -> str | None:
    """Why a command (cmd_vel, ackermann_cmd) is refused: a NaN, or an infinite value except an
    infinite radius in ``radius`` mode (straight ahead, as the mapper reads it); None if valid."""
    if mode == 'radius' and isinstance(angular_z, (int, float)) and math.isinf(angular_z):
        return finite_problem(**{names[0]: linear_x})
    return finite_problem(**{names[0]: linear_x, names[1]: angular_z})


def odometry_problem(x: float, y: float, qx: float, qy: float, qz: float, qw: float,
                     linear_x: float = 0.0) -> str | None:
    """Why a nav_msgs/Odometry pose cannot be used: non-finite field, position beyond
    :data:`MAX_ODOM_POSITION`, orientation quaternion of zero norm; None when usable."""
    problem = finite_problem(**{'pose.position.x': x, 'pose.position.y': y,
                                'pose.orientation.x': qx, 'pose.orientation.y': qy,
                                'pose.orientation.z': qz, 'pose.orientation.w': qw,
                                'twist.linear.x': linear_x})
    if problem:
        return problem
    if max(abs(x), abs(y)) > MAX_ODOM_POSITION:
        return f'position ({x:g}, {y:g}) is beyond +-{MAX_ODOM_POSITION:g} m'
    if qx * qx + qy * qy + qz * qz + qw * qw < 1e-12:
        return 'orientation quaternion has zero norm'
    return None


def joint_state_problem(names: Sequence[str], positions: Sequence[float],
                        needed: Sequence[str]) -> str | None:
    """Why a sensor_msgs/JointState cannot feed the odometry: positions and names of different
    lengths, a needed joint's position non-finite; None when usable (a missing joint is
    reported by the odometry core itself)."""
    if len(positions) != len(names):
        return f'{len(names)} names but {len(positions)} positions'
    index = {n: i for i, n in enumerate(names)}
    for name in needed:
        i = index.get(name)
        if i is not None:
            problem = finite_problem(**{f'position of {name}': positions[i]})
            if problem:
                return problem
    return None


@dataclass
class EncoderGuard:
    """Refuses encoder samples that imply a wheel faster than ``factor`` times its limit.

    ``max_wheel_speed`` [rad/s] is the vehicle's limit; a jump beyond ``factor *
    max_wheel_speed * dt`` (plus one turn, for coarse encoders) between two samples ``dt`` apart
    is no rotation a wheel can make (a corrupt or wrapped message). The next sample after a
    refusal is taken as a new reference.
    """

    max_wheel_speed: float
    factor: float = 10.0
    _last: tuple[float, tuple[float, ...]] | None = None

    def check(self, t: float, angles: Sequence[float]) -> str | None:
        """Reason to drop the sample of encoder ``angles`` [rad] at ``t`` [s], or None."""
        last, self._last = self._last, (t, tuple(angles))
        if last is None or t <= last[0] or len(last[1]) != len(angles):
            return None
        limit = self.factor * self.max_wheel_speed * (t - last[0]) + 2.0 * math.pi
        for a, b in zip(last[1], angles):
            if abs(b - a) > limit:
                self._last = None
                return (f'encoder jump of {abs(b - a):.4g} rad in {t - last[0]:.4g} s (more than '
                        f'{self.factor:g} times max_wheel_speed)')
        return None
