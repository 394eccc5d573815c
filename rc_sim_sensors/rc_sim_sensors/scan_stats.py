"""Statistics of a LaserScan sequence (``rcsim lidar stats``): geometry, validity, dropout, noise.

Works on scans whose beam count and angle grid change from scan to scan. Directions: on a fixed
grid each beam is a direction; otherwise beam angles (wrapped to [0, 2 pi)) are binned at the
median |angle_increment|. Readings are valid when finite and within the message's
[range_min, range_max] (0 and other values below range_min are invalid,
:func:`~rc_sim_sensors.scan_geometry.valid_mask`).

- dropout estimate: invalid readings in directions that are valid in more than half of the scans;
- rate: 1 / mean stamp interval, leaving out gaps over 1.5 median intervals;
- noise estimate: 3-sigma-clipped RMS of motion-compensated scan-to-scan differences over runs of
  nearly static pairs (:mod:`rc_sim_sensors.scan_pairs`); n/a when the sensor never stands still.

No figure is ever NaN in the printed text: undefined figures print as n/a.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_sensors.scan_geometry import Scan, invalid_kinds
from rc_sim_sensors.scan_pairs import fit_pairs, robust_scale, static_fits

__all__ = ['MAX_NOISE_PAIRS', 'ScanStats', 'direction_bins', 'scan_stats', 'static_residuals']

#: consecutive scan pairs examined for the noise estimate (evenly spaced blocks beyond it)
MAX_NOISE_PAIRS = 2000


@dataclass(frozen=True)
class ScanStats:
    """Summary of one LaserScan sequence (fractions are over all readings)."""

    topic: str
    scans: int
    beams_min: int
    beams_max: int
    fixed_geometry: bool
    angle_min: tuple[float, float]
    angle_increment: tuple[float, float]
    rate_hz: float
    readings: int
    valid_fraction: float
    pos_inf_fraction: float
    neg_inf_fraction: float
    nan_fraction: float
    low_fraction: float
    high_fraction: float
    dropout_estimate: float
    noise_estimate: float
    noise_pairs: int
    noise_samples: int
    pairs: int
    range_p01: float
    range_median: float
    range_p99: float
    skipped: int = 0
    #: the noise estimate's residuals and their directions (for its standard error)
    residuals: NDArray[np.float64] | None = field(default=None, repr=False, compare=False)
    directions: NDArray[np.int64] | None = field(default=None, repr=False, compare=False)

    def lines(self) -> list[str]:
        """Human-readable report (undefined figures print as n/a)."""
        beams = (f'{self.beams_min} beams' if self.beams_min == self.beams_max else
                 f'{self.beams_min}-{self.beams_max} beams')
        head = f'topic {self.topic}: {self.scans} scans x {beams}, {self.rate_hz:.2f} Hz'
        if self.skipped:
            head += f' ({self.skipped} unusable scans skipped)'
        if self.fixed_geometry:
            geometry = (f'  geometry fixed: angle_min {self.angle_min[0]:.4f} rad, increment '
                        f'{self.angle_increment[0]:.6f} rad')
        else:
            geometry = (f'  geometry varies: angle_min {self.angle_min[0]:.4f} to '
                        f'{self.angle_min[1]:.4f} rad, increment {self.angle_increment[0]:.6f} '
                        f'to {self.angle_increment[1]:.6f} rad')
        return [
            head, geometry,
            f'  valid {self.valid_fraction:.4%}   +inf {self.pos_inf_fraction:.4%}   '
            f'-inf {self.neg_inf_fraction:.4%}   nan {self.nan_fraction:.4%}   '
            f'below range_min (incl. 0) {self.low_fraction:.4%}   above range_max '
            f'{self.high_fraction:.4%}',
            (f'  dropout estimate {self.dropout_estimate:.4%} (invalid readings in directions '
             'valid in most scans)' if math.isfinite(self.dropout_estimate) else
             '  dropout estimate n/a (no direction is valid in most scans)'),
            (f'  noise estimate {self.noise_estimate * 1000:.2f} mm from {self.noise_pairs} of '
             f'{self.pairs} scan pairs (nearly static runs; motion-compensated scan-to-scan '
             'differences)' if math.isfinite(self.noise_estimate) else
             f'  noise estimate n/a (no run of nearly static scans among {self.pairs} pairs)'),
            (f'  range p1 {self.range_p01:.3f} m   median {self.range_median:.3f} m   '
             f'p99 {self.range_p99:.3f} m (valid readings)' if math.isfinite(self.range_median)
             else '  range n/a (no valid reading)'),
        ]

    def figures(self) -> dict[str, float]:
        """The printed figures by name (for side-by-side comparisons)."""
        return {'valid': self.valid_fraction, '+inf': self.pos_inf_fraction,
                '-inf': self.neg_inf_fraction, 'nan': self.nan_fraction,
                'below range_min': self.low_fraction, 'above range_max': self.high_fraction,
                'dropout estimate': self.dropout_estimate, 'noise estimate': self.noise_estimate,
                'range p1': self.range_p01, 'range median': self.range_median,
                'range p99': self.range_p99}


def direction_bins(scans: Sequence[Scan]) -> tuple[list[NDArray[np.int64]], int]:
    """Direction index of every beam of every scan, and the number of directions.

    Fixed grid: the beam index. Otherwise round(wrap(theta) / delta), delta = median
    |angle_increment|, wrap to [0, 2 pi).
    """
    if not scans:
        return [], 0
    if all(s.geometry == scans[0].geometry for s in scans):
        index = np.arange(scans[0].beams, dtype=np.int64)
        return [index] * len(scans), scans[0].beams
    delta = float(np.median([abs(s.angle_increment) for s in scans]))
    count = math.ceil(2.0 * math.pi / delta) + 1
    bins = [np.mod(np.rint(np.mod(s.angles, 2.0 * math.pi) / delta), count).astype(np.int64)
            for s in scans]
    return bins, count


def static_residuals(scans: Sequence[Scan], bins: Sequence[NDArray[np.int64]],
                     max_pairs: int = MAX_NOISE_PAIRS,
                     ) -> tuple[NDArray[np.float64], NDArray[np.int64], int]:
    """Motion-compensated residuals of the nearly static runs, their directions and the number
    of static pairs."""
    still = static_fits(fit_pairs(scans, max_pairs))
    if not still:
        return np.zeros(0), np.zeros(0, dtype=np.int64), 0
    return (np.concatenate([f.residuals for f in still]),
            np.concatenate([bins[f.index][f.beams] for f in still]), len(still))


def scan_stats(scans: Sequence[Scan], topic: str, *, skipped: int = 0,
               max_pairs: int = MAX_NOISE_PAIRS) -> ScanStats:
    """Statistics of ``scans`` (module docstring); ``scans`` must not be empty."""
    if not scans:
        raise ValueError('scan_stats needs at least one scan')
    kinds = dict.fromkeys(('valid', '+inf', '-inf', 'nan', 'low', 'high'), 0)
    bins, count = direction_bins(scans)
    valid_per = np.zeros(count, dtype=np.int64)
    total_per = np.zeros(count, dtype=np.int64)
    values = []
    for scan, b in zip(scans, bins):
        for key, n in invalid_kinds(scan.ranges, scan.range_min, scan.range_max).items():
            kinds[key] += n
        valid = scan.valid()
        valid_per += np.bincount(b[valid], minlength=count)
        total_per += np.bincount(b, minlength=count)
        values.append(scan.ranges[valid])
    readings = sum(kinds.values())
    usually = valid_per * 2 > total_per
    dropout = (float(1.0 - valid_per[usually].sum() / total_per[usually].sum())
               if usually.any() else math.nan)
    residuals, directions, still = static_residuals(scans, bins, max_pairs)
    noise = robust_scale(residuals) if residuals.size else math.nan
    valid_values = np.concatenate(values) if values else np.zeros(0, dtype=np.float32)
    pct = (np.percentile(valid_values, [1, 50, 99]) if valid_values.size
           else [math.nan] * 3)
    steps = np.diff(np.sort(np.array([s.stamp for s in scans])))
    period = float(np.median(steps)) if steps.size else 0.0
    if period > 0:  # mean interval without gaps (lost scans, several recordings)
        period = float(np.mean(steps[steps < 1.5 * period]))
    beams = [s.beams for s in scans]
    amins = [s.angle_min for s in scans]
    incs = [s.angle_increment for s in scans]

    def frac(key: str) -> float:
        return kinds[key] / readings if readings else 0.0

    return ScanStats(
        topic=topic, scans=len(scans), beams_min=min(beams), beams_max=max(beams),
        fixed_geometry=all(s.geometry == scans[0].geometry for s in scans),
        angle_min=(min(amins), max(amins)), angle_increment=(min(incs), max(incs)),
        rate_hz=1.0 / period if period > 0 else 0.0, readings=readings,
        valid_fraction=frac('valid'), pos_inf_fraction=frac('+inf'),
        neg_inf_fraction=frac('-inf'), nan_fraction=frac('nan'), low_fraction=frac('low'),
        high_fraction=frac('high'), dropout_estimate=dropout, noise_estimate=noise,
        noise_pairs=still, noise_samples=int(residuals.size), pairs=max(len(scans) - 1, 0),
        range_p01=float(pct[0]), range_median=float(pct[1]), range_p99=float(pct[2]),
        skipped=skipped, residuals=residuals, directions=directions)
