"""Named manoeuvres: the usual vehicle test set (straight line, steady-state circles, two
tangent circles, steering and speed steps up to the limits, slalom, steering chirp) as
:class:`~rc_sim_control.command_sequence.CommandSequence`, every limit from vehicle.yaml."""

from __future__ import annotations

from collections.abc import Callable
import difflib
import math
from typing import Any

import numpy as np

from rc_sim_control.command_sequence import (
    MAX_LAPS,
    MAX_RATE_HZ,
    MAX_SEQUENCE_TIME,
    CommandSequence,
    FloatArray,
    chirp,
    ramp,
    sine,
    time_grid,
)
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams

__all__ = [
    'MANOEUVRES',
    'MANOEUVRE_ALIASES',
    'canonical_manoeuvre',
    'manoeuvre',
]


# --------------------------------------------------------------------------- manoeuvres
def _speed_profile(t: FloatArray, speed: float, ramp_time: float, duration: float) -> FloatArray:
    """0 -> speed over ramp_time, hold, speed -> 0 over the last ramp_time, 0 at the end."""
    if ramp_time <= 0:
        return np.where(t < duration, speed, 0.0)
    up = ramp(t, 0.0, ramp_time, 0.0, speed)
    down = ramp(t, duration - ramp_time, duration, speed, 0.0)
    return np.minimum(np.abs(up), np.abs(down)) * np.sign(speed)


class _Limits:
    def __init__(self, params: VehicleParams, name: str) -> None:
        self.name = name
        self.L = params.geometry.wheelbase
        self.delta_max = params.steering.max_steering_angle
        self.v_max = params.max_speed
        self.r_min = params.min_turning_radius

    def speed(self, v: float) -> float:
        if not (math.isfinite(v) and abs(v) <= self.v_max):
            raise ConfigError(f'manoeuvre {self.name}: speed: |{v}| exceeds the vehicle limit '
                              f'{self.v_max:.3g} m/s (max_wheel_speed * wheel_radius)')
        return float(v)

    def radius(self, r: float) -> float:
        if not (math.isfinite(r) and r >= self.r_min):
            raise ConfigError(f'manoeuvre {self.name}: radius: {r} m is below the minimum turning '
                              f'radius {self.r_min:.3g} m (or not finite)')
        return float(r)

    def fraction(self, key: str, f: float) -> float:
        if not (math.isfinite(f) and 0 <= f <= 1):
            raise ConfigError(f'manoeuvre {self.name}: {key}: must be in [0, 1], got {f!r}')
        return float(f)


def _line(lim: _Limits, t: FloatArray, kw: dict[str, Any]) -> tuple[FloatArray, FloatArray]:
    v = _speed_profile(t, lim.speed(kw['speed']), kw['ramp_time'], kw['duration'])
    return v, np.zeros_like(t)


def _circle(sign: float) -> Callable[[_Limits, FloatArray, dict[str, Any]],
                                     tuple[FloatArray, FloatArray]]:
    def build(lim: _Limits, t: FloatArray, kw: dict[str, Any]) -> tuple[FloatArray, FloatArray]:
        delta = sign * math.atan(lim.L / lim.radius(kw['radius']))
        v = _speed_profile(t, lim.speed(kw['speed']), kw['ramp_time'], kw['duration'])
        return v, np.full_like(t, delta)
    return build


def _two_circles(lim: _Limits, t: FloatArray,
                 kw: dict[str, Any]) -> tuple[FloatArray, FloatArray]:
    speed, radius = lim.speed(kw['speed']), lim.radius(kw['radius'])
    delta = math.atan(lim.L / radius)
    v = _speed_profile(t, speed, kw['ramp_time'], kw['duration'])
    # lobe from the distance rolled under the zero-order hold, so the switches land where the
    # sampled commands have completed a lap (left lobe first, then alternate).
    travelled = np.concatenate([[0.0], np.cumsum(np.abs(v[:-1]) * np.diff(t))])
    half_step = 0.5 * np.abs(v) * (t[1] - t[0]) if t.size > 1 else 0.0
    lobe = np.floor((travelled + half_step) / (2 * math.pi * radius))
    lobe = np.minimum(lobe, max(math.ceil(2 * kw['laps']) - 1, 0))
    return v, np.where(lobe % 2 == 0, delta, -delta)


