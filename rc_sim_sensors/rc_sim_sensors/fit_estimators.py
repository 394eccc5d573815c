"""Estimators of lidar error parameters from static scans, without a ground-truth scene.

Each returns an :class:`Estimate` (value, standard error, sample count, how). The scene of a
static span comes from :mod:`rc_sim_sensors.static_scene`; noise from motion-compensated
scan-to-scan differences (:mod:`rc_sim_sensors.scan_pairs`).

- range quantum q: the largest of 0.1 mm ... 1 cm on whose grid >= 99 % of the readings lie;
- noise sigma(d) = sigma0 + k d: binned by range, sigma_b^2 = s_b^2 - q^2/12 (Sheppard's
  correction: the model quantises after adding noise), weighted least squares;
- invalid returns: binomial maximum likelihood over directions valid in most scans, a constant
  rate or a ramp in range, incidence or intensity, the ramp kept when its likelihood-ratio
  statistic (divided by the over-dispersion of the directions) exceeds chi^2_2(0.999) = 13.8.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_sensors.scan_geometry import ScanGrid
from rc_sim_sensors.scan_pairs import robust_scale
from rc_sim_sensors.static_scene import StaticScene

__all__ = ['QUANTA', 'Estimate', 'NoiseBin', 'RampFit', 'SpuriousFit', 'bias_drift',
           'binomial_loglik', 'detect_quantum', 'fit_noise', 'fit_ramp', 'mixed_pixels',
           'noise_and_angle_error', 'noise_by_range', 'ramp_probability', 'scan_loss',
           'spurious_returns']

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
#: candidate range quanta [m] (what drivers output: 0.1 mm to 1 cm steps)
QUANTA = (1e-4, 2e-4, 2.5e-4, 5e-4, 1e-3, 2e-3, 2.5e-3, 5e-3, 1e-2)
#: relative standard error of a clipped-RMS sigma from N consecutive-pair differences:
#: 1.03 / sqrt(2N) (efficiency at the normal) x sqrt(1.5) (consecutive differences share a scan)
SCALE_SE = 1.03 * math.sqrt(1.5 / 2.0)
LRT_THRESHOLD = 13.8  # chi^2 with 2 degrees of freedom at p = 0.001
_DRIFT_SCANS = 600


@dataclass(frozen=True)
class Estimate:
    """An estimated quantity: value, standard error (NaN: none), samples used, how."""

    value: float
    se: float
    samples: int
    note: str = ''


def detect_quantum(values: F64) -> Estimate:
    """Largest q of :data:`QUANTA` with >= 99 % of ``values`` within 1 % of q of its grid."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return Estimate(0.0, math.nan, 0, 'no valid reading')
    for q in sorted(QUANTA, reverse=True):
        x = v / q
        on_grid = float(np.mean(np.abs(x - np.rint(x)) < 0.01))
        if on_grid >= 0.99:
            return Estimate(q, 0.0, int(v.size), f'{on_grid:.2%} of the readings are multiples '
                            f'of {q * 1000:g} mm')
    return Estimate(0.0, 0.0, int(v.size), 'readings are not on a grid of 0.1 mm to 1 cm')


@dataclass(frozen=True)
class NoiseBin:
    """Noise of one range bin: ``scale`` is the observed sigma of the readings (with
    quantisation), ``sigma`` the noise before quantisation; ``se`` its standard error."""

    lo: float
    hi: float
    mean_range: float
    scale: float
    sigma: float
    se: float
    n: int


