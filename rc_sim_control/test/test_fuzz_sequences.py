"""Fuzzing scenario files, manoeuvre arguments, trajectory and tracker parameters (hypothesis,
bounded). Property: a valid result or an RcSimError with a one-line message; never another
exception, never a hang or a huge allocation (the limits of commands.py and trajectories.py)."""

from __future__ import annotations

from pathlib import Path
import tempfile
from typing import Any

import numpy as np
import pytest

hypothesis = pytest.importorskip('hypothesis')
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rc_sim_control.ackermann import MAPPER_MODES  # noqa: E402
from rc_sim_control.commands import (  # noqa: E402
    MANOEUVRES,
    MAX_SEQUENCE_SAMPLES,
    CommandSequence,
    load_sequence,
    manoeuvre,
    sequence_from_mapping,
)
from rc_sim_control.tracking import TRACKER_DEFAULTS, tracker_values_problem  # noqa: E402
from rc_sim_control.trajectories import TRAJECTORY_NAMES, make_trajectory  # noqa: E402
from rc_sim_description.fuzzing import fuzz_settings, result_or_one_line_error  # noqa: E402
from rc_sim_description.params import load_vehicle_params  # noqa: E402

PARAMS = load_vehicle_params()
NUMBER = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.integers(-(10 ** 20), 10 ** 20),
                   st.sampled_from([0, -1, 1e-300, 1e9, 1e300, 0.5, 2.0, 10.0]))
ANY = st.one_of(NUMBER, st.none(), st.booleans(), st.text(max_size=6),
                st.lists(NUMBER, max_size=4))


@st.composite
def scenarios(draw: Any) -> Any:
    n = draw(st.integers(0, 6))
    out: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(['name', 'description', 'mode', 't', 'linear_x',
                                              'angular_z', 'speed']), max_size=7)):
        if key == 'mode':
            out[key] = draw(st.one_of(st.sampled_from(MAPPER_MODES), ANY))
        elif key in ('t', 'linear_x', 'angular_z'):
            out[key] = draw(st.one_of(
                st.lists(NUMBER, min_size=n, max_size=n),
                st.lists(st.floats(-10, 10), min_size=n, max_size=n).map(sorted),
                ANY))
        else:
            out[key] = draw(ANY)
    return draw(st.one_of(st.just(out), ANY))


@fuzz_settings(400)
@given(scenarios())
def test_scenario_mappings(data: Any) -> None:
    seq = result_or_one_line_error(sequence_from_mapping, data, 'fuzz.yaml')
    if seq is not None:
        assert isinstance(seq, CommandSequence)
        assert np.all(np.isfinite(seq.t)) and np.all(np.diff(seq.t) > 0)


@fuzz_settings(100)
@given(scenarios())
def test_scenario_files(data: Any) -> None:
    import yaml

    with tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False) as handle:
        handle.write(yaml.safe_dump(data) if not isinstance(data, str) else data)
    try:
        result_or_one_line_error(load_sequence, handle.name)
    finally:
        Path(handle.name).unlink()


@fuzz_settings(300)
@given(st.sampled_from([*MANOEUVRES, 'figure_eight', 'circle']),
       st.dictionaries(st.sampled_from(['speed', 'radius', 'laps', 'duration', 'ramp_time',
                                        'levels', 'step_duration', 'amplitude', 'frequency',
                                        'f_start', 'f_end', 'reverse', 'bogus']),
                       ANY, max_size=4),
       st.sampled_from(['steering_angle', 'yaw_rate', 'radius']),
       st.one_of(st.just(50.0), NUMBER))
def test_manoeuvre_arguments(name: str, kwargs: dict[str, Any], mode: str,
                             rate_hz: Any) -> None:
    seq = result_or_one_line_error(manoeuvre, name, PARAMS, mode=mode, rate_hz=rate_hz,
                                   **kwargs)
    if seq is not None:
        assert len(seq) <= MAX_SEQUENCE_SAMPLES
        assert np.all(np.isfinite(seq.linear_x)) and np.all(np.isfinite(seq.angular_z))


@fuzz_settings(300)
@given(st.sampled_from([*TRAJECTORY_NAMES, 'figure_eight', 'spiral']),
       st.dictionaries(st.sampled_from(['a', 'b', 'radius', 'angular_speed', 'amplitude',
                                        'distance', 'x']), ANY, max_size=3))
def test_trajectory_parameters(name: str, parameters: dict[str, Any]) -> None:
    traj = result_or_one_line_error(make_trajectory, name, **parameters)
    if traj is not None:
        s = traj.sample(np.linspace(0.0, min(traj.default_duration, 1e3), 50))
        assert all(np.all(np.isfinite(getattr(s, f))) for f in ('x', 'y', 'vx', 'vy'))


@fuzz_settings(300)
@given(st.dictionaries(st.sampled_from(sorted(TRACKER_DEFAULTS)), ANY, max_size=4))
def test_tracker_parameters(changes: dict[str, Any]) -> None:
    problem = tracker_values_problem({**TRACKER_DEFAULTS, **changes})
    assert problem is None or (isinstance(problem, str) and '\n' not in problem)
