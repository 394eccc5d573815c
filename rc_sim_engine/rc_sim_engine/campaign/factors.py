"""Checks of campaign spec values: every factor (world, scenario, trajectory, start, vehicle
files and overrides, lidar errors, seed, model) and the basic shapes (numbers, texts, keys), each
failing with one :class:`~rc_sim_description.errors.ConfigError` line naming the key path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import math
import os
from pathlib import Path
import re
import tempfile
from typing import Any

import numpy as np

from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_description.yamlio import did_you_mean, dump_yaml

__all__ = ['FACTORS', 'FACTOR_CHECKS', 'check_callable_name', 'check_factor_name', 'check_keys',
           'check_number', 'check_text', 'factor_block', 'fail', 'inner_message', 'lidar_config',
           'resolve_path', 'vehicle_override_file']

#: Factor name -> what it sets.
FACTORS: dict[str, str] = {
    'world': 'world name, SDF file, track map YAML or shipped track map name (chicane_track)',
    'scenario': 'scenario (driver kind scenario): manoeuvre name, shipped scenario or YAML file',
    'trajectory': 'reference shape (driver kind tracker)',
    'start': 'base_link start pose [x, y, yaw] (null: the spawn pose / placed as rcsim run)',
    'params': 'vehicle override YAML file (or a list of them), e.g. a calibration result',
    'vehicle': 'vehicle overrides inline, shaped like an override file',
    'lidar_errors': 'lidar error preset, YAML file, or {preset: NAME, set: {KEY: VALUE}}',
    'seed': 'seed of every random generator of the run (integer >= 0)',
    'goal': 'goal region [x, y, radius_m] in odom (metric time_to_goal_s; null: none)',
    'model': 'vehicle model: single_track, kinematic or kinematic_4ws',
}

_CALLABLE = re.compile(r'^[A-Za-z_][\w.]*:[A-Za-z_]\w*$')


def resolve_path(spec_folder: Path, value: str) -> str:
    """A path of the spec, relative to its folder; names (no such file) stay as they are."""
    p = Path(value)
    if p.is_absolute():
        return value
    candidate = spec_folder / p
    return str(candidate) if candidate.exists() or p.suffix else value


# --------------------------------------------------------------------------- checks
def fail(where: str, problem: str) -> ConfigError:
    return ConfigError(f'{where}: {problem}')


def check_keys(data: Any, allowed: Sequence[str], where: str, required: Sequence[str] = ()
               ) -> dict:
    if not isinstance(data, Mapping):
        raise fail(where, f'must be a mapping, got {type(data).__name__}')
    for key in data:
        if key not in allowed:
            raise fail(f'{where}.{key}' if where[-1] != ':' else f'{where} {key}',
                        f'unknown key{did_you_mean(str(key), allowed)} (known: '
                        f'{", ".join(allowed)})')
    for key in required:
        if key not in data:
            raise fail(where, f'missing key {key!r}')
    return dict(data)


def check_number(value: Any, where: str, *, low: float | None = None, positive: bool = False
                 ) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(where, f'must be a number, got {value!r}')
    v = float(value)
    if not math.isfinite(v):
        raise fail(where, f'must be a finite number, got {value!r}')
    if positive and v <= 0:
        raise fail(where, f'must be > 0, got {value!r}')
    if low is not None and v < low:
        raise fail(where, f'must be >= {low:g}, got {value!r}')
    return v


def _int(value: Any, where: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise fail(where, f'must be an integer >= {low}, got {value!r}')
    return value


def check_text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise fail(where, f'must be a non-empty string, got {value!r}')
    return value


def check_callable_name(value: Any, where: str) -> str:
    text = check_text(value, where)
    if not _CALLABLE.match(text):
        raise fail(where, f'must be module:callable (e.g. my_controller:make), got {text!r}')
    return text


def inner_message(exc: RcSimError) -> str:
    return str(exc)


def _check_world(value: Any, where: str, folder: Path) -> str:
    from rc_sim_description.paths import world_path
    from rc_sim_engine.sim.run_setup import world_source
    from rc_sim_engine.world.track_map import is_map_yaml

    name = check_text(value, where)
    resolved = world_source(resolve_path(folder, name))
    if is_map_yaml(resolved):
        if not Path(resolved).is_file():
            raise fail(where, f'map file {name!r} not found')
        return name
    try:
        world_path(resolved)
    except RcSimError as exc:
        raise fail(where, inner_message(exc)) from None
    return name


def _check_scenario(value: Any, where: str, folder: Path) -> str:
    from rc_sim_control.commands import MANOEUVRE_ALIASES, MANOEUVRES
    from rc_sim_engine.sim.run_setup import scenario_path, shipped_scenarios

    name = check_text(value, where)
    if name in MANOEUVRES or name in MANOEUVRE_ALIASES or scenario_path(name) is not None:
        return name
    resolved = Path(resolve_path(folder, name))
    if resolved.suffix in ('.yaml', '.yml') or resolved.is_file():
        if not resolved.is_file():
            raise fail(where, f'scenario file {name!r} not found')
        from rc_sim_control.commands import load_sequence

        try:
            load_sequence(resolved)
        except RcSimError as exc:
            raise fail(where, inner_message(exc)) from None
        return name
    known = [*MANOEUVRES, *shipped_scenarios()]
    raise fail(where, f'unknown scenario {name!r}{did_you_mean(name, known)} (known: '
                f'{", ".join(known)}; or a scenario YAML file)')


def _check_trajectory(value: Any, where: str, folder: Path) -> str:
    from rc_sim_control.trajectories import TRAJECTORY_ALIASES, TRAJECTORY_NAMES

    name = check_text(value, where)
    if name not in TRAJECTORY_NAMES and name not in TRAJECTORY_ALIASES:
        raise fail(where, f'unknown trajectory {name!r}'
                    f'{did_you_mean(name, [*TRAJECTORY_NAMES, *TRAJECTORY_ALIASES])} (known: '
                    f'{", ".join(TRAJECTORY_NAMES)})')
    return name


def _check_start(value: Any, where: str, folder: Path) -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 3:
        raise fail(where, f'must be [x, y, yaw] (3 numbers) or null, got {value!r}')
    return [check_number(v, f'{where}[{i}]') for i, v in enumerate(value)]


def _check_goal(value: Any, where: str, folder: Path) -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 3:
        raise fail(where, f'must be [x, y, radius_m] (3 numbers) or null, got {value!r}')
    x, y = (check_number(v, f'{where}[{i}]') for i, v in enumerate(value[:2]))
    return [x, y, check_number(value[2], f'{where}[2]', positive=True)]


def _load_overrides(files: list[str], where: str) -> None:
    from rc_sim_description.params import load_vehicle_params

    try:
        load_vehicle_params(overrides=files)
    except RcSimError as exc:
        raise fail(where, inner_message(exc)) from None


def _check_params(value: Any, where: str, folder: Path) -> str | list[str]:
    items = value if isinstance(value, list) else [value]
    names = [check_text(v, f'{where}[{i}]' if isinstance(value, list) else where)
             for i, v in enumerate(items)]
    files = [resolve_path(folder, n) for n in names]
    for name, file in zip(names, files):
        if not Path(file).is_file():
            raise fail(where, f'vehicle override file {name!r} not found')
    _load_overrides(files, where)
    return names if isinstance(value, list) else names[0]


def vehicle_override_file(values: Mapping[str, Any], folder: Path) -> Path:
    """Write inline vehicle overrides to a YAML file in ``folder`` (for the loader)."""
    fd, name = tempfile.mkstemp(prefix='vehicle.', suffix='.yaml', dir=folder)
    with os.fdopen(fd, 'w', encoding='utf-8') as fh:
        fh.write(dump_yaml(dict(values), name))
    return Path(name)


def _check_vehicle(value: Any, where: str, folder: Path) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise fail(where, 'must be a mapping of vehicle.yaml sections, e.g. '
                    '{mass_properties: {mass: 3.2}}')
    with tempfile.TemporaryDirectory(prefix='rcsim-campaign-') as tmp:
        path = vehicle_override_file(value, Path(tmp))
        try:
            from rc_sim_description.params import load_vehicle_params

            load_vehicle_params(overrides=[path])
        except RcSimError as exc:
            raise fail(where, str(exc).replace(f'{path}: ', '').replace(str(path), 'vehicle')
                        ) from None
    return dict(value)


def _check_lidar(value: Any, where: str, folder: Path) -> Any:
    from rc_sim_sensors.lidar_config import PRESETS

    if value is None:
        return None
    if isinstance(value, Mapping):
        data = check_keys(value, ('preset', 'set'), where, required=('preset',))
        _check_lidar(data['preset'], f'{where}.preset', folder)
        settings = data.get('set', {})
        if not isinstance(settings, Mapping):
            raise fail(f'{where}.set', 'must be a mapping of lidar error keys')
        try:
            lidar_config(data, folder)
        except RcSimError as exc:
            raise fail(f'{where}.set', inner_message(exc)) from None
        return {'preset': data['preset'], 'set': dict(settings)}
    name = check_text(value, where)
    if name in PRESETS:
        return name
    file = Path(resolve_path(folder, name))
    if not file.is_file():
        raise fail(where, f'{name!r} is neither a preset{did_you_mean(name, PRESETS)} '
                    f'({", ".join(PRESETS)}) nor a YAML file')
    lidar_config(name, folder)
    return name


def lidar_config(value: Any, folder: Path) -> Any:
    """The ``LidarErrorConfig`` of a ``lidar_errors`` factor value (None: no errors)."""
    from rc_sim_sensors.lidar_config import PRESETS, LidarErrorConfig

    if value is None:
        return None
    if isinstance(value, Mapping):
        base = lidar_config(value['preset'], folder)
        merged = {**base.to_dict(), **dict(value.get('set') or {})}
        return LidarErrorConfig.from_mapping(merged, f'{value["preset"]} + set')
    from rc_sim_engine.sim.run_setup import lidar_error_config

    return lidar_error_config(value if value in PRESETS else resolve_path(folder, value),
                              'lidar_errors')


def _check_seed(value: Any, where: str, folder: Path) -> int:
    return _int(value, where)


def _check_model(value: Any, where: str, folder: Path) -> str:
    from rc_sim_engine.vehicle.models import MODELS

    name = check_text(value, where)
    if name not in MODELS:
        raise fail(where, f'unknown model {name!r}{did_you_mean(name, MODELS)} (known: '
                    f'{", ".join(MODELS)})')
    return name


FACTOR_CHECKS = {
    'world': _check_world,
    'scenario': _check_scenario,
    'trajectory': _check_trajectory,
    'start': _check_start,
    'goal': _check_goal,
    'params': _check_params,
    'vehicle': _check_vehicle,
    'lidar_errors': _check_lidar,
    'seed': _check_seed,
    'model': _check_model,
}


def check_factor_name(key: Any, where: str) -> str:
    if key not in FACTORS:
        raise fail(f'{where}.{key}', f'unknown factor{did_you_mean(str(key), FACTORS)} '
                    f'(known: {", ".join(FACTORS)})')
    return str(key)


def _random_values(data: Any, where: str) -> list[Any]:
    """Seeded draws: ``{count, seed, low, high}`` (uniform; integers when both are integers;
    lists draw element-wise) or ``{count, seed, choice: [...]}``."""
    body = check_keys(data, ('count', 'seed', 'low', 'high', 'choice'), where,
                 required=('count', 'seed'))
    count = _int(body['count'], f'{where}.count', 1)
    from rc_sim_description.limits import MAX_INT_DIGITS

    seed = _int(body['seed'], f'{where}.seed')
    if len(str(seed)) > MAX_INT_DIGITS:
        raise fail(f'{where}.seed', 'too large')
    rng = np.random.default_rng(seed)
    if 'choice' in body:
        if 'low' in body or 'high' in body:
            raise fail(where, 'give choice or low/high, not both')
        choice = body['choice']
        if not isinstance(choice, list) or not choice:
            raise fail(f'{where}.choice', 'must be a non-empty list')
        return [choice[int(i)] for i in rng.integers(0, len(choice), size=count)]
    if 'low' not in body or 'high' not in body:
        raise fail(where, 'needs low and high (or choice)')
    low, high = body['low'], body['high']
    if isinstance(low, list) or isinstance(high, list):
        if not (isinstance(low, list) and isinstance(high, list) and len(low) == len(high)):
            raise fail(where, 'low and high must be lists of the same length')
        lo = [check_number(v, f'{where}.low[{i}]') for i, v in enumerate(low)]
        hi = [check_number(v, f'{where}.high[{i}]') for i, v in enumerate(high)]
        if any(a > b for a, b in zip(lo, hi)):
            raise fail(where, 'low must be <= high')
        return [[float(v) for v in rng.uniform(lo, hi)] for _ in range(count)]
    a, b = check_number(low, f'{where}.low'), check_number(high, f'{where}.high')
    if a > b:
        raise fail(where, f'low must be <= high, got {low!r} > {high!r}')
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
        return [int(v) for v in rng.integers(int(low), int(high), size=count, endpoint=True)]
    return [float(v) for v in rng.uniform(a, b, size=count)]


def _values(name: str, data: Any, where: str, folder: Path) -> tuple[Any, ...]:
    if isinstance(data, Mapping) and 'random' in data:
        check_keys(data, ('random',), where)
        raw = _random_values(data['random'], f'{where}.random')
    elif isinstance(data, list):
        if not data:
            raise fail(where, 'must list at least one value')
        raw = data
    else:
        raise fail(where, 'must be a list of values or {random: {count, seed, ...}}')
    return tuple(FACTOR_CHECKS[name](v, f'{where}[{i}]', folder) for i, v in enumerate(raw))


def factor_block(data: Any, where: str, folder: Path) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise fail(where, f'must be a mapping of factor: values, got {type(data).__name__}')
    return tuple((check_factor_name(k, where), _values(str(k), v, f'{where}.{k}', folder))
                 for k, v in data.items())
