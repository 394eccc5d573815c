"""Command histories shared by the engine and the references, and the engine-side runner.

Commands are smooth functions of time (C1 smoothstep ramps, sines). The reference integrates them
as they are; the engine receives them through ``rollout`` sampled at the MIDDLE of each physics
step, so its zero-order hold differs from the smooth signal by O(dt^2 |f''|) on average instead
of the O(dt |f'|) half-step delay of end-point sampling (1e-8 rad for the sine steer below).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math

import numpy as np

from rc_sim_description.params import VehicleParams
from rc_sim_engine.vehicle.rollout import InitialState, rollout

FloatArray = np.ndarray


@dataclass(frozen=True)
class Signal:
    """``start + (end - start) smoothstep((t - t0) / duration) + amplitude sin(2 pi f (t - t0)^+)``.

    The smoothstep is 3 s^2 - 2 s^3 on [0, 1] (C1); the sine starts at t0 as well.
    """

    start: float
    end: float | None = None
    t0: float = 0.0
    duration: float = 1.0
    amplitude: float = 0.0
    frequency: float = 0.0

    def __call__(self, t: FloatArray | float) -> FloatArray:
        return evaluate([self], t)[0]


def constant(value: float) -> Signal:
    return Signal(value)


def ramp(a: float, b: float, t0: float, duration: float) -> Signal:
    return Signal(a, b, t0, duration)


def sine(amplitude: float, frequency: float, t0: float = 0.0) -> Signal:
    return Signal(0.0, None, t0, 1.0, amplitude, frequency)


def _columns(signals: Sequence[Signal]) -> FloatArray:
    """(6, N) parameters: start, end, t0, duration, amplitude, 2 pi frequency."""
    return np.array([[s.start, s.start if s.end is None else s.end, s.t0, s.duration,
                      s.amplitude, 2 * math.pi * s.frequency] for s in signals]).T


def _values(col: FloatArray, t: FloatArray | float) -> FloatArray:
    start, end, t0, duration, amplitude, omega = col
    u = np.clip((t - t0) / duration, 0.0, 1.0)
    return (start + (end - start) * u * u * (3.0 - 2.0 * u)
            + amplitude * np.sin(omega * np.maximum(t - t0, 0.0)))


def evaluate(signals: Sequence[Signal], t: FloatArray | float) -> FloatArray:
    """(len(signals), *shape(t)) values."""
    tt = np.asarray(t, dtype=float)
    out = _values(_columns(signals)[..., None], tt.reshape(1, -1))
    return out.reshape((len(signals), *tt.shape))


@dataclass(frozen=True)
class Manoeuvre:
    """One car's run: initial speed and steering, steering and wheel-speed commands, and
    vehicle.yaml values that differ from the base car (``overrides``, leaf key -> value)."""

    name: str
    speed: float
    steering: float
    delta_cmd: Signal
    omega_cmd: Signal
    overrides: tuple[tuple[str, float], ...] = ()

    def params(self, base: VehicleParams) -> VehicleParams:
        return base.with_values(**dict(self.overrides)) if self.overrides else base


def batch_command(manoeuvres: Sequence[Manoeuvre], attr: str) -> Callable[[float], FloatArray]:
    """(N,) command of the batch at time t (``attr``: 'delta_cmd' or 'omega_cmd')."""
    col = _columns([getattr(m, attr) for m in manoeuvres])
    return lambda t: _values(col, t)


def run_engine(params: VehicleParams, manoeuvres: Sequence[Manoeuvre], t_out: FloatArray, *,
               dt: float = 1e-3, tyre_model: str, load_transfer: bool,
               integrator: str = 'rk4') -> FloatArray:
    """Engine states (N, len(t_out), N_STATE) of the manoeuvres through the public ``rollout``.

    Command k is recorded at (k - 1/2) dt with the value at (k + 1/2) dt, so physics step k
    (from k dt to (k + 1) dt) holds the command's midpoint value, without any tie on time.
    """
    n_steps = round(t_out[-1] / dt) + 1
    t_mid = (np.arange(n_steps) + 0.5) * dt
    steer = evaluate([m.delta_cmd for m in manoeuvres], t_mid)
    wheel = evaluate([m.omega_cmd for m in manoeuvres], t_mid)
    x0 = InitialState(vx=np.array([m.speed for m in manoeuvres]),
                      steering=np.array([m.steering for m in manoeuvres]))
    res = rollout([m.params(params) for m in manoeuvres], t_mid - dt, steer, wheel, x0, t_out=t_out,
                  dt=dt, tyre_model=tyre_model, load_transfer=load_transfer,
                  integrator=integrator)
    return np.asarray(res.states)
