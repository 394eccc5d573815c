"""Real vs simulated ``lidar stats`` figures, with the standard error of each difference.

Standard errors: the fractions, the dropout estimate and the range percentiles vary with the
scene more than with the readings (a direction reads about the same in every scan), so their
sampling unit is the direction: cluster standard errors for fractions, a bootstrap over
directions (200 resamples, fixed seed) for percentiles. The noise estimate takes the larger of
the reading-level se = 1.03 sqrt(1.5 / (2 N)) s (clipped RMS of N consecutive-pair
differences) and a bootstrap over directions (surfaces differ in noise). A drifting range offset
moves all readings of a span together: its spread adds to the percentiles' errors.
A figure is *indistinguishable* when |simulated - real| <= 3 se of the difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_sensors.fit_estimators import SCALE_SE
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.scan_geometry import Scan
from rc_sim_sensors.scan_stats import ScanStats, direction_bins, scan_stats, static_residuals

__all__ = ['Z_LIMIT', 'FigureComparison', 'FrontBeam', 'compare_stats', 'figure_errors',
           'front_beam', 'offset_sd']

Z_LIMIT = 3.0
_KINDS = ('valid', '+inf', '-inf', 'nan', 'below range_min', 'above range_max')


@dataclass(frozen=True)
class FigureComparison:
    """One printed figure: real and simulated value, standard error of their difference."""

    figure: str
    real: float
    simulated: float
    se: float

    @property
    def z(self) -> float:
        """(simulated - real) / se; 0 when both are equal (or both undefined)."""
        if self.real == self.simulated or (math.isnan(self.real) and math.isnan(self.simulated)):
            return 0.0
        if not (math.isfinite(self.real) and math.isfinite(self.simulated)):
            return math.inf
        return (self.simulated - self.real) / self.se if self.se > 0 else math.inf

    @property
    def indistinguishable(self) -> bool:
        """|z| <= :data:`Z_LIMIT`."""
        return abs(self.z) <= Z_LIMIT


def _kind_masks(scan: Scan) -> dict[str, NDArray[np.bool_]]:
    r = scan.ranges
    finite = np.isfinite(r)
    valid = scan.valid()
    with np.errstate(invalid='ignore'):
        high = finite & (r > scan.range_max)
    return {'valid': valid, '+inf': np.isposinf(r), '-inf': np.isneginf(r), 'nan': np.isnan(r),
            'below range_min': finite & ~valid & ~high, 'above range_max': high}


def _cluster_se(k: NDArray[np.int64], n: NDArray[np.int64]) -> float:
    total = float(n.sum())
    if total == 0:
        return 0.0
    p = float(k.sum()) / total
    return math.sqrt(float(np.sum((k - p * n) ** 2))) / total


def figure_errors(scans: Sequence[Scan], stats: ScanStats, seed: int = 0,
                  resamples: int = 200) -> dict[str, float]:
    """Standard error of each figure of :meth:`ScanStats.figures` (module docstring)."""
    bins, count = direction_bins(scans)
    counts = {kind: np.zeros(count, dtype=np.int64) for kind in _KINDS}
    total = np.zeros(count, dtype=np.int64)
    per_dir: list[list[NDArray[np.float32]]] = [[] for _ in range(count)]
    for scan, b in zip(scans, bins):
        masks = _kind_masks(scan)
        total += np.bincount(b, minlength=count)
        for kind in _KINDS:
            counts[kind] += np.bincount(b[masks[kind]], minlength=count)
        valid = masks['valid']
        order = np.argsort(b[valid], kind='stable')
        vb, vr = b[valid][order], scan.ranges[valid][order]
        cuts = np.searchsorted(vb, np.arange(count + 1))
        for j in np.unique(vb):
            per_dir[j].append(vr[cuts[j]:cuts[j + 1]])
    se = {kind: _cluster_se(counts[kind], total) for kind in _KINDS}
    usually = counts['valid'] * 2 > total
    se['dropout estimate'] = _cluster_se((total - counts['valid'])[usually], total[usually])
    rng = np.random.default_rng(seed)
    se['noise estimate'] = _noise_se(scans, bins, stats, rng, resamples)
    groups = [np.concatenate(v) for v in per_dir if v]
    if groups:
        values = np.concatenate(groups).astype(np.float64)
        gid = np.repeat(np.arange(len(groups)), [g.size for g in groups])
        order = np.argsort(values, kind='stable')
        values, gid = values[order], gid[order]
        picks = rng.integers(0, len(groups), size=(resamples, len(groups)))
        reps = np.array([_weighted_percentiles(values, gid, np.bincount(pick,
                                                                         minlength=len(groups)),
                                               (1.0, 50.0, 99.0)) for pick in picks])
        spread = reps.std(axis=0, ddof=1)
    else:
        spread = np.full(3, math.nan)
    se['range p1'], se['range median'], se['range p99'] = (float(x) for x in spread)
    return se


def _weighted_percentiles(values: NDArray[np.float64], gid: NDArray[np.int64],
                          counts: NDArray[np.int64], q: tuple[float, ...]) -> NDArray[np.float64]:
    """Percentiles of the sample that holds group g ``counts[g]`` times (a bootstrap over
    groups without building it): ``values`` sorted ascending (``gid`` their groups), each
    weighted by its group's count."""
    w = counts[gid].astype(np.float64)
    cw = np.cumsum(w)
    total = cw[-1]
    v = values
    # the position (0 .. total - 1) of each percentile in the resampled, sorted sample
    pos = np.array(q) / 100.0 * (total - 1)
    lo = np.searchsorted(cw, np.floor(pos) + 1, side='left')
    hi = np.searchsorted(cw, np.minimum(np.floor(pos) + 2, total), side='left')
    frac = pos - np.floor(pos)
    return (1.0 - frac) * v[np.minimum(lo, v.size - 1)] + frac * v[np.minimum(hi, v.size - 1)]


