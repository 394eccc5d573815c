"""Validated configuration of the lidar error model (``config/lidar_errors/*.yaml``).

Every effect is off by default, so ``LidarErrorConfig()`` is the identity. A YAML file is a flat
mapping of the keys below (SI units: m, rad, s); the field metadata (unit, description, range
check) is the one schema shared by the loader, the ROS node's parameter declarations and
``docs/lidar_errors.md``. Errors are one line naming the file and the key (:class:`ConfigError`),
with a did-you-mean for unknown keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
import difflib
import math
import os
from pathlib import Path
from typing import Any

from rc_sim_description.errors import ConfigError
from rc_sim_description.paths import share_path
from rc_sim_description.yamlio import read_yaml

__all__ = ['OUT_OF_RANGE_MODES', 'PRESETS', 'LidarErrorConfig', 'config_fields', 'preset_path',
           'validate_value']

PRESETS: tuple[str, ...] = ('ideal', 'hokuyo_ust10lx', 'hokuyo_utm30lx', 'rplidar_a1', 'harsh')
OUT_OF_RANGE_MODES: tuple[str, ...] = ('rep117', 'clamp', 'zero')

Check = Callable[[Any], str | None]


def _non_negative(v: float) -> str | None:
    return None if v >= 0 else f'must be >= 0, got {v!r}'


def _positive(v: float) -> str | None:
    return None if v > 0 else f'must be > 0, got {v!r}'


def _probability(v: float) -> str | None:
    return None if 0.0 <= v <= 1.0 else f'must be a probability in [0, 1], got {v!r}'


def _correlation(v: float) -> str | None:
    return None if -1.0 < v < 1.0 else f'must be in (-1, 1), got {v!r}'


def _seed(v: int) -> str | None:
    return None if 0 <= v < 2**63 else f'must be in [0, 2**63), got {v!r}'


def _angle_pi(v: float) -> str | None:
    return None if abs(v) <= math.pi else f'must be in [-pi, pi] rad, got {v!r}'


def _latency(v: float) -> str | None:
    return None if 0.0 <= v <= 1.0 else f'must be in [0, 1] s, got {v!r}'


def _incidence_start(v: float) -> str | None:
    return None if 0.0 <= v < math.pi / 2 else f'must be in [0, pi/2) rad, got {v!r}'


def _mode(v: str) -> str | None:
    return None if v in OUT_OF_RANGE_MODES else (
        f'must be one of {", ".join(OUT_OF_RANGE_MODES)}, got {v!r}')


def _range_max(v: float) -> str | None:
    return None if v > 0 else f'must be > 0 (or .inf for no limit), got {v!r}'


def _p(default: Any, unit: str, doc: str, check: Check | None = None, *,
       allow_inf: bool = False) -> Any:
    """Dataclass field with schema metadata (unit, description, range check)."""
    return field(default=default, metadata={'unit': unit, 'doc': doc, 'check': check,
                                            'allow_inf': allow_inf})


@dataclass(frozen=True)
class LidarErrorConfig:
    """Parameters of ``apply_lidar_errors``; defaults: no effect."""

    seed: int = _p(0, '-', 'Seed of the random generator when none is passed.', _seed)
    noise_mean: float = _p(0.0, 'm', 'Mean mu of the additive range noise.')
    noise_stddev: float = _p(0.0, 'm', 'Constant part sigma0 of the noise stddev '
                             '(sigma = sigma0 + k d).', _non_negative)
    noise_stddev_per_meter: float = _p(0.0, 'm/m', 'Range-proportional part k of the noise '
                                       'stddev (sigma = sigma0 + k d).', _non_negative)
    noise_beam_correlation: float = _p(0.0, '-', 'Correlation rho of the noise of neighbouring '
                                       'beams: n_i = rho n_i-1 + sqrt(1 - rho^2) e_i.',
                                       _correlation)
    bias_initial: float = _p(0.0, 'm', 'Range bias b0 of the first scan (and after reset_bias).')
    bias_walk_stddev: float = _p(0.0, 'm', 'Random-walk increment stddev sigma_b per scan: '
                                 'w_k+1 = w_k + N(0, sigma_b^2).', _non_negative)
    bias_markov_stddev: float = _p(0.0, 'm', 'Steady-state stddev of the Gauss-Markov bias '
                                   'g_k+1 = phi g_k + sqrt(1-phi^2) sigma_g N(0,1).',
                                   _non_negative)
    bias_correlation_time: float = _p(1.0, 's', 'Correlation time tau of the Gauss-Markov bias, '
                                      'phi = exp(-dt/tau).', _positive)
    dropout_probability: float = _p(0.0, '-', 'Probability that a ray returns nothing (+inf).',
                                    _probability)
    scan_loss_probability: float = _p(0.0, '-', 'Probability that a whole scan is lost '
                                      '(not published).', _probability)
    range_min: float = _p(0.0, 'm', 'Minimum range; closer readings become -inf (REP 117).',
                          _non_negative)
    range_max: float = _p(math.inf, 'm', 'Maximum range; farther readings become +inf '
                          '(REP 117); .inf = no limit.', _range_max, allow_inf=True)
    out_of_range: str = _p('rep117', '-', 'rep117: -inf below range_min, +inf beyond '
                           'range_max and for dropouts; clamp: clamp to [range_min, range_max]; '
                           'zero: 0 for every invalid reading (what many drivers write).', _mode)
    range_resolution: float = _p(0.0, 'm', 'Range quantum q: d = q round(d / q); 0 = off.',
                                 _non_negative)
    angle_resolution: float = _p(0.0, 'rad', 'Encoder resolution: a beam reports the range at the '
                                 'nearest multiple of it; 0 = off.', _non_negative)
    azimuth_jitter_stddev: float = _p(0.0, 'rad', 'Stddev of the per-beam azimuth error.',
                                      _non_negative)
    mount_yaw_offset: float = _p(0.0, 'rad', 'Constant yaw misalignment of the sensor mount '
                                 '(beam i looks at theta_i + offset).', _angle_pi)
    latency: float = _p(0.0, 's', 'Delay added to the scan timestamp.', _latency)
    spurious_probability: float = _p(0.0, '-', 'Probability that a returned ray is an outlier, '
                                     'uniform in [range_min, range_max].', _probability)
    mixed_pixel_probability: float = _p(0.0, '-', 'Probability that a beam at a depth edge '
                                        'returns a mix of foreground and background.',
                                        _probability)
    depth_edge_threshold: float = _p(0.1, 'm', 'Range jump between neighbouring beams that '
                                     'marks a depth edge.', _positive)
    incidence_dropout_start: float = _p(1.2, 'rad', 'Incidence angle alpha0 where the incidence '
                                        'dropout ramp starts.', _incidence_start)
    incidence_dropout_probability: float = _p(0.0, '-', 'Dropout probability at grazing '
                                              'incidence (pi/2), linear from alpha0.',
                                              _probability)
    intensity_dropout_limit: float = _p(1.0, 'sensor unit', 'Intensity at and above which the '
                                        'intensity dropout vanishes.', _positive)
    intensity_dropout_probability: float = _p(0.0, '-', 'Dropout probability at zero '
                                              'intensity, linear up to the limit.', _probability)
    range_dropout_start: float = _p(0.0, 'm', 'Range d0 where the range dropout ramp starts.',
                                    _non_negative)
    range_dropout_probability: float = _p(0.0, '-', 'Dropout probability at range_max, linear '
                                          'from range_dropout_start (weak far returns).',
                                          _probability)
    source: str = field(default='defaults', compare=False, metadata={'internal': True})

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = 'config') -> LidarErrorConfig:
        """Validated config from a flat mapping; missing keys keep their (no-effect) default."""
        if not isinstance(data, Mapping):
            raise ConfigError(f'{source}: must be a mapping of lidar error keys, '
                              f'got {type(data).__name__}')
        schema = {f.name: f for f in config_fields()}
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in schema:
                close = difflib.get_close_matches(str(key), list(schema), n=1)
                hint = f' (did you mean {close[0]!r}?)' if close else ''
                raise ConfigError(f'{source}: {key}: unknown key{hint}')
            values[key] = _convert(value, schema[key], f'{source}: {key}')
        config = cls(source=source, **values)
        _cross_checks(config)
        return config

    @classmethod
    def from_yaml(cls, path: str | os.PathLike[str]) -> LidarErrorConfig:
        """Load a flat YAML file (``{}`` or empty = every effect off)."""
        data = read_yaml(path)
        return cls.from_mapping({} if data is None else data, str(Path(path)))

    @classmethod
    def from_preset(cls, name: str) -> LidarErrorConfig:
        """One of :data:`PRESETS` (``config/lidar_errors/<name>.yaml``)."""
        return cls.from_yaml(preset_path(name))

    def with_values(self, **values: Any) -> LidarErrorConfig:
        """Validated copy with some keys replaced."""
        merged = {**self.to_dict(), **values}
        return LidarErrorConfig.from_mapping(merged, f'{self.source} (override)')

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping key -> value (the YAML layout)."""
        return {f.name: getattr(self, f.name) for f in config_fields()}

    # ------------------------------------------------------------------ derived flags
    @property
    def has_angular_effects(self) -> bool:
        """True when beams are resampled at perturbed angles."""
        return (self.angle_resolution > 0 or self.azimuth_jitter_stddev > 0
                or self.mount_yaw_offset != 0)

    @property
    def has_bias(self) -> bool:
        """True when a (possibly drifting) range bias is added."""
        return (self.bias_initial != 0 or self.bias_walk_stddev > 0
                or self.bias_markov_stddev > 0)

    @property
    def has_noise(self) -> bool:
        """True when zero-mean Gaussian range noise is added."""
        return self.noise_stddev > 0 or self.noise_stddev_per_meter > 0

    @property
    def has_ray_events(self) -> bool:
        """True when rays may be dropped or replaced by spurious returns."""
        return (self.dropout_probability > 0 or self.spurious_probability > 0
                or self.incidence_dropout_probability > 0
                or self.intensity_dropout_probability > 0
                or self.range_dropout_probability > 0)


