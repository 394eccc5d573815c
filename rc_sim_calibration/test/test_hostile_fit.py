"""Hostile input to the fit (issue 28): bad samples are cleaned with a warning counting them, or
refused naming the topic and time; absurd settings are refused before anything is allocated;
nothing non-finite is ever written (exit 3 naming the parameter)."""

import math
import time
import warnings

import numpy as np
import pytest

from rc_sim_calibration.bagread import sanitise_series
from rc_sim_calibration.dataset import load_dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.settings import load_fit_settings
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.cli import main as rcsim
from rc_sim_engine.output import bags as bagio

T0 = 1_700_000_000 * 1_000_000_000


def _bag(path, *, odom_nan=(), odom_dup=(), odom_future=(), n=400):
    """4 s of a left turn: commands and odometry at 100 Hz; odometry messages with an index in
    ``odom_nan`` hold NaN, those in ``odom_dup`` repeat the previous stamp, those in
    ``odom_future`` are stamped 10^6 s later."""
    v, r = 1.0, 0.5
    with BagWriter(path) as bag:
        for i in range(n):
            t = T0 + i * 10_000_000
            s = i * 0.01
            if i % 2 == 0:
                bag.write('/steering_angle', 'std_msgs/msg/Float64', t, bagio.float64_msg(0.16))
                bag.write('/rear_wheel_speed', 'std_msgs/msg/Float64', t,
                          bagio.float64_msg(v / 0.05))
            x, y, yaw = math.sin(r * s) / r, (1 - math.cos(r * s)) / r, r * s
            stamp = t
            if i in odom_dup:
                stamp = t - 10_000_000
            if i in odom_future:
                stamp = t + 10 ** 15
            if i in odom_nan:
                x = float('nan')
            bag.write('/odom', 'nav_msgs/msg/Odometry', stamp,
                      bagio.odometry_msg(stamp, x, y, yaw, v, 0.0, r))
    return path


def _load(path):
    params = load_vehicle_params()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        ds = load_dataset(path, params, load_fit_settings().data)
    return ds, [str(w.message) for w in caught]


def test_nan_samples_are_dropped_with_a_count(tmp_path):
    ds, warned = _load(_bag(tmp_path / 'bag', odom_nan=(50, 51, 52, 300)))
    line = [w for w in warned if '/odom' in w]
    assert len(line) == 1 and '4 of 400 messages unusable: 4 with NaN or infinite values ' \
        '(first at t = 0.500 s); dropped' in line[0], warned
    assert np.isfinite(ds.x).all() and np.isfinite(ds.track.x).all()


def test_repeated_stamps_are_dropped_with_a_count(tmp_path):
    ds, warned = _load(_bag(tmp_path / 'bag', odom_dup=(100, 200, 300)))
    line = [w for w in warned if '/odom' in w]
    assert len(line) == 1 and '3 with a repeated stamp' in line[0], warned
    assert np.all(np.diff(ds.track.t) > 0)


def test_far_future_stamps_are_dropped_not_allocated(tmp_path):
    """A stamp 10^6 s away from the rest used to stretch the 50 Hz grid over 11 days."""
    t0 = time.perf_counter()
    ds, warned = _load(_bag(tmp_path / 'bag', odom_future=(10, 390)))
    line = [w for w in warned if '/odom' in w]
    assert len(line) == 1 and '2 stamped far from the rest of the topic' in line[0], warned
    assert ds.duration < 5.0 and time.perf_counter() - t0 < 60


def test_mostly_bad_topic_is_refused_naming_it(tmp_path):
    with pytest.raises(CalibrationError, match=r'/odom: 300 of 400 messages unusable: 300 with '
                       r'NaN or infinite values \(first at t = 0\.000 s\).*too many to drop'):
        _load(_bag(tmp_path / 'bag', odom_nan=range(300)))


def test_sanitise_keeps_the_last_command_of_a_stamp():
    entry = {'t': np.array([0.0, 0.1, 0.1, 0.2]), 'value': np.array([1.0, 2.0, 3.0, 4.0])}
    with pytest.warns(Warning, match='1 with a repeated stamp'):
        out = sanitise_series(entry, 'steering', 'bag: /steering')
    assert out['value'].tolist() == [1.0, 3.0, 4.0]
    clean = {'t': np.array([0.0, 0.1]), 'value': np.array([1.0, 2.0])}
    assert sanitise_series(clean, 'steering', 'x') is clean


def _run(capsys, tmp_path, argv):
    out = tmp_path / 'out'
    out.mkdir(exist_ok=True)
    before = set(tmp_path.rglob('*'))
    code = rcsim(['fit', *argv, '--out', str(out / 'cal.yaml'), '--report', str(out / 'rep')])
    err = capsys.readouterr().err.strip().splitlines()
    assert set(tmp_path.rglob('*')) == before  # nothing written
    return code, err


