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
from typing import Any

from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_description.yamlio import did_you_mean, read_yaml
from rc_sim_engine.campaign.factors import (
    FACTOR_CHECKS,
    FACTORS,
    check_callable_name,
    check_factor_name,
    check_keys,
    check_number,
    check_text,
    factor_block,
    fail,
    inner_message,
    resolve_path,
)

__all__ = ['DRIVER_KINDS', 'FACTORS', 'KEEP_BAGS', 'METRICS', 'Bound', 'CampaignSpec',
           'Driver', 'load_spec', 'resolve_path']

DRIVER_KINDS = ('scenario', 'tracker', 'python', 'ros_launch')
#: Built-in metric name -> meaning (SI units in the names).
METRICS: dict[str, str] = {
    'collisions': 'number of contacts with an obstacle',
    'first_contact_s': 'time of the first contact (empty: none)',
    'min_wall_distance_m': 'smallest gap footprint-obstacle over the run (conservative: centre '
                           'distance minus the bounding radius)',
    'distance_m': 'distance driven',
    'progress_m': 'net arc length gained along the track centre line (track maps; forward '
                  'positive, laps add up)',
    'lap_time_s': 'time the net progress first reaches one lap of the centre line (track maps; '
                  'empty: no lap)',
    'time_to_goal_s': "time base_link first comes within the goal factor's radius (empty: "
                      'never, or no goal)',
    'max_speed_mps': 'largest |speed|',
    'max_lateral_acceleration_mps2': 'largest |lateral acceleration|',
    'tracking_rmse_m': 'RMSE of the centre-of-mass tracking error (tracker driver)',
    'tracking_ise_m2s': 'ISE of the centre-of-mass tracking error (tracker driver)',
}
#: Metrics whose empty value means the run did not get there (no lap, goal never reached): it
#: fails a bound on them (an empty first_contact_s, no contact, satisfies its bound).
EMPTY_FAILS = frozenset({'lap_time_s', 'time_to_goal_s'})
KEEP_BAGS = ('none', 'failures', 'all')
MODES = ('yaw_rate', 'curvature', 'radius', 'steering_angle')
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
        """True for a missing value where the metric does not apply to the run (no contact, no
        obstacle in the world), False where it means the run did not get there
        (:data:`EMPTY_FAILS`); a run that errored fails whatever its bounds."""
        if value is None:
            return self.metric not in EMPTY_FAILS
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


def _driver(data: Any, where: str) -> Driver:
    if not isinstance(data, Mapping) or 'kind' not in data:
        raise fail(where, f'must be a mapping with kind ({", ".join(DRIVER_KINDS)})')
    kind = data['kind']
    if kind not in DRIVER_KINDS:
        raise fail(f'{where}.kind', f'unknown driver {kind!r}'
                    f'{did_you_mean(str(kind), DRIVER_KINDS)} (known: {", ".join(DRIVER_KINDS)})')
    body = check_keys(data, _DRIVER_KEYS[kind], where)
    duration = body.get('duration_s')
    duration_s = None if duration is None else check_number(duration, f'{where}.duration_s',
                                                       positive=True)
    rate = check_number(body.get('control_rate_hz', 50.0), f'{where}.control_rate_hz',
                        positive=True)
    controller = body.get('controller')
    settings: tuple[tuple[str, Any], ...] = ()
    mode = 'yaw_rate'
    if kind == 'tracker':
        controller = controller or 'fl'
        if controller not in ('fl', 'kanayama', 'pure_pursuit'):
            raise fail(f'{where}.controller', f'unknown tracker {controller!r}'
                        f'{did_you_mean(str(controller), ("fl", "kanayama", "pure_pursuit"))}'
                        ' (known: fl, kanayama, pure_pursuit)')
        raw = body.get('set') or {}
        if not isinstance(raw, Mapping):
            raise fail(f'{where}.set', 'must be a mapping of tracker parameters')
        from rc_sim_engine.scenarios.tracking import tracker_settings

        try:
            parsed = tracker_settings([f'{k}={v}' for k, v in raw.items()])
        except RcSimError as exc:
            raise fail(f'{where}.set', inner_message(exc).replace('--set ', '')) from None
        settings = tuple(sorted(parsed.items()))
    elif kind == 'python':
        controller = check_callable_name(controller, f'{where}.controller')
        if duration_s is None:
            raise fail(where, 'missing key duration_s (a python controller runs for a given '
                        'time)')
        mode = _mode(body, where)
    elif kind == 'ros_launch':
        if duration_s is None:
            raise fail(where, 'missing key duration_s (a ros_launch run stops at this sim time)')
        mode = _mode(body, where)
        settings = _ros_settings(body, where)
    return Driver(kind, controller, duration_s, rate, mode, settings)


def _mode(body: Mapping[str, Any], where: str) -> str:
    mode = body.get('mode', 'yaw_rate')
    if mode not in MODES:
        raise fail(f'{where}.mode', f'unknown mapper mode {mode!r}'
                    f'{did_you_mean(str(mode), MODES)} (known: {", ".join(MODES)})')
    return str(mode)


