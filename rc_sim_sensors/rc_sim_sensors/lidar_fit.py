"""Fit a lidar error config to static recordings of a real sensor (``rcsim lidar fit``).

No ground-truth scene is needed. Each recording's scans are binned onto one angular grid (beams
are compared by angle, not index: :func:`~rc_sim_sensors.scan_geometry.bin_scans`), so sensors
whose beam count and ``angle_min`` change every scan (RPLIDAR, LDS) fit like fixed-grid ones.

Static spans: consecutive scans are compared with the motion-compensated differences of
:mod:`rc_sim_sensors.scan_pairs`; runs of at least 5 nearly static pairs are cut where the
sensor's accumulated motion leaves a box of 5 cm and 0.1 rad; each piece is registered against
its own scene (:func:`~rc_sim_sensors.static_scene.register`) and narrowed to the longest run
of scans that fit it (residuals on the directions facing their surface at most 1.5x the noise
of the static pairs there), stay within the box and do not drift by more than half the noise
(translation) or an increment (rotation) per scan; what is left on either side is tried
again. From the static spans
(:mod:`rc_sim_sensors.fit_estimators`):

- range limits from the messages; the range quantum from the readings' grid;
- noise sigma(d) = sigma0 + k d (range bins, quantisation removed) at zero surface slope, and
  the error of the reported beam angles (residual variance growing with (dr/dth)^2) as an
  azimuth jitter; the correlation of neighbouring beams' noise (fixed grids);
- drift of the common range offset between scans (a Gauss-Markov process, kept by AIC);
- invalid returns on directions valid in most scans: a constant rate, or a ramp in range,
  incidence or intensity when the data show one; how the driver writes them (0 or +-inf);
- mixed pixels at depth edges; spurious returns only when the readings far from their surface
  are spread out to ``range_max`` as the model's are (a driver's ``range_max`` of 100 m with
  every reading within a few metres is not a reason to return 100 m); lost scans from stamp
  gaps.

Not observable without a reference (left at 0 and listed): the absolute bias and noise mean,
latency, mount yaw and encoder quantisation.

:func:`simulate_like` runs the fitted config on the static scene (per-direction median ranges)
with each real scan's own geometry and stamps; :func:`compare_stats` sets the ``lidar stats``
figures of both side by side with standard errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import RcSimError
from rc_sim_sensors.fit_estimators import (
    SCALE_SE,
    Estimate,
    NoiseBin,
    RampFit,
    SpuriousFit,
    bias_drift,
    binomial_loglik,
    detect_quantum,
    fit_noise,
    fit_ramp,
    mixed_pixels,
    noise_and_angle_error,
    ramp_probability,
    scan_loss,
    spurious_returns,
)
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel
from rc_sim_sensors.scan_geometry import GridSpec, Scan, bin_scans, grid_spec
from rc_sim_sensors.scan_io import model_input, reported_limits
from rc_sim_sensors.scan_pairs import (
    MIN_STATIC_PAIRS,
    STATIC_RATIO,
    PairFit,
    facing,
    fit_pairs,
    grid_pairs,
    pair_starts,
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

__all__ = ['MAX_FIT_PAIRS', 'MAX_SPANS', 'MAX_SPAN_SCANS', 'POSE_BOX_M', 'POSE_BOX_RAD',
           'UNOBSERVABLE', 'LidarFit', 'LidarFitError', 'PairTrace', 'Progress', 'Span',
           'fit_lidar', 'simulate_like', 'smooth_motion']

#: consecutive pairs examined per recording (evenly spaced blocks beyond it)
MAX_FIT_PAIRS = 20_000
#: a static span longer than this is cut into spans of this many scans (each its own scene)
MAX_SPAN_SCANS = 600
#: spans kept (the longest of each recording in turn): bounds time and memory
MAX_SPANS = 8
#: a static span's poses stay within a box this wide [m] (translation terms) ...
POSE_BOX_M = 0.05
#: ... and this wide [rad] (rotation): beyond it the sensor is moving, not held still
POSE_BOX_RAD = 0.1
#: scan pairs whose residuals estimate the noise (evenly chosen over the spans)
MAX_NOISE_PAIRS = 3000
#: config keys a static recording cannot tell, with the reason
UNOBSERVABLE = {
    'bias_initial': 'the absolute range offset needs a known distance',
    'noise_mean': 'the absolute range offset needs a known distance',
    'latency': 'needs a clock reference outside the sensor',
    'mount_yaw_offset': 'needs a known direction',
    'angle_resolution': 'the beams of a static scene do not reveal the encoder grid',
}
_OUTLIER_SIGMAS = 8.0
_MIN_SPAN_SCANS = MIN_STATIC_PAIRS + 1
_MAX_REGISTRATIONS = 60  # per recording

F64 = NDArray[np.float64]
#: progress callback: (stage, done, total)
Progress = Callable[[str, float, float], None]


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
    """A fitted config and what it rests on (``estimates`` by config key or figure name).

    ``scenes``: each span's registered scene (what :func:`simulate_like` samples);
    ``spurious``: the readings far from their surface and whether they look like the model's
    spurious returns; ``grids``: each recording's angular grid."""

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
    scenes: list[StaticScene] = field(default_factory=list)
    spurious: SpuriousFit | None = None
    grids: dict[str, GridSpec] = field(default_factory=dict)


