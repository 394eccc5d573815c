"""Timed command sequences: :class:`CommandSequence` (a zero-order-hold command signal), the
signal generators that build them, and :class:`SequencePlayer` that plays one back.

Sample ``k`` holds from ``t[k]`` to ``t[k + 1]`` and the last sample holds forever. Absurd values
are refused with a one-line error giving the limit: times beyond :data:`MAX_SEQUENCE_TIME`,
speeds beyond :data:`MAX_COMMAND_SPEED`, ``angular_z`` beyond :data:`MAX_ANGULAR_Z` of its mode,
generated sequences of more than :data:`MAX_SEQUENCE_SAMPLES` samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np
import numpy.typing as npt

from rc_sim_control.mapper_config import MAPPER_MODES
from rc_sim_description.errors import ConfigError
from rc_sim_description.plausibility import MAX_TOP_SPEED

__all__ = [
    'MAX_ANGULAR_Z',
    'MAX_COMMAND_SPEED',
    'MAX_LAPS',
    'MAX_RATE_HZ',
    'MAX_SEQUENCE_SAMPLES',
    'MAX_SEQUENCE_TIME',
    'CommandSequence',
    'SequencePlayer',
    'chirp',
    'concatenate',
    'constant',
    'ramp',
    'sample',
    'sine',
    'step',
    'time_grid',
]

FloatArray = npt.NDArray[np.float64]

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
