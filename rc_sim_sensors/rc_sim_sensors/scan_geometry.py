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

from collections.abc import Sequence
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
    'GridSpec',
    'Scan',
    'ScanGrid',
    'bin_scans',
    'grid_spec',
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



@dataclass(frozen=True)
class GridSpec:
    """An angular grid: direction j at ``origin + j * increment`` [rad], ``count`` directions,
    wrapping when ``full_circle``; ``fixed``: the beam grid of scans that all share it."""

    origin: float
    increment: float
    count: int
    full_circle: bool
    fixed: bool

    @property
    def angles(self) -> F64:
        """Angle of each direction [rad]."""
        return self.origin + self.increment * np.arange(self.count, dtype=np.float64)

    def index(self, angles: F64) -> F64:
        """Fractional direction index of ``angles`` (wrapped to [0, count) on a full turn)."""
        x = (np.asarray(angles, dtype=np.float64) - self.origin) / self.increment
        return np.mod(x, self.count) if self.full_circle else x


def _closes_circle(beams: int, increment: float) -> bool:
    """B |increment| covers a turn up to 1.5 increments (drivers that bin a turn leave the
    last partial bin out)."""
    return beams * abs(increment) >= _TWO_PI - 1.5 * abs(increment)


def grid_spec(scans: Sequence[Scan]) -> GridSpec:
    """The common grid of a recording's scans: their beam grid when they all share it;
    otherwise spacing = the median increment (adjusted to close a full turn when the scans
    cover one: directions then wrap), origin 0 on a full turn, else the smallest angle."""
    if not scans:
        raise ValueError('grid_spec needs at least one scan')
    first = scans[0]
    if all(s.geometry == first.geometry for s in scans):
        return GridSpec(first.angle_min, first.angle_increment, first.beams, first.full_circle,
                        True)
    inc = float(np.median([s.angle_increment for s in scans]))
    full = bool(np.mean([_closes_circle(s.beams, s.angle_increment) for s in scans]) > 0.5)
    if full:
        count = max(round(_TWO_PI / abs(inc)), 1)
        return GridSpec(0.0, math.copysign(_TWO_PI / count, inc), count, True, False)
    ends = [(s.angle_min, s.angle_min + s.angle_increment * (s.beams - 1))
            for s in scans if s.beams]
    lo = min(min(a, b) for a, b in ends)
    hi = max(max(a, b) for a, b in ends)
    origin = lo if inc > 0 else hi
    return GridSpec(origin, inc, max(round((hi - lo) / abs(inc)) + 1, 1), False, False)


@dataclass(frozen=True)
class ScanGrid:
    """Scans on one :class:`GridSpec`; arrays are (scans K, directions N).

    ``beam`` is the scan's beam nearest each direction (-1: none within half an increment),
    ``present`` marks directions that have one, ``valid`` those whose nearest beam is valid.
    ``ranges`` [m]: the range at the direction (NaN unless valid): between the scan's two beams
    around it when both are valid and on one surface (1/r interpolation: a plane to inc^2 / 8
    relative; ``variance``: its variance in units of one reading's, (1 - f)^2 + f^2 on a
    surface facing the sensor), else the nearest beam's reading (``variance`` 1), reported
    ``offset`` [rad] from the direction (0 when interpolated and on a fixed grid).
    ``intensity``: the nearest beam's (NaN: none).
    """

    spec: GridSpec
    ranges: F64
    present: NDArray[np.bool_]
    valid: NDArray[np.bool_]
    offset: F64
    beam: NDArray[np.int64]
    intensity: F64 | None
    stamps: F64
    variance: F64

    @property
    def scans(self) -> int:
        """Scans K."""
        return int(self.ranges.shape[0])

    def rows(self, first: int, last: int) -> ScanGrid:
        """Scans ``first..last`` (inclusive) on the same grid."""
        part = slice(first, last + 1)
        return ScanGrid(self.spec, self.ranges[part], self.present[part], self.valid[part],
                        self.offset[part], self.beam[part],
                        None if self.intensity is None else self.intensity[part],
                        self.stamps[part], self.variance[part])