@pytest.mark.parametrize('config, match', [
    ('bounds: {steering_gain: {relative: [1.6, 0.6]}}', r'steering_gain: \{relative: \[1.6, '
     r'0.6\]\}: the first number must be below the second'),
    ('bounds: {steering_offset: {offset: [0.1, -0.1]}}', 'steering_offset:.*first number'),
    ('bounds: {command_latency: {absolute: [0.2, 0.0]}}', 'command_latency:.*first number'),
    ('simulation: {dt: 0.000002}', r'simulation.dt: must be in \[0.0001, 0.05\] s'),
    ('cost: {horizon: 0.001}', r'cost.horizon: must be in \[0.05, 60\] s'),
    ('cost: {weights: {position: 0, yaw: 0, speed: 0, yaw_rate: 0, gyro: 0, wheel_speed: 0}}',
     'cost weights: at least one channel needs a weight > 0'),
    ('cost: {prior_strength: -1}', 'cost.prior_strength: must be in'),
])
def test_absurd_fit_settings_are_refused_before_reading_a_bag(capsys, tmp_path, config, match):
    """Bounds inverted, a physics step of microseconds, an all-zero weighting: exit 2 naming
    the key, before any bag is read (the bag does not even exist)."""
    import re

    cfg = tmp_path / 'fit.yaml'
    cfg.write_text(config + '\n')
    t0 = time.perf_counter()
    code, err = _run(capsys, tmp_path, ['--bag', str(tmp_path / 'missing'), '--config',
                                        str(cfg)])
    assert code == 2 and len(err) == 1 and re.search(match, err[0]), err
    assert time.perf_counter() - t0 < 20


def test_weights_only_on_channels_the_recordings_lack(capsys, tmp_path):
    """Only the wheel speed weighted, and the bag has no wheel speed: exit 2 naming both."""
    bag = _bag(tmp_path / 'bag')
    cfg = tmp_path / 'fit.yaml'
    cfg.write_text('cost: {weights: {position: 0, yaw: 0, speed: 0, yaw_rate: 0, gyro: 0, '
                   'wheel_speed: 1}}\n')
    code, err = _run(capsys, tmp_path, ['--bag', str(bag), '--config', str(cfg), '--free',
                                        'steering_gain'])
    assert code == 2 and len(err) == 1, err
    assert 'cost.weights: no channel with a weight > 0 has data' in err[0]
    assert 'weighted: wheel_speed' in err[0] and 'the recordings have: position' in err[0]


def test_batch_beyond_the_memory_budget_is_refused(capsys, tmp_path, monkeypatch):
    """Long windows at a fine step: the fit's largest batch is checked against
    RC_SIM_MAX_MEMORY_MB (docs/limits.md) before the windows are built."""
    bag = _bag(tmp_path / 'bag')
    monkeypatch.setenv('RC_SIM_MAX_MEMORY_MB', '5')
    cfg = tmp_path / 'fit.yaml'
    cfg.write_text('simulation: {dt: 0.0001}\n')
    code, err = _run(capsys, tmp_path, ['--bag', str(bag), '--config', str(cfg), '--free',
                                        'steering_gain'])
    assert code == 2 and len(err) == 1, err
    assert 'exceeds the limit of 5 MB' in err[0] and 'RC_SIM_MAX_MEMORY_MB' in err[0]
    assert 'simulation.dt 0.0001 s' in err[0]


def test_non_finite_fit_result_is_exit_3_naming_the_parameter():
    from rc_sim_calibration.fit import check_finite
    from rc_sim_description.cli_support import run_cli
    from rc_sim_description.errors import DegenerateError

    check_finite(['a', 'b'], [1.0, 2.0])
    with pytest.raises(DegenerateError, match='the fit degenerated: yaw_inertia became nan'):
        check_finite(['steering_gain', 'yaw_inertia'], [1.0, float('nan')])

    def degenerate():
        check_finite(['mu2'], [float('inf')])
        return 0

    assert run_cli(degenerate) == 3


def test_report_and_summary_never_show_nan():
    from rc_sim_calibration.verdict import BagScore, Verdict, num

    assert num(float('nan')) == 'n/a' and num(float('inf')) == 'n/a' and num(0.1234) == '0.123'
    nan = float('nan')
    s = BagScore('x/rec', 'held-out recording', 3, 30, {'position': nan, 'speed': 1.0,
                                                        'yaw_rate': 1.0},
                 {'position': 0.1, 'speed': nan, 'yaw_rate': 0.5},
                 {'position': 0.2, 'speed': 0.3, 'yaw_rate': float('inf')},
                 {'position': 0.2, 'speed': 0.3, 'yaw_rate': 0.4})
    text = '\n'.join(Verdict([s], [], scheme='each recording').lines())
    assert 'nan' not in text and 'inf' not in text and 'n/a' in text


@pytest.mark.parametrize('where', ['odom', 'path'])
def test_evaluate_with_far_future_stamps_is_one_line_or_a_result(capsys, tmp_path, where):
    """Issue 28: stamps far in the future crashed ``rcsim evaluate`` with an IndexError."""
    far = 10 ** 17   # about three years
    with BagWriter(tmp_path / 'bag') as bag:
        for i in range(300):
            t = T0 + i * 10_000_000 + (far if where == 'odom' and i > 150 else 0)
            bag.write('/odom', 'nav_msgs/msg/Odometry', t,
                      bagio.odometry_msg(t, i * 0.01, 0.0, 0.0, 1.0, 0.0, 0.0))
        tt = T0 + (far if where == 'path' else 0)
        msg = bagio.path_msg(tt, np.arange(10) * 0.3, np.zeros(10), np.zeros(10))
        for k, pose in enumerate(msg.poses):
            pose.header.stamp.sec = (tt + k * 10 ** 8) // 10 ** 9
            pose.header.stamp.nanosec = (tt + k * 10 ** 8) % 10 ** 9
        bag.write('/reference_path', 'nav_msgs/msg/Path', T0, msg)
    code = rcsim(['evaluate', '--bag', str(tmp_path / 'bag')])
    err = capsys.readouterr().err.strip().splitlines()
    assert code in (0, 2)
    assert code == 0 or (len(err) == 1 and err[0].startswith('error: ')), err
