"""Typed, validated vehicle parameters from ``config/vehicle.yaml`` (the one source of truth).

The YAML has one mapping per section (``geometry``, ``mass_properties``, ...); each section maps
onto a frozen dataclass below. Every field carries its unit, meaning and valid range in its
metadata (:mod:`rc_sim_description.param_schema`), so the loader, the documentation
(``docs/vehicle_parameters.md``, ``docs/limits.md``) and the override writer share one schema.
Values outside the ranges, and combinations that make the physics meaningless (cross-field
checks of :mod:`rc_sim_description.plausibility`), are refused at load.
Leaf key names are unique across sections, so a parameter can be named by its leaf alone
(``wheelbase``, ``steering_gain``) on command lines and in calibration results.

This module is the public entry point and re-exports the names of its parts: the section
dataclasses and schema look-ups (:mod:`rc_sim_description.param_sections`), the validation of
mappings (:mod:`rc_sim_description.param_validation`), :class:`VehicleParams` with its derived
quantities (:mod:`rc_sim_description.vehicle_params`) and the file loading
(:mod:`rc_sim_description.param_loading`).

Errors are one line: ``<file>: <section>.<key>: <problem>`` (:class:`VehicleParamsError`).
"""

from __future__ import annotations

from rc_sim_description.param_loading import (
    default_vehicle_yaml,
    dump_override,
    load_vehicle_params,
)
from rc_sim_description.param_sections import (
    DRIVE_MODELS,
    SECTIONS,
    SERVO_MODELS,
    TYRE_MODELS,
    DriveParams,
    FrictionParams,
    GeometryParams,
    MassParams,
    PacejkaCoefficients,
    SensorParams,
    SteeringParams,
    TimingParams,
    TyreParams,
    leaf_keys,
    param_range,
    section_of,
)
from rc_sim_description.vehicle_params import VehicleParams

__all__ = [
    'DRIVE_MODELS',
    'SECTIONS',
    'SERVO_MODELS',
    'TYRE_MODELS',
    'DriveParams',
    'FrictionParams',
    'GeometryParams',
    'MassParams',
    'PacejkaCoefficients',
    'SensorParams',
    'SteeringParams',
    'TimingParams',
    'TyreParams',
    'VehicleParams',
    'default_vehicle_yaml',
    'dump_override',
    'leaf_keys',
    'load_vehicle_params',
    'param_range',
    'section_of',
]
