"""The engine's rooms (docs/architecture.md): each room's public names resolve lazily to the
objects of its modules, and ``sim/run_setup.py`` is the one way in for a run."""

from __future__ import annotations

import importlib
import math
from pathlib import Path

import numpy as np
import pytest

from rc_sim_description.errors import ConfigError
from rc_sim_engine.sim.run_setup import (
    RunSpec,
    lidar_error_config,
    load_any_world,
    prepare_run,
)

ROOMS = ('compiled', 'vehicle', 'world', 'sim', 'racing', 'scenarios', 'output', 'live')
PACKAGE = Path(__file__).resolve().parents[1] / 'rc_sim_engine'


@pytest.mark.parametrize('room', ROOMS)
def test_every_public_name_of_a_room_is_the_object_of_its_module(room: str) -> None:
    if room == 'racing':
        pytest.importorskip('gymnasium')
    package = importlib.import_module(f'rc_sim_engine.{room}')
    assert package.__all__, room
    modules = {p.stem for p in (PACKAGE / room).glob('*.py') if not p.stem.startswith('_')}
    for name in package.__all__:
        value = getattr(package, name)
        owners = [m for m in modules
                  if getattr(importlib.import_module(f'rc_sim_engine.{room}.{m}'), name,
                             None) is value]
        assert owners, f'{room}.{name} is not the object of any module of the room'
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match='no attribute'):
        package.not_a_name  # noqa: B018


def test_a_room_imports_only_the_module_of_the_name_asked_for() -> None:
    import subprocess
    import sys

    code = ('import sys\nfrom rc_sim_engine.world import is_map_yaml\n'
            'print(sorted(m for m in sys.modules if m.startswith("rc_sim_engine.world.")))\n')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['rc_sim_engine.world.track_map']"


def test_run_spec_names_the_option_of_a_bad_value() -> None:
    for kwargs, match in (({'duration_s': -1.0}, '--duration'), ({'seed': -3}, '--seed'),
                          ({'speed_mps': math.nan}, '--speed'),
                          ({'realtime_factor': -1.0}, '--realtime-factor'),
                          ({'cars': 0}, '--cars'),
                          ({'cars': 3, 'start': ((0, 0, 0), (1, 0, 0))}, '--start given 2'),
                          ({'start': ((0.0, math.inf, 0.0),)}, '--start')):
        with pytest.raises(ConfigError, match=match):
            RunSpec(scenario='line', **kwargs)
    with pytest.raises(ConfigError, match='exactly one of --scenario and --cmd-vel-bag'):
        RunSpec()
    with pytest.raises(ConfigError, match="--lidar-errors: 'hokuyo' is neither a preset"):
        lidar_error_config('hokuyo')
    assert lidar_error_config(None) is None and lidar_error_config('') is None


def test_rcsim_run_help_shows_the_run_spec_defaults() -> None:
    from rc_sim_engine.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices['run']  # type: ignore[union-attr]
    defaults = {a.dest: a.default for a in sub._actions}
    for dest, field in (('world', 'world'), ('model', 'model'), ('seed', 'seed'),
                        ('cars', 'cars'), ('realtime_factor', 'realtime_factor'),
                        ('mode', 'mapper_mode'), ('collision', 'collision')):
        assert defaults[dest] == RunSpec.default(field), dest
    assert f'(default: {RunSpec.default("world")})' in ' '.join(sub.format_help().split())


def test_prepare_run_builds_the_run_rcsim_run_plays(tmp_path: Path) -> None:
    """A scenario that does not fit at the spawn pose is moved (with a note), the time covered
    is the scenario plus the settling second, and the simulator starts there."""
    from rc_sim_engine.cli import main as rcsim
    from rc_sim_engine.sim.simulator import SETTLE_TIME

    lines: list[str] = []
    run = prepare_run(RunSpec(world='basic_track', scenario='line', duration_s=3.0),
                      lines.append)
    assert run.label == 'line' and run.total_s == 3.0 and run.starts.shape == (1, 3)
    assert run.world.path.name == 'basic_track.sdf'
    x, y, yaw = run.simulator.car.base_link_pose()
    assert np.allclose([x[0], y[0], yaw[0]], run.starts[0])
    full = prepare_run(RunSpec(world='flat_track', scenario='circle_left'), compile_kernels=False)
    assert full.total_s == pytest.approx(float(full.sequence.t[-1]) + SETTLE_TIME)
    out = tmp_path / 'run'
    assert rcsim(['run', '--world', 'basic_track', '--scenario', 'line', '--duration', '3',
                  '--no-plots', '--out', str(out)]) == 0
    import yaml

    summary = yaml.safe_load((out / 'summary.yaml').read_text())
    assert np.allclose(summary['start'], run.starts[0])
    with pytest.raises(ConfigError, match=r"unknown scenario 'lin'.*did you mean 'line'"):
        prepare_run(RunSpec(scenario='lin'), compile_kernels=False)


def test_worlds_load_the_same_way_for_every_entry(tmp_path: Path) -> None:
    """A shipped SDF world and a map_server track map, with their spawn poses."""
    sdf = load_any_world('basic_track')
    assert sdf.world.name and len(sdf.spawn) == 3
    maps = sorted((PACKAGE.parent / 'config' / 'maps').glob('*.yaml'))
    track = load_any_world(str(maps[0]))
    assert track.path == maps[0] and all(math.isfinite(v) for v in track.spawn)
    assert load_any_world(maps[0].stem).path == track.path  # a shipped map by its name
    with pytest.raises(ConfigError):
        load_any_world(str(tmp_path / 'nope.sdf'))
    with pytest.raises(ConfigError, match="unknown world 'basic_trak'"):
        load_any_world('basic_trak')
