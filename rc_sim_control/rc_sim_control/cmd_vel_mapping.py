"""Command mapping ``/cmd_vel`` -> (front steering angle, rear wheel speed): arrays and streams.

Kinematic bicycle (R. Rajamani, *Vehicle Dynamics and Control*, ch. 2) with Ackermann steering,
reference point on the rear axle (base_link):

* (1) ``delta = atan(L * kappa)`` or ``delta = atan(L / R)``
* (2) ``yaw_rate = v * tan(delta) / L``
* (3) ``omega_rear = v / r``
* (4) ``delta_in = atan(L / (R - W/2))``, ``delta_out = atan(L / (R + W/2))`` (signed R, see
  :func:`ackermann_split`).

``angular.z`` of ``/cmd_vel`` means, per :data:`MAPPER_MODES`:

==================  =========================================  =================================
mode                angular_z                                  tan(delta) before saturation
==================  =========================================  =================================
``curvature``       path curvature kappa = dpsi/ds [1/m]       ``L * kappa``
``radius``          signed turn radius R [m] (+: centre left)  ``L / R`` (R = 0, +-inf: straight)
``steering_angle``  bicycle steering angle delta [rad]         ``tan(delta)``
``yaw_rate``        yaw rate psi_dot [rad/s] (ROS standard)    ``L * psi_dot / v``
==================  =========================================  =================================

Reverse (v < 0) needs no special case: kappa, R and delta describe the path, so reversing on a
left-curving path steers left; in ``yaw_rate`` mode kappa = psi_dot / v flips sign with v.
``radius`` mode reads R = 0 (the Twist default) as straight, not as a pivot the car cannot do.
In ``yaw_rate`` mode the request is undefined at |v| < ``standstill_speed``: :func:`map_twist`
outputs delta = 0 there and flags ``standstill``; :class:`CommandMapper` (and :func:`map_sequence`)
hold the last steering target instead, so the wheels do not snap straight at every stop.
Limits: |delta| <= max_steering_angle (i.e. |R| >= R_min = L / tan(delta_max)), |omega| <=
max_wheel_speed; clipped values are flagged ``saturated``. In ``yaw_rate`` mode the curvature
psi_dot / v of the request is kept when the speed saturates (the path, not the yaw rate, is kept).
Steering trim (``steering_gain``/``steering_offset``) and latency belong to the plant (engine, real
servo), not to this mapper.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import math

import numpy as np

from rc_sim_control.mapper_config import (
    MAPPER_MODES,
    ArrayLike,
    BoolArray,
    FloatArray,
    MapperConfig,
)
from rc_sim_description.errors import ConfigError

__all__ = [
    'CommandMapper',
    'MappedCommand',
    'MappedCommands',
    'hold_where',
    'map_sequence',
    'map_twist',
    'rate_limit',
]


# --------------------------------------------------------------------------- vectorized mapping
@dataclass(frozen=True)
class MappedCommands:
    """Result of :func:`map_twist`, arrays broadcast from the inputs.

    Attributes:
        steering_angle: bicycle (virtual centre wheel) angle delta [rad], + = left.
        wheel_speed: rear wheel angular speed omega = v / r [rad/s] (after the limit).
        yaw_rate: achieved psi_dot = v_sat tan(delta) / L [rad/s] after saturation.
        turn_radius: achieved signed R = L / tan(delta) [m] of the rear axle centre; +inf straight.
        saturated: a steering or wheel-speed limit clipped the request.
        standstill: ``yaw_rate`` mode with |v| < standstill_speed (delta undefined, output 0).
        valid: False for NaN/inf input (inf R is valid in ``radius`` mode); outputs there are 0
            (turn radius +inf) and never NaN.
    """

    steering_angle: FloatArray
    wheel_speed: FloatArray
    yaw_rate: FloatArray
    turn_radius: FloatArray
    saturated: BoolArray
    standstill: BoolArray
    valid: BoolArray


def map_twist(linear_x: ArrayLike, angular_z: ArrayLike, config: MapperConfig) -> MappedCommands:
    """Map (v [m/s], angular_z) to steering angle and rear wheel speed: eqs. (1)-(3).

    Pure and vectorized (any broadcastable shapes); no rate limit and no state. See the module
    docstring for the meaning of ``angular_z`` per mode and the degenerate cases.
    """
    v_in = np.asarray(linear_x, dtype=np.float64)
    z_in = np.asarray(angular_z, dtype=np.float64)
    v_in, z_in = np.broadcast_arrays(v_in, z_in)
    L = config.wheelbase
    mode = config.mode
    if mode == 'radius':
        valid = np.isfinite(v_in) & ~np.isnan(z_in)
    else:
        valid = np.isfinite(v_in) & np.isfinite(z_in)
    all_valid = bool(valid.all())
    v = v_in if all_valid else np.where(valid, v_in, 0.0)
    z = z_in if all_valid else np.where(valid, z_in, 0.0)

    standstill = np.zeros(v.shape, dtype=np.bool_)
    tan_max = math.tan(config.max_steering_angle)
    with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
        if mode == 'steering_angle':
            steer_sat = np.abs(z) > config.max_steering_angle
            delta = np.clip(z, -config.max_steering_angle, config.max_steering_angle)
            tan_delta = np.tan(delta)
        else:
            if mode == 'curvature':
                tan_raw = L * z
            elif mode == 'radius':
                tan_raw = np.where(z == 0.0, 0.0, L / z)
            elif mode == 'yaw_rate':
                standstill = np.abs(v) < config.standstill_speed
                tan_raw = np.where(standstill, 0.0, L * z / np.where(standstill, 1.0, v))
            else:  # pragma: no cover - MapperConfig validates the mode
                raise ConfigError(f'mapper config: mode: unknown {mode!r}')
            steer_sat = np.abs(tan_raw) > tan_max
            tan_delta = np.clip(tan_raw, -tan_max, tan_max)
            delta = np.arctan(tan_delta)
        omega_raw = v / config.wheel_radius
        speed_sat = np.abs(omega_raw) > config.max_wheel_speed
        omega = np.clip(omega_raw, -config.max_wheel_speed, config.max_wheel_speed)
        yaw_rate = omega * config.wheel_radius * tan_delta / L
        turn_radius = np.where(tan_delta == 0.0, np.inf, L / tan_delta)
    saturated = (steer_sat | speed_sat) & valid
    return MappedCommands(steering_angle=delta, wheel_speed=omega, yaw_rate=yaw_rate,
                          turn_radius=turn_radius, saturated=saturated,
                          standstill=standstill & valid, valid=valid)


# --------------------------------------------------------------------------- time series
def hold_where(values: ArrayLike, hold: ArrayLike, initial: float = 0.0) -> FloatArray:
    """Replace ``values[..., k]`` where ``hold[..., k]`` by the last non-held value (ZOH).

    Vectorized along the last (time) axis; ``initial`` is used before the first non-held sample.
    """
    x = np.asarray(values, dtype=np.float64)
    mask = np.broadcast_to(np.asarray(hold, dtype=np.bool_), x.shape)
    if x.ndim == 0:
        return np.asarray(initial if bool(mask) else x, dtype=np.float64)
    n = x.shape[-1]
    idx = np.where(mask, -1, np.arange(n))
    idx = np.maximum.accumulate(idx, axis=-1)
    padded = np.concatenate([np.full((*x.shape[:-1], 1), initial), x], axis=-1)
    return np.take_along_axis(padded, idx + 1, axis=-1)


def rate_limit(values: ArrayLike, t: ArrayLike, max_rate: float) -> FloatArray:
    """Slew-rate limit on the last axis: ``y_k = y_{k-1} + clip(u_k - y_{k-1}, +-max_rate dt_k)``.

    ``y_0 = u_0`` (no time reference before the first sample, as in :class:`CommandMapper`);
    ``t`` [s] is non-decreasing along the last axis and broadcasts against ``values``. The
    recursion is sequential in time (a loop over samples, vectorized over leading axes).
    """
    u = np.asarray(values, dtype=np.float64)
    if u.ndim == 0 or u.shape[-1] < 2 or not math.isfinite(max_rate):
        return u.copy()
    dt = np.diff(np.asarray(t, dtype=np.float64), axis=-1)
    steps = max_rate * np.broadcast_to(dt, (*u.shape[:-1], u.shape[-1] - 1))
    if u.ndim == 1:  # one series: a loop on Python floats is ~10x faster than numpy scalars
        out = [float(u[0])]
        last = out[0]
        for target, limit in zip(u[1:].tolist(), steps.tolist()):
            last += min(max(target - last, -limit), limit)
            out.append(last)
        return np.asarray(out)
    y = np.empty_like(u)
    y[..., 0] = u[..., 0]
    for k in range(1, u.shape[-1]):
        prev = y[..., k - 1]
        y[..., k] = prev + np.clip(u[..., k] - prev, -steps[..., k - 1], steps[..., k - 1])
    return y


def map_sequence(t: ArrayLike, linear_x: ArrayLike, angular_z: ArrayLike,
                 config: MapperConfig, *, initial_steering_angle: float = 0.0,
                 rate_limited: bool = True) -> MappedCommands:
    """:func:`map_twist` on a time series (last axis = time) plus the streaming behaviour.

    Adds what :class:`CommandMapper` does sample by sample: invalid samples and ``yaw_rate``
    standstill samples hold the last steering target (``initial_steering_angle`` before any), then
    the steering-rate limit (``rate_limited``). Invalid samples also output wheel speed 0. The
    achieved yaw rate and turn radius are recomputed from the final steering angle.
    """
    times = np.asarray(t, dtype=np.float64)
    out = map_twist(linear_x, angular_z, config)
    delta = hold_where(out.steering_angle, out.standstill | ~out.valid, initial_steering_angle)
    if rate_limited:
        delta = rate_limit(delta, times, config.max_steering_rate)
    tan_delta = np.tan(delta)
    with np.errstate(divide='ignore', over='ignore'):
        yaw_rate = out.wheel_speed * config.wheel_radius * tan_delta / config.wheelbase
        turn_radius = np.where(tan_delta == 0.0, np.inf, config.wheelbase / tan_delta)
    return MappedCommands(steering_angle=delta, wheel_speed=out.wheel_speed, yaw_rate=yaw_rate,
                          turn_radius=turn_radius, saturated=out.saturated,
                          standstill=out.standstill, valid=out.valid)


# --------------------------------------------------------------------------- streaming
@dataclass(frozen=True)
class MappedCommand:
    """One output of :class:`CommandMapper` (scalars, same meaning as :class:`MappedCommands`).

    ``stopped`` is True for the stop command issued by the command timeout.
    """

    t: float
    steering_angle: float
    wheel_speed: float
    yaw_rate: float
    turn_radius: float
    saturated: bool = False
    standstill: bool = False
    stopped: bool = False


class CommandMapper:
    """Streaming mapper for nodes and the engine: :func:`map_twist` plus state.

    * steering-rate limit ``|d delta/dt| <= max_steering_rate`` between successive outputs (the
      first output after construction or a time jump backwards is not limited: no time reference);
    * ``yaw_rate`` mode at |v| < standstill_speed holds the last steering target (as
      :func:`map_sequence`), so the output still converges to it through the rate limit;
    * NaN/inf input is rejected: :meth:`update` returns None, ``rejected_count`` grows, and the
      state (target, last input time) is unchanged, so nothing is published;
    * command timeout: with no accepted input for ``command_timeout`` s (or a clock that went
      back before the last input), :meth:`timeout` / :meth:`step` return the stop command
      (wheel speed 0, steering angle held).
    """

    def __init__(self, config: MapperConfig, initial_steering_angle: float = 0.0) -> None:
        self.config = config
        self._configs: dict[str, MapperConfig] = {}
        self.reconfigure(config)
        self.rejected_count = 0
        self._target_v = 0.0
        self._target_z = 0.0
        self._last_input_t: float | None = None
        self._last_out_t: float | None = None
        self._delta = float(initial_steering_angle)
        self._delta_target = self._delta
        self._target_mode = config.mode

    def reconfigure(self, config: MapperConfig) -> None:
        """New settings (e.g. a live parameter change); state, target and timing are kept."""
        self.config = config
        self._configs = {m: config if m == config.mode else replace(config, mode=m)
                         for m in MAPPER_MODES}

    @property
    def steering_angle(self) -> float:
        """Last output steering angle [rad]."""
        return self._delta

    @property
    def last_input_time(self) -> float | None:
        """Time [s] of the last accepted input (None before any)."""
        return self._last_input_t

    def reset(self, steering_angle: float = 0.0) -> None:
        """Forget inputs and timing (e.g. after a simulation reset); keep ``rejected_count``."""
        self._last_input_t = None
        self._last_out_t = None
        self._target_v, self._target_z = 0.0, 0.0
        self._target_mode = self.config.mode
        self._delta = self._delta_target = float(steering_angle)

    def update(self, linear_x: float, angular_z: float, t: float,
               mode: str | None = None) -> MappedCommand | None:
        """Accept a new command at time ``t`` [s]; the rate-limited output, or None if rejected.

        ``mode`` overrides the configured meaning of ``angular_z`` for this command (e.g.
        ``steering_angle`` for an ackermann_msgs command); the state (rate limit, hold) is shared.
        """
        config = self._configs.get(mode or self.config.mode)
        if config is None:
            raise ConfigError(f'mapper: mode: must be one of {", ".join(MAPPER_MODES)}, '
                              f'got {mode!r}')
        out = map_twist(linear_x, angular_z, config)
        if not bool(out.valid) or not math.isfinite(t):
            self.rejected_count += 1
            return None
        self._target_v, self._target_z = float(linear_x), float(angular_z)
        self._target_mode = config.mode
        self._last_input_t = float(t)
        return self._emit(out, float(t), stopped=False)

    def timed_out(self, t: float) -> bool:
        """True when no input was accepted for more than ``command_timeout`` s before ``t``, or
        ``t`` is before the last accepted input: after a clock jump back (a simulation reset)
        the time since the last command is unknown, so the watchdog stops the car instead of
        waiting until the clock is back at the old time."""
        if self._last_input_t is None:
            return True
        return not 0.0 <= t - self._last_input_t <= self.config.command_timeout

    def timeout(self, t: float) -> MappedCommand | None:
        """The stop command when timed out at ``t`` (see :meth:`timed_out`), else None."""
        if not self.timed_out(t):
            return None
        stop = map_twist(0.0, 0.0, self._configs['steering_angle'])
        return self._emit(stop, float(t), stopped=True)

    def step(self, t: float) -> MappedCommand:
        """Output at ``t`` for a fixed-rate publisher: last target (rate-limited) or the stop."""
        stop = self.timeout(t)
        if stop is not None:
            return stop
        target = map_twist(self._target_v, self._target_z, self._configs[self._target_mode])
        return self._emit(target, float(t),
                          stopped=False)

    def _emit(self, out: MappedCommands, t: float, *, stopped: bool) -> MappedCommand:
        cfg = self.config
        if not (bool(out.standstill) or stopped):
            self._delta_target = float(out.steering_angle)
        target = self._delta_target
        if self._last_out_t is None or t < self._last_out_t:
            delta = target
        else:
            max_step = cfg.max_steering_rate * (t - self._last_out_t)
            delta = self._delta + min(max(target - self._delta, -max_step), max_step)
        self._delta = delta
        self._last_out_t = t
        omega = float(out.wheel_speed)
        tan_delta = math.tan(delta)
        yaw_rate = omega * cfg.wheel_radius * tan_delta / cfg.wheelbase
        radius = math.inf if tan_delta == 0.0 else cfg.wheelbase / tan_delta
        return MappedCommand(t=t, steering_angle=delta, wheel_speed=omega, yaw_rate=yaw_rate,
                             turn_radius=radius, saturated=bool(out.saturated),
                             standstill=bool(out.standstill), stopped=stopped)