def _weighted_robust_scale(a_sorted: NDArray[np.float64], x2_sorted: NDArray[np.float64],
                           w: NDArray[np.float64], iterations: int = 8) -> float:
    """:func:`~rc_sim_sensors.scan_pairs.robust_scale` of a sample in which reading i appears
    w_i times (|x| sorted ascending in ``a_sorted``, x^2 alongside)."""
    cw = np.cumsum(w)
    total = cw[-1]
    if total <= 0:
        return math.nan
    cq = np.cumsum(w * x2_sorted)
    s = 1.4826 * float(a_sorted[min(int(np.searchsorted(cw, 0.5 * total)), a_sorted.size - 1)])
    if s == 0.0:
        s = math.sqrt(float(cq[-1]) / total)
    for _ in range(iterations):
        if s == 0.0:
            break
        k = int(np.searchsorted(a_sorted, 3.0 * s, side='left'))
        if k == 0 or cw[k - 1] <= 0:
            break
        s = math.sqrt(float(cq[k - 1]) / float(cw[k - 1])) / 0.9865766
    return s


def _noise_se(scans: Sequence[Scan], bins: Sequence[NDArray[np.int64]], stats: ScanStats,
              rng: np.random.Generator, resamples: int) -> float:
    """The larger of the reading-level and the direction-bootstrap standard error."""
    if not stats.noise_samples:
        return math.nan
    analytic = SCALE_SE * stats.noise_estimate / math.sqrt(stats.noise_samples)
    if stats.residuals is not None and stats.directions is not None:
        residuals, directions = stats.residuals, stats.directions
    else:
        residuals, directions, _ = static_residuals(scans, bins)
    groups, gid = np.unique(directions, return_inverse=True)
    if groups.size < 2:
        return analytic
    a = np.abs(residuals)
    order = np.argsort(a, kind='stable')
    a_sorted, x2_sorted, g_sorted = a[order], a[order] ** 2, gid[order]
    picks = rng.integers(0, groups.size, size=(resamples, groups.size))
    reps = [_weighted_robust_scale(a_sorted, x2_sorted,
                                   np.bincount(pick, minlength=groups.size)[g_sorted]
                                   .astype(np.float64)) for pick in picks]
    return max(analytic, float(np.std(reps, ddof=1)))