def noise_by_range(ranges: F64, residuals: F64, quantum: float, max_bins: int = 8,
                   min_per_bin: int = 2000) -> list[NoiseBin]:
    """Equal-count range bins of the normalised residuals, sigma_b^2 = s_b^2 - q^2 / 12."""
    order = np.argsort(ranges, kind='stable')
    r, e = ranges[order], residuals[order]
    nbins = int(np.clip(r.size // min_per_bin, 1, max_bins))
    out = []
    for part_r, part_e in zip(np.array_split(r, nbins), np.array_split(e, nbins)):
        if part_r.size == 0:
            continue
        s = robust_scale(part_e)
        sigma = math.sqrt(max(s * s - quantum * quantum / 12.0, 0.0))
        se = SCALE_SE * s / math.sqrt(part_e.size) * (s / sigma if sigma > 0 else 1.0)
        out.append(NoiseBin(float(part_r[0]), float(part_r[-1]), float(part_r.mean()), s,
                            sigma, se, int(part_e.size)))
    return out


def noise_and_angle_error(ranges: F64, residuals: F64, slopes: F64, quantum: float,
                          increments: F64 | None = None, max_bins: int = 8,
                          min_per_bin: int = 2000, facing_noise: bool = True,
                          still: F64 | None = None) -> tuple[list[NoiseBin], Estimate]:
    """Range noise per range bin, and the stddev of the error of the reported beam angles.

    An angle error dth moves a reading by (dr/dth) dth. Cheap 360 deg lidars bin their returns
    by angle, so a reading's reported angle may be off by up to an increment, in jumps; their
    residuals grow with |dr/dth|, and away from the directions facing a surface say more about
    the angles than the ranges. Test: per range bin (equal counts), the residuals are split into
    up to 4 cells of |dr/dth| (>= 500 each); the cells' variances v = s_b^2 + J (dr/dth)^2
    (J = sigma_th^2) by weighted least squares (weights 1 / se(v)^2, se(v) = 2 v 1.03
    sqrt(1.5 / 2n)). J is kept when positive, beyond 3 standard errors and sigma_th is at least
    a tenth of the increment (smaller ones are not told from the errors of moving readings
    between directions; the clipped scale of jumps of a whole increment grows less than their
    variance: J errs low).

    Without it (or without ``facing_noise``: the angle errors are not simulated, so the noise
    must carry them) the bins are :func:`noise_by_range`'s of every residual. With it the noise
    is taken where angle errors cannot reach it: :func:`noise_by_range` (bins of at least 200)
    of the residuals whose |dr/dth| x increment is at most half the noise of the 200 smallest
    of their range bin; with ``still`` (the same residuals without motion compensation), per
    bin the smaller of the two (on a sensor that stands still the motion fit only adds the
    angle errors that drag it).
    Returns (bins, sigma_th [rad] estimate, 0 when not kept).
    """
    slope = np.abs(np.asarray(slopes, dtype=np.float64))
    step = slope * (np.abs(increments) if increments is not None else 0.0)
    n = int(residuals.size)
    plain = noise_by_range(ranges, residuals, quantum, max_bins, min_per_bin)
    none = Estimate(0.0, math.nan, n, 'no growth of the noise with the surface slope dr/dth '
                    'beyond 3 standard errors')
    order = np.argsort(ranges, kind='stable')
    nbins = len(plain)
    parts = [p for p in np.array_split(order, nbins) if p.size]
    floor = quantum / math.sqrt(12.0)
    low_sigma = []
    rows, values, ses, xs = [], [], [], []
    for b, part in enumerate(parts):
        low = part[np.argsort(step[part], kind='stable')[:200]]
        sigma = max(robust_scale(residuals[low]), floor)
        low_sigma.append(sigma)
        cells = int(np.clip(part.size // 500, 1, 4))
        for idx in np.array_split(part[np.argsort(slope[part], kind='stable')], cells):
            if idx.size < 50:
                continue
            v = robust_scale(residuals[idx]) ** 2
            rows.append(b)
            values.append(v)
            ses.append(max(2.0 * v * SCALE_SE / math.sqrt(idx.size), 1e-30))
            xs.append(float(np.mean(slope[idx] ** 2)))
    if len(values) <= len(parts) or np.ptp(xs) == 0:
        return plain, none
    # in units of typical values (the information matrix spans many decades otherwise)
    v0 = float(np.median(values)) or 1.0
    x0 = float(np.max(xs)) or 1.0
    design = np.zeros((len(values), len(parts) + 1))
    design[np.arange(len(values)), rows] = 1.0
    design[:, -1] = np.array(xs) / x0
    w = 1.0 / (np.array(ses) / v0) ** 2
    cov = np.linalg.pinv(design.T @ (design * w[:, None]))
    beta = cov @ (design.T @ (w * np.array(values) / v0))
    j = float(beta[-1]) * v0 / x0
    se_j = math.sqrt(max(float(cov[-1, -1]), 0.0)) * v0 / x0
    step_typ = float(np.median(np.abs(increments))) if increments is not None else 0.0
    if not (j > 0 and j > 3.0 * se_j and math.sqrt(j) >= 0.1 * step_typ):
        return plain, none
    sigma_th = math.sqrt(j)
    found = Estimate(sigma_th, se_j / (2.0 * sigma_th), n,
                     f'residual variance grows as sigma_th^2 (dr/dth)^2 over {len(values)} range '
                     'x slope cells (errors of the reported beam angles)')
    if not facing_noise:
        return plain, found
    keep = np.zeros(n, dtype=bool)
    for part, sigma in zip(parts, low_sigma):
        keep[part[step[part] <= 0.5 * sigma]] = True
    if keep.sum() < 200:  # too few readings facing their surface
        return plain, found
    bins = noise_by_range(ranges[keep], residuals[keep], quantum, max_bins, 200)
    if still is not None:  # the same readings without motion compensation: the smaller
        other = noise_by_range(ranges[keep], still[keep], quantum, max_bins, 200)
        bins = [a if a.scale <= b.scale else b for a, b in zip(bins, other)]
    return bins, Estimate(found.value, found.se, n, found.note + f'; the noise from the '
                          f'{int(keep.sum())} residuals facing their surface')


def fit_noise(bins: Sequence[NoiseBin]) -> tuple[Estimate, Estimate, float]:
    """sigma(d) = sigma0 + k d by weighted least squares over the bins (weights 1 / se^2).

    k is kept when positive and significant (k > 2 se_k) and sigma0 when non-negative;
    otherwise the constant (or purely proportional) model. Returns (sigma0, k, chi^2 / dof).
    """
    d = np.array([b.mean_range for b in bins])
    y = np.array([b.sigma for b in bins])
    w = 1.0 / np.maximum(np.array([b.se for b in bins]), 1e-12) ** 2
    n = int(sum(b.n for b in bins))

    def solve(columns: list[F64]) -> tuple[F64, F64, float]:
        x = np.stack(columns, axis=1)
        info = x.T @ (x * w[:, None])
        cov = np.linalg.pinv(info)
        beta = cov @ (x.T @ (w * y))
        chi2 = float(np.sum(w * (y - x @ beta) ** 2))
        return beta, np.sqrt(np.diag(cov)), chi2

    constant = solve([np.ones_like(d)])
    if len(bins) >= 3 and np.ptp(d) > 0:
        beta, se, chi2 = solve([np.ones_like(d), d])
        if beta[1] > 2.0 * se[1] and beta[0] >= 0.0:
            how = f'sigma0 + k d over {len(bins)} range bins'
            return (Estimate(float(beta[0]), float(se[0]), n, how),
                    Estimate(float(beta[1]), float(se[1]), n, how), chi2 / (len(bins) - 2))
        if beta[1] > 2.0 * se[1]:
            pb, pse, pchi2 = solve([d])
            how = f'k d (sigma0 < 0 in the linear fit) over {len(bins)} range bins'
            return (Estimate(0.0, math.nan, n, how), Estimate(float(pb[0]), float(pse[0]), n,
                                                               how), pchi2 / (len(bins) - 1))
    beta, se, chi2 = constant
    how = (f'constant over {len(bins)} range bins (no significant growth with range)'
           if len(bins) > 1 else 'one range bin')
    return (Estimate(float(beta[0]), float(se[0]), n, how), Estimate(0.0, math.nan, n, how),
            chi2 / max(len(bins) - 1, 1))


@dataclass(frozen=True)
class RampFit:
    """p(x) = 1 - (1 - p0)(1 - p1 ramp(x)); ``lrt``: likelihood-ratio statistic against a constant
    rate, divided by the over-dispersion ``dispersion``; ``start``: where the ramp starts (range,
    incidence) or the intensity limit; ``held_out``: False when fitted without a span, the ramp
    did not predict that span better than a constant."""

    covariate: str
    p0: float
    p1: float
    start: float
    lrt: float
    dispersion: float
    samples: int
    held_out: bool = True

    @property
    def significant(self) -> bool:
        """Likelihood ratio beyond chi^2_2(0.999), and (several spans) the held-out spans agree."""
        return self.lrt > LRT_THRESHOLD and self.p1 > 0.0 and self.held_out


def _ramp(kind: str, x: F64, start: F64, end: float) -> F64:
    if kind == 'intensity':  # p_0 clip(1 - I / I_lim, 0, 1)
        return np.clip(1.0 - x / start, 0.0, 1.0)
    return np.clip((x - start) / np.maximum(end - start, 1e-12), 0.0, 1.0)


def _loglik(p: F64, k: F64, n: F64) -> F64:
    p = np.clip(p, 1e-12, 1.0 - 1e-12)
    return np.sum(k * np.log(p) + (n - k) * np.log1p(-p), axis=-1)


def ramp_probability(fit: RampFit, x: F64, end: float = math.inf) -> F64:
    """p(x) of a fitted ramp (constant p0 beyond its covariate's range)."""
    xx = np.nan_to_num(np.asarray(x, dtype=np.float64))
    return 1.0 - (1.0 - fit.p0) * (1.0 - fit.p1 * _ramp(fit.covariate, xx, np.float64(fit.start),
                                                        end))


def binomial_loglik(p: F64, k: NDArray[np.int64], n: NDArray[np.int64]) -> float:
    """sum k log p + (n - k) log(1 - p) (p clipped away from 0 and 1)."""
    return float(_loglik(np.asarray(p, dtype=np.float64), k.astype(np.float64),
                         n.astype(np.float64)))


def fit_ramp(kind: str, x: F64, n: I64, k: I64, end: float = math.inf) -> RampFit | None:
    """Binomial ML fit of a dropout ramp in ``x`` per direction (n readings, k invalid).

    Directions are pooled into <= 40 quantile bins of x; (p0, p1, start) on a grid. The
    likelihood-ratio statistic is divided by the Pearson over-dispersion of the directions
    under the constant rate (surfaces differ beyond the binomial spread).
    """
    ok = np.isfinite(x) & (n > 0)
    if ok.sum() < 10 or (kind != 'intensity' and not math.isfinite(end)):
        return None
    x, n, k = x[ok], n[ok].astype(np.float64), k[ok].astype(np.float64)
    p_const = k.sum() / n.sum()
    pearson = np.sum((k - n * p_const) ** 2 / np.maximum(n * p_const * (1 - p_const), 1e-12))
    dispersion = max(float(pearson) / max(x.size - 1, 1), 1.0)
    order = np.argsort(x, kind='stable')
    groups = np.array_split(order, min(40, x.size))
    xb = np.array([x[g].mean() for g in groups])
    nb = np.array([n[g].sum() for g in groups])
    kb = np.array([k[g].sum() for g in groups])
    ll_const = float(_loglik(np.full_like(xb, p_const), kb, nb))
    if kind == 'intensity':
        starts = np.quantile(x, np.linspace(0.05, 1.0, 20)) * 1.0001
    else:
        starts = np.quantile(x, np.linspace(0.0, 0.95, 20))
        starts = starts[starts < end]
    if starts.size == 0:
        return None
    p1s = np.linspace(0.0, 1.0, 51)
    p0s = np.concatenate([[0.0], np.geomspace(1e-4, 0.9, 60)])
    ramp = _ramp(kind, xb[None, :], starts[:, None], end)  # (S, B)
    p = 1.0 - (1.0 - p0s[None, None, :, None]) * (
        1.0 - p1s[None, :, None, None] * ramp[:, None, None, :])  # (S, P1, P0, B)
    ll = _loglik(p, kb, nb)
    s, i1, i0 = np.unravel_index(int(np.argmax(ll)), ll.shape)
    lrt = max(2.0 * (float(ll[s, i1, i0]) - ll_const), 0.0) / dispersion
    return RampFit(kind, float(p0s[i0]), float(p1s[i1]), float(starts[s]), lrt, dispersion,
                   int(n.sum()))


def scan_loss(stamps: F64) -> Estimate:
    """Lost scans from gaps in the header stamps: a gap of dt counts round(dt / T) - 1 lost
    scans (T = median period, dt > 1.5 T); p = lost / (received + lost)."""
    t = np.sort(np.asarray(stamps, dtype=np.float64))
    if t.size < 3:
        return Estimate(0.0, math.nan, int(t.size), 'too few scans')
    dt = np.diff(t)
    period = float(np.median(dt))
    if period <= 0:
        return Estimate(0.0, math.nan, int(t.size), 'stamps do not increase')
    gaps = dt[dt > 1.5 * period]
    lost = int(np.sum(np.rint(gaps / period) - 1))
    total = t.size + lost
    p = lost / total
    return Estimate(p, math.sqrt(max(p * (1 - p), 1.0 / total) / total), total,
                    f'{lost} scans missing from the stamps (period {period * 1000:.1f} ms)')


def mixed_pixels(grid: ScanGrid, scene: StaticScene, sigma: F64, threshold: float,
                 ) -> tuple[int, float, int]:
    """Readings strictly between the two surfaces of a depth edge of the scene.

    Edges: neighbouring directions, both valid in most scans, whose median ranges differ by more
    than ``threshold``. A reading of either direction counts as mixed when it lies more than
    3 sigma plus the surface's change across one direction (|dS/dth| x increment) from both
    surfaces. Returns (mixed readings, opportunities = scans x edges x the
    chance 1 - 6 sigma / jump that a uniform blend lands there, edges).
    """
    r = scene.range
    usually = scene.usually_valid
    jump = np.abs(np.diff(r))
    with np.errstate(invalid='ignore'):
        edge = usually[:-1] & usually[1:] & (jump > threshold)
    index = np.nonzero(edge)[0]
    if index.size == 0:
        return 0, 0.0, 0
    near = np.minimum(r[index], r[index + 1])
    far = np.maximum(r[index], r[index + 1])
    # a surface also changes across one direction's width (oblique or curved): not a blend
    width = np.nan_to_num(np.maximum(np.abs(scene.slope[index]), np.abs(scene.slope[index + 1]))
                          * abs(scene.increment))
    s = sigma[index] + width / 3.0
    edge_of = np.full(r.size, -1, dtype=np.int64)
    edge_of[index + 1] = np.arange(index.size)
    edge_of[index] = np.arange(index.size)  # a direction between two edges keeps the left one
    dirs = np.nonzero(edge_of >= 0)[0]
    e = edge_of[dirs]
    v = grid.ranges[:, dirs]
    with np.errstate(invalid='ignore'):
        hit = (v > near[e] + 3 * s[e]) & (v < far[e] - 3 * s[e])
    between = np.bincount(e, weights=hit.sum(axis=0), minlength=index.size).astype(np.int64)
    chance = np.clip(1.0 - 6.0 * s / (far - near), 0.0, 1.0)
    return int(between.sum()), float(grid.scans * chance.sum()), int(index.size)


def bias_drift(runs: Sequence[tuple[F64, F64]], period: float, longest: float,
               ) -> tuple[Estimate, Estimate]:
    """Drift of the common range offset from per-scan offsets b_k (each scan against its
    span's scene) and their standard errors se_k, by Gaussian maximum likelihood.

    b_k = m + g_k + e_k: g a stationary Gauss-Markov process, cov(g_i, g_j) =
    sigma_g^2 phi^|i-j| with phi = exp(-T / tau) (T = scan period; phi -> 1 a random walk),
    e_k ~ N(0, se_k^2 + w^2) independent, w a white excess over the standard errors that both
    models take at their best (a new offset every scan cannot be told from errors of the
    offsets). tau is searched from one scan period up to
    ``longest`` (the longest static span [s]): a short recording cannot tell a slower drift,
    and a bounded one keeps long simulations honest. The drift is kept when its likelihood-ratio
    statistic against no drift exceeds chi^2_2(0.999) = 13.8 (the offsets' standard errors are
    themselves estimated: a bare AIC win would let their errors pass for drift). At most 600
    scans per span enter (each run's mean offset has a diffuse prior: its scene took it).
    Returns the sigma_g and tau estimates (0 = no drift).
    """
    runs = [(d[:_DRIFT_SCANS] - np.mean(d[:_DRIFT_SCANS]), e[:_DRIFT_SCANS])
            for d, e in runs if d.size >= 3]
    samples = int(sum(d.size for d, _ in runs))
    none = (Estimate(0.0, math.nan, samples, 'no drift: the per-scan offsets are explained by '
                     'their estimation noise'), Estimate(0.0, math.nan, samples))
    if not runs or period <= 0:
        return none
    level = float(np.mean(np.concatenate([d for d, _ in runs]) ** 2))

    prior = 1e2 * level + 1e-12  # diffuse prior of each run's mean offset

    def loglik(s2: F64, phi: F64, w2: F64 | float = 0.0) -> F64:
        """Gaussian log-likelihood of every run for each (s2, phi, w2) by a Kalman filter over
        (g_k, mean offset): exact for the AR(1) + white model, O(n) per run; w2 inflates the
        offsets' own error variances; the mean offset of a run (its scene took it) has the
        same diffuse prior in every model."""
        s2 = np.asarray(s2, dtype=np.float64)
        phi = np.broadcast_to(np.asarray(phi, dtype=np.float64), s2.shape)
        w2 = np.broadcast_to(np.asarray(w2, dtype=np.float64), s2.shape)
        total = np.zeros(s2.shape)
        for d, e in runs:
            x = np.zeros(s2.shape)
            m = np.zeros(s2.shape)
            pxx, pmm, pxm = s2.copy(), np.full(s2.shape, prior), np.zeros(s2.shape)
            for k in range(d.size):
                if k:
                    x = phi * x
                    pxx = phi * phi * pxx + s2 * (1.0 - phi * phi)
                    pxm = phi * pxm
                spread = pxx + pmm + 2.0 * pxm + e[k] * e[k] + w2 + 1e-30
                v = d[k] - x - m
                total += -0.5 * (np.log(2.0 * math.pi * spread) + v * v / spread)
                kx, km = (pxx + pxm) / spread, (pxm + pmm) / spread
                x = x + kx * v
                m = m + km * v
                pxx, pxm, pmm = (pxx - kx * kx * spread, pxm - kx * km * spread,
                                 pmm - km * km * spread)
        return total

    if level <= 0:
        return none
    # the offsets' errors may exceed their standard errors by a white part w (errors of the
    # reported angles that follow no beam's noise): both models take their best w
    typical = float(np.median(np.concatenate([e for _, e in runs]) ** 2))
    w2s = np.concatenate([[0.0], np.geomspace(0.01, 10.0, 9) * typical])
    ll_none = float(np.max(loglik(np.zeros(w2s.size), np.zeros(w2s.size), w2s)))
    taus = np.geomspace(period, max(longest, 2.0 * period), 8)
    grid = np.geomspace(1e-3 * level, 1e2 * level, 25)
    s2s, phis, ws = np.meshgrid(grid, np.exp(-period / taus), w2s)
    values = loglik(s2s.ravel(), phis.ravel(), ws.ravel())
    best = int(np.argmax(values))
    ll, s2, phi = float(values[best]), float(s2s.ravel()[best]), float(phis.ravel()[best])
    w2 = float(ws.ravel()[best])
    if 2.0 * (ll - ll_none) <= LRT_THRESHOLD:
        return none
    h = 0.05 * s2
    side = loglik(np.array([s2 + h, s2 - h]), np.array([phi, phi]), w2)
    curv = (float(side[0]) - 2.0 * ll + float(side[1])) / (h * h)
    se_s2 = 1.0 / math.sqrt(-curv) if curv < 0 else math.nan
    sigma = math.sqrt(s2)
    tau = -period / math.log(phi) if phi > 0 else 0.05 * period
    how = (f'Gauss-Markov offset (likelihood ratio {2.0 * (ll - ll_none):.1f} against no drift, '
           f'kept beyond {LRT_THRESHOLD:g}); tau searched up to the longest static span, '
           f'{longest:.2f} s')
    return (Estimate(sigma, se_s2 / (2.0 * sigma), samples, how),
            Estimate(tau, math.nan, samples, how))


@dataclass(frozen=True)
class SpuriousFit:
    """Readings far from their surface: ``outliers`` of ``readings`` lie beyond the noise
    threshold, ``far`` of them more than ``distance`` [m] from their surface; ``p`` (standard
    error ``se``) is the rate of uniform spurious returns the far ones imply; ``beyond`` of
    them lie beyond the farthest surface seen where ``expected`` would if they were uniform in
    [range_min, range_max]; ``uniform``: whether they can be."""

    outliers: int
    readings: int
    far: int
    p: float
    se: float
    beyond: int
    expected: float
    uniform: bool
    distance: float = 0.5


def _poisson_cdf(k: int, lam: float) -> float:
    """P(X <= k) for X ~ Poisson(lam)."""
    term = total = math.exp(-lam)
    for i in range(1, k + 1):
        term *= lam / i
        total += term
    return min(total, 1.0)


def _outside(surface: F64, half: F64 | float, low: float, high: float) -> F64:
    """Length of [low, high] farther than ``half`` from ``surface``."""
    return np.maximum(surface - half - low, 0.0) + np.maximum(high - surface - half, 0.0)


def spurious_returns(parts: Sequence[tuple[F64, F64, F64]], range_min: float,
                     range_max: float, sigmas: float = 8.0) -> SpuriousFit:
    """Spurious returns from readings far from their surface.

    ``parts``: per span, (readings z, their residuals about the scene's model, each reading's
    sigma by the noise model). A reading beyond ``sigmas`` sigma is an outlier; one more than
    D = min(0.5 m, W / 4) from its surface S is *far*: a heavier tail of the noise rarely
    reaches there, a spurious return usually does. The model's spurious returns are uniform in
    [range_min, range_max] (width W), so one is far with probability L(D) / W (L(D): the
    length of [range_min, range_max] farther than D from S): p = far / sum L(D) / W over the
    readings. They must also be spread out to range_max as the model's are: a far one lies
    beyond the farthest surface seen (r_top) with probability (range_max - r_top) / L(D); when
    at least 3 are expected there and the count observed is below it at p < 0.001 (Poisson),
    ``uniform`` is False (a driver's range_max far beyond what the sensor ever reads, say).
    """
    width = range_max - range_min
    finite = math.isfinite(width) and width > 0
    distance = min(0.5, 0.25 * width) if finite else 0.5
    readings = outliers = 0
    chance = 0.0
    far_surface: list[F64] = []
    far_value: list[F64] = []
    top = -math.inf
    for z, x, scale in parts:
        ok = np.isfinite(z) & np.isfinite(x) & np.isfinite(scale)
        x_ok, z_ok = x[ok], z[ok]
        readings += int(ok.sum())
        outliers += int(np.sum(np.abs(x_ok) > sigmas * scale[ok]))
        far = np.abs(x_ok) > np.maximum(distance, sigmas * scale[ok])
        surface = z_ok - x_ok
        far_surface.append(surface[far])
        far_value.append(z_ok[far])
        if surface.size:
            top = max(top, float(np.max(surface)))
        if finite:
            chance += float(np.sum(_outside(surface, distance, range_min, range_max))) / width
    surfaces = np.concatenate(far_surface) if far_surface else np.zeros(0)
    values = np.concatenate(far_value) if far_value else np.zeros(0)
    n_far = int(values.size)
    if not finite or readings == 0:
        return SpuriousFit(outliers, readings, n_far, 0.0, math.nan, 0, 0.0, False, distance)
    p = n_far / max(chance, 1.0)
    se = math.sqrt(max(n_far, 1)) / max(chance, 1.0)
    room = max(range_max - max(top, range_min), 0.0)
    with np.errstate(invalid='ignore', divide='ignore'):
        share = np.where(_outside(surfaces, distance, range_min, range_max) > 0,
                         room / _outside(surfaces, distance, range_min, range_max), 0.0)
    expected = float(np.sum(np.minimum(share, 1.0)))
    beyond = int(np.sum(values > top))
    uniform = not (expected >= 3.0 and _poisson_cdf(beyond, expected) < 1e-3)
    return SpuriousFit(outliers, readings, n_far, p, se, beyond, expected, uniform, distance)
