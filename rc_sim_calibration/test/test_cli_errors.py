"""Bad input (issue 6 item 9): one-line error, exit status 2, nothing written."""

import pytest

from rc_sim_calibration.cli import fit_main
from rc_sim_description.bags.writer import BagWriter
from rc_sim_engine.cli import main as rcsim
from rc_sim_engine.output import bags as bagio

T0 = 1_700_000_000 * 1_000_000_000


def _bag(path, *, moving=True, topics=('cmd', 'odom'), seconds=3.0):
    """A small hand-written bag: 3 s of commands and odometry (standing still if not moving)."""
    v = 1.0 if moving else 0.0
    with BagWriter(path) as bag:
        for i in range(round(100 * seconds)):
            t = T0 + i * 10_000_000
            s = i * 0.01
            if 'cmd' in topics and i % 2 == 0:
                bag.write('/steering_angle', 'std_msgs/msg/Float64', t, bagio.float64_msg(0.0))
                bag.write('/rear_wheel_speed', 'std_msgs/msg/Float64', t,
                          bagio.float64_msg(20.0 * v))
            if 'odom' in topics:
                bag.write('/odom', 'nav_msgs/msg/Odometry', t,
                          bagio.odometry_msg(t, v * s, 0.0, 0.0, v, 0.0, 0.0))
            if 'clock' in topics:
                bag.write('/clock', 'rosgraph_msgs/msg/Clock', t, bagio.clock_msg(t))
    return path


def _run(capsys, tmp_path, argv, entry=rcsim):
    out = tmp_path / 'out'
    out.mkdir()
    before = set(tmp_path.rglob('*'))
    code = entry([*argv, '--out', str(out / 'calibrated.yaml'), '--report', str(out / 'rep')]
                 if entry is fit_main else
                 ['fit', *argv, '--out', str(out / 'calibrated.yaml'),
                  '--report', str(out / 'rep')])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith('error: '), err
    print(err[0])
    assert set(tmp_path.rglob('*')) == before  # nothing written, no temporary left over
    return err[0]


def test_missing_bag(capsys, tmp_path):
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'nope')])
    assert 'not found' in msg and 'nope' in msg


def test_console_script_is_the_same_program(capsys, tmp_path):
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'nope.db3')], entry=fit_main)
    assert 'not found' in msg


def test_corrupted_db3(capsys, tmp_path):
    bag = _bag(tmp_path / 'bag')
    db3 = next(bag.glob('*.db3'))
    data = db3.read_bytes()
    db3.write_bytes(data[:len(data) // 3])  # truncated
    msg = _run(capsys, tmp_path, ['--bag', str(db3)])
    assert 'bag' in msg


def test_garbage_db3(capsys, tmp_path):
    bag = _bag(tmp_path / 'bag')
    db3 = next(bag.glob('*.db3'))
    db3.write_bytes(b'not a database at all' * 100)
    msg = _run(capsys, tmp_path, ['--bag', str(bag)])
    assert str(bag) in msg


def test_empty_bag(capsys, tmp_path):
    with BagWriter(tmp_path / 'empty'):
        pass
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'empty')])
    assert 'no messages' in msg or 'empty' in msg


def test_bag_without_the_needed_topics(capsys, tmp_path):
    _bag(tmp_path / 'bag', topics=('clock', 'odom'))
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'bag')])
    assert 'no command topics' in msg and '/clock, /odom' in msg and '--topic' in msg


def test_bag_without_odometry(capsys, tmp_path):
    _bag(tmp_path / 'bag', topics=('clock', 'cmd'))
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'bag')])
    assert 'no odometry topic /odom' in msg and '/clock' in msg and '--topic odom=NAME' in msg


def test_topic_of_the_wrong_type(capsys, tmp_path):
    _bag(tmp_path / 'bag')
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'bag'), '--topic', 'odom=/steering_angle'])
    assert 'expected nav_msgs/msg/Odometry' in msg


def test_no_motion(capsys, tmp_path):
    _bag(tmp_path / 'bag', moving=False)
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'bag')])
    assert 'no motion in the data' in msg


def test_unknown_free_parameter(capsys, tmp_path):
    _bag(tmp_path / 'bag')
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'bag'), '--free',
                                  'steering_gain,cornering_stifness_front'])
    assert "'cornering_stifness_front'" in msg and "did you mean 'cornering_stiffness_front'" in msg


def test_bounds_that_exclude_the_start(capsys, tmp_path):
    _bag(tmp_path / 'bag')
    cfg = tmp_path / 'fit.yaml'
    cfg.write_text('bounds: {steering_gain: {absolute: [1.2, 1.5]}}\n')
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'bag'), '--config', str(cfg)])
    assert "'steering_gain'" in msg and 'outside its bounds [1.2, 1.5]' in msg


