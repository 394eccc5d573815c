"""The campaign spec: a YAML file read into frozen dataclasses, every value checked on load.

Any bad key or value is one :class:`~rc_sim_description.errors.ConfigError` line naming the file
and the key path (``spec.yaml: factors.grid.seed[2]: must be an integer >= 0, got -1``), unknown
keys with a did-you-mean hint, like vehicle.yaml. The format (docs/campaigns.md)::

    campaign: NAME                      # optional
    driver: {kind: scenario | tracker | python | ros_launch, ...}
    fixed: {FACTOR: VALUE, ...}         # the same in every run
    factors:
      grid: {FACTOR: [VALUES] | {random: {...}}, ...}   # cartesian product
      list: {FACTOR: [VALUES] | {random: {...}}, ...}   # zipped (equal lengths), x the grid
    metrics: [NAME, ...]                # default: all that apply to the driver
    user_metrics: {NAME: module:callable}
    pass: {METRIC: {min: A, max: B}}    # a run passes when every bound holds
    keep: {bags: none | failures | all}

Relative paths in a spec are relative to the spec's folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
import os
from pathlib import Path
import re
import tempfile
from typing import Any

import numpy as np

from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_description.yamlio import did_you_mean, dump_yaml, read_yaml

__all__ = ['DRIVER_KINDS', 'FACTORS', 'KEEP_BAGS', 'METRICS', 'Bound', 'CampaignSpec',
           'Driver', 'load_spec', 'resolve_path']

DRIVER_KINDS = ('scenario', 'tracker', 'python', 'ros_launch')
#: Factor name -> what it sets.
FACTORS: dict[str, str] = {
    'world': 'world name, SDF file or track map YAML',
    'scenario': 'scenario (driver kind scenario): manoeuvre name, shipped scenario or YAML file',
    'trajectory': 'reference shape (driver kind tracker)',
    'start': 'base_link start pose [x, y, yaw] (null: the spawn pose / placed as rcsim run)',
    'params': 'vehicle override YAML file (or a list of them), e.g. a calibration result',
    'vehicle': 'vehicle overrides inline, shaped like an override file',
    'lidar_errors': 'lidar error preset, YAML file, or {preset: NAME, set: {KEY: VALUE}}',
    'seed': 'seed of every random generator of the run (integer >= 0)',
    'model': 'vehicle model: single_track, kinematic or kinematic_4ws',
}
#: Built-in metric name -> meaning (SI units in the names).
METRICS: dict[str, str] = {
    'collisions': 'number of contacts with an obstacle',
    'first_contact_s': 'time of the first contact (empty: none)',
    'min_wall_distance_m': 'smallest gap footprint-obstacle over the run (conservative: centre '
                           'distance minus the bounding radius)',
    'distance_m': 'distance driven',
    'progress_m': 'net arc length gained along the track centre line (track maps; forward '
                  'positive, laps add up)',
    'max_speed_mps': 'largest |speed|',
    'max_lateral_acceleration_mps2': 'largest |lateral acceleration|',
    'tracking_rmse_m': 'RMSE of the centre-of-mass tracking error (tracker driver)',
    'tracking_ise_m2s': 'ISE of the centre-of-mass tracking error (tracker driver)',
}
KEEP_BAGS = ('none', 'failures', 'all')
MODES = ('yaw_rate', 'curvature', 'radius', 'steering_angle')
_CALLABLE = re.compile(r'^[A-Za-z_][\w.]*:[A-Za-z_]\w*$')
_NAME = re.compile(r'^[A-Za-z_]\w*$')
_TOP = ('campaign', 'driver', 'fixed', 'factors', 'metrics', 'user_metrics', 'pass', 'keep')
_DRIVER_KEYS = {'scenario': ('kind', 'duration_s'),
                'tracker': ('kind', 'controller', 'duration_s', 'control_rate_hz', 'set'),
                'python': ('kind', 'controller', 'duration_s', 'control_rate_hz', 'mode'),
                'ros_launch': ('kind', 'launch', 'run', 'args', 'duration_s', 'control_rate_hz',
                               'mode', 'timeout_s')}
#: Built-in metrics a ros_launch run does not measure (sim_node publishes no CG acceleration).
ROS_UNMEASURED = ('max_lateral_acceleration_mps2',)
#: Factors sim_node does not take (one params_file, no model choice, SDF worlds only).
ROS_FACTORS_REFUSED = {'vehicle': 'give a vehicle override file as params',
                       'model': 'sim_node simulates the single_track model'}


@dataclass(frozen=True)
class Driver:
    """What drives the car: ``scenario`` (open-loop, as ``rcsim run``), ``tracker`` (as
    ``rcsim track``; controller fl | kanayama | pure_pursuit), ``python`` (``module:callable``
    factory of a controller ``(t, obs) -> (linear_x, angular_z)``) or ``ros_launch`` (the user's
    ROS 2 launch file or executable against ``sim_node`` in lockstep; ``settings`` holds
    ``launch`` / ``run``, ``args`` and ``timeout_s``, :mod:`.ros_run`)."""

    kind: str
    controller: str | None = None
    duration_s: float | None = None
    control_rate_hz: float = 50.0
    mode: str = 'yaw_rate'
    settings: tuple[tuple[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Plain mapping (part of every run's identity)."""
        return {'kind': self.kind, 'controller': self.controller, 'duration_s': self.duration_s,
                'control_rate_hz': self.control_rate_hz, 'mode': self.mode,
                'set': dict(self.settings)}


