"""Range noise from consecutive scans of a (nearly) static scene, without a ground truth.

For independent noise of stddev sigma, the difference of two readings of the same direction has
variance 2 sigma^2. Real recordings need four corrections, each done here:

1. **Variable geometry**: scan k+1 is interpolated at scan k's angles (between two valid
   neighbours on one surface, linearly in 1/r: exact for a plane to ~inc^2/8); the difference
   z_k+1(theta) - z_k(theta) then has variance
   c sigma^2, c = 1 + (1 - f)^2 + f^2 (f = fractional beam position; c = 2 on a shared grid),
   and is divided by sqrt(c).
2. **Small sensor motion** (a handheld or vibrating sensor): to first order a translation t and a
   rotation w between the scans change the range of beam i by
   dz_i = -t.(cos th + g sin th, sin th - g cos th) + w dr/dth, g = (dr/dth) / r,
   which is exact for locally planar surfaces (r(th) = h / cos(th - beta) gives dr/dth = r tan a).
   Together with a common range offset db (bias drift) these four terms are removed by a robust
   (Huber) least-squares fit per pair; dr/dth is the local slope over +-2 beams.
3. **Moving scenes**: a pair is *static* when its raw differences are at most 1.5 times the
   motion-compensated ones (motion contributes at most ~1.1 sigma, well inside the first-order
   validity); only runs of at least 5 static pairs estimate noise.
4. **Outliers and quantisation**: the scale is a 3-sigma-clipped RMS divided by its normal
   consistency factor 0.98658 (smooth on millimetre-quantised data, where the MAD jumps in
   whole quanta).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_sensors.scan_geometry import Scan

__all__ = ['MIN_STATIC_PAIRS', 'STATIC_RATIO', 'PairFit', 'align', 'fit_pair', 'fit_pairs',
           'huber_fit', 'interpolate_range', 'local_slope', 'robust_scale', 'static_fits',
           'static_spans', 'translation_terms']

F64 = NDArray[np.float64]
#: a pair is static when raw scale <= STATIC_RATIO x motion-compensated scale
STATIC_RATIO = 1.5
#: a static span holds at least this many consecutive static pairs
MIN_STATIC_PAIRS = 5
_CLIP = 3.0
_CLIP_CONSISTENCY = 0.9865766  # sqrt(1 - 2 c phi(c) / (2 Phi(c) - 1)) at c = 3 (normal)
_MIN_BEAMS = 20
_MAX_TAN_INCIDENCE = 3.0  # beams beyond ~72 deg incidence are left out of the motion fit


def robust_scale(x: F64, iterations: int = 8) -> float:
    """sigma of zero-mean data: RMS of |x| < 3 s, iterated, / 0.98658 (normal consistency);
    0 for all-zero data, NaN for no data."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return math.nan
    s = 1.4826 * float(np.median(np.abs(x)))
    if s == 0.0:
        s = float(np.sqrt(np.mean(x * x)))
    if s == 0.0:
        return 0.0
    for _ in range(iterations):
        inside = x[np.abs(x) < _CLIP * s]
        if inside.size == 0:
            break
        new = float(np.sqrt(np.mean(inside * inside))) / _CLIP_CONSISTENCY
        if new == 0.0 or abs(new - s) <= 1e-9 * s:
            s = new
            break
        s = new
    return s


def interpolate_range(r0: F64, r1: F64, f: F64) -> F64:
    """Range at fraction f between two beams on one planar surface: 1/r is linear in the
    angle's cosine, 1 / r(th) = cos(th - beta) / h, so interpolating 1/r errs by ~ inc^2 / 8
    relative (0.01 % at 1.6 deg), where interpolating r errs by r'' inc^2 / 8 (mm on oblique
    walls)."""
    return 1.0 / ((1.0 - f) / r0 + f / r1)


def _jump_tolerance(r: F64) -> F64:
    """Largest neighbour-to-neighbour change still on one surface: 3 cm + 10 % of the range
    (an oblique plane at 75 deg changes by 0.1 r between beams 1.6 deg apart)."""
    return 0.03 + 0.1 * np.abs(r)


