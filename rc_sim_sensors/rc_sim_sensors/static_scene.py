"""The scene of a static span, followed through the small motions of a handheld sensor.

Scan k of a span reads z_k(th) = S(th + W_k) + C_k . a(th) + b_k + noise: S is the scene seen
from the span's mean pose, W_k and C_k the scan's rotation and translation terms relative to it
(a = (a_x, a_y) of :func:`~rc_sim_sensors.scan_pairs.translation_terms`, first order) and b_k
its common range offset. :func:`register` alternates between the scene (:func:`static_scene`:
per-direction median of the readings moved to the mean pose, on the span's angle grid, each
value corrected to its direction's centre with the local slope) and each scan's pose and offset,
fitted against the scene on that scan alone (Huber), so pose errors never accumulate.
:func:`sample_scene` gives the ideal scan at a scan's own angles and pose. Without motion (a
tripod) W = C = 0 and the directions are the beams of a fixed grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_sensors.scan_geometry import Scan, incidence_from_ranges
from rc_sim_sensors.scan_pairs import (
    huber_fit,
    interpolate_range,
    local_slope,
    robust_scale,
    translation_terms,
)

__all__ = ['Registration', 'SpanMotion', 'StaticScene', 'register', 'sample_scene',
           'static_scene']

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
    """Per direction j (angle origin + j increment) over the scans of a span: readings, valid
    readings, median range S_j [m] (NaN unless valid in most scans), median intensity, incidence
    and slope dS/dth; ``bins``: the direction of every beam of every scan."""

    origin: float
    increment: float
    full_circle: bool
    bins: list[I64]
    total: I64
    valid: I64
    range: F64
    slope: F64
    intensity: F64 | None
    incidence: F64

    @property
    def usually_valid(self) -> NDArray[np.bool_]:
        """Directions valid in more than half of the scans."""
        return self.valid * 2 > self.total


def _median_by_bin(bins: I64, values: F64, count: int) -> F64:
    out = np.full(count, np.nan)
    if values.size == 0:
        return out
    order = np.lexsort((values, bins))
    b, v = bins[order], values[order]
    n = np.bincount(b, minlength=count)
    start = np.concatenate([[0], np.cumsum(n)[:-1]])
    have = n > 0
    out[have] = 0.5 * (v[start[have] + (n[have] - 1) // 2] + v[start[have] + n[have] // 2])
    return out


def _grid(scans: Sequence[Scan]) -> tuple[float, float, int, bool]:
    """(origin, spacing, directions, full circle): the beam grid, or a quarter of the median
    increment when the grid changes between scans (the scene is then sampled between beams)."""
    inc = float(np.median([abs(s.angle_increment) for s in scans]))
    if any(s.geometry != scans[0].geometry for s in scans):
        inc /= 4.0
    full = all(s.full_circle for s in scans)
    lo = min(float(s.angles.min()) for s in scans if s.beams)
    hi = max(float(s.angles.max()) for s in scans if s.beams)
    count = math.ceil(2.0 * math.pi / inc) if full else round((hi - lo) / inc) + 1
    return lo, inc, max(count, 1), full


def _index(phi: F64, origin: float, inc: float, count: int, full: bool) -> F64:
    x = (phi - origin) / inc
    return np.mod(x, count) if full else x


def _smooth(counts: I64, full: bool, fine: bool) -> I64:
    """Counts summed over the 5 quarter-increment directions of one beam width (fine grids)."""
    if not fine:
        return counts
    padded = np.concatenate([counts[-2:], counts, counts[:2]]) if full else \
        np.concatenate([np.zeros(2, counts.dtype), counts, np.zeros(2, counts.dtype)])
    return np.convolve(padded, np.ones(5, dtype=counts.dtype), mode='valid')


def static_scene(scans: Sequence[Scan], motion: SpanMotion | None = None) -> StaticScene:
    """The scene of a span seen from its mean pose (module docstring)."""
    motion = motion or SpanMotion.still(len(scans))
    origin, inc, count, full = _grid(scans)
    # first pass: directions without motion give the slopes for the translation terms
    rounds = []
    for scan, w in zip(scans, motion.rotation):
        x = _index(scan.angles + w, origin, inc, count, full)
        rounds.append((x, np.mod(np.rint(x), count).astype(np.int64) if full else
                       np.clip(np.rint(x), 0, count - 1).astype(np.int64)))
    valid = [s.valid() for s in scans]
    vb = np.concatenate([b[v] for (_, b), v in zip(rounds, valid)]) if scans else np.zeros(0,
                                                                                          int)
    raw = np.concatenate([s.ranges[v].astype(np.float64) for s, v in zip(scans, valid)])
    first = _median_by_bin(vb, raw, count)
    slope = local_slope(first, inc)
    values = []
    for scan, (x, b), v, w, c in zip(scans, rounds, valid, motion.rotation, motion.shift):
        r = scan.ranges[v].astype(np.float64)
        ax, ay = translation_terms(scan.angles[v] + w, slope[b[v]], first[b[v]])
        moved = r - np.nan_to_num(c[0] * ax + c[1] * ay)
        centre = moved + np.nan_to_num(slope[b[v]] * (b[v] - x[v]) * inc)
        values.append(centre)
    total = np.zeros(count, dtype=np.int64)
    nvalid = np.zeros(count, dtype=np.int64)
    for (_, b), v in zip(rounds, valid):
        total += np.bincount(b, minlength=count)
        nvalid += np.bincount(b[v], minlength=count)
    fine = any(s.geometry != scans[0].geometry for s in scans)
    usually = _smooth(nvalid, full, fine) * 2 > _smooth(total, full, fine)
    median = _median_by_bin(vb, np.concatenate(values) if values else raw, count)
    have = np.isfinite(median)
    if fine and have.any():  # a quarter-increment direction that no beam hit: its neighbours
        idx = np.arange(count)
        median = np.where(have, median, np.interp(idx, idx[have], median[have],
                                                  period=count if full else None))
    scene = np.where(usually, median, np.nan)
    intensity = None
    if scans and all(s.intensities is not None for s in scans):
        intensity = _median_by_bin(vb, np.concatenate(
            [np.asarray(s.intensities, dtype=np.float64)[v] for s, v in zip(scans, valid)]),
            count)
    return StaticScene(origin, inc, full, [b for _, b in rounds], total, nvalid, scene,
                       local_slope(scene, inc), intensity,
                       incidence_from_ranges(scene, inc), )


def sample_scene(scene: StaticScene, scan: Scan, rotation: float = 0.0,
                 shift: tuple[float, float] = (0.0, 0.0)) -> tuple[F64, F64 | None]:
    """Ideal ranges (+inf where the scene has no surface) and intensities at ``scan``'s angles
    from the pose (rotation, shift): interpolated between two directions on one surface
    (:func:`~rc_sim_sensors.scan_pairs.interpolate_range`), else the nearest direction."""
    count = scene.range.size
    x = _index(scan.angles + rotation, scene.origin, scene.increment, count, scene.full_circle)
    i0 = np.floor(x).astype(np.int64)
    f = x - i0
    if scene.full_circle:
        i0, i1 = np.mod(i0, count), np.mod(i0 + 1, count)
    else:
        i0, i1 = np.clip(i0, 0, count - 1), np.clip(i0 + 1, 0, count - 1)
    r0, r1 = scene.range[i0], scene.range[i1]
    nearest = np.where(f < 0.5, i0, i1)
    out = scene.range[nearest].copy()
    with np.errstate(invalid='ignore'):
        blend = np.isfinite(r0) & np.isfinite(r1) & (np.abs(r1 - r0) <= 0.03 + 0.1 * r0)
    out[blend] = interpolate_range(r0[blend], r1[blend], f[blend])
    ax, ay = translation_terms(scan.angles + rotation, scene.slope[nearest], out)
    out = out + np.nan_to_num(shift[0] * ax + shift[1] * ay)
    out = np.where(np.isfinite(out), out, np.inf)
    inten = None if scene.intensity is None else np.nan_to_num(scene.intensity[nearest])
    return out, inten


@dataclass(frozen=True)
class Registration:
    """A span registered against its scene: poses, per-scan offsets b_k [m] with standard
    errors, and each scan's residual scale [m] after pose and offset."""

    motion: SpanMotion
    scene: StaticScene
    offsets: F64
    offset_se: F64
    scale: F64


