"""Data-file lookup: the ament index of a ROS 2 install is read without importing ROS."""

from __future__ import annotations

import os
from pathlib import Path

from rc_sim_description.paths import ament_share


def _install(prefix: Path, package: str) -> None:
    marker = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / package
    marker.parent.mkdir(parents=True)
    marker.write_text('')


def test_ament_share_follows_the_prefix_path_in_order(tmp_path: Path) -> None:
    first, second, empty = tmp_path / 'ws', tmp_path / 'opt', tmp_path / 'none'
    _install(second, 'rc_sim_engine')
    _install(first, 'rc_sim_engine')
    empty.mkdir()
    prefixes = os.pathsep.join([str(empty), str(first), '', str(second)])
    assert ament_share('rc_sim_engine', prefixes) == first / 'share' / 'rc_sim_engine'
    assert ament_share('rc_sim_sensors', prefixes) is None
    assert ament_share('rc_sim_engine', '') is None


def test_ament_share_reads_the_environment(tmp_path: Path, monkeypatch) -> None:
    _install(tmp_path, 'rc_sim_control')
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path))
    assert ament_share('rc_sim_control') == tmp_path / 'share' / 'rc_sim_control'
    monkeypatch.delenv('AMENT_PREFIX_PATH')
    assert ament_share('rc_sim_control') is None
