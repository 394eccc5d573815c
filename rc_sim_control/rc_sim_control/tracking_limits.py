"""Can the car follow a reference? Peak speed, curvature and lateral acceleration of a
trajectory against the vehicle's speed, steering and friction limits."""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from rc_sim_control.trajectory_base import Trajectory
from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.params import VehicleParams

__all__ = [
    'CURVATURE_MARGIN',
    'SIZE_KEYS',
    'ReferenceLimits',
    'reference_limits',
]

#: Share of the car's steering (curvature) limit a reference may use: the rest is left to the
#: feedback that corrects tracking errors.
CURVATURE_MARGIN = 0.8
#: Keys of the tracker parameters that scale each shape (curvature ~ 1 / size).
SIZE_KEYS = {'lemniscate': 'amplitude', 'circle': 'radius', 'cycloid': 'cycloid_radius'}


@dataclass(frozen=True)
class ReferenceLimits:
    """Peaks of a reference over a run against what the car can do.

    ``curvature`` [1/m] of the centre-of-mass path against ``car_curvature`` = 1 / the centre of
    mass's smallest turning radius sqrt(R_min^2 + lr^2) (R_min of the rear axle, from
    max_steering_angle); ``speed`` [m/s] against ``max_speed``; ``lateral_acceleration`` v^2 k
    [m/s^2] against the friction limit mu g (mu = the lateral friction coefficient ``mu2``).
    """

    speed: float
    curvature: float
    lateral_acceleration: float
    max_speed: float
    car_curvature: float
    friction_limit: float

    def problems(self, size_key: str | None = None, size: float | None = None) -> list[str]:
        """One line per exceeded limit (empty when the car can follow the reference)."""
        out = []
        if self.curvature > self.car_curvature:
            hint = ''
            if size_key is not None and size is not None:
                need = size * self.curvature / (CURVATURE_MARGIN * self.car_curvature)
                hint = f'; --set {size_key}={math.ceil(need * 10) / 10:g} fits'
            out.append(f'the reference curvature reaches {self.curvature:.2f} 1/m, beyond the '
                       f"car's {self.car_curvature:.2f} 1/m: steering saturates{hint}")
        if self.speed > self.max_speed:
            out.append(f"the reference speed reaches {self.speed:.2f} m/s, beyond the car's "
                       f'max_speed {self.max_speed:.2f} m/s')
        if self.lateral_acceleration > self.friction_limit:
            out.append(f'the reference needs {self.lateral_acceleration:.1f} m/s^2 of lateral '
                       f"acceleration, beyond the tyres' mu g = {self.friction_limit:.1f} m/s^2")
        return out


def reference_limits(trajectory: Trajectory, duration: float,
                     params: VehicleParams, n: int = 4001) -> ReferenceLimits:
    """:class:`ReferenceLimits` of ``trajectory`` over [0, duration] for the car ``params``."""
    s = trajectory.sample(np.linspace(0.0, duration, n))
    speed = s.speed
    curvature = np.abs(s.curvature)
    lr = params.geometry.cg_to_rear_axle
    return ReferenceLimits(
        speed=float(np.max(speed)), curvature=float(np.max(curvature)),
        lateral_acceleration=float(np.max(speed ** 2 * curvature)),
        max_speed=params.max_speed,
        car_curvature=1.0 / math.hypot(params.min_turning_radius, lr),
        friction_limit=params.friction.mu2 * GRAVITY_MPS2)
