"""Timed command sequences (scenarios): signal generators, named manoeuvres, YAML files.

A :class:`CommandSequence` is a zero-order-hold command signal: sample ``k`` holds from ``t[k]`` to
``t[k + 1]`` and the last sample holds forever. ``angular_z`` is read in the sequence's ``mode``
(:data:`~rc_sim_control.ackermann.MAPPER_MODES`), exactly like ``/cmd_vel`` by the mapper, so the
embedded engine (``rcsim run --scenario file.yaml``) and the real car
(``rear_wheel_speed_publisher``) play the same files. The manoeuvres are the usual vehicle test
set (straight line, steady-state circles, two tangent circles, steering and speed steps up to the
limits, slalom, steering chirp) and take every limit from vehicle.yaml.

Absurd values are refused with a one-line error giving the limit: times beyond
:data:`MAX_SEQUENCE_TIME`, speeds beyond :data:`MAX_COMMAND_SPEED`, ``angular_z`` beyond
:data:`MAX_ANGULAR_Z` of its mode, generated sequences of more than
:data:`MAX_SEQUENCE_SAMPLES` samples, and manoeuvre arguments that would need them.

File format (YAML mapping; ``t`` [s] strictly increasing, same length lists)::

    name: circle_left
    description: free text
    mode: steering_angle
    t: [0.0, 0.02, ...]
    linear_x: [0.0, 0.04, ...]
    angular_z: [0.3, 0.3, ...]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
import difflib
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from rc_sim_control.ackermann import MAPPER_MODES
from rc_sim_description.atomic import atomic_write_text
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams
from rc_sim_description.plausibility import MAX_TOP_SPEED
from rc_sim_description.yamlio import number_hint, read_yaml

__all__ = [
    'MANOEUVRES',
    'MANOEUVRE_ALIASES',
    'MAX_ANGULAR_Z',
    'MAX_COMMAND_SPEED',
    'MAX_LAPS',
    'MAX_RATE_HZ',
    'MAX_SEQUENCE_SAMPLES',
    'MAX_SEQUENCE_TIME',
    'CommandSequence',
    'SequencePlayer',
    'canonical_manoeuvre',
    'chirp',
    'concatenate',
    'constant',
    'load_sequence',
    'manoeuvre',
    'ramp',
    'sample',
    'save_sequence',
    'sequence_from_mapping',
    'sine',
    'step',
    'time_grid',
]

FloatArray = npt.NDArray[np.float64]
_KEYS = ('name', 'description', 'mode', 't', 'linear_x', 'angular_z')

#: Largest |t| [s] of a command sequence (11.6 days; a real test drive lasts minutes).
MAX_SEQUENCE_TIME = 1e6
#: Most samples of a generated sequence (40 MB per array; 27 h at 50 Hz).
MAX_SEQUENCE_SAMPLES = 5_000_000
#: Largest |linear_x| [m/s]: the top speed limit of vehicle.yaml.
MAX_COMMAND_SPEED = MAX_TOP_SPEED
#: Largest |angular_z| per mode: a steering angle beyond +-pi/2 rad, a yaw rate beyond
#: 1000 rad/s, a curvature beyond 1000 1/m (a 1 mm radius) or a radius beyond 1e6 m is no
#: command of a car (radius 0 means straight ahead, as in the mapper).
MAX_ANGULAR_Z: dict[str, float] = {'steering_angle': math.pi / 2, 'yaw_rate': 1000.0,
                                   'curvature': 1000.0, 'radius': 1e6}
#: Highest sample rate [Hz] of a generated sequence.
MAX_RATE_HZ = 10_000.0
#: Most laps of a circle manoeuvre.
MAX_LAPS = 10_000.0


@dataclass(frozen=True)
class CommandSequence:
    """Timed commands: ``t`` [s], ``linear_x`` [m/s], ``angular_z`` (unit set by ``mode``).

    Validated on construction (same-length 1-D finite arrays, ``t`` strictly increasing, known
    mode); arrays are read-only copies.
    """

    t: FloatArray
    linear_x: FloatArray
    angular_z: FloatArray
    mode: str = 'steering_angle'
    name: str = ''
    description: str = ''
    _source: str = field(default='sequence', repr=False, compare=False)

    def __post_init__(self) -> None:
        src = self._source
        if self.mode not in MAPPER_MODES:
            raise ConfigError(f'{src}: mode: must be one of {", ".join(MAPPER_MODES)}, '
                              f'got {self.mode!r}')
        arrays = {}
        for key in ('t', 'linear_x', 'angular_z'):
            a = np.array(getattr(self, key), dtype=np.float64)
            if a.ndim != 1 or a.size == 0:
                raise ConfigError(f'{src}: {key}: must be a non-empty 1-D list of numbers')
            bad = np.flatnonzero(~np.isfinite(a))
            if bad.size:
                bad_value = float(a[bad[0]])
                raise ConfigError(f'{src}: {key}[{bad[0]}]: must be finite, got {bad_value!r}')
            a.flags.writeable = False
            arrays[key] = a
        for key, limit, unit in (('t', MAX_SEQUENCE_TIME, ' s'),
                                 ('linear_x', MAX_COMMAND_SPEED, ' m/s'),
                                 ('angular_z', MAX_ANGULAR_Z[self.mode], '')):
            big = np.flatnonzero(np.abs(arrays[key]) > limit)
            if big.size:
                bad_value = float(arrays[key][big[0]])
                what = f' in mode {self.mode}' if key == 'angular_z' else ''
                raise ConfigError(f'{src}: {key}[{big[0]}]: |{bad_value!r}| exceeds {limit:g}'
                                  f'{unit}{what}')
        n = arrays['t'].size
        for key in ('linear_x', 'angular_z'):
            if arrays[key].size != n:
                raise ConfigError(f'{src}: {key}: has {arrays[key].size} samples, t has {n}')
        dt = np.diff(arrays['t'])
        if dt.size and not (dt > 0).all():
            k = int(np.flatnonzero(dt <= 0)[0]) + 1
            raise ConfigError(f'{src}: t[{k}]: times must be strictly increasing '
                              f'({arrays["t"][k - 1]!r} then {arrays["t"][k]!r})')
        for key, a in arrays.items():
            object.__setattr__(self, key, a)

    def __len__(self) -> int:
        return int(self.t.size)

    @property
    def duration(self) -> float:
        """t[-1] - t[0] [s] (the last sample then holds)."""
        return float(self.t[-1] - self.t[0])

    def shifted(self, dt: float) -> CommandSequence:
        """Copy with times shifted by ``dt`` [s]."""
        return CommandSequence(self.t + dt, self.linear_x, self.angular_z, self.mode, self.name,
                               self.description)


# --------------------------------------------------------------------------- signals
def time_grid(duration: float, rate_hz: float, start: float = 0.0) -> FloatArray:
    """Uniform times ``start + k / rate_hz`` for k = 0..round(duration * rate_hz) [s]."""
    if not (math.isfinite(duration) and duration >= 0):
        raise ConfigError(f'duration: must be finite and >= 0, got {duration!r}')
    if not (math.isfinite(rate_hz) and 0 < rate_hz <= MAX_RATE_HZ):
        raise ConfigError(f'rate_hz: must be in (0, {MAX_RATE_HZ:g}] Hz, got {rate_hz!r}')
    n = round(duration * rate_hz)
    if n + 1 > MAX_SEQUENCE_SAMPLES:
        raise ConfigError(f'duration: {duration:g} s at {rate_hz:g} Hz needs {n + 1:,} samples, '
                          f'more than {MAX_SEQUENCE_SAMPLES:,} (a sequence of at most '
                          f'{(MAX_SEQUENCE_SAMPLES - 1) / rate_hz:.4g} s)')
    return start + np.arange(n + 1, dtype=np.float64) / rate_hz


def constant(t: npt.ArrayLike, value: float) -> FloatArray:
    """``value`` at every time."""
    return np.full(np.shape(t), float(value), dtype=np.float64)


def step(t: npt.ArrayLike, t_step: float, before: float, after: float) -> FloatArray:
    """``before`` for t < t_step, ``after`` from t_step on."""
    return np.where(np.asarray(t, dtype=np.float64) < t_step, float(before), float(after))


def ramp(t: npt.ArrayLike, t_start: float, t_end: float, start: float, end: float) -> FloatArray:
    """Linear from ``start`` at t_start to ``end`` at t_end, constant outside."""
    if not t_end > t_start:
        raise ConfigError(f'ramp: t_end ({t_end}) must be > t_start ({t_start})')
    s = np.clip((np.asarray(t, dtype=np.float64) - t_start) / (t_end - t_start), 0.0, 1.0)
    return start + (end - start) * s


def sine(t: npt.ArrayLike, amplitude: float, frequency: float, offset: float = 0.0,
         phase: float = 0.0) -> FloatArray:
    """``offset + amplitude sin(2 pi f t + phase)``; f [Hz]."""
    return offset + amplitude * np.sin(2 * np.pi * frequency * np.asarray(t, np.float64) + phase)


def chirp(t: npt.ArrayLike, amplitude: float, f_start: float, f_end: float, duration: float,
          offset: float = 0.0) -> FloatArray:
    """Linear chirp ``offset + A sin(2 pi (f0 t + (f1 - f0) t^2 / (2 T)))`` for 0 <= t <= T.

    The instantaneous frequency f0 + (f1 - f0) t / T sweeps f_start -> f_end [Hz]; times outside
    [0, T] give ``offset``.
    """
    if not duration > 0:
        raise ConfigError(f'chirp: duration must be > 0, got {duration!r}')
    tt = np.asarray(t, dtype=np.float64)
    phase = 2 * np.pi * (f_start * tt + 0.5 * (f_end - f_start) * tt ** 2 / duration)
    inside = (tt >= 0) & (tt <= duration)
    return offset + np.where(inside, amplitude * np.sin(phase), 0.0)


def sample(seq: CommandSequence, t: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Zero-order hold of ``seq`` onto the times ``t`` [s]: (linear_x, angular_z).

    Sample k applies on [t_k, t_{k+1}); times before t_0 get sample 0, after the end the last one.
    """
    idx = np.searchsorted(seq.t, np.asarray(t, dtype=np.float64), side='right') - 1
    idx = np.clip(idx, 0, len(seq) - 1)
    return seq.linear_x[idx], seq.angular_z[idx]


