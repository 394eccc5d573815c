"""The tracks: committed SDF = generator output, required systems, lane geometry, free start pose."""

from __future__ import annotations

import math
from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from shapely.geometry import LineString, Point, Polygon
from shapely.ops import unary_union

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.paths import list_worlds, world_path
from rc_sim_description.worlds import (
    REQUIRED_SYSTEMS,
    TRACKS,
    SpawnPose,
    centre_line,
    inspect_world,
    spawn_pose,
    track_walls,
    world_sdf,
)

WORLDS = ['basic_track', 'figure_eight', 'flat_track']


def wall_polygons(path: Path) -> list[Polygon]:
    """Footprints of the wall boxes, read with ElementTree (model pose is the identity)."""
    polys = []
    root = ET.parse(path).getroot()
    for model in root.find('world').findall('model'):
        assert model.find('pose') is None
        for link in model.findall('link'):
            x, y, z, roll, pitch, yaw = (float(v) for v in (link.findtext('pose') or '0 0 0 0 0 0').split())
            for col in link.findall('collision'):
                box = col.find('geometry/box')
                if box is None:
                    continue
                assert col.find('pose') is None and roll == pitch == 0
                sx, sy, sz = (float(v) for v in box.findtext('size').split())
                assert math.isclose(z, 0.5 * sz)  # standing on the ground
                c, s = math.cos(yaw), math.sin(yaw)
                corners = [(x + c * u - s * v, y + s * u + c * v)
                           for u, v in ((sx / 2, sy / 2), (-sx / 2, sy / 2), (-sx / 2, -sy / 2),
                                        (sx / 2, -sy / 2))]
                polys.append(Polygon(corners))
    return polys


def car_footprint(pose: SpawnPose) -> Polygon:
    """Chassis box and wheels of the default car at a pose (base_link = rear axle centre)."""
    p = load_vehicle_params()
    g = p.geometry
    x0 = min(0.5 * g.wheelbase - 0.5 * g.chassis_length, -g.wheel_radius)
    x1 = max(0.5 * g.wheelbase + 0.5 * g.chassis_length, g.wheelbase + g.wheel_radius)
    half_y = max(0.5 * g.chassis_width, 0.5 * (g.track_width + g.wheel_width))
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    return Polygon([(pose.x + c * u - s * v, pose.y + s * u + c * v)
                    for u, v in ((x1, half_y), (x0, half_y), (x0, -half_y), (x1, -half_y))])


def test_shipped_worlds_are_listed() -> None:
    assert list_worlds() == WORLDS


@pytest.mark.parametrize('name', WORLDS)
def test_committed_world_equals_generator_output(name: str) -> None:
    spec = TRACKS[name]
    assert world_path(name).read_text() == world_sdf(spec, track_walls(spec)), (
        'regenerate with: python -m rc_sim_description.worlds --write')


@pytest.mark.parametrize('name', WORLDS)
def test_world_is_sdf_1_9_with_every_system(name: str) -> None:
    root = ET.parse(world_path(name)).getroot()
    assert root.get('version') == '1.9'
    world = root.find('world')
    assert world.get('name') == name
    plugins = {p.get('name'): p for p in world.findall('plugin')}
    assert set(plugins) == set(REQUIRED_SYSTEMS)
    assert plugins['gz::sim::systems::Sensors'].findtext('render_engine') == 'ogre2'
    for name_, p in plugins.items():
        short = name_.rsplit('::', 1)[1]
        expected = {'Physics': 'physics', 'UserCommands': 'user-commands',
                    'SceneBroadcaster': 'scene-broadcaster', 'Sensors': 'sensors',
                    'Imu': 'imu'}[short]
        assert p.get('filename') == f'gz-sim-{expected}-system'
    assert world.find('physics') is not None
    ground = world.find("model[@name='ground_plane']")
    assert ground.find('static').text == 'true'
    assert ground.find('link/collision/geometry/plane') is not None


@pytest.mark.parametrize('name', WORLDS)
def test_start_pose_is_documented_and_collision_free(name: str) -> None:
    pose = spawn_pose(world_path(name))
    assert pose == TRACKS[name].spawn
    walls = wall_polygons(world_path(name))
    car = car_footprint(pose)
    assert not any(car.intersects(w) for w in walls)
    info = inspect_world(world_path(name))
    assert (info.name, info.boxes, info.spawn) == (name, len(walls), pose)


def test_basic_track_is_an_8_by_5_m_oval_with_a_1_25_m_lane() -> None:
    walls = unary_union(wall_polygons(world_path('basic_track')))
    assert len(walls.geoms) == 2  # one outer and one inner closed wall
    outer, inner = sorted(walls.geoms, key=lambda g: -g.area)
    # inner faces of the outer wall: 8 m x 5 m; the walls are 0.1 m thick
    x0, y0, x1, y1 = outer.bounds
    assert (x1 - x0, y1 - y0) == pytest.approx((8.2, 5.2), abs=0.01)
    x0, y0, x1, y1 = inner.bounds
    assert (x1 - x0, y1 - y0) == pytest.approx((5.5, 2.5), abs=0.02)  # box ends overlap
    # the lane centre line stays 0.625 m from both walls (within the 1 cm polygon tolerance)
    line = LineString(centre_line(TRACKS['basic_track']))
    assert walls.distance(line) == pytest.approx(0.625, abs=0.011)
    for closed in (outer, inner):  # walls are closed: no gap a car could leave through
        assert len(closed.interiors) == 1


def test_figure_eight_track_holds_the_a_3_m_eight_with_an_open_crossing() -> None:
    walls = unary_union(wall_polygons(world_path('figure_eight')))
    t = np.linspace(0, 2 * np.pi, 4000)
    eight = LineString(np.column_stack([3 * np.sin(t), 3 * np.sin(t) * np.cos(t)]))
    assert walls.distance(eight) == pytest.approx(0.75, abs=0.011)  # lane 1.5 m wide
    # the crossing is open: a 1 m disc around the origin touches no wall
    assert not walls.intersects(Point(0, 0).buffer(1.0))
    assert len(walls.geoms) == 3  # outer wall + two islands


def test_spawn_pose_defaults_and_errors(tmp_path: Path) -> None:
    plain = tmp_path / 'w.sdf'
    plain.write_text('<sdf version="1.9"><world name="w"/></sdf>')
    assert spawn_pose(plain) == SpawnPose(0.0, 0.0, 0.0)
    bad = tmp_path / 'bad.sdf'
    bad.write_text('<!-- rc_sim spawn: x=1 y=nope yaw=0 -->\n<sdf/>')
    with pytest.raises(ConfigError, match='malformed rc_sim spawn comment'):
        spawn_pose(bad)
    with pytest.raises(ConfigError, match='cannot read world file'):
        spawn_pose(tmp_path / 'missing.sdf')
    with pytest.raises(ConfigError, match='lacks the system plugin gz::sim::systems::Physics'):
        inspect_world(plain)
    broken = tmp_path / 'broken.sdf'
    broken.write_text('<sdf><world>')
    with pytest.raises(ConfigError, match='malformed SDF'):
        inspect_world(broken)
