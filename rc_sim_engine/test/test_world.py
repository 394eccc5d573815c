"""SDF -> 2D obstacles: poses compose, geometry maps to boxes/discs, bad input is one line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rc_sim_description.errors import ConfigError
from rc_sim_engine.world.sdf import SdfWarning, World, load_world, parse_sdf, ring_track

SDF = '''<?xml version="1.0"?>
<sdf version="1.9">
  <world name="unit">
    <include><uri>https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ground Plane</uri></include>
    <model name="ground"><static>true</static>
      <link name="l"><collision name="c"><geometry><plane><normal>0 0 1</normal>
        <size>10 10</size></plane></geometry></collision></link>
    </model>
    <model name="wall">
      <pose>1 2 0 0 0 1.5707963267948966</pose>
      <link name="link"><pose>1 0 0.25 0 0 0</pose>
        <collision name="col"><pose>0 0 0 0 0 0.5</pose>
          <geometry><box><size>2 0.1 0.5</size></box></geometry></collision>
        <visual name="v"><geometry><box><size>9 9 9</size></box></geometry></visual>
      </link>
    </model>
    <model name="post">
      <pose degrees="true">-3 0 0 0 0 90</pose>
      <link name="link"><collision name="c"><pose>0 1 0.3 0 0 0</pose>
        <geometry><cylinder><radius>0.2</radius><length>0.6</length></cylinder></geometry>
      </collision></link>
    </model>
    <model name="outer">
      <model name="inner"><pose>0 0 0 0 0 0</pose>
        <link name="l"><collision name="c"><pose rotation_format="quat_xyzw">5 5 0.1 0 0 0.7071067811865476 0.7071067811865476</pose>
          <geometry><box><size>1 2 0.2</size></box></geometry></collision></link>
      </model>
    </model>
    <model name="odd">
      <link name="l"><collision name="m"><geometry><mesh><uri>x.dae</uri></mesh></geometry></collision>
        <collision name="tilted"><pose>0 0 0 0.3 0 0</pose>
          <geometry><box><size>1 1 1</size></box></geometry></collision>
      </link>
    </model>
  </world>
</sdf>
'''


def parse_quietly(text: str) -> World:
    with pytest.warns(SdfWarning):
        return parse_sdf(text, 'unit.sdf')


def test_boxes_and_cylinders_compose_poses() -> None:
    world = parse_quietly(SDF)
    assert world.name == 'unit'
    assert world.box_names == ('wall::link::col', 'outer::inner::l::c')
    # wall: model (1, 2, yaw 90 deg) * link (1, 0) -> (1, 3); yaw 90 deg + 0.5 rad
    np.testing.assert_allclose(world.boxes[0], [1.0, 3.0, math.pi / 2 + 0.5, 1.0, 0.05], atol=1e-12)
    np.testing.assert_allclose(world.box_z[0], [0.0, 0.5])
    # quaternion (0, 0, sin 45, cos 45) -> yaw 90 deg
    np.testing.assert_allclose(world.boxes[1], [5.0, 5.0, math.pi / 2, 0.5, 1.0], atol=1e-12)
    # post: degrees=true, model yaw 90 deg turns the link offset (0, 1) into (-1, 0)
    np.testing.assert_allclose(world.circles, [[-4.0, 0.0, 0.2]], atol=1e-12)
    np.testing.assert_allclose(world.circle_z, [[0.0, 0.6]], atol=1e-12)
    assert world.n_obstacles == 3


def test_unknown_geometry_and_tilted_box_are_skipped_with_warnings() -> None:
    with pytest.warns(SdfWarning) as record:
        parse_sdf(SDF, 'unit.sdf')
    messages = [str(w.message) for w in record]
    assert any('<mesh>' in m and 'odd::l::m' in m for m in messages)
    assert any('tilted' in m and 'odd::l::tilted' in m for m in messages)
    assert not any('Ground Plane' in m for m in messages)


def test_box_corners_and_segments() -> None:
    world = World('w', 's', boxes=np.array([[0.0, 0.0, math.pi / 2, 2.0, 1.0]]),
                  box_z=np.array([[0.0, 1.0]]), box_names=('b',))
    corners = world.box_corners()[0]
    np.testing.assert_allclose(sorted(map(tuple, np.round(corners, 12))),
                               sorted([(1.0, 2.0), (-1.0, 2.0), (-1.0, -2.0), (1.0, -2.0)]),
                               atol=1e-12)
    assert world.segments().shape == (4, 4)
    assert world.segments(z=2.0).shape == (0, 4)  # above the box: the lidar does not see it
    assert world.bounds(0.0) == pytest.approx((-1.0, 1.0, -2.0, 2.0))


def test_ring_track() -> None:
    world = ring_track(5.0, 9.0)
    np.testing.assert_allclose(world.round_obstacles(0.1)[:, 2], [5.0, 9.0])
    with pytest.raises(ConfigError, match='inner_radius'):
        ring_track(9.0, 5.0)


@pytest.mark.parametrize(('text', 'match'), [
    ('<sdf><world name="w"><model name="m">', 'malformed SDF'),
    ('<robot name="r"/>', 'not an SDF file'),
    ('<sdf version="1.9"></sdf>', 'exactly one <world>'),
    ('<sdf><world name="w"><model name="m"><pose>1 2 x 0 0 0</pose></model></world></sdf>',
     'm: <pose> is not numeric'),
    ('<sdf><world name="w"><model name="m"><pose>1 2</pose></model></world></sdf>',
     '<pose> needs 6 numbers'),
    ('<sdf><world name="w"><model name="m"><link name="l"><collision name="c"><geometry>'
     '<box><size>1 nan 1</size></box></geometry></collision></link></model></world></sdf>',
     'm::l::c: <size> needs 3 finite'),
    ('<sdf><world name="w"><model name="m"><link name="l"><collision name="c"><geometry>'
     '<cylinder><radius>-1</radius><length>1</length></cylinder></geometry></collision></link>'
     '</model></world></sdf>', 'radius must be > 0'),
    ('<sdf><world name="w"><model name="m"><pose relative_to="other">0 0 0 0 0 0</pose>'
     '</model></world></sdf>', 'unsupported <pose relative_to'),
])
def test_bad_sdf_is_one_line_error(text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        parse_sdf(text, 'bad.sdf')
    assert '\n' not in str(info.value)
    assert str(info.value).startswith('bad.sdf')


def test_load_world_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match='not found'):
        load_world(tmp_path / 'nope.sdf')


def test_shipped_worlds_load_cleanly() -> None:
    import warnings

    from rc_sim_description.paths import list_worlds, world_path

    names = list_worlds()
    if not names:
        pytest.skip('no worlds shipped yet')
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter('error', SdfWarning)
            world = load_world(world_path(name))
        assert world.name == name


def test_basic_track_lane_is_1_25_m_wide() -> None:
    """The spawn point lies on the lane centre: 0.625 m from the nearest wall face (shapely)."""
    from shapely.geometry import Point, Polygon

    from rc_sim_description.paths import list_worlds, world_path
    from rc_sim_description.worlds import spawn_pose

    if 'basic_track' not in list_worlds():
        pytest.skip('basic_track not shipped yet')
    path = world_path('basic_track')
    world = load_world(path)
    spawn = spawn_pose(path)
    gaps = [Polygon(c).distance(Point(spawn.x, spawn.y)) for c in world.box_corners()]
    assert min(gaps) == pytest.approx(0.625, abs=0.01)
