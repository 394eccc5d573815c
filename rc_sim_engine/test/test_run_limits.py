"""Documented limits checked before anything is allocated, and a run whose state becomes
non-finite stopped at once: one-line errors naming the limit (and the variable that raises it)
or the first non-finite quantity and its time; exit 2 and nothing left behind."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
import re
import time

import numpy as np
import pytest

from rc_sim_control.commands import CommandSequence
from rc_sim_description.errors import ConfigError
from rc_sim_description.limits import SOFT_LIMITS
from rc_sim_description.params import VehicleParams, load_vehicle_params
from rc_sim_engine.cli import main
from rc_sim_engine.sim.simulator import SimConfig, Simulator
from rc_sim_engine.sim.streams import NonFiniteError, Series, check_finite
from rc_sim_engine.world.sdf import World

P = load_vehicle_params()
EMPTY = World('empty', 'test')
REPO = Path(__file__).resolve().parents[2]


def straight(v: float, end: float) -> CommandSequence:
    return CommandSequence(np.array([0.0, end]), np.array([v, 0.0]), np.zeros(2),
                           'steering_angle', 'straight')


def cli_error(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> str:
    out = tmp_path / 'out'
    assert main(['run', *args, '--out', str(out)]) == 2
    err = '\n'.join(line for line in capsys.readouterr().err.strip().splitlines()
                    if not line.startswith("compiling the engine's kernels"))  # after an edit
    assert err.startswith('error: ') and '\n' not in err and 'Traceback' not in err
    assert not out.exists() and not list(tmp_path.glob('.out.*'))  # nothing left behind
    return err


# ------------------------------------------------------------------ limits of the command line
def test_absurd_duration_scenario_end_and_pace_are_refused_at_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t0 = time.perf_counter()
    err = cli_error(capsys, tmp_path, '--scenario', 'line', '--duration', '1e7')
    assert 'RC_SIM_MAX_DURATION_S' in err and '86,400 s' in err and '--duration' in err
    endless = tmp_path / 'endless.yaml'
    endless.write_text('name: endless\nmode: curvature\nt: [0.0, 500000.0]\n'
                       'linear_x: [1.0, 0.0]\nangular_z: [0.0, 0.0]\n')
    err = cli_error(capsys, tmp_path, '--scenario', str(endless))
    assert "scenario 'endless' (ends at 500000 s)" in err and 'RC_SIM_MAX_DURATION_S' in err
    endless.write_text('name: endless\nmode: curvature\nt: [0.0, 1000000000.0]\n'
                       'linear_x: [1.0, 0.0]\nangular_z: [0.0, 0.0]\n')
    err = cli_error(capsys, tmp_path, '--scenario', str(endless))  # refused by the loader
    assert 'endless.yaml' in err and 't[1]' in err
    err = cli_error(capsys, tmp_path, '--world', 'flat_track', '--scenario', 'line',
                    '--realtime-factor', '1e-9')
    assert 'RC_SIM_MAX_PACED_WALL_S' in err and 'realtime factor 1e-09' in err
    assert time.perf_counter() - t0 < 60  # refused, not attempted (generous: a loaded machine)


def test_start_pose_far_outside_the_world(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    for start in (('1e6', '0', '0'), ('1e200', '1e200', '0')):
        err = cli_error(capsys, tmp_path, '--scenario', 'line', '--start', *start)
        assert 'start pose' in err and 'RC_SIM_MAX_WORLD_EXTENT_M' in err
    far = tmp_path / 'far.sdf'
    far.write_text((REPO / 'rc_sim_description' / 'worlds' / 'basic_track.sdf').read_text()
                   .replace('x=-0.5 y=-1.875', 'x=1e7 y=1e7'))
    assert 'start pose x=1e+07' in cli_error(capsys, tmp_path, '--world', str(far),
                                             '--scenario', 'line')


def test_soft_limits_are_raised_by_their_variable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('RC_SIM_MAX_DURATION_S', '2')
    assert 'limit of 2 s' in cli_error(capsys, tmp_path, '--world', 'flat_track', '--scenario',
                                       'line', '--duration', '3')
    monkeypatch.setenv('RC_SIM_MAX_DURATION_S', 'many')
    assert "RC_SIM_MAX_DURATION_S='many'" in cli_error(capsys, tmp_path, '--world',
                                                       'flat_track', '--scenario', 'line')
    monkeypatch.delenv('RC_SIM_MAX_DURATION_S')
    monkeypatch.setenv('RC_SIM_MAX_OBSTACLES', '10')
    assert 'obstacles' in cli_error(capsys, tmp_path, '--world', 'basic_track', '--scenario',
                                    'basic_track_lap')
    monkeypatch.delenv('RC_SIM_MAX_OBSTACLES')
    monkeypatch.setenv('RC_SIM_MAX_BAG_GB', '0.01')
    assert 'RC_SIM_MAX_BAG_GB' in cli_error(capsys, tmp_path, '--world', 'flat_track',
                                            '--scenario', 'line', '--duration', '60')
    monkeypatch.delenv('RC_SIM_MAX_BAG_GB')
    monkeypatch.setenv('RC_SIM_MAX_MEMORY_MB', '20')
    assert 'RC_SIM_MAX_MEMORY_MB' in cli_error(capsys, tmp_path, '--world', 'flat_track',
                                               '--scenario', 'line')
    monkeypatch.delenv('RC_SIM_MAX_MEMORY_MB')
    out = tmp_path / 'ok'
    monkeypatch.setenv('RC_SIM_MAX_DURATION_S', '100000')
    assert main(['run', '--world', 'flat_track', '--scenario', 'line', '--duration', '1',
                 '--no-plots', '--out', str(out)]) == 0


# ------------------------------------------------------------------ limits of the Simulator
def test_simulator_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match='RC_SIM_MAX_STEPS'):
        Simulator(P, EMPTY, SimConfig(dt=1e-6, lidar=False)).run(1e3, lambda t, o: (0, 0))
    sim = Simulator(P, EMPTY, SimConfig(lidar=False))
    with pytest.raises(ConfigError, match=r'recorded in memory.*RC_SIM_MAX_MEMORY_MB'):
        sim.play(straight(1.0, 10.0), duration=80_000.0)  # a day kept in memory: refused
    with pytest.raises(ConfigError, match='RC_SIM_MAX_DURATION_S'):
        sim.step_to(1e6)
    assert sim.time == 0.0
    monkeypatch.setenv('RC_SIM_MAX_CARS', '2')
    with pytest.raises(ConfigError, match='3 cars exceeds the limit of 2 cars'):
        Simulator(P, EMPTY, SimConfig(lidar=False), n=3)
    monkeypatch.setenv('RC_SIM_MAX_LIDAR_SAMPLES', '1000')
    with pytest.raises(ConfigError, match='lidar_samples: 1,081 beams'):
        Simulator(P, EMPTY, SimConfig())
    far = World('far', 'test', boxes=np.array([[2e4, 0.0, 0.0, 1.0, 1.0]]),
                box_z=np.array([[0.0, 1.0]]), box_names=('far',))
    with pytest.raises(ConfigError, match="world 'far': its obstacles reach"):
        Simulator(P, far, SimConfig(lidar=False))
    with pytest.raises(ConfigError, match='start pose x=0 y=-20000'):
        Simulator(P, EMPTY, SimConfig(lidar=False), start=(0.0, -2e4, 0.0))


def test_a_memory_recording_stops_at_the_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('RC_SIM_MAX_MEMORY_MB', '30')
    sim = Simulator(P, EMPTY, SimConfig())
    with pytest.raises(ConfigError, match='in-memory recording of this run passed 30 MB'):
        for k in range(1, 400):  # step by step: no duration known up front
            sim.step_to(float(k))
    assert 100.0 < sim.time < 200.0  # about 190 kB of scans and states per simulated second


def test_every_soft_limit_is_documented() -> None:
    text = (REPO / 'docs' / 'limits.md').read_text(encoding='utf-8')
    for limit in SOFT_LIMITS:
        assert limit.env in text, limit.env
        default = f'{limit.default:,.0f}' if limit.default >= 1 else f'{limit.default:g}'
        assert re.search(rf'\b{re.escape(default)}\b', text), (limit.env, default)


# ------------------------------------------------------------------ non-finite state
def unvalidated(**mass_values: float) -> VehicleParams:
    """A car the loader would refuse (its ranges and the step-stability check), built the way
    a Python user can: frozen dataclasses replaced without validation."""
    return replace(P, mass_properties=replace(P.mass_properties, **mass_values))


def test_a_diverging_run_stops_at_the_first_non_finite_step() -> None:
    absurd = unvalidated(mass=1e308)
    sim = Simulator(absurd, EMPTY, SimConfig(lidar=False))
    with pytest.raises(NonFiniteError, match=r'non-finite at t = 0\.001 s: car 0 state x = nan'):
        sim.play(straight(2.0, 2.0))
    assert sim.time == pytest.approx(0.001)
    tiny = unvalidated(yaw_inertia=1e-12)
    sim = Simulator([P, tiny], EMPTY, SimConfig(lidar=False),
                    start=[(0.0, 0.0, 0.0), (0.0, 3.0, 0.0)])
    seq = CommandSequence(np.array([0.0, 2.0]), np.array([2.0, 2.0]), np.array([0.3, 0.3]),
                          'steering_angle')
    with pytest.raises(NonFiniteError) as info:
        sim.play(seq)
    message = str(info.value)
    assert 'car 1 state' in message and '\n' not in message
    t_bad = float(re.search(r't = ([0-9.]+) s', message).group(1))  # type: ignore[union-attr]
    assert 0.0 < t_bad < 2.0 and sim.time == pytest.approx(t_bad, abs=1e-3)


def test_the_loader_refuses_a_car_the_step_cannot_integrate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stiff = tmp_path / 'stiff.yaml'
    stiff.write_text('mass_properties:\n  yaw_inertia: 1.0e-7\ntyres:\n'
                     '  cornering_stiffness_front: 1.0e+5\n  cornering_stiffness_rear: 1.0e+5\n')
    err = cli_error(capsys, tmp_path, '--params', str(stiff), '--scenario', 'line')
    assert 'stiff.yaml' in err and 'yaw_inertia' in err and 'engine step' in err


def test_a_diverging_cli_run_leaves_no_bag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import rc_sim_description.params as params_module
    monkeypatch.setattr(params_module, 'load_vehicle_params',
                        lambda *a, **k: unvalidated(mass=1e308))
    err = cli_error(capsys, tmp_path, '--scenario', 'basic_track_lap')
    assert 'non-finite at t = 0.001 s' in err and 'vehicle parameters' in err


def test_check_finite_names_the_first_sample_and_quantity() -> None:
    odom = Series(t_ns=np.array([0, 10, 20]), x=np.zeros((3, 2)), vx=np.zeros((3, 2)))
    imu = Series(t_ns=np.array([5, 15]), ay=np.array([[0.0, 0.0], [0.0, np.inf]]))
    odom['vx'][2, 1] = np.nan
    with pytest.raises(NonFiniteError, match=r't = 0\.000 s: car 1 imu\.ay = inf'):
        check_finite({'odom': odom, 'imu': imu})
    imu['ay'][1, 1] = 0.0
    with pytest.raises(NonFiniteError, match=r'car 1 odom\.vx = nan'):
        check_finite({'odom': odom, 'imu': imu})
