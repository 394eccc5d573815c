"""Wheel-encoder odometry of the rear axle (base_link), integrated exactly along arcs.

Two increment models, both with the rear-axle centre as reference point (REP 103, yaw CCW):

* **differential** (differential-drive odometry of the rear wheels, track W, radius r): wheel
  travel ``ds_l = r dtheta_l``, ``ds_r = r dtheta_r``; ``ds = (ds_l + ds_r) / 2``,
  ``dpsi = (ds_r - ds_l) / W``.
* **bicycle** (rear wheel travel + steering angle, wheelbase L): ``ds = r dtheta_rear``,
  ``dpsi = ds tan(delta) / L`` (delta held over the step).

Integration (not Euler): with ds and dpsi constant over a step the car moves on a circular arc,
whose chord has length ``ds sinc(dpsi / 2)`` and direction ``psi + dpsi / 2``::

    x += ds S cos(psi + dpsi/2),  y += ds S sin(psi + dpsi/2),  psi += dpsi,
    S = sin(dpsi/2) / (dpsi/2)

exact for any step length (the usual Euler form ``x += ds cos psi`` is only the first order of
this). Vectorized: psi is a cumulative sum, positions are cumulative chord sums.

Noise model (covariance growth, documented assumption): independent zero-mean errors per step,
growing with the distance rolled (Siegwart & Nourbakhsh, *Introduction to Autonomous Mobile
Robots*, §5.2.4): ``var(ds_i) = k^2 |ds_i|`` per wheel (``distance_noise`` k [m^0.5]); in the
bicycle model also a white steering-angle error of std ``steering_noise`` [rad]. The pose
covariance follows ``P_{k+1} = F_k P_k F_k^T + G_k Q_k G_k^T`` with the exact-arc Jacobians
``F_k = [[1, 0, -dy_k], [0, 1, dx_k], [0, 0, 1]]`` and ``G_k = d(x, y, psi)/d(ds, dpsi)``. Because
the F_k compose additively (``F_{n-1}...F_m = F(p_n - p_m)``), the whole covariance history has a
closed form in prefix sums, which :func:`integrate_arcs` evaluates without a loop; the streaming
:class:`StreamingOdometry` runs the recursion step by step. Slip is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
import numpy.typing as npt

from rc_sim_control.ackermann import bicycle_steering_angle
from rc_sim_description.errors import ConfigError
from rc_sim_description.frames import yaw_to_quaternion
from rc_sim_description.params import VehicleParams

__all__ = [
    'DEFAULT_DISTANCE_NOISE',
    'DEFAULT_STEERING_NOISE',
    'ODOMETRY_MODELS',
    'JointStateOdometry',
    'OdometryConfig',
    'OdometryJoints',
    'OdometryState',
    'OdometryTrack',
    'StreamingOdometry',
    'arc_poses',
    'bicycle_increments',
    'bicycle_odometry',
    'differential_increments',
    'differential_odometry',
    'integrate_arcs',
    'odometry_config_problem',
    'pose_covariance_6x6',
    'yaw_to_quaternion',
]

FloatArray = npt.NDArray[np.float64]
ODOMETRY_MODELS = ('differential', 'bicycle')
DEFAULT_DISTANCE_NOISE = 0.01  # k [m^0.5]: 1 cm std after 1 m of travel per wheel
DEFAULT_STEERING_NOISE = 0.01  # [rad]


@dataclass(frozen=True)
class OdometryConfig:
    """Geometry (from vehicle.yaml via :meth:`from_vehicle`) and noise of the odometry."""

    wheel_radius: float
    track_width: float
    wheelbase: float
    distance_noise: float = DEFAULT_DISTANCE_NOISE
    steering_noise: float = DEFAULT_STEERING_NOISE

    def __post_init__(self) -> None:
        problem = odometry_config_problem(self.__dict__)
        if problem:
            raise ConfigError(f'odometry config: {problem}')

    @classmethod
    def from_vehicle(cls, params: VehicleParams, **overrides: float) -> OdometryConfig:
        """Geometry from ``params``; ``overrides`` (e.g. ``distance_noise``) replace fields."""
        g = params.geometry
        values = {'wheel_radius': g.wheel_radius, 'track_width': g.track_width,
                  'wheelbase': g.wheelbase, **overrides}
        try:
            return cls(**values)
        except TypeError:
            raise ConfigError(f'odometry config: unknown key among {sorted(overrides)}') from None


def odometry_config_problem(values: dict[str, object]) -> str | None:
    """First problem of a (partial) mapping of :class:`OdometryConfig` fields, or None."""
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value):
            return f'{key}: must be a finite number, got {value!r}'
        if key in ('wheel_radius', 'track_width', 'wheelbase') and not value > 0:
            return f'{key}: must be > 0, got {value!r}'
        if key in ('distance_noise', 'steering_noise') and value < 0:
            return f'{key}: must be >= 0, got {value!r}'
    return None


# --------------------------------------------------------------------------- increments
def differential_increments(d_angle_left: npt.ArrayLike, d_angle_right: npt.ArrayLike,
                            config: OdometryConfig) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(ds [m], dpsi [rad], Q (..., 2, 2)) of rear-wheel rotations [rad] (differential model).

    Q is the covariance of (ds, dpsi) from ``var(ds_i) = k^2 |ds_i|`` per wheel.
    """
    r, w = config.wheel_radius, config.track_width
    dl = r * np.asarray(d_angle_left, dtype=np.float64)
    dr = r * np.asarray(d_angle_right, dtype=np.float64)
    ds = 0.5 * (dl + dr)
    dpsi = (dr - dl) / w
    k2 = config.distance_noise ** 2
    var_l, var_r = k2 * np.abs(dl), k2 * np.abs(dr)
    q = np.empty((*ds.shape, 2, 2))
    q[..., 0, 0] = 0.25 * (var_l + var_r)
    q[..., 0, 1] = q[..., 1, 0] = 0.5 * (var_r - var_l) / w
    q[..., 1, 1] = (var_l + var_r) / w ** 2
    return ds, dpsi, q