def bin_scans(scans: Sequence[Scan], spec: GridSpec | None = None) -> ScanGrid:
    """``scans`` resampled on ``spec`` (default: :func:`grid_spec` of the scans), direction by
    direction from the beams around it (:class:`ScanGrid`); on their own fixed grid the beams
    as they are."""
    spec = spec or grid_spec(scans)
    k_all, count = len(scans), spec.count
    stamps = np.array([s.stamp for s in scans], dtype=np.float64)
    has_intensity = any(s.intensities is not None for s in scans)
    if spec.fixed:
        if not scans:
            empty = np.zeros((0, count))
            return ScanGrid(spec, empty, empty.astype(bool), empty.astype(bool), empty,
                            empty.astype(np.int64), None, stamps, empty)
        raw = np.stack([s.ranges for s in scans]).astype(np.float64)
        valid = valid_mask(raw, 0.0, math.inf)
        limits = np.array([(s.range_min, s.range_max) for s in scans])
        with np.errstate(invalid='ignore'):
            valid &= (raw >= limits[:, :1]) & (raw <= limits[:, 1:])
        inten = None
        if has_intensity:
            inten = np.stack([np.asarray(s.intensities, dtype=np.float64)
                              if s.intensities is not None else np.full(count, np.nan)
                              for s in scans])
        return ScanGrid(spec, np.where(valid, raw, np.nan), np.ones((k_all, count), dtype=bool),
                        valid, np.zeros((k_all, count)),
                        np.tile(np.arange(count, dtype=np.int64), (k_all, 1)), inten, stamps,
                        np.ones((k_all, count)))
    ranges = np.full((k_all, count), np.nan)
    present = np.zeros((k_all, count), dtype=bool)
    valid = np.zeros((k_all, count), dtype=bool)
    offset = np.zeros((k_all, count))
    variance = np.ones((k_all, count))
    beam = np.full((k_all, count), -1, dtype=np.int64)
    inten = np.full((k_all, count), np.nan) if has_intensity else None
    theta = spec.angles
    for k, s in enumerate(scans):
        n = s.beams
        if not n:
            continue
        x = (theta - s.angle_min) / s.angle_increment  # fractional beam index
        if spec.full_circle:
            x = np.mod(x, _TWO_PI / abs(s.angle_increment))
        nearest = np.rint(x).astype(np.int64)
        wrapped = spec.full_circle & (nearest >= n) & (x - (n - 1) > 0.5 * (
            _TWO_PI / abs(s.angle_increment) - (n - 1)))
        nearest = np.where(wrapped, 0, nearest)
        inside = (nearest >= 0) & (nearest < n)
        nearest = np.clip(nearest, 0, n - 1)
        delta = np.where(wrapped, x - _TWO_PI / abs(s.angle_increment), x - nearest)
        inside &= np.abs(delta) <= 0.5 + 1e-9
        ok = s.valid()
        r = np.where(ok, s.ranges.astype(np.float64), np.nan)
        present[k] = inside
        valid[k] = inside & ok[nearest]
        beam[k] = np.where(inside, nearest, -1)
        raw = np.where(valid[k], r[nearest], np.nan)
        # between the two beams around the direction, on one surface: 1/r interpolation
        # (a plane to inc^2 / 8 relative), variance (1 - f)^2 + f^2 of one reading's
        i0 = np.floor(x).astype(np.int64)
        f = x - i0
        i1 = i0 + 1
        if spec.full_circle:
            i1 = np.where(i1 >= n, 0, i1)
        pair = inside & (i0 >= 0) & (i0 < n) & (i1 >= 0) & (i1 < n) & (f > 0)
        pair &= ~(spec.full_circle & (i0 == n - 1) & (i1 == 0) & (
            _TWO_PI / abs(s.angle_increment) - (n - 1) > 1.5))
        i0c, i1c = np.clip(i0, 0, n - 1), np.clip(i1, 0, n - 1)
        gap = np.where(i1c == i0c + 1, 1.0, _TWO_PI / abs(s.angle_increment) - (n - 1))
        frac = np.clip(f / np.maximum(gap, 1e-9), 0.0, 1.0)
        r0, r1 = r[i0c], r[i1c]
        with np.errstate(invalid='ignore', divide='ignore'):
            blend = pair & (np.abs(r1 - r0) <= 0.03 + 0.1 * np.minimum(r0, r1))
            between = 1.0 / ((1.0 - frac) / r0 + frac / r1)
        ranges[k] = np.where(blend, between, raw)
        offset[k] = np.where(blend | ~inside, 0.0, -delta * s.angle_increment)
        with np.errstate(invalid='ignore', divide='ignore'):  # d between / d r_i
            w0, w1 = (1.0 - frac) * (between / r0) ** 2, frac * (between / r1) ** 2
        variance[k] = np.where(blend, w0 * w0 + w1 * w1, 1.0)
        if inten is not None and s.intensities is not None:
            inten[k] = np.where(inside, np.asarray(s.intensities, dtype=np.float64)[nearest],
                                np.nan)
    return ScanGrid(spec, ranges, present, valid, offset, beam, inten, stamps, variance)
