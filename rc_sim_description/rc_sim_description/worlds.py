"""The shipped tracks: wall generator for ``worlds/*.sdf`` and their documented spawn poses.

Each walled track is a lane of constant width around a closed centre line: the lane is the set of
points closer than ``lane_width / 2`` to the centre line (a Minkowski buffer, computed with
shapely), so a self-crossing centre line (the figure eight) gives an open crossing. Every boundary
ring of the lane is simplified to a polyline (sagitta <= ``tolerance``) and each segment becomes
one static wall box whose inner face lies on the lane boundary. Walls are plain ``<box>``
collisions (one link per wall, pose ``x y z 0 0 yaw``), which Gazebo and the embedded engine read.

Spawn poses are written into each world as ``<!-- rc_sim spawn: x=.. y=.. yaw=.. -->`` and read
back by :func:`spawn_pose` (launch file, engine), so each pose lives in one place.

Regenerate the committed worlds with ``python -m rc_sim_description.worlds --write`` (needs
shapely); a test checks that the committed files equal the generator output.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import math
import os
from pathlib import Path
import re

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.errors import ConfigError

__all__ = ['REQUIRED_SYSTEMS', 'TRACKS', 'SpawnPose', 'TrackSpec', 'WallBox', 'WorldInfo',
           'centre_line', 'inspect_world', 'spawn_pose', 'track_walls', 'world_sdf']

FloatArray = NDArray[np.float64]

# World systems every rc-sim world declares (a world with any <plugin> loses gz's defaults).
REQUIRED_SYSTEMS = ('gz::sim::systems::Physics', 'gz::sim::systems::UserCommands',
                    'gz::sim::systems::SceneBroadcaster', 'gz::sim::systems::Sensors',
                    'gz::sim::systems::Imu')

_SPAWN_RE = re.compile(r'<!--\s*rc_sim spawn:\s*x=(\S+)\s+y=(\S+)\s+yaw=(\S+)\s*-->')


@dataclass(frozen=True)
class SpawnPose:
    """Start pose of base_link in the world (= odom) frame [m, m, rad]."""

    x: float
    y: float
    yaw: float


@dataclass(frozen=True)
class WallBox:
    """A static wall on the ground: centre (x, y) [m] and yaw [rad] in the world, box size [m]."""

    x: float
    y: float
    yaw: float
    length: float
    thickness: float
    height: float


@dataclass(frozen=True)
class TrackSpec:
    """A generated world: centre-line shape, lane width and where the car starts.

    ``shape`` is ``'none'`` (ground plane only), ``'stadium'`` (two straights of ``size[0]``
    joined by half circles of radius ``size[1]``, centred on the origin, straights along x) or
    ``'gerono'`` (lemniscate of Gerono x = a sin t, y = a sin t cos t, a = ``size[0]``: a figure
    eight).
    """

    name: str
    description: str
    shape: str
    size: tuple[float, ...]
    lane_width: float
    spawn: SpawnPose
    wall_thickness: float = 0.1
    wall_height: float = 0.3
    tolerance: float = 0.01


TRACKS: dict[str, TrackSpec] = {
    'flat_track': TrackSpec(
        name='flat_track', description='flat ground plane, no walls (minimal reference world)',
        shape='none', size=(), lane_width=0.0, spawn=SpawnPose(0.0, 0.0, 0.0)),
    'basic_track': TrackSpec(
        name='basic_track',
        description='oval (stadium) track 8 m x 5 m outside, 1.25 m lane bounded by walls; '
                    'the car starts on the lower straight heading +x (counter-clockwise laps)',
        shape='stadium', size=(3.0, 1.875), lane_width=1.25,
        spawn=SpawnPose(-0.5, -1.875, 0.0)),
    'figure_eight': TrackSpec(
        name='figure_eight',
        description='1.5 m lane around the figure eight x = a sin t, y = a sin t cos t, a = 3 m '
                    '(a lemniscate of Gerono); the crossing at the origin is open; the car '
                    'starts at the crossing heading along the eight (yaw = pi/4)',
        shape='gerono', size=(3.0,), lane_width=1.5,
        spawn=SpawnPose(0.0, 0.0, math.pi / 4)),
}


# --------------------------------------------------------------------------- geometry
def centre_line(spec: TrackSpec, samples: int = 2000) -> FloatArray:
    """(N, 2) closed centre line of a track (first point repeated at the end)."""
    t = np.linspace(0.0, 2.0 * math.pi, samples)
    if spec.shape == 'gerono':
        (a,) = spec.size
        return np.column_stack([a * np.sin(t), a * np.sin(t) * np.cos(t)])
    if spec.shape == 'stadium':  # the stadium is the radius-R buffer of the straight segment
        from shapely.geometry import LineString

        straight, radius = spec.size
        segment = LineString([(-0.5 * straight, 0.0), (0.5 * straight, 0.0)])
        ring = segment.buffer(radius, quad_segs=samples // 4).exterior
        return np.asarray(ring.coords, dtype=np.float64)
    raise ConfigError(f'track {spec.name!r}: no centre line for shape {spec.shape!r}')


def track_walls(spec: TrackSpec) -> list[WallBox]:
    """Wall boxes along every boundary ring of the lane (empty for a plane-only world)."""
    if spec.shape == 'none':
        return []
    from shapely.geometry import LineString
    from shapely.geometry.polygon import orient

    lane = LineString(centre_line(spec)).buffer(0.5 * spec.lane_width, quad_segs=64)
    lane = orient(lane.simplify(spec.tolerance), sign=1.0)  # exterior CCW, holes CW
    walls: list[WallBox] = []
    for ring in [lane.exterior, *lane.interiors]:
        walls += _ring_walls(np.asarray(ring.coords), spec)
    return walls


def _ring_walls(ring: FloatArray, spec: TrackSpec) -> list[WallBox]:
    """Boxes on the segments of a closed oriented ring; the lane is on the left of every segment.

    Each box spans [0, t] to the right of its segment. Where the ring turns left by theta, the
    boxes leave a wedge-shaped gap on the wall side: both boxes are lengthened by t tan(theta / 2)
    (the mitre), which closes it without entering the lane; a right turn needs nothing.
    """
    d = np.diff(ring, axis=0)
    length = np.hypot(d[:, 0], d[:, 1])
    d, length = d[length > 1e-9], length[length > 1e-9]
    u = d / length[:, None]
    p0 = np.cumsum(np.vstack([ring[:1], d]), axis=0)[:-1]
    prev = np.roll(u, 1, axis=0)
    turn = np.arctan2(prev[:, 0] * u[:, 1] - prev[:, 1] * u[:, 0], np.sum(prev * u, axis=1))
    t = spec.wall_thickness
    grow_start = t * np.tan(0.5 * np.clip(turn, 0.0, math.radians(170.0)))
    grow_end = np.roll(grow_start, -1)
    outward = np.column_stack([u[:, 1], -u[:, 0]])  # right-hand normal: away from the lane
    centre = (p0 + (0.5 * (length + grow_end - grow_start))[:, None] * u
              + 0.5 * t * outward)
    yaw = np.arctan2(u[:, 1], u[:, 0])
    size = length + grow_start + grow_end
    return [WallBox(float(c[0]), float(c[1]), float(a), float(n), t, spec.wall_height)
            for c, a, n in zip(centre, yaw, size)]


# --------------------------------------------------------------------------- SDF text
def _f(v: float) -> str:
    return f'{v:.4f}'.rstrip('0').rstrip('.') if v != 0 else '0'


_HEADER = '''<?xml version="1.0"?>
<!--
  {name}: {description}.
  Generated by rc_sim_description/worlds.py (python -m rc_sim_description.worlds -w):
  edit the generator, not this file. Walls are static <box> collisions, one link per wall.
  Car start pose (base_link in the world/odom frame, x [m] y [m] yaw [rad]), collision-free:
-->
<!-- rc_sim spawn: x={x} y={y} yaw={yaw} -->
<sdf version="1.9">
  <world name="{name}">
    <physics name="1ms" type="ignored">
      <max_step_size>0.001</max_step_size>
      <real_time_factor>1.0</real_time_factor>
    </physics>
    <!-- Any <plugin> disables the default server config: list every needed system. -->
    <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
    <plugin filename="gz-sim-user-commands-system" name="gz::sim::systems::UserCommands"/>
    <plugin filename="gz-sim-scene-broadcaster-system" name="gz::sim::systems::SceneBroadcaster"/>
    <plugin filename="gz-sim-sensors-system" name="gz::sim::systems::Sensors">
      <render_engine>ogre2</render_engine>
    </plugin>
    <plugin filename="gz-sim-imu-system" name="gz::sim::systems::Imu"/>
    <gravity>0 0 -{gravity}</gravity>
    <scene>
      <ambient>0.6 0.6 0.6 1</ambient>
      <background>0.8 0.8 0.8 1</background>
      <shadows>false</shadows>
    </scene>
    <light type="directional" name="sun">
      <cast_shadows>false</cast_shadows>
      <pose>0 0 10 0 0 0</pose>
      <diffuse>0.9 0.9 0.9 1</diffuse>
      <specular>0.2 0.2 0.2 1</specular>
      <direction>-0.5 0.1 -0.9</direction>
    </light>
    <model name="ground_plane">
      <static>true</static>
      <link name="link">
        <collision name="collision">
          <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
          <!-- High ground friction: the tyre's mu1/mu2 (vehicle.yaml) set the contact
               (the physics engines combine two surfaces by the smaller coefficient). -->
          <surface><friction><ode><mu>100</mu><mu2>100</mu2></ode></friction></surface>
        </collision>
        <visual name="visual">
          <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
          <material><ambient>0.5 0.5 0.5 1</ambient><diffuse>0.5 0.5 0.5 1</diffuse></material>
        </visual>
      </link>
    </model>
'''

_WALL = '''      <link name="wall_{i:03d}">
        <pose>{x} {y} {z} 0 0 {yaw}</pose>
        <collision name="collision">
          <geometry><box><size>{sx} {sy} {sz}</size></box></geometry>
        </collision>
        <visual name="visual">
          <geometry><box><size>{sx} {sy} {sz}</size></box></geometry>
          <material><ambient>0.2 0.2 0.7 1</ambient><diffuse>0.2 0.2 0.7 1</diffuse></material>
        </visual>
      </link>
'''


def world_sdf(spec: TrackSpec, walls: list[WallBox]) -> str:
    """The SDF 1.9 text of a world (header, systems, ground plane, one static model of walls)."""
    text = _HEADER.format(name=spec.name, description=spec.description, x=_f(spec.spawn.x),
                          y=_f(spec.spawn.y), yaw=repr(spec.spawn.yaw),
                          gravity=repr(GRAVITY_MPS2))
    if walls:
        text += '    <model name="walls">\n      <static>true</static>\n'
        for i, w in enumerate(walls):
            text += _WALL.format(i=i, x=_f(w.x), y=_f(w.y), z=_f(0.5 * w.height), yaw=_f(w.yaw),
                                 sx=_f(w.length), sy=_f(w.thickness), sz=_f(w.height))
        text += '    </model>\n'
    return text + '  </world>\n</sdf>\n'


def spawn_pose(world: str | os.PathLike[str]) -> SpawnPose:
    """Start pose documented in a world file (``<!-- rc_sim spawn: x=.. y=.. yaw=.. -->``).

    A world without that comment (e.g. a user's own SDF) starts at the origin.
    """
    path = Path(world)
    try:
        text = path.read_text(encoding='utf-8')
    except OSError as exc:
        raise ConfigError(f'{path}: cannot read world file ({exc.strerror})') from None
    match = _SPAWN_RE.search(text)
    if match is None:
        return SpawnPose(0.0, 0.0, 0.0)
    try:
        x, y, yaw = (float(v) for v in match.groups())
    except ValueError:
        raise ConfigError(f'{path}: malformed rc_sim spawn comment {match.group(0)!r}') from None
    if not all(math.isfinite(v) for v in (x, y, yaw)):
        raise ConfigError(f'{path}: non-finite rc_sim spawn pose {match.group(0)!r}')
    return SpawnPose(x, y, yaw)


@dataclass(frozen=True)
class WorldInfo:
    """What ``rcsim describe`` reports about a world file."""

    name: str
    path: Path
    sdf_version: str
    boxes: int
    cylinders: int
    spawn: SpawnPose


def inspect_world(world: str | os.PathLike[str]) -> WorldInfo:
    """Parse a world SDF, check it declares :data:`REQUIRED_SYSTEMS`, count its collisions."""
    from rc_sim_description.xmlio import read_xml_file

    path = Path(world)
    root = read_xml_file(path, 'SDF')
    element = root.find('world')
    if root.tag != 'sdf' or element is None:
        raise ConfigError(f'{path}: not an SDF world (<sdf><world> expected)')
    systems = {p.get('name') for p in element.findall('plugin')}
    missing = [s for s in REQUIRED_SYSTEMS if s not in systems]
    if missing:
        raise ConfigError(f'{path}: world lacks the system plugin {missing[0]}')
    geometry = element.findall('.//collision/geometry/*')
    return WorldInfo(name=element.get('name', path.stem), path=path,
                     sdf_version=root.get('version', '?'),
                     boxes=sum(g.tag == 'box' for g in geometry),
                     cylinders=sum(g.tag == 'cylinder' for g in geometry),
                     spawn=spawn_pose(path))


def main(argv: list[str] | None = None) -> int:
    """Print or (``--write``) regenerate ``worlds/*.sdf`` of the source tree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('-w', '--write', action='store_true', help='overwrite worlds/*.sdf')
    args = parser.parse_args(argv)
    from rc_sim_description.atomic import atomic_write_text
    from rc_sim_description.paths import share_path

    for spec in TRACKS.values():
        text = world_sdf(spec, track_walls(spec))
        target = share_path(f'worlds/{spec.name}.sdf')
        if args.write:
            atomic_write_text(target, text)
            target.chmod(0o644)  # installed data file: world-readable
            print(f'wrote {target}')
        else:
            walls = text.count('<link name="wall_')
            print(f'{target}: {len(text)} characters, {walls} walls (use --write to save)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
