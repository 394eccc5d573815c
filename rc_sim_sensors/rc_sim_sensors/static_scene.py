"""The scene of a static span, followed through the small motions of a handheld sensor.

The scans of a span are binned onto the recording's angular grid
(:func:`~rc_sim_sensors.scan_geometry.bin_scans`), so beams are compared by angle, whatever the
beam count and ``angle_min`` of each scan. Reading k of direction j (reported angle th_j +
dth_kj) is modelled as

    z_kj = S(th_j + dth_kj + W_k) + C_k . a_j + b_k + e_kj,

S the scene seen from the span's mean pose (between directions: along a locally planar surface,
:func:`~rc_sim_sensors.scan_pairs.plane_shift`, S_j + S'_j (dth_kj + W_k) to first order), W_k
and C_k the
scan's rotation and translation terms relative to the mean pose (a = (a_x, a_y) of
:func:`~rc_sim_sensors.scan_pairs.translation_terms`, first order), b_k its common range offset
and e the noise. :func:`register` alternates between the scene (per-direction median of the
readings moved to the mean pose and their direction's centre) and each scan's pose and offset,
fitted against the scene on that scan alone (Huber, each direction weighted by 1 / its spread
over the span: surfaces seen at a grazing angle or through errors of the reported beam angle
spread more), so pose errors never accumulate. Poses are relative to their mean.
:func:`sample_scene` gives the ideal scan at a scan's own angles and pose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_sensors.scan_geometry import (
    GridSpec,
    Scan,
    ScanGrid,
    bin_scans,
    incidence_from_ranges,
)
from rc_sim_sensors.scan_pairs import (
    facing,
    huber_rows,
    interpolate_range,
    local_slope,
    nanmedian_rows,
    plane_shift,
    robust_scale_rows,
    translation_terms,
)

__all__ = ['Registration', 'SpanMotion', 'StaticScene', 'register', 'sample_scene',
           'scene_of', 'static_scene']

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


@dataclass(frozen=True)
class SpanMotion:
    """Cumulative rotation W_k [rad] and translation coefficients C_k [m] of each scan of a
    span, relative to the span's mean pose."""

    rotation: F64
    shift: F64  # (K, 2)

    @staticmethod
    def still(scans: int) -> SpanMotion:
        """No motion."""
        return SpanMotion(np.zeros(scans), np.zeros((scans, 2)))


@dataclass(frozen=True)
class StaticScene:
    """Per direction j of ``spec`` over the scans of a span: readings (``total``), valid
    readings, median range S_j [m] (NaN unless valid in most scans), slope dS/dth, median
    intensity (NaN: none), incidence [rad] and the spread of the readings about the model
    (robust sigma over the scans [m], NaN with fewer than 3 valid readings)."""

    spec: GridSpec
    total: I64
    valid: I64
    range: F64
    slope: F64
    intensity: F64 | None
    incidence: F64
    spread: F64

    @property
    def origin(self) -> float:
        """Angle of direction 0 [rad]."""
        return self.spec.origin

    @property
    def increment(self) -> float:
        """Spacing of the directions [rad]."""
        return self.spec.increment

    @property
    def full_circle(self) -> bool:
        """Directions wrap around a full turn."""
        return self.spec.full_circle

    @property
    def usually_valid(self) -> NDArray[np.bool_]:
        """Directions valid in more than half of the scans that look there."""
        return (self.valid * 2 > self.total) & (self.total > 0)


def _nanmedian0(x: F64) -> F64:
    """Median over the scans (axis 0) of each direction's finite values (NaN: none)."""
    return nanmedian_rows(np.asarray(x).T)


