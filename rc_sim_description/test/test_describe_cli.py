"""`rcsim describe`: summary of the validated car and worlds; one-line errors; atomic --out."""

from __future__ import annotations

import argparse
from pathlib import Path
import xml.etree.ElementTree as ET

import pytest

from rc_sim_description.cli import register
from rc_sim_description.cli_support import run_cli


def rcsim(argv: list[str]) -> int:
    """What the `rcsim` dispatcher (rc_sim_engine.cli) does with this module's subcommand."""
    parser = argparse.ArgumentParser(prog='rcsim')
    register(parser.add_subparsers(dest='command'))
    args = parser.parse_args(argv)
    return run_cli(lambda: int(args.func(args)))


def test_describe_prints_the_vehicle_and_the_worlds(capsys: pytest.CaptureFixture[str]) -> None:
    assert rcsim(['describe']) == 0
    out = capsys.readouterr().out
    assert 'mass                 3.74 kg' in out
    assert 'wheelbase            0.3302 m' in out
    assert 'min turning radius   0.742 m' in out  # 0.3302 / tan(0.4189)
    assert 'max speed            10.00 m/s' in out  # 200 rad/s * 0.05 m
    assert 'lidar                1081 beams, 270 deg, 0.06-10 m, 40 Hz' in out
    assert 'URDF                 10 links, 9 joints (6 moving)' in out
    for world in ('basic_track', 'figure_eight', 'flat_track'):
        assert f'  {world}' in out
    assert 'start x=-0.5 y=-1.875 yaw=0' in out


def test_describe_with_override_and_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    over = tmp_path / 'cal.yaml'
    over.write_text('geometry:\n  wheelbase: 0.35\n')
    out_dir = tmp_path / 'desc'
    assert rcsim(['describe', '--params', str(over), '--out', str(out_dir), '--no-lidar']) == 0
    text = capsys.readouterr().out
    assert 'wheelbase            0.35 m' in text and '9 links' in text
    robot = ET.parse(out_dir / 'rc_car.urdf').getroot()
    joint = robot.find("joint[@name='front_left_steering_joint']/origin")
    assert joint.get('xyz').split()[0] == '0.35'
    assert (out_dir / 'summary.txt').read_text() in text
    # an existing output is refused before any work, and left untouched
    assert rcsim(['describe', '--out', str(out_dir)]) == 2
    assert 'exists already' in capsys.readouterr().err


def test_bad_override_is_one_line_without_traceback(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / 'bad.yaml'
    bad.write_text('geometry:\n  wheelbase: [1, 2\n')
    out_dir = tmp_path / 'never'
    assert rcsim(['describe', '--params', str(bad), '--out', str(out_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f'error: {bad}: malformed YAML at line')
    assert err.count('\n') == 1 and 'Traceback' not in err
    assert not out_dir.exists() and list(tmp_path.iterdir()) == [bad]
