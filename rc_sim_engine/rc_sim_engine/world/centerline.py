"""Closed centre lines of race tracks: CSV files, extraction from a map, arc-length progress.

* CSV (:func:`load_centerline_csv`): one point per line, ``,`` or ``;`` separated, ``#`` comment
  lines skipped. A comment header naming ``x_m`` and ``y_m`` (the F1TENTH racetrack centre-line
  ``# x_m,y_m,w_tr_right_m,w_tr_left_m`` and raceline ``# s_m; x_m; y_m; psi_rad; ...`` files)
  selects those columns; otherwise the first two columns are x, y [m]. The line is closed (a last
  point equal to the first is dropped).
* Extraction (:func:`extract_centerline`): the free region around the start is a ring between an
  outer wall set (touching the image border) and an inner island (the largest enclosed wall
  set). The centre line is the zero level set of ``d_in - d_out``, the difference of the
  Euclidean distances to the two wall sets (points equidistant from both borders), traced by
  marching squares (``contourpy``), then resampled every ``spacing`` metres and smoothed by a
  periodic moving average over ``smooth`` metres. Smaller enclosed wall sets (obstacles on the
  track) do not bend it.
* Direction and origin (:meth:`CenterLine.oriented`): along the start heading when a start pose is
  given (s = 0 at its projection), else counter-clockwise from the middle of the straightest
  stretch.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.world.track_map import OccupancyMap, TrackMapError

__all__ = ['CenterLine', 'extract_centerline', 'load_centerline_csv', 'write_centerline_csv']

FloatArray = NDArray[np.float64]
MAX_CENTERLINE_POINTS = 1_000_000


@dataclass(frozen=True)
class CenterLine:
    """A closed polyline: vertices ``xy`` (P, 2) [m], the segment k runs from vertex k to k + 1
    (the last one back to vertex 0); ``s`` (P + 1,) arc length at each vertex, ``s[P]`` =
    length."""

    xy: FloatArray
    s: FloatArray

    @classmethod
    def from_points(cls, xy: FloatArray, source: str = 'centre line') -> CenterLine:
        """Close and validate a (P, 2) point list (P >= 3, finite, no zero-length loop)."""
        pts = np.asarray(xy, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
            raise TrackMapError(f'{source}: need finite (x, y) points')
        if len(pts) > 1 and np.allclose(pts[0], pts[-1]):
            pts = pts[:-1]
        keep = np.ones(len(pts), dtype=bool)
        keep[1:] = np.any(np.diff(pts, axis=0) != 0.0, axis=1)  # drop repeated points
        pts = pts[keep]
        if len(pts) < 3:
            raise TrackMapError(f'{source}: a closed centre line needs at least 3 points, '
                                f'got {len(pts)}')
        seg = np.linalg.norm(np.roll(pts, -1, axis=0) - pts, axis=1)
        s = np.concatenate([[0.0], np.cumsum(seg)])
        return cls(np.ascontiguousarray(pts), s)

    @property
    def length(self) -> float:
        """Lap length [m]."""
        return float(self.s[-1])

    @property
    def segments(self) -> FloatArray:
        """(P, 4) rows ``x0, y0, x1, y1``."""
        nxt = np.roll(self.xy, -1, axis=0)
        return np.concatenate([self.xy, nxt], axis=1)

    def pose_at(self, s: float | FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Point and tangent heading at arc length(s) ``s`` (taken modulo the length)."""
        sq = np.mod(np.asarray(s, dtype=np.float64), self.length)
        k = np.clip(np.searchsorted(self.s, sq, side='right') - 1, 0, len(self.xy) - 1)
        p0 = self.xy[k]
        p1 = self.xy[(k + 1) % len(self.xy)]
        seg = self.s[k + 1] - self.s[k]
        w = ((sq - self.s[k]) / seg)[..., None]
        p = p0 + w * (p1 - p0)
        yaw = np.arctan2(p1[..., 1] - p0[..., 1], p1[..., 0] - p0[..., 0])
        return p[..., 0], p[..., 1], yaw

    def project(self, x: float | FloatArray,
                y: float | FloatArray) -> tuple[FloatArray, FloatArray]:
        """Arc length and signed lateral offset (+ left) of points, by brute force over all
        segments (setup and tests; the kernels use a per-cell index)."""
        px = np.atleast_1d(np.asarray(x, dtype=np.float64))[:, None]
        py = np.atleast_1d(np.asarray(y, dtype=np.float64))[:, None]
        a = self.xy
        e = np.roll(a, -1, axis=0) - a
        e2 = np.sum(e * e, axis=1)
        w = np.clip(((px - a[:, 0]) * e[:, 0] + (py - a[:, 1]) * e[:, 1]) / e2, 0.0, 1.0)
        qx = a[:, 0] + w * e[:, 0]
        qy = a[:, 1] + w * e[:, 1]
        d2 = (px - qx) ** 2 + (py - qy) ** 2
        k = np.argmin(d2, axis=1)
        rows = np.arange(len(k))
        s = self.s[k] + w[rows, k] * np.sqrt(e2[k])
        cross = e[k, 0] * (py[:, 0] - qy[rows, k]) - e[k, 1] * (px[:, 0] - qx[rows, k])
        lateral = np.sign(cross) * np.sqrt(d2[rows, k])
        return s, lateral

    def resampled(self, spacing: float) -> CenterLine:
        """Evenly spaced vertices about ``spacing`` [m] apart."""
        n = max(math.ceil(self.length / spacing), 3)
        x, y, _ = self.pose_at(np.linspace(0.0, self.length, n, endpoint=False))
        return CenterLine.from_points(np.stack([x, y], axis=1))

    def smoothed(self, window: float) -> CenterLine:
        """Periodic moving average over ``window`` [m] (evenly spaced vertices assumed)."""
        mean_seg = self.length / len(self.xy)
        k = int(window / mean_seg) // 2
        if k < 1:
            return self
        kernel = np.ones(2 * k + 1) / (2 * k + 1)
        pad = np.concatenate([self.xy[-k:], self.xy, self.xy[:k]])
        xs = np.convolve(pad[:, 0], kernel, mode='valid')
        ys = np.convolve(pad[:, 1], kernel, mode='valid')
        return CenterLine.from_points(np.stack([xs, ys], axis=1))

    def signed_area(self) -> float:
        """Shoelace area [m^2]: > 0 for a counter-clockwise loop."""
        x, y = self.xy[:, 0], self.xy[:, 1]
        return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))

    def oriented(self, start: tuple[float, float, float] | None = None) -> CenterLine:
        """Copy running along the start heading with s = 0 at the start's projection; without a
        start: counter-clockwise from the middle of the straightest 4 m stretch."""
        xy = self.xy
        if start is None:
            if self.signed_area() < 0:
                xy = xy[::-1]
            line = CenterLine.from_points(xy)
            _, _, yaw = line.pose_at(line.s[:-1])
            turn = np.abs(np.angle(np.exp(1j * (np.roll(yaw, -1) - yaw))))
            k = max(round(2.0 / (line.length / len(yaw))), 1)
            window = np.convolve(np.concatenate([turn[-k:], turn, turn[:k]]),
                                 np.ones(2 * k + 1), mode='valid')
            i0 = int(np.argmin(window))
            return CenterLine.from_points(np.roll(line.xy, -i0, axis=0))
        sx, sy, syaw = start
        s0, _ = self.project(sx, sy)
        _, _, tangent = self.pose_at(s0)
        if math.cos(float(tangent[0]) - syaw) < 0:
            xy = xy[::-1]
        line = CenterLine.from_points(xy)
        s0, _ = line.project(sx, sy)
        px, py, _ = line.pose_at(s0)
        k = int(np.searchsorted(line.s, s0[0], side='right') - 1)
        pts = np.concatenate([[[px[0], py[0]]], line.xy[k + 1:], line.xy[:k + 1]])
        return CenterLine.from_points(pts)