def concatenate(parts: list[CommandSequence], name: str = '',
                description: str = '') -> CommandSequence:
    """Play ``parts`` one after the other; part k+1 starts one sample period after part k ends."""
    if not parts:
        raise ConfigError('concatenate: no sequences given')
    modes = {p.mode for p in parts}
    if len(modes) != 1:
        raise ConfigError(f'concatenate: sequences mix modes {sorted(modes)}')
    ts, vs, zs = [], [], []
    offset = 0.0
    for p in parts:
        period = float(np.median(np.diff(p.t))) if len(p) > 1 else 0.0
        ts.append(p.t - p.t[0] + offset)
        vs.append(p.linear_x)
        zs.append(p.angular_z)
        offset = float(ts[-1][-1]) + (period if period > 0 else 1e-3)
    return CommandSequence(np.concatenate(ts), np.concatenate(vs), np.concatenate(zs),
                           parts[0].mode, name, description)


class SequencePlayer:
    """Plays a sequence against a clock: :meth:`command` at elapsed time -> (v, angular_z, done).

    Without ``loop`` the last sample holds after the end (``done`` True); with ``loop`` the
    sequence restarts one sample period after its last sample.
    """

    def __init__(self, seq: CommandSequence, loop: bool = False) -> None:
        self.seq = seq
        self.loop = loop
        period = float(np.median(np.diff(seq.t))) if len(seq) > 1 else 1.0
        self.cycle = seq.duration + period

    def command(self, elapsed: float) -> tuple[float, float, bool]:
        """Command ``elapsed`` [s] after the start (elapsed 0 plays t[0])."""
        t = self.seq.t[0] + (elapsed % self.cycle if self.loop else elapsed)
        v, z = sample(self.seq, np.array([t]))
        done = not self.loop and elapsed >= self.seq.duration
        return float(v[0]), float(z[0]), done


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


