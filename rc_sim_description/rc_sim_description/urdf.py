"""Expand the xacro car in-process (PyPI xacro, no ROS) and read the resulting URDF.

``expand_car`` validates the vehicle parameters first (one-line :class:`VehicleParamsError`
naming file and key), then runs xacro on ``urdf/rc_car.urdf.xacro``, which reads the same
``config/vehicle.yaml`` through ``xacro.load_yaml`` and merges the override file. ``parse_urdf``
returns the links and joints (used by ``rcsim describe`` and the embedded engine).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import os
from pathlib import Path
import xml.etree.ElementTree as ET

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams, load_vehicle_params
from rc_sim_description.paths import share_path
from rc_sim_description.xmlio import parse_xml

__all__ = ['UrdfJoint', 'UrdfLink', 'UrdfModel', 'car_summary', 'car_xacro', 'expand_car',
           'parse_urdf', 'vehicle_yaml_of']


@dataclass(frozen=True)
class UrdfLink:
    """A link; ``mass`` None for a frame-only link; ``inertia`` (ixx, iyy, izz, ixy, ixz, iyz)."""

    name: str
    mass: float | None
    inertia: tuple[float, float, float, float, float, float] | None


@dataclass(frozen=True)
class UrdfJoint:
    """A joint with its origin (xyz [m], rpy [rad]), axis and limits (None when absent)."""

    name: str
    type: str
    parent: str
    child: str
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]
    axis: tuple[float, float, float]
    lower: float | None
    upper: float | None
    effort: float | None
    velocity: float | None


@dataclass(frozen=True)
class UrdfModel:
    """Links and joints of a URDF, in document order."""

    name: str
    links: tuple[UrdfLink, ...]
    joints: tuple[UrdfJoint, ...]

    def joint(self, name: str) -> UrdfJoint:
        """The joint called ``name`` (KeyError when absent)."""
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(name)

    @property
    def moving_joints(self) -> tuple[UrdfJoint, ...]:
        """Joints that are not fixed."""
        return tuple(j for j in self.joints if j.type != 'fixed')


def car_xacro() -> Path:
    """Path of the installed ``urdf/rc_car.urdf.xacro``."""
    return share_path('urdf/rc_car.urdf.xacro')


def vehicle_yaml_of(xacro_file: Path) -> Path:
    """The vehicle.yaml a xacro car reads: ``../config/vehicle.yaml`` next to it."""
    return xacro_file.resolve().parent.parent / 'config' / 'vehicle.yaml'


def expand_car(params_file: str | os.PathLike[str] | None = None, lidar: bool = True,
               namespace: str = '', *, xacro_file: str | os.PathLike[str] | None = None,
               ) -> str:
    """URDF text of the car (xacro args ``lidar``, ``namespace``, ``params_file``).

    The parameters are validated with :func:`~rc_sim_description.params.load_vehicle_params` (the
    vehicle.yaml next to the xacro file plus ``params_file``) before xacro reads them.

    Raises:
        VehicleParamsError: the parameters are invalid (one line naming file and key).
        ConfigError: the xacro file is missing or xacro fails.
    """
    source = Path(xacro_file) if xacro_file is not None else car_xacro()
    if not source.is_file():
        raise ConfigError(f'xacro file {str(source)!r} not found')
    override = str(Path(params_file).resolve()) if params_file else ''
    load_vehicle_params(vehicle_yaml_of(source), overrides=[override] if override else [])
    mappings = {'lidar': 'true' if lidar else 'false', 'namespace': namespace,
                'params_file': override}
    import xacro

    try:
        doc = xacro.process_file(str(source), mappings=mappings)
    except Exception as exc:  # xacro evaluates the file's ${...} Python expressions and
        # raises XacroException, NameError, SyntaxError, TypeError, ZeroDivisionError ... from
        # them: every one is a defect of the input, reported in one line (RCSIM_DEBUG shows it)
        message = ' '.join(str(exc).split()) or type(exc).__name__
        raise ConfigError(f'{source}: xacro failed: {message}') from None
    return str(doc.toprettyxml(indent='  '))


def _floats(text: str | None, n: int, default: float, where: str) -> tuple[float, ...]:
    """``n`` numbers from a space-separated attribute (``default`` each when absent)."""
    if text is None:
        return (default,) * n
    try:
        values = tuple(float(v) for v in text.split())
    except ValueError:
        raise ConfigError(f'{where}: not numeric: {text!r}') from None
    if len(values) != n:
        raise ConfigError(f'{where}: needs {n} numbers, got {text!r}')
    return values


def _vec3(text: str | None, where: str) -> tuple[float, float, float]:
    x, y, z = _floats(text, 3, 0.0, where)
    return x, y, z


def _opt_float(elem: ET.Element | None, attr: str, where: str) -> float | None:
    if elem is None or elem.get(attr) is None:
        return None
    return _floats(elem.get(attr), 1, 0.0, f'{where} {attr}')[0]


def parse_urdf(text: str, source: str = '<urdf>') -> UrdfModel:
    """Links (mass, inertia) and joints (origin, axis, limits) of a URDF document."""
    root = parse_xml(text, source, 'URDF')
    if root.tag != 'robot':
        raise ConfigError(f'{source}: not a URDF (root element <{root.tag}>)')
    links = []
    for link in root.findall('link'):
        name = link.get('name', '')
        inertial = link.find('inertial')
        mass = inertia = None
        if inertial is not None:
            mass = _opt_float(inertial.find('mass'), 'value', f'{source}: link {name} mass')
            elem = inertial.find('inertia')
            if elem is not None:
                ixx, iyy, izz, ixy, ixz, iyz = (
                    _opt_float(elem, k, f'{source}: link {name}') or 0.0
                    for k in ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz'))
                inertia = (ixx, iyy, izz, ixy, ixz, iyz)
        links.append(UrdfLink(name, mass, inertia))
    joints = []
    for joint in root.findall('joint'):
        name = joint.get('name', '')
        where = f'{source}: joint {name}'
        origin = joint.find('origin')
        axis = joint.find('axis')
        limit = joint.find('limit')
        parent, child = joint.find('parent'), joint.find('child')
        joints.append(UrdfJoint(
            name=name, type=joint.get('type', ''),
            parent=parent.get('link', '') if parent is not None else '',
            child=child.get('link', '') if child is not None else '',
            xyz=_vec3(origin.get('xyz') if origin is not None else None, where),
            rpy=_vec3(origin.get('rpy') if origin is not None else None, where),
            axis=_vec3(axis.get('xyz') if axis is not None else '1 0 0', where),
            lower=_opt_float(limit, 'lower', where), upper=_opt_float(limit, 'upper', where),
            effort=_opt_float(limit, 'effort', where),
            velocity=_opt_float(limit, 'velocity', where)))
    return UrdfModel(root.get('name', ''), tuple(links), tuple(joints))


def car_summary(params: VehicleParams, model: UrdfModel) -> dict[str, str]:
    """Human-readable key facts of the vehicle (label -> value with unit)."""
    g, s = params.geometry, params.sensors
    lidar = (f'{s.lidar_samples} beams, {math.degrees(s.lidar_fov):.0f} deg, '
             f'{s.lidar_range_min:g}-{s.lidar_range_max:g} m, {s.lidar_update_rate:g} Hz')
    return {
        'mass': f'{params.mass_properties.mass:g} kg',
        'wheelbase': (f'{g.wheelbase:g} m (lf {g.cg_to_front_axle:g} m, '
                      f'lr {g.cg_to_rear_axle:.5g} m)'),
        'track width': f'{g.track_width:g} m',
        'wheel radius': f'{g.wheel_radius:g} m',
        'max steering angle': f'{params.steering.max_steering_angle:g} rad',
        'min turning radius': f'{params.min_turning_radius:.3f} m (rear axle)',
        'max speed': f'{params.max_speed:.2f} m/s',
        'lidar': lidar,
        'URDF': (f'{len(model.links)} links, {len(model.joints)} joints '
                 f'({len(model.moving_joints)} moving)'),
    }
