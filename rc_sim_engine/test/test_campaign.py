"""``rcsim campaign run``: spec arithmetic and one-line errors, runs equal to the ``rcsim run``
of the same arguments, bit-for-bit reproduction from an id, resume, refusal of a changed spec,
local worker processes and a Dask LocalCluster giving the same table."""

from __future__ import annotations

import csv
from pathlib import Path
import shlex
import shutil

import numpy as np
import pytest
import yaml

from rc_sim_engine.campaign import expand, load_spec
from rc_sim_engine.campaign.page import equivalent_command
from rc_sim_engine.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / 'examples' / 'campaign'

SCENARIO_SPEC = '''
campaign: scen
driver: {kind: scenario, duration_s: 2.0}
fixed: {scenario: circle_left}
factors:
  grid:
    world: [flat_track, basic_track]
    lidar_errors: [ideal, hokuyo_ust10lx]
  list:
    seed: [3, 11]
    start: [null, [0.4, -0.3, 0.2]]
pass:
  min_wall_distance_m: {min: 0.25}
'''


def write(tmp: Path, text: str, name: str = 'spec.yaml') -> Path:
    path = tmp / name
    path.write_text(text, encoding='utf-8')
    return path


def table(path: Path) -> list[dict[str, str]]:
    with open(path / 'results.csv', newline='', encoding='utf-8') as fh:
        return list(csv.DictReader(fh))


def campaign(*args: str) -> int:
    return main(['campaign', 'run', *args])


# --------------------------------------------------------------------------- spec
def test_expansion_counts_and_stable_ids(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, '''
driver: {kind: python, controller: wall_follower:make, duration_s: 1}
fixed: {world: basic_track}
factors:
  grid:
    lidar_errors: [ideal, harsh, rplidar_a1]
    seed: {random: {count: 4, seed: 9, low: 0, high: 1000000}}
  list:
    model: [single_track, kinematic]
    start: [null, [0.1, 0, 0]]
'''))
    runs = expand(spec)
    assert len(runs) == 3 * 4 * 2  # grid product x list length
    assert len({r.run_id for r in runs}) == len(runs)
    seeds = {r.values['seed'] for r in runs}
    assert seeds == {int(v) for v in np.random.default_rng(9).integers(
        0, 1000000, size=4, endpoint=True)}
    # the same resolved run has the same id whatever the order of the factors in the spec
    swapped = load_spec(write(tmp_path, (tmp_path / 'spec.yaml').read_text().replace(
        'lidar_errors: [ideal, harsh, rplidar_a1]\n    seed: {random: {count: 4, seed: 9, low: 0,'
        ' high: 1000000}}', 'seed: {random: {count: 4, seed: 9, low: 0, high: 1000000}}\n    '
        'lidar_errors: [rplidar_a1, ideal, harsh]'), 'swapped.yaml'))
    assert {r.run_id for r in expand(swapped)} == {r.run_id for r in runs}
    assert [r.run_id for r in expand(swapped)] != [r.run_id for r in runs]


@pytest.mark.parametrize('text, culprit', [
    ('driver: {kind: scenario}\nfixed: {scenario: line}\nfactor: {}\n',
     "spec.yaml: factor: unknown key (did you mean 'factors'?)"),
    ('driver: {kind: scenario}\nfixed: {scenario: line}\nfactors: {grid: {wrld: [a]}}\n',
     "factors.grid.wrld: unknown factor (did you mean 'world'?)"),
    ('driver: {kind: scenario}\nfixed: {scenario: line, start: [0, .nan, 0]}\n',
     'fixed.start[1]: must be a finite number'),
    ('driver: {kind: scenario}\nfixed: {scenario: line}\nfactors: {grid: {world: [basic_trak]}}\n',
     "factors.grid.world[0]: unknown world 'basic_trak' (did you mean 'basic_track'?)"),
    ('driver: {kind: scenario}\nfixed: {scenario: line}\nfactors: {grid: {seed: '
     '{random: {count: 2, seed: 1, low: 5, high: 1}}}}\n', 'factors.grid.seed.random: low must'),
    ('driver: {kind: scenario}\nfixed: {scenario: line}\nfactors: {list: {seed: [1, 2], '
     'model: [kinematic]}}\n', 'factors.list: every factor must list the same number'),
    ('driver: {kind: scenario}\nfixed: {scenario: line}\npass: {colisions: {max: 0}}\n',
     "pass.colisions: not a metric of this campaign (did you mean 'collisions'?)"),
    ('driver: {kind: python, controller: not-a-callable, duration_s: 1}\n',
     'driver.controller: must be module:callable'),
    ('driver: {kind: scenario}\nfixed: {scenario: line, lidar_errors: hokuyo}\n',
     "fixed.lidar_errors: 'hokuyo' is neither a preset"),
    ('driver: {kind: scenario}\nfixed: {scenario: line, vehicle: {mass_properties: '
     '{mass: -1}}}\n', 'fixed.vehicle: '),
    ('- just a list\n', 'spec.yaml: top level must be a mapping'),
    ('driver: {kind: scenario}\nfixed: {scenario: line, lidar_errors: {preset: harsh, set: '
     '{noise_stdev: 0.1}}}\n', "fixed.lidar_errors.set: harsh + set: noise_stdev: unknown key "
     "(did you mean 'noise_stddev'?)"),
    ('driver: {kind: tracker}\nfixed: {lidar_errors: harsh}\n',
     'lidar_errors: the trackers do not read the lidar'),
])
def test_bad_spec_is_one_line_exit_2_nothing_written(tmp_path: Path, text: str, culprit: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    spec = write(tmp_path, text)
    out = tmp_path / 'out'
    assert campaign(str(spec), '--out', str(out)) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1, err
    assert culprit in err and str(spec) in err
    assert not out.exists()


def test_out_that_is_an_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    spec = write(tmp_path, SCENARIO_SPEC)
    before = spec.read_bytes()
    assert campaign(str(spec), '--out', str(spec)) == 2
    assert campaign(str(spec), '--out', str(tmp_path)) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith('error: ') for line in err)
    assert spec.read_bytes() == before and {p.name for p in tmp_path.iterdir()} == {'spec.yaml'}


def test_bad_options_are_one_line_exit_2_nothing_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    import sys

    spec = str(write(tmp_path, SCENARIO_SPEC))
    out = str(tmp_path / 'out')
    assert campaign(spec, '--out', out, '--only', '0123456789ab') == 2
    assert campaign(spec, '--out', out, '--workers', '0') == 2
    assert campaign(spec, '--out', out, '--dask', 'remote:3') == 2
    monkeypatch.setitem(sys.modules, 'distributed', None)  # dask not installed
    assert campaign(spec, '--out', out, '--dask', 'local:2') == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and all(line.startswith('error: ') for line in err)
    assert '--only 0123456789ab: no run of the spec has this id' in err[0]
    assert '--dask: expected local:N' in err[2]
    assert 'pip install "dask[distributed]"' in err[3]
    assert not Path(out).exists()


# --------------------------------------------------------------------------- runs
def test_scenario_runs_equal_rcsim_run_and_reproduce_bit_for_bit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec_path = write(tmp_path, SCENARIO_SPEC)
    out = tmp_path / 'camp'
    status = campaign(str(spec_path), '--out', str(out), '--workers', '1')
    rows = table(out)
    assert len(rows) == 2 * 2 * 2
    assert status == (0 if all(r['passed'] == 'true' for r in rows) else 1)
    # each run's metrics equal what rcsim run with the same resolved arguments writes
    spec = load_spec(spec_path)
    runs = {r.run_id: r for r in expand(spec)}
    for row in rows[:3] + rows[-1:]:
        command = equivalent_command(spec, runs[row['run_id']], str(tmp_path / row['run_id']))
        argv = shlex.split(command)
        assert argv[:2] == ['rcsim', 'run'] and f'--seed {row["seed"]}' in command
        assert main([*argv[1:], '--no-plots']) == 0
        summary = yaml.safe_load((tmp_path / row['run_id'] / 'summary.yaml').read_text())
        assert float(row['distance_m']) == pytest.approx(summary['distance_m'][0], rel=1e-12)
        assert int(row['collisions']) == summary['collisions'][0]
        assert float(row['max_speed_mps']) == pytest.approx(summary['max_speed_mps'][0],
                                                             rel=1e-12)
        if row['start']:
            assert summary['start'] == pytest.approx(yaml.safe_load(row['start']))
    # a run reproduced from its id alone is byte-identical
    chosen = rows[5]['run_id']
    again = tmp_path / 'again'
    campaign(str(spec_path), '--out', str(again), '--only', chosen)
    original = [line for line in (out / 'results.csv').read_text().splitlines()
                if line.startswith(chosen)]
    assert (again / 'results.csv').read_text().splitlines()[1:] == original
    # the page: verdict first, a table per varied factor, the reproducing commands
    page = (out / 'index.html').read_text()
    passed = sum(r['passed'] == 'true' for r in rows)
    assert f'{passed} of 8 runs passed, {8 - passed} failed, 0 errors' in page
    assert page.index('runs passed') < page.index('By world') < page.index('Worst runs')
    for r in rows:  # the pass rule by hand: no wall (flat_track) satisfies the bound
        gap = float(r['min_wall_distance_m'] or 'inf')
        assert (r['passed'] == 'true') == (gap >= 0.25), r
        assert (r['min_wall_distance_m'] == '') == (r['world'] == 'flat_track')
        if r['passed'] != 'true':
            assert f'--only {r["run_id"]}' in page
    assert 0 < passed < 8
    capsys.readouterr()