def _beam_correlation(fits: Sequence[PairFit], sigma: float) -> Estimate:
    """Lag-1 correlation of neighbouring beams' residuals (clipped at 3 sigma), fixed grids."""
    a, b = [], []
    for f in fits:
        nxt = np.searchsorted(f.directions, f.directions + 1)
        ok = nxt < f.directions.size
        ok[ok] &= f.directions[nxt[ok]] == f.directions[ok] + 1
        a.append(f.residuals[ok])
        b.append(f.residuals[nxt[ok]])
    x = np.clip(np.concatenate(a), -3 * sigma, 3 * sigma) if a else np.zeros(0)
    y = np.clip(np.concatenate(b), -3 * sigma, 3 * sigma) if b else np.zeros(0)
    if x.size < 100 or sigma <= 0 or np.std(x) == 0 or np.std(y) == 0:
        return Estimate(0.0, math.nan, int(x.size), 'too few neighbouring residuals')
    rho = float(np.corrcoef(x, y)[0, 1])
    se = (1.0 - rho * rho) / math.sqrt(x.size)  # Fisher: var(r) ~ (1 - rho^2)^2 / n
    return Estimate(rho, se, int(x.size), 'lag-1 correlation of neighbouring beams '
                    '(motion-compensated differences on a fixed grid)')


def _cluster_fraction(k: NDArray[np.int64], n: NDArray[np.int64]) -> tuple[float, float]:
    """sum k / sum n and its standard error with directions as clusters."""
    total = float(n.sum())
    if total == 0:
        return math.nan, math.nan
    p = float(k.sum()) / total
    return p, math.sqrt(float(np.sum((k - p * n) ** 2))) / total


def _segments(fits: Sequence[PairFit], first: int, last: int) -> list[tuple[int, int]]:
    """Cut a run of static pairs (scans first..last) where the motion accumulated from the
    pairs' translation and rotation leaves the pose box (greedy, from the start)."""
    by_index = {f.index: f for f in fits}
    out: list[tuple[int, int]] = []
    start = first
    lo = np.zeros(3)
    hi = np.zeros(3)
    pose = np.zeros(3)
    box = np.array([POSE_BOX_M, POSE_BOX_M, POSE_BOX_RAD])
    for k in range(first, last):
        f = by_index.get(k)
        step = np.zeros(3) if f is None else np.array([f.shift[0], f.shift[1], f.rotation])
        pose = pose + np.nan_to_num(step)
        lo, hi = np.minimum(lo, pose), np.maximum(hi, pose)
        if np.any(hi - lo > box):
            out.append((start, k))
            start = k + 1
            pose = np.zeros(3)
            lo, hi = np.zeros(3), np.zeros(3)
    out.append((start, last))
    return [(a, b) for a, b in out if b - a + 1 >= _MIN_SPAN_SCANS]


