"""``rcsim map`` and ``rcsim run --world map.yaml``: the SDF export is valid (``ign sdf -k``) and
drives the same walls as the map; errors are one line with exit 2."""

from __future__ import annotations

import math
from pathlib import Path
import shutil
import subprocess

import numpy as np
import pytest

from rc_sim_engine.cli import main
from rc_sim_engine.world.map_grid import MapGrid, cast_grid_exact
from rc_sim_engine.world.raycast import BeamFan, cast_rays_world
from rc_sim_engine.world.sdf import load_world
from rc_sim_engine.world.track import resolve_map_path
from rc_sim_engine.world.track_map import load_map


def test_to_sdf_is_valid_and_has_the_map_walls(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / 'sdf' / 'chicane.sdf'
    assert main(['map', 'to-sdf', 'chicane_track', '--out', str(out)]) == 0
    assert 'wrote' in capsys.readouterr().out
    world = load_world(out)
    occ = load_map(resolve_map_path('chicane_track'))
    grid = MapGrid.from_map(occ)
    fan = BeamFan(-math.pi, 2 * math.pi / 360, 360)
    assert occ.spec is not None and occ.spec.start_pose is not None
    x, y, yaw = occ.spec.start_pose
    # the SDF rounds poses to 0.1 mm: the ranges agree to that
    np.testing.assert_allclose(cast_rays_world(world, x, y, yaw, fan, z=0.1),
                               cast_grid_exact(grid, x, y, yaw, fan.angles), atol=2e-4)
    from rc_sim_description.worlds import spawn_pose

    assert spawn_pose(out).x == pytest.approx(x, abs=1e-4)
    ign = shutil.which('ign')
    if ign is None:
        pytest.skip('ign not found (apt-get install ignition-tools libsdformat-dev)')
    result = subprocess.run([ign, 'sdf', '-k', str(out)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0 and 'Valid' in result.stdout, result.stdout + result.stderr


def test_info_and_centerline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['map', 'info', 'chicane_track']) == 0
    text = capsys.readouterr().out
    assert '351 x 203 cells' in text and 'centre line' in text
    out = tmp_path / 'line.csv'
    assert main(['map', 'centerline', 'chicane_track', '--out', str(out)]) == 0
    assert out.read_text().startswith('# x_m,y_m')


def test_run_on_a_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = resolve_map_path('chicane_track')
    out = tmp_path / 'run'
    assert main(['run', '--world', str(path), '--scenario', 'line', '--speed', '1.0',
                 '--duration', '2', '--out', str(out), '--no-plots']) == 0
    text = capsys.readouterr().out
    assert 'chicane_track' in text and 'collisions          0' in text
    assert (out / 'summary.yaml').is_file()


def test_bad_map_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / 'bad.yaml'
    bad.write_text('image: bad.pgm\nresolution: -1\norigin: [0, 0, 0]\nnegate: 0\n'
                   'occupied_thresh: 0.65\nfree_thresh: 0.2\n')
    assert main(['map', 'info', str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith('error:') and 'resolution' in err and '\n' not in err
    out = tmp_path / 'never'
    assert main(['run', '--world', str(bad), '--scenario', 'line', '--out', str(out)]) == 2
    assert not out.exists()
    assert main(['map', 'to-sdf', str(bad), '--out', str(tmp_path / 'x.sdf')]) == 2
    assert not (tmp_path / 'x.sdf').exists()
