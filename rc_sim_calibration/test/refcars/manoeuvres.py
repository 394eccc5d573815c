"""Open-loop manoeuvres for a 1:10 car in a lab (about 6 m x 6 m, one 7.5 m straight).

A manoeuvre is a reference speed v_ref(t) [m/s] and a reference bicycle steering angle
delta_ref(t) [rad], vectorized over t [s]. Each car turns them into its own commands (steering
angle + wheel speed, /cmd_vel, or normalised steering + throttle) sampled at its command rate.
Every manoeuvre stands still for the first second (gyro-bias estimate) and ends at rest.

Training set: line (speed steps on a straight), circle_left, circle_right (two speeds each),
figure_eight, steering_steps, speed_steps (on a wide circle). Held-out set: slalom and
steering_chirp (0.2 -> 3 Hz linear sweep), both around a wide circle so they fit in the lab.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math

import numpy as np

__all__ = ['HELD_OUT', 'MANOEUVRES', 'TRAINING', 'Manoeuvre', 'held_out_manoeuvres',
           'make_manoeuvre', 'training_manoeuvres']

Reference = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]

STILL = 1.0  # s of standstill at the start


@dataclass(frozen=True)
class Manoeuvre:
    """A named open-loop reference: ``reference(t) -> (v_ref [m/s], delta_ref [rad])``."""

    name: str
    duration: float
    reference: Reference
    held_out: bool = False

    def sample(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(v_ref, delta_ref) at times ``t`` [s]; zero outside [0, duration]."""
        t = np.asarray(t, dtype=float)
        v, d = self.reference(t)
        outside = (t < 0.0) | (t > self.duration)
        v = np.where(outside, 0.0, np.broadcast_to(v, t.shape))
        d = np.where(outside, 0.0, np.broadcast_to(d, t.shape))
        return v.astype(float), d.astype(float)


def _ramps(knots: list[tuple[float, float]]) -> Callable[[np.ndarray], np.ndarray]:
    """Piecewise-linear speed through (t, v) knots (ramps)."""
    tk = np.array([k[0] for k in knots])
    vk = np.array([k[1] for k in knots])
    return lambda t: np.interp(t, tk, vk)


def _steps(knots: list[tuple[float, float]]) -> Callable[[np.ndarray], np.ndarray]:
    """Zero-order hold through (t, value) knots: value k from t_k to t_{k+1} (steps)."""
    tk = np.array([k[0] for k in knots])
    vk = np.array([k[1] for k in knots])
    return lambda t: vk[np.clip(np.searchsorted(tk, t, side='right') - 1, 0, len(vk) - 1)]


def _line() -> Manoeuvre:
    speed = _ramps([(0, 0), (STILL, 0), (2.0, 1.2), (4.0, 1.2), (4.4, 0.6), (6.4, 0.6),
                    (7.0, 1.5), (8.0, 1.5), (9.0, 0), (12.5, 0)])
    return Manoeuvre('line', 12.5, lambda t: (speed(t), np.zeros_like(t)))


def _circle(name: str, delta: float, v1: float, v2: float) -> Manoeuvre:
    speed = _ramps([(0, 0), (STILL, 0), (2.0, v1), (7.0, v1), (8.0, v2), (13.0, v2),
                    (14.5, 0), (16.0, 0)])
    steer = _steps([(0, 0), (STILL, delta), (14.5, 0)])
    return Manoeuvre(name, 16.0, lambda t: (speed(t), steer(t)))


def _figure_eight(wheelbase: float) -> Manoeuvre:
    delta, v = 0.25, 1.2
    lobe = 2.0 * math.pi * wheelbase / math.tan(delta) / v  # one full circle per lobe
    t1 = STILL + 1.0
    end = t1 + 2.0 * lobe
    speed = _ramps([(0, 0), (STILL, 0), (t1, v), (end, v), (end + 1.5, 0), (end + 2.5, 0)])
    steer = _steps([(0, 0), (STILL, delta), (t1 + lobe, -delta), (end + 1.5, 0)])
    return Manoeuvre('figure_eight', end + 2.5, lambda t: (speed(t), steer(t)))


