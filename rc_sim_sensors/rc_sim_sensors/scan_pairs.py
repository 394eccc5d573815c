"""Range noise from consecutive scans of a (nearly) static scene, without a ground truth.

For independent noise of stddev sigma, the difference of two readings of the same direction has
variance 2 sigma^2. Real recordings need four corrections, each done here:

1. **Beams by angle, not index**: the scans of a recording are binned onto one angular grid
   (:func:`~rc_sim_sensors.scan_geometry.bin_scans`: the beam grid when it never changes, else
   the median increment); each reading is moved to its direction's centre along its surface,
   taken as locally planar (:func:`plane_shift`: exact for a plane, z - (dr/dth) dth to first
   order; dth = its reported angle minus the direction's, at most half an increment), so scans
   whose beam count and ``angle_min`` change every scan (RPLIDAR, LDS) compare direction by
   direction.
2. **Small sensor motion** (a handheld or vibrating sensor): to first order a translation t and a
   rotation w between the scans change the range of beam i by
   dz_i = -t.(cos th + g sin th, sin th - g cos th) + w dr/dth, g = (dr/dth) / r,
   which is exact for locally planar surfaces (r(th) = h / cos(th - beta) gives dr/dth = r tan a).
   Together with a common range offset db (bias drift) these four terms are removed by a robust
   (Huber) least-squares fit per pair; dr/dth is the local slope over +-2 directions.
3. **Moving scenes**: a pair is *static* when its differences after a common offset and turn
   are at most 1.5 times the fully motion-compensated ones (the translation contributes at most
   ~1.1 sigma, well inside the first-order validity). A turn alone does not count: cheap 360 deg
   lidars bin their returns by angle, and the reported angles of a whole scan err by up to an
   increment, which reads as a turn. Both scales are measured on the directions facing their
   surface (:func:`facing`: incidence below 6 deg, else 17 deg, when at least 60 directions
   are): there a translation shows in full and errors of the reported angles add nothing,
   where on oblique surfaces they add slope x angle error. Only runs of at least 5 static pairs
   estimate noise.
4. **Outliers and quantisation**: the scale is a 3-sigma-clipped RMS divided by its normal
   consistency factor 0.98658 (smooth on millimetre-quantised data, where the MAD jumps in
   whole quanta).

Pairs are fitted in blocks, vectorised over the pairs of a block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_sensors.scan_geometry import GridSpec, Scan, ScanGrid, bin_scans, grid_spec

__all__ = ['FLAT_TAN', 'MIN_STATIC_PAIRS', 'STATIC_RATIO', 'PairFit', 'align', 'depth_edge',
           'facing',
           'fit_pair', 'fit_pairs', 'grid_pairs', 'huber_fit', 'huber_rows',
           'interpolate_range', 'local_slope', 'nanmedian_rows', 'pair_starts', 'plane_shift',
           'robust_scale',
           'robust_scale_rows', 'static_fits', 'static_spans', 'surface_break',
           'translation_terms']

F64 = NDArray[np.float64]
#: a pair is static when raw scale <= STATIC_RATIO x motion-compensated scale
STATIC_RATIO = 1.5
#: a static span holds at least this many consecutive static pairs
MIN_STATIC_PAIRS = 5
#: directions with |dr/dth| / r = tan(incidence) up to this face their surface (17 deg)
FLAT_TAN = 0.3
_CLIP = 3.0
_CLIP_CONSISTENCY = 0.9865766  # sqrt(1 - 2 c phi(c) / (2 Phi(c) - 1)) at c = 3 (normal)
_MIN_BEAMS = 20
_MIN_FACING = 60
_MAX_TAN_INCIDENCE = 3.0  # beams beyond ~72 deg incidence are left out of the motion fit
_BLOCK = 128  # pairs per vectorised block


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


def nanmedian_rows(x: F64) -> F64:
    """Median of the finite values of each row (last axis); NaN for a row without one. Sorting
    once (NaN sorts last) is much faster than ``np.nanmedian`` along an axis."""
    x = np.asarray(x, dtype=np.float64)
    if x.shape[-1] == 0:
        return np.full(x.shape[:-1], np.nan)
    ordered = np.sort(np.where(np.isfinite(x), x, np.nan), axis=-1)
    n = np.isfinite(ordered).sum(axis=-1)
    lo = np.clip((n - 1) // 2, 0, None)[..., None]
    hi = np.clip(n // 2, 0, x.shape[-1] - 1)[..., None]
    out = 0.5 * (np.take_along_axis(ordered, lo, axis=-1)[..., 0]
                 + np.take_along_axis(ordered, hi, axis=-1)[..., 0])
    return np.where(n > 0, out, np.nan)


_nanmedian_rows = nanmedian_rows


def robust_scale_rows(x: F64, iterations: int = 8) -> F64:
    """:func:`robust_scale` of each row of ``x`` (NaN = no value); NaN for an empty row."""
    x = np.asarray(x, dtype=np.float64)
    have = np.isfinite(x)
    a = np.where(have, np.abs(x), np.nan)
    s = 1.4826 * _nanmedian_rows(a)
    sq = np.where(have, x * x, 0.0)
    n = have.sum(axis=-1)
    rms = np.sqrt(sq.sum(axis=-1) / np.maximum(n, 1))
    s = np.where(s == 0.0, rms, s)
    for _ in range(iterations):
        with np.errstate(invalid='ignore'):
            inside = have & (a < _CLIP * s[..., None])
        cnt = inside.sum(axis=-1)
        new = np.sqrt(np.where(inside, sq, 0.0).sum(axis=-1) / np.maximum(cnt, 1)) \
            / _CLIP_CONSISTENCY
        s = np.where((cnt > 0) & (s > 0), new, s)
    return np.where(n > 0, s, np.nan)


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


def local_slope(m: F64, increment: float, wrap: bool = False) -> F64:
    """dr/dtheta [m/rad] along the last axis: least-squares slope over the directions i-2..i+2
    that have a value on the centre's surface (each within 3 cm + 10 % of the range per
    direction of it); NaN with fewer than 3 of them (the centre may be missing, then both sides
    must have one). ``wrap``: the directions close a full turn."""
    m = np.asarray(m, dtype=np.float64)
    n = m.shape[-1]
    if wrap and n >= 5:
        padded = np.concatenate([m[..., -2:], m, m[..., :2]], axis=-1)
        return local_slope(padded, increment)[..., 2:n + 2]
    slope = np.full(m.shape, np.nan)
    if n < 5:
        return slope
    window = np.stack([m[..., j:n - 4 + j] for j in range(5)])  # (5, ..., n-4)
    offsets = np.arange(-2.0, 3.0).reshape((5,) + (1,) * m.ndim)
    centre = window[2]
    ref = np.where(np.isfinite(centre), centre, 0.5 * (window[1] + window[3]))
    with np.errstate(invalid='ignore'):
        near = np.abs(window - ref) <= _jump_tolerance(ref) * np.maximum(np.abs(offsets), 1.0)
    w = near.astype(np.float64)
    count = w.sum(axis=0)
    both = (w[0] + w[1] > 0) & (w[3] + w[4] > 0)
    x0 = (w * offsets).sum(axis=0) / np.maximum(count, 1.0)
    dx = offsets - x0
    vals = np.where(near, window, 0.0)
    y0 = vals.sum(axis=0) / np.maximum(count, 1.0)
    sxx = (w * dx * dx).sum(axis=0)
    sxy = (w * dx * (vals - y0)).sum(axis=0)
    ok = (count >= 3) & both & (sxx > 0)
    with np.errstate(invalid='ignore', divide='ignore'):
        slope[..., 2:n - 2] = np.where(ok, sxy / sxx / increment, np.nan)
    return slope


def depth_edge(m: F64, wrap: bool = False) -> NDArray[np.bool_]:
    """Directions next to a depth edge along the last axis: a neighbour's value differs by
    more than 3 cm + 10 % of the range (as :func:`local_slope`'s surfaces). Between scans whose
    beams fall at different angles, such a direction sees one surface or the other."""
    m = np.asarray(m, dtype=np.float64)
    out = np.zeros(m.shape, dtype=bool)
    if m.shape[-1] < 2:
        return out
    with np.errstate(invalid='ignore'):
        jump = np.abs(np.diff(m, axis=-1)) > _jump_tolerance(
            np.minimum(m[..., 1:], m[..., :-1]))
        out[..., 1:] |= jump
        out[..., :-1] |= jump
        if wrap:
            last = np.abs(m[..., 0] - m[..., -1]) > _jump_tolerance(
                np.minimum(m[..., 0], m[..., -1]))
            out[..., 0] |= last
            out[..., -1] |= last
    return out


def surface_break(m: F64, ratio: F64, increment: float, noise: F64,
                  wrap: bool = False) -> NDArray[np.bool_]:
    """Directions at a corner of the surfaces along the last axis (and their neighbours): the
    second difference m_i-1 - 2 m_i + m_i+1 departs from a plane's, r (1 + 2 g^2) inc^2
    (r = h / cos(th - beta): r'' = r (1 + 2 tan^2)), by more than twice that plus 5 standard
    deviations of ``noise`` (per row, one reading's sigma: the second difference of a pair's
    mean has sigma sqrt(3) noise). Interpolating or moving a reading across a corner along one
    plane errs by up to the corner's kink times the angle."""
    m = np.asarray(m, dtype=np.float64)
    out = np.zeros(m.shape, dtype=bool)
    n = m.shape[-1]
    if n < 3:
        return out
    padded = np.concatenate([m[..., -1:], m, m[..., :1]], axis=-1) if wrap else m
    second = padded[..., :-2] - 2.0 * padded[..., 1:-1] + padded[..., 2:]
    centre = slice(0, n) if wrap else slice(1, n - 1)
    g = np.nan_to_num(np.asarray(ratio, dtype=np.float64)[..., centre])
    plane = np.abs(m[..., centre]) * (1.0 + 2.0 * g * g) * increment * increment
    noise = np.asarray(noise, dtype=np.float64)
    allowed = 3.0 * plane + 5.0 * math.sqrt(3.0) * noise[..., None]
    with np.errstate(invalid='ignore'):
        kink = np.abs(second - plane * np.sign(second)) > allowed
    core = np.zeros(m.shape, dtype=bool)
    core[..., centre] = kink
    out |= core
    out[..., 1:] |= core[..., :-1]
    out[..., :-1] |= core[..., 1:]
    if wrap:
        out[..., 0] |= core[..., -1]
        out[..., -1] |= core[..., 0]
    return out


def plane_shift(ranges: F64, ratio: F64, angle: F64) -> F64:
    """Range of a planar surface ``angle`` [rad] further on from a reading of it, given
    g = (dr/dth) / r there: r(th + a) = r(th) / (cos a - g sin a), exact for a plane
    (r(th) = h / cos(th - beta) has g = tan(th - beta)); to first order r + (dr/dth) a.
    Where g is unknown (NaN) the reading stays as it is."""
    g = np.nan_to_num(ratio)
    with np.errstate(invalid='ignore', divide='ignore'):
        return ranges / (np.cos(angle) - g * np.sin(angle))


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
    motion compensation [m]; ``test_scale``: the two scales of the static test (after a common
    offset and turn / after the whole compensation, on the directions facing their surface,
    module docstring); ``plain_residuals``: the differences without motion compensation (only
    when asked for, :func:`grid_pairs`); ``offset``: common range change db [m] and its
    standard error; ``translation``
    [m] and ``rotation`` [rad] of the sensor between the scans; ``shift``: the coefficients
    (c_x, c_y) of the translation terms, dz = c_x a_x + c_y a_y; ``slope``: dr/dth [m/rad] of
    each residual's direction; ``directions``: its direction on the recording's grid.
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
    slope: F64 = field(default_factory=lambda: np.zeros(0))
    directions: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    test_scale: tuple[float, float] = (math.nan, math.nan)
    plain_residuals: F64 = field(default_factory=lambda: np.zeros(0))

    @property
    def static(self) -> bool:
        """The differences after a common offset and turn are at most STATIC_RATIO x the
        compensated ones on the directions facing their surface (module docstring), and
        enough beams are used."""
        raw, comp = (self.test_scale if math.isfinite(self.test_scale[1]) else
                     (self.raw_scale, self.scale))
        return (self.beams.size >= _MIN_BEAMS and math.isfinite(comp)
                and raw <= STATIC_RATIO * comp + 1e-12)


def facing(tan_incidence: F64, use: NDArray[np.bool_], minimum: int = _MIN_BEAMS,
           ) -> NDArray[np.bool_]:
    """Per row, the used directions facing their surface: |dr/dth| / r <= 0.1 (6 deg) when at
    least ``minimum`` are, else <= FLAT_TAN (17 deg) when at least ``minimum`` are, else every
    used one."""
    out = use.copy()
    for limit in (FLAT_TAN, 0.1):
        with np.errstate(invalid='ignore'):
            tight = use & (tan_incidence <= limit)
        enough = tight.sum(axis=-1) >= minimum
        out = np.where(enough[..., None], tight, out)
    return out


def huber_rows(design: F64, y: F64, iterations: int = 5,
               weights: F64 | None = None) -> tuple[F64, F64, F64]:
    """Huber M-estimates (k = 2 sigma) of ``y[p] ~ design[p] @ beta[p]`` for every row p by
    iteratively reweighted least squares (NaN in y = not used; ``weights`` scale each row's
    values, 1 / their standard deviation). Returns (beta (P, M), residuals y - design beta
    (P, N), NaN where not used, (X^T W X)^-1 (P, M, M))."""
    use = np.isfinite(y) & np.all(np.isfinite(design), axis=-1)
    base = np.ones(y.shape) if weights is None else np.where(use, weights, 0.0)
    x0 = np.where(use[..., None], design, 0.0)
    y0 = np.where(use, y, 0.0)
    w = np.where(use, 1.0, 0.0)
    m = design.shape[-1]
    beta = np.zeros((*y.shape[:-1], m))
    cov = np.zeros((*y.shape[:-1], m, m))
    resid = np.where(use, y0, np.nan)
    for _ in range(iterations):
        ww = w * base * base
        xw = x0 * ww[..., None]
        info = np.matmul(np.swapaxes(xw, -1, -2), x0)
        cov = np.linalg.pinv(info)
        rhs = np.matmul(np.swapaxes(xw, -1, -2), y0[..., None])
        beta = np.matmul(cov, rhs)[..., 0]
        resid = np.where(use, y0 - np.matmul(x0, beta[..., None])[..., 0], np.nan)
        z = resid * base
        s = 1.4826 * _nanmedian_rows(np.abs(z))
        with np.errstate(invalid='ignore', divide='ignore'):
            w = np.where(use, np.minimum(1.0, 2.0 * s[..., None] / np.maximum(np.abs(z),
                                                                          1e-300)), 0.0)
        w = np.where(np.isfinite(w), w, 1.0 * use)
    return beta, resid, cov


def huber_fit(design: F64, y: F64, iterations: int = 8) -> tuple[F64, F64]:
    """Huber M-estimate (k = 2 sigma) by iteratively reweighted least squares."""
    beta, resid, _ = huber_rows(design[None], y[None], iterations)
    return beta[0], resid[0]


def grid_pairs(grid: ScanGrid, first: Sequence[int] | NDArray[np.int64], *,
               index_offset: int = 0, keep_residuals: bool = True,
               angle_sd: float = 0.0, uncompensated: bool = False) -> list[PairFit]:
    """:class:`PairFit` of rows (k, k+1) of ``grid`` for every k in ``first`` (module
    docstring), vectorised; ``index_offset`` is added to k in ``PairFit.index``; pairs with
    fewer than 20 usable directions are left out. Without ``keep_residuals`` the arrays are
    left empty (the static test and the motion only). ``angle_sd`` [rad]: the error of the
    reported beam angles (``fit_estimators.noise_and_angle_error``); when it is not 0 the
    motion fit weighs directions by 1 / sqrt(s^2 + (dr/dth increment)^2), so that oblique
    surfaces, where the angle errors show, do not drag the motion and offset.
    ``uncompensated``: ``plain_residuals`` are filled with the differences less their median
    over the directions facing their surface (no motion removed: on a sensor that stands still,
    errors of the reported angles neither show as a turn nor drag a fitted offset)."""
    ks = np.asarray(first, dtype=np.int64)
    out: list[PairFit] = []
    spec = grid.spec
    theta0 = spec.angles
    for lo in range(0, ks.size, _BLOCK):
        k = ks[lo:lo + _BLOCK]
        a, b = grid.ranges[k], grid.ranges[k + 1]
        da, db = grid.offset[k], grid.offset[k + 1]
        mean = 0.5 * (a + b)
        slope = local_slope(mean, spec.increment, spec.full_circle)
        with np.errstate(invalid='ignore', divide='ignore'):
            g = np.abs(slope / mean)
            ratio = slope / mean
            d = plane_shift(b, ratio, -db) - plane_shift(a, ratio, -da)
            use = (np.isfinite(d) & np.isfinite(g) & (g <= _MAX_TAN_INCIDENCE)
                   & ~depth_edge(mean, spec.full_circle))
        theta = theta0[None, :] + 0.5 * (da + db)
        ax, ay = translation_terms(theta, slope, mean)
        # variance of the difference: c_a + c_b one reading's (2 for two raw readings)
        root = np.sqrt(grid.variance[k] + grid.variance[k + 1])
        rough = robust_scale_rows(np.where(use & (g <= FLAT_TAN), d / root, np.nan))
        rough = np.where(np.isfinite(rough), rough, robust_scale_rows(np.where(use, d / root,
                                                                                np.nan)))
        use &= ~surface_break(mean, ratio, spec.increment, rough, spec.full_circle)
        design = np.stack([np.ones_like(mean), ax, ay, slope], axis=-1) / root[..., None]
        y = np.where(use, d / root, np.nan)
        test = facing(g, use, _MIN_FACING)  # fewer scatter too much for a test at 1.5x
        # errors of the reported angles (drivers that bin their returns by angle come in
        # jumps of a whole increment): weight 1 / sqrt(s^2 + (S' inc)^2), s the pair's scale
        # on the directions facing their surface (uniform weights without angle errors)
        level = robust_scale_rows(np.where(test, y - _nanmedian_rows(
            np.where(test, y, np.nan))[:, None], np.nan))
        level = np.where(np.isfinite(level) & (level > 0), level, 1.0)
        step = spec.increment if angle_sd > 0 else 0.0
        weight = 1.0 / np.hypot(level[:, None], step * np.nan_to_num(slope))
        beta, resid, cov = huber_rows(design, y, weights=weight)
        n = use.sum(axis=1)
        resid = resid * np.sqrt(n / np.maximum(n - 4, 1))[:, None]  # fitted dof
        # without the translation: a common offset and turn only (the turn also takes a
        # scan's common angle error, which is no motion)
        _, raw_resid, _ = huber_rows(design[..., [0, 3]], y, weights=weight)
        raw_resid = raw_resid * np.sqrt(n / np.maximum(n - 2, 1))[:, None]
        still_raw = robust_scale_rows(np.where(test, raw_resid, np.nan))
        still_comp = robust_scale_rows(np.where(test, resid, np.nan))
        raw = robust_scale_rows(y - _nanmedian_rows(y)[:, None])
        comp = robust_scale_rows(resid)
        whole_w = robust_scale_rows(resid * weight)
        for p in range(k.size):
            if n[p] < _MIN_BEAMS:
                continue
            u = use[p]
            kk = int(k[p])
            sx, sy = float(beta[p, 1]), float(beta[p, 2])
            se = float(whole_w[p]) * math.sqrt(max(float(cov[p, 0, 0]), 0.0))
            if keep_residuals:
                cols = np.nonzero(u)[0]
                plain = np.zeros(0)
                if uncompensated:  # less the median of the directions facing their surface
                    centre = float(np.median(y[p, test[p]])) if test[p].any() else \
                        float(np.median(y[p, cols]))
                    plain = y[p, cols] - centre
                arrays = (grid.beam[kk, cols], mean[p, cols], resid[p, cols], g[p, cols],
                          slope[p, cols], cols, plain)
            else:
                empty = np.zeros(0)
                arrays = (np.zeros(int(n[p]), np.int64), empty, empty, empty, empty,
                          np.zeros(0, np.int64), empty)
            out.append(PairFit(index=kk + index_offset, beams=arrays[0], ranges=arrays[1],
                               residuals=arrays[2], tan_incidence=arrays[3],
                               raw_scale=float(raw[p]), scale=float(comp[p]),
                               offset=float(beta[p, 0]), offset_se=se,
                               translation=math.hypot(sx, sy), rotation=float(beta[p, 3]),
                               shift=(sx, sy), slope=arrays[4], directions=arrays[5],
                               test_scale=(float(still_raw[p]), float(still_comp[p])),
                               plain_residuals=arrays[6]))
    return out


def fit_pair(a: Scan, b: Scan, index: int = 0) -> PairFit | None:
    """Motion-compensated differences b - a (module docstring); None below 20 usable beams."""
    fits = grid_pairs(bin_scans([a, b]), [0])
    return replace_index(fits[0], index) if fits else None


def replace_index(fit: PairFit, index: int) -> PairFit:
    """``fit`` with another pair index."""
    from dataclasses import replace

    return replace(fit, index=index)


def pair_starts(n_pairs: int, max_pairs: int | None) -> NDArray[np.int64]:
    """First scans of the pairs examined: all, or evenly spaced blocks of 25 consecutive pairs
    when there are more than ``max_pairs``."""
    if max_pairs is None or n_pairs <= max_pairs:
        return np.arange(max(n_pairs, 0), dtype=np.int64)
    block = min(25, max_pairs)
    starts = np.linspace(0, n_pairs - block, max(max_pairs // block, 1)).round().astype(np.int64)
    return np.unique((starts[:, None] + np.arange(block)[None, :]).ravel())


def fit_pairs(scans: Sequence[Scan], max_pairs: int | None = None,
              spec: GridSpec | None = None, keep_residuals: bool = True,
              progress: Callable[[int], None] | None = None,
              angle_sd: float = 0.0) -> list[PairFit]:
    """:func:`fit_pair` of consecutive scans (k, k+1), in order, on the recording's common
    grid (``spec``, default :func:`~rc_sim_sensors.scan_geometry.grid_spec`).

    With more than ``max_pairs`` pairs, evenly spaced blocks of 25 consecutive pairs are fitted
    (static runs stay contiguous). Pairs with fewer than 20 usable beams are left out.
    ``progress(pairs done)`` is called after every block; ``angle_sd``: as :func:`grid_pairs`.
    """
    ks = pair_starts(len(scans) - 1, max_pairs)
    if ks.size == 0:
        return []
    spec = spec or grid_spec(scans)
    out: list[PairFit] = []
    done = 0
    # bin a block of consecutive scans at a time (memory stays bounded on long recordings)
    cuts = np.nonzero(np.diff(ks) != 1)[0] + 1
    for run in np.split(ks, cuts):
        for lo in range(0, run.size, 4 * _BLOCK):
            part = run[lo:lo + 4 * _BLOCK]
            first = int(part[0])
            grid = bin_scans(scans[first:int(part[-1]) + 2], spec)
            out += grid_pairs(grid, part - first, index_offset=first,
                              keep_residuals=keep_residuals, angle_sd=angle_sd)
            done += part.size
            if progress is not None:
                progress(done)
    return out


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
