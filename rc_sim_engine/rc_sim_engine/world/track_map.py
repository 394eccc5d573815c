"""ROS ``map_server`` occupancy maps (YAML + PGM/PNG image) read without ROS.

The YAML keys and the pixel interpretation follow ROS 2 ``nav2_map_server`` (``map_io``) and the
ROS 1 ``map_server`` documentation:

* ``image`` (path, relative to the YAML file), ``resolution`` [m/pixel], ``origin`` ``[x, y, yaw]``
  = the 2D pose of the LOWER-LEFT pixel (its lower-left corner) in the map frame,
  ``occupied_thresh``, ``free_thresh``, ``negate`` (0/1 or a boolean), optional ``mode``
  (``trinary`` default, ``scale``, ``raw``).
* ``shade`` = mean of the colour channels scaled to [0, 1] (in ``trinary`` mode the alpha channel,
  as opacity, is averaged in too); ``occ = shade`` if negate else ``1 - shade``.
* trinary: ``occ > occupied_thresh`` -> 100 (occupied), ``occ < free_thresh`` -> 0 (free), else -1
  (unknown); scale: not fully opaque -> -1, the same two thresholds, else
  ``rint((occ - free) / (occupied - free) * 100)``; raw: ``round(255 shade)`` when in
  [0, 100], else -1 (``negate`` is ignored).
* Image rows grow downwards, map y grows upwards: grid row ``i`` (from the bottom) is image row
  ``height - 1 - i``.

A cell is a WALL when its occupancy is 100; unknown cells (-1) are walls by default
(``unknown='occupied'``: a car never drives into unmapped space) or free (``unknown='free'``).
Cells outside the image count as unknown. Two optional keys, ignored by ``map_server``, give a
track its start pose and centre line: ``start_pose: [x, y, yaw]`` (base_link) and
``centerline: file.csv`` (see :mod:`rc_sim_engine.world.centerline`).

Size limits are checked from the image header before any pixel is decoded: at most
:data:`MAX_MAP_PIXELS` pixels, a resolution in [:data:`MIN_RESOLUTION`, :data:`MAX_RESOLUTION`]
m/pixel and an extent of at most :data:`MAX_EXTENT` m. Every problem raises a one-line
:class:`TrackMapError`.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import os
from pathlib import Path
from typing import Any
import warnings

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError

__all__ = ['MAP_MODES', 'MAX_EXTENT', 'MAX_MAP_PIXELS', 'MAX_RESOLUTION', 'MIN_RESOLUTION',
           'UNKNOWN_POLICIES', 'MapSpec', 'OccupancyMap', 'TrackMapError', 'is_map_yaml',
           'load_map', 'occupancy_from_image', 'read_map_spec']

MAP_MODES = ('trinary', 'scale', 'raw')
UNKNOWN_POLICIES = ('occupied', 'free')
#: Largest image accepted [pixels] (25 M, e.g. 5000 x 5000; 150 m x 110 m at 5 cm is 6.6 M).
MAX_MAP_PIXELS = 25_000_000
#: Resolution bounds [m/pixel].
MIN_RESOLUTION = 1e-3
MAX_RESOLUTION = 1.0
#: Largest map side [m].
MAX_EXTENT = 10_000.0
_KNOWN_KEYS = ('image', 'resolution', 'origin', 'occupied_thresh', 'free_thresh', 'negate',
               'mode', 'start_pose', 'centerline')


class TrackMapError(ConfigError):
    """A map YAML or image is missing, malformed or outside the documented limits."""


@dataclass(frozen=True)
class MapSpec:
    """The YAML metadata of a map (``map_server`` keys plus the two rc-sim extensions)."""

    yaml_path: Path
    image: Path
    resolution: float
    origin: tuple[float, float, float]
    occupied_thresh: float
    free_thresh: float
    negate: bool
    mode: str = 'trinary'
    start_pose: tuple[float, float, float] | None = None
    centerline: Path | None = None


@dataclass(frozen=True)
class OccupancyMap:
    """An occupancy grid as ``nav_msgs/OccupancyGrid`` holds it, row 0 at the BOTTOM.

    Attributes:
        values: (H, W) int8 occupancy: 0 free ... 100 occupied, -1 unknown.
        resolution: cell size [m].
        origin: pose (x, y, yaw) of the lower-left corner of cell (0, 0) in the map frame.
        spec: the YAML it came from (None for grids built in code).
    """

    values: NDArray[np.int8]
    resolution: float
    origin: tuple[float, float, float]
    name: str = 'map'
    spec: MapSpec | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """(rows H, columns W)."""
        return (int(self.values.shape[0]), int(self.values.shape[1]))

    def walls(self, unknown: str = 'occupied') -> NDArray[np.bool_]:
        """(H, W) wall mask: occupancy 100, plus unknown cells when ``unknown='occupied'``."""
        check_unknown_policy(unknown)
        wall = self.values >= 100
        if unknown == 'occupied':
            wall |= self.values < 0
        return wall

    def cell_centers(self, rows: NDArray[np.int64],
                     cols: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """World (x, y) of cell centres (row from the bottom, column)."""
        ox, oy, yaw = self.origin
        u = (np.asarray(cols) + 0.5) * self.resolution
        v = (np.asarray(rows) + 0.5) * self.resolution
        c, s = math.cos(yaw), math.sin(yaw)
        return ox + c * u - s * v, oy + s * u + c * v

    def to_cell(self, x: NDArray[np.float64] | float,
                y: NDArray[np.float64] | float) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(row, col) of the cells holding world points (may lie outside the grid)."""
        ox, oy, yaw = self.origin
        c, s = math.cos(yaw), math.sin(yaw)
        dx = np.asarray(x, dtype=np.float64) - ox
        dy = np.asarray(y, dtype=np.float64) - oy
        u = c * dx + s * dy
        v = -s * dx + c * dy
        return (np.floor(v / self.resolution).astype(np.int64),
                np.floor(u / self.resolution).astype(np.int64))


