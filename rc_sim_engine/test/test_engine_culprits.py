"""Issue 28 in the engine's commands: geometry errors name the world element, the closed-loop
controller's calls are bounded before the run, and metrics with NaN are never written.

References: worlds built in the test (four walls closing a cell, an open field), so which walls
enclose the start is known by construction.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rc_sim_description.errors import DegenerateError
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.cli import main
from rc_sim_engine.world.sdf import World
from rc_sim_engine.world.start_pose import enclosure, touched_obstacle

P = load_vehicle_params()


def _box_world(boxes: dict[str, tuple[float, float, float, float]]) -> World:
    """Axis-aligned boxes name -> (cx, cy, size_x, size_y)."""
    rows = np.array([[cx, cy, 0.0, sx / 2, sy / 2] for cx, cy, sx, sy in boxes.values()])
    return World(name='w', source='test', boxes=rows, box_z=np.tile([0.0, 1.0], (len(rows), 1)),
                 box_names=tuple(boxes))


def _cell(half: float) -> World:
    t = 0.05
    return _box_world({'north': (0.0, half + t / 2, 2 * half + 2 * t, t),
                       'south': (0.0, -half - t / 2, 2 * half + 2 * t, t),
                       'east': (half + t / 2, 0.0, t, 2 * half),
                       'west': (-half - t / 2, 0.0, t, 2 * half),
                       'far away': (30.0, 30.0, 1.0, 1.0)})


def test_enclosure_names_the_walls_around_the_start() -> None:
    enc = enclosure(_cell(0.2), (0.0, 0.0))
    assert enc is not None
    assert sorted(enc.walls) == ['east', 'north', 'south', 'west']  # not 'far away'
    assert enc.length == pytest.approx(0.4, abs=0.1) and enc.width == pytest.approx(0.4, abs=0.1)
    # an open world: the free space reaches the edge of the obstacles' box
    assert enclosure(_box_world({'post': (2.0, 0.0, 0.2, 0.2)}), (0.0, 0.0)) is None
    assert enclosure(World(name='empty', source=''), (0.0, 0.0)) is None


def test_a_start_pose_inside_a_wall_names_it() -> None:
    world = _cell(1.0)
    assert touched_obstacle(world, P, (0.0, 0.0, 0.0)) is None
    assert touched_obstacle(world, P, (0.0, 1.0, 0.0)) == 'north'
    assert touched_obstacle(world, P, (0.98, 0.0, math.pi / 2)) == 'east'


def test_track_bounds_the_controller_calls(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """--control-rate 1e9 ran (clamped to one call per physics step: 48 s of Python for 30 s
    simulated), so a day of it would have taken days; now refused before the run."""
    out = tmp_path / 'out'
    assert main(['track', '--control-rate', '1e9', '--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert err == ('error: --control-rate: 1e+09 Hz exceeds the physics rate of 1000 Hz (the '
                   'controller runs at most once per step)\n')
    monkeypatch.setenv('RC_SIM_MAX_CONTROL_TICKS', '100')
    assert main(['track', '--duration', '10', '--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert '--control-rate 50 Hz over 10 s: 500 ticks exceeds the limit of 100 ticks' in err
    assert 'RC_SIM_MAX_CONTROL_TICKS' in err
    assert not out.exists()


def test_metrics_with_nan_are_never_written() -> None:
    from rc_sim_engine.cli.track import _metrics_json

    with pytest.raises(DegenerateError, match=r'm\.json: rmse_m is nan \(the evaluation '
                                              r'degenerated'):
        _metrics_json({'rmse_m': math.nan}, 'm.json')
    assert _metrics_json({'rmse_m': 0.1, 'after': None}, 'm.json').endswith('}\n')
