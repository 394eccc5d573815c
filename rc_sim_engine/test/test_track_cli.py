"""``rcsim track`` / ``rcsim evaluate``: bag with /reference_path, metrics, plots, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rc_sim_control.evaluation import evaluate_arrays
from rc_sim_engine.cli import main


@pytest.fixture(scope='module')
def track_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp('track') / 'eight'
    code = main(['track', '--trajectory', 'circle', '--set', 'radius=1.5',
                 '--set', 'angular_speed=0.6', '--duration', '6', '--controller', 'kanayama',
                 '--world', 'flat_track', '--model', 'kinematic', '--out', str(out)])
    assert code == 0
    return out


def test_track_writes_bag_metrics_and_plot(track_bag: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    files = {p.name for p in track_bag.iterdir()}
    assert {'metadata.yaml', 'metrics.json', 'tracking.png'} <= files
    report = json.loads((track_bag / 'metrics.json').read_text())
    assert report['controller'] == 'kanayama' and report['error'] == 'time-indexed'
    meta = (track_bag / 'metadata.yaml').read_text()
    for topic in ('/odom', '/reference_path', '/cmd_vel', '/tracking_error', '/clock', '/tf'):
        assert f'name: {topic}\n' in meta


def test_evaluate_reproduces_the_track_metrics(track_bag: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads((track_bag / 'metrics.json').read_text())
    out = tmp_path / 'eval'
    assert main(['evaluate', '--bag', str(track_bag), '--out', str(out)]) == 0
    ev = json.loads((out / 'metrics.json').read_text())
    assert ev['whole_run']['rmse'] == pytest.approx(report['whole_run']['rmse'], rel=1e-6)
    assert ev['after_transient']['ise'] == pytest.approx(report['after_transient']['ise'],
                                                         rel=1e-6)
    assert (out / 'tracking.png').stat().st_size > 10_000
    assert 'RMSE' in capsys.readouterr().out


def test_evaluate_errors_are_one_line(track_bag: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['evaluate', '--bag', str(tmp_path / 'missing')]) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1
    # a bag without /reference_path: write one with the engine's own writer
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_engine.output.bags import clock_msg

    bare = tmp_path / 'bare'
    with BagWriter(bare) as bag:
        bag.write('/clock', 'rosgraph_msgs/msg/Clock', 0, clock_msg(0))
    assert main(['evaluate', '--bag', str(bare)]) == 2
    err = capsys.readouterr().err
    assert 'topic /odom not in bag' in err and err.count('\n') == 1
    out = tmp_path / 'exists'
    out.mkdir()
    assert main(['evaluate', '--bag', str(track_bag), '--out', str(out)]) == 2
    assert 'exists already' in capsys.readouterr().err


def test_track_bad_input_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    out = tmp_path / 'run'
    assert main(['track', '--set', 'amplitude=-1', '--out', str(out)]) == 2
    assert "'amplitude': must be > 0" in capsys.readouterr().err
    assert main(['track', '--set', 'kp=nan', '--out', str(out)]) == 2
    assert "'kp'" in capsys.readouterr().err
    assert main(['track', '--set', 'bogus=1', '--out', str(out)]) == 2
    assert main(['track', '--world', 'nowhere', '--out', str(out)]) == 2
    assert main(['track', '--model', 'warp', '--out', str(out)]) == 2
    assert 'unknown vehicle model' in capsys.readouterr().err
    assert main(['track', '--transient', 'nan', '--out', str(out)]) == 2
    assert main(['track', '--control-rate', '0', '--out', str(out)]) == 2
    assert '--control-rate' in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_untimed_path_gives_the_distance_to_the_path() -> None:
    """A path with all poses stamped alike (e.g. from a planner) -> cross-track error."""
    t = np.linspace(0.0, 5.0, 51)
    x, y, yaw = t.copy(), np.full_like(t, 0.1), np.zeros_like(t)
    path = (0, np.zeros(11), np.linspace(-1, 10, 11), np.zeros(11), np.zeros(11))
    ev = evaluate_arrays(t, x, y, yaw, [path], cg_to_rear_axle=0.2, transient=1.0)
    assert not ev.timed
    assert ev.metrics.rmse == pytest.approx(0.1)
    np.testing.assert_allclose(ev.ex, 0.0, atol=1e-12)


def test_replanned_paths_are_merged_by_publication_time() -> None:
    t = np.linspace(0.0, 4.0, 41)
    first = (0, t, t, np.zeros_like(t), np.zeros_like(t))
    second = (2_000_000_000, t[20:], t[20:], np.full(21, 0.5), np.zeros(21))
    ev = evaluate_arrays(t, t - 0.2, np.zeros_like(t), np.zeros_like(t), [second, first],
                         cg_to_rear_axle=0.2, transient=0.0)
    assert ev.timed
    np.testing.assert_allclose(ev.ey[t < 2.0], 0.0, atol=1e-12)
    np.testing.assert_allclose(ev.ey[t >= 2.0], -0.5, atol=1e-12)


@pytest.mark.parametrize('argv, expected', [
    (['--trajectory', 'circle', '--set', 'radiuss=2'], "did you mean 'radius'"),
    (['--set', 'radius'], 'expected KEY=VALUE'),
    (['--set', 'trajectory_type=circle'], 'use --trajectory instead'),
    (['--set', 'duration=3'], 'use --duration instead'),
    (['--trajectory', 'waypoints'], '--trajectory waypoints needs --waypoints CSV'),
    (['--waypoints', 'path.csv'], '--waypoints applies to --trajectory waypoints only'),
    (['--seed', '-1'], '--seed: must be >= 0'),
    (['--duration', '-2'], '--duration: must be a finite number > 0'),
])
def test_track_option_errors_name_the_option(argv: list[str], expected: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """UX review: errors name the option the user typed (not an internal key), with a hint."""
    assert main(['track', *argv, '--out', str(tmp_path / 'run')]) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1 and expected in err, err
    assert not list(tmp_path.iterdir())


def test_evaluate_notes_a_transient_longer_than_the_run(track_bag: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    assert main(['evaluate', '--bag', str(track_bag), '--transient', '100']) == 0
    out = capsys.readouterr().out
    assert 'whole run' in out and 'note: the run is too short' in out