def bicycle_increments(d_angle_rear: npt.ArrayLike, steering_angle: npt.ArrayLike,
                       config: OdometryConfig) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(ds, dpsi, Q) of a rear wheel rotation [rad] with the bicycle steering angle [rad] held.

    ``dpsi = ds tan(delta) / L``; Q from ``var(ds) = k^2 |ds|`` and ``var(delta) = sigma_delta^2``.
    """
    ds = config.wheel_radius * np.asarray(d_angle_rear, dtype=np.float64)
    delta = np.asarray(steering_angle, dtype=np.float64)
    ds, delta = np.broadcast_arrays(ds, delta)
    tan_d = np.tan(delta)
    dpsi = ds * tan_d / config.wheelbase
    var_s = config.distance_noise ** 2 * np.abs(ds)
    dpsi_dds = tan_d / config.wheelbase
    dpsi_ddelta = ds / (np.cos(delta) ** 2 * config.wheelbase)
    q = np.empty((*ds.shape, 2, 2))
    q[..., 0, 0] = var_s
    q[..., 0, 1] = q[..., 1, 0] = dpsi_dds * var_s
    q[..., 1, 1] = dpsi_dds ** 2 * var_s + dpsi_ddelta ** 2 * config.steering_noise ** 2
    return ds, dpsi, q


# --------------------------------------------------------------------------- integration
def _sinc_half(a: FloatArray) -> tuple[FloatArray, FloatArray]:
    """S(a) = sin(a/2)/(a/2) and dS/da, with series near 0."""
    h = 0.5 * a
    small = np.abs(h) < 1e-4
    hs = np.where(small, 1.0, h)
    s = np.where(small, 1.0 - h * h / 6.0, np.sin(hs) / hs)
    ds = np.where(small, -h / 6.0 + h ** 3 / 60.0, 0.5 * (np.cos(hs) * hs - np.sin(hs)) / hs ** 2)
    return s, ds


@dataclass(frozen=True)
class OdometryTrack:
    """Poses at the sample times: arrays of length n (``covariance`` is (n, 3, 3) over x, y, yaw).

    ``linear_velocity`` [m/s] and ``yaw_rate`` [rad/s] are the mean rates of the step ending at
    each sample (0 at the first sample).
    """

    t: FloatArray
    x: FloatArray
    y: FloatArray
    yaw: FloatArray
    linear_velocity: FloatArray
    yaw_rate: FloatArray
    covariance: FloatArray


def arc_poses(ds: npt.ArrayLike, dpsi: npt.ArrayLike, x0: npt.ArrayLike = 0.0,
              y0: npt.ArrayLike = 0.0, yaw0: npt.ArrayLike = 0.0
              ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Poses (..., n+1) after exact circular-arc steps of length ``ds`` turning ``dpsi`` (..., n).

    Each step moves along the chord of its arc: ``|chord| = ds sin(dpsi/2) / (dpsi/2)`` in the
    direction ``yaw + dpsi/2`` (exact for a constant curvature within the step; the straight
    line is the limit dpsi -> 0). Leading axes batch independent paths; ``x0, y0, yaw0`` broadcast
    over them. Yaw is continuous (not wrapped).
    """
    ds_a = np.asarray(ds, dtype=np.float64)
    dpsi_a = np.asarray(dpsi, dtype=np.float64)
    zero = np.zeros((*np.broadcast_shapes(ds_a.shape, dpsi_a.shape)[:-1], 1))
    yaw = np.asarray(yaw0, dtype=np.float64)[..., None] + np.concatenate(
        [zero, np.cumsum(dpsi_a + 0.0 * ds_a, axis=-1)], axis=-1)
    mid = yaw[..., :-1] + 0.5 * dpsi_a
    chord = ds_a * _sinc_half(dpsi_a)[0]
    x = np.asarray(x0, dtype=np.float64)[..., None] + np.concatenate(
        [zero, np.cumsum(chord * np.cos(mid), axis=-1)], axis=-1)
    y = np.asarray(y0, dtype=np.float64)[..., None] + np.concatenate(
        [zero, np.cumsum(chord * np.sin(mid), axis=-1)], axis=-1)
    return x, y, yaw