def _steering_steps() -> Manoeuvre:
    # steps of both signs around a mean left turn (0.1 rad), so the path curls up in the lab
    levels = [0.1, 0.2, 0.0, 0.28, -0.08, 0.22, -0.14, 0.1]
    knots = [(0.0, 0.0)] + [(STILL + 1.5 + 1.5 * i, lv) for i, lv in enumerate(levels)]
    end = STILL + 1.5 + 1.5 * len(levels)
    speed = _ramps([(0, 0), (STILL, 0), (STILL + 1.0, 1.0), (end, 1.0), (end + 1.0, 0),
                    (end + 2.0, 0)])
    steer = _steps(knots)
    return Manoeuvre('steering_steps', end + 2.0, lambda t: (speed(t), steer(t)))


def _speed_steps() -> Manoeuvre:
    speed = _steps([(0, 0), (STILL, 0.6), (3.5, 1.6), (6.0, 1.0), (8.5, 2.4), (11.0, 0.8),
                    (13.5, 0.0)])
    steer = _steps([(0, 0), (STILL, 0.12), (13.5, 0.0)])
    return Manoeuvre('speed_steps', 16.0, lambda t: (speed(t), steer(t)))


def _slalom() -> Manoeuvre:
    v, start, cycles, freq = 1.5, STILL + 1.0, 6, 0.5
    end = start + cycles / freq
    speed = _ramps([(0, 0), (STILL, 0), (start, v), (end + 0.5, v), (end + 2.0, 0),
                    (end + 3.0, 0)])

    def steer(t: np.ndarray) -> np.ndarray:
        wave = 0.08 + 0.18 * np.sin(2.0 * math.pi * freq * (t - start))
        return np.where((t >= start) & (t < end), wave, np.where(t >= STILL, 0.08, 0.0))
    return Manoeuvre('slalom', end + 3.0, lambda t: (speed(t), steer(t)), held_out=True)


def _steering_chirp() -> Manoeuvre:
    v, start, sweep, f0, f1, amp = 1.5, STILL + 1.0, 12.0, 0.2, 3.0, 0.12
    end = start + sweep
    speed = _ramps([(0, 0), (STILL, 0), (start, v), (end + 0.5, v), (end + 2.0, 0),
                    (end + 3.0, 0)])

    def steer(t: np.ndarray) -> np.ndarray:
        tau = t - start  # linear sweep: phase = 2 pi (f0 tau + (f1 - f0) tau^2 / (2 T))
        phase = 2.0 * math.pi * (f0 * tau + (f1 - f0) * tau ** 2 / (2.0 * sweep))
        wave = 0.1 + amp * np.sin(phase)
        return np.where((t >= start) & (t < end), wave, np.where(t >= STILL, 0.1, 0.0))
    return Manoeuvre('steering_chirp', end + 3.0, lambda t: (speed(t), steer(t)),
                     held_out=True)


TRAINING = ('line', 'circle_left', 'circle_right', 'figure_eight', 'steering_steps',
            'speed_steps')
HELD_OUT = ('slalom', 'steering_chirp')
MANOEUVRES = TRAINING + HELD_OUT


def make_manoeuvre(name: str, *, wheelbase: float = 0.30) -> Manoeuvre:
    """The manoeuvre ``name`` (``wheelbase`` [m] sets the figure-eight lobe time only)."""
    builders: dict[str, Callable[[], Manoeuvre]] = {
        'line': _line,
        'circle_left': lambda: _circle('circle_left', 0.22, 1.0, 2.0),
        'circle_right': lambda: _circle('circle_right', -0.22, 1.2, 2.2),
        'figure_eight': lambda: _figure_eight(wheelbase),
        'steering_steps': _steering_steps,
        'speed_steps': _speed_steps,
        'slalom': _slalom,
        'steering_chirp': _steering_chirp,
    }
    if name not in builders:
        raise ValueError(f'unknown manoeuvre {name!r}; known: {", ".join(MANOEUVRES)}')
    return builders[name]()


def training_manoeuvres(*, wheelbase: float = 0.30) -> list[Manoeuvre]:
    """The six training manoeuvres, in order."""
    return [make_manoeuvre(n, wheelbase=wheelbase) for n in TRAINING]


def held_out_manoeuvres() -> list[Manoeuvre]:
    """The two held-out manoeuvres (slalom, steering chirp)."""
    return [make_manoeuvre(n) for n in HELD_OUT]