def test_resume_skips_done_runs_and_refuses_a_changed_spec(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec_path = write(tmp_path, SCENARIO_SPEC)
    out = tmp_path / 'camp'
    campaign(str(spec_path), '--out', str(out), '--workers', '1')
    full = (out / 'results.csv').read_bytes()
    # an interrupted campaign: three rows done, the fourth torn mid-line
    lines = full.splitlines(keepends=True)
    (out / 'results.csv').write_bytes(b''.join(lines[:4]) + lines[4][:9])
    capsys.readouterr()
    campaign(str(spec_path), '--out', str(out), '--workers', '2')
    assert '3 already in the table, 5 run now' in capsys.readouterr().out
    assert (out / 'results.csv').read_bytes() == full  # same bytes as the uninterrupted one
    # a changed run set is refused, nothing touched
    changed = write(tmp_path, SCENARIO_SPEC.replace('duration_s: 2.0', 'duration_s: 1.5'),
                    'changed.yaml')
    assert campaign(str(changed), '--out', str(out)) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'the spec changed: 8 run(s)' in err
    assert (out / 'results.csv').read_bytes() == full
    # a spec that only adds runs extends the table
    more = write(tmp_path, SCENARIO_SPEC.replace('[flat_track, basic_track]',
                                                 '[flat_track, basic_track, figure_eight]'),
                 'more.yaml')
    campaign(str(more), '--out', str(out), '--workers', '1')
    assert '8 already in the table, 4 run now' in capsys.readouterr().out
    assert len(table(out)) == 12


def _reference_mean_speed_and_distance(world_name: str, preset: str, seed: int
                                       ) -> tuple[float, float]:
    """The example controller driven directly through the Simulator (not campaign code)."""
    import sys

    from rc_sim_description.params import load_vehicle_params
    from rc_sim_description.paths import world_path
    from rc_sim_description.worlds import spawn_pose
    from rc_sim_engine.sim.simulator import SimConfig, Simulator
    from rc_sim_engine.world.sdf import load_world
    from rc_sim_sensors.lidar_config import LidarErrorConfig

    sys.path.insert(0, str(EXAMPLE))
    try:
        import wall_follower
    finally:
        sys.path.remove(str(EXAMPLE))
    path = world_path(world_name)
    pose = spawn_pose(path)
    config = SimConfig(lidar_errors=LidarErrorConfig.from_preset(preset), seed=seed,
                       command_rate=20.0, mapper_mode='yaw_rate')
    sim = Simulator(load_vehicle_params(), load_world(path), config,
                    start=(pose.x, pose.y, pose.yaw))
    result = sim.run(6.0, wall_follower.make(None))
    vx = result.streams['odom']['vx'][:, 0]
    return float(np.mean(vx)), float(result.summary()['distance_m'][0])


def test_the_docs_example_runs_on_a_local_dask_cluster(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The docs' example end to end (python controller, 4 presets x 50 seeds x 3 worlds = 600
    runs, bags of the failures) on a Dask LocalCluster of 2 processes: every run ok, the pass
    rule as applied by hand, a bag for each failure and none else, a row equal to the
    controller driven directly through the Simulator."""
    pytest.importorskip('distributed')
    spec = tmp_path / 'example'
    shutil.copytree(EXAMPLE, spec, ignore=shutil.ignore_patterns('__pycache__'))
    out = tmp_path / 'dask'
    status = campaign(str(spec / 'campaign.yaml'), '--out', str(out), '--dask', 'local:2')
    rows = table(out)
    assert len(rows) == 4 * 50 * 3 and all(r['status'] == 'ok' for r in rows)
    assert {r['world'] for r in rows} == {'basic_track', 'figure_eight', 'chicane_track'}
    failed = [r for r in rows if r['passed'] != 'true']
    assert status == (1 if failed else 0)
    for r in rows:  # the pass rule, applied by hand
        ok = int(r['collisions']) == 0 and float(r['min_wall_distance_m']) >= 0.05
        assert (r['passed'] == 'true') == ok
        assert (r['bag'] != '') == (not ok)
        assert (r['progress_m'] != '') == (r['world'] == 'chicane_track')
    assert {p.name for p in (out / 'bags').iterdir()} == {r['run_id'] for r in failed}
    shutil.rmtree(out / 'bags')  # hundreds of MB: not kept in the temporary folder
    ref = next(r for r in rows if r['world'] == 'figure_eight' and r['lidar_errors'] == 'harsh')
    mean_speed, distance = _reference_mean_speed_and_distance(ref['world'], ref['lidar_errors'],
                                                              int(ref['seed']))
    assert float(ref['mean_speed_mps']) == mean_speed
    assert float(ref['distance_m']) == pytest.approx(distance, rel=1e-12)
    capsys.readouterr()


def test_local_workers_and_dask_give_the_same_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The docs' example cut to 2 seeds x 2 worlds, no bags: 2 local processes and a Dask
    LocalCluster of 2 processes write the same results.csv, byte for byte."""
    spec = tmp_path / 'example'
    shutil.copytree(EXAMPLE, spec, ignore=shutil.ignore_patterns('__pycache__'))
    text = (spec / 'campaign.yaml').read_text(encoding='utf-8')
    for old, new in (('count: 50', 'count: 2'), ('bags: failures', 'bags: none'),
                     ('[basic_track, figure_eight, chicane_track]', '[figure_eight, chicane_track]')):
        assert old in text
        text = text.replace(old, new)
    (spec / 'campaign.yaml').write_text(text, encoding='utf-8')
    local = tmp_path / 'local'
    campaign(str(spec / 'campaign.yaml'), '--out', str(local), '--workers', '2')
    assert len(table(local)) == 4 * 2 * 2
    pytest.importorskip('distributed')
    dask_out = tmp_path / 'dask'
    campaign(str(spec / 'campaign.yaml'), '--out', str(dask_out), '--dask', 'local:2')
    assert (dask_out / 'results.csv').read_bytes() == (local / 'results.csv').read_bytes()
    capsys.readouterr()


def test_tracker_runs_equal_rcsim_track(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    import json

    spec_path = write(tmp_path, '''
driver: {kind: tracker, controller: pure_pursuit, duration_s: 3.0, set: {amplitude: 2.0}}
fixed: {world: flat_track}
factors: {grid: {trajectory: [lemniscate, circle]}}
pass: {tracking_rmse_m: {max: 0.03}}
''')
    out = tmp_path / 'camp'
    campaign(str(spec_path), '--out', str(out), '--workers', '1')
    spec = load_spec(spec_path)
    runs = {r.run_id: r for r in expand(spec)}
    rows = table(out)
    assert [r['trajectory'] for r in rows] == ['lemniscate', 'circle']
    for row in rows:
        bag = tmp_path / row['run_id']
        argv = shlex.split(equivalent_command(spec, runs[row['run_id']], str(bag)))
        assert argv[:2] == ['rcsim', 'track']
        assert main([*argv[1:], '--no-plots']) == 0
        report = json.loads((bag / 'metrics.json').read_text())
        rmse = report['whole_run']['rmse']
        assert float(row['tracking_rmse_m']) == pytest.approx(rmse, rel=1e-12)
        assert float(row['tracking_ise_m2s']) == pytest.approx(report['whole_run']['ise'],
                                                               rel=1e-12)
        assert (row['passed'] == 'true') == (rmse <= 0.03)
    assert {r['passed'] for r in rows} == {'true', 'false'}  # the rule separates them
    capsys.readouterr()


def test_progress_along_a_track_map_has_the_sign_of_the_motion(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rc_sim_description.paths import share_path

    track = share_path('config/maps/chicane_track.yaml', package='rc_sim_engine')
    (tmp_path / 'drive.py').write_text(
        'def forward(ctx):\n    return lambda t, obs: (0.8, 0.0)\n\n'
        'def backward(ctx):\n    return lambda t, obs: (-0.5, 0.0)\n', encoding='utf-8')
    rows = {}
    for way in ('forward', 'backward'):
        spec = write(tmp_path, f'''
driver: {{kind: python, controller: drive:{way}, duration_s: 2.5}}
fixed: {{world: {track}}}
factors: {{grid: {{seed: [1]}}}}
metrics: [distance_m, progress_m, collisions]
''', f'{way}.yaml')
        campaign(str(spec), '--out', str(tmp_path / way), '--workers', '1')
        (rows[way],) = table(tmp_path / way)
    for way, sign in (('forward', 1.0), ('backward', -1.0)):
        row = rows[way]
        assert row['collisions'] == '0'
        distance = float(row['distance_m'])
        assert distance > 0.5
        assert float(row['progress_m']) == pytest.approx(sign * distance, rel=0.05)
    capsys.readouterr()


def test_the_docs_example_is_the_example_that_runs() -> None:
    """docs/campaigns.md shows examples/campaign/campaign.yaml (the test above runs it)."""
    import re

    docs = (EXAMPLE.parents[1] / 'docs' / 'campaigns.md').read_text(encoding='utf-8')
    shown = re.search(r'```yaml\n(.*?)```', docs, re.S)
    assert shown is not None
    assert yaml.safe_load(shown.group(1)) == yaml.safe_load(
        (EXAMPLE / 'campaign.yaml').read_text(encoding='utf-8'))


def test_vehicle_overrides_inline_or_in_a_file_equal_rcsim_run_params(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slow = {'steering': {'max_steering_rate': 0.8}}
    (tmp_path / 'slow.yaml').write_text(yaml.safe_dump(slow), encoding='utf-8')
    base = ('driver: {kind: scenario, duration_s: 2.0}\n'
            'fixed: {scenario: two_circles, world: flat_track, start: [0, 0, 0], %s}\n'
            'factors: {grid: {seed: [4]}}\n')
    rows = {}
    for name, extra in (('file', 'params: slow.yaml'),
                        ('inline', 'vehicle: {steering: {max_steering_rate: 0.8}}'),
                        ('default', 'model: single_track')):
        spec = write(tmp_path, base % extra, f'{name}.yaml')
        assert campaign(str(spec), '--out', str(tmp_path / name), '--workers', '1') == 0
        (rows[name],) = table(tmp_path / name)
    key = 'max_lateral_acceleration_mps2'
    assert rows['file'][key] == rows['inline'][key] != rows['default'][key]
    assert rows['file']['distance_m'] == rows['inline']['distance_m']
    spec = load_spec(tmp_path / 'file.yaml')
    (run,) = expand(spec)
    argv = shlex.split(equivalent_command(spec, run, str(tmp_path / 'ref')))
    assert '--params' in argv and main([*argv[1:], '--no-plots']) == 0
    summary = yaml.safe_load((tmp_path / 'ref' / 'summary.yaml').read_text())
    assert float(rows['file'][key]) == pytest.approx(summary[key][0], rel=1e-12)
    capsys.readouterr()


def test_a_crashing_user_controller_is_an_error_row_and_the_campaign_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / 'fragile.py').write_text(
        'def make(ctx):\n'
        '    def controller(t, obs):\n'
        '        if ctx.seed == 2 and t > 0.5:\n'
        '            raise ValueError("lost the wall\\nat t > 0.5")\n'
        '        return 0.5, 0.0\n'
        '    return controller\n', encoding='utf-8')
    spec = write(tmp_path, 'driver: {kind: python, controller: fragile:make, duration_s: 1}\n'
                           'fixed: {world: basic_track}\nfactors: {grid: {seed: [1, 2, 3]}}\n')
    assert campaign(str(spec), '--out', str(tmp_path / 'out'), '--workers', '2') == 1
    rows = table(tmp_path / 'out')
    assert [r['status'] for r in rows] == ['ok', 'error', 'ok']
    assert rows[1]['error'] == 'ValueError: lost the wall' and rows[1]['passed'] == 'false'
    assert rows[1]['distance_m'] == '' and float(rows[0]['distance_m']) > 0.3
    assert '2 passed, 0 failed, 1 errors' in capsys.readouterr().out
    page = (tmp_path / 'out' / 'index.html').read_text()
    assert '2 of 3 runs passed, 0 failed, 1 errors' in page
    assert f'--only {rows[1]["run_id"]}' in page


def test_lidar_overrides_change_what_the_controller_sees(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    shutil.copy(EXAMPLE / 'wall_follower.py', tmp_path)
    spec = write(tmp_path, '''
driver: {kind: python, controller: wall_follower:make, duration_s: 4, control_rate_hz: 20}
fixed: {world: figure_eight, seed: 5}
factors:
  grid:
    lidar_errors: [ideal, {preset: ideal, set: {noise_stddev: 0.2}}, {preset: ideal, set: {}}]
metrics: [min_wall_distance_m, distance_m]
''')
    campaign(str(spec), '--out', str(tmp_path / 'out'), '--workers', '1')
    ideal, noisy, same = table(tmp_path / 'out')
    assert noisy['lidar_errors'] == '{"preset":"ideal","set":{"noise_stddev":0.2}}'
    assert noisy['min_wall_distance_m'] != ideal['min_wall_distance_m']
    assert same['min_wall_distance_m'] == ideal['min_wall_distance_m']  # an empty override
    assert same['run_id'] != ideal['run_id']
    capsys.readouterr()


def test_the_page_reads_in_a_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    import re

    from rc_sim_description.testing import BROWSER, browse_page

    if BROWSER is None:
        pytest.skip('no chromium (Debian: apt-get install chromium)')
    monkeypatch.chdir(tmp_path)
    write(tmp_path, SCENARIO_SPEC)
    campaign('spec.yaml', '--out', 'camp', '--workers', '2')
    data = browse_page(tmp_path / 'camp' / 'index.html', tmp_path / 'shot.png', (1100, 2400))
    assert data['scrollWidth'] <= data['clientWidth'], 'the page is wider than the window'
    text: str = data['text']
    for part in ('runs passed', 'What ran', 'By world', 'By lidar_errors', 'Worst runs',
                 'rcsim campaign run spec.yaml --out camp_', 'rcsim run --world', 'Files'):
        assert part in text, part
    assert str(tmp_path) not in text, 'an absolute path on the page'
    assert not re.search(r'(?<![+\-.\w])(?:nan|inf|None)(?!\w)', text)
    from PIL import Image

    with Image.open(tmp_path / 'shot.png') as im:
        lo, hi = im.convert('L').getextrema()
        assert hi - lo > 100, 'a blank screenshot'
    capsys.readouterr()


def _along(line, s_m):
    """Odometry samples at arc lengths ``s_m`` of the centre line (base_link on the line)."""
    from rc_sim_engine.sim.series import Series

    x, y, yaw = line.pose_at(s_m)
    col = {k: np.asarray(v, dtype=float)[:, None] for k, v in (('x', x), ('y', y), ('yaw', yaw))}
    return Series(t_ns=np.arange(len(s_m), dtype=np.int64) * 10_000_000, **col)


def test_lap_time_is_when_the_net_progress_first_reaches_one_lap(tmp_path: Path) -> None:
    """Odometry laid on the chicane track's centre line at a known pace (1.2 laps, a step back
    just before the line): the lap time is the time of the sample where the net arc length
    first reaches the lap length; half a lap gives no lap time and fails a bound on it."""
    from types import SimpleNamespace

    from rc_sim_description.paths import share_path
    from rc_sim_engine.campaign.execute import RunContext, _measure, passed
    from rc_sim_engine.campaign.spec import Bound
    from rc_sim_engine.world.centerline import load_centerline_csv

    track = share_path('config/maps/chicane_track.yaml', package='rc_sim_engine')
    line = load_centerline_csv(track.parent / 'chicane_track_centerline.csv')
    pace = np.linspace(0.0, 1.2 * line.length, 1203)  # 10 ms apart, no sample at one lap
    pace[990:1000] -= 0.3  # backing up below the lap length before crossing it
    spec = SimpleNamespace(folder=tmp_path, metrics=('progress_m', 'lap_time_s'),
                           user_metrics=(), pass_rules=(Bound('lap_time_s', high=60.0),))
    values = {'world': str(track)}
    ctx = RunContext('r', 0, values, None, None, np.random.default_rng(0))

    def measured(s_m):
        result = SimpleNamespace(streams={'odom': _along(line, s_m)}, collisions=[],
                                 summary=lambda: {})
        return _measure(spec, result, None, ctx)

    full = measured(pace)
    first = int(np.flatnonzero(pace >= line.length)[0])
    assert full['lap_time_s'] == pytest.approx(first * 0.01)
    assert full['progress_m'] == pytest.approx(1.2 * line.length, rel=1e-3)
    half = measured(pace[:600])
    assert half['lap_time_s'] is None
    ok = SimpleNamespace(status='ok', metrics=full)
    assert passed(spec, ok) and not passed(spec, SimpleNamespace(status='ok', metrics=half))


def test_time_to_goal_and_a_goal_never_reached(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Straight ahead at 1 m/s from the origin of flat_track: a goal 2 m ahead is reached
    after 2 m of travel (the start takes the drive's lag: between 2.0 and 2.8 s); a goal behind
    the car is never reached (empty, and the run fails its bound)."""
    (tmp_path / 'drive.py').write_text(
        'def ahead(ctx):\n    return lambda t, obs: (1.0, 0.0)\n', encoding='utf-8')
    spec = write(tmp_path, '''
driver: {kind: python, controller: drive:ahead, duration_s: 4.0}
fixed: {world: flat_track, start: [0, 0, 0]}
factors: {list: {goal: [[2.0, 0.0, 0.05], [-2.0, 0.0, 0.5]]}}
metrics: [distance_m, time_to_goal_s]
pass: {time_to_goal_s: {max: 3.0}}
''')
    out = tmp_path / 'goal'
    assert campaign(str(spec), '--out', str(out), '--workers', '1') == 1
    ahead, behind = table(out)
    assert 2.0 < float(ahead['time_to_goal_s']) < 2.8 and ahead['passed'] == 'true'
    assert behind['time_to_goal_s'] == '' and behind['passed'] == 'false'
    capsys.readouterr()
    bad = write(tmp_path, '''
driver: {kind: python, controller: drive:ahead, duration_s: 1.0}
fixed: {world: flat_track, goal: [1.0, 0.0, 0.0]}
''', 'bad.yaml')
    assert campaign(str(bad), '--out', str(tmp_path / 'bad')) == 2
    assert 'bad.yaml: fixed.goal[2]: must be > 0, got 0.0' in capsys.readouterr().err


def test_two_campaigns_in_one_process_import_their_own_controller_module(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two spec folders with a ``drive.py`` each (different controllers), run one after the
    other in this process: each campaign imports its own module, not the one cached first."""
    speeds = {}
    for name, speed in (('a', 0.5), ('b', 1.0)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / 'drive.py').write_text(
            f'def go_{name}(ctx):\n    return lambda t, obs: ({speed}, 0.0)\n', encoding='utf-8')
        spec = write(folder, f'''
driver: {{kind: python, controller: drive:go_{name}, duration_s: 3.0}}
fixed: {{world: flat_track, start: [0, 0, 0]}}
factors: {{grid: {{seed: [1]}}}}
metrics: [max_speed_mps]
''')
        assert campaign(str(spec), '--out', str(tmp_path / f'out_{name}'), '--workers', '1') == 0
        (row,) = table(tmp_path / f'out_{name}')
        speeds[name] = float(row['max_speed_mps'])
    assert speeds['a'] == pytest.approx(0.5, abs=0.05) and speeds['b'] == pytest.approx(1.0, abs=0.05)
    capsys.readouterr()