def _longest_window(good: NDArray[np.bool_], poses: NDArray[np.float64],
                    rates: NDArray[np.float64]) -> tuple[int, int]:
    """Longest run i..j of good scans whose poses (K, 3: shift x, y [m], rotation [rad]) stay
    within the pose box and, once the run holds 6 scans, drift by at most ``rates`` (3,) per
    scan (least-squares trend): a sensor turning or moving steadily distorts every scan
    (the motion during a scan), which no pose per scan compensates."""
    box = np.array([POSE_BOX_M, POSE_BOX_M, POSE_BOX_RAD])
    k_all = good.size
    best = (0, -1)
    for i in range(k_all):
        if not good[i] or k_all - i <= best[1] - best[0] + 1:
            continue
        part = poses[i:]
        width = np.maximum.accumulate(part, axis=0) - np.minimum.accumulate(part, axis=0)
        n = np.arange(1, part.shape[0] + 1, dtype=np.float64)[:, None]
        t = np.arange(part.shape[0], dtype=np.float64)[:, None]
        st, stt = np.cumsum(t, axis=0), np.cumsum(t * t, axis=0)
        sy, sty = np.cumsum(part, axis=0), np.cumsum(t * part, axis=0)
        with np.errstate(invalid='ignore', divide='ignore'):
            trend = (n * sty - st * sy) / (n * stt - st * st)
        steep = (n[:, 0] >= _MIN_SPAN_SCANS) & np.any(np.abs(np.nan_to_num(trend)) > rates,
                                                       axis=1)
        stop = ~good[i:] | np.any(width > box, axis=1) | steep
        end = int(np.argmax(stop)) if stop.any() else part.shape[0]
        if end - 1 > best[1] - best[0]:
            best = (i, i + end - 1)
    return best


@dataclass
class _Candidate:
    recording: str
    scans: Sequence[Scan]
    spec: GridSpec
    first: int
    last: int
    angle_sd: float
    noise: float


@dataclass(frozen=True)
class _Settled:
    recording: str
    scans: Sequence[Scan]
    spec: GridSpec
    first: int
    last: int
    reg: Registration
    angle_sd: float


def _angle_error(scans: Sequence[Scan], spec: GridSpec) -> float:
    """sigma_th [rad] of the reported beam angles from up to 100 scan pairs (blocks of 25
    over the recording; the static ones when at least 10 are), 0 when the noise does not grow
    with the surface slope (:func:`~rc_sim_sensors.fit_estimators.noise_and_angle_error`).
    The differences are taken without motion compensation: a fit dragged by the angle errors
    of oblique surfaces would hide them."""
    ks = pair_starts(len(scans) - 1, 100)
    if ks.size == 0:
        return 0.0
    fits = []
    for run in np.split(ks, np.nonzero(np.diff(ks) != 1)[0] + 1):
        first = int(run[0])
        grid = bin_scans(scans[first:int(run[-1]) + 2], spec)
        fits += grid_pairs(grid, run - first, index_offset=first, uncompensated=True)
    still = [f for f in fits if f.static]
    fits = still if len(still) >= 10 else fits
    if not fits:
        return 0.0
    residuals = np.concatenate([f.plain_residuals for f in fits])
    if residuals.size < 1000:
        return 0.0
    ranges = np.concatenate([f.ranges for f in fits])
    slopes = np.concatenate([f.slope for f in fits])
    quantum = detect_quantum(ranges).value
    _, jitter = noise_and_angle_error(ranges, residuals, slopes, quantum,
                                      np.full(residuals.size, spec.increment))
    return float(jitter.value)