def config_fields() -> list[Any]:
    """Dataclass fields of the YAML schema (in documentation order, without ``source``)."""
    return [f for f in fields(LidarErrorConfig) if not f.metadata.get('internal')]


def validate_value(key: str, value: Any, source: str = 'config') -> Any:
    """One key's value converted and range-checked alone (no cross checks); raises ConfigError."""
    schema = {f.name: f for f in config_fields()}
    if key not in schema:
        close = difflib.get_close_matches(key, list(schema), n=1)
        hint = f' (did you mean {close[0]!r}?)' if close else ''
        raise ConfigError(f'{source}: {key}: unknown key{hint}')
    return _convert(value, schema[key], f'{source}: {key}')


def preset_path(name: str) -> Path:
    """Path of a shipped preset; one-line error listing the presets for an unknown name."""
    if name not in PRESETS:
        close = difflib.get_close_matches(name, PRESETS, n=1)
        hint = f' (did you mean {close[0]!r}?)' if close else ''
        raise ConfigError(f'unknown lidar error preset {name!r}{hint}; '
                          f'known: {", ".join(PRESETS)}')
    return share_path(f'config/lidar_errors/{name}.yaml', package='rc_sim_sensors')


def _convert(value: Any, f: Any, where: str) -> Any:
    kind = str(f.type)
    if kind == 'float':
        if value is None and f.metadata.get('allow_inf'):
            return math.inf
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f'{where}: must be a number, got {type(value).__name__} {value!r}')
        value = float(value)
        if math.isnan(value) or (math.isinf(value) and not f.metadata.get('allow_inf')):
            raise ConfigError(f'{where}: must be finite, got {value!r}')
    elif kind == 'int':
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f'{where}: must be an integer, got {type(value).__name__} '
                              f'{value!r}')
    elif kind == 'str' and not isinstance(value, str):
        raise ConfigError(f'{where}: must be a string, got {type(value).__name__} {value!r}')
    check = f.metadata.get('check')
    problem = check(value) if check is not None else None
    if problem:
        raise ConfigError(f'{where}: {problem}')
    return value


def _cross_checks(c: LidarErrorConfig) -> None:
    def fail(key: str, problem: str) -> None:
        raise ConfigError(f'{c.source}: {key}: {problem}')

    if not c.range_min < c.range_max:
        fail('range_min', f'must be < range_max ({c.range_max}), got {c.range_min}')
    if c.spurious_probability > 0 and not math.isfinite(c.range_max):
        fail('spurious_probability', 'needs a finite range_max (outliers are uniform in '
             '[range_min, range_max])')
    if c.out_of_range == 'clamp' and not math.isfinite(c.range_max):
        fail('out_of_range', "'clamp' needs a finite range_max")
    if c.range_dropout_probability > 0:
        if not math.isfinite(c.range_max):
            fail('range_dropout_probability', 'needs a finite range_max (the ramp ends there)')
        if not c.range_dropout_start < c.range_max:
            fail('range_dropout_start', f'must be < range_max ({c.range_max}), got '
                 f'{c.range_dropout_start}')
    if c.range_resolution > 0 and c.range_resolution >= c.range_max - c.range_min:
        fail('range_resolution', 'must be smaller than the range span')

