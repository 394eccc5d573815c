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

from rc_sim_sensors.scan_geometry import Scan
from rc_sim_sensors.scan_pairs import robust_scale
from rc_sim_sensors.static_scene import StaticScene

__all__ = ['QUANTA', 'Estimate', 'NoiseBin', 'RampFit', 'bias_drift', 'binomial_loglik',
           'detect_quantum', 'fit_noise', 'fit_ramp', 'mixed_pixels', 'noise_by_range',
           'ramp_probability', 'scan_loss']

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
#: candidate range quanta [m] (what drivers output: 0.1 mm to 1 cm steps)
QUANTA = (1e-4, 2e-4, 2.5e-4, 5e-4, 1e-3, 2e-3, 2.5e-3, 5e-3, 1e-2)
#: relative standard error of a clipped-RMS sigma from N consecutive-pair differences:
#: 1.03 / sqrt(2N) (efficiency at the normal) x sqrt(1.5) (consecutive differences share a scan)
SCALE_SE = 1.03 * math.sqrt(1.5 / 2.0)
LRT_THRESHOLD = 13.8  # chi^2 with 2 degrees of freedom at p = 0.001
_DRIFT_SCANS = 100


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


def mixed_pixels(scans: Sequence[Scan], scene: StaticScene, sigma: F64, threshold: float,
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
                          * scene.increment)
    s = sigma[index] + width / 3.0
    edge_of = np.full(r.size, -1, dtype=np.int64)
    edge_of[index + 1] = np.arange(index.size)
    edge_of[index] = np.arange(index.size)  # a direction between two edges keeps the left one
    between = np.zeros(index.size, dtype=np.int64)
    for scan, b in zip(scans, scene.bins):
        e = edge_of[b]
        use = (e >= 0) & scan.valid()
        v = scan.ranges[use].astype(np.float64)
        eu = e[use]
        hit = (v > near[eu] + 3 * s[eu]) & (v < far[eu] - 3 * s[eu])
        between += np.bincount(eu[hit], minlength=index.size)
    chance = np.clip(1.0 - 6.0 * s / (far - near), 0.0, 1.0)
    return int(between.sum()), float(len(scans) * chance.sum()), int(index.size)


def bias_drift(runs: Sequence[tuple[F64, F64]], period: float, longest: float,
               ) -> tuple[Estimate, Estimate]:
    """Drift of the common range offset from per-scan offsets b_k (each scan against its
    span's scene) and their standard errors se_k, by Gaussian maximum likelihood.

    b_k - mean(b) = g_k + e_k: g a stationary Gauss-Markov process, cov(g_i, g_j) =
    sigma_g^2 phi^|i-j| with phi = exp(-T / tau) (T = scan period; phi -> 0 is a new offset
    every scan, phi -> 1 a random walk), e_k ~ N(0, se_k^2) independent. tau is searched up to
    ``longest`` (the longest static span [s]): a short recording cannot tell a slower drift,
    and a bounded one keeps long simulations honest. The drift is kept when its AIC
    (2 parameters) beats no drift. At most 100 scans per span enter. Returns the sigma_g and
    tau estimates (0 = no drift).
    """
    runs = [(d[:_DRIFT_SCANS] - np.mean(d[:_DRIFT_SCANS]), e[:_DRIFT_SCANS])
            for d, e in runs if d.size >= 3]
    samples = int(sum(d.size for d, _ in runs))
    none = (Estimate(0.0, math.nan, samples, 'no drift: the per-scan offsets are explained by '
                     'their estimation noise'), Estimate(0.0, math.nan, samples))
    if not runs or period <= 0:
        return none
    level = float(np.mean(np.concatenate([d for d, _ in runs]) ** 2))
    lags = [np.abs(np.subtract.outer(np.arange(d.size), np.arange(d.size))) for d, _ in runs]

    def loglik(s2: float, phi: float) -> float:
        total = 0.0
        for (d, e), lag in zip(runs, lags):
            cov = np.diag(e * e + 1e-30) + s2 * phi ** lag
            try:
                chol = np.linalg.cholesky(cov)
            except np.linalg.LinAlgError:
                return -math.inf
            z = np.linalg.solve(chol, d)
            total += -0.5 * (2.0 * float(np.sum(np.log(np.diag(chol)))) + float(z @ z)
                             + d.size * math.log(2 * math.pi))
        return total

    ll_none = loglik(0.0, 0.0)
    if level <= 0:
        return none
    taus = np.geomspace(0.05 * period, max(longest, period), 8)
    best = (-math.inf, 0.0, 0.0)
    for phi in np.exp(-period / taus):
        grid = np.geomspace(1e-3 * level, 1e2 * level, 25)
        values = [loglik(float(s2), float(phi)) for s2 in grid]
        i = int(np.argmax(values))
        if values[i] > best[0]:
            best = (values[i], float(grid[i]), float(phi))
    ll, s2, phi = best
    if 4.0 - 2.0 * ll >= -2.0 * ll_none:
        return none
    h = 0.05 * s2
    curv = (loglik(s2 + h, phi) - 2.0 * ll + loglik(s2 - h, phi)) / (h * h)
    se_s2 = 1.0 / math.sqrt(-curv) if curv < 0 else math.nan
    sigma = math.sqrt(s2)
    tau = -period / math.log(phi) if phi > 0 else 0.05 * period
    how = (f'Gauss-Markov offset (AIC {4.0 - 2.0 * ll:.1f} vs {-2.0 * ll_none:.1f} without '
           f'drift); tau searched up to the longest static span, {longest:.2f} s')
    return (Estimate(sigma, se_s2 / (2.0 * sigma), samples, how),
            Estimate(tau, math.nan, samples, how))
