"""``rcsim run`` end to end, and its one-line errors (exit 2, nothing left behind)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rc_sim_description.bags import open_bag, read_topic, require_topics
from rc_sim_engine.cli import main

EXPECTED = ['/clock', '/cmd_vel', '/steering_angle', '/rear_wheel_speed', '/joint_states', '/odom',
            '/imu', '/scan', '/tf']


def run(*args: str) -> int:
    return main(['run', *args])


def test_run_writes_bag_plots_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    out = tmp_path / 'eight'
    assert run('--world', 'basic_track', '--scenario', 'basic_track_lap', '--duration', '4',
               '--out', str(out), '--lidar-errors', 'hokuyo_ust10lx', '--seed', '2') == 0
    text = capsys.readouterr().out
    assert 'distance' in text and 'collisions          0' in text and 'real-time factor' in text
    assert {'trajectory.png', 'signals.png', 'summary.yaml', 'metadata.yaml',
            'eight.db3', 'index.html'} == {p.name for p in out.iterdir()}
    assert (out / 'trajectory.png').read_bytes()[:4] == b'\x89PNG'
    with open_bag(out) as reader:
        require_topics(reader, [*EXPECTED, '/scan_raw'], out)
        t_clock, _ = read_topic(reader, '/clock')
    assert t_clock[-1] == 4_000_000_000
    # replay the recorded /cmd_vel (mode of the lap: curvature) into a new mcap bag
    again = tmp_path / 'again'
    assert run('--world', 'basic_track', '--cmd-vel-bag', str(out), '--mode', 'curvature',
               '--out', str(again), '--storage', 'mcap', '--no-plots') == 0
    assert (again / 'again.mcap').is_file() and not (again / 'trajectory.png').exists()


def test_named_manoeuvre_moves_start_when_it_does_not_fit(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    out = tmp_path / 'circle'
    assert run('--world', 'basic_track', '--scenario', 'circle_left', '--speed', '0.8',
               '--duration', '3', '--out', str(out), '--no-plots') == 0
    text = capsys.readouterr().out
    assert 'moved from the spawn pose' in text and 'collisions          0' in text


def error_of(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert run(*args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith('error: ') and '\n' not in err, err
    return err


def test_bad_input_is_one_line_and_leaves_nothing(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / 'out')
    assert 'unknown world' in error_of(capsys, '--world', 'no_such_world', '--scenario', 'line',
                                       '--out', out)
    nan = tmp_path / 'nan.yaml'
    nan.write_text('mode: steering_angle\nt: [0.0, 1.0]\nlinear_x: [1.0, .nan]\n'
                   'angular_z: [0.0, 0.0]\n')
    assert 'linear_x' in error_of(capsys, '--scenario', str(nan), '--out', out)
    bad_sdf = tmp_path / 'bad.sdf'
    bad_sdf.write_text('<sdf version="1.9"><world name="w"><model name="m">')
    assert 'malformed SDF' in error_of(capsys, '--world', str(bad_sdf), '--scenario', 'line',
                                       '--out', out)
    assert 'not a directory' in error_of(capsys, '--scenario', 'line', '--out',
                                         str(nan / 'out'))  # below a file
    assert 'unknown scenario' in error_of(capsys, '--scenario', 'figure_nine', '--out', out)
    assert 'seed' in error_of(capsys, '--scenario', 'line', '--seed', '-1', '--out', out)
    assert 'not found' in error_of(capsys, '--cmd-vel-bag', str(tmp_path / 'nobag'),
                                   '--out', out)
    assert list(tmp_path.iterdir()) == [nan, bad_sdf] or set(tmp_path.iterdir()) == {nan,
                                                                                     bad_sdf}


def test_unwritable_output_dir(capsys: pytest.CaptureFixture[str]) -> None:
    """/sys refuses new entries even for root (and is not writable for anyone else)."""
    err = error_of(capsys, '--scenario', 'line', '--out', '/sys/rcsim_test_out')
    assert 'rcsim_test_out' in err
    assert not Path('/sys/rcsim_test_out').exists()


def test_existing_output_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / 'run'
    out.mkdir()
    (out / 'old.txt').write_text('old')
    assert 'exists already' in error_of(capsys, '--scenario', 'line', '--duration', '1',
                                        '--out', str(out))
    assert (out / 'old.txt').exists()
    # issue 28: --force replaces a bag, never a directory of other files
    assert 'not a bag (no metadata.yaml): --force does not replace it' in error_of(
        capsys, '--scenario', 'line', '--duration', '1', '--out', str(out), '--no-plots',
        '--force')
    assert (out / 'old.txt').read_text() == 'old'
    (out / 'old.txt').unlink()
    out.rmdir()
    for _ in range(2):  # the second run replaces the first one's bag
        assert run('--scenario', 'line', '--duration', '1', '--out', str(out), '--no-plots',
                   '--force') == 0
    assert (out / 'run.db3').is_file()


def test_bag_without_cmd_vel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_engine.output.bags import float64_msg

    bag = tmp_path / 'other'
    with BagWriter(bag) as w:
        w.write('/steering_angle', 'std_msgs/msg/Float64', 0, float64_msg(0.1))
    err = error_of(capsys, '--cmd-vel-bag', str(bag), '--out', str(tmp_path / 'out'))
    assert 'topic /cmd_vel not in bag' in err and '/steering_angle' in err


def test_missing_parent_directories_are_created(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """README: ``rcsim run ... --out runs/eight`` on a fresh checkout (no runs/ yet) works."""
    out = tmp_path / 'runs' / 'new' / 'eight'
    assert run('--scenario', 'line', '--duration', '1', '--out', str(out), '--no-plots') == 0
    assert (out / 'eight.db3').is_file()
    # a run that fails before writing creates no directory at all
    assert 'unknown scenario' in error_of(capsys, '--scenario', 'nope', '--out',
                                          str(tmp_path / 'other' / 'x'))
    assert not (tmp_path / 'other').exists()


def test_params_is_repeatable_like_the_other_commands(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    first, second = tmp_path / 'a.yaml', tmp_path / 'b.yaml'
    first.write_text('geometry:\n  wheelbase: 0.30\n')
    second.write_text('steering:\n  max_steering_angel: 0.3\n')
    err = error_of(capsys, '--scenario', 'line', '--params', str(first), '--params', str(second),
                   '--out', str(tmp_path / 'out'))
    assert 'b.yaml' in err and "did you mean 'max_steering_angle'" in err


@pytest.mark.parametrize('argv, expected', [
    (['runn'], "did you mean 'run'?"),
    (['lidar', 'aply'], "did you mean 'apply'?"),
    (['run', '--out', 'x'], 'one of the arguments --scenario --cmd-vel-bag is required'),
    (['run', '--scenario', 'line', '--seed', 'nan', '--out', 'x'], "invalid int value: 'nan'"),
])
def test_usage_errors_are_one_line(argv: list[str], expected: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """UX review: argparse errors printed the whole usage block; now one line like user errors."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith('error: rcsim') and err.count('\n') == 1 and expected in err, err
    assert '--help' in err


def test_unknown_scenario_suggests_manoeuvres_and_shipped_scenarios(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """UX review: the shipped scenarios (basic_track_lap) were not listed, typos not corrected."""
    err = error_of(capsys, '--scenario', 'basic_track_lpa', '--out', str(tmp_path / 'o'))
    assert "did you mean 'basic_track_lap'" in err and 'a shipped scenario: basic_track_lap' in err
    err = error_of(capsys, '--scenario', 'figure_eigth', '--out', str(tmp_path / 'o'))
    assert "did you mean 'figure_eight'" in err


@pytest.mark.parametrize('option, typo, suggestion', [
    ('--world', 'basic_trak', 'basic_track'),
    ('--model', 'single_trak', 'single_track'),
    ('--tyre-model', 'pacejk', 'pacejka'),
    ('--lidar-errors', 'harsch', 'harsh'),
])
def test_typos_get_did_you_mean(option: str, typo: str, suggestion: str, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    err = error_of(capsys, '--scenario', 'line', option, typo, '--duration', '0.5', '--out',
                   str(tmp_path / 'o'))
    assert f'{typo!r}' in err and f'did you mean {suggestion!r}' in err
    assert not list(tmp_path.iterdir())