def _steering_steps(lim: _Limits, t: FloatArray,
                    kw: dict[str, Any]) -> tuple[FloatArray, FloatArray]:
    levels = [lim.fraction('levels', f) for f in kw['levels']]
    hold = kw['step_duration']
    # pattern per level: +f, 0, -f, 0 (each `hold` s) after a straight lead-in of `hold` s
    pattern = [0.0] + [x for f in levels for x in (f, 0.0, -f, 0.0)]
    k = np.clip((t // hold).astype(int), 0, len(pattern) - 1)
    v = _speed_profile(t, lim.speed(kw['speed']), kw['ramp_time'], kw['duration'])
    return v, np.asarray(pattern)[k] * lim.delta_max


def _speed_steps(lim: _Limits, t: FloatArray,
                 kw: dict[str, Any]) -> tuple[FloatArray, FloatArray]:
    levels = [lim.fraction('levels', f) for f in kw['levels']]
    hold = kw['step_duration']
    sign = -1.0 if kw.get('reverse', False) else 1.0
    pattern = [0.0] + [x for f in levels for x in (f, 0.0)]
    k = np.clip((t // hold).astype(int), 0, len(pattern) - 1)
    return sign * np.asarray(pattern)[k] * lim.v_max, np.zeros_like(t)


def _slalom(lim: _Limits, t: FloatArray, kw: dict[str, Any]) -> tuple[FloatArray, FloatArray]:
    amp = lim.fraction('amplitude', kw['amplitude']) * lim.delta_max
    v = _speed_profile(t, lim.speed(kw['speed']), kw['ramp_time'], kw['duration'])
    return v, sine(t, amp, kw['frequency'])


def _steering_chirp(lim: _Limits, t: FloatArray,
                    kw: dict[str, Any]) -> tuple[FloatArray, FloatArray]:
    amp = lim.fraction('amplitude', kw['amplitude']) * lim.delta_max
    v = _speed_profile(t, lim.speed(kw['speed']), kw['ramp_time'], kw['duration'])
    return v, chirp(t, amp, kw['f_start'], kw['f_end'], kw['duration'])


_Builder = Callable[[_Limits, FloatArray, dict[str, Any]], tuple[FloatArray, FloatArray]]

# name -> (builder, default kwargs, description); durations may be None: computed from the rest.
MANOEUVRES: dict[str, tuple[_Builder, dict[str, Any], str]] = {
    'line': (_line, {'speed': 1.0, 'duration': 6.0, 'ramp_time': 1.0},
             'straight line: ramp to `speed`, hold, ramp down'),
    'circle_left': (_circle(1.0), {'speed': 1.0, 'radius': None, 'laps': 2.0, 'duration': None,
                                   'ramp_time': 1.0},
                    'constant left turn of `radius` (default 2 R_min) at `speed` for `laps`'),
    'circle_right': (_circle(-1.0), {'speed': 1.0, 'radius': None, 'laps': 2.0, 'duration': None,
                                     'ramp_time': 1.0},
                     'constant right turn of `radius` (default 2 R_min) at `speed` for `laps`'),
    'two_circles': (_two_circles, {'speed': 1.0, 'radius': None, 'laps': 1.0,
                                   'duration': None, 'ramp_time': 1.0},
                    'figure eight of two tangent circles: a left circle then a right circle of '
                    '`radius` (default 2 R_min), `laps` times'),
    'steering_steps': (_steering_steps, {'speed': 1.0, 'levels': (0.25, 0.5, 0.75, 1.0),
                                         'step_duration': 2.0, 'duration': None,
                                         'ramp_time': 1.0},
                       'steering steps +f, 0, -f, 0 at each fraction f of max_steering_angle'),
    'speed_steps': (_speed_steps, {'levels': (0.25, 0.5, 0.75, 1.0), 'step_duration': 2.0,
                                   'duration': None, 'reverse': False},
                    'straight speed steps f, 0 at each fraction f of the maximum speed'),
    'slalom': (_slalom, {'speed': 1.0, 'amplitude': 0.5, 'frequency': 0.5, 'duration': 10.0,
                         'ramp_time': 1.0},
               'sinusoidal steering, `amplitude` as a fraction of max_steering_angle'),
    'steering_chirp': (_steering_chirp, {'speed': 1.0, 'amplitude': 0.3, 'f_start': 0.1,
                                         'f_end': 2.0, 'duration': 20.0, 'ramp_time': 1.0},
                       'steering chirp f_start -> f_end [Hz] at constant speed'),
}


#: Old manoeuvre names that still work: old name -> new name (the CLIs print a deprecation note).
MANOEUVRE_ALIASES: dict[str, str] = {'figure_eight': 'two_circles'}


def canonical_manoeuvre(name: str) -> tuple[str, str | None]:
    """(current name, deprecation note or None) of a manoeuvre name that may be an old alias."""
    new = MANOEUVRE_ALIASES.get(name)
    if new is None:
        return name, None
    return new, (f'manoeuvre {name!r} is now called {new!r} (two tangent circles); the old name '
                 'still works but will be removed')


def _default_duration(name: str, kw: dict[str, Any]) -> float:
    if name in ('circle_left', 'circle_right', 'two_circles'):
        lobes = 2.0 if name == 'two_circles' else 1.0
        travel = lobes * kw['laps'] * 2 * math.pi * kw['radius'] / max(abs(kw['speed']), 1e-9)
        return travel + kw['ramp_time']  # the two half ramps cover about one ramp of travel
    if name == 'steering_steps':
        return (1 + 4 * len(kw['levels'])) * kw['step_duration']
    if name == 'speed_steps':
        return (1 + 2 * len(kw['levels'])) * kw['step_duration']
    raise AssertionError(name)  # pragma: no cover


def _finite_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def manoeuvre(name: str, params: VehicleParams, *, mode: str = 'steering_angle',
              rate_hz: float = 50.0, **kwargs: Any) -> CommandSequence:
    """A named test manoeuvre (see :data:`MANOEUVRES` for names, kwargs and defaults).

    Speeds are in m/s and must not exceed the vehicle's maximum speed; radii in m must be at least
    the minimum turning radius; step ``levels``/``amplitude`` are fractions of the limits, so
    ``levels=(1.0,)`` reaches max_steering_angle or the maximum speed. ``mode`` is
    ``steering_angle`` (angular_z = delta [rad]) or ``yaw_rate`` (angular_z = v tan(delta) / L,
    which the yaw-rate mapper maps back to the same delta while |v| is above its standstill
    threshold). Every sequence ends at rest. Old names (:data:`MANOEUVRE_ALIASES`) still work
    and name the sequence as called.
    """
    called = name
    name, _ = canonical_manoeuvre(name)
    if name not in MANOEUVRES:
        hint = difflib.get_close_matches(name, list(MANOEUVRES), n=1)
        extra = f' (did you mean {hint[0]!r}?)' if hint else ''
        raise ConfigError(f'unknown manoeuvre {name!r}{extra}; known: {", ".join(MANOEUVRES)}')
    if mode not in ('steering_angle', 'yaw_rate'):
        raise ConfigError(f'manoeuvre {name}: mode: must be steering_angle or yaw_rate, '
                          f'got {mode!r}')
    if not (_finite_number(rate_hz) and 0 < rate_hz <= MAX_RATE_HZ):
        raise ConfigError(f'manoeuvre {name}: rate_hz: must be in (0, {MAX_RATE_HZ:g}] Hz, '
                          f'got {rate_hz!r}')
    builder, defaults, description = MANOEUVRES[name]
    unknown = set(kwargs) - set(defaults)
    if unknown:
        raise ConfigError(f'manoeuvre {name}: unknown argument {sorted(unknown)[0]!r} '
                          f'(known: {", ".join(defaults)})')
    kw = {**defaults, **kwargs}
    for key, value in kw.items():
        if key in ('levels', 'reverse') or (value is None and defaults[key] is None):
            continue  # None: computed from the others (radius, duration)
        if not _finite_number(value):
            raise ConfigError(f'manoeuvre {name}: {key}: must be a finite number, got {value!r}')
        if key in ('duration', 'step_duration', 'laps', 'radius', 'frequency', 'f_start',
                   'f_end') and value <= 0:
            raise ConfigError(f'manoeuvre {name}: {key}: must be > 0, got {value!r}')
        if key == 'ramp_time' and value < 0:
            raise ConfigError(f'manoeuvre {name}: ramp_time: must be >= 0, got {value!r}')
        if key in ('duration', 'step_duration', 'ramp_time') and value > MAX_SEQUENCE_TIME:
            raise ConfigError(f'manoeuvre {name}: {key}: must be <= {MAX_SEQUENCE_TIME:g} s, '
                              f'got {value!r}')
        if key == 'laps' and value > MAX_LAPS:
            raise ConfigError(f'manoeuvre {name}: laps: must be <= {MAX_LAPS:g}, got {value!r}')
        if key in ('frequency', 'f_start', 'f_end') and value > 0.5 * rate_hz:
            raise ConfigError(f'manoeuvre {name}: {key}: must be at most half the sample rate '
                              f'({0.5 * rate_hz:g} Hz), got {value!r}')
    if 'levels' in kw and (not isinstance(kw['levels'], (list, tuple)) or not kw['levels'] or
                           not all(_finite_number(f) for f in kw['levels'])):
        raise ConfigError(f'manoeuvre {name}: levels: must be a non-empty list of numbers in '
                          f'[0, 1], got {kw["levels"]!r}')
    if not isinstance(kw.get('reverse', False), bool):
        raise ConfigError(f'manoeuvre {name}: reverse: must be true or false')
    if 'radius' in kw and kw['radius'] is None:
        kw['radius'] = 2.0 * params.min_turning_radius
    lim = _Limits(params, name)
    if 'speed' in kw:  # before the durations that depend on it
        lim.speed(kw['speed'])
    if 'radius' in kw:
        lim.radius(kw['radius'])
    if kw.get('speed') == 0 and name in ('circle_left', 'circle_right', 'two_circles'):
        raise ConfigError(f'manoeuvre {name}: speed: must not be 0')
    if kw['duration'] is None:
        default = _default_duration(name, kw)
        kw['duration'] = default
        if default > MAX_SEQUENCE_TIME:
            raise ConfigError(f'manoeuvre {name}: lasts {default:.4g} s with these '
                              f'arguments, more than {MAX_SEQUENCE_TIME:g} s (fewer laps or '
                              'levels, a smaller radius or a higher speed)')
    if 'ramp_time' in kw and 2 * kw['ramp_time'] > kw['duration']:
        raise ConfigError(f'manoeuvre {name}: ramp_time: twice it ({2 * kw["ramp_time"]} s) '
                          f'exceeds the duration ({kw["duration"]:.3g} s)')
    try:
        t = time_grid(kw['duration'], rate_hz)
    except ConfigError as exc:
        raise ConfigError(f'manoeuvre {name}: {exc}') from None
    v, delta = builder(lim, t, kw)
    v[-1] = 0.0  # end at rest
    angular_z = v * np.tan(delta) / lim.L if mode == 'yaw_rate' else delta
    shown = ', '.join(f'{key}={value!r}' for key, value in kw.items())
    return CommandSequence(t, v, angular_z, mode, called, f'{description} ({shown})')
