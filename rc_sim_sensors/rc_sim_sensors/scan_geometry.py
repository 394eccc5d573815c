"""LaserScan geometry and validity (REP 117), for scans whose geometry changes from scan to scan.

A :class:`Scan` holds one ``sensor_msgs/LaserScan``'s ranges, its own angle grid
theta_i = angle_min + i * angle_increment and its limits. Low-cost 360 deg lidars change the beam
count and ``angle_min`` every scan, so nothing here assumes two scans share a grid.

Validity: a reading r is valid when range_min <= r <= range_max and r is finite. REP 117 marks
invalid readings +inf (no return / beyond range), -inf (too close) and NaN (measurement error);
many drivers write 0 instead, and URG-class drivers small error codes below ``range_min``, so
every reading below ``range_min`` (including 0) is invalid too.

:func:`scan_problem` checks the fields that enter arithmetic before anything is allocated
(beam limit, angle grid, counts, limits) and returns a one-line reason or None.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.limits import soft_limit

__all__ = [
    'ANGLE_MIN_LIMIT',
    'BEAM_LIMIT_VARIABLE',
    'DEFAULT_MAX_SCAN_BEAMS',
    'Scan',
    'incidence_from_ranges',
    'invalid_kinds',
    'max_scan_beams',
    'scan_from_message',
    'scan_problem',
    'valid_mask',
]

#: Beams per scan accepted by default: 100,000 is about 30x the densest planar scanners (a
#: 0.1 deg full circle has 3,600 beams); one scan then costs a few MB in the error model.
DEFAULT_MAX_SCAN_BEAMS = 100_000
#: Environment variable that raises (or lowers) the beam limit.
BEAM_LIMIT_VARIABLE = 'RC_SIM_MAX_SCAN_BEAMS'
_TWO_PI = 2.0 * math.pi
#: |angle_min| accepted [rad]: drivers use [-pi, pi] or [0, 2 pi]; beyond 4 pi the value is not an
#: angle in rad (and near 1e16 rad adding increments no longer changes it in float64).
ANGLE_MIN_LIMIT = 4.0 * math.pi

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]


def max_scan_beams() -> int:
    """The beam limit: ``$RC_SIM_MAX_SCAN_BEAMS`` or :data:`DEFAULT_MAX_SCAN_BEAMS`."""
    return int(soft_limit(BEAM_LIMIT_VARIABLE, DEFAULT_MAX_SCAN_BEAMS))


def scan_problem(beams: int, intensities: int, angle_min: float, angle_increment: float,
                 range_min: float, range_max: float, sec: int = 0, nanosec: int = 0,
                 ) -> str | None:
    """Why a LaserScan with these fields cannot be used (one line), or None.

    Checked: beams <= :func:`max_scan_beams`; ``intensities`` is 0 or ``beams``; angle_min
    finite and within +-4 pi; angle_increment finite and non-zero (negative = clockwise
    scanner, allowed); the grid spans at most one turn plus one increment;
    0 <= range_min < range_max (range_max may be +inf); stamp nanosec < 1e9.
    """
    limit = max_scan_beams()
    if beams > limit:
        return (f'{beams} beams per scan exceed the limit of {limit} (raise it with the '
                f'environment variable {BEAM_LIMIT_VARIABLE})')
    if intensities not in (0, beams):
        return f'{intensities} intensities for {beams} ranges (must be 0 or {beams})'
    if not (math.isfinite(angle_min) and abs(angle_min) <= ANGLE_MIN_LIMIT):
        return f'angle_min is {angle_min} (must be a finite angle within +-4 pi rad)'
    if not math.isfinite(angle_increment) or angle_increment == 0.0:
        return (f'angle_increment is {angle_increment} (must be a finite non-zero angle in '
                'rad)')
    span = abs(angle_increment) * max(beams - 1, 0)
    if span > _TWO_PI * (1.0 + 1e-3) + abs(angle_increment):
        return (f'angle_increment {angle_increment:g} rad x {beams} beams spans {span:.4g} rad, '
                'more than one turn (degrees instead of radians?)')
    if not (math.isfinite(range_min) and range_min >= 0.0):
        return f'range_min is {range_min} (must be finite and >= 0 m)'
    if math.isnan(range_max) or not range_max > range_min:
        return f'range_min {range_min:g} m is not below range_max {range_max:g} m'
    if not 0 <= nanosec < 1_000_000_000:
        return f'header stamp nanosec {nanosec} (must be in [0, 1e9))'
    del sec
    return None


@dataclass(frozen=True)
class Scan:
    """One LaserScan: ranges [m] on its own grid theta_i = angle_min + i angle_increment [rad].

    ``stamp`` is the header stamp [s]; ``intensities`` is None when the message has none.
    """

    ranges: F32
    angle_min: float
    angle_increment: float
    range_min: float
    range_max: float
    stamp: float
    intensities: F32 | None = None

    @property
    def beams(self) -> int:
        """Number of beams B."""
        return int(self.ranges.shape[0])

    @property
    def geometry(self) -> tuple[int, float, float]:
        """(B, angle_min, angle_increment): scans with equal keys share a grid."""
        return self.beams, self.angle_min, self.angle_increment

    @property
    def angles(self) -> F64:
        """theta_i [rad] (LaserScan convention)."""
        return self.angle_min + self.angle_increment * np.arange(self.beams, dtype=np.float64)

    @property
    def full_circle(self) -> bool:
        """True when the grid closes a full turn (B |increment| >= 2 pi, 0.1 % tolerance)."""
        return self.beams * abs(self.angle_increment) >= _TWO_PI * (1.0 - 1e-3)

    def valid(self) -> NDArray[np.bool_]:
        """Valid readings: finite and within [range_min, range_max]."""
        return valid_mask(self.ranges, self.range_min, self.range_max)


def valid_mask(ranges: NDArray[Any], range_min: float, range_max: float) -> NDArray[np.bool_]:
    """range_min <= r <= range_max (NaN and +-inf are invalid; 0 is invalid when range_min > 0,
    and always counts as invalid: drivers write 0 for "no return")."""
    r = np.asarray(ranges)
    with np.errstate(invalid='ignore'):
        ok = (r >= range_min) & (r <= range_max) & np.isfinite(r)
    return ok & (r != 0.0)


def invalid_kinds(ranges: NDArray[Any], range_min: float, range_max: float,
                  ) -> dict[str, int]:
    """Counts of each kind of reading: valid, +inf, -inf, nan, low (finite, below range_min,
    including 0), high (finite, above range_max)."""
    r = np.asarray(ranges)
    finite = np.isfinite(r)
    valid = valid_mask(r, range_min, range_max)
    with np.errstate(invalid='ignore'):
        high = finite & (r > range_max)
    return {'valid': int(valid.sum()), '+inf': int(np.isposinf(r).sum()),
            '-inf': int(np.isneginf(r).sum()), 'nan': int(np.isnan(r).sum()),
            'low': int((finite & ~valid & ~high).sum()), 'high': int(high.sum())}


def scan_from_message(msg: Any) -> Scan | str:
    """A :class:`Scan` of a decoded LaserScan, or the one-line reason it is unusable."""
    stamp = msg.header.stamp
    problem = scan_problem(len(msg.ranges), len(msg.intensities), float(msg.angle_min),
                           float(msg.angle_increment), float(msg.range_min),
                           float(msg.range_max), int(stamp.sec), int(stamp.nanosec))
    if problem is not None:
        return problem
    intensities = None
    if len(msg.intensities):
        intensities = np.asarray(msg.intensities, dtype=np.float32)
    return Scan(np.asarray(msg.ranges, dtype=np.float32), float(msg.angle_min),
                float(msg.angle_increment), float(msg.range_min), float(msg.range_max),
                stamp.sec + 1e-9 * stamp.nanosec, intensities)


def incidence_from_ranges(ranges: NDArray[Any], angle_increment: float,
                          edge: float = 0.1) -> F64:
    """Incidence angle alpha_i [rad] from the scan itself: tan alpha = |dr/dtheta| / r.

    For a planar surface at distance h, r(theta) = h / cos(theta - beta), so
    dr/dtheta = r tan(alpha) exactly; dr/dtheta is a central difference over the neighbouring
    beams (one-sided at ends and next to a depth jump > ``edge`` m or an invalid neighbour).
    Beams without a usable neighbour get alpha = 0 (normal incidence).
    """
    r = np.asarray(ranges, dtype=np.float64)
    n = r.shape[0]
    alpha = np.zeros(n)
    if n < 2:
        return alpha
    with np.errstate(invalid='ignore'):
        step = np.diff(r)
        ok = np.isfinite(step) & (np.abs(step) <= edge) & (r[:-1] > 0) & (r[1:] > 0)
    left = np.full(n, np.nan)
    right = np.full(n, np.nan)
    left[1:] = np.where(ok, step, np.nan)
    right[:-1] = np.where(ok, step, np.nan)
    both = np.isfinite(left) & np.isfinite(right)
    slope = np.where(both, 0.5 * (left + right), np.where(np.isfinite(left), left, right))
    slope = slope / abs(angle_increment)
    have = np.isfinite(slope) & np.isfinite(r) & (r > 0)
    alpha[have] = np.arctan(np.abs(slope[have]) / r[have])
    return alpha