def _nearest(scene: StaticScene, angles: F64) -> I64:
    x = np.rint((angles - scene.origin) / scene.increment)
    count = scene.range.size
    return (np.mod(x, count) if scene.full_circle else np.clip(x, 0, count - 1)).astype(np.int64)


def register(scans: Sequence[Scan], iterations: int = 3) -> Registration:
    """Scene, poses and offsets of a span by alternating fits (module docstring); poses are
    relative to their mean."""
    k_all = len(scans)
    rotation, shift = np.zeros(k_all), np.zeros((k_all, 2))
    offsets, errors, scales = np.zeros(k_all), np.ones(k_all), np.full(k_all, np.inf)
    scene = static_scene(scans)
    for _ in range(iterations):
        for k, scan in enumerate(scans):
            ideal, _ = sample_scene(scene, scan, float(rotation[k]), (shift[k, 0], shift[k, 1]))
            with np.errstate(invalid='ignore'):
                x = scan.ranges.astype(np.float64) - ideal
            slope = scene.slope[_nearest(scene, scan.angles + rotation[k])]
            ax, ay = translation_terms(scan.angles, slope, ideal)
            use = scan.valid() & np.isfinite(x) & np.isfinite(ax) & np.isfinite(slope)
            if use.sum() < 20:
                continue
            design = np.stack([np.ones(int(use.sum())), ax[use], ay[use], slope[use]], axis=1)
            beta, resid = huber_fit(design, x[use])
            rotation[k] += beta[3]
            shift[k] += beta[1:3]
            scales[k] = robust_scale(resid)
            offsets[k] = beta[0]
            cov00 = float(np.linalg.pinv(design.T @ design)[0, 0])
            errors[k] = max(scales[k], 1e-9) * math.sqrt(max(cov00, 0.0))
        rotation -= rotation.mean()
        shift -= shift.mean(axis=0)
        scene = static_scene(scans, SpanMotion(rotation.copy(), shift.copy()))
    return Registration(SpanMotion(rotation, shift), scene, offsets, errors, scales)