def scene_of(grid: ScanGrid, motion: SpanMotion | None = None,
             offsets: F64 | None = None, previous: F64 | None = None) -> StaticScene:
    """The scene of ``grid``'s scans seen from their mean pose: per-direction median of the
    readings moved by each scan's pose and offset (the slopes and translation terms from
    ``previous`` scene ranges when given, else from a first median)."""
    spec = grid.spec
    k_all = grid.scans
    motion = motion or SpanMotion.still(k_all)
    offsets = np.zeros(k_all) if offsets is None else offsets
    total = grid.present.sum(axis=0).astype(np.int64)
    nvalid = grid.valid.sum(axis=0).astype(np.int64)
    usually = (nvalid * 2 > total) & (total > 0)
    base = _nanmedian0(grid.ranges) if previous is None else previous
    slope = local_slope(base, spec.increment, spec.full_circle)
    ax, ay = translation_terms(spec.angles, slope, base)
    move = np.nan_to_num(motion.shift[:, :1] * ax[None, :] + motion.shift[:, 1:] * ay[None, :])
    with np.errstate(invalid='ignore', divide='ignore'):
        ratio = slope / base
    values = plane_shift(grid.ranges, ratio, -(grid.offset + motion.rotation[:, None])) \
        - move - offsets[:, None]
    median = np.where(usually, _nanmedian0(values), np.nan)
    intensity = None
    if grid.intensity is not None:
        inten = np.where(grid.valid, grid.intensity, np.nan)
        intensity = _nanmedian0(inten)
        if not np.isfinite(intensity).any():
            intensity = None
    final_slope = local_slope(median, spec.increment, spec.full_circle)
    return StaticScene(spec, total, nvalid, median, final_slope, intensity,
                       incidence_from_ranges(median, abs(spec.increment)),
                       np.full(spec.count, np.nan))


def static_scene(scans: Sequence[Scan], motion: SpanMotion | None = None,
                 spec: GridSpec | None = None) -> StaticScene:
    """The scene of a span seen from its mean pose (module docstring), without offsets."""
    grid = bin_scans(scans, spec)
    first = scene_of(grid, motion)
    return scene_of(grid, motion, previous=first.range)


def sample_scene(scene: StaticScene, scan: Scan, rotation: float = 0.0,
                 shift: tuple[float, float] = (0.0, 0.0)) -> tuple[F64, F64 | None]:
    """Ideal ranges (+inf where the scene has no surface) and intensities at ``scan``'s angles
    from the pose (rotation, shift): interpolated between two directions on one surface
    (:func:`~rc_sim_sensors.scan_pairs.interpolate_range`), else the nearest direction."""
    count = scene.range.size
    x = scene.spec.index(scan.angles + rotation)
    i0 = np.floor(x).astype(np.int64)
    f = x - i0
    if scene.full_circle:
        i0, i1 = np.mod(i0, count), np.mod(i0 + 1, count)
    else:
        outside = (x < -0.5) | (x > count - 0.5)
        i0, i1 = np.clip(i0, 0, count - 1), np.clip(i0 + 1, 0, count - 1)
    r0, r1 = scene.range[i0], scene.range[i1]
    nearest = np.where(f < 0.5, i0, i1)
    out = scene.range[nearest].copy()
    with np.errstate(invalid='ignore'):
        blend = np.isfinite(r0) & np.isfinite(r1) & (np.abs(r1 - r0) <= 0.03 + 0.1 * r0)
    out[blend] = interpolate_range(r0[blend], r1[blend], f[blend])
    ax, ay = translation_terms(scan.angles + rotation, scene.slope[nearest], out)
    out = out + np.nan_to_num(shift[0] * ax + shift[1] * ay)
    if not scene.full_circle:
        out[outside] = np.nan
    out = np.where(np.isfinite(out), out, np.inf)
    inten = None
    if scene.intensity is not None:
        inten = np.nan_to_num(scene.intensity[nearest])
    return out, inten


@dataclass(frozen=True)
class Registration:
    """A span registered against its scene: poses, per-scan offsets b_k [m] with standard
    errors, each scan's residual scale [m] and ``score`` (the robust scale of its residuals
    on the directions facing their surface, :func:`~rc_sim_sensors.scan_pairs.facing`, each
    divided by its direction's spread or by a reference noise level: about 1 for a scan that
    fits), and the residuals
    (K, N) [m] (NaN: no valid reading or no scene)."""

    motion: SpanMotion
    scene: StaticScene
    offsets: F64
    offset_se: F64
    scale: F64
    score: F64
    residuals: F64


