"""map_server maps: pixel interpretation, frames and bad input, against hand-made images.

The expected occupancy values are worked out by hand from the rules of the ROS map_server
documentation (occ = (255 - x) / 255, or x / 255 with negate; > occupied_thresh -> 100,
< free_thresh -> 0, else -1; scale and raw modes).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image
import pytest

from rc_sim_engine.world.track_map import (
    MAX_MAP_PIXELS,
    OccupancyMap,
    TrackMapError,
    is_map_yaml,
    load_map,
)


def write_map(tmp: Path, pixels: np.ndarray, *, name: str = 'm', fmt: str = 'pgm',
              extra: str = '', resolution: float = 0.1, origin: str = '[1.0, -2.0, 0.0]',
              negate: int = 0, occ: float = 0.65, free: float = 0.196,
              mode: str | None = None) -> Path:
    mode_line = f'mode: {mode}\n' if mode else ''
    if pixels.ndim == 2:
        Image.fromarray(pixels.astype(np.uint8), mode='L').save(tmp / f'{name}.{fmt}')
    else:
        Image.fromarray(pixels.astype(np.uint8)).save(tmp / f'{name}.{fmt}')
    path = tmp / f'{name}.yaml'
    path.write_text(f'image: {name}.{fmt}\nresolution: {resolution}\norigin: {origin}\n'
                    f'negate: {negate}\noccupied_thresh: {occ}\nfree_thresh: {free}\n'
                    f'{mode_line}{extra}')
    return path


def test_trinary_thresholds_and_row_flip(tmp_path: Path) -> None:
    # image row 0 is the TOP of the map; grid row 0 is the bottom
    img = np.array([[0, 254, 205],
                    [90, 89, 255]])
    m = load_map(write_map(tmp_path, img))
    # occ = 1 - x/255: 0 -> 1.0 (100), 254 -> 0.004 (0), 205 -> 0.196 (not < 0.196: -1)
    # 90 -> 0.647 (not > 0.65: -1), 89 -> 0.651 (100), 255 -> 0 (0)
    assert m.values.tolist() == [[-1, 100, 0], [100, 0, -1]]
    assert m.resolution == 0.1 and m.origin == (1.0, -2.0, 0.0)


def test_negate_and_custom_thresholds(tmp_path: Path) -> None:
    img = np.array([[0, 100, 200, 255]])
    m = load_map(write_map(tmp_path, img, negate=1, occ=0.7, free=0.3))
    # occ = x/255: 0 -> 0 (free), 100 -> 0.392 (unknown), 200 -> 0.784 (occupied), 255 -> 1
    assert m.values.tolist() == [[0, -1, 100, 100]]


def test_scale_and_raw_modes(tmp_path: Path) -> None:
    img = np.array([[0, 128, 255, 60]])
    scale = load_map(write_map(tmp_path, img, mode='scale', name='s'))
    # 128 -> occ 0.498: rint((0.498 - 0.196) / (0.65 - 0.196) * 100) = 67; 60 -> 0.765 > 0.65
    occ128 = 1 - 128 / 255
    expected = int(np.rint((occ128 - 0.196) / (0.65 - 0.196) * 100))
    assert scale.values.tolist() == [[100, expected, 0, 100]]
    raw = load_map(write_map(tmp_path, np.array([[0, 100, 101, 255]]), mode='raw', name='r',
                             negate=1))
    assert raw.values.tolist() == [[0, 100, -1, -1]]  # value itself, 0..100 only; negate ignored


def test_rgba_alpha(tmp_path: Path) -> None:
    rgba = np.zeros((1, 3, 4), dtype=np.uint8)
    rgba[0, 0] = (255, 255, 255, 255)   # white opaque: free
    rgba[0, 1] = (255, 255, 255, 0)     # white transparent: trinary averages alpha in
    rgba[0, 2] = (0, 0, 0, 255)         # black opaque: occupied
    m = load_map(write_map(tmp_path, rgba, fmt='png', name='t'))
    # (3 * 1 + 0) / 4 = 0.75 shade -> occ 0.25: unknown
    assert m.values.tolist() == [[0, -1, 100]]
    s = load_map(write_map(tmp_path, rgba, fmt='png', name='u', mode='scale'))
    assert s.values.tolist() == [[0, -1, 100]]  # not opaque: unknown in scale mode


def test_rgb_channels_averaged(tmp_path: Path) -> None:
    rgb = np.zeros((1, 2, 3), dtype=np.uint8)
    rgb[0, 0] = (255, 0, 0)   # mean 85 -> occ 0.667: occupied
    rgb[0, 1] = (255, 255, 0)  # mean 170 -> occ 0.333: unknown
    m = load_map(write_map(tmp_path, rgb, fmt='png'))
    assert m.values.tolist() == [[100, -1]]


def test_origin_is_lower_left_corner_with_yaw(tmp_path: Path) -> None:
    img = np.full((4, 6), 254)
    m = load_map(write_map(tmp_path, img, resolution=0.5, origin='[2.0, 3.0, 0.5]'))
    x, y = m.cell_centers(np.array([0, 3]), np.array([0, 5]))
    c, s = math.cos(0.5), math.sin(0.5)
    # cell (row, col) centre = origin + R(yaw) ((col + 0.5) res, (row + 0.5) res)
    assert x[0] == pytest.approx(2.0 + c * 0.25 - s * 0.25)
    assert y[0] == pytest.approx(3.0 + s * 0.25 + c * 0.25)
    assert x[1] == pytest.approx(2.0 + c * 2.75 - s * 1.75)
    assert y[1] == pytest.approx(3.0 + s * 2.75 + c * 1.75)
    rows, cols = m.to_cell(x, y)
    assert rows.tolist() == [0, 3] and cols.tolist() == [0, 5]


def test_walls_unknown_policy() -> None:
    m = OccupancyMap(np.array([[0, 100, -1, 50]], dtype=np.int8), 0.05, (0.0, 0.0, 0.0))
    assert m.walls('occupied').tolist() == [[False, True, True, False]]
    assert m.walls('free').tolist() == [[False, True, False, False]]
    with pytest.raises(TrackMapError, match='unknown-cell policy'):
        m.walls('maybe')


def test_extension_keys(tmp_path: Path) -> None:
    path = write_map(tmp_path, np.full((3, 3), 254),
                     extra='start_pose: [0.1, 0.2, 0.3]\ncenterline: line.csv\n')
    spec = load_map(path).spec
    assert spec is not None and spec.start_pose == (0.1, 0.2, 0.3)
    assert spec.centerline == tmp_path / 'line.csv'
    assert is_map_yaml(path) and not is_map_yaml('x.sdf')


@pytest.mark.parametrize(('change', 'message'), [
    ({'resolution': 0.0}, 'resolution 0.0'),
    ({'resolution': 1e6}, 'outside'),
    ({'occ': 0.1, 'free': 0.5}, 'free_thresh < occupied_thresh'),
    ({'mode': 'fancy'}, "mode 'fancy'"),
    ({'origin': '[1, 2]'}, 'three finite numbers'),
    ({'origin': '[1, .nan, 0]'}, 'three finite numbers'),
    ({'extra': 'negate_x: 1\n'}, "unknown key 'negate_x'"),
])
def test_bad_yaml_values(tmp_path: Path, change: dict[str, object], message: str) -> None:
    path = write_map(tmp_path, np.full((3, 3), 254), **change)  # type: ignore[arg-type]
    with pytest.raises(TrackMapError, match=message) as err:
        load_map(path)
    assert '\n' not in str(err.value)


def test_missing_key_and_image(tmp_path: Path) -> None:
    (tmp_path / 'a.yaml').write_text('image: a.pgm\nresolution: 0.05\norigin: [0, 0, 0]\n'
                                     'negate: 0\noccupied_thresh: 0.65\n')
    with pytest.raises(TrackMapError, match="missing key 'free_thresh'"):
        load_map(tmp_path / 'a.yaml')
    (tmp_path / 'b.yaml').write_text('image: nothere.pgm\nresolution: 0.05\norigin: [0, 0, 0]\n'
                                     'negate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.2\n')
    with pytest.raises(TrackMapError, match='not found'):
        load_map(tmp_path / 'b.yaml')
    with pytest.raises(TrackMapError, match='not found'):
        load_map(tmp_path / 'absent.yaml')


def test_non_image_and_negative_size(tmp_path: Path) -> None:
    path = write_map(tmp_path, np.full((3, 3), 254))
    (tmp_path / 'm.pgm').write_text('this is not an image\n')
    with pytest.raises(TrackMapError, match='not a readable image') as err:
        load_map(path)
    assert '\n' not in str(err.value)
    (tmp_path / 'm.pgm').write_bytes(b'P5\n-4 3\n255\n' + bytes(12))
    with pytest.raises(TrackMapError, match='image'):
        load_map(path)


def test_size_limit_checked_before_decoding(tmp_path: Path) -> None:
    # a header claiming 6000 x 5000 pixels and no pixel data: rejected from the header alone
    path = write_map(tmp_path, np.full((3, 3), 254))
    (tmp_path / 'm.pgm').write_bytes(b'P5\n6000 5000\n255\n')
    assert MAX_MAP_PIXELS < 6000 * 5000
    with pytest.raises(TrackMapError, match='exceeds the limit'):
        load_map(path)


def test_shipped_map_loads() -> None:
    from rc_sim_engine.world.track import resolve_map_path

    m = load_map(resolve_map_path('chicane_track'))
    assert m.resolution == 0.05 and m.spec is not None and m.spec.start_pose is not None
    row, col = m.to_cell(*m.spec.start_pose[:2])
    assert m.values[int(row), int(col)] == 0
    with pytest.raises(TrackMapError, match='unknown map'):
        resolve_map_path('chicane_trak')


def test_pillow_bomb_limit_is_one_line(tmp_path: Path) -> None:
    # far above Pillow's own decompression-bomb limit: still our one-line error
    path = write_map(tmp_path, np.full((3, 3), 254))
    (tmp_path / 'm.pgm').write_bytes(b'P5\n60000 50000\n255\n')
    with pytest.raises(TrackMapError, match='exceeds the limit'):
        load_map(path)
