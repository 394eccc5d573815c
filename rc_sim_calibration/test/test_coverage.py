"""Coverage warnings (rc_sim_calibration.coverage): hand-made signals whose lateral accelerations
and duties are known, and the real recordings whose gaps docs/calibration.md describes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rc_sim_calibration.coverage import LINEAR_LATERAL_ACCELERATION, coverage_warnings
from rc_sim_calibration.dataset import load_dataset
from rc_sim_calibration.staged import CMD_DT, Signals, signals
from rc_sim_description.constants import GRAVITY_MPS2 as G
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.testing import realdata_dir

L = 0.3
RATE = 50.0
ROOT = realdata_dir()
DOCS = Path(__file__).resolve().parents[2] / 'docs' / 'recordings'
needs_data = pytest.mark.skipif(ROOT is None, reason='real-recording corpus not available')


def _signals(segments: list[tuple[float, float, float, float]]) -> Signals:
    """Concatenated segments (seconds, speed [m/s], lateral acceleration [g], duty)."""
    v, r, d = [], [], []
    for secs, speed, ay_g, duty in segments:
        n = round(secs * RATE)
        v.append(np.full(n, speed))
        r.append(np.full(n, ay_g * G / speed))
        d.append(np.full(n, duty))
    t = np.arange(sum(x.size for x in v)) / RATE
    tc = np.arange(t[0] - 0.3, t[-1] + CMD_DT, CMD_DT)
    drive = np.interp(tc, t, np.concatenate(d))
    vv = np.concatenate(v)
    return Signals(t=t, v=vv, vy=0 * vv, r=np.concatenate(r), a=0 * vv, tc=tc,
                   steer=0 * tc, drive=drive)


def test_turns_near_the_limit_only_are_flagged_with_their_range() -> None:
    sig = _signals([(5.0, 2.0, 0.0, 0.3), (4.0, 2.0, 0.6, 0.35), (4.0, 2.0, -0.7, 0.45)])
    (line,) = [w for w in coverage_warnings([sig], L, 'wheel_speed') if 'turn' in w]
    assert '0.60-0.70 g' in line and '0.0 s below 0.3 g' in line


def test_two_seconds_of_gentle_turning_fix_the_map() -> None:
    near_limit = [(4.0, 2.0, 0.6, 0.3), (4.0, 2.0, -0.7, 0.5)]
    gentle = (2.1, 1.0, 0.1, 0.3)
    assert 0.1 * G < LINEAR_LATERAL_ACCELERATION
    assert any('turn' in w for w in coverage_warnings(
        [_signals([*near_limit, (1.8, 1.0, 0.1, 0.3)])], L, 'wheel_speed'))
    assert coverage_warnings([_signals([*near_limit, gentle])], L, 'wheel_speed') == []
    # ... in any recording of the training set
    assert coverage_warnings([_signals(near_limit), _signals([gentle])], L, 'wheel_speed') == []


def test_one_duty_level_is_flagged_for_a_throttle_drive_only() -> None:
    sig = _signals([(6.0, 1.5, 0.1, 0.47), (6.0, 1.5, 0.4, 0.5)])
    lines = coverage_warnings([sig], L, 'throttle')
    assert len(lines) == 1 and 'duties 0.47-0.50' in lines[0]
    assert coverage_warnings([sig], L, 'wheel_speed') == []
    steps = _signals([(6.0, 1.5, 0.1, 0.3), (6.0, 2.5, 0.4, 0.5)])
    assert coverage_warnings([steps], L, 'throttle') == []


def test_gentle_turns_only_are_flagged_until_a_tenth_of_the_driving_is_harder() -> None:
    gentle = [(8.0, 1.0, 0.1, 0.3), (8.0, 1.0, -0.08, 0.3)]
    (line,) = coverage_warnings([_signals(gentle)], L, 'wheel_speed')
    assert 'turn gently only' in line and 'below 0.10 g 90 % of the time' in line
    # 1.5 s of 17.5 s is not a tenth: still gentle; 2.5 s of 18.5 s is more than one
    assert coverage_warnings([_signals([*gentle, (1.5, 2.0, 0.3, 0.3)])], L, 'wheel_speed')
    assert coverage_warnings([_signals([*gentle, (2.5, 2.0, 0.3, 0.3)])], L, 'wheel_speed') == []


def test_samples_below_walking_pace_do_not_count() -> None:
    """Below 0.5 m/s neither the kinematic angle nor the duty counts: a slow crawl at duty 0.1
    neither widens the duty range nor counts as gentle turning."""
    sig = _signals([(6.0, 0.3, 0.05, 0.1), (6.0, 2.0, 0.6, 0.45), (6.0, 2.0, 0.6, 0.5)])
    lines = coverage_warnings([sig], L, 'throttle')
    assert len(lines) == 2 and 'only 0.0 s below 0.3 g' in lines[0]
    assert 'duties 0.45-0.50' in lines[1]


@needs_data
def test_the_dart_fast_recording_has_both_gaps_and_frictionmaps_none() -> None:
    dart = load_vehicle_params().with_values(wheelbase=0.1735, cg_to_front_axle=0.0805)
    ds = load_dataset(ROOT / 'dart/4_sept_random_driving_fast.bag', dart,
                      recording=DOCS / 'dart_fast.yaml')
    lines = coverage_warnings([signals(ds)], 0.1735, ds.drive_kind)
    assert len(lines) == 2 and 'g (10th-90th' in lines[0] and 'duties 0.4' in lines[1]
    p = load_vehicle_params()
    ds = load_dataset(ROOT / 'frictionmaps/frictionmaps_DS1', p,
                      recording=DOCS / 'frictionmaps.yaml')
    assert coverage_warnings([signals(ds)], p.geometry.wheelbase, ds.drive_kind) == []