def _spread(x: F64, floor: float) -> F64:
    """Robust sigma of each direction's residuals over the scans (MAD, small-sample factor);
    directions with fewer than 3 get the median of the others."""
    n = np.isfinite(x).sum(axis=0)
    centre = _nanmedian0(x)
    mad = _nanmedian0(np.abs(x - centre[None, :]))
    # MAD of n normal values is biased low for small n: 1.4826 n / (n - 0.8) (Croux-Rousseeuw)
    with np.errstate(invalid='ignore', divide='ignore'):
        s = 1.4826 * mad * n / np.maximum(n - 0.8, 1e-9)
    s = np.where(n >= 3, s, np.nan)
    typical = float(np.nanmedian(s)) if np.isfinite(s).any() else floor
    s = np.where(np.isfinite(s), s, typical)
    return np.maximum(s, max(0.3 * typical, floor))


def register(grid: ScanGrid, iterations: int = 2, quantum: float = 0.0,
             angle_sd: float = 0.0, reference: float | None = None) -> Registration:
    """Scene, poses and offsets of a span by alternating fits (module docstring); poses and
    offsets are relative to their mean. ``quantum`` [m] floors the directions' spread;
    ``angle_sd`` [rad], the error of the reported beam angles: when it is not 0 the weight of
    oblique directions in the pose fit drops to 1 / sqrt(spread^2 + (dS/dth increment)^2). With
    ``reference`` [m], a noise level found elsewhere (scan pairs), the scores are the scans'
    robust residual scales over it instead of over each direction's spread in the span (which
    a span of a few scans that all move together keeps near 1)."""
    spec = grid.spec
    k_all = grid.scans
    rotation, shift = np.zeros(k_all), np.zeros((k_all, 2))
    offsets = np.zeros(k_all)
    floor = max(quantum / math.sqrt(12.0), 1e-6)
    scene = scene_of(grid)
    scene = scene_of(grid, previous=scene.range)
    cov00 = np.full(k_all, np.nan)
    weight = np.full(spec.count, np.nan)
    root = np.sqrt(grid.variance)  # interpolated readings vary less
    for _ in range(iterations):
        resid = _residuals(grid, scene, rotation, shift, offsets)
        spread = _spread(resid / root, floor)
        slope = scene.slope
        ax, ay = translation_terms(spec.angles, slope, scene.range)
        design = np.broadcast_to(np.stack([np.ones(spec.count), ax, ay, slope], axis=-1),
                                 (k_all, spec.count, 4))
        # errors of the reported angles (in jumps of a whole increment on drivers that bin
        # their returns by angle) move a reading by dS/dth x the error
        step = spec.increment if angle_sd > 0 else 0.0
        weight = 1.0 / np.hypot(spread, step * np.nan_to_num(slope))
        weight = np.where(np.isfinite(slope), weight, np.nan)
        beta, _, cov = huber_rows(design, resid, weights=np.nan_to_num(weight)[None, :] / root)
        ok = np.isfinite(beta).all(axis=1) & (np.isfinite(design[0]).all(axis=1).sum() >= 20)
        beta = np.where(ok[:, None], beta, 0.0)
        offsets += beta[:, 0]
        shift += beta[:, 1:3]
        rotation += beta[:, 3]
        cov00 = cov[:, 0, 0]
        rotation -= rotation.mean()
        shift -= shift.mean(axis=0)
        offsets -= offsets.mean()
        scene = scene_of(grid, SpanMotion(rotation.copy(), shift.copy()), offsets,
                         previous=scene.range)
    resid = _residuals(grid, scene, rotation, shift, offsets)
    spread = _spread(resid / root, floor)
    with np.errstate(invalid='ignore', divide='ignore'):
        tan = np.abs(scene.slope / scene.range)
    test = facing(np.broadcast_to(tan, resid.shape), np.isfinite(resid))
    if reference is None:
        score = robust_scale_rows(np.where(test, resid / root / spread[None, :], np.nan))
    else:
        score = robust_scale_rows(np.where(test, resid / root, np.nan)) / max(reference, 1e-12)
    scale = robust_scale_rows(resid)
    # the offsets' standard errors: the weighted fit's covariance times the scale of its
    # weighted residuals, or a jackknife of the fit over angular sectors when larger (readings
    # of neighbouring directions share beams and, on cheap lidars, angle errors)
    used = np.isfinite(resid) & np.isfinite(weight)[None, :]
    z = np.where(used, resid * weight[None, :] / root, np.nan)
    fit_scale = robust_scale_rows(z)
    offset_se = np.sqrt(np.maximum(np.nan_to_num(cov00, nan=0.0), 0.0)) * np.maximum(
        np.nan_to_num(fit_scale, nan=1.0), 1e-9)
    ax, ay = translation_terms(spec.angles, scene.slope, scene.range)
    design = np.stack([np.ones(spec.count), ax, ay, scene.slope], axis=-1)
    pose = np.column_stack([offsets, shift, rotation])
    with np.errstate(invalid='ignore'):
        s_rob = 1.4826 * nanmedian_rows(np.abs(z))[:, None]
        huber = np.minimum(1.0, 2.0 * s_rob / np.maximum(np.abs(z), 1e-300))
    w_fit = np.where(used, np.nan_to_num(huber) * (weight[None, :] / root) ** 2, 0.0)
    offset_se = np.maximum(offset_se, _sector_jackknife(
        design, _reconstructed(design, resid, pose), w_fit))
    has = np.isfinite(resid).sum(axis=0) >= 3
    scene = StaticScene(spec, scene.total, scene.valid, scene.range, scene.slope,
                        scene.intensity, scene.incidence, np.where(has, spread, np.nan))
    return Registration(SpanMotion(rotation, shift), scene, offsets, offset_se, scale, score,
                        resid)


