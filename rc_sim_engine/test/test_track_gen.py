"""The shipped track map is what the generator writes (regenerate with
``python -m rc_sim_engine.world.track_gen --write``), and its geometry is what the design says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from rc_sim_engine.world.track import resolve_map_path
from rc_sim_engine.world.track_gen import TRACKS, render_track, write_track
from rc_sim_engine.world.track_map import load_map


def test_shipped_chicane_track_is_up_to_date(tmp_path: Path) -> None:
    shipped = resolve_map_path('chicane_track')
    fresh = write_track(TRACKS['chicane_track'], tmp_path)
    for suffix in ('.pgm', '.yaml'):
        assert shipped.with_suffix(suffix).read_bytes() == fresh.with_suffix(suffix).read_bytes()
    assert ((shipped.parent / 'chicane_track_centerline.csv').read_text()
            == (tmp_path / 'chicane_track_centerline.csv').read_text())


def test_lane_width_and_walls() -> None:
    design = TRACKS['chicane_track']
    image, origin, _ = render_track(design)
    assert set(np.unique(image)) == {0, 205, 254}
    occ = load_map(resolve_map_path('chicane_track'))
    # across the bottom straight at x = 0: free cells span the lane width (1.6 m / 5 cm = 32)
    rows, col = occ.to_cell(np.zeros(200), np.linspace(-5.0, -1.0, 200))
    column = occ.values[np.unique(rows), int(col[0])]
    assert int(np.sum(column == 0)) in (32, 33)
    assert int(np.sum(column == 100)) in (6, 7, 8)  # two walls of 0.15 m
    assert Image.open(resolve_map_path('chicane_track').with_suffix('.pgm')).mode == 'L'
    np.testing.assert_allclose(origin, occ.origin, atol=1e-9)