def offset_sd(config: LidarErrorConfig, scans: int, period: float) -> float:
    """Stddev of the mean range offset over ``scans`` scans of the config's drifting bias: it
    moves every reading of a span alike, so range percentiles inherit it.

    Gauss-Markov (stationary, phi = exp(-T / tau)): var = sigma_g^2 / K^2 sum_ij phi^|i-j|;
    random walk from 0: var = sigma_b^2 (K - 1)(2K - 1) / (6K).
    """
    k = max(scans, 1)
    var = 0.0
    if config.bias_markov_stddev > 0 and period > 0:
        phi = math.exp(-period / config.bias_correlation_time)
        lags = np.arange(1, k)
        var += config.bias_markov_stddev ** 2 * (k + 2.0 * np.sum((k - lags) * phi ** lags)) \
            / k ** 2
    if config.bias_walk_stddev > 0:
        var += config.bias_walk_stddev ** 2 * (k - 1) * (2 * k - 1) / (6.0 * k)
    return math.sqrt(var)


def compare_stats(real: Sequence[Scan], simulated: Sequence[Scan], topic: str = 'scan',
                  seed: int = 0, config: LidarErrorConfig | None = None,
                  parameter_se: dict[str, float] | None = None,
                  ) -> tuple[ScanStats, ScanStats, list[FigureComparison]]:
    """``lidar stats`` of both sequences and each figure's comparison; with the fitted
    ``config``, the range percentiles' errors include its drifting offset (:func:`offset_sd`);
    ``parameter_se`` adds the fit's own uncertainty to the simulated figures (by name)."""
    a, b = scan_stats(real, topic), scan_stats(simulated, topic)
    ea, eb = figure_errors(real, a, seed), figure_errors(simulated, b, seed)
    if config is not None:
        period = 1.0 / a.rate_hz if a.rate_hz > 0 else 0.0
        for errors, n in ((ea, len(real)), (eb, len(simulated))):
            sd = offset_sd(config, n, period)
            for name in ('range p1', 'range median', 'range p99'):
                errors[name] = math.hypot(errors[name], sd)
    for name, extra in (parameter_se or {}).items():
        eb[name] = math.hypot(eb[name], extra)
    fa, fb = a.figures(), b.figures()
    out = [FigureComparison(name, fa[name], fb[name], math.hypot(ea[name], eb[name]))
           for name in fa]
    return a, b, out


@dataclass(frozen=True)
class FrontBeam:
    """The beam looking straight ahead (the valid reading nearest angle 0 of each scan):
    mean and stddev of its range [m] over the scans that have one, how many do; and the
    invalid fraction of all readings of the scans."""

    mean: float
    std: float
    readings: int
    invalid: float


def front_beam(scans: Sequence[Scan]) -> FrontBeam:
    """:class:`FrontBeam` of ``scans`` (a reading within half an increment of angle 0;
    angles wrapped to a turn)."""
    values: list[float] = []
    invalid = total = 0
    for s in scans:
        total += s.beams
        ok = s.valid()
        invalid += int((~ok).sum())
        if not s.beams:
            continue
        wrapped = np.mod(s.angles, 2.0 * math.pi)
        gap = np.minimum(wrapped, 2.0 * math.pi - wrapped)
        i = int(np.argmin(gap))
        if gap[i] <= 0.5 * abs(s.angle_increment) + 1e-12 and ok[i]:
            values.append(float(s.ranges[i]))
    v = np.array(values)
    return FrontBeam(float(v.mean()) if v.size else math.nan,
                     float(v.std(ddof=1)) if v.size > 1 else math.nan, int(v.size),
                     invalid / total if total else math.nan)
