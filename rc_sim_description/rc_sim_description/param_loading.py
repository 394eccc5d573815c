"""Loading vehicle parameters from ``config/vehicle.yaml`` and partial override files.

The base file must hold every section; overrides are merged over it in order, each value
validated in its own file's name first. :func:`dump_override` writes such a partial file.
Errors are one line: ``<file>: <section>.<key>: <problem>`` (:class:`VehicleParamsError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import os
from pathlib import Path
from typing import Any

import yaml

from rc_sim_description.errors import VehicleParamsError
from rc_sim_description.param_sections import SECTIONS, _nest
from rc_sim_description.param_validation import _build_section, _check_known, _merge
from rc_sim_description.paths import share_path
from rc_sim_description.vehicle_params import VehicleParams, _build
from rc_sim_description.yamlio import read_yaml

__all__ = ['default_vehicle_yaml', 'dump_override', 'load_vehicle_params']


def default_vehicle_yaml() -> Path:
    """Installed (or source-tree) ``config/vehicle.yaml``; ``RC_SIM_VEHICLE_YAML`` overrides it."""
    env = os.environ.get('RC_SIM_VEHICLE_YAML')
    if env:
        return Path(env)
    return share_path('config/vehicle.yaml')


def _read_yaml(path: Path) -> dict[str, Any]:
    data = read_yaml(path, VehicleParamsError)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise VehicleParamsError(f'{path}: top level must be a mapping of sections, '
                                 f'got {type(data).__name__}')
    return data


def load_vehicle_params(path: str | os.PathLike[str] | None = None,
                        overrides: Iterable[str | os.PathLike[str]] = ()) -> VehicleParams:
    """Load and validate vehicle parameters.

    Args:
        path: full vehicle.yaml (default: the installed one, see :func:`default_vehicle_yaml`).
        overrides: partial YAML files with the same sections, merged in order over ``path``.

    Raises:
        VehicleParamsError: one line naming the file and the key.
    """
    base = Path(path) if path is not None else default_vehicle_yaml()
    data = _read_yaml(base)
    source = str(base)
    _check_known(data, source, require_all=True)
    origins: dict[str, str] = {}  # leaf key -> the override file that set it last
    for over in overrides:
        over_path = Path(over)
        over_data = _read_yaml(over_path)
        _check_known(over_data, str(over_path), require_all=False)
        # Validate each override value in its own file's name before merging.
        for section, body in over_data.items():
            merged = _merge(data[section], body)
            _build_section(SECTIONS[section], merged, f'{over_path}: {section}')
            origins.update({str(key): str(over_path) for key in body})
        data = _merge(data, over_data)
        source = f'{source} + {over_path}'
    return _build(data, source, origins, str(base))


def dump_override(values: Mapping[str, Any], path: str | os.PathLike[str],
                  header: str = '') -> None:
    """Write a partial vehicle.yaml holding only ``values`` (leaf key -> value), atomically.

    ``header`` lines are written as YAML comments on top (e.g. calibration metrics).
    The file loads back through :func:`load_vehicle_params` ``overrides`` and the xacro
    ``params_file`` argument.
    """
    from rc_sim_description.atomic import atomic_write_text

    nested = _nest(values, str(path))
    plain = {s: {k: (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and
                     k != 'lidar_samples' else v) for k, v in body.items()}
             for s, body in nested.items()}
    comment = ''.join(f'# {line}\n' if line else '#\n' for line in header.splitlines())
    atomic_write_text(path, comment + yaml.safe_dump(plain, sort_keys=False))