def _reconstructed(design: F64, resid: F64, pose: F64) -> F64:
    """Residuals plus each scan's fitted pose terms (the response of the pose fit)."""
    return resid + pose @ np.nan_to_num(design).T


def _sector_jackknife(design: F64, values: F64, weights: F64, sectors: int = 8) -> F64:
    """Per row, the delete-one-sector jackknife standard error of the offset (first column)
    of the weighted least-squares fit ``values ~ design`` over ``sectors`` contiguous blocks
    of directions (weights 0 or NaN values: not used)."""
    ok = np.isfinite(values) & np.all(np.isfinite(design), axis=-1)[None, :] & (weights > 0)
    w = np.where(ok, weights, 0.0)
    x = np.nan_to_num(design)
    v = np.where(ok, values, 0.0)
    parts = [p for p in np.array_split(np.arange(values.shape[1]), sectors) if p.size]
    info = np.stack([np.matmul(np.swapaxes(w[:, p, None] * x[p][None], 1, 2), x[p])
                     for p in parts])
    rhs = np.stack([(w[:, p] * v[:, p]) @ x[p] for p in parts])
    mass = np.stack([w[:, p].sum(axis=1) for p in parts])  # (G, K)
    total_info, total_rhs = info.sum(axis=0), rhs.sum(axis=0)
    deleted = np.full(mass.shape, np.nan)
    for g in range(len(parts)):
        a = total_info - info[g]
        b = total_rhs - rhs[g]
        beta = np.matmul(np.linalg.pinv(a), b[..., None])[..., 0]
        deleted[g] = np.where(mass[g] > 0, beta[:, 0], np.nan)
    have = np.isfinite(deleted)
    count = have.sum(axis=0)
    centre = np.nanmean(np.where(have, deleted, np.nan), axis=0) if count.any() else \
        np.zeros(values.shape[0])
    var = (count - 1) / np.maximum(count, 1) * np.nansum((deleted - centre) ** 2, axis=0)
    return np.where(count >= 3, np.sqrt(var), 0.0)


def _residuals(grid: ScanGrid, scene: StaticScene, rotation: F64, shift: F64,
               offsets: F64) -> F64:
    """z_kj minus the model of the module docstring (the angle along a locally planar surface,
    :func:`~rc_sim_sensors.scan_pairs.plane_shift`; first order in the translation)."""
    spec = grid.spec
    ax, ay = translation_terms(spec.angles, scene.slope, scene.range)
    move = np.nan_to_num(shift[:, :1] * ax[None, :] + shift[:, 1:] * ay[None, :])
    with np.errstate(invalid='ignore', divide='ignore'):
        ratio = scene.slope / scene.range
    pred = plane_shift(scene.range[None, :], ratio, grid.offset + rotation[:, None]) + move \
        + offsets[:, None]
    return grid.ranges - pred