def test_existing_output_is_kept(capsys, tmp_path):
    _bag(tmp_path / 'bag')
    out = tmp_path / 'calibrated.yaml'
    out.write_text('keep: me\n')
    code = rcsim(['fit', '--bag', str(tmp_path / 'bag'), '--out', str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and 'exists already' in err[0]
    assert out.read_text() == 'keep: me\n'


@pytest.mark.parametrize('argv, match', [
    (['replay', '--bag', 'nope', '--out', 'x.csv'], 'not found'),
    (['replay', '--bag', 'nope', '--out', 'x.csv', '--mapper', 'wheelbase'], 'KEY=NUMBER'),
    (['fit', '--bag', 'nope', '--out', 'x.csv', '--optimizer', 'grid', '--budget', '0'],
     'budget'),
    (['protocol', '--out', '.', '--speed', '-1'], '--speed'),
])
def test_other_commands(capsys, tmp_path, monkeypatch, argv, match):
    monkeypatch.chdir(tmp_path)
    assert rcsim(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and match in err[0]
    assert not (tmp_path / 'x.csv').exists()



def test_negative_seed_is_a_one_line_error(capsys, tmp_path):
    """UX review: ``rcsim fit --seed -1`` used to end in a numpy traceback."""
    _bag(tmp_path / 'bag')
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'bag'), '--seed', '-1'])
    assert '--seed' in msg and 'must be in [0, ' in msg


def test_unknown_mapper_parameter_is_refused(capsys, tmp_path):
    """UX review: a typo in ``--mapper`` used to be ignored silently."""
    _bag(tmp_path / 'bag')
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'bag'), '--mapper', 'wheelbas=0.3'])
    assert "'wheelbas'" in msg and "did you mean 'wheelbase'" in msg


def test_summary_prints_units(tmp_path, capsys):
    """UX review: the fit summary names the unit of every RMSE and parameter; every held-out
    row compares the calibrated model with nominal, CTRV and the kinematic bicycle."""
    from rc_sim_calibration.fit import parameter_unit

    assert parameter_unit('cornering_stiffness_front') == 'N/rad'
    assert parameter_unit('command_latency') == 's'
    assert parameter_unit('pacejka_lateral.B') == '-'
    _bag(tmp_path / 'bag', seconds=12.0)  # held-out windows to judge on
    out = tmp_path / 'cal.yaml'
    # a straight line does not determine the latency: exit 3 (written with --accept-worse)
    assert rcsim(['fit', '--bag', str(tmp_path / 'bag'), '--out', str(out), '--free',
                  'command_latency', '--optimizer', 'grid', '--budget', '3', '--no-polish',
                  '--accept-worse']) == 3
    text = capsys.readouterr().out
    held = [ln for ln in text.splitlines() if ln.startswith('bag (')]
    assert held and ' m (nominal ' in held[0] and ' m/s (nominal ' in held[0], text
    assert 'rad/s (nominal ' in held[0] and 'CTRV ' in held[0] and 'kinematic ' in held[0]
    assert any(ln.startswith('verdict: ') for ln in text.splitlines())
    assert 'command_latency: ' in text and ' s (' in text
    assert 'nan' not in text and 'inf' not in text.replace('info', '')


def test_report_parameter_table_has_units(capsys, tmp_path):
    _bag(tmp_path / 'bag')
    report = tmp_path / 'rep'
    assert rcsim(['fit', '--bag', str(tmp_path / 'bag'), '--out', str(tmp_path / 'c.yaml'),
                  '--report', str(report), '--free', 'command_latency', '--optimizer', 'grid',
                  '--budget', '3', '--no-polish', '--accept-worse']) == 3
    summary = (report / 'summary.md').read_text()
    assert '| parameter | nominal | start | calibrated | search range | determined |' in summary
    assert '| command_latency | 0 s |' in summary
    page = (report / 'index.html').read_text()
    for text in (summary, page):
        assert 'nan' not in text.lower().replace('nominal', '') and ' inf' not in text


def test_calibrated_yaml_has_no_float_noise():
    """UX review: calibrated.yaml showed values like 101.00000000000003 (relative scaling)."""
    from rc_sim_calibration.settings import override_values
    from rc_sim_description.params import load_vehicle_params

    params = load_vehicle_params().with_values(cornering_stiffness_rear=101.00000000000003,
                                               yaw_inertia=0.047119999999999995)
    values = override_values(params, ['cornering_stiffness_rear', 'yaw_inertia'])
    assert values == {'cornering_stiffness_rear': 101.0, 'yaw_inertia': 0.04712}


@pytest.mark.parametrize('flag,value', [('--budget', '9' * 400), ('--budget', '0'),
                                        ('--popsize', '1'), ('--seed', str(2 ** 40))])
def test_absurd_counts_are_refused_before_any_work(capsys, tmp_path, flag, value):
    _bag(tmp_path / 'bag')
    msg = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'bag'), flag, value])
    assert msg.startswith(f'error: {flag}: must be in [') and len(msg) < 120, msg