def align(a: Scan, b: Scan) -> tuple[F64, F64]:
    """Scan b at scan a's angles: (values, variance factor c) per beam of a (NaN = none).

    Shared grid: b itself, c = 2. Otherwise interpolation (:func:`interpolate_range`) between
    b's two neighbouring valid beams on one surface (wrapping around a full-circle scan),
    c = 1 + (1 - f)^2 + f^2.
    """
    valid_b = b.valid()
    rb = np.where(valid_b, b.ranges.astype(np.float64), np.nan)
    if a.geometry == b.geometry:
        return rb, np.full(a.beams, 2.0)
    inc = b.angle_increment
    x = (a.angles - b.angle_min) / inc
    n = b.beams
    out = np.full(a.beams, np.nan)
    factor = np.full(a.beams, np.nan)
    if b.full_circle:
        period = 2.0 * math.pi / abs(inc)
        x = np.mod(x, period)
        gap_last = max(period - (n - 1), 1e-9)  # from beam n-1 back to beam 0
    else:
        gap_last = 1.0
    x = np.where(np.abs(x - np.rint(x)) < 1e-6, np.rint(x), x)
    i0 = np.floor(x).astype(np.int64)
    inside = (i0 >= 0) & (i0 <= n - 1) & (x <= (n - 1 + (gap_last if b.full_circle else 0)))
    i0 = np.clip(i0, 0, n - 1)
    f = x - i0
    last = i0 == n - 1
    f = np.where(last & (f > 0), f / gap_last, f)
    i1 = np.where(last, 0 if b.full_circle else n - 1, i0 + 1)
    i1 = np.clip(i1, 0, n - 1)
    r0, r1 = rb[i0], rb[i1]
    exact = inside & (f == 0.0)
    out[exact] = r0[exact]
    factor[exact] = 2.0
    with np.errstate(invalid='ignore'):
        blend = inside & (f > 0.0) & (np.abs(r1 - r0) <= _jump_tolerance(r0))
    out[blend] = interpolate_range(r0[blend], r1[blend], f[blend])
    factor[blend] = 1.0 + (1.0 - f[blend]) ** 2 + f[blend] ** 2
    return out, factor


def local_slope(m: F64, increment: float) -> F64:
    """dr/dtheta [m/rad]: least-squares slope over beams i-2..i+2 on one surface (NaN else)."""
    n = m.shape[0]
    slope = np.full(n, np.nan)
    if n < 5:
        return slope
    window = np.stack([m[j:n - 4 + j] for j in range(5)])  # (5, n-4), centre i = 2..n-3
    with np.errstate(invalid='ignore'):
        smooth = np.all(np.abs(np.diff(window, axis=0)) <= _jump_tolerance(window[2]), axis=0)
    weights = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])[:, None]
    slope[2:n - 2] = np.where(smooth, (weights * window).sum(axis=0) / (10.0 * increment),
                              np.nan)
    return slope


def translation_terms(theta: F64, slope: F64, ranges: F64) -> tuple[F64, F64]:
    """(a_x, a_y) = (cos th + g sin th, sin th - g cos th), g = (dr/dth) / r: a translation
    t of the sensor changes the range of a planar surface by -(t_x a_x + t_y a_y)."""
    with np.errstate(invalid='ignore', divide='ignore'):
        g = slope / ranges
    return np.cos(theta) + g * np.sin(theta), np.sin(theta) - g * np.cos(theta)


@dataclass(frozen=True)
class PairFit:
    """Motion-compensated differences of scans k and k+1, normalised to variance sigma^2.

    ``beams``: beams of scan k used; ``ranges``: their mean range [m]; ``residuals`` [m];
    ``tan_incidence``: |g| = |dr/dth| / r; ``raw_scale`` / ``scale``: robust sigma before / after
    motion compensation [m]; ``offset``: common range change db [m] and its standard error;
    ``translation`` [m] and ``rotation`` [rad] of the sensor between the scans; ``shift``: the
    coefficients (c_x, c_y) of the translation terms, dz = c_x a_x + c_y a_y.
    """

    index: int
    beams: NDArray[np.int64]
    ranges: F64
    residuals: F64
    tan_incidence: F64
    raw_scale: float
    scale: float
    offset: float
    offset_se: float
    translation: float
    rotation: float
    shift: tuple[float, float] = (0.0, 0.0)

    @property
    def static(self) -> bool:
        """Raw differences at most STATIC_RATIO x the compensated ones (and enough beams)."""
        return (self.beams.size >= _MIN_BEAMS and math.isfinite(self.scale)
                and self.raw_scale <= STATIC_RATIO * self.scale + 1e-12)


