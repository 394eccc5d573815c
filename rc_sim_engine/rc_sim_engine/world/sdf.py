"""2D obstacle world read from the same SDF files Gazebo loads.

Every ``<collision>`` of every ``<model>`` (nested models included) is projected onto the ground
plane:

* ``<box>`` -> oriented rectangle (centre, yaw, half sizes), ``<cylinder>`` and ``<sphere>`` ->
  solid disc,
* ``<plane>`` -> ignored (ground),
* any other geometry (mesh, heightmap, capsule, ...), or a box/cylinder tilted in roll or pitch,
  -> skipped with an :class:`SdfWarning`.

Poses compose along world -> model -> link -> collision (SDF ``<pose>`` is ``x y z roll pitch
yaw``, relative to the parent frame; ``degrees="true"`` and ``rotation_format="quat_xyzw"`` are
understood). Each obstacle keeps its vertical extent ``[z_min, z_max]`` so the lidar only sees what
crosses its scan plane. Thin circular walls (``rings``, hollow circles) are not an SDF primitive;
they exist for synthetic worlds such as the F1TENTH-equivalent benchmark ring track
(:func:`ring_track`).

A malformed or unsupported SDF raises a one-line :class:`~rc_sim_description.errors.ConfigError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
import os
from pathlib import Path
import warnings
import xml.etree.ElementTree as ET

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.xmlio import parse_xml

__all__ = ['SdfWarning', 'World', 'load_world', 'parse_sdf', 'ring_track']

FloatArray = NDArray[np.float64]

_TILT_TOLERANCE_RAD = 1e-6
_SKIPPED_GEOMETRY = ('mesh', 'heightmap', 'capsule', 'ellipsoid', 'polyline', 'image')


class SdfWarning(UserWarning):
    """A part of an SDF world that the 2D engine cannot represent and skips."""


@dataclass(frozen=True)
class World:
    """Static 2D obstacles in the ``odom`` (world) frame; all arrays float64.

    Attributes:
        boxes: (Nb, 5) rows ``cx, cy, yaw, half_x, half_y`` [m, m, rad, m, m].
        box_z: (Nb, 2) rows ``z_min, z_max`` [m].
        circles: (Nc, 3) rows ``cx, cy, radius`` of solid discs [m].
        circle_z: (Nc, 2) rows ``z_min, z_max`` [m].
        rings: (Nr, 3) rows ``cx, cy, radius`` of thin circular walls (hollow) [m].
        ring_z: (Nr, 2) rows ``z_min, z_max`` [m].
        box_names, circle_names, ring_names: ``model::link::collision`` of each obstacle.
    """

    name: str
    source: str
    boxes: FloatArray = field(default_factory=lambda: np.zeros((0, 5)))
    box_z: FloatArray = field(default_factory=lambda: np.zeros((0, 2)))
    circles: FloatArray = field(default_factory=lambda: np.zeros((0, 3)))
    circle_z: FloatArray = field(default_factory=lambda: np.zeros((0, 2)))
    rings: FloatArray = field(default_factory=lambda: np.zeros((0, 3)))
    ring_z: FloatArray = field(default_factory=lambda: np.zeros((0, 2)))
    box_names: tuple[str, ...] = ()
    circle_names: tuple[str, ...] = ()
    ring_names: tuple[str, ...] = ()

    @property
    def n_obstacles(self) -> int:
        """Total number of obstacles."""
        return len(self.boxes) + len(self.circles) + len(self.rings)

    def obstacle_name(self, kind: int, index: int) -> str:
        """Name of obstacle ``index`` of ``kind`` (0 box, 1 circle, 2 ring)."""
        return (self.box_names, self.circle_names, self.ring_names)[kind][index]

    def box_corners(self) -> FloatArray:
        """(Nb, 4, 2) corners of every box, counter-clockwise."""
        cx, cy, yaw, hx, hy = (self.boxes[:, i] for i in range(5))
        local = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
        px = local[None, :, 0] * hx[:, None]
        py = local[None, :, 1] * hy[:, None]
        c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
        return np.stack([cx[:, None] + c * px - s * py, cy[:, None] + s * px + c * py], axis=-1)

    def segments(self, z: float | None = None) -> FloatArray:
        """(4 Nb, 4) box edges ``x0, y0, x1, y1``; with ``z``, only boxes whose extent contains
        it."""
        keep = self._at_height(self.box_z, z)
        corners = self.box_corners()[keep]
        nxt = np.roll(corners, -1, axis=1)
        return np.concatenate([corners, nxt], axis=-1).reshape(-1, 4)

    def round_obstacles(self, z: float | None = None) -> FloatArray:
        """(Nc + Nr, 3) discs and rings ``cx, cy, r`` (ray casting treats both as circles)."""
        discs = self.circles[self._at_height(self.circle_z, z)]
        rings = self.rings[self._at_height(self.ring_z, z)]
        return np.concatenate([discs, rings], axis=0)

    def bounds(self, margin: float = 0.5) -> tuple[float, float, float, float]:
        """Axis-aligned ``(x_min, x_max, y_min, y_max)`` of all obstacles plus ``margin`` [m]."""
        xs: list[FloatArray] = []
        ys: list[FloatArray] = []
        if len(self.boxes):
            corners = self.box_corners()
            xs.append(corners[..., 0].ravel())
            ys.append(corners[..., 1].ravel())
        for disc in (self.circles, self.rings):
            if len(disc):
                xs += [disc[:, 0] - disc[:, 2], disc[:, 0] + disc[:, 2]]
                ys += [disc[:, 1] - disc[:, 2], disc[:, 1] + disc[:, 2]]
        if not xs:
            return (-margin, margin, -margin, margin)
        x = np.concatenate(xs)
        y = np.concatenate(ys)
        return (float(np.min(x)) - margin, float(np.max(x)) + margin,
                float(np.min(y)) - margin, float(np.max(y)) + margin)

    @staticmethod
    def _at_height(z_range: FloatArray, z: float | None) -> NDArray[np.bool_]:
        if z is None:
            return np.ones(len(z_range), dtype=bool)
        return (z_range[:, 0] <= z) & (z <= z_range[:, 1])


def ring_track(inner_radius: float, outer_radius: float, *, height: float = 0.5,
               name: str = 'ring_track') -> World:
    """Two concentric thin circular walls centred on the origin (F1TENTH-style ring track)."""
    if not 0 < inner_radius < outer_radius:
        raise ConfigError(f'ring_track: need 0 < inner_radius < outer_radius, got '
                          f'{inner_radius!r}, {outer_radius!r}')
    rings = np.array([[0.0, 0.0, inner_radius], [0.0, 0.0, outer_radius]])
    return World(name=name, source='ring_track()', rings=rings,
                 ring_z=np.array([[0.0, height], [0.0, height]]),
                 ring_names=('inner_wall', 'outer_wall'))


# --------------------------------------------------------------------------- SDF parsing
def load_world(path: str | os.PathLike[str]) -> World:
    """Read an SDF world file into a :class:`World` (one-line ConfigError when unreadable)."""
    p = Path(path)
    try:
        text = p.read_text(encoding='utf-8')
    except FileNotFoundError:
        raise ConfigError(f'world file {str(p)!r} not found') from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f'{p}: cannot read world file ({exc})') from None
    return parse_sdf(text, source=str(p))


def parse_sdf(text: str, source: str = '<string>') -> World:
    """Parse SDF text (``<sdf><world>...``) into a :class:`World`."""
    root = parse_xml(text, source, 'SDF')
    if root.tag != 'sdf':
        raise ConfigError(f'{source}: not an SDF file (root element <{root.tag}>, expected <sdf>)')
    worlds = root.findall('world')
    if len(worlds) != 1:
        raise ConfigError(f'{source}: expected exactly one <world>, found {len(worlds)}')
    world = worlds[0]
    acc = _Accumulator(source)
    for child in world:
        if child.tag == 'model':
            _parse_model(child, _IDENTITY, '', acc)
        elif child.tag == 'include':
            uri = (child.findtext('uri') or '').strip()
            if not ('ground' in uri.lower() and 'plane' in uri.lower()):
                acc.warn(f'<include> {uri!r} skipped (included models are not resolved)')
    return acc.build(world.get('name', Path(source).stem))


_Pose = tuple[float, float, float, float, float, float]  # x, y, z, roll, pitch, yaw
_IDENTITY: _Pose = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


class _Accumulator:
    def __init__(self, source: str) -> None:
        self.source = source
        self.boxes: list[tuple[float, ...]] = []
        self.box_z: list[tuple[float, float]] = []
        self.circles: list[tuple[float, ...]] = []
        self.circle_z: list[tuple[float, float]] = []
        self.box_names: list[str] = []
        self.circle_names: list[str] = []

    def warn(self, message: str) -> None:
        warnings.warn(f'{self.source}: {message}', SdfWarning, stacklevel=4)

    def build(self, name: str) -> World:
        def arr(rows: list[tuple[float, ...]] | list[tuple[float, float]],
                width: int) -> FloatArray:
            return np.array(rows, dtype=np.float64).reshape(-1, width)

        return World(name=name, source=self.source, boxes=arr(self.boxes, 5),
                     box_z=arr(self.box_z, 2), circles=arr(self.circles, 3),
                     circle_z=arr(self.circle_z, 2), box_names=tuple(self.box_names),
                     circle_names=tuple(self.circle_names))


def _parse_model(model: ET.Element, parent: _Pose, prefix: str, acc: _Accumulator) -> None:
    name = prefix + model.get('name', 'model')
    pose = _compose(parent, _read_pose(model, acc.source, name))
    for child in model:
        if child.tag == 'model':
            _parse_model(child, pose, name + '::', acc)
        elif child.tag == 'link':
            link_name = f'{name}::{child.get("name", "link")}'
            link_pose = _compose(pose, _read_pose(child, acc.source, link_name))
            for collision in child.findall('collision'):
                col_name = f'{link_name}::{collision.get("name", "collision")}'
                col_pose = _compose(link_pose, _read_pose(collision, acc.source, col_name))
                _add_geometry(collision, col_pose, col_name, acc)
        elif child.tag == 'include':
            acc.warn(f'{name}: nested <include> skipped (included models are not resolved)')


def _add_geometry(collision: ET.Element, pose: _Pose, name: str, acc: _Accumulator) -> None:
    geometry = collision.find('geometry')
    if geometry is None or len(geometry) == 0:
        acc.warn(f'{name}: collision without geometry skipped')
        return
    shape = geometry[0]
    x, y, z, roll, pitch, yaw = pose
    tilted = abs(roll) > _TILT_TOLERANCE_RAD or abs(pitch) > _TILT_TOLERANCE_RAD
    if shape.tag == 'plane':
        return
    if shape.tag == 'box':
        sx, sy, sz = _floats(shape, 'size', 3, acc.source, name)
        if min(sx, sy, sz) <= 0:
            raise ConfigError(f'{acc.source}: {name}: box size must be > 0, got {sx} {sy} {sz}')
        if tilted:
            acc.warn(f'{name}: box tilted in roll/pitch skipped (not representable in 2D)')
            return
        acc.boxes.append((x, y, _wrap(yaw), 0.5 * sx, 0.5 * sy))
        acc.box_z.append((z - 0.5 * sz, z + 0.5 * sz))
        acc.box_names.append(name)
    elif shape.tag in ('cylinder', 'sphere'):
        (radius,) = _floats(shape, 'radius', 1, acc.source, name)
        half_height = radius
        if shape.tag == 'cylinder':
            (length,) = _floats(shape, 'length', 1, acc.source, name)
            if length <= 0:
                raise ConfigError(f'{acc.source}: {name}: cylinder length must be > 0, '
                                  f'got {length}')
            half_height = 0.5 * length
            if tilted:
                acc.warn(f'{name}: cylinder tilted in roll/pitch skipped '
                         '(not representable in 2D)')
                return
        if radius <= 0:
            raise ConfigError(f'{acc.source}: {name}: radius must be > 0, got {radius}')
        acc.circles.append((x, y, radius))
        acc.circle_z.append((z - half_height, z + half_height))
        acc.circle_names.append(name)
    else:
        what = 'unsupported' if shape.tag in _SKIPPED_GEOMETRY else 'unknown'
        acc.warn(f'{name}: {what} geometry <{shape.tag}> skipped')


def _floats(elem: ET.Element, tag: str, count: int, source: str, name: str) -> tuple[float, ...]:
    text = elem.findtext(tag)
    if text is None:
        raise ConfigError(f'{source}: {name}: <{elem.tag}> lacks <{tag}>')
    try:
        values = tuple(float(v) for v in text.split())
    except ValueError:
        raise ConfigError(f'{source}: {name}: <{tag}> is not numeric: {text.strip()!r}') from None
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise ConfigError(f'{source}: {name}: <{tag}> needs {count} finite number(s), '
                          f'got {text.strip()!r}')
    return values


def _read_pose(elem: ET.Element, source: str, name: str) -> _Pose:
    pose = elem.find('pose')
    if pose is None:
        return _IDENTITY
    relative_to = pose.get('relative_to', '').strip()
    if relative_to and relative_to not in ('world', '__model__'):
        raise ConfigError(f'{source}: {name}: unsupported <pose relative_to={relative_to!r}> '
                          '(only the parent frame is supported)')
    text = (pose.text or '').strip()
    if not text:
        return _IDENTITY
    try:
        v = [float(s) for s in text.split()]
    except ValueError:
        raise ConfigError(f'{source}: {name}: <pose> is not numeric: {text!r}') from None
    if not all(math.isfinite(c) for c in v):
        raise ConfigError(f'{source}: {name}: <pose> has a non-finite value: {text!r}')
    if pose.get('rotation_format', 'euler_rpy') == 'quat_xyzw':
        if len(v) != 7:
            raise ConfigError(f'{source}: {name}: quat_xyzw <pose> needs 7 numbers, got {len(v)}')
        roll, pitch, yaw = _rpy_from_quaternion(v[3], v[4], v[5], v[6])
        return (v[0], v[1], v[2], roll, pitch, yaw)
    if len(v) != 6:
        raise ConfigError(f'{source}: {name}: <pose> needs 6 numbers, got {len(v)}')
    if pose.get('degrees', 'false').strip().lower() in ('true', '1'):
        v[3:] = [math.radians(a) for a in v[3:]]
    return (v[0], v[1], v[2], v[3], v[4], v[5])


def _rpy_from_quaternion(qx: float, qy: float, qz: float, qw: float) -> tuple[float, float, float]:
    """Roll, pitch, yaw (ZYX convention) of a unit quaternion."""
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw) or 1.0
    qx, qy, qz, qw = qx / n, qy / n, qz / n, qw / n
    roll = math.atan2(2 * (qw * qx + qy * qz), 1 - 2 * (qx * qx + qy * qy))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (qw * qy - qz * qx))))
    yaw = math.atan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz))
    return roll, pitch, yaw


def _compose(parent: _Pose, child: _Pose) -> _Pose:
    """Parent * child for poses without roll/pitch in the parent (planar composition).

    A parent tilted in roll/pitch makes the whole subtree non-planar; its tilt is propagated so
    that every geometry below is skipped with a warning.
    """
    px, py, pz, proll, ppitch, pyaw = parent
    cx, cy, cz, croll, cpitch, cyaw = child
    c, s = math.cos(pyaw), math.sin(pyaw)
    if abs(proll) > _TILT_TOLERANCE_RAD or abs(ppitch) > _TILT_TOLERANCE_RAD:
        croll, cpitch = 0.0, 0.0  # keep the parent's (non-zero) tilt: the subtree stays tilted
    return (px + c * cx - s * cy, py + s * cx + c * cy, pz + cz,
            proll + croll, ppitch + cpitch, pyaw + cyaw)


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi
