"""What a new user meets: placement inside the track or a refusal with a world that fits, old names
with a note, refused negative speeds, the kernel-compile message, the animation and index page."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image
import pytest
import yaml

from rc_sim_control.commands import manoeuvre
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.paths import world_path
from rc_sim_description.worlds import spawn_pose
from rc_sim_engine.cli import main
from rc_sim_engine.output.animation import MAX_FPS, MAX_FRAMES, frame_times
from rc_sim_engine.output.index_page import flatten
from rc_sim_engine.sim import warmup
from rc_sim_engine.world.sdf import World, load_world
from rc_sim_engine.world.start_pose import choose_start, free_region, predicted_path

P = load_vehicle_params()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(['run', *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_free_region_stops_at_closed_walls() -> None:
    """A square room of 4 m: inside is the seed's region, outside is not (and vice versa)."""
    walls = np.array([[0.0, 2.0, 0.0, 2.1, 0.05], [0.0, -2.0, 0.0, 2.1, 0.05],
                      [2.0, 0.0, math.pi / 2, 2.1, 0.05], [-2.0, 0.0, math.pi / 2, 2.1, 0.05]])
    room = World('room', 't', boxes=walls, box_z=np.tile([0.0, 0.3], (4, 1)),
                 box_names=tuple(f'w{i}' for i in range(4)))
    inside = free_region(room, (0.0, 0.0), (-4.0, 4.0, -4.0, 4.0))
    assert inside.contains(np.array([0.0, 1.5, -1.5]), np.array([0.0, 1.5, 0.3])).all()
    assert not inside.contains(np.array([3.0, 0.0, 2.0]), np.array([0.0, 3.5, 0.0])).any()
    outside = free_region(room, (3.0, 3.0), (-4.0, 4.0, -4.0, 4.0))
    assert outside.contains(np.array([-3.5]), np.array([0.0])).all()
    assert not outside.contains(np.array([0.0]), np.array([0.0])).any()


def test_a_line_on_basic_track_is_moved_inside_the_outer_wall() -> None:
    """Before, the 5 m line was moved outside the oval; now it starts in the lane."""
    path = world_path('basic_track')
    world, spawn = load_world(path), spawn_pose(path)
    seq = manoeuvre('line', P)
    choice = choose_start(world, P, seq, (spawn.x, spawn.y, spawn.yaw))
    assert choice.fits and choice.moved and choice.clearance >= 0.05
    x, y, _ = predicted_path(seq, P)
    c, s = math.cos(choice.yaw), math.sin(choice.yaw)
    wx, wy = choice.x + c * x - s * y, choice.y + s * x + c * y
    x0, x1, y0, y1 = world.bounds(0.0)  # the outer wall's extent
    assert np.all((wx > x0) & (wx < x1) & (wy > y0) & (wy < y1))
    region = free_region(world, (spawn.x, spawn.y), world.bounds(1.0))
    assert region.contains(wx, wy).all()


def test_a_manoeuvre_that_fits_nowhere_is_refused_with_a_world_that_fits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, '--scenario', 'circle_left', '--out', str(tmp_path / 'c'))
    assert code == 2 and err.count('\n') == 1
    assert "scenario 'circle_left' does not fit in basic_track" in err
    world = err.split('try --world ')[1].split()[0]
    code, out, _ = run(capsys, '--world', world, '--scenario', 'circle_left', '--no-plots',
                       '--out', str(tmp_path / 'there'))
    assert code == 0 and 'collisions          0' in out
    assert [p.name for p in tmp_path.iterdir()] == ['there']


def test_negative_speed_and_radius_are_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for option, value in (('--speed', '-1'), ('--speed', '0'), ('--radius', '-2')):
        code, _, err = run(capsys, '--world', 'flat_track', '--scenario', 'line', option, value,
                           '--out', str(tmp_path / 'o'))
        assert code == 2 and f'{option}: must be a finite number > 0' in err
    assert not list(tmp_path.iterdir())


def test_old_names_still_work_with_a_note(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, '--world', 'flat_track', '--scenario', 'figure_eight',
                       '--duration', '1', '--no-plots', '--out', str(tmp_path / 'r'))
    assert code == 0 and "'figure_eight' is now called 'two_circles'" in err
    summary = yaml.safe_load((tmp_path / 'r' / 'summary.yaml').read_text())
    assert summary['scenario'] == 'two_circles'
    code = main(['track', '--trajectory', 'figure_eight', '--duration', '1', '--no-plots',
                 '--model', 'kinematic', '--out', str(tmp_path / 't')])
    assert code == 0 and "'figure_eight' is now called 'lemniscate'" in capsys.readouterr().err


def test_a_compile_is_announced_and_kept_out_of_the_real_time_factor(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With the stamp missing the command compiles (here: loads) the kernels first, says so, and
    the whole-command figure excludes that time."""
    monkeypatch.setattr(warmup, '_stamp_path', lambda: tmp_path / 'stamp')
    code, out, err = run(capsys, '--world', 'flat_track', '--scenario', 'line', '--duration',
                         '0.5', '--no-plots', '--out', str(tmp_path / 'r'))
    assert code == 0 and warmup.MESSAGE in err
    assert 'without the one-time kernel compile' in out
    assert warmup.kernels_compiled()
    code, out, err = run(capsys, '--world', 'flat_track', '--scenario', 'line', '--duration',
                         '0.5', '--no-plots', '--out', str(tmp_path / 'again'))
    assert code == 0 and warmup.MESSAGE not in err and 'kernel compile' not in out


def test_ensure_compiled_compiles_once_per_source_state(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(warmup, '_stamp_path', lambda: tmp_path / 'stamp')
    monkeypatch.setattr(warmup, 'compile_kernels', lambda *a, **k: calls.append('compile') or 1.5)
    assert warmup.ensure_compiled(calls.append) >= 0.0
    assert calls[0].startswith(warmup.MESSAGE) and calls[1:] == ['compile']
    assert warmup.ensure_compiled(calls.append) == 0.0 and len(calls) == 2
    (tmp_path / 'stamp').write_text('a digest of other sources')
    warmup.ensure_compiled(calls.append)
    assert len(calls) == 4


def test_frame_times_are_bounded() -> None:
    t, fps = frame_times(10.0)
    assert fps == MAX_FPS and len(t) == 101 and t[-1] == 10.0  # real time
    t, fps = frame_times(3600.0)
    assert len(t) == MAX_FRAMES and t[0] == 0.0 and t[-1] == 3600.0


def test_animation_and_index_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / 'lap'
    code, text, _ = run(capsys, '--world', 'basic_track', '--scenario', 'basic_track_lap',
                        '--duration', '6', '--animate', '--out', str(out))
    assert code == 0 and str(out / 'index.html') in text
    gif = Image.open(out / 'animation.gif')
    assert gif.n_frames == 61 and gif.info['duration'] == 1000 // MAX_FPS
    page = (out / 'index.html').read_text()
    for name in ('animation.gif', 'trajectory.png', 'signals.png', 'summary.yaml', 'lap.db3'):
        assert f'"{name}"' in page
    assert page.index('trajectory.png') < page.index('animation.gif')  # the path first
    assert '<td>collisions[0]</td>' not in page and '<td>scenario</td><td>basic_track_lap' in page
    assert not list(tmp_path.glob('.*'))


def test_flatten_joins_nested_keys() -> None:
    rows = flatten({'a': {'b': 1.0, 'c': [1, 2]}, 'd': [{'t': 0.5}], 'e': 'x'})
    assert rows == [('a.b', '1'), ('a.c', '1, 2'), ('d[0].t', '0.5'), ('e', 'x')]