def fit_pair(a: Scan, b: Scan, index: int = 0) -> PairFit | None:
    """Motion-compensated differences b - a (module docstring); None below 20 usable beams."""
    rb, factor = align(a, b)
    ra = np.where(a.valid(), a.ranges.astype(np.float64), np.nan)
    mean = 0.5 * (ra + rb)
    slope = local_slope(mean, a.angle_increment)
    with np.errstate(invalid='ignore', divide='ignore'):
        g = slope / mean
        use = (np.isfinite(ra) & np.isfinite(rb) & np.isfinite(g)
               & (np.abs(g) <= _MAX_TAN_INCIDENCE))
    beams = np.nonzero(use)[0]
    if beams.size < _MIN_BEAMS:
        return None
    th = a.angles[beams]
    gi = g[beams]
    w = 1.0 / np.sqrt(factor[beams])
    d = (rb - ra)[beams]
    ax, ay = translation_terms(th, slope[beams], mean[beams])
    design = np.stack([np.ones_like(th), ax, ay, slope[beams]], axis=1) * w[:, None]
    y = d * w
    raw = robust_scale(y - np.median(y))
    beta, resid = huber_fit(design, y)
    resid *= math.sqrt(beams.size / max(beams.size - design.shape[1], 1))  # fitted dof
    scale = robust_scale(resid)
    try:
        cov00 = float(np.linalg.pinv(design.T @ design)[0, 0])
    except np.linalg.LinAlgError:  # pragma: no cover - pinv of a 4x4 does not fail in practice
        cov00 = math.nan
    return PairFit(index=index, beams=beams, ranges=mean[beams], residuals=resid,
                   tan_incidence=np.abs(gi), raw_scale=raw, scale=scale, offset=float(beta[0]),
                   offset_se=scale * math.sqrt(max(cov00, 0.0)),
                   translation=float(math.hypot(beta[1], beta[2])), rotation=float(beta[3]),
                   shift=(float(beta[1]), float(beta[2])))


def huber_fit(design: F64, y: F64, iterations: int = 8) -> tuple[F64, F64]:
    """Huber M-estimate (k = 2 sigma) by iteratively reweighted least squares."""
    weights = np.ones_like(y)
    beta = np.zeros(design.shape[1])
    resid = y.copy()
    for _ in range(iterations):
        sw = np.sqrt(weights)
        beta = np.asarray(np.linalg.lstsq(design * sw[:, None], y * sw, rcond=None)[0],
                          dtype=np.float64)
        resid = np.asarray(y - design @ beta, dtype=np.float64)
        s = 1.4826 * float(np.median(np.abs(resid)))
        if s == 0.0:
            break
        weights = np.minimum(1.0, 2.0 * s / np.maximum(np.abs(resid), 1e-300))
    return beta, resid


def fit_pairs(scans: Sequence[Scan], max_pairs: int | None = None) -> list[PairFit]:
    """:func:`fit_pair` of consecutive scans (k, k+1), in order.

    With more than ``max_pairs`` pairs, evenly spaced blocks of 25 consecutive pairs are fitted
    (static runs stay contiguous). Pairs with fewer than 20 usable beams are left out.
    """
    n = len(scans) - 1
    if n <= 0:
        return []
    ks: Sequence[int] = range(n)
    if max_pairs is not None and n > max_pairs:
        block = min(25, max_pairs)
        starts = np.linspace(0, n - block, max(max_pairs // block, 1)).round().astype(np.int64)
        ks = sorted({int(s) + j for s in starts for j in range(block)})
    fits = []
    for k in ks:
        fit = fit_pair(scans[k], scans[k + 1], k)
        if fit is not None:
            fits.append(fit)
    return fits


def static_spans(fits: Sequence[PairFit], min_pairs: int = MIN_STATIC_PAIRS,
                 ) -> list[tuple[int, int]]:
    """Runs of at least ``min_pairs`` consecutive static pairs, as (first scan, last scan) index
    ranges (inclusive); a shorter run is more likely a chance pass than a still sensor."""
    spans: list[tuple[int, int]] = []
    for fit in fits:
        if not fit.static:
            continue
        k = fit.index
        if spans and spans[-1][1] == k:
            spans[-1] = (spans[-1][0], k + 1)
        else:
            spans.append((k, k + 1))
    return [(a, b) for a, b in spans if b - a >= min_pairs]


def static_fits(fits: Sequence[PairFit], min_pairs: int = MIN_STATIC_PAIRS) -> list[PairFit]:
    """The pairs inside :func:`static_spans`."""
    spans = static_spans(fits, min_pairs)
    return [f for f in fits if f.static and any(a <= f.index < b for a, b in spans)]