def check_unknown_policy(unknown: str) -> str:
    """Validate the treatment of unknown cells (one-line error)."""
    if unknown not in UNKNOWN_POLICIES:
        raise TrackMapError(f'unknown-cell policy {unknown!r}: choose '
                            f'{" or ".join(UNKNOWN_POLICIES)}')
    return unknown


def is_map_yaml(world: str | os.PathLike[str]) -> bool:
    """True when a ``--world`` argument names a map YAML (``.yaml``/``.yml``), not an SDF."""
    return Path(world).suffix.lower() in ('.yaml', '.yml')


# --------------------------------------------------------------------------- YAML
def _number(doc: dict[str, Any], key: str, source: Path) -> float:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TrackMapError(f'{source}: {key!r} must be a number, got {value!r}')
    if not math.isfinite(value):
        raise TrackMapError(f'{source}: {key!r} must be finite, got {value!r}')
    return float(value)


def _pose(value: Any, key: str, source: Path) -> tuple[float, float, float]:
    if (not isinstance(value, (list, tuple)) or len(value) != 3
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
            or not all(math.isfinite(v) for v in value)):
        raise TrackMapError(f'{source}: {key!r} must be three finite numbers [x, y, yaw], '
                            f'got {value!r}')
    return (float(value[0]), float(value[1]), float(value[2]))


def read_map_spec(path: str | os.PathLike[str]) -> MapSpec:
    """Parse and validate a map YAML (the image is not opened)."""
    from rc_sim_description.yamlio import did_you_mean, read_yaml

    source = Path(path)
    doc = read_yaml(source, error=TrackMapError, label='map ')
    if not isinstance(doc, dict):
        raise TrackMapError(f'{source}: a map YAML must be a mapping with image, resolution, '
                            f'origin, ... (got {type(doc).__name__})')
    for key in ('image', 'resolution', 'origin', 'occupied_thresh', 'free_thresh', 'negate'):
        if key not in doc:
            hint = did_you_mean(key, [str(k) for k in doc])
            raise TrackMapError(f'{source}: missing key {key!r}{hint}')
    unknown_keys = [str(k) for k in doc if k not in _KNOWN_KEYS]
    if unknown_keys:
        key = unknown_keys[0]
        raise TrackMapError(f'{source}: unknown key {key!r}{did_you_mean(key, _KNOWN_KEYS)}')
    image = doc['image']
    if not isinstance(image, str) or not image.strip():
        raise TrackMapError(f'{source}: "image" must be a file name, got {image!r}')
    res = _number(doc, 'resolution', source)
    if not MIN_RESOLUTION <= res <= MAX_RESOLUTION:
        raise TrackMapError(f'{source}: resolution {res!r} m/pixel is outside '
                            f'[{MIN_RESOLUTION}, {MAX_RESOLUTION}]')
    occ = _number(doc, 'occupied_thresh', source)
    free = _number(doc, 'free_thresh', source)
    if not 0.0 <= free < occ <= 1.0:
        raise TrackMapError(f'{source}: need 0 <= free_thresh < occupied_thresh <= 1, got '
                            f'free_thresh={free}, occupied_thresh={occ}')
    negate = doc['negate']
    if negate not in (0, 1, True, False):
        raise TrackMapError(f'{source}: "negate" must be 0, 1, true or false, got {negate!r}')
    mode = doc.get('mode', 'trinary')
    if mode not in MAP_MODES:
        raise TrackMapError(f'{source}: mode {mode!r}{did_you_mean(str(mode), MAP_MODES)} is '
                            f'not one of {", ".join(MAP_MODES)}')
    start = doc.get('start_pose')
    centerline = doc.get('centerline')
    if centerline is not None and (not isinstance(centerline, str) or not centerline.strip()):
        raise TrackMapError(f'{source}: "centerline" must be a CSV file name, got {centerline!r}')
    return MapSpec(
        yaml_path=source, image=source.parent / image, resolution=res,
        origin=_pose(doc['origin'], 'origin', source), occupied_thresh=occ, free_thresh=free,
        negate=bool(negate), mode=str(mode),
        start_pose=None if start is None else _pose(start, 'start_pose', source),
        centerline=None if centerline is None else source.parent / centerline)


