"""Fit a lidar error config to static recordings of a real sensor (``rcsim lidar fit``).

No ground-truth scene is needed. For each recording: consecutive scans are compared with the
motion-compensated differences of :mod:`rc_sim_sensors.scan_pairs`; runs of at least 5 nearly
static pairs are the static spans (the rest is left out and the spans are reported). From the
static spans (:mod:`rc_sim_sensors.fit_estimators`):

- range limits from the messages; the range quantum from the readings' grid;
- noise sigma(d) = sigma0 + k d (range bins, quantisation removed); the correlation of
  neighbouring beams' noise (lag-1 correlation of the residuals on a shared grid);
- drift of the common range offset between scans (a Gauss-Markov process, kept by AIC);
- invalid returns on directions valid in most scans: a constant rate, or a ramp in range,
  incidence or intensity when the data show one; how the driver writes them (0 or +-inf);
- mixed pixels at depth edges; outliers; lost scans from stamp gaps.

Not observable without a reference (left at 0 and listed): the absolute bias and noise mean,
latency, mount yaw, encoder quantisation and azimuth jitter.

:func:`simulate_like` runs the fitted config on the static scene (per-direction median ranges)
with each real scan's own geometry and stamps; :func:`compare_stats` sets the ``lidar stats``
figures of both side by side with standard errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import RcSimError
from rc_sim_sensors.fit_estimators import (
    Estimate,
    NoiseBin,
    RampFit,
    bias_drift,
    binomial_loglik,
    detect_quantum,
    fit_noise,
    fit_ramp,
    mixed_pixels,
    noise_by_range,
    ramp_probability,
    scan_loss,
)
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel
from rc_sim_sensors.scan_geometry import Scan
from rc_sim_sensors.scan_io import model_input, reported_limits
from rc_sim_sensors.scan_pairs import (
    MIN_STATIC_PAIRS,
    STATIC_RATIO,
    PairFit,
    fit_pairs,
    robust_scale,
    static_spans,
)
from rc_sim_sensors.static_scene import (
    Registration,
    SpanMotion,
    StaticScene,
    register,
    sample_scene,
    static_scene,
)

__all__ = ['MAX_FIT_PAIRS', 'MAX_SPANS', 'MAX_SPAN_SCANS', 'UNOBSERVABLE', 'LidarFit',
           'LidarFitError', 'PairTrace', 'Span',
           'fit_lidar', 'simulate_like']

#: consecutive pairs examined per recording (evenly spaced blocks beyond it)
MAX_FIT_PAIRS = 20_000
#: a static span longer than this is cut into spans of this many scans (each its own scene)
MAX_SPAN_SCANS = 600
#: spans kept (evenly chosen when there are more): bounds time and memory on long recordings
MAX_SPANS = 8
#: config keys a static recording cannot tell, with the reason
UNOBSERVABLE = {
    'bias_initial': 'the absolute range offset needs a known distance',
    'noise_mean': 'the absolute range offset needs a known distance',
    'latency': 'needs a clock reference outside the sensor',
    'mount_yaw_offset': 'needs a known direction',
    'angle_resolution': 'the beams of a static scene do not reveal the encoder grid',
    'azimuth_jitter_stddev': 'indistinguishable from range noise on a static scene',
}
_OUTLIER_SIGMAS = 8.0


class LidarFitError(RcSimError):
    """The recordings cannot give a fit (no static part, too few readings)."""


@dataclass(frozen=True)
class Span:
    """A static span: scans ``first..last`` of a recording, [start, end] s after its first."""

    recording: str
    first: int
    last: int
    start: float
    end: float

    @property
    def scans(self) -> int:
        """Scans in the span."""
        return self.last - self.first + 1


@dataclass(frozen=True)
class PairTrace:
    """Per examined pair of a recording: time [s after its first scan], raw and
    motion-compensated scale [m], static flag (for the report's plot)."""

    recording: str
    time: NDArray[np.float64]
    raw: NDArray[np.float64]
    compensated: NDArray[np.float64]
    static: NDArray[np.bool_]


@dataclass(frozen=True)
class LidarFit:
    """A fitted config and what it rests on (``estimates`` by config key or figure name)."""

    config: LidarErrorConfig
    estimates: dict[str, Estimate]
    spans: list[Span]
    span_scans: list[list[Scan]]
    motions: list[SpanMotion]
    pairs: int
    static_pairs: int
    noise_bins: list[NoiseBin]
    ramps: list[RampFit]
    noise_fit_chi2: float
    invalid_kinds: dict[str, int]
    notes: list[str] = field(default_factory=list)
    traces: list[PairTrace] = field(default_factory=list)


def _beam_correlation(fits: Sequence[PairFit], sigma: float) -> Estimate:
    """Lag-1 correlation of neighbouring beams' residuals (clipped at 3 sigma), shared grids."""
    a, b = [], []
    for f in fits:
        nxt = np.searchsorted(f.beams, f.beams + 1)
        ok = nxt < f.beams.size
        ok[ok] &= f.beams[nxt[ok]] == f.beams[ok] + 1
        a.append(f.residuals[ok])
        b.append(f.residuals[nxt[ok]])
    x = np.clip(np.concatenate(a), -3 * sigma, 3 * sigma) if a else np.zeros(0)
    y = np.clip(np.concatenate(b), -3 * sigma, 3 * sigma) if b else np.zeros(0)
    if x.size < 100 or sigma <= 0 or np.std(x) == 0 or np.std(y) == 0:
        return Estimate(0.0, math.nan, int(x.size), 'too few neighbouring residuals')
    rho = float(np.corrcoef(x, y)[0, 1])
    se = (1.0 - rho * rho) / math.sqrt(x.size)  # Fisher: var(r) ~ (1 - rho^2)^2 / n
    return Estimate(rho, se, int(x.size), 'lag-1 correlation of neighbouring beams '
                    '(motion-compensated differences on a shared grid)')


def _cluster_fraction(k: NDArray[np.int64], n: NDArray[np.int64]) -> tuple[float, float]:
    """sum k / sum n and its standard error with directions as clusters."""
    total = float(n.sum())
    if total == 0:
        return math.nan, math.nan
    p = float(k.sum()) / total
    return p, math.sqrt(float(np.sum((k - p * n) ** 2))) / total


def fit_lidar(recordings: Sequence[tuple[str, Sequence[Scan]]]) -> LidarFit:
    """Fit a :class:`LidarErrorConfig` to static spans of the recordings (module docstring).

    Raises:
        LidarFitError: no recording holds a static span.
    """
    spans: list[Span] = []
    span_scans: list[list[Scan]] = []
    regs: list[Registration] = []
    still: list[list[PairFit]] = []
    shared: list[PairFit] = []
    traces: list[PairTrace] = []
    pairs = 0
    lost = total_scans = 0
    for name, scans in recordings:
        fits = fit_pairs(scans, MAX_FIT_PAIRS)
        pairs += max(len(scans) - 1, 0)
        loss = scan_loss(np.array([s.stamp for s in scans]))
        lost += round(loss.value * loss.samples)
        total_scans += loss.samples
        t0 = scans[0].stamp if scans else 0.0
        traces.append(PairTrace(name, np.array([scans[f.index + 1].stamp - t0 for f in fits]),
                                np.array([f.raw_scale for f in fits]),
                                np.array([f.scale for f in fits]),
                                np.array([f.static for f in fits], dtype=bool)))
        for run in static_spans(fits):
            for lo in range(run[0], run[1], MAX_SPAN_SCANS):
                hi = min(lo + MAX_SPAN_SCANS - 1, run[1])
                run_fits = [f for f in fits if lo <= f.index < hi and f.static]
                if len(run_fits) < MIN_STATIC_PAIRS:
                    continue
                sigma = robust_scale(np.concatenate([f.residuals for f in run_fits]))
                trimmed = _trim(scans, lo, hi, sigma)
                if trimmed is None:
                    continue
                first, last, reg = trimmed
                spans.append(Span(name, first, last, scans[first].stamp - t0,
                                  scans[last].stamp - t0))
                span_scans.append(list(scans[first:last + 1]))
                still.append([f for f in fits if first <= f.index < last and f.static])
                regs.append(reg)
                shared += [f for f in still[-1]
                           if scans[f.index].geometry == scans[f.index + 1].geometry]
    if len(spans) > MAX_SPANS:
        keep = np.unique(np.linspace(0, len(spans) - 1, MAX_SPANS).round().astype(int))
        spans = [spans[i] for i in keep]
        span_scans = [span_scans[i] for i in keep]
        still = [still[i] for i in keep]
        regs = [regs[i] for i in keep]
    if not spans:
        names = ', '.join(name for name, _ in recordings)
        raise LidarFitError(f'{names}: no static part (needs at least 6 consecutive scans whose '
                            'scan-to-scan changes are at most 1.5 times the sensor noise); '
                            'record the sensor standing still')
    scans_all = [s for group in span_scans for s in group]
    fits_all = [f for group in still for f in group]
    est: dict[str, Estimate] = {}
    notes: list[str] = []
    values: dict[str, object] = {'seed': 0}

    # limits, quantum, how invalid readings are written
    range_min = float(np.median([s.range_min for s in scans_all]))
    range_max = float(np.median([s.range_max for s in scans_all]))
    values.update(range_min=range_min, range_max=range_max)
    valid_values = np.concatenate([s.ranges[s.valid()] for s in scans_all]).astype(np.float64)
    quantum = detect_quantum(valid_values)
    est['range_resolution'] = quantum
    kinds = {'low': 0, 'high': 0, 'inf': 0, 'nan': 0}
    for s in scans_all:
        r = s.ranges
        finite = np.isfinite(r)
        invalid = ~s.valid()
        kinds['low'] += int(np.sum(invalid & finite & ~(r > s.range_max)))
        kinds['high'] += int(np.sum(invalid & finite & (r > s.range_max)))
        kinds['inf'] += int(np.sum(np.isinf(r)))
        kinds['nan'] += int(np.sum(np.isnan(r)))
    zero = kinds['low'] + kinds['high'] > kinds['inf'] + kinds['nan']
    values['out_of_range'] = 'zero' if zero else 'rep117'

    # noise
    residuals = np.concatenate([f.residuals for f in fits_all])
    ranges = np.concatenate([f.ranges for f in fits_all])
    bins = noise_by_range(ranges, residuals, quantum.value)
    sigma0, k, chi2 = fit_noise(bins)
    est['noise_stddev'], est['noise_stddev_per_meter'] = sigma0, k
    overall = robust_scale(residuals)
    rho = _beam_correlation(shared, overall)
    est['noise_beam_correlation'] = rho
    use_rho = math.isfinite(rho.se) and abs(rho.value) > 3 * rho.se
    values.update(range_resolution=quantum.value, noise_stddev=sigma0.value,
                  noise_stddev_per_meter=k.value,
                  noise_beam_correlation=round(rho.value, 4) if use_rho else 0.0)
    if chi2 > 3.0:
        notes.append(f'noise differs between range bins more than sigma0 + k d explains '
                     f'(chi^2/dof {chi2:.1f}): it depends on the surfaces too')

    # bias drift
    # neighbouring beams' correlated noise makes the mean of a scan's residuals (its offset)
    # less certain than independent residuals would: var x (1 + rho) / (1 - rho) for AR(1)
    inflate = math.sqrt((1 + rho.value) / (1 - rho.value)) if use_rho and rho.value > 0 else 1.0
    runs = [(reg.offsets, reg.offset_se * inflate) for reg in regs]
    period = float(np.median(np.diff([s.stamp for s in span_scans[0]])))
    longest = max(sp.end - sp.start for sp in spans)
    drift, tau = bias_drift(runs, period, longest)
    est['bias_markov_stddev'], est['bias_correlation_time'] = drift, tau
    if drift.value > 0:
        values['bias_markov_stddev'] = drift.value
        values['bias_correlation_time'] = tau.value

    # invalid returns
    scenes = [reg.scene for reg in regs]
    ramps, dropout = _invalid_returns(scenes, range_max, est)
    values['dropout_probability'] = dropout.p0 if dropout is not None else \
        est['dropout_probability'].value
    if dropout is not None:
        keys = {'range': ('range_dropout_probability', 'range_dropout_start'),
                'incidence': ('incidence_dropout_probability', 'incidence_dropout_start'),
                'intensity': ('intensity_dropout_probability', 'intensity_dropout_limit')}
        p_key, x_key = keys[dropout.covariate]
        values[p_key] = dropout.p1
        values[x_key] = max(dropout.start, 1e-6) if dropout.covariate == 'intensity' else \
            dropout.start

    # mixed pixels, outliers, lost scans
    sigma_dir = [overall + k.value * np.nan_to_num(sc.range) for sc in scenes]
    threshold = max(0.1, 10.0 * float(max(np.nanmax(s) for s in sigma_dir)))
    # a blend is only told from a steep surface when a beam keeps its direction
    mixed = [mixed_pixels(group, sc, sd, threshold) if all(
        s.geometry == group[0].geometry for s in group) else (0, 0.0, 0)
        for group, sc, sd in zip(span_scans, scenes, sigma_dir)]
    between = sum(m[0] for m in mixed)
    chances = sum(m[1] for m in mixed)
    p_mix = min(between / chances, 1.0) if chances > 0 else 0.0
    est['mixed_pixel_probability'] = Estimate(
        p_mix, math.sqrt(max(p_mix * (1 - p_mix), 1.0 / max(chances, 1.0)) / max(chances, 1.0)),
        between, f'{between} readings between the surfaces of {sum(m[2] for m in mixed)} '
        'depth edges')
    if between >= 5:
        values['mixed_pixel_probability'] = p_mix
        values['depth_edge_threshold'] = threshold
    sigma_res = sigma0.value + k.value * ranges
    outliers = int(np.sum(np.abs(residuals) > _OUTLIER_SIGMAS * np.maximum(
        np.hypot(sigma_res, quantum.value / math.sqrt(12.0)), 1e-9)))
    span_m = range_max - range_min if math.isfinite(range_max) else math.inf
    p_out = outliers / (2.0 * max(residuals.size, 1))
    p_spur = p_out / max(1.0 - 16.0 * math.sqrt(2.0) * overall / span_m, 0.5)
    est['spurious_probability'] = Estimate(p_spur, math.sqrt(max(p_out, 1.0 / residuals.size)
                                                             / (2.0 * residuals.size)),
                                           outliers, f'{outliers} residuals beyond '
                                           f'{_OUTLIER_SIGMAS:g} sigma')
    if outliers >= 10 and math.isfinite(span_m):
        values['spurious_probability'] = p_spur
    p_loss = lost / total_scans if total_scans else 0.0
    est['scan_loss_probability'] = Estimate(p_loss, math.sqrt(max(p_loss, 1.0 / max(
        total_scans, 1)) / max(total_scans, 1)), total_scans, f'{lost} scans missing from the '
        'stamps')
    values['scan_loss_probability'] = p_loss
    config = LidarErrorConfig.from_mapping(values, 'lidar fit')
    return LidarFit(config, est, spans, span_scans, [r.motion for r in regs], pairs,
                    len(fits_all), bins, ramps,
                    chi2, kinds, notes, traces)


def _invalid_returns(scenes: Sequence[StaticScene], range_max: float,
                     est: dict[str, Estimate]) -> tuple[list[RampFit], RampFit | None]:
    """Constant invalid-return rate and the ramp tests on directions valid in most scans.

    A ramp is kept when its likelihood-ratio test is significant on the pooled spans and, with
    several spans, when it also predicts every span better than a constant rate fitted on the
    other spans (leave-one-span-out): a far or grazing surface that happens to be dark in one
    scene does not make a range or incidence law.
    """
    data = []
    for sc in scenes:
        u = sc.usually_valid
        n = sc.total[u]
        k = n - sc.valid[u]
        cov = {'range': (sc.range[u], range_max),
               'incidence': (np.minimum(sc.incidence[u], 0.5 * math.pi - 1e-6), 0.5 * math.pi)}
        if sc.intensity is not None:
            cov['intensity'] = (sc.intensity[u], math.inf)
        data.append((n, k, cov))
    n_all = np.concatenate([d[0] for d in data])
    k_all = np.concatenate([d[1] for d in data])
    p, se = _cluster_fraction(k_all, n_all)
    est['dropout_probability'] = Estimate(
        p if math.isfinite(p) else 0.0, se, int(n_all.sum()), 'invalid readings in directions '
        'valid in most static scans (directions as clusters)')
    ramps: list[RampFit] = []
    kinds = [kind for kind in ('range', 'incidence', 'intensity')
             if all(kind in d[2] for d in data)]
    for kind in kinds:
        end = data[0][2][kind][1]
        x_all = np.concatenate([d[2][kind][0] for d in data])
        ramp = fit_ramp(kind, x_all, n_all, k_all, end)
        if ramp is None:
            continue
        if ramp.significant and len(data) > 1 and not _holds_out(kind, end, data):
            ramp = replace(ramp, held_out=False)
        ramps.append(ramp)
    best = max((r for r in ramps if r.significant), key=lambda r: r.lrt, default=None)
    return ramps, best


def _holds_out(kind: str, end: float, data: Sequence[Any]) -> bool:
    """Does the ramp's shape (p1, start), fitted without each span, predict that span better
    than a constant? Both get their base rate refitted on the held-out span (one parameter
    each), so a scene that is simply darker does not count for a range or incidence law."""
    p0s = np.concatenate([[0.0], np.geomspace(1e-5, 0.9, 200)])
    gain = 0.0
    for j, (n, k, cov) in enumerate(data):
        rest = [d for i, d in enumerate(data) if i != j]
        ramp = fit_ramp(kind, np.concatenate([d[2][kind][0] for d in rest]),
                        np.concatenate([d[0] for d in rest]),
                        np.concatenate([d[1] for d in rest]), end)
        if ramp is None:
            return False
        best_ramp = max(binomial_loglik(ramp_probability(replace(ramp, p0=float(p0)),
                                                         cov[kind][0], end), k, n)
                        for p0 in p0s)
        best_const = binomial_loglik(np.full(n.shape, k.sum() / max(n.sum(), 1)), k, n)
        gain += best_ramp - best_const
    return gain > 0.0


def _trim(scans: Sequence[Scan], first: int, last: int, sigma: float,
          ) -> tuple[int, int, Registration] | None:
    """Narrow a run of static pairs until every scan, registered against the run's scene (its
    own rotation, translation and offset), stays within 1.5 sigma of it: motions beyond first
    order, or a scene that changes, do not pass. Ends are dropped, the worse first, 5 % at a
    time."""
    lo, hi = first, last
    while hi - lo >= MIN_STATIC_PAIRS:
        reg = register(scans[lo:hi + 1])
        if float(np.max(reg.scale)) <= STATIC_RATIO * sigma:
            return lo, hi, reg
        step = max(1, (hi - lo + 1) // 20)
        if reg.scale[0] >= reg.scale[-1]:
            lo += step
        else:
            hi -= step
    return None


def simulate_like(fit: LidarFit, config: LidarErrorConfig | None = None, seed: int = 0,
                  ) -> list[list[Scan]]:
    """The fitted model (or ``config``) on each static span's scene, seen from every real
    scan's pose (:func:`~rc_sim_sensors.static_scene.sample_scene`) with its own geometry and
    stamp. Lost scans are left out."""
    config = config or fit.config
    model = LidarErrorModel(config, seed)
    out: list[list[Scan]] = []
    for group, motion in zip(fit.span_scans, fit.motions):
        scene = static_scene(group, motion)  # the scene the fit saw
        sim: list[Scan] = []
        for k, scan in enumerate(group):
            ideal, inten = sample_scene(scene, scan, float(motion.rotation[k]),
                                        (float(motion.shift[k, 0]), float(motion.shift[k, 1])))
            inten32 = None if inten is None else inten.astype(np.float32)
            base = Scan(ideal.astype(np.float32), scan.angle_min, scan.angle_increment,
                        scan.range_min, scan.range_max, scan.stamp, inten32)
            ranges, incidence = model_input(base, config)
            res = model.apply(ranges, scan.angles, scan.stamp, inten32, incidence)
            if res.lost:
                continue
            low, high = reported_limits(scan.range_min, scan.range_max, config)
            sim.append(Scan(np.asarray(res.ranges, dtype=np.float32), scan.angle_min,
                            scan.angle_increment, low, high, scan.stamp,
                            None if res.intensities is None else
                            np.asarray(res.intensities, dtype=np.float32)))
        out.append(sim)
    return out
