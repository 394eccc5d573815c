"""Validation of vehicle parameter mappings against the section schema (types, ranges, keys).

Plain-data mappings (YAML layout) become section dataclasses here: unknown sections and keys are
refused with a did-you-mean hint, values are converted by the field annotation and checked
against the field range and extra check. Every error is one :class:`VehicleParamsError` line
``<where>.<key>: <problem>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
import math
import sys
from typing import Any, TypeVar

from rc_sim_description.errors import VehicleParamsError
from rc_sim_description.param_schema import Range
from rc_sim_description.param_sections import SECTIONS, PacejkaCoefficients, leaf_keys
from rc_sim_description.yamlio import did_you_mean, number_hint

__all__: list[str] = []  # internal helpers of vehicle_params and param_loading


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _check_known(data: Mapping[str, Any], source: str, *, require_all: bool) -> None:
    for section, body in data.items():
        if section not in SECTIONS:
            raise VehicleParamsError(f'{source}: unknown section {section!r}'
                                     f'{did_you_mean(str(section), SECTIONS)}')
        if not isinstance(body, dict):
            raise VehicleParamsError(f'{source}: {section}: must be a mapping, '
                                     f'got {type(body).__name__}')
        names = {f.name for f in fields(SECTIONS[section])}
        for key in body:
            if key not in names:
                where = leaf_keys().get(str(key))
                hint = (f' (it belongs in section {where!r})' if where
                        else did_you_mean(str(key), names))
                raise VehicleParamsError(f'{source}: {section}.{key}: unknown key{hint}')
    if require_all:
        for section in SECTIONS:
            if section not in data:
                raise VehicleParamsError(f'{source}: {section}: missing section')


_T = TypeVar('_T')


def _convert(value: Any, annotation: str, where: str) -> Any:
    ann = annotation.replace(' ', '')
    nullable = ann.endswith('|None')
    base = ann.removesuffix('|None')
    if value is None:
        if nullable:
            return None
        raise VehicleParamsError(f'{where}: must be a number, got null')
    if base == 'float':
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise VehicleParamsError(f'{where}: must be a number, got {type(value).__name__} '
                                     f'{value!r}{number_hint(value)}')
        if isinstance(value, int) and abs(value) > sys.float_info.max:
            raise VehicleParamsError(f'{where}: must be a number of magnitude below 1.8e308, '
                                     f'got an integer of {len(str(abs(value)))} digits')
        if not math.isfinite(value):
            raise VehicleParamsError(f'{where}: must be finite, got {value!r}')
        return float(value)
    if base == 'int':
        if isinstance(value, bool) or not isinstance(value, int):
            raise VehicleParamsError(f'{where}: must be an integer, got {type(value).__name__} '
                                     f'{value!r}')
        return value
    if base == 'str':
        if not isinstance(value, str):
            raise VehicleParamsError(f'{where}: must be a string, got {type(value).__name__}')
        return value
    if base.startswith('tuple['):
        if not isinstance(value, (list, tuple)):
            raise VehicleParamsError(f'{where}: must be a list of numbers, '
                                     f'got {type(value).__name__}')
        return tuple(_convert(v, 'float', f'{where}[{i}]') for i, v in enumerate(value))
    if base == 'PacejkaCoefficients':
        if not isinstance(value, dict):
            raise VehicleParamsError(f'{where}: must be a mapping with keys B, C, D, E')
        return _build_section(PacejkaCoefficients, value, where)
    raise AssertionError(f'unsupported annotation {annotation}')  # pragma: no cover


def _field_problem(meta: Mapping[str, Any], value: Any) -> str | None:
    """Range (of a number, or of each number of a list) then the extra check of one field."""
    valid: Range | None = meta.get('range')
    if valid is not None:
        for i, v in enumerate(value if isinstance(value, tuple) else (value,)):
            if isinstance(v, (int, float)) and not valid.contains(v):
                where = f'[{i}]: ' if isinstance(value, tuple) else ''
                return f'{where}{valid.problem(v, meta.get("unit", ""))}'
    check = meta.get('check')
    return check(value) if check is not None else None


def _build_section(cls: type[_T], body: Mapping[str, Any], where: str) -> _T:
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    for key in body:
        if key not in names:
            raise VehicleParamsError(f'{where}.{key}: unknown key{did_you_mean(str(key), names)}')
    kwargs: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        key_where = f'{where}.{f.name}'
        if f.name not in body:
            raise VehicleParamsError(f'{key_where}: missing key')
        value = _convert(body[f.name], str(f.type), key_where)
        if value is not None:
            problem = _field_problem(f.metadata, value)
            if problem:
                raise VehicleParamsError(f'{key_where}: {problem}')
        kwargs[f.name] = value
    return cls(**kwargs)