# --------------------------------------------------------------------------- image
def _read_pixels(spec: MapSpec) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """Shade (mean of the colour channels) and alpha (opacity) in [0, 1], image row order."""
    from PIL import Image, UnidentifiedImageError

    path = spec.image
    if not path.is_file():
        raise TrackMapError(f'{spec.yaml_path}: image {str(path)!r} not found')
    try:
        with warnings.catch_warnings():  # our own limit is below Pillow's bomb warning
            warnings.simplefilter('ignore', Image.DecompressionBombWarning)
            im = Image.open(path)
        with im:
            width, height = im.size
            if width < 1 or height < 1:
                raise TrackMapError(f'{path}: image has no pixels ({width} x {height})')
            if width * height > MAX_MAP_PIXELS:
                raise TrackMapError(f'{path}: {width} x {height} pixels exceeds the limit of '
                                    f'{MAX_MAP_PIXELS:,} pixels')
            extent = max(width, height) * spec.resolution
            if extent > MAX_EXTENT:
                raise TrackMapError(f'{path}: map side of {extent:.0f} m exceeds '
                                    f'{MAX_EXTENT:.0f} m')
            im.load()
            return _shade_alpha(im)
    except Image.DecompressionBombError:
        raise TrackMapError(f'{path}: image exceeds the limit of {MAX_MAP_PIXELS:,} pixels'
                            ) from None
    except (UnidentifiedImageError, SyntaxError, ValueError) as exc:
        raise TrackMapError(f'{path}: not a readable image ({exc})') from None
    except OSError as exc:
        raise TrackMapError(f'{path}: cannot read image ({exc})') from None


def _shade_alpha(im: Any) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    mode = im.mode
    if mode in ('I;16', 'I;16B', 'I;16L', 'I', 'F'):
        arr = np.asarray(im, dtype=np.float64)
        top = 65535.0 if mode.startswith('I;16') or (mode == 'I' and arr.max() > 255) else 255.0
        return np.clip(arr / top, 0.0, 1.0), None
    if mode == 'P':
        im = im.convert('RGBA')
        mode = 'RGBA'
    if mode in ('1', 'L'):
        return np.asarray(im.convert('L'), dtype=np.float64) / 255.0, None
    if mode == 'LA':
        arr = np.asarray(im, dtype=np.float64) / 255.0
        return arr[..., 0], arr[..., 1]
    if mode not in ('RGB', 'RGBA'):
        im = im.convert('RGBA')
        mode = 'RGBA'
    arr = np.asarray(im, dtype=np.float64) / 255.0
    shade = arr[..., :3].mean(axis=-1)
    return (shade, arr[..., 3]) if mode == 'RGBA' else (shade, None)


def occupancy_from_image(shade: NDArray[np.float64], alpha: NDArray[np.float64] | None, *,
                         negate: bool, occupied_thresh: float, free_thresh: float,
                         mode: str = 'trinary') -> NDArray[np.int8]:
    """``OccupancyGrid`` values (H, W) int8, row 0 at the bottom, from image-order pixels.

    ``shade`` and ``alpha`` (opacity, 1 = opaque) are in [0, 1]; the rules are those of the module
    docstring (``nav2_map_server`` ``loadMapFromFile``).
    """
    if mode not in MAP_MODES:
        raise TrackMapError(f'map mode {mode!r} is not one of {", ".join(MAP_MODES)}')
    shade = np.asarray(shade, dtype=np.float64)
    if mode == 'trinary' and alpha is not None:
        shade = (3.0 * shade + alpha) / 4.0  # alpha averaged in as a fourth channel
    occ = shade if negate else 1.0 - shade
    out = np.full(shade.shape, -1, dtype=np.int8)
    if mode == 'raw':
        value = np.round(shade * 255.0)
        inside = (value >= 0) & (value <= 100)
        out[inside] = value[inside].astype(np.int8)
    else:
        out[occ > occupied_thresh] = 100
        out[occ < free_thresh] = 0
        if mode == 'scale':
            between = (occ <= occupied_thresh) & (occ >= free_thresh)
            scaled = np.rint((occ - free_thresh) / (occupied_thresh - free_thresh) * 100.0)
            out[between] = scaled[between].astype(np.int8)
            if alpha is not None:
                out[alpha < 1.0] = -1
    return np.ascontiguousarray(out[::-1])


def load_map(path: str | os.PathLike[str]) -> OccupancyMap:
    """Read a ``map_server`` YAML and its image into an :class:`OccupancyMap`."""
    spec = read_map_spec(path)
    shade, alpha = _read_pixels(spec)
    values = occupancy_from_image(shade, alpha, negate=spec.negate,
                                  occupied_thresh=spec.occupied_thresh,
                                  free_thresh=spec.free_thresh, mode=spec.mode)
    return OccupancyMap(values, spec.resolution, spec.origin, name=spec.yaml_path.stem,
                        spec=spec)