def _ros_settings(body: Mapping[str, Any], where: str) -> tuple[tuple[str, Any], ...]:
    """``launch: {package, file} | {path}`` or ``run: {package, executable}``; ``args``
    (launch arguments ``name:=value`` / ``-p name:=value`` parameters) and ``timeout_s`` (wall
    time limit of a run)."""
    if ('launch' in body) == ('run' in body):
        raise fail(where, 'give launch: {package: P, file: F} (or {path: F}) or run: '
                    '{package: P, executable: E}')
    out: list[tuple[str, Any]] = []
    if 'launch' in body:
        launch = check_keys(body['launch'], ('package', 'file', 'path'), f'{where}.launch')
        if 'path' in launch:
            if 'package' in launch or 'file' in launch:
                raise fail(f'{where}.launch', 'give path, or package and file, not both')
            out.append(('launch', (('path', check_text(launch['path'], f'{where}.launch.path')),)))
        else:
            for key in ('package', 'file'):
                if key not in launch:
                    raise fail(f'{where}.launch', f'missing key {key!r} (or give path)')
            out.append(('launch', tuple((k, check_text(launch[k], f'{where}.launch.{k}'))
                                        for k in ('package', 'file'))))
    else:
        run = check_keys(body['run'], ('package', 'executable'), f'{where}.run',
                    required=('package', 'executable'))
        out.append(('run', tuple((k, check_text(run[k], f'{where}.run.{k}'))
                                 for k in ('package', 'executable'))))
    args = body.get('args') or {}
    if not isinstance(args, Mapping):
        raise fail(f'{where}.args', 'must be a mapping NAME: VALUE')
    pairs = []
    for key, value in args.items():
        if not isinstance(key, str) or not _NAME.match(key):
            raise fail(f'{where}.args.{key}', 'must be an identifier')
        if isinstance(value, bool):
            text = 'true' if value else 'false'
        elif isinstance(value, (int, float, str)):
            text = str(value)
        else:
            raise fail(f'{where}.args.{key}', f'must be a string, number or boolean, got '
                        f'{value!r}')
        pairs.append((key, text))
    out.append(('args', tuple(sorted(pairs))))
    timeout = check_number(body.get('timeout_s', 120.0), f'{where}.timeout_s', positive=True)
    out.append(('timeout_s', timeout))
    return tuple(out)


def _metrics(data: Any, where: str, driver: Driver) -> tuple[str, ...]:
    applicable = [m for m in METRICS if (driver.kind == 'tracker' or not m.startswith('tracking'))
                  and not (driver.kind == 'ros_launch' and m in ROS_UNMEASURED)]
    if data is None:
        return tuple(applicable)
    if not isinstance(data, list) or not data:
        raise fail(where, 'must be a non-empty list of metric names')
    out = []
    for i, name in enumerate(data):
        if name not in METRICS:
            raise fail(f'{where}[{i}]', f'unknown metric {name!r}'
                        f'{did_you_mean(str(name), METRICS)} (known: {", ".join(METRICS)})')
        if name not in applicable:
            raise fail(f'{where}[{i}]', f'{name} is not measured in ros_launch runs'
                        if name in ROS_UNMEASURED else f'{name} needs driver kind tracker')
        if name in out:
            raise fail(f'{where}[{i}]', f'{name} listed twice')
        out.append(name)
    return tuple(out)


def _pass_rules(data: Any, where: str, columns: Sequence[str]) -> tuple[Bound, ...]:
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise fail(where, 'must be a mapping METRIC: {min: A, max: B}')
    rules = []
    for metric, bound in data.items():
        key = f'{where}.{metric}'
        if metric not in columns:
            raise fail(key, f'not a metric of this campaign{did_you_mean(str(metric), columns)}'
                        f' (metrics: {", ".join(columns)})')
        body = check_keys(bound, ('min', 'max'), key)
        if not body:
            raise fail(key, 'give min and/or max')
        low = None if body.get('min') is None else check_number(body['min'], f'{key}.min')
        high = None if body.get('max') is None else check_number(body['max'], f'{key}.max')
        if low is not None and high is not None and low > high:
            raise fail(key, f'min {low:g} > max {high:g}')
        rules.append(Bound(str(metric), low, high))
    return tuple(rules)


