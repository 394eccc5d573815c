"""Fast lidar on occupancy maps: a range lookup table per free cell x angle bin.

For every free cell (at least ``min_clearance`` from the walls), or block of ``stride x stride``
free cells, the table holds the exact range (:func:`rc_sim_engine.world.map_grid.ray_exact_axis`)
from the row origin (cell or block centre) along ``n_bins`` equally spaced directions of the map
frame, as uint16: 15 bits of range in steps of ``range_cap / 32766`` (32767 = nothing within
``range_cap``) and 1 bit telling whether the hit lies on a cell edge u = const or v = const. A row
is contiguous along angle, so a whole scan reads one short stretch of memory (the "giant lookup
table" of Walsh & Karaman, *CDDT: Fast Approximate 2D Ray Casting for Accelerated Localization*,
ICRA 2018), here with a position correction.

Scan of a sensor at p whose row origin is c: beam i reads the bin nearest its angle; the stored
hit ``h = c + r_c d_bin`` lies on the edge line ``u = h_u`` (or ``v = h_v``), which the TRUE beam
from p at its true angle meets at ``t = (h_u - p_u) / d_u``: exact on straight walls. Near grazing
incidence (or where the true beam meets another wall) t is kept within 2 cells of the first-order
value ``r_c - (p - c) . d``. Errors come from occluding corners and staircase walls (figures in
docs/racing.md). Cells without a row (walls) fall back to the exact traversal;
``mode='exact'`` always uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
import hashlib
import math
import os
from pathlib import Path
from typing import Any

from numba import njit, prange
import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.world.map_grid import (
    GEO_INV_RES,
    GEO_RES,
    GEO_YAW,
    MapGrid,
    _to_grid,
    floor_int,
    ray_exact,
    ray_exact_axis,
)
from rc_sim_engine.world.track_map import TrackMapError

__all__ = ['AUTO_LUT_BYTES', 'LIDAR_MODES', 'MAX_LUT_BYTES', 'MapLidar', 'auto_stride',
           'build_lut', 'scan_map', 'scan_map_work']

FloatArray = NDArray[np.float64]
#: float64 or float32 (the scan computes in float32 either way).
RealArray = NDArray[np.floating[Any]]
LIDAR_MODES = ('lut', 'exact')
#: Largest lookup table built [bytes] (checked before allocating).
MAX_LUT_BYTES = 2 * 1024 ** 3
#: Memory budget of the automatic stride choice [bytes].
AUTO_LUT_BYTES = 256 * 1024 ** 2
#: Range field (low 15 bits) of a table entry; bit 15 = axis of the cell edge hit.
RANGE_MASK = 0x7FFF
NO_HIT = RANGE_MASK
#: Bit 15 of an entry as a number.
AXIS_BIT = 32768.0
_TWO_PI = 2.0 * math.pi


@dataclass(frozen=True)
class MapLidar:
    """Lidar geometry of one map for the kernels (pass its arrays to :func:`scan_map`).

    Attributes:
        grid: walls and skip distances.
        lut: (K, n_bins) uint16 entries (an empty (1, 1) table in exact mode).
        lut_index: (H + 2, W + 2) int32 table row of each padded cell, -1 = exact cast.
        centers: (K, 2) origin of each row in padded-grid units (u, v).
        bins: (2, n_bins) cos and sin of the bin directions in the grid frame.
        meta: (3,) ``n_bins, range step [cells], range_cap [m]``.
    """

    grid: MapGrid
    lut: NDArray[np.uint16]
    lut_index: NDArray[np.int32]
    centers: FloatArray
    bins: FloatArray
    meta: FloatArray
    mode: str

    @classmethod
    def build(cls, grid: MapGrid, *, mode: str = 'lut', range_cap: float = 30.0,
              n_bins: int = 1440, stride: int | None = None, min_clearance: float = 0.0,
              cache_dir: str | os.PathLike[str] | None = None) -> MapLidar:
        """Build (or load from ``cache_dir``) the table; ``mode='exact'`` builds none.

        ``stride``: one table row per ``stride x stride`` block of free cells (memory and build
        time / stride^2, larger position error); None: the smallest stride whose table fits
        :data:`AUTO_LUT_BYTES`.
        """
        if mode not in LIDAR_MODES:
            raise TrackMapError(f'lidar mode {mode!r}: choose {" or ".join(LIDAR_MODES)}')
        if not (math.isfinite(range_cap) and range_cap > 0):
            raise TrackMapError(f'lidar range_cap must be a finite number > 0, got {range_cap!r}')
        if not 8 <= int(n_bins) <= 65536:
            raise TrackMapError(f'lidar lookup bins must be in [8, 65536], got {n_bins!r}')
        if stride is None:
            stride = auto_stride(grid, int(n_bins), min_clearance)
        if not 1 <= int(stride) <= 16:
            raise TrackMapError(f'lidar lookup stride must be in [1, 16], got {stride!r}')
        n_bins = int(n_bins)
        angles = 2.0 * math.pi * np.arange(n_bins) / n_bins
        bins = np.ascontiguousarray(np.stack([np.cos(angles), np.sin(angles)]))
        meta = np.array([float(n_bins), range_cap / grid.resolution / (RANGE_MASK - 1),
                         range_cap])
        if mode == 'exact':
            return cls(grid, np.zeros((1, 1), np.uint16), np.full(grid.wall.shape, -1, np.int32),
                       np.zeros((1, 2)), bins, meta, mode)
        lut, index, centers = build_lut(grid, bins, meta, int(stride), min_clearance, cache_dir)
        return cls(grid, lut, index, centers, bins, meta, mode)

    @property
    def nbytes(self) -> int:
        """Memory of the table and its index [bytes]."""
        return int(self.lut.nbytes + self.lut_index.nbytes + self.centers.nbytes)


@njit(cache=True, parallel=True)
def _build_kernel(wall: NDArray[np.uint8], skip: NDArray[np.float32], centers: FloatArray,
                  cos_bin: FloatArray, sin_bin: FloatArray, t_cap: float, step_cells: float,
                  out: NDArray[np.uint16]) -> None:
    n_bins = cos_bin.shape[0]
    for k in prange(centers.shape[0]):
        u0 = centers[k, 0]
        v0 = centers[k, 1]
        for b in range(n_bins):
            t, axis = ray_exact_axis(wall, skip, u0, v0, cos_bin[b], sin_bin[b], t_cap)
            if t > t_cap:
                out[k, b] = NO_HIT
            else:
                out[k, b] = min(int(t / step_cells + 0.5), RANGE_MASK - 1) | (axis << 15)


def _cache_file(cache_dir: Path, grid: MapGrid, key: tuple[float, ...]) -> Path:
    digest = hashlib.sha256()
    digest.update(grid.wall.tobytes())
    digest.update(np.asarray(grid.wall.shape, dtype=np.int64).tobytes())
    digest.update(np.asarray(grid.geo).tobytes())
    digest.update(np.asarray(key, dtype=np.float64).tobytes())
    return cache_dir / f'lut_{digest.hexdigest()[:24]}.npz'


def _blocks(grid: MapGrid, stride: int,
            min_clearance: float) -> tuple[NDArray[np.int32], FloatArray]:
    """Row index of every padded cell and the row origins [grid units]: one row per block of
    ``stride x stride`` usable cells (origin at the block centre), and one row per usable cell
    of a block that also holds walls (origin at the cell centre), so that no free cell next to a
    wall falls back to the exact traversal."""
    wall = grid.wall
    h, w = wall.shape
    usable = (wall == 0) & (grid.skip * grid.resolution >= min_clearance)
    hb, wb = -(-h // stride), -(-w // stride)
    pad = np.zeros((hb * stride, wb * stride), dtype=bool)
    pad[:h, :w] = usable
    full = pad.reshape(hb, stride, wb, stride).all(axis=(1, 3))
    br, bc = np.nonzero(full)
    index = np.full((h, w), -1, dtype=np.int32)
    block_row = np.full((hb, wb), -1, dtype=np.int32)
    block_row[br, bc] = np.arange(len(br), dtype=np.int32)
    index[:, :] = np.repeat(np.repeat(block_row, stride, axis=0), stride, axis=1)[:h, :w]
    centers = [np.stack([(bc + 0.5) * stride, (br + 0.5) * stride], axis=1)]
    single_r, single_c = np.nonzero(usable & (index < 0))
    index[single_r, single_c] = len(br) + np.arange(len(single_r), dtype=np.int32)
    centers.append(np.stack([single_c + 0.5, single_r + 0.5], axis=1))
    return index, np.ascontiguousarray(np.concatenate(centers).astype(np.float64))


def auto_stride(grid: MapGrid, n_bins: int, min_clearance: float = 0.0) -> int:
    """Smallest stride whose table takes at most :data:`AUTO_LUT_BYTES` (at most 16)."""
    for stride in range(1, 17):
        _, centers = _blocks(grid, stride, min_clearance)
        if len(centers) * n_bins * 2 <= AUTO_LUT_BYTES:
            return stride
    return 16


def build_lut(grid: MapGrid, bins: FloatArray, meta: FloatArray, stride: int = 1,
              min_clearance: float = 0.0, cache_dir: str | os.PathLike[str] | None = None
              ) -> tuple[NDArray[np.uint16], NDArray[np.int32], FloatArray]:
    """Table (K, n_bins) uint16, row index (H + 2, W + 2) int32 and row origins (K, 2).

    Cells that are walls or closer than ``min_clearance`` [m] to one get no row. One-line
    :class:`TrackMapError` when the table would exceed :data:`MAX_LUT_BYTES`.
    """
    index, centers = _blocks(grid, stride, min_clearance)
    n_bins = bins.shape[1]
    size = len(centers) * n_bins * 2
    if size > MAX_LUT_BYTES:
        raise TrackMapError(
            f'{grid.name}: the lidar lookup table would take {size / 2**30:.1f} GiB '
            f'({len(centers):,} rows x {n_bins} bins; limit {MAX_LUT_BYTES / 2**30:.0f} GiB): '
            'use fewer bins, a larger stride or the exact lidar mode')
    path = None
    if cache_dir is not None:
        path = _cache_file(Path(cache_dir), grid, (*meta, stride, min_clearance))
        if path.is_file():
            try:
                with np.load(path) as data:
                    lut = data['lut']
                if lut.shape == (len(centers), n_bins) and lut.dtype == np.uint16:
                    return lut, index, centers
            except (OSError, ValueError, KeyError):
                pass
    lut = np.empty((len(centers), n_bins), dtype=np.uint16)
    t_cap = meta[2] / grid.resolution
    _build_kernel(grid.wall, grid.skip, centers, bins[0], bins[1], t_cap, meta[1], lut)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f'.tmp{os.getpid()}.npz')
            np.savez(tmp, lut=lut)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written is only slower next time
    return lut, index, centers


# reassociation and reciprocal math, but IEEE infinities and NaNs kept (no 'nnan'/'ninf')
@njit(cache=True, error_model='numpy',
      fastmath={'arcp', 'contract', 'afn', 'reassoc', 'nsz'})
def scan_map_work(wall: NDArray[np.uint8], skip: NDArray[np.float32], geo: FloatArray,
                  lut: NDArray[np.uint16], lut_index: NDArray[np.int32], centers: FloatArray,
                  meta: FloatArray, x: float, y: float, heading: float,
                  angle_min: float, angle_inc: float, cos_beam: RealArray,
                  sin_beam: RealArray, range_max: float, out: RealArray,
                  entry: NDArray[np.int32]) -> None:
    """:func:`scan_map` with the table's row origins ``centers`` flattened (u0, v0, u1, ...) and
    its int32 work row ``entry`` (at least as long as the fan) given: no allocation, no reshape
    per scan."""
    n = cos_beam.shape[0]
    u, v = _to_grid(geo, x, y)
    cu = floor_int(u)
    cv = floor_int(v)
    row = -1
    if 0 <= cu < wall.shape[1] and 0 <= cv < wall.shape[0]:
        row = lut_index[cv, cu]
    rel = heading - geo[GEO_YAW]  # sensor heading in the grid frame
    cr = math.cos(rel)
    sr = math.sin(rel)
    res = geo[GEO_RES]
    t_cap = range_max * geo[GEO_INV_RES]
    if row < 0:  # no table here: exact traversal
        for i in range(n):
            du = cr * cos_beam[i] - sr * sin_beam[i]
            dv = sr * cos_beam[i] + cr * sin_beam[i]
            out[i] = ray_exact(wall, skip, u, v, du, dv, t_cap) * res
        return
    # float32 from here: every pass runs 8 lanes wide (AVX2). A table entry is exact to its
    # range step (range_cap / 32766: 0.9 mm at 30 m) and float32 keeps 600 cells to 4e-5 cells;
    # passes 1 and 3 compute the same bin position f, so the bin read and its rounding angle
    # agree (errors against the exact caster: docs/racing.md)
    F = np.float32
    n_bins = int(meta[0])
    step = F(meta[1])
    scale = n_bins / _TWO_PI
    inv_scale = F(_TWO_PI / n_bins)
    fn = F(n_bins)
    ou = F(u - centers[2 * row])  # sensor offset from the row origin [cells]
    ov = F(v - centers[2 * row + 1])
    b0 = F(((rel + angle_min) * scale) % n_bins + 0.5)  # beam 0 in bin units, + 0.5: nearest
    binc = F(angle_inc * scale)
    crf = F(cr)
    srf = F(sr)
    res32 = F(res)
    t_cap32 = F(t_cap)
    one = F(1.0)
    half = F(0.5)
    axis_bit = F(AXIS_BIT)
    table = lut[row]
    # Three passes, so that the first and the last vectorise (SIMD) and the middle one is a
    # plain gather from one short stretch of memory: bin index, table entry, range. Only
    # conversions AVX2 has in vector form (float <-> int32; no int64: AVX-512 only): the beam
    # index runs as a float (exact), the entries are int32 and decoded in float arithmetic.
    fi = F(0.0)
    for i in range(n):
        f = b0 + fi * binc
        entry[i] = np.int32(f - fn * F(f >= fn))
        fi += one
    for i in range(n):
        entry[i] = table[np.uint32(entry[i])]  # unsigned index: no negative-index wrap
    fi = F(0.0)
    for i in range(n):
        q = F(entry[i])
        on_v = F(q >= axis_bit)  # the hit's edge axis (bit 15)
        rq = q - axis_bit * on_v
        rc = rq * step + F(rq == F(NO_HIT)) * F(1e9)  # sentinel: far
        cb = F(cos_beam[i])
        sb = F(sin_beam[i])
        du = crf * cb - srf * sb
        dv = srf * cb + crf * sb
        t = rc - (ou * du + ov * dv)  # first order: the offset along the beam
        # direction of the bin read: the beam's turned by the rounding angle |e| <= half a bin
        # (e < 2.2 mrad at 1440 bins; Taylor to e^3, below float32 rounding); the wrap past
        # bin n_bins does not change the fraction
        f = b0 + fi * binc
        fi += one
        e = (np.floor(f) + half - f) * inv_scale  # np.floor: a float (math.floor: an int)
        ce = one - half * e * e
        se = e * (one - e * e * F(1.0 / 6.0))
        cos_bin = du * ce - dv * se
        sin_bin = dv * ce + du * se
        # the hit lies on a cell edge u = const (axis 0) or v = const (axis 1): intersect the
        # true beam with that edge line (exact on straight walls), kept within 2 cells of the
        # first-order value (a different wall near grazing incidence); arithmetic selects and
        # min/max, no branches
        num = rc * (cos_bin + on_v * (sin_bin - cos_bin)) - (ou + on_v * (ov - ou))
        den = du + on_v * (dv - du)
        te = num / np.copysign(max(abs(den), F(1e-3)), den)
        r = max(min(max(te, t - F(2.0)), t + F(2.0)), F(0.0))
        out[i] = r * res32 if r <= t_cap32 else F(math.inf)  # the sentinel lies beyond range_cap


@njit(cache=True)
def scan_map(wall: NDArray[np.uint8], skip: NDArray[np.float32], geo: FloatArray,
             lut: NDArray[np.uint16], lut_index: NDArray[np.int32], centers: FloatArray,
             meta: FloatArray, x: float, y: float, heading: float,
             angle_min: float, angle_inc: float, cos_beam: RealArray, sin_beam: RealArray,
             range_max: float, out: RealArray) -> None:
    """Ranges [m] (``inf`` beyond ``range_max``) of the fan ``angle_min + i angle_inc`` (sensor
    frame; ``cos/sin_beam`` its tables) from a sensor at (x, y, heading) in the world."""
    scan_map_work(wall, skip, geo, lut, lut_index, centers.reshape(centers.size), meta, x, y,
                  heading, angle_min, angle_inc, cos_beam, sin_beam, range_max, out,
                  np.empty(cos_beam.shape[0], dtype=np.int32))
