"""What the training recordings cover, and so where a fit on them extrapolates.

Three gaps that real recordings often have and that no optimiser can close:

* **Turns only near the tyres' limit.** Below about 0.3 g of lateral acceleration the tyres are
  nearly linear and the car follows its steering closely (``delta ~ L r / v``), so the steering
  map is measured directly. Above it, a larger steering angle with softer tyres and a smaller one
  with stiffer tyres predict the same turn: the map and the cornering stiffnesses are confounded,
  and a fit that is right at 0.7 g can be wrong at 0.1 g. (The DART car's fast recording turns at
  0.6-0.9 g only: fitted there, its map is 40 % too large at walking pace; docs/calibration.md.)
* **Gentle turns only.** Below about 0.15 g the tyres' slip angles are a fraction of a degree:
  their cornering stiffnesses and grip hardly act, stay near their priors, and harder turns are
  extrapolated (the DART car's slow recording, 0.11 g at the 90th percentile: fitted there, its
  tyres are twice as stiff as the fast recording needs).
* **One throttle level.** Over a narrow duty range the motor gain, its dead band and the
  rolling resistance trade against each other; another duty is an extrapolation.

:func:`coverage_warnings` says so in one line each (the fit adds them to its warnings and the
report); it changes nothing in the fit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rc_sim_calibration.staged import Signals, sample_commands
from rc_sim_description.constants import GRAVITY_MPS2

__all__ = ['GENTLE_LATERAL_ACCELERATION', 'LINEAR_LATERAL_ACCELERATION', 'coverage_warnings']

#: [m/s^2] lateral acceleration below which tyres are close to linear (0.3 g: the linear range of
#: passenger-car and RC tyres alike, Milliken & Milliken 1995, ch. 2 and 5)
LINEAR_LATERAL_ACCELERATION = 0.3 * GRAVITY_MPS2
MIN_SPEED = 0.5         # [m/s] the kinematic angle L r / v is meaningful above
MIN_TURN_ANGLE = 0.05   # [rad] kinematic steering angle of a turn
MIN_LINEAR_TURN = 2.0   # [s] of turning in the linear range that fixes the steering map
MIN_DUTY_SPREAD = 0.1   # 10th-90th percentile spread of the duty while driving [-]
#: [m/s^2] the 90th percentile of the lateral acceleration while driving must reach this for the
#: tyres to act in the data (0.15 g)
GENTLE_LATERAL_ACCELERATION = 0.15 * GRAVITY_MPS2


def coverage_warnings(sigs: Sequence[Signals], wheelbase: float, drive_kind: str) -> list[str]:
    """One line per coverage gap of the training signals (module docstring); [] when none."""
    out: list[str] = []
    turning = linear = 0.0
    ay_turning: list[np.ndarray] = []
    ay_moving: list[np.ndarray] = []
    for s in sigs:
        dt = float(np.median(np.diff(s.t))) if s.t.size > 1 else 0.0
        moving = s.v > MIN_SPEED
        angle = np.abs(wheelbase * s.r / np.where(moving, s.v, 1.0))
        turn = moving & (angle > MIN_TURN_ANGLE) & np.isfinite(angle)
        ay = np.abs(s.v * s.r)
        turning += dt * float(turn.sum())
        linear += dt * float((turn & (ay < LINEAR_LATERAL_ACCELERATION)).sum())
        ay_turning.append(ay[turn])
        ay_moving.append(ay[moving & np.isfinite(ay)])
    if turning >= MIN_LINEAR_TURN and linear < MIN_LINEAR_TURN:
        ay = np.concatenate(ay_turning) / GRAVITY_MPS2
        lo, hi = np.percentile(ay, [10, 90])
        out.append(f'coverage: the training recordings turn at {lo:.2f}-{hi:.2f} g (10th-90th '
                   f'percentile) and only {linear:.1f} s below 0.3 g: there the steering map and '
                   'the tyre stiffnesses are confounded, so gentler turns are extrapolated; add '
                   'slow steady circles (rcsim protocol) or priors from a measured full lock '
                   '(docs/calibration.md)')
    moving_ay = np.concatenate(ay_moving)
    if moving_ay.size and np.percentile(moving_ay, 90) < GENTLE_LATERAL_ACCELERATION:
        p90 = float(np.percentile(moving_ay, 90)) / GRAVITY_MPS2
        out.append(f'coverage: the training recordings turn gently only (lateral acceleration '
                   f"below {p90:.2f} g 90 % of the time): the tyres' cornering stiffness and "
                   'grip hardly act, so they stay near their priors and harder turns are '
                   'extrapolated; add faster circles and a slalom (rcsim protocol)')
    if drive_kind == 'throttle':
        duty = np.concatenate([sample_commands(s)[1][s.v > MIN_SPEED] for s in sigs])
        duty = duty[duty > 0.0]
        if duty.size:
            lo, hi = np.percentile(duty, [10, 90])
            if hi - lo < MIN_DUTY_SPREAD:
                out.append(f'coverage: the training recordings drive at duties {lo:.2f}-{hi:.2f} '
                           '(10th-90th percentile) only: the motor gain, its dead band and the '
                           'rolling resistance are fitted there, other duties are extrapolated; '
                           'add speed steps and coasting (rcsim protocol)')
    return out