@dataclass(frozen=True)
class Bound:
    """Pass rule of one metric: ``low <= value <= high`` (either may be None)."""

    metric: str
    low: float | None = None
    high: float | None = None

    def holds(self, value: float | None) -> bool:
        """True for a missing value: the metric does not apply to the run (no contact, no
        obstacle in the world); a run that errored fails whatever its bounds."""
        if value is None:
            return True
        if not math.isfinite(value):
            return False
        return ((self.low is None or value >= self.low)
                and (self.high is None or value <= self.high))

    def text(self) -> str:
        """``collisions <= 0``-style description."""
        parts = ([f'>= {self.low:g}'] if self.low is not None else []) + (
            [f'<= {self.high:g}'] if self.high is not None else [])
        return f'{self.metric} {" and ".join(parts)}'


@dataclass(frozen=True)
class CampaignSpec:
    """A validated campaign spec (see the module docstring)."""

    path: str
    name: str
    driver: Driver
    fixed: tuple[tuple[str, Any], ...]
    grid: tuple[tuple[str, tuple[Any, ...]], ...]
    zipped: tuple[tuple[str, tuple[Any, ...]], ...]
    metrics: tuple[str, ...]
    user_metrics: tuple[tuple[str, str], ...]
    pass_rules: tuple[Bound, ...]
    keep_bags: str = 'none'

    @property
    def folder(self) -> Path:
        """The spec's folder (relative paths and user modules are found there)."""
        return Path(self.path).resolve().parent

    @property
    def factor_names(self) -> tuple[str, ...]:
        """Every factor a run sets, in spec order (fixed, grid, list)."""
        names = [k for k, _ in self.fixed] + [k for k, _ in self.grid] + [k for k, _ in
                                                                           self.zipped]
        return tuple(dict.fromkeys(names))

    @property
    def metric_columns(self) -> tuple[str, ...]:
        """Built-in metrics, then user metrics: the table's metric columns."""
        return self.metrics + tuple(name for name, _ in self.user_metrics)


def resolve_path(spec_folder: Path, value: str) -> str:
    """A path of the spec, relative to its folder; names (no such file) stay as they are."""
    p = Path(value)
    if p.is_absolute():
        return value
    candidate = spec_folder / p
    return str(candidate) if candidate.exists() or p.suffix else value


# --------------------------------------------------------------------------- checks
def _fail(where: str, problem: str) -> ConfigError:
    return ConfigError(f'{where}: {problem}')


def _keys(data: Any, allowed: Sequence[str], where: str, required: Sequence[str] = ()) -> dict:
    if not isinstance(data, Mapping):
        raise _fail(where, f'must be a mapping, got {type(data).__name__}')
    for key in data:
        if key not in allowed:
            raise _fail(f'{where}.{key}' if where[-1] != ':' else f'{where} {key}',
                        f'unknown key{did_you_mean(str(key), allowed)} (known: '
                        f'{", ".join(allowed)})')
    for key in required:
        if key not in data:
            raise _fail(where, f'missing key {key!r}')
    return dict(data)


def _number(value: Any, where: str, *, low: float | None = None, positive: bool = False
            ) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(where, f'must be a number, got {value!r}')
    v = float(value)
    if not math.isfinite(v):
        raise _fail(where, f'must be a finite number, got {value!r}')
    if positive and v <= 0:
        raise _fail(where, f'must be > 0, got {value!r}')
    if low is not None and v < low:
        raise _fail(where, f'must be >= {low:g}, got {value!r}')
    return v


def _int(value: Any, where: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise _fail(where, f'must be an integer >= {low}, got {value!r}')
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, f'must be a non-empty string, got {value!r}')
    return value


def _callable_name(value: Any, where: str) -> str:
    text = _text(value, where)
    if not _CALLABLE.match(text):
        raise _fail(where, f'must be module:callable (e.g. my_controller:make), got {text!r}')
    return text


def _inner(exc: RcSimError) -> str:
    return str(exc)


def _check_world(value: Any, where: str, folder: Path) -> str:
    from rc_sim_description.paths import world_path
    from rc_sim_engine.track_map import is_map_yaml

    name = _text(value, where)
    resolved = resolve_path(folder, name)
    if is_map_yaml(resolved):
        if not Path(resolved).is_file():
            raise _fail(where, f'map file {name!r} not found')
        return name
    try:
        world_path(resolved)
    except RcSimError as exc:
        raise _fail(where, _inner(exc)) from None
    return name


def _check_scenario(value: Any, where: str, folder: Path) -> str:
    from rc_sim_control.commands import MANOEUVRE_ALIASES, MANOEUVRES
    from rc_sim_engine.cli_run import _shipped_scenarios, scenario_path

    name = _text(value, where)
    if name in MANOEUVRES or name in MANOEUVRE_ALIASES or scenario_path(name) is not None:
        return name
    resolved = Path(resolve_path(folder, name))
    if resolved.suffix in ('.yaml', '.yml') or resolved.is_file():
        if not resolved.is_file():
            raise _fail(where, f'scenario file {name!r} not found')
        from rc_sim_control.commands import load_sequence

        try:
            load_sequence(resolved)
        except RcSimError as exc:
            raise _fail(where, _inner(exc)) from None
        return name
    known = [*MANOEUVRES, *_shipped_scenarios()]
    raise _fail(where, f'unknown scenario {name!r}{did_you_mean(name, known)} (known: '
                f'{", ".join(known)}; or a scenario YAML file)')


def _check_trajectory(value: Any, where: str, folder: Path) -> str:
    from rc_sim_control.trajectories import TRAJECTORY_ALIASES, TRAJECTORY_NAMES

    name = _text(value, where)
    if name not in TRAJECTORY_NAMES and name not in TRAJECTORY_ALIASES:
        raise _fail(where, f'unknown trajectory {name!r}'
                    f'{did_you_mean(name, [*TRAJECTORY_NAMES, *TRAJECTORY_ALIASES])} (known: '
                    f'{", ".join(TRAJECTORY_NAMES)})')
    return name


def _check_start(value: Any, where: str, folder: Path) -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 3:
        raise _fail(where, f'must be [x, y, yaw] (3 numbers) or null, got {value!r}')
    return [_number(v, f'{where}[{i}]') for i, v in enumerate(value)]


def _load_overrides(files: list[str], where: str) -> None:
    from rc_sim_description.params import load_vehicle_params

    try:
        load_vehicle_params(overrides=files)
    except RcSimError as exc:
        raise _fail(where, _inner(exc)) from None


def _check_params(value: Any, where: str, folder: Path) -> str | list[str]:
    items = value if isinstance(value, list) else [value]
    names = [_text(v, f'{where}[{i}]' if isinstance(value, list) else where)
             for i, v in enumerate(items)]
    files = [resolve_path(folder, n) for n in names]
    for name, file in zip(names, files):
        if not Path(file).is_file():
            raise _fail(where, f'vehicle override file {name!r} not found')
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
        raise _fail(where, 'must be a mapping of vehicle.yaml sections, e.g. '
                    '{mass_properties: {mass: 3.2}}')
    with tempfile.TemporaryDirectory(prefix='rcsim-campaign-') as tmp:
        path = vehicle_override_file(value, Path(tmp))
        try:
            from rc_sim_description.params import load_vehicle_params

            load_vehicle_params(overrides=[path])
        except RcSimError as exc:
            raise _fail(where, str(exc).replace(f'{path}: ', '').replace(str(path), 'vehicle')
                        ) from None
    return dict(value)


