"""The whole vehicle: :class:`VehicleParams`, its derived quantities, and its assembly.

:func:`_build` turns a complete, merged mapping (YAML layout) into a validated
:class:`VehicleParams`: each section through :mod:`rc_sim_description.param_validation`, then the
cross-field checks of :mod:`rc_sim_description.plausibility`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
import math
from typing import Any

from rc_sim_description.param_sections import (
    DRIVE_COMMANDS_OF_MODEL,
    SECTIONS,
    DriveParams,
    FrictionParams,
    GeometryParams,
    MassParams,
    PacejkaCoefficients,
    SensorParams,
    SteeringParams,
    TimingParams,
    TyreParams,
    _nest,
)
from rc_sim_description.param_validation import _build_section, _check_known, _merge
from rc_sim_description.plausibility import check_vehicle

__all__ = ['VehicleParams']


@dataclass(frozen=True)
class VehicleParams:
    """The whole vehicle; ``source`` names the file(s) it came from."""

    geometry: GeometryParams
    mass_properties: MassParams
    friction: FrictionParams
    steering: SteeringParams
    drive: DriveParams
    timing: TimingParams
    tyres: TyreParams
    sensors: SensorParams
    source: str = 'vehicle.yaml'

    # --- derived quantities (one formula each, used by every package)
    @property
    def min_turning_radius(self) -> float:
        """Rear-axle turning radius at full lock, R_min = L / tan(delta_max) [m]."""
        return self.geometry.wheelbase / math.tan(self.steering.max_steering_angle)

    @property
    def max_wheel_steering_angle(self) -> float:
        """Inner wheel angle at full lock, atan(L / (R_min - W/2)) (Ackermann geometry) [rad].

        The hinge joints of the URDF need this limit, not the bicycle angle max_steering_angle.
        """
        t = math.tan(self.steering.max_steering_angle)
        a = self.geometry.track_width / (2.0 * self.geometry.wheelbase)
        return math.atan(t / (1.0 - a * t))

    @property
    def max_wheel_steering_rate(self) -> float:
        """Inner hinge rate at full lock when the bicycle angle moves at max_steering_rate [rad/s].

        With t = tan(delta) and a = W / (2L):
        d(delta_in)/d(delta) = (1 + t^2) / ((1 - a t)^2 + t^2), largest at full lock.
        """
        t = math.tan(self.steering.max_steering_angle)
        a = self.geometry.track_width / (2.0 * self.geometry.wheelbase)
        return self.steering.max_steering_rate * (1.0 + t * t) / ((1.0 - a * t) ** 2 + t * t)

    @property
    def effective_wheel_radius(self) -> float:
        """Rolling radius R of the engine and the gz collision cylinders [m]:
        drive.effective_wheel_radius, or geometry.wheel_radius when that is null."""
        r = self.drive.effective_wheel_radius
        return self.geometry.wheel_radius if r is None else r

    @property
    def normalised_steering_gains(self) -> tuple[float, float]:
        """(left, right) gains of the normalised steering map [rad]; a null gain is
        max_steering_angle."""
        s = self.steering
        left = s.max_steering_angle if s.steering_gain_left is None else s.steering_gain_left
        right = s.max_steering_angle if s.steering_gain_right is None else s.steering_gain_right
        return left, right

    @property
    def drive_command_kind(self) -> str:
        """The car's own drive command (drive.drive_command, or for null the first command
        of its drive_model: wheel_speed, throttle or acceleration)."""
        d = self.drive
        return d.drive_command if d.drive_command is not None else \
            DRIVE_COMMANDS_OF_MODEL[d.drive_model][0]

    @property
    def max_speed(self) -> float:
        """Speed at the wheel speed limit, v_max = omega_max * r [m/s]."""
        return self.drive.max_wheel_speed * self.geometry.wheel_radius

    @property
    def chassis_mass(self) -> float:
        """Mass of the chassis link: m - 4 m_wheel - 2 m_hinge [kg]."""
        m = self.mass_properties
        return m.mass - 4.0 * m.wheel_mass - 2.0 * m.steering_hinge_mass

    @property
    def principal_inertias(self) -> tuple[float, float, float]:
        """(Ixx, Iyy, Izz) of the whole vehicle about its centre of mass [kg m^2].

        Missing roll/pitch inertias come from the chassis box (l, w, h) with its length and
        width scaled by s so that m s^2 (l^2 + w^2) / 12 equals yaw_inertia:
        Ixx = m (s^2 w^2 + h^2) / 12, Iyy = m (s^2 l^2 + h^2) / 12; a real box, so the triple is
        physically valid.
        """
        return _principal_inertias(self.geometry, self.mass_properties)

    @property
    def steering_hinge_inertia(self) -> float:
        """Inertia J_h of one steered wheel assembly about the vertical hinge axis [kg m^2].

        ``J_h = m_w (3 r^2 + w^2) / 12 + m_k (w/2)^2 / 2``: the front wheel (solid cylinder of
        radius r, width w, about a diameter through its centre, which lies on the hinge axis)
        plus the knuckle, the URDF's hinge link: a solid cylinder of diameter w about the hinge
        axis. Default car: 8.7e-5 kg m^2.
        """
        g, m = self.geometry, self.mass_properties
        r, w = g.wheel_radius, g.wheel_width
        return (m.wheel_mass * (3.0 * r * r + w * w) / 12.0
                + 0.5 * m.steering_hinge_mass * (0.5 * w) ** 2)

    @property
    def chassis_link_inertia(self) -> tuple[float, float, float]:
        """(Ixx, Iyy, Izz) of the URDF chassis link: vehicle inertias * chassis_mass / mass."""
        k = self.chassis_mass / self.mass_properties.mass
        ixx, iyy, izz = self.principal_inertias
        return ixx * k, iyy * k, izz * k

    def to_dict(self) -> dict[str, Any]:
        """Nested plain-data mapping with the YAML layout."""
        return {f.name: _section_to_dict(getattr(self, f.name)) for f in fields(self)
                if f.name != 'source'}

    def leaf_values(self) -> dict[str, Any]:
        """Flat mapping leaf key -> value (leaf names are unique across sections)."""
        out: dict[str, Any] = {}
        for section in self.to_dict().values():
            out.update(section)
        return out

    def with_values(self, **leaf_values: Any) -> VehicleParams:
        """Copy with some leaf values replaced (validated like a file override)."""
        return _build(_merge(self.to_dict(), _nest(leaf_values, f'{self.source} (override)')),
                      f'{self.source} (override)')


def _principal_inertias(g: GeometryParams, m: MassParams) -> tuple[float, float, float]:
    izz = m.yaw_inertia
    box_izz = m.mass * (g.chassis_length ** 2 + g.chassis_width ** 2) / 12.0
    s2 = izz / box_izz
    ixx = m.roll_inertia if m.roll_inertia is not None else (
        m.mass * (s2 * g.chassis_width ** 2 + g.chassis_height ** 2) / 12.0)
    iyy = m.pitch_inertia if m.pitch_inertia is not None else (
        m.mass * (s2 * g.chassis_length ** 2 + g.chassis_height ** 2) / 12.0)
    return ixx, iyy, izz


def _section_to_dict(section: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(section):
        v = getattr(section, f.name)
        if isinstance(v, PacejkaCoefficients):
            v = {k.name: getattr(v, k.name) for k in fields(v)}
        elif isinstance(v, tuple):
            v = list(v)
        out[f.name] = v
    return out


def _build(data: Mapping[str, Any], source: str, origins: Mapping[str, str] | None = None,
           base: str = '') -> VehicleParams:
    """Validated VehicleParams; ``origins`` (leaf key -> override file) and ``base`` let the
    cross-field errors name the file that set the key (:func:`check_vehicle`)."""
    _check_known(data, source, require_all=True)
    sections: dict[str, Any] = {name: _build_section(cls, data[name], f'{source}: {name}')
                for name, cls in SECTIONS.items()}
    params = VehicleParams(source=source, **sections)
    check_vehicle(params, origins, base)
    return params