def _score_limit(reg: Registration) -> float:
    """A scan fits its scene when its score (its residual scale over the noise of the static
    scan pairs around it) is at most 1.5, or 1 + 5 standard errors of a robust scale over the
    directions it is measured on (few directions facing their surface: the score scatters
    more)."""
    with np.errstate(invalid='ignore', divide='ignore'):
        tan = np.abs(reg.scene.slope / reg.scene.range)
    n = int(np.sum(facing(tan, np.isfinite(tan) & np.isfinite(reg.scene.spread))))
    return max(STATIC_RATIO, 1.0 + 5.0 * SCALE_SE * math.sqrt(1.0 / max(2 * n, 1)) * 1.5)


def _settle(c: _Candidate, quantum: float, budget: list[int]) -> list[_Settled]:
    """Static spans inside a candidate run (module docstring): register, keep the longest run
    of scans that fit and stay in the pose box, register it again until it holds; the rest on
    either side is tried again."""
    out: list[_Settled] = []
    queue = [(c.first, c.last)]
    while queue and budget[0] > 0:
        lo, hi = queue.pop(0)
        for _ in range(4):
            if hi - lo + 1 < _MIN_SPAN_SCANS or budget[0] <= 0:
                break
            budget[0] -= 1
            reg = register(bin_scans(c.scans[lo:hi + 1], c.spec), quantum=quantum,
                           angle_sd=c.angle_sd, reference=c.noise)
            poses = np.column_stack([reg.motion.shift, reg.motion.rotation])
            good = np.nan_to_num(reg.score, nan=np.inf) <= _score_limit(reg)
            rates = np.array([0.5 * c.noise, 0.5 * c.noise, abs(c.spec.increment)])
            i, j = _longest_window(good, poses, rates)
            if j - i + 1 < _MIN_SPAN_SCANS:
                break
            if i == 0 and j == hi - lo:
                out.append(_Settled(c.recording, c.scans, c.spec, lo, hi, reg, c.angle_sd))
                break
            if i > 0:
                queue.append((lo, lo + i - 1))
            if j < hi - lo:
                queue.append((lo + j + 1, hi))
            lo, hi = lo + i, lo + j
    return out


def fit_lidar(recordings: Sequence[tuple[str, Sequence[Scan]]],
              progress: Progress | None = None) -> LidarFit:
    """Fit a :class:`LidarErrorConfig` to static spans of the recordings (module docstring).
    ``progress(stage, done, total)`` is called as the work goes on.

    Raises:
        LidarFitError: no recording holds a static span.
    """
    report = progress or (lambda stage, done, total: None)
    candidates: list[_Candidate] = []
    traces: list[PairTrace] = []
    specs: dict[str, GridSpec] = {}
    angle_sd: dict[str, float] = {}
    pairs = 0
    lost = total_scans = 0
    n_pairs = sum(min(max(len(s) - 1, 0), MAX_FIT_PAIRS) for _, s in recordings)
    done = 0
    report('scan pairs', 0, n_pairs)
    for name, scans in recordings:
        if not scans:
            continue
        spec = grid_spec(scans)
        specs[name] = spec

        def tick(n: int, base: int = done) -> None:
            report('scan pairs', base + n, n_pairs)

        angle_sd[name] = _angle_error(scans, spec)
        fits = fit_pairs(scans, MAX_FIT_PAIRS, spec, keep_residuals=False, progress=tick,
                         angle_sd=angle_sd[name])
        done += min(max(len(scans) - 1, 0), MAX_FIT_PAIRS)
        report('scan pairs', done, n_pairs)
        pairs += max(len(scans) - 1, 0)
        loss = scan_loss(np.array([s.stamp for s in scans]))
        lost += round(loss.value * loss.samples)
        total_scans += loss.samples
        t0 = scans[0].stamp
        traces.append(PairTrace(name, np.array([scans[f.index + 1].stamp - t0 for f in fits]),
                                np.array([f.raw_scale for f in fits]),
                                np.array([f.scale for f in fits]),
                                np.array([f.static for f in fits], dtype=bool)))
        index = np.array([f.index for f in fits], dtype=np.int64)
        scale = np.array([f.test_scale[1] for f in fits])
        still = np.array([f.static for f in fits], dtype=bool)
        for run in _bridged(static_spans(fits)):
            for a, b in _segments(fits, run[0], run[1]):
                for lo in range(a, b + 1, MAX_SPAN_SCANS):
                    hi = min(lo + MAX_SPAN_SCANS - 1, b)
                    if hi - lo + 1 >= _MIN_SPAN_SCANS:
                        inside = (index >= lo) & (index < hi) & still
                        candidates.append(_Candidate(name, scans, spec, lo, hi,
                                                     angle_sd[name],
                                                     float(np.median(scale[inside]))))
    if not candidates:
        raise _no_static(recordings)
    sample = np.concatenate([s.ranges[s.valid()] for c in candidates[:20]
                             for s in c.scans[c.first:c.last + 1][:50]]).astype(np.float64)
    quantum = detect_quantum(sample)
    settled: list[_Settled] = []
    budgets = {name: [_MAX_REGISTRATIONS] for name, _ in recordings}
    for i, c in enumerate(candidates):
        report('static spans', i, len(candidates))
        settled += _settle(c, quantum.value, budgets[c.recording])
    report('static spans', len(candidates), len(candidates))
    settled = _choose(settled, [n for n, _ in recordings])
    if not settled:
        raise _no_static(recordings)
    return _estimate(recordings, settled, traces, specs, pairs, lost, total_scans, report)


def _bridged(runs: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs of static pairs joined across a single pair that failed the test (a chance
    failure of a still sensor, about 1 in 100 pairs; the registration judges the scans)."""
    out: list[tuple[int, int]] = []
    for a, b in runs:
        if out and a == out[-1][1] + 1:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _choose(settled: list[_Settled], names: list[str]) -> list[_Settled]:
    """At most MAX_SPANS spans: the longest of each recording in turn, then the next longest;
    in recording and time order."""
    by_name = {n: sorted((s for s in settled if s.recording == n),
                         key=lambda s: s.first - s.last) for n in names}
    chosen: list[_Settled] = []
    while len(chosen) < MAX_SPANS and any(by_name.values()):
        for n in names:
            if by_name[n] and len(chosen) < MAX_SPANS:
                chosen.append(by_name[n].pop(0))
    return sorted(chosen, key=lambda s: (names.index(s.recording), s.first))


def _no_static(recordings: Sequence[tuple[str, Sequence[Scan]]]) -> LidarFitError:
    names = ', '.join(name for name, _ in recordings)
    return LidarFitError(f'{names}: no static part (needs at least 6 consecutive scans whose '
                         'scan-to-scan changes are at most 1.5 times the sensor noise); '
                         'record the sensor standing still')


def _span_name(s: _Settled) -> str:
    t0 = s.scans[0].stamp
    return (f'{s.recording}: scans {s.first}-{s.last} ({s.scans[s.first].stamp - t0:.2f}-'
            f'{s.scans[s.last].stamp - t0:.2f} s)')


def _moving_spans(fits: Sequence[PairFit], owner: Sequence[int], spans: int, sigma0: float,
                  k: float, jitter: float, quantum: float) -> dict[int, float]:
    """Spans whose static pairs' residuals (the directions facing their surface, when 100
    are) are more than 1.5x what the noise model fitted on all spans predicts there: a hand
    that moves during the scans (first-order compensation misses it), not the sensor's noise.
    Empty unless at least one span agrees with the model."""
    ratios: dict[int, float] = {}
    own = np.asarray(owner)
    for i in range(spans):
        mine = [f for f, o in zip(fits, own) if o == i]
        if not mine:
            continue
        e = np.concatenate([f.residuals for f in mine])
        r = np.concatenate([f.ranges for f in mine])
        s = np.concatenate([f.slope for f in mine])
        flat = np.concatenate([f.tan_incidence for f in mine]) <= 0.1
        if flat.sum() >= 100:
            e, r, s = e[flat], r[flat], s[flat]
        expected = math.sqrt(float(np.mean((sigma0 + k * r) ** 2 + (jitter * s) ** 2))
                             + quantum * quantum / 12.0)
        ratios[i] = robust_scale(e) / max(expected, 1e-12)
    if not any(v <= STATIC_RATIO for v in ratios.values()):
        return {}
    return {i: v for i, v in ratios.items() if v > STATIC_RATIO}


def _estimate(recordings: Sequence[tuple[str, Sequence[Scan]]], settled: list[_Settled],
              traces: list[PairTrace], specs: dict[str, GridSpec], pairs: int, lost: int,
              total_scans: int, report: Progress, checked: bool = False) -> LidarFit:
    """Every estimate from the settled spans; spans that move (:func:`_moving_spans`) are
    left out and the estimates made again (once)."""
    steps = len(settled) + 4
    report('estimates', 0, steps)
    spans: list[Span] = []
    span_scans: list[list[Scan]] = []
    regs = [s.reg for s in settled]
    for s in settled:
        t0 = s.scans[0].stamp
        spans.append(Span(s.recording, s.first, s.last, s.scans[s.first].stamp - t0,
                          s.scans[s.last].stamp - t0))
        span_scans.append(list(s.scans[s.first:s.last + 1]))
    scans_all = [s for group in span_scans for s in group]
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
    for scan in scans_all:
        r = scan.ranges
        finite = np.isfinite(r)
        invalid = ~scan.valid()
        kinds['low'] += int(np.sum(invalid & finite & ~(r > scan.range_max)))
        kinds['high'] += int(np.sum(invalid & finite & (r > scan.range_max)))
        kinds['inf'] += int(np.sum(np.isinf(r)))
        kinds['nan'] += int(np.sum(np.isnan(r)))
    zero = kinds['low'] + kinds['high'] > kinds['inf'] + kinds['nan']
    values['out_of_range'] = 'zero' if zero else 'rep117'

    # noise: motion-compensated differences of the spans' static pairs (evenly chosen)
    span_pairs = sum(s.last - s.first for s in settled)
    stride = max(1, math.ceil(span_pairs / MAX_NOISE_PAIRS))
    fits_all: list[PairFit] = []
    owner: list[int] = []
    static_pairs = 0
    still: list[F64] = []
    for i, s in enumerate(settled):
        grid = bin_scans(s.scans[s.first:s.last + 1], s.spec)
        ks = np.arange(0, s.last - s.first, stride)
        got = [f for f in grid_pairs(grid, ks, index_offset=s.first, angle_sd=s.angle_sd,
                                     uncompensated=True) if f.static]
        static_pairs += len(got) * stride
        fits_all += got
        still += [f.plain_residuals for f in got]
        owner += [i] * len(got)
        report('estimates', i + 1, steps)
    if not fits_all:  # every pair of every span failed the static test: use them all
        for i, s in enumerate(settled):
            grid = bin_scans(s.scans[s.first:s.last + 1], s.spec)
            every = grid_pairs(grid, np.arange(0, s.last - s.first, stride),
                               index_offset=s.first, angle_sd=s.angle_sd, uncompensated=True)
            fits_all += every
            still += [f.plain_residuals for f in every]
            owner += [i] * len(every)
    residuals = np.concatenate([f.residuals for f in fits_all])
    ranges = np.concatenate([f.ranges for f in fits_all])
    slopes = np.concatenate([f.slope for f in fits_all])
    owners = [settled[i] for i in owner]
    increments = np.concatenate([np.full(f.slope.size, s.spec.increment)
                                 for f, s in zip(fits_all, owners)])
    binned = [s for s in settled if not s.spec.fixed]
    # angle errors are simulated (azimuth jitter) only for scans binned by angle: there the
    # noise is that of directions facing their surface, elsewhere it carries the angle errors
    bins, jitter = noise_and_angle_error(ranges, residuals, slopes, quantum.value, increments,
                                         facing_noise=bool(binned), still=np.concatenate(still))
    sigma0, k, chi2 = fit_noise(bins)
    if not checked:
        moving = _moving_spans(fits_all, owner, len(settled), sigma0.value, k.value,
                               jitter.value if binned else 0.0, quantum.value)
        if moving and len(moving) < len(settled):
            kept = [s for i, s in enumerate(settled) if i not in moving]
            fit = _estimate(recordings, kept, traces, specs, pairs, lost, total_scans, report,
                            checked=True)
            fit.notes.extend(
                f'left out {_span_name(settled[i])}: its scan-to-scan noise is {ratio:.1f}x '
                'what the noise model fitted on every span gives (moving)'
                for i, ratio in moving.items())
            return fit
    est['noise_stddev'], est['noise_stddev_per_meter'] = sigma0, k
    est['azimuth_jitter_stddev'] = jitter
    overall = robust_scale(residuals)
    fixed = [f for f, s in zip(fits_all, owners) if s.spec.fixed]
    rho = _beam_correlation(fixed, overall)
    est['noise_beam_correlation'] = rho
    use_rho = math.isfinite(rho.se) and abs(rho.value) > 3 * rho.se
    values.update(range_resolution=quantum.value, noise_stddev=sigma0.value,
                  noise_stddev_per_meter=k.value,
                  noise_beam_correlation=round(rho.value, 4) if use_rho else 0.0)
    if jitter.value > 0 and binned:
        values['azimuth_jitter_stddev'] = jitter.value
    elif jitter.value > 0:
        notes.append(f'the noise grows with the surface slope as an angle error of '
                     f'{jitter.value * 1000:.2g} mrad would make it, on a fixed beam grid (motion '
                     'during a scan, or noise that grows with incidence): not modelled as '
                     'azimuth jitter')
    if chi2 > 3.0:
        notes.append(f'noise differs between range bins more than sigma0 + k d explains '
                     f'(chi^2/dof {chi2:.1f}): it depends on the surfaces too')
    report('estimates', len(settled) + 1, steps)

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
    report('estimates', len(settled) + 2, steps)

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
    report('estimates', len(settled) + 3, steps)

    # mixed pixels (fixed grids: a blend is only told from a steep surface when a beam keeps
    # its direction), spurious returns, lost scans
    sigma_dir = [sigma0.value + k.value * np.nan_to_num(sc.range) for sc in scenes]
    threshold = max(0.1, 10.0 * float(max(np.nanmax(s) for s in sigma_dir)))
    between = edges = 0
    chances = 0.0
    spurious_parts = []
    q_sd = quantum.value / math.sqrt(12.0)
    for s, reg, sd in zip(settled, regs, sigma_dir):
        grid = bin_scans(s.scans[s.first:s.last + 1], s.spec)
        if s.spec.fixed:
            m = mixed_pixels(grid, reg.scene, sd, threshold)
            between += m[0]
            chances += m[1]
            edges += m[2]
        # each reading's sigma by the fitted model: noise at its range, angle errors on its
        # surface's slope, quantisation; interpolated readings vary less
        level = np.sqrt((sigma0.value + k.value * np.nan_to_num(reg.scene.range)) ** 2
                        + (jitter.value * np.nan_to_num(reg.scene.slope)) ** 2 + q_sd ** 2)
        scale = level[None, :] * np.sqrt(grid.variance)
        scale[:, _near_edge(reg.scene, threshold)] = np.nan
        spurious_parts.append((grid.ranges, reg.residuals, scale))
    p_mix = min(between / chances, 1.0) if chances > 0 else 0.0
    est['mixed_pixel_probability'] = Estimate(
        p_mix, math.sqrt(max(p_mix * (1 - p_mix), 1.0 / max(chances, 1.0)) / max(chances, 1.0)),
        between, f'{between} readings between the surfaces of {edges} depth edges')
    if between >= 5:
        values['mixed_pixel_probability'] = p_mix
        values['depth_edge_threshold'] = threshold
    spur = spurious_returns(spurious_parts, range_min, range_max, _OUTLIER_SIGMAS)
    how = (f'{spur.outliers} of {spur.readings} readings beyond {_OUTLIER_SIGMAS:g} sigma of '
           f'their surface, {spur.far} of them more than {spur.distance:g} m')
    fitted = spur.far >= 10 and spur.uniform and math.isfinite(range_max)
    if spur.far >= 10 and not spur.uniform:
        how += (f'; {spur.beyond} of these beyond the farthest surface where '
                f'{spur.expected:.0f} would be if they were spread to range_max {range_max:g} m '
                "as the model's are: not fitted")
    near = spur.outliers - spur.far
    if near >= 10:
        notes.append(f'{near} readings ({near / max(spur.readings, 1):.4%}) lie beyond '
                     f'{_OUTLIER_SIGMAS:g} sigma of their surface but within {spur.distance:g} m '
                     'of it: a heavier tail than Gaussian noise, not modelled')
    if spur.far >= 10 and not spur.uniform:
        notes.append(f'{spur.far} readings lie far from their surface, but not spread out to '
                     f'range_max {range_max:g} m as spurious returns of the model would be: not '
                     'modelled')
    est['spurious_probability'] = Estimate(spur.p if fitted else 0.0, spur.se, spur.far, how)
    if fitted:
        values['spurious_probability'] = spur.p
    p_loss = lost / total_scans if total_scans else 0.0
    est['scan_loss_probability'] = Estimate(p_loss, math.sqrt(max(p_loss, 1.0 / max(
        total_scans, 1)) / max(total_scans, 1)), total_scans, f'{lost} scans missing from the '
        'stamps')
    values['scan_loss_probability'] = p_loss
    config = LidarErrorConfig.from_mapping(values, 'lidar fit')
    report('estimates', steps, steps)
    return LidarFit(config, est, spans, span_scans, [r.motion for r in regs], pairs,
                    static_pairs, bins, ramps, chi2, kinds, notes, traces, scenes, spur, specs)


def _near_edge(scene: StaticScene, threshold: float) -> NDArray[np.bool_]:
    """Directions at or next to a depth edge of the scene (or next to no surface): readings
    there flip between two surfaces with the smallest change of angle."""
    r = scene.range
    with np.errstate(invalid='ignore'):
        jump = ~(np.abs(np.diff(r)) <= threshold)  # NaN neighbours count as an edge
    edge = np.zeros(r.size, dtype=bool)
    edge[:-1] |= jump
    edge[1:] |= jump
    return edge | ~np.isfinite(r)


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


def smooth_motion(motion: SpanMotion, width: int = 9) -> SpanMotion:
    """Registered poses averaged over ``width`` consecutive scans (fewer at the ends): a hand
    moves smoothly, while each scan's pose estimate also takes some of its noise and, on
    lidars that bin their returns by angle, of its angle errors, which are no motion."""
    k_all = motion.rotation.size
    if k_all < 3:
        return motion
    half = min(width // 2, (k_all - 1) // 2)
    kernel = np.ones(2 * half + 1)

    def smooth(x: F64) -> F64:
        padded = np.concatenate([x[half:0:-1], x, x[-2:-half - 2:-1]]) if half else x
        return np.convolve(padded, kernel / kernel.sum(), mode='valid')

    return SpanMotion(smooth(motion.rotation),
                      np.column_stack([smooth(motion.shift[:, 0]), smooth(motion.shift[:, 1])]))


def simulate_like(fit: LidarFit, config: LidarErrorConfig | None = None, seed: int = 0,
                  ) -> list[list[Scan]]:
    """The fitted model (or ``config``) on each static span's scene, seen from every real
    scan's pose (:func:`smooth_motion`, :func:`~rc_sim_sensors.static_scene.sample_scene`) with
    its own geometry and stamp. Lost scans are left out."""
    config = config or fit.config
    model = LidarErrorModel(config, seed)
    out: list[list[Scan]] = []
    for i, (group, raw_motion) in enumerate(zip(fit.span_scans, fit.motions)):
        motion = smooth_motion(raw_motion)
        # the scene the fit saw
        scene = fit.scenes[i] if i < len(fit.scenes) else static_scene(group, motion)
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