# --------------------------------------------------------------------------- files
def _sequence_dict(seq: CommandSequence) -> dict[str, Any]:
    return {'name': seq.name, 'description': seq.description, 'mode': seq.mode,
            't': seq.t.tolist(), 'linear_x': seq.linear_x.tolist(),
            'angular_z': seq.angular_z.tolist()}


def save_sequence(seq: CommandSequence, path: str | os.PathLike[str]) -> None:
    """Write ``seq`` as a YAML scenario file, atomically (floats round-trip exactly)."""
    header = ('# rc-sim command sequence (rc_sim_control.commands): zero-order hold of\n'
              f'# (linear_x [m/s], angular_z in mode {seq.mode!r}) from each t [s] to the next.\n')
    text = yaml.safe_dump(_sequence_dict(seq), sort_keys=False, default_flow_style=None,
                          width=99)
    atomic_write_text(path, header + text)


def sequence_from_mapping(data: Mapping[str, Any], source: str) -> CommandSequence:
    """Validate a parsed scenario mapping (one-line :class:`ConfigError` naming source and key)."""
    if not isinstance(data, Mapping):
        raise ConfigError(f'{source}: top level must be a mapping with keys {", ".join(_KEYS)}, '
                          f'got {type(data).__name__}')
    for key in data:
        if key not in _KEYS:
            hint = difflib.get_close_matches(str(key), _KEYS, n=1)
            extra = f' (did you mean {hint[0]!r}?)' if hint else ''
            raise ConfigError(f'{source}: {key}: unknown key{extra}')
    for key in ('mode', 't', 'linear_x', 'angular_z'):
        if key not in data:
            raise ConfigError(f'{source}: {key}: missing key')
    for key in ('name', 'description', 'mode'):
        if key in data and not isinstance(data[key], str):
            raise ConfigError(f'{source}: {key}: must be a string, got {data[key]!r}')
    arrays = {}
    for key in ('t', 'linear_x', 'angular_z'):
        values = data[key]
        if not isinstance(values, list):
            raise ConfigError(f'{source}: {key}: must be a list of numbers, '
                              f'got {type(values).__name__}')
        for i, x in enumerate(values):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise ConfigError(f'{source}: {key}[{i}]: must be a number, got {x!r}'
                                  f'{number_hint(x)}')
        arrays[key] = np.asarray(values, dtype=np.float64)
    return CommandSequence(arrays['t'], arrays['linear_x'], arrays['angular_z'], data['mode'],
                           data.get('name', '') or '', data.get('description', '') or '',
                           _source=source)


def load_sequence(path: str | os.PathLike[str]) -> CommandSequence:
    """Read and validate a YAML scenario file written by :func:`save_sequence` (or by hand)."""
    p = Path(path)
    data = read_yaml(p, label='sequence file ')
    if not isinstance(data, dict):
        raise ConfigError(f'{p}: top level must be a mapping with keys {", ".join(_KEYS)}')
    return sequence_from_mapping(data, str(p))
