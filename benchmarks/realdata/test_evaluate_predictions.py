"""The independent evaluator: hand-computed RMSEs, strict CSV matching, real recordings."""

import math
import os
from pathlib import Path
import sys

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate_predictions import (
    EvaluationError,
    main,
    protocol_truth,
    read_prediction_csv,
    read_recording,
    score,
)

from rc_sim_calibration.baselines import ctrv_predict, make_pose_track, make_windows

EPOCH = 1.7e9
H = 0.21  # windows [0, .21), [.21, .42), [.42, .63): no stamp on a boundary
HEADER = 'window,t,x,y,yaw,vx,vy,yaw_rate\n'


def realdata():
    root = Path(os.environ.get('RC_SIM_REALDATA', '/work/shared/realdata'))
    if not root.is_dir():
        pytest.skip(f'real recordings not found at {root}')
    return root


def straight_track():
    """20 Hz straight line at 1 m/s along x, yaw 0, from EPOCH to EPOCH + 0.75 s."""
    t = EPOCH + np.arange(16) * 0.05
    return t, (t - EPOCH) * 1.0, np.zeros_like(t), np.zeros_like(t)


def write_csv(path, rows):
    path.write_text(HEADER + ''.join(','.join(f'{v:.6f}' if i else str(v)
                                              for i, v in enumerate(r)) + '\n' for r in rows))
    return path


def tiny_csv(tmp_path, extra=(), drop=None):
    """Window 1: x off by 0.1 m, yaw rate 0.5; window 2: y off by 0.2 m, yaw rate -1."""
    rows = [(0, EPOCH + 0.05, 9.0, 9.0, 0.0, 0.0, 0.0, 0.0)]  # a skipped window: ignored
    rows.append((1, EPOCH + 0.25, 99.0, 99.0, 0.0, 0.0, 0.0, 0.0))  # start row: ignored
    for i, s in enumerate((0.30, 0.35, 0.40)):
        if drop != i:
            rows.append((1, EPOCH + s, s + 0.1, 0.0, 0.0, 1.0, 0.0, 0.5))
    for s in (0.50, 0.55, 0.60):
        rows.append((2, EPOCH + s, s, 0.2, 0.0, 1.0, 0.0, -1.0))
    rows.extend(extra)
    return write_csv(tmp_path / 'pred.csv', rows)


def test_truth_windows_of_the_tiny_track():
    truth = protocol_truth(*straight_track(), horizon=H)
    assert truth.n_grid == 3
    assert [w.index for w in truth.windows] == [1, 2]
    assert truth.skipped == {'gap': [], 'state': [0], 'standing': []}
    np.testing.assert_allclose(truth.windows[0].t - EPOCH, [0.30, 0.35, 0.40], atol=1e-6)
    assert truth.windows[1].start - EPOCH == pytest.approx(0.45, abs=1e-6)
    np.testing.assert_allclose(truth.windows[1].yaw_rate, 0.0, atol=1e-9)


def test_rmse_against_hand_computation(tmp_path):
    truth = protocol_truth(*straight_track(), horizon=H)
    s = score(truth, read_prediction_csv(tiny_csv(tmp_path)))
    assert s.windows == 2 and s.samples == 6 and s.ignored_csv_windows == 1
    assert s.pos_rmse == pytest.approx(math.sqrt((3 * 0.1**2 + 3 * 0.2**2) / 6), abs=2e-6)
    assert s.yaw_rate_rmse == pytest.approx(math.sqrt((3 * 0.5**2 + 3 * 1.0**2) / 6), abs=1e-9)
    assert s.yaw_rmse == pytest.approx(0.0, abs=1e-9)
    (k1, _, n1, pe1, re1, _, fe1), (k2, _, n2, pe2, re2, _, _) = s.per_window
    assert (k1, n1, k2, n2) == (1, 3, 2, 3)
    assert (pe1, re1, fe1) == pytest.approx((0.1, 0.5, 0.1), abs=2e-6)
    assert (pe2, re2) == pytest.approx((0.2, 1.0), abs=2e-6)


@pytest.mark.parametrize('kwargs, message', [
    ({'drop': 1}, 'window 1 needs one row'),
    ({'extra': [(2, EPOCH + 0.52, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)]}, 'window 2 needs one row'),
    ({'extra': [(2, EPOCH + 0.55, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)]}, 'repeated stamps'),
])
def test_rows_that_do_not_match_the_stamps_are_refused(tmp_path, kwargs, message):
    truth = protocol_truth(*straight_track(), horizon=H)
    with pytest.raises(EvaluationError, match=message):
        score(truth, read_prediction_csv(tiny_csv(tmp_path, **kwargs)))


