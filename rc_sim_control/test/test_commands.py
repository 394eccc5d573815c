"""Command sequences: signal generators, manoeuvres (checked by exact kinematics), YAML files."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rc_sim_control.ackermann import MapperConfig, map_sequence
from rc_sim_control.commands import (
    MANOEUVRES,
    CommandSequence,
    chirp,
    concatenate,
    constant,
    load_sequence,
    manoeuvre,
    ramp,
    sample,
    save_sequence,
    sine,
    step,
    time_grid,
)
from rc_sim_control.odometry import OdometryConfig, OdometryTrack, bicycle_odometry
from rc_sim_description.errors import ConfigError, OutputError
from rc_sim_description.params import load_vehicle_params

PARAMS = load_vehicle_params()
L = PARAMS.geometry.wheelbase
CONFIG_DIR = Path(__file__).resolve().parents[1] / 'config'


def drive(seq: CommandSequence) -> OdometryTrack:
    """Exact kinematic bicycle response to a steering_angle sequence (rear wheel rolling)."""
    odo = OdometryConfig.from_vehicle(PARAMS)
    return bicycle_odometry(seq.t, seq.linear_x / odo.wheel_radius, seq.angular_z, odo)


# --------------------------------------------------------------------------- signals
def test_signal_generators_against_formulas() -> None:
    t = time_grid(2.0, 10.0)
    assert t.size == 21 and t[-1] == pytest.approx(2.0)
    assert constant(t, 1.5).tolist() == [1.5] * 21
    assert step(t, 1.0, -1.0, 2.0)[[9, 10, 11]].tolist() == [-1.0, 2.0, 2.0]
    assert ramp(t, 0.5, 1.5, 0.0, 2.0)[[0, 5, 10, 15, 20]] == pytest.approx([0, 0, 1, 2, 2])
    assert sine(t, 2.0, 0.25, 1.0)[[0, 10, 20]] == pytest.approx([1.0, 3.0, 1.0])
    c = chirp(t, 1.0, 0.5, 1.5, 2.0)
    tt = t[7]
    assert c[7] == pytest.approx(math.sin(2 * math.pi * (0.5 * tt + 0.25 * tt ** 2)))
    assert chirp(t, 1.0, 0.7, 0.7, 2.0) == pytest.approx(sine(t, 1.0, 0.7))
    assert chirp([-1.0, 3.0], 1.0, 0.5, 1.5, 2.0).tolist() == [0.0, 0.0]


def test_sample_is_a_zero_order_hold() -> None:
    seq = CommandSequence([0.0, 1.0, 3.0], [1.0, 2.0, 3.0], [0.1, 0.2, 0.3], 'steering_angle')
    v, z = sample(seq, [-1.0, 0.0, 0.99, 1.0, 2.5, 3.0, 10.0])
    assert v.tolist() == [1.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert z.tolist() == [0.1, 0.1, 0.1, 0.2, 0.2, 0.3, 0.3]


def test_concatenate() -> None:
    a = CommandSequence([0.0, 1.0], [1.0, 1.0], [0.0, 0.0])
    b = CommandSequence([5.0, 6.0], [2.0, 0.0], [0.1, 0.1])
    c = concatenate([a, b], 'ab')
    assert c.t.tolist() == [0.0, 1.0, 2.0, 3.0] and c.linear_x.tolist() == [1, 1, 2, 0]
    with pytest.raises(ConfigError, match='mix modes'):
        concatenate([a, CommandSequence([0.0], [0.0], [0.0], 'yaw_rate')])


@pytest.mark.parametrize(('kw', 'match'), [
    ({'t': [0.0, 0.0]}, r't\[1\]: times must be strictly increasing'),
    ({'linear_x': [0.0, math.nan]}, r'linear_x\[1\]: must be finite, got nan'),
    ({'angular_z': [0.0]}, r'angular_z: has 1 samples, t has 2'),
    ({'mode': 'speed'}, r'mode: must be one of'),
])
def test_sequence_validation(kw: dict[str, object], match: str) -> None:
    args: dict[str, object] = {'t': [0.0, 1.0], 'linear_x': [0.0, 1.0], 'angular_z': [0.0, 0.0],
                               'mode': 'steering_angle', **kw}
    with pytest.raises(ConfigError, match=match):
        CommandSequence(**args)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- manoeuvres
@pytest.mark.parametrize('name', list(MANOEUVRES))
def test_every_manoeuvre_respects_limits_and_ends_at_rest(name: str) -> None:
    seq = manoeuvre(name, PARAMS)
    assert seq.name == name and seq.mode == 'steering_angle'
    assert np.abs(seq.angular_z).max() <= PARAMS.steering.max_steering_angle + 1e-15
    assert np.abs(seq.linear_x).max() <= PARAMS.max_speed + 1e-12
    assert seq.linear_x[-1] == 0.0 and seq.linear_x[0] == 0.0
    assert np.diff(seq.t) == pytest.approx(0.02)


@pytest.mark.parametrize(('name', 'sign'), [('circle_left', 1.0), ('circle_right', -1.0)])
def test_circle_has_the_requested_radius_and_closes(name: str, sign: float) -> None:
    radius = 1.7
    seq = manoeuvre(name, PARAMS, radius=radius, speed=1.2, laps=1.0)
    assert np.unique(seq.angular_z).tolist() == [sign * math.atan(L / radius)]
    path = drive(seq)
    centre_y = sign * radius
    assert np.hypot(path.x, path.y - centre_y) == pytest.approx(radius, abs=1e-9)
    assert path.yaw[-1] == pytest.approx(sign * 2 * math.pi, abs=0.05)


def test_figure_eight_visits_both_sides_and_closes() -> None:
    seq = manoeuvre('figure_eight', PARAMS, speed=1.0)
    path = drive(seq)
    radius = 2.0 * PARAMS.min_turning_radius
    assert path.y.max() == pytest.approx(2 * radius, abs=0.01)
    assert path.y.min() == pytest.approx(-2 * radius, abs=0.01)
    assert math.hypot(path.x[-1], path.y[-1]) < 0.01
    assert abs(path.yaw[-1]) < 0.05


def test_steps_reach_the_limits() -> None:
    steer = manoeuvre('steering_steps', PARAMS, levels=[0.5, 1.0], step_duration=1.0)
    d_max = PARAMS.steering.max_steering_angle
    assert sorted(set(np.round(steer.angular_z / d_max, 12))) == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert steer.duration == pytest.approx(9.0)
    speed = manoeuvre('speed_steps', PARAMS, levels=[1.0])
    assert speed.linear_x.max() == pytest.approx(PARAMS.max_speed)
    back = manoeuvre('speed_steps', PARAMS, levels=[0.5], reverse=True)
    assert back.linear_x.min() == pytest.approx(-0.5 * PARAMS.max_speed)


def test_yaw_rate_mode_manoeuvre_maps_back_to_the_same_steering() -> None:
    by_angle = manoeuvre('slalom', PARAMS)
    by_rate = manoeuvre('slalom', PARAMS, mode='yaw_rate')
    assert by_rate.mode == 'yaw_rate'
    mapper = MapperConfig.from_vehicle(PARAMS, mode='yaw_rate')
    mapped = map_sequence(by_rate.t, by_rate.linear_x, by_rate.angular_z, mapper,
                          rate_limited=False)
    moving = np.abs(by_rate.linear_x) >= mapper.standstill_speed
    assert mapped.steering_angle[moving] == pytest.approx(by_angle.angular_z[moving], abs=1e-12)


@pytest.mark.parametrize(('name', 'kw', 'match'), [
    ('circel_left', {}, r"unknown manoeuvre 'circel_left' \(did you mean 'circle_left'\?\)"),
    ('line', {'speed': 1e3}, r'manoeuvre line: speed: \|1000.0\| exceeds the vehicle limit'),
    ('circle_left', {'radius': 0.1}, r'radius: 0.1 m is below the minimum turning radius'),
    ('line', {'radius': 1.0}, r"unknown argument 'radius'"),
    ('line', {'duration': math.nan}, r'duration: must be a finite number'),
    ('steering_steps', {'levels': [1.5]}, r'levels: must be in \[0, 1\]'),
    ('line', {'duration': 1.0, 'ramp_time': 1.0}, r'ramp_time: twice it'),
    ('line', {'mode': 'radius'}, r'mode: must be steering_angle or yaw_rate'),
])
def test_manoeuvre_errors_are_one_line(name: str, kw: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        manoeuvre(name, PARAMS, **kw)  # type: ignore[arg-type]
    assert '\n' not in str(info.value)


def test_limits_follow_vehicle_yaml() -> None:
    faster = PARAMS.with_values(max_wheel_speed=2 * PARAMS.drive.max_wheel_speed)
    manoeuvre('line', faster, speed=1.5 * PARAMS.max_speed)
    with pytest.raises(ConfigError):
        manoeuvre('line', PARAMS, speed=1.5 * PARAMS.max_speed)


# --------------------------------------------------------------------------- files
def test_yaml_round_trip_is_exact(tmp_path: Path) -> None:
    seq = manoeuvre('steering_chirp', PARAMS, mode='yaw_rate', duration=4.0)
    path = tmp_path / 'chirp.yaml'
    save_sequence(seq, path)
    back = load_sequence(path)
    assert back.t.tolist() == seq.t.tolist()
    assert back.linear_x.tolist() == seq.linear_x.tolist()
    assert back.angular_z.tolist() == seq.angular_z.tolist()
    assert (back.mode, back.name, back.description) == (seq.mode, seq.name, seq.description)
    assert [p.name for p in tmp_path.iterdir()] == ['chirp.yaml']


def test_save_below_a_file_leaves_nothing(tmp_path: Path) -> None:
    seq = manoeuvre('line', PARAMS)
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    with pytest.raises(OutputError, match='not a directory'):
        save_sequence(seq, blocker / 'missing' / 'x.yaml')
    assert list(tmp_path.iterdir()) == [blocker]


def test_save_creates_missing_directories(tmp_path: Path) -> None:
    seq = manoeuvre('line', PARAMS)
    save_sequence(seq, tmp_path / 'new' / 'dir' / 'x.yaml')
    assert (tmp_path / 'new' / 'dir' / 'x.yaml').is_file()


@pytest.mark.parametrize(('text', 'match'), [
    ('mode: steering_angle\nt: [0, 1]\nlinear_x: [0, .nan]\nangular_z: [0, 0]\n',
     r'bad.yaml: linear_x\[1\]: must be finite, got nan'),
    ('mode: steering_angle\nt: [0, 1]\nlinear_x: [0, 1]\n', r'bad.yaml: angular_z: missing key'),
    ('mode: steering_angle\nt: [0, 1]\nlinear_x: [0, 1]\nangular_z: [0, x]\n',
     r"bad.yaml: angular_z\[1\]: must be a number, got 'x'"),
    ('mode: steering_angle\nt: [1, 0]\nlinear_x: [0, 1]\nangular_z: [0, 0]\n',
     r'bad.yaml: t\[1\]: times must be strictly increasing'),
    ('mode: yaw\nt: [0]\nlinear_x: [0]\nangular_z: [0]\n', r'bad.yaml: mode: must be one of'),
    ('mode: yaw_rate\nt: [0]\nlinear_x: [0]\nangular_z: [0]\nlinar_x: 1\n',
     r"bad.yaml: linar_x: unknown key \(did you mean 'linear_x'\?\)"),
    ('mode: yaw_rate\nt: 0\nlinear_x: [0]\nangular_z: [0]\n',
     r'bad.yaml: t: must be a list of numbers, got int'),
    ('- 1\n- 2\n', r'bad.yaml: top level must be a mapping'),
    ('mode: [unclosed\n', r'bad.yaml: malformed YAML at line'),
    ('', r'bad.yaml: top level must be a mapping'),
])
def test_load_errors_name_file_and_key(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / 'bad.yaml'
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as info:
        load_sequence(path)
    assert '\n' not in str(info.value)


def test_load_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r'sequence file .*nope\.yaml: file not found'):
        load_sequence(tmp_path / 'nope.yaml')
    garbage = tmp_path / 'garbage.yaml'
    garbage.write_bytes(b'\xff\xfe\x00\x81')
    with pytest.raises(ConfigError, match=r'garbage\.yaml: cannot read'):
        load_sequence(garbage)


@pytest.mark.parametrize('path', sorted(CONFIG_DIR.glob('sequence_*.yaml')), ids=lambda p: p.name)
def test_shipped_sequences_load(path: Path) -> None:
    seq = load_sequence(path)
    assert seq.linear_x[-1] == 0.0
    assert np.abs(seq.linear_x).max() <= PARAMS.max_speed
