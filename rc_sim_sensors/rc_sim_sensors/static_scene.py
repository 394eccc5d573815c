"""The scene of a static span, followed through the small motions of a handheld sensor.

Per pair k the motion fit of :mod:`rc_sim_sensors.scan_pairs` gives z_k+1(th) = z_k(th + w_k) +
c_k . a(th) (rotation w_k, translation terms a = (a_x, a_y)). Summed over the span,
z_k(th) = S(th + W_k) + C_k . a(th) with W_k, C_k the cumulative motion relative to the span's
mean pose and S the scene seen from that pose. :func:`static_scene` estimates S (per-direction
median of the readings moved to the mean pose, on the span's angle grid, each value corrected to
its direction's centre with the local slope) together with per-direction counts;
:func:`sample_scene` gives the ideal scan at scan k's own angles and pose. Without motion
(a tripod) W = C = 0 and the directions are the beams of a fixed grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_sensors.scan_geometry import Scan, incidence_from_ranges
from rc_sim_sensors.scan_pairs import PairFit, local_slope, translation_terms

__all__ = ['SpanMotion', 'StaticScene', 'sample_scene', 'span_motion', 'static_scene']

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


def span_motion(fits: Sequence[PairFit], first: int, scans: int) -> SpanMotion:
    """Motion of scans ``first .. first + scans - 1`` from the fits of their consecutive pairs
    (a missing pair counts as no motion)."""
    step_w = np.zeros(scans)
    step_c = np.zeros((scans, 2))
    for f in fits:
        k = f.index - first + 1
        if 1 <= k < scans:
            step_w[k] = f.rotation
            step_c[k] = f.shift
    w = np.cumsum(step_w)
    c = np.cumsum(step_c, axis=0)
    return SpanMotion(w - w.mean(), c - c.mean(axis=0))


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
    inc = float(np.median([abs(s.angle_increment) for s in scans]))
    full = all(s.full_circle for s in scans)
    lo = min(float(s.angles.min()) for s in scans if s.beams)
    hi = max(float(s.angles.max()) for s in scans if s.beams)
    count = math.ceil(2.0 * math.pi / inc) if full else round((hi - lo) / inc) + 1
    return lo, inc, max(count, 1), full


def _index(phi: F64, origin: float, inc: float, count: int, full: bool) -> F64:
    x = (phi - origin) / inc
    return np.mod(x, count) if full else x


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
    usually = nvalid * 2 > total
    scene = np.where(usually, _median_by_bin(vb, np.concatenate(values) if values else raw,
                                             count), np.nan)
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
    from the pose (rotation, shift): linear between two directions on one surface, else the
    nearest direction."""
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
    out[blend] = (1.0 - f[blend]) * r0[blend] + f[blend] * r1[blend]
    ax, ay = translation_terms(scan.angles + rotation, scene.slope[nearest], out)
    out = out + np.nan_to_num(shift[0] * ax + shift[1] * ay)
    out = np.where(np.isfinite(out), out, np.inf)
    inten = None if scene.intensity is None else np.nan_to_num(scene.intensity[nearest])
    return out, inten
