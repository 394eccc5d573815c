"""Trajectory-tracking controllers: (reference, measured pose) -> (rear-axle speed, steering).

* :class:`FeedbackLinearization` (input/output linearisation of a point ahead of the axle; B.
  Siciliano et al., *Robotics: Modelling, Planning and Control*, Springer 2009, ch. 11). A point
  P at ``point_distance``
  ahead of the centre of mass (epsilon = lr + PL ahead of the rear axle) is driven by two PIDs with
  feed-forward, v_P = dP_ref/dt + Kp e + Ki int(e) + Kd d(-P)/dt, then the kinematic bicycle is
  inverted exactly: v = v_Px cos(th) + v_Py sin(th), th_dot = (v_Py cos(th) - v_Px sin(th)) / eps,
  delta = atan(L th_dot / v).
* :class:`Kanayama` (Y. Kanayama et al., "A stable tracking control method for an autonomous
  mobile robot", IEEE ICRA 1990): v = v_r cos(th_e) + kx x_e,
  w = w_r + v_r (ky y_e + kth sin(th_e)), delta = atan(L w / v) (exact for the 2WS bicycle).
* :class:`PurePursuit`: the geometric baseline (Coulter 1992): curvature 2 sin(alpha) / l_d to a
  look-ahead point on the reference, speed v_r + kx x_e to keep the timing.

References are the centre-of-mass trajectories of :mod:`rc_sim_control.trajectories`; the measured
pose is base_link (rear-axle centre) as on ``/odom``. Outputs respect the vehicle limits
(|delta| <= max_steering_angle, |v| <= max_speed from vehicle.yaml) and say when they saturate.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
import math
from typing import Any, ClassVar

import numpy as np

from rc_sim_control.trajectory_base import Trajectory, TrajectorySample
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams

__all__ = [
    'CONTROLLER_NAMES',
    'GAINS',
    'FLGains',
    'FeedbackLinearization',
    'Kanayama',
    'KanayamaGains',
    'MeasuredPose',
    'PurePursuit',
    'PurePursuitGains',
    'TrackingCommand',
    'TrackingController',
    'TrackingLimits',
    'gains_problem',
    'make_controller',
    'rear_axle_reference',
    'twist_from_command',
    'wrap_angle',
]


def wrap_angle(angle: float) -> float:
    """Angle wrapped to (-pi, pi]."""
    return math.atan2(math.sin(angle), math.cos(angle))


@dataclass(frozen=True)
class MeasuredPose:
    """Measured base_link (rear-axle centre) pose in odom [m, m, rad] and forward speed [m/s]."""

    x: float
    y: float
    yaw: float
    speed: float = 0.0


@dataclass(frozen=True)
class TrackingCommand:
    """Rear-axle speed v [m/s] and bicycle front steering angle delta [rad], after saturation."""

    speed: float
    steering_angle: float
    saturated: bool = False


@dataclass(frozen=True)
class TrackingLimits:
    """Vehicle numbers the controllers need (from vehicle.yaml through :meth:`from_vehicle`)."""

    wheelbase: float
    cg_to_rear_axle: float
    max_steering_angle: float
    max_speed: float

    @classmethod
    def from_vehicle(cls, params: VehicleParams) -> TrackingLimits:
        """L, lr, delta_max and v_max = omega_max r of ``params``."""
        return cls(params.geometry.wheelbase, params.geometry.cg_to_rear_axle,
                   params.steering.max_steering_angle, params.max_speed)

    def saturate(self, speed: float, steering_angle: float) -> TrackingCommand:
        """Clip to |v| <= v_max and |delta| <= delta_max (NaN becomes a stop)."""
        if not (math.isfinite(speed) and math.isfinite(steering_angle)):
            return TrackingCommand(0.0, 0.0, True)
        v = min(max(speed, -self.max_speed), self.max_speed)
        d = min(max(steering_angle, -self.max_steering_angle), self.max_steering_angle)
        return TrackingCommand(v, d, v != speed or d != steering_angle)


def twist_from_command(command: TrackingCommand, wheelbase: float,
                       mode: str = 'steering_angle') -> tuple[float, float]:
    """(linear.x, angular.z) of ``/cmd_vel`` for the mapper ``mode`` (inverse of the mapper).

    curvature: tan(delta) / L; radius: L / tan(delta) (0 = straight, the mapper's convention);
    steering_angle: delta; yaw_rate: v tan(delta) / L.
    """
    v, delta = command.speed, command.steering_angle
    kappa = math.tan(delta) / wheelbase
    if mode == 'steering_angle':
        return v, delta
    if mode == 'curvature':
        return v, kappa
    if mode == 'radius':
        return v, (1.0 / kappa if kappa != 0.0 else 0.0)
    if mode == 'yaw_rate':
        return v, v * kappa
    raise ConfigError(f'unknown cmd_vel mode {mode!r} '
                      '(known: curvature, radius, steering_angle, yaw_rate)')


# --------------------------------------------------------------------------- gains
def _check_gains(obj: Any) -> None:
    for f in fields(obj):
        value = getattr(obj, f.name)
        rule = f.metadata.get('rule', '>=0')
        if isinstance(value, bool):
            continue
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f'{obj.NAME} gain {f.name!r}: must be a finite number, '
                              f'got {value!r}')
        if rule == '>=0' and value < 0:
            raise ConfigError(f'{obj.NAME} gain {f.name!r}: must be >= 0, got {value!r}')
        if rule == '>0' and value <= 0:
            raise ConfigError(f'{obj.NAME} gain {f.name!r}: must be > 0, got {value!r}')


def _g(default: float, rule: str = '>=0') -> Any:
    from dataclasses import field

    return field(default=default, metadata={'rule': rule})


@dataclass(frozen=True)
class FLGains:
    """Feedback-linearisation PID (default: P only, Kp = 5, feed-forward on).

    kp [1/s], ki [1/s^2], kd [-], point_distance PL [m] (P ahead of the centre of mass),
    integral_limit [m s] (anti-windup clamp of each integrator), derivative_filter [s] (first-order
    low-pass time constant of the derivative on measurement), min_speed [m/s] (the linearisation
    is singular at v = 0: |v| is floored there for the steering computation only).
    """

    NAME: ClassVar[str] = 'fl'
    kp: float = _g(5.0)
    ki: float = _g(0.0)
    kd: float = _g(0.0)
    feed_forward: bool = True
    point_distance: float = _g(0.1)
    integral_limit: float = _g(0.5)
    derivative_filter: float = _g(0.05)
    min_speed: float = _g(0.1, '>0')

    def __post_init__(self) -> None:
        _check_gains(self)


@dataclass(frozen=True)
class KanayamaGains:
    """Kanayama gains kx [1/s], ky [1/m^2], ktheta [1/m] (critically damped: ktheta = 2 sqrt(ky)).

    Gains tuned for a 2.5 m car (kx = 10, ky = 1.118, kth = 2.5) are too soft for a 1:10 car;
    these suit it.
    """

    NAME: ClassVar[str] = 'kanayama'
    kx: float = _g(2.0)
    ky: float = _g(9.0)
    ktheta: float = _g(6.0)
    min_speed: float = _g(0.1, '>0')

    def __post_init__(self) -> None:
        _check_gains(self)


@dataclass(frozen=True)
class PurePursuitGains:
    """Look-ahead l_d = max(lookahead_min, lookahead_time v_r) [m]; kx [1/s] timing correction."""

    NAME: ClassVar[str] = 'pure_pursuit'
    lookahead_min: float = _g(0.4, '>0')
    lookahead_time: float = _g(0.4)
    kx: float = _g(2.0)
    horizon: float = _g(4.0, '>0')

    def __post_init__(self) -> None:
        _check_gains(self)


GAINS: Mapping[str, type] = {'fl': FLGains, 'kanayama': KanayamaGains,
                             'pure_pursuit': PurePursuitGains}
CONTROLLER_NAMES: tuple[str, ...] = tuple(GAINS)


def gains_problem(controller: str, values: Mapping[str, Any]) -> str | None:
    """Why ``values`` are not valid gains of ``controller`` (one line), or None (live updates)."""
    if controller not in GAINS:
        return f'unknown controller {controller!r} (known: {", ".join(CONTROLLER_NAMES)})'
    cls = GAINS[controller]
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        return (f'{controller}: unknown gain(s) {", ".join(unknown)} '
                f'(known: {", ".join(sorted(known))})')
    try:
        cls(**values)
    except ConfigError as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------- controllers
class TrackingController(ABC):
    """Streaming controller; call :meth:`command` at the control rate with increasing ``t``."""

    name: str = 'controller'

    def __init__(self, limits: TrackingLimits, gains: Any) -> None:
        self.limits = limits
        self.gains = gains

    def set_gains(self, **values: Any) -> None:
        """Replace some gains (validated; the controller state is kept)."""
        problem = gains_problem(self.name, {**asdict(self.gains), **values})
        if problem:
            raise ConfigError(problem)
        self.gains = replace(self.gains, **values)

    def reset(self) -> None:  # noqa: B027 - stateless controllers keep this no-op
        """Forget the internal state (integrators, filters)."""

    @abstractmethod
    def command(self, t: float, pose: MeasuredPose, trajectory: Trajectory) -> TrackingCommand:
        """Command at time ``t`` [s] (trajectory time) for the measured ``pose``."""

    def _cg(self, pose: MeasuredPose) -> tuple[float, float]:
        lr = self.limits.cg_to_rear_axle
        return pose.x + lr * math.cos(pose.yaw), pose.y + lr * math.sin(pose.yaw)

    def _steer_for_yaw_rate(self, speed: float, yaw_rate: float, min_speed: float) -> float:
        """delta = atan(L w / v), |v| floored at ``min_speed`` (kinematic bicycle, rear axle)."""
        v = math.copysign(max(abs(speed), min_speed), speed if speed != 0.0 else 1.0)
        return math.atan(self.limits.wheelbase * yaw_rate / v)


def _ref(trajectory: Trajectory, t: float) -> TrajectorySample:
    return trajectory.sample(np.array([t]))[0]


def rear_axle_reference(r: TrajectorySample, cg_to_rear_axle: float
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rear-axle reference (x, y, yaw, speed, yaw_rate) of a centre-of-mass reference ``r``.

    A kinematic bicycle turning with centre-of-mass curvature k has sideslip beta = asin(lr k)
    (the CoM circle of radius 1/k has the rear axle at the foot of the perpendicular from the
    turn centre), so yaw = heading - beta, rear = c - lr u(yaw), v_rear = v cos(beta). Exact in
    steady turns; d(beta)/dt is neglected in transients.
    """
    lr = cg_to_rear_axle
    beta = np.arcsin(np.clip(lr * r.curvature, -0.99, 0.99))
    yaw = r.heading - beta
    return (r.x - lr * np.cos(yaw), r.y - lr * np.sin(yaw), yaw, r.speed * np.cos(beta),
            r.yaw_rate)


class FeedbackLinearization(TrackingController):
    """PID + feed-forward on a point P ahead of the centre of mass, exact inverse of the
    kinematic bicycle."""

    name = 'fl'

    def __init__(self, limits: TrackingLimits, gains: FLGains | None = None) -> None:
        super().__init__(limits, gains or FLGains())
        self.reset()

    def reset(self) -> None:
        self._t_prev: float | None = None
        self._integral: np.ndarray[Any, np.dtype[np.float64]] = np.zeros(2)
        self._p_prev = np.zeros(2)
        self._derivative = np.zeros(2)
        self._saturated = False

    def point_error(self, t: float, pose: MeasuredPose,
                    trajectory: Trajectory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P_ref - P, P, dP_ref/dt) with P_ref = c_ref + PL u(yaw_ref), yaw_ref = heading - beta.

        Shifting the reference with the measured yaw would leave a PL yaw_rate / Kp bias; with the
        reference body yaw (:func:`rear_axle_reference`) the feed-forward is exact in
        steady turns.
        """
        g = self.gains
        r = _ref(trajectory, t)
        _, _, yaw_r, _, w_r = (float(a) for a in rear_axle_reference(
            r, self.limits.cg_to_rear_axle))
        pl = g.point_distance
        c_r, s_r = math.cos(yaw_r), math.sin(yaw_r)
        p_ref = np.array([float(r.x) + pl * c_r, float(r.y) + pl * s_r])
        v_ref = np.array([float(r.vx) - pl * w_r * s_r, float(r.vy) + pl * w_r * c_r])
        cx, cy = self._cg(pose)
        p = np.array([cx + pl * math.cos(pose.yaw), cy + pl * math.sin(pose.yaw)])
        return p_ref - p, p, v_ref

    def command(self, t: float, pose: MeasuredPose, trajectory: Trajectory) -> TrackingCommand:
        g = self.gains
        error, p, v_ref = self.point_error(t, pose, trajectory)
        dt = 0.0 if self._t_prev is None else t - self._t_prev
        if dt > 0.0:
            if not self._saturated:  # conditional integration (anti-windup) + clamp
                self._integral = np.clip(self._integral + error * dt, -g.integral_limit,
                                         g.integral_limit)
            raw = -(p - self._p_prev) / dt  # derivative on measurement: no kick on reference jumps
            alpha = dt / (g.derivative_filter + dt)
            self._derivative = self._derivative + alpha * (raw - self._derivative)
        self._t_prev, self._p_prev = t, p
        v_p = (v_ref if g.feed_forward else 0.0) + g.kp * error + g.ki * self._integral \
            + g.kd * self._derivative
        th = pose.yaw
        c, s = math.cos(th), math.sin(th)
        eps = self.limits.cg_to_rear_axle + g.point_distance
        speed = float(v_p[0] * c + v_p[1] * s)
        yaw_rate = float(v_p[1] * c - v_p[0] * s) / eps
        out = self.limits.saturate(speed, self._steer_for_yaw_rate(speed, yaw_rate, g.min_speed))
        self._saturated = out.saturated
        return out


class Kanayama(TrackingController):
    """Kanayama's law on the rear axle (a unicycle) with the rear-axle reference."""

    name = 'kanayama'

    def __init__(self, limits: TrackingLimits, gains: KanayamaGains | None = None) -> None:
        super().__init__(limits, gains or KanayamaGains())

    def errors(self, t: float, pose: MeasuredPose, trajectory: Trajectory
               ) -> tuple[float, float, float, float, float]:
        """(x_e, y_e, th_e, v_r, w_r): reference rear axle in the measured body frame."""
        xr, yr, th_r, v_r, w_r = (float(a) for a in rear_axle_reference(
            _ref(trajectory, t), self.limits.cg_to_rear_axle))
        dx, dy = xr - pose.x, yr - pose.y
        c, s = math.cos(pose.yaw), math.sin(pose.yaw)
        return c * dx + s * dy, -s * dx + c * dy, wrap_angle(th_r - pose.yaw), v_r, w_r

    def command(self, t: float, pose: MeasuredPose, trajectory: Trajectory) -> TrackingCommand:
        g = self.gains
        x_e, y_e, th_e, v_r, w_r = self.errors(t, pose, trajectory)
        speed = v_r * math.cos(th_e) + g.kx * x_e
        yaw_rate = w_r + v_r * (g.ky * y_e + g.ktheta * math.sin(th_e))
        return self.limits.saturate(speed, self._steer_for_yaw_rate(speed, yaw_rate, g.min_speed))


class PurePursuit(TrackingController):
    """Pure pursuit of the rear-axle reference l_d ahead (searched from the current time on)."""

    name = 'pure_pursuit'

    def __init__(self, limits: TrackingLimits, gains: PurePursuitGains | None = None) -> None:
        super().__init__(limits, gains or PurePursuitGains())

    def command(self, t: float, pose: MeasuredPose, trajectory: Trajectory) -> TrackingCommand:
        g = self.gains
        xr, yr, _, vr, _ = rear_axle_reference(
            trajectory.sample(t + np.linspace(0.0, g.horizon, 401)), self.limits.cg_to_rear_axle)
        c, s = math.cos(pose.yaw), math.sin(pose.yaw)
        dx, dy = xr - pose.x, yr - pose.y
        ahead, lateral = c * dx + s * dy, -s * dx + c * dy
        dist = np.hypot(ahead, lateral)
        lookahead = max(g.lookahead_min, g.lookahead_time * float(vr[0]))
        hits = np.nonzero((dist >= lookahead) & (ahead > 0.0))[0]
        i = int(hits[0]) if hits.size else len(dist) - 1
        curvature = 2.0 * float(lateral[i]) / max(float(dist[i]) ** 2, 1e-9)
        speed = float(vr[0]) + g.kx * float(ahead[0])
        return self.limits.saturate(speed, math.atan(self.limits.wheelbase * curvature))


_CONTROLLERS: Mapping[str, type[TrackingController]] = {
    'fl': FeedbackLinearization, 'kanayama': Kanayama, 'pure_pursuit': PurePursuit}


def make_controller(name: str, params: VehicleParams, **gains: Any) -> TrackingController:
    """Controller ``name`` (fl | kanayama | pure_pursuit) with validated ``gains``."""
    problem = gains_problem(name, gains)
    if problem:
        raise ConfigError(problem)
    return _CONTROLLERS[name](TrackingLimits.from_vehicle(params), GAINS[name](**gains))