def _check_lidar(value: Any, where: str, folder: Path) -> Any:
    from rc_sim_sensors.lidar_config import PRESETS

    if value is None:
        return None
    if isinstance(value, Mapping):
        data = _keys(value, ('preset', 'set'), where, required=('preset',))
        _check_lidar(data['preset'], f'{where}.preset', folder)
        settings = data.get('set', {})
        if not isinstance(settings, Mapping):
            raise _fail(f'{where}.set', 'must be a mapping of lidar error keys')
        try:
            lidar_config(data, folder)
        except RcSimError as exc:
            raise _fail(f'{where}.set', _inner(exc)) from None
        return {'preset': data['preset'], 'set': dict(settings)}
    name = _text(value, where)
    if name in PRESETS:
        return name
    file = Path(resolve_path(folder, name))
    if not file.is_file():
        raise _fail(where, f'{name!r} is neither a preset{did_you_mean(name, PRESETS)} '
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
    if value in PRESETS:
        return LidarErrorConfig.from_preset(value)
    return LidarErrorConfig.from_yaml(resolve_path(folder, value))


def _check_seed(value: Any, where: str, folder: Path) -> int:
    return _int(value, where)


def _check_model(value: Any, where: str, folder: Path) -> str:
    from rc_sim_engine.models import MODELS

    name = _text(value, where)
    if name not in MODELS:
        raise _fail(where, f'unknown model {name!r}{did_you_mean(name, MODELS)} (known: '
                    f'{", ".join(MODELS)})')
    return name


_CHECKS = {'world': _check_world, 'scenario': _check_scenario, 'trajectory': _check_trajectory,
           'start': _check_start, 'params': _check_params, 'vehicle': _check_vehicle,
           'lidar_errors': _check_lidar, 'seed': _check_seed, 'model': _check_model}


def _factor_name(key: Any, where: str) -> str:
    if key not in FACTORS:
        raise _fail(f'{where}.{key}', f'unknown factor{did_you_mean(str(key), FACTORS)} '
                    f'(known: {", ".join(FACTORS)})')
    return str(key)


def _random_values(data: Any, where: str) -> list[Any]:
    """Seeded draws: ``{count, seed, low, high}`` (uniform; integers when both are integers;
    lists draw element-wise) or ``{count, seed, choice: [...]}``."""
    body = _keys(data, ('count', 'seed', 'low', 'high', 'choice'), where,
                 required=('count', 'seed'))
    count = _int(body['count'], f'{where}.count', 1)
    from rc_sim_description.limits import MAX_INT_DIGITS

    seed = _int(body['seed'], f'{where}.seed')
    if len(str(seed)) > MAX_INT_DIGITS:
        raise _fail(f'{where}.seed', 'too large')
    rng = np.random.default_rng(seed)
    if 'choice' in body:
        if 'low' in body or 'high' in body:
            raise _fail(where, 'give choice or low/high, not both')
        choice = body['choice']
        if not isinstance(choice, list) or not choice:
            raise _fail(f'{where}.choice', 'must be a non-empty list')
        return [choice[int(i)] for i in rng.integers(0, len(choice), size=count)]
    if 'low' not in body or 'high' not in body:
        raise _fail(where, 'needs low and high (or choice)')
    low, high = body['low'], body['high']
    if isinstance(low, list) or isinstance(high, list):
        if not (isinstance(low, list) and isinstance(high, list) and len(low) == len(high)):
            raise _fail(where, 'low and high must be lists of the same length')
        lo = [_number(v, f'{where}.low[{i}]') for i, v in enumerate(low)]
        hi = [_number(v, f'{where}.high[{i}]') for i, v in enumerate(high)]
        if any(a > b for a, b in zip(lo, hi)):
            raise _fail(where, 'low must be <= high')
        return [[float(v) for v in rng.uniform(lo, hi)] for _ in range(count)]
    a, b = _number(low, f'{where}.low'), _number(high, f'{where}.high')
    if a > b:
        raise _fail(where, f'low must be <= high, got {low!r} > {high!r}')
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
        return [int(v) for v in rng.integers(int(low), int(high), size=count, endpoint=True)]
    return [float(v) for v in rng.uniform(a, b, size=count)]


def _values(name: str, data: Any, where: str, folder: Path) -> tuple[Any, ...]:
    if isinstance(data, Mapping) and 'random' in data:
        _keys(data, ('random',), where)
        raw = _random_values(data['random'], f'{where}.random')
    elif isinstance(data, list):
        if not data:
            raise _fail(where, 'must list at least one value')
        raw = data
    else:
        raise _fail(where, 'must be a list of values or {random: {count, seed, ...}}')
    return tuple(_CHECKS[name](v, f'{where}[{i}]', folder) for i, v in enumerate(raw))


def _factor_block(data: Any, where: str, folder: Path) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise _fail(where, f'must be a mapping of factor: values, got {type(data).__name__}')
    return tuple((_factor_name(k, where), _values(str(k), v, f'{where}.{k}', folder))
                 for k, v in data.items())


def _driver(data: Any, where: str) -> Driver:
    if not isinstance(data, Mapping) or 'kind' not in data:
        raise _fail(where, f'must be a mapping with kind ({", ".join(DRIVER_KINDS)})')
    kind = data['kind']
    if kind not in DRIVER_KINDS:
        raise _fail(f'{where}.kind', f'unknown driver {kind!r}'
                    f'{did_you_mean(str(kind), DRIVER_KINDS)} (known: {", ".join(DRIVER_KINDS)})')
    body = _keys(data, _DRIVER_KEYS[kind], where)
    duration = body.get('duration_s')
    duration_s = None if duration is None else _number(duration, f'{where}.duration_s',
                                                       positive=True)
    rate = _number(body.get('control_rate_hz', 50.0), f'{where}.control_rate_hz', positive=True)
    controller = body.get('controller')
    settings: tuple[tuple[str, Any], ...] = ()
    mode = 'yaw_rate'
    if kind == 'tracker':
        controller = controller or 'fl'
        if controller not in ('fl', 'kanayama', 'pure_pursuit'):
            raise _fail(f'{where}.controller', f'unknown tracker {controller!r}'
                        f'{did_you_mean(str(controller), ("fl", "kanayama", "pure_pursuit"))}'
                        ' (known: fl, kanayama, pure_pursuit)')
        raw = body.get('set') or {}
        if not isinstance(raw, Mapping):
            raise _fail(f'{where}.set', 'must be a mapping of tracker parameters')
        from rc_sim_engine.cli_track import _parse_set

        try:
            parsed = _parse_set([f'{k}={v}' for k, v in raw.items()])
        except RcSimError as exc:
            raise _fail(f'{where}.set', _inner(exc).replace('--set ', '')) from None
        settings = tuple(sorted(parsed.items()))
    elif kind == 'python':
        controller = _callable_name(controller, f'{where}.controller')
        if duration_s is None:
            raise _fail(where, 'missing key duration_s (a python controller runs for a given '
                        'time)')
        mode = _mode(body, where)
    elif kind == 'ros_launch':
        if duration_s is None:
            raise _fail(where, 'missing key duration_s (a ros_launch run stops at this sim time)')
        mode = _mode(body, where)
        settings = _ros_settings(body, where)
    return Driver(kind, controller, duration_s, rate, mode, settings)


def _mode(body: Mapping[str, Any], where: str) -> str:
    mode = body.get('mode', 'yaw_rate')
    if mode not in MODES:
        raise _fail(f'{where}.mode', f'unknown mapper mode {mode!r}'
                    f'{did_you_mean(str(mode), MODES)} (known: {", ".join(MODES)})')
    return str(mode)


def _ros_settings(body: Mapping[str, Any], where: str) -> tuple[tuple[str, Any], ...]:
    """``launch: {package, file} | {path}`` or ``run: {package, executable}``; ``args``
    (launch arguments ``name:=value`` / ``-p name:=value`` parameters) and ``timeout_s`` (wall
    time limit of a run)."""
    if ('launch' in body) == ('run' in body):
        raise _fail(where, 'give launch: {package: P, file: F} (or {path: F}) or run: '
                    '{package: P, executable: E}')
    out: list[tuple[str, Any]] = []
    if 'launch' in body:
        launch = _keys(body['launch'], ('package', 'file', 'path'), f'{where}.launch')
        if 'path' in launch:
            if 'package' in launch or 'file' in launch:
                raise _fail(f'{where}.launch', 'give path, or package and file, not both')
            out.append(('launch', (('path', _text(launch['path'], f'{where}.launch.path')),)))
        else:
            for key in ('package', 'file'):
                if key not in launch:
                    raise _fail(f'{where}.launch', f'missing key {key!r} (or give path)')
            out.append(('launch', tuple((k, _text(launch[k], f'{where}.launch.{k}'))
                                        for k in ('package', 'file'))))
    else:
        run = _keys(body['run'], ('package', 'executable'), f'{where}.run',
                    required=('package', 'executable'))
        out.append(('run', tuple((k, _text(run[k], f'{where}.run.{k}'))
                                 for k in ('package', 'executable'))))
    args = body.get('args') or {}
    if not isinstance(args, Mapping):
        raise _fail(f'{where}.args', 'must be a mapping NAME: VALUE')
    pairs = []
    for key, value in args.items():
        if not isinstance(key, str) or not _NAME.match(key):
            raise _fail(f'{where}.args.{key}', 'must be an identifier')
        if isinstance(value, bool):
            text = 'true' if value else 'false'
        elif isinstance(value, (int, float, str)):
            text = str(value)
        else:
            raise _fail(f'{where}.args.{key}', f'must be a string, number or boolean, got '
                        f'{value!r}')
        pairs.append((key, text))
    out.append(('args', tuple(sorted(pairs))))
    timeout = _number(body.get('timeout_s', 120.0), f'{where}.timeout_s', positive=True)
    out.append(('timeout_s', timeout))
    return tuple(out)


def _metrics(data: Any, where: str, driver: Driver) -> tuple[str, ...]:
    applicable = [m for m in METRICS if (driver.kind == 'tracker' or not m.startswith('tracking'))
                  and not (driver.kind == 'ros_launch' and m in ROS_UNMEASURED)]
    if data is None:
        return tuple(applicable)
    if not isinstance(data, list) or not data:
        raise _fail(where, 'must be a non-empty list of metric names')
    out = []
    for i, name in enumerate(data):
        if name not in METRICS:
            raise _fail(f'{where}[{i}]', f'unknown metric {name!r}'
                        f'{did_you_mean(str(name), METRICS)} (known: {", ".join(METRICS)})')
        if name not in applicable:
            raise _fail(f'{where}[{i}]', f'{name} is not measured in ros_launch runs'
                        if name in ROS_UNMEASURED else f'{name} needs driver kind tracker')
        if name in out:
            raise _fail(f'{where}[{i}]', f'{name} listed twice')
        out.append(name)
    return tuple(out)


def _pass_rules(data: Any, where: str, columns: Sequence[str]) -> tuple[Bound, ...]:
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise _fail(where, 'must be a mapping METRIC: {min: A, max: B}')
    rules = []
    for metric, bound in data.items():
        key = f'{where}.{metric}'
        if metric not in columns:
            raise _fail(key, f'not a metric of this campaign{did_you_mean(str(metric), columns)}'
                        f' (metrics: {", ".join(columns)})')
        body = _keys(bound, ('min', 'max'), key)
        if not body:
            raise _fail(key, 'give min and/or max')
        low = None if body.get('min') is None else _number(body['min'], f'{key}.min')
        high = None if body.get('max') is None else _number(body['max'], f'{key}.max')
        if low is not None and high is not None and low > high:
            raise _fail(key, f'min {low:g} > max {high:g}')
        rules.append(Bound(str(metric), low, high))
    return tuple(rules)


def load_spec(path: str | os.PathLike[str]) -> CampaignSpec:
    """Read and validate a campaign spec; any problem is one ConfigError line."""
    file = str(path)
    folder = Path(file).resolve().parent
    data = read_yaml(file, ConfigError)
    if not isinstance(data, Mapping):
        raise _fail(file, f'top level must be a mapping (keys: {", ".join(_TOP)}), got '
                    f'{type(data).__name__}')
    body = _keys(data, _TOP, f'{file}:', required=('driver',))
    name = body.get('campaign', Path(file).stem)
    if not isinstance(name, str) or not name.strip():
        raise _fail(f'{file}: campaign', f'must be a non-empty string, got {name!r}')
    driver = _driver(body['driver'], f'{file}: driver')
    fixed_raw = body.get('fixed') or {}
    if not isinstance(fixed_raw, Mapping):
        raise _fail(f'{file}: fixed', 'must be a mapping of factor: value')
    fixed = tuple((_factor_name(k, f'{file}: fixed'),
                   _CHECKS[str(k)](v, f'{file}: fixed.{k}', folder)) for k, v in fixed_raw.items())
    factors = body.get('factors') or {}
    factors = _keys(factors, ('grid', 'list'), f'{file}: factors')
    grid = _factor_block(factors.get('grid'), f'{file}: factors.grid', folder)
    zipped = _factor_block(factors.get('list'), f'{file}: factors.list', folder)
    names = [k for k, _ in fixed] + [k for k, _ in grid] + [k for k, _ in zipped]
    for i, key in enumerate(names):
        if key in names[:i]:
            raise _fail(f'{file}: {key}', 'set more than once (fixed, factors.grid and '
                        'factors.list must name different factors)')
    lengths = {len(v) for _, v in zipped}
    if len(lengths) > 1:
        raise _fail(f'{file}: factors.list', 'every factor must list the same number of '
                    f'values, got {", ".join(f"{k}: {len(v)}" for k, v in zipped)}')
    if driver.kind != 'scenario' and 'scenario' in names:
        raise _fail(f'{file}: scenario', f'applies to driver kind scenario, not {driver.kind}')
    if driver.kind != 'tracker' and 'trajectory' in names:
        raise _fail(f'{file}: trajectory', f'applies to driver kind tracker, not {driver.kind}')
    if driver.kind == 'scenario' and 'scenario' not in names:
        raise _fail(f'{file}: driver', 'kind scenario needs a scenario (in fixed or factors)')
    if driver.kind == 'tracker' and 'lidar_errors' in names:
        raise _fail(f'{file}: lidar_errors', 'the trackers do not read the lidar: vary it with '
                    'driver kind scenario or python')
    if driver.kind == 'ros_launch':
        _check_ros_factors(file, fixed, grid, zipped, folder)
        launch = dict(dict(driver.settings).get('launch', ()))
        if 'path' in launch and not Path(resolve_path(folder, launch['path'])).is_file():
            raise _fail(f'{file}: driver.launch.path', f'launch file {launch["path"]!r} not found')
    metrics = _metrics(body.get('metrics'), f'{file}: metrics', driver)
    users_raw = body.get('user_metrics') or {}
    if not isinstance(users_raw, Mapping):
        raise _fail(f'{file}: user_metrics', 'must be a mapping NAME: module:callable')
    users = []
    for key, value in users_raw.items():
        if not isinstance(key, str) or not _NAME.match(key) or key in METRICS:
            raise _fail(f'{file}: user_metrics.{key}', 'must be a new identifier (not a '
                        'built-in metric name)')
        users.append((key, _callable_name(value, f'{file}: user_metrics.{key}')))
    columns = [*metrics, *(k for k, _ in users)]
    rules = _pass_rules(body.get('pass'), f'{file}: pass', columns)
    keep = _keys(body.get('keep') or {}, ('bags',), f'{file}: keep')
    bags = keep.get('bags', 'none')
    if bags not in KEEP_BAGS:
        raise _fail(f'{file}: keep.bags', f'must be one of {", ".join(KEEP_BAGS)}, got {bags!r}'
                    f'{did_you_mean(str(bags), KEEP_BAGS)}')
    if bags != 'none' and driver.kind == 'ros_launch':
        raise _fail(f'{file}: keep.bags', 'ros_launch runs keep no bags (record them in your '
                    'launch file)')
    if bags != 'none' and driver.kind == 'tracker':
        raise _fail(f'{file}: keep.bags', 'tracker runs keep no bags: the page gives the rcsim '
                    'track command that writes one')
    return CampaignSpec(file, name, driver, fixed, grid, zipped, metrics, tuple(users), rules,
                        bags)


def _check_ros_factors(file: str, fixed: Any, grid: Any, zipped: Any, folder: Path) -> None:
    """What ``sim_node`` cannot take: inline vehicle values, a model choice, a list of override
    files, track map worlds."""
    from rc_sim_engine.track_map import is_map_yaml

    for block, items in (('fixed', fixed), ('factors.grid', grid), ('factors.list', zipped)):
        for name, raw in items:
            values = [raw] if block == 'fixed' else list(raw)
            where = f'{file}: {block}.{name}'
            if name in ROS_FACTORS_REFUSED:
                raise _fail(where, f'not a factor of ros_launch runs '
                            f'({ROS_FACTORS_REFUSED[name]})')
            for value in values:
                if name == 'params' and isinstance(value, list):
                    raise _fail(where, 'ros_launch runs take one vehicle override file '
                                '(sim_node params_file)')
                if name == 'world' and is_map_yaml(resolve_path(folder, str(value))):
                    raise _fail(where, f'{value!r}: ros_launch runs take SDF worlds (sim_node '
                                'world), not track maps')