def load_spec(path: str | os.PathLike[str]) -> CampaignSpec:
    """Read and validate a campaign spec; any problem is one ConfigError line."""
    file = str(path)
    folder = Path(file).resolve().parent
    data = read_yaml(file, ConfigError)
    if not isinstance(data, Mapping):
        raise fail(file, f'top level must be a mapping (keys: {", ".join(_TOP)}), got '
                    f'{type(data).__name__}')
    body = check_keys(data, _TOP, f'{file}:', required=('driver',))
    name = body.get('campaign', Path(file).stem)
    if not isinstance(name, str) or not name.strip():
        raise fail(f'{file}: campaign', f'must be a non-empty string, got {name!r}')
    driver = _driver(body['driver'], f'{file}: driver')
    fixed_raw = body.get('fixed') or {}
    if not isinstance(fixed_raw, Mapping):
        raise fail(f'{file}: fixed', 'must be a mapping of factor: value')
    fixed = tuple((check_factor_name(k, f'{file}: fixed'),
                   FACTOR_CHECKS[str(k)](v, f'{file}: fixed.{k}', folder))
                  for k, v in fixed_raw.items())
    factors = body.get('factors') or {}
    factors = check_keys(factors, ('grid', 'list'), f'{file}: factors')
    grid = factor_block(factors.get('grid'), f'{file}: factors.grid', folder)
    zipped = factor_block(factors.get('list'), f'{file}: factors.list', folder)
    names = [k for k, _ in fixed] + [k for k, _ in grid] + [k for k, _ in zipped]
    for i, key in enumerate(names):
        if key in names[:i]:
            raise fail(f'{file}: {key}', 'set more than once (fixed, factors.grid and '
                        'factors.list must name different factors)')
    lengths = {len(v) for _, v in zipped}
    if len(lengths) > 1:
        raise fail(f'{file}: factors.list', 'every factor must list the same number of '
                    f'values, got {", ".join(f"{k}: {len(v)}" for k, v in zipped)}')
    if driver.kind != 'scenario' and 'scenario' in names:
        raise fail(f'{file}: scenario', f'applies to driver kind scenario, not {driver.kind}')
    if driver.kind != 'tracker' and 'trajectory' in names:
        raise fail(f'{file}: trajectory', f'applies to driver kind tracker, not {driver.kind}')
    if driver.kind == 'scenario' and 'scenario' not in names:
        raise fail(f'{file}: driver', 'kind scenario needs a scenario (in fixed or factors)')
    if driver.kind == 'tracker' and 'lidar_errors' in names:
        raise fail(f'{file}: lidar_errors', 'the trackers do not read the lidar: vary it with '
                    'driver kind scenario or python')
    if driver.kind == 'ros_launch':
        _check_ros_factors(file, fixed, grid, zipped, folder)
        launch = dict(dict(driver.settings).get('launch', ()))
        if 'path' in launch and not Path(resolve_path(folder, launch['path'])).is_file():
            raise fail(f'{file}: driver.launch.path', f'launch file {launch["path"]!r} not found')
    metrics = _metrics(body.get('metrics'), f'{file}: metrics', driver)
    users_raw = body.get('user_metrics') or {}
    if not isinstance(users_raw, Mapping):
        raise fail(f'{file}: user_metrics', 'must be a mapping NAME: module:callable')
    users = []
    for key, value in users_raw.items():
        if not isinstance(key, str) or not _NAME.match(key) or key in METRICS:
            raise fail(f'{file}: user_metrics.{key}', 'must be a new identifier (not a '
                        'built-in metric name)')
        users.append((key, check_callable_name(value, f'{file}: user_metrics.{key}')))
    columns = [*metrics, *(k for k, _ in users)]
    rules = _pass_rules(body.get('pass'), f'{file}: pass', columns)
    keep = check_keys(body.get('keep') or {}, ('bags',), f'{file}: keep')
    bags = keep.get('bags', 'none')
    if bags not in KEEP_BAGS:
        raise fail(f'{file}: keep.bags', f'must be one of {", ".join(KEEP_BAGS)}, got {bags!r}'
                    f'{did_you_mean(str(bags), KEEP_BAGS)}')
    if bags != 'none' and driver.kind == 'ros_launch':
        raise fail(f'{file}: keep.bags', 'ros_launch runs keep no bags (record them in your '
                    'launch file)')
    if bags != 'none' and driver.kind == 'tracker':
        raise fail(f'{file}: keep.bags', 'tracker runs keep no bags: the page gives the rcsim '
                    'track command that writes one')
    return CampaignSpec(file, name, driver, fixed, grid, zipped, metrics, tuple(users), rules,
                        bags)


def _check_ros_factors(file: str, fixed: Any, grid: Any, zipped: Any, folder: Path) -> None:
    """What ``sim_node`` cannot take: inline vehicle values, a model choice, a list of override
    files, track map worlds."""
    from rc_sim_engine.sim.run_setup import world_source
    from rc_sim_engine.world.track_map import is_map_yaml

    for block, items in (('fixed', fixed), ('factors.grid', grid), ('factors.list', zipped)):
        for name, raw in items:
            values = [raw] if block == 'fixed' else list(raw)
            where = f'{file}: {block}.{name}'
            if name in ROS_FACTORS_REFUSED:
                raise fail(where, f'not a factor of ros_launch runs '
                            f'({ROS_FACTORS_REFUSED[name]})')
            for value in values:
                if name == 'params' and isinstance(value, list):
                    raise fail(where, 'ros_launch runs take one vehicle override file '
                                '(sim_node params_file)')
                if name == 'world' and is_map_yaml(world_source(resolve_path(folder,
                                                                              str(value)))):
                    raise fail(where, f'{value!r}: ros_launch runs take SDF worlds (sim_node '
                                'world), not track maps')
