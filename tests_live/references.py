"""Independent reference equations of the command chain, for the live tests to judge nodes by.

Written from the seed document (seeds/000: "TurningCommandMapper", "Cinematique Ackermann") and
the equation table of docs/control.md, in plain Python/numpy. Nothing here imports rc_sim_* code:
a defect in the package's mapping cannot leak into the reference it is judged by.

Kinematic bicycle, reference point = rear-axle centre, + = left (REP 103). L wheelbase, W track
width, r wheel radius, delta bicycle steering angle.

* (1) delta = atan(L kappa) = atan(L / R)
* (2) psi_dot = v tan(delta) / L
* (3) omega_rear = v / r
* (4) delta_left = atan(L / (R - W/2)), delta_right = atan(L / (R + W/2)), signed
  R = L / tan(delta)
* (5) omega_{l,r} = omega (1 -+ W / (2 R))  (electronic differential)

Mapper modes (meaning of ``angular.z``; docs/control.md "Mapper modes"): curvature kappa [1/m],
radius R [m] (0 and +-inf: straight), steering_angle delta [rad], yaw_rate psi_dot [rad/s]
(kappa = psi_dot / v with the *requested* v; undefined below the standstill speed: the steering
is held). Limits: |delta| <= delta_max, |omega| <= omega_max.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

__all__ = [
    'MODES',
    'Car',
    'Mapped',
    'achieved',
    'ackermann_hinges',
    'joint_commands',
    'map_command',
    'rear_speeds',
    'steering_request',
    'zoh',
]

MODES = ('curvature', 'radius', 'steering_angle', 'yaw_rate')


@dataclass(frozen=True)
class Car:
    """The numbers the equations need (SI): geometry and limits."""

    L: float            # wheelbase [m]
    W: float            # track width [m]
    r: float            # wheel radius [m]
    delta_max: float    # |delta| limit [rad]
    omega_max: float    # |omega| limit [rad/s]
    steer_rate: float = math.inf  # |d delta / dt| limit [rad/s]
    standstill: float = 0.05      # yaw_rate mode: |v| below this holds delta [m/s]

    @classmethod
    def from_mapping(cls, geometry: dict, steering: dict, drive: dict, **extra: float) -> Car:
        """From the vehicle.yaml sections (plain dicts)."""
        return cls(L=float(geometry['wheelbase']), W=float(geometry['track_width']),
                   r=float(geometry['wheel_radius']),
                   delta_max=float(steering['max_steering_angle']),
                   omega_max=float(drive['max_wheel_speed']),
                   steer_rate=float(steering['max_steering_rate']), **extra)

    @property
    def r_min(self) -> float:
        """Minimum turning radius of the rear-axle centre, L / tan(delta_max) [m]."""
        return self.L / math.tan(self.delta_max)


@dataclass(frozen=True)
class Mapped:
    """Expected mapper outputs for one command (``delta`` None: held from before)."""

    delta: float | None
    omega: float
    steer_saturated: bool
    speed_saturated: bool


def steering_request(mode: str, v: float, z: float, car: Car) -> float | None:
    """Unclipped bicycle angle [rad] asked by (v, angular.z) in ``mode`` (eq. 1); None when the
    request does not define one (yaw_rate mode at standstill)."""
    if mode == 'steering_angle':
        return z
    if mode == 'curvature':
        return math.atan(car.L * z)
    if mode == 'radius':
        if z == 0.0 or math.isinf(z):
            return 0.0
        return math.atan(car.L / z)
    if mode == 'yaw_rate':
        if abs(v) < car.standstill:
            return None
        return math.atan(car.L * z / v)  # kappa = psi_dot / v: reverse flips the steering
    raise ValueError(mode)


def map_command(mode: str, v: float, z: float, car: Car) -> Mapped:
    """Eqs. (1) and (3) with the limits: steering target and rear wheel speed."""
    req = steering_request(mode, v, z, car)
    delta = None if req is None else min(max(req, -car.delta_max), car.delta_max)
    omega_raw = v / car.r
    omega = min(max(omega_raw, -car.omega_max), car.omega_max)
    return Mapped(delta=delta, omega=omega,
                  steer_saturated=req is not None and abs(req) > car.delta_max + 1e-12,
                  speed_saturated=abs(omega_raw) > car.omega_max)


def achieved(delta: float, omega: float, car: Car) -> tuple[float, float]:
    """(yaw rate [rad/s], signed turn radius [m]) achieved by (delta, omega): eqs. (2), (1).

    psi_dot = (omega r) tan(delta) / L; R = L / tan(delta), +inf when straight."""
    t = math.tan(delta)
    return omega * car.r * t / car.L, (math.inf if t == 0.0 else car.L / t)


def ackermann_hinges(delta: float, car: Car) -> tuple[float, float]:
    """(left, right) front hinge angles [rad] of the bicycle angle delta: eq. (4), literally.

    R = L / tan(delta) is the signed radius (right turn: R < 0, the right wheel is inner)."""
    if delta == 0.0:
        return 0.0, 0.0
    R = car.L / math.tan(delta)
    return math.atan(car.L / (R - car.W / 2)), math.atan(car.L / (R + car.W / 2))


def rear_speeds(omega: float, delta: float, car: Car,
                electronic_differential: bool) -> tuple[float, float]:
    """(left, right) rear wheel speeds [rad/s]: both omega, or eq. (5); when the faster wheel
    passes the limit both are scaled down together (the ratio of eq. (5) kept)."""
    if not electronic_differential or delta == 0.0:
        return omega, omega
    R = car.L / math.tan(delta)
    left, right = omega * (1 - car.W / (2 * R)), omega * (1 + car.W / (2 * R))
    fastest = max(abs(left), abs(right))
    scale = car.omega_max / fastest if fastest > car.omega_max else 1.0
    return left * scale, right * scale


def joint_commands(delta: float, omega: float, car: Car,
                   electronic_differential: bool = False) -> dict[str, float]:
    """The bridge's four joint commands for the inputs (delta, omega), inputs clipped first."""
    d = min(max(delta, -car.delta_max), car.delta_max)
    w = min(max(omega, -car.omega_max), car.omega_max)
    left, right = ackermann_hinges(d, car)
    rear_l, rear_r = rear_speeds(w, d, car, electronic_differential)
    return {'front_left_steering': left, 'front_right_steering': right,
            'rear_left_wheel': rear_l, 'rear_right_wheel': rear_r}


def zoh(t: np.ndarray, samples_t: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Zero-order hold of ``values`` given at ``samples_t`` (increasing), evaluated at ``t``;
    before the first sample the first value, after the last the last."""
    idx = np.clip(np.searchsorted(samples_t, t, side='right') - 1, 0, len(samples_t) - 1)
    return np.asarray(values)[idx]