def integrate_arcs(ds: npt.ArrayLike, dpsi: npt.ArrayLike, q: npt.ArrayLike | None = None, *,
                   x0: float = 0.0, y0: float = 0.0, yaw0: float = 0.0,
                   p0: npt.ArrayLike | None = None
                   ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Exact arc integration of increments (n,) -> x, y, yaw (n+1,) and covariance (n+1, 3, 3).

    ``q`` (n, 2, 2) is the covariance of (ds, dpsi) per step (None: zero), ``p0`` the initial pose
    covariance (None: zero). Yaw is not wrapped (continuous); wrap it for display.
    """
    ds_a = np.asarray(ds, dtype=np.float64).reshape(-1)
    dpsi_a = np.asarray(dpsi, dtype=np.float64).reshape(-1)
    n = ds_a.size
    x, y, yaw = arc_poses(ds_a, dpsi_a, x0, y0, yaw0)
    mid = yaw[:-1] + 0.5 * dpsi_a
    s, s_prime = _sinc_half(dpsi_a)
    cos_m, sin_m = np.cos(mid), np.sin(mid)

    # Per-step noise N_k = G_k Q_k G_k^T, G = d(x, y, psi)/d(ds, dpsi) of the exact arc step.
    g = np.zeros((n, 3, 2))
    g[:, 0, 0] = s * cos_m
    g[:, 1, 0] = s * sin_m
    g[:, 0, 1] = ds_a * (s_prime * cos_m - 0.5 * s * sin_m)
    g[:, 1, 1] = ds_a * (s_prime * sin_m + 0.5 * s * cos_m)
    g[:, 2, 1] = 1.0
    q_a = np.zeros((n, 2, 2)) if q is None else np.asarray(q, dtype=np.float64).reshape(n, 2, 2)
    noise = g @ q_a @ g.transpose(0, 2, 1)
    p0_a = np.zeros((3, 3)) if p0 is None else np.asarray(p0, dtype=np.float64).reshape(3, 3)
    # Term j (j = 0: p0 at p_0; j = k + 1: N_k injected at p_{k+1}) reaches sample m >= j as
    # T(w) M T(w)^T with w = J (p_m - p_j), J = rot90: closed form in prefix sums (module doc).
    terms = np.concatenate([p0_a[None], noise])  # (n + 1, 3, 3), term j lives at sample j
    pos = np.stack([x, y], axis=-1)
    q_pts = np.stack([-pos[:, 1], pos[:, 0]], axis=-1)  # J p_j
    a = terms[:, :2, :2]
    b = terms[:, :2, 2]
    c = terms[:, 2, 2]
    sum_a = np.cumsum(a, axis=0)
    sum_b = np.cumsum(b, axis=0)
    sum_c = np.cumsum(c, axis=0)
    sum_cq = np.cumsum(c[:, None] * q_pts, axis=0)
    sum_qb = np.cumsum(q_pts[:, :, None] * b[:, None, :], axis=0)  # sum q b^T
    sum_cqq = np.cumsum(c[:, None, None] * q_pts[:, :, None] * q_pts[:, None, :], axis=0)
    w = q_pts  # J p_m for the receiving sample m
    outer = w[:, :, None]
    wb = outer * sum_b[:, None, :]
    wcq = outer * sum_cq[:, None, :]
    cov_xy = (sum_a + wb + wb.transpose(0, 2, 1) - sum_qb - sum_qb.transpose(0, 2, 1)
              + sum_c[:, None, None] * (outer * w[:, None, :]) - wcq - wcq.transpose(0, 2, 1)
              + sum_cqq)
    cov = np.empty((n + 1, 3, 3))
    cov[:, :2, :2] = cov_xy
    cov[:, :2, 2] = cov[:, 2, :2] = sum_b + sum_c[:, None] * w - sum_cq
    cov[:, 2, 2] = sum_c
    return x, y, yaw, cov


def _track(t: FloatArray, ds: FloatArray, dpsi: FloatArray, q: FloatArray, x0: float, y0: float,
           yaw0: float) -> OdometryTrack:
    x, y, yaw, cov = integrate_arcs(ds, dpsi, q, x0=x0, y0=y0, yaw0=yaw0)
    dt = np.diff(t)
    with np.errstate(divide='ignore', invalid='ignore'):
        v = np.concatenate([[0.0], np.where(dt > 0, ds / dt, 0.0)])
        r = np.concatenate([[0.0], np.where(dt > 0, dpsi / dt, 0.0)])
    return OdometryTrack(t=t, x=x, y=y, yaw=yaw, linear_velocity=v, yaw_rate=r, covariance=cov)


def _times(t: npt.ArrayLike) -> FloatArray:
    times = np.asarray(t, dtype=np.float64).reshape(-1)
    if times.size < 1 or not np.isfinite(times).all():
        raise ConfigError('odometry: t must be a non-empty array of finite times')
    if times.size > 1 and not (np.diff(times) >= 0).all():
        raise ConfigError('odometry: t must be non-decreasing')
    return times


def differential_odometry(t: npt.ArrayLike, left_wheel_speed: npt.ArrayLike,
                          right_wheel_speed: npt.ArrayLike, config: OdometryConfig, *,
                          x0: float = 0.0, y0: float = 0.0, yaw0: float = 0.0) -> OdometryTrack:
    """Differential odometry from rear wheel speeds [rad/s] sampled at ``t`` [s] (held per step).

    Exact along arcs: one full circle at constant wheel speeds closes to rounding error.
    """
    times = _times(t)
    dt = np.diff(times)
    wl = np.asarray(left_wheel_speed, dtype=np.float64).reshape(-1)[:-1]
    wr = np.asarray(right_wheel_speed, dtype=np.float64).reshape(-1)[:-1]
    ds, dpsi, q = differential_increments(wl * dt, wr * dt, config)
    return _track(times, ds, dpsi, q, x0, y0, yaw0)


def bicycle_odometry(t: npt.ArrayLike, rear_wheel_speed: npt.ArrayLike,
                     steering_angle: npt.ArrayLike, config: OdometryConfig, *,
                     x0: float = 0.0, y0: float = 0.0, yaw0: float = 0.0) -> OdometryTrack:
    """Bicycle odometry from the rear wheel speed [rad/s] and steering angle [rad] at ``t`` [s]."""
    times = _times(t)
    dt = np.diff(times)
    w = np.asarray(rear_wheel_speed, dtype=np.float64).reshape(-1)[:-1]
    d = np.broadcast_to(np.asarray(steering_angle, dtype=np.float64), times.shape)[:-1]
    ds, dpsi, q = bicycle_increments(w * dt, d, config)
    return _track(times, ds, dpsi, q, x0, y0, yaw0)


# --------------------------------------------------------------------------- streaming
@dataclass(frozen=True)
class OdometryState:
    """Pose of base_link in odom, its 3x3 covariance (x, y, yaw) and the last step's rates."""

    t: float
    x: float
    y: float
    yaw: float
    linear_velocity: float
    yaw_rate: float
    covariance: FloatArray
    twist_covariance: FloatArray


class StreamingOdometry:
    """Step-by-step odometry from wheel encoder angles (for the ``wheel_odometry`` node).

    The first sample only sets the reference angles. Later samples integrate the increments
    exactly along an arc and propagate the covariance recursively (module docstring). A sample
    whose time does not advance is ignored (returns None); a time jump backwards resets the
    reference angles (simulation reset) without moving the pose.
    """

    def __init__(self, config: OdometryConfig, model: str = 'differential', *, x: float = 0.0,
                 y: float = 0.0, yaw: float = 0.0) -> None:
        if model not in ODOMETRY_MODELS:
            raise ConfigError(f'odometry: model: must be one of {", ".join(ODOMETRY_MODELS)}, '
                              f'got {model!r}')
        self.config = config
        self.model = model
        self.x, self.y, self.yaw = float(x), float(y), float(yaw)
        self.covariance = np.zeros((3, 3))
        self._ref: tuple[float, float] | None = None
        self._t: float | None = None

    def reset(self, x: float = 0.0, y: float = 0.0, yaw: float = 0.0) -> None:
        """Pose back to (x, y, yaw) with zero covariance; next sample is a new reference."""
        self.x, self.y, self.yaw = float(x), float(y), float(yaw)
        self.covariance = np.zeros((3, 3))
        self._ref, self._t = None, None

    def update(self, t: float, angle_a: float, angle_b: float) -> OdometryState | None:
        """Add one encoder sample at ``t`` [s].

        differential: (left, right) rear wheel angles [rad]; bicycle: (mean rear wheel angle
        [rad], bicycle steering angle [rad], the latter held over the step that follows).
        Returns the new state, or None for the reference sample or non-finite/non-advancing input.
        """
        if not (math.isfinite(t) and math.isfinite(angle_a) and math.isfinite(angle_b)):
            return None
        if self._t is None or self._ref is None or t < self._t:
            self._t, self._ref = t, (angle_a, angle_b)
            return None
        dt = t - self._t
        if dt <= 0:
            return None
        if self.model == 'differential':
            ds, dpsi, q = differential_increments(angle_a - self._ref[0], angle_b - self._ref[1],
                                                  self.config)
            self._ref = (angle_a, angle_b)
        else:
            ds, dpsi, q = bicycle_increments(angle_a - self._ref[0], self._ref[1], self.config)
            self._ref = (angle_a, angle_b)
        self._t = t
        return self.step(t, float(ds), float(dpsi), q, dt)

    def step(self, t: float, ds: float, dpsi: float, q: npt.ArrayLike, dt: float) -> OdometryState:
        """Integrate one increment (ds [m], dpsi [rad], covariance q 2x2) over ``dt`` [s]."""
        s, s_prime = (float(v) for v in _sinc_half(np.asarray(dpsi)))
        mid = self.yaw + 0.5 * dpsi
        c, sn = math.cos(mid), math.sin(mid)
        dx, dy = ds * s * c, ds * s * sn
        f = np.array([[1.0, 0.0, -dy], [0.0, 1.0, dx], [0.0, 0.0, 1.0]])
        g = np.array([[s * c, ds * (s_prime * c - 0.5 * s * sn)],
                      [s * sn, ds * (s_prime * sn + 0.5 * s * c)],
                      [0.0, 1.0]])
        q_a = np.asarray(q, dtype=np.float64).reshape(2, 2)
        self.covariance = f @ self.covariance @ f.T + g @ q_a @ g.T
        self.x += dx
        self.y += dy
        self.yaw += dpsi
        return OdometryState(t=t, x=self.x, y=self.y, yaw=self.yaw, linear_velocity=ds / dt,
                             yaw_rate=dpsi / dt, covariance=self.covariance.copy(),
                             twist_covariance=q_a / dt ** 2)


@dataclass(frozen=True)
class OdometryJoints:
    """Joint names read from sensor_msgs/JointState (docs/conventions.md defaults)."""

    rear_left: str = 'rear_left_wheel_joint'
    rear_right: str = 'rear_right_wheel_joint'
    front_left_steering: str = 'front_left_steering_joint'
    front_right_steering: str = 'front_right_steering_joint'


class JointStateOdometry:
    """:class:`StreamingOdometry` fed by joint-state messages (names + positions).

    differential: the two rear wheel angles; bicycle: their mean and the bicycle steering angle
    recovered from the two hinge angles (:func:`~rc_sim_control.ackermann.bicycle_steering_angle`).
    Messages lacking a needed joint position are skipped and counted in ``missing_count``.
    """

    def __init__(self, config: OdometryConfig, model: str = 'differential',
                 joints: OdometryJoints | None = None) -> None:
        self.odometry = StreamingOdometry(config, model)
        self.joints = joints or OdometryJoints()
        self.missing_count = 0

    def needed(self) -> tuple[str, ...]:
        """Joint names this model reads."""
        j = self.joints
        if self.odometry.model == 'differential':
            return (j.rear_left, j.rear_right)
        return (j.rear_left, j.rear_right, j.front_left_steering, j.front_right_steering)

    def update(self, t: float, names: Sequence[str],
               positions: Sequence[float]) -> OdometryState | None:
        """Feed one message at ``t`` [s]; the new state or None (reference, skipped, repeated)."""
        index = {n: i for i, n in enumerate(names)}
        values = []
        for name in self.needed():
            i = index.get(name)
            if i is None or i >= len(positions):
                self.missing_count += 1
                return None
            values.append(float(positions[i]))
        if self.odometry.model == 'differential':
            return self.odometry.update(t, values[0], values[1])
        cfg = self.odometry.config
        delta = float(bicycle_steering_angle(values[2], values[3], cfg.wheelbase,
                                             cfg.track_width))
        return self.odometry.update(t, 0.5 * (values[0] + values[1]), delta)


# --------------------------------------------------------------------------- message helpers
def pose_covariance_6x6(cov_xy_yaw: npt.ArrayLike,
                        unobserved_variance: float = 1e6) -> list[float]:
    """Row-major 6x6 (x, y, z, roll, pitch, yaw) covariance for nav_msgs/Odometry.

    Planar odometry: z, roll and pitch get ``unobserved_variance``.
    """
    c3 = np.asarray(cov_xy_yaw, dtype=np.float64).reshape(3, 3)
    out = np.zeros((6, 6))
    idx = [0, 1, 5]
    out[np.ix_(idx, idx)] = c3
    for i in (2, 3, 4):
        out[i, i] = unobserved_variance
    return [float(v) for v in out.reshape(-1)]