def load_centerline_csv(path: str | os.PathLike[str]) -> CenterLine:
    """Read a centre-line CSV (see module doc); one-line :class:`TrackMapError` on bad input."""
    p = Path(path)
    try:
        text = p.read_text(encoding='utf-8')
    except FileNotFoundError:
        raise TrackMapError(f'centre line {str(p)!r} not found') from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TrackMapError(f'{p}: cannot read centre line ({exc})') from None
    cols = (0, 1)
    rows: list[tuple[float, float]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        sep = ';' if ';' in stripped else ','
        if stripped.startswith('#'):
            names = [c.strip().lstrip('#').strip() for c in stripped.split(sep)]
            if 'x_m' in names and 'y_m' in names:
                cols = (names.index('x_m'), names.index('y_m'))
            continue
        fields = [f.strip() for f in stripped.split(sep)]
        try:
            x, y = float(fields[cols[0]]), float(fields[cols[1]])
        except (ValueError, IndexError):
            raise TrackMapError(f'{p}:{n}: expected numbers in columns {cols[0] + 1} and '
                                f'{cols[1] + 1}, got {stripped[:60]!r}') from None
        if not (math.isfinite(x) and math.isfinite(y)):
            raise TrackMapError(f'{p}:{n}: non-finite point {stripped[:60]!r}')
        rows.append((x, y))
        if len(rows) > MAX_CENTERLINE_POINTS:
            raise TrackMapError(f'{p}: more than {MAX_CENTERLINE_POINTS:,} points')
    return CenterLine.from_points(np.array(rows).reshape(-1, 2), source=str(p))


def write_centerline_csv(line: CenterLine) -> str:
    """CSV text of a centre line (``# x_m,y_m`` header)."""
    body = '\n'.join(f'{x:.4f},{y:.4f}' for x, y in line.xy)
    return f'# x_m,y_m\n{body}\n'


def extract_centerline(occ: OccupancyMap, *, unknown: str = 'occupied',
                       start: tuple[float, float, float] | None = None, spacing: float = 0.1,
                       smooth: float = 0.5) -> CenterLine:
    """Centre line of the ring-shaped free region around ``start`` (see module doc)."""
    import contourpy
    from scipy import ndimage

    wall = occ.walls(unknown)
    free_labels, n_free = ndimage.label(~wall)
    if n_free == 0:
        raise TrackMapError(f'{occ.name}: the map has no free cell')
    label = 0
    if start is not None:
        row, col = occ.to_cell(start[0], start[1])
        h, w = occ.shape
        if 0 <= row < h and 0 <= col < w:
            label = int(free_labels[row, col])
        if label == 0:
            raise TrackMapError(f'{occ.name}: start pose ({start[0]:g}, {start[1]:g}) is not on '
                                'a free cell')
    else:
        label = int(np.argmax(np.bincount(free_labels.ravel())[1:])) + 1
    track = free_labels == label
    rest, n_rest = ndimage.label(~track, structure=np.ones((3, 3)))
    border = set(np.unique(np.concatenate([rest[0], rest[-1], rest[:, 0], rest[:, -1]])))
    border.discard(0)
    sizes = np.bincount(rest.ravel(), minlength=n_rest + 1)
    holes = [k for k in range(1, n_rest + 1) if k not in border]
    if not holes:
        raise TrackMapError(f'{occ.name}: cannot extract a centre line: the free space around '
                            'the start is not a closed track (no inner island); give a '
                            '"centerline:" CSV in the map YAML')
    inner = max(holes, key=lambda k: sizes[k])
    outer = np.isin(rest, list(border)) if border else np.zeros_like(track)
    if not outer.any():  # the track touches the image border: the outside is the outer wall
        outer = np.zeros((track.shape[0] + 2, track.shape[1] + 2), dtype=bool)
        outer[[0, -1], :] = True
        outer[:, [0, -1]] = True
        d_out = ndimage.distance_transform_edt(~outer)[1:-1, 1:-1]
    else:
        d_out = ndimage.distance_transform_edt(~outer)
    d_in = ndimage.distance_transform_edt(rest != inner)
    field = d_in - d_out
    gen = contourpy.contour_generator(z=field, line_type=contourpy.LineType.Separate)
    lines = [np.asarray(ln, dtype=np.float64) for ln in gen.lines(0.0)
             if ln is not None and len(ln) >= 4]
    if not lines:
        raise TrackMapError(f'{occ.name}: cannot extract a centre line (no level set found)')
    best = max(lines, key=lambda ln: float(np.sum(np.linalg.norm(np.diff(ln, axis=0), axis=1))))
    cols, rows = best[:, 0], best[:, 1]  # contour coordinates are cell indices (centres)
    ox, oy, yaw = occ.origin
    u = (cols + 0.5) * occ.resolution
    v = (rows + 0.5) * occ.resolution
    c, s = math.cos(yaw), math.sin(yaw)
    xy = np.stack([ox + c * u - s * v, oy + s * u + c * v], axis=1)
    line = CenterLine.from_points(xy, source=f'{occ.name} centre line')
    line = line.resampled(spacing).smoothed(smooth)
    return line.oriented(start)
