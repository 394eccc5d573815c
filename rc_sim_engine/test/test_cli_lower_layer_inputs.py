"""Inputs of the lower layers refused through the engine: damaged and refused bags through
``rcsim`` (inspect, lidar stats, evaluate) and a hostile SDF through the engine's world reader.

These end-to-end checks live here, not with the bag layer and the XML reader they exercise in
rc_sim_description, because a package's tests import only that package and the ones below it.
"""

from __future__ import annotations

from pathlib import Path
import sqlite3

import pytest

from rc_sim_description.bags.typestore import base_typestore
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.errors import ConfigError
from rc_sim_description.testing import realdata_dir
from rc_sim_engine.cli import main
from rc_sim_engine.world.sdf import parse_sdf

REALDATA = realdata_dir()
R2 = 'rosbag2_tests/'


def _bag(path: Path, n: int = 200) -> Path:
    types = base_typestore().types
    with BagWriter(path, storage='sqlite3') as bag:
        for k in range(n):
            bag.write('/value', 'std_msgs/msg/Float64', 1_000_000 * k,
                      types['std_msgs/msg/Float64'](data=float(k)))
            bag.write('/name', 'std_msgs/msg/String', 1_000_000 * k + 1,
                      types['std_msgs/msg/String'](data=f'message {k} ' + 'x' * 200))
    return path


def test_skip_corrupt_cli_flag_prints_one_warning_line(tmp_path, capsys):
    bag = _bag(tmp_path / 'd')
    db = sqlite3.connect(next(bag.glob('*.db3')))
    db.execute('UPDATE messages SET topic_id = 99 WHERE id % 10 = 0')
    db.commit()
    db.close()
    assert main(['inspect', '--bag', str(bag)]) == 2
    assert capsys.readouterr().err.count('\n') == 1
    assert main(['inspect', '--bag', str(bag), '--skip-corrupt']) == 0
    err = capsys.readouterr().err
    assert err.startswith('warning: ') and 'Traceback' not in err


@pytest.mark.skipif(REALDATA is None, reason='real-recording corpus not available')
@pytest.mark.parametrize(('rel', 'fragment'), [
    ('ccny_hokuyo/laser_scan_sparsifier_demo_v1.2.bag', "legacy ROS 1 bag format '#ROSRECORD V1.2'"),
    (R2 + 'rosbag2_tests/resources/sqlite3/wrong_rmw_test',
     "has serialization format 'wrong_format'"),
])
@pytest.mark.parametrize('command', ['inspect', 'lidar stats', 'evaluate'])
def test_refused_in_one_line_through_the_cli(capsys, rel, fragment, command):
    assert REALDATA is not None
    code = main([*command.split(), '--bag', str(REALDATA / rel)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith('error: ') and err.count('\n') == 1 and fragment in err


def test_deep_sdf_world_through_the_engine_reader() -> None:
    depth = 5_000
    text = ('<sdf version="1.9"><world name="w">' + '<model name="m">' * depth
            + '</model>' * depth + '</world></sdf>')
    with pytest.raises(ConfigError) as exc:
        parse_sdf(text, source='deep.sdf')
    msg = str(exc.value)
    assert '\n' not in msg and 'deep.sdf' in msg