def test_missing_window_is_refused(tmp_path):
    truth = protocol_truth(*straight_track(), horizon=H)
    rows = [(1, EPOCH + s, s, 0.0, 0.0, 1.0, 0.0, 0.0) for s in (0.30, 0.35, 0.40)]
    with pytest.raises(EvaluationError, match='no rows for window 2'):
        score(truth, read_prediction_csv(write_csv(tmp_path / 'p.csv', rows)))


@pytest.mark.parametrize('text, message', [
    ('window,t,x,y\n1,2,3,4\n', 'header'),
    (HEADER + '1,2,3,4,5,6,7,nan\n', 'line 2'),
    (HEADER + '1,2,3,4,5,6,7\n', 'line 2'),
    (HEADER + '1.5,2,3,4,5,6,7,8\n', 'line 2'),
    (HEADER + '1,2,3,4,x,6,7,8\n', 'line 2'),
])
def test_malformed_csv_is_one_line(tmp_path, text, message):
    path = tmp_path / 'bad.csv'
    path.write_text(text)
    with pytest.raises(EvaluationError, match=message):
        read_prediction_csv(path)


def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys):
    desc = tmp_path / 'r.yaml'
    desc.write_text('pose: {topic: /pose}\n')
    code = main(['--bag', str(tmp_path / 'missing.bag'), '--recording', str(desc),
                 '--pred', str(tmp_path / 'p.csv')])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith('error: ') and err.count('\n') == 1
    desc.write_text('steering: {topic: /s}\n')
    assert main(['--bag', 'x', '--recording', str(desc), '--pred', 'p']) == 2
    assert 'pose' in capsys.readouterr().err


def test_dart_bag_reads_despite_two_rosout_connections():
    root = realdata()
    rec = read_recording(root / 'dart/4_sept_random_driving_fast.bag',
                         root / 'recordings/example_dart_fast.yaml',
                         ('steering', 'drive', 'enable', 'wheel_speed'))
    assert rec.t.size == 3227
    assert rec.offset == (0.115, -0.01, -0.00769)
    assert rec.signals['steering'].t.size == 321 and rec.signals['drive'].t.size == 325
    assert set(np.unique(rec.signals['enable'].value)) == {0.0, 1.0}
    assert rec.signals['wheel_speed'].value.max() > 2.0  # encoder speed [m/s], index 3


@pytest.mark.parametrize('bag, desc', [
    ('dart/4_sept_random_driving_slow.bag', 'example_dart_fast.yaml'),
    ('frictionmaps/frictionmaps_DS2', 'example_frictionmaps.yaml'),
])
def test_both_protocol_implementations_agree_on_real_recordings(tmp_path, bag, desc):
    """The evaluator's own tiling/truth and the product's (baselines) give the same windows."""
    root = realdata()
    rec = read_recording(root / bag, root / 'recordings' / desc)
    truth = protocol_truth(rec.t, rec.x, rec.y, rec.yaw, 1.0)
    windows = make_windows(make_pose_track(rec.t, rec.x, rec.y, rec.yaw), 1.0)
    assert [w.index for w in truth.windows] == list(windows.index)
    assert truth.skipped == windows.skipped
    assert [w.start for w in truth.windows] == list(windows.start)
    if 'DS2' in bag:
        assert len(truth.skipped['gap']) >= 27  # the 27.8 s hole in the pose stream
    pred = ctrv_predict(windows)
    csv = tmp_path / 'ctrv.csv'
    csv.write_text(pred.to_csv_text())
    s = score(truth, read_prediction_csv(csv))
    assert s.samples == pred.t.size - windows.index.size  # every sample but the first ones
    # the CTRV rows of the first 0.1 s have the fitted yaw rate: close to the truth there
    first = np.isclose(windows.tau, 0.0)
    fitted_at_start = pred.yaw_rate[first]
    truth_next = np.array([w.yaw_rate[0] for w in truth.windows])
    ok = np.isfinite(truth_next)
    assert np.median(np.abs(fitted_at_start[ok] - truth_next[ok])) < 0.3
