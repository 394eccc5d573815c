"""Fixed-step classical Runge-Kutta (RK4) integration with zero-order-hold inputs.

x_{n+1} = x_n + h/6 (k1 + 2 k2 + 2 k3 + k4), k1 = f(x_n, u(t_n)), k2 = f(x_n + h/2 k1, u(t_n + h/2)),
k3 = f(x_n + h/2 k2, u(t_n + h/2)), k4 = f(x_n + h k3, u(t_n + h)) (the classical fourth-order
method; Butcher, *Numerical Methods for Ordinary Differential Equations*, 3rd ed. 2016). The input u(t) is the command applied at
time t: a zero-order hold of the (delayed) command samples, evaluated at each stage time, so a
command edge inside a step is resolved to the stage (h/2), not to the step.

Scalar Python floats on purpose: each car is one short trajectory (1e4-2e4 steps), and plain
float arithmetic is several times faster than numpy on 10-20 element states.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ['Deriv', 'PostStep', 'held_inputs', 'rk4']

Deriv = Callable[[list[float], tuple[float, ...]], list[float]]
PostStep = Callable[[list[float]], None]


def held_inputs(query_times: np.ndarray, apply_times: np.ndarray, values: np.ndarray,
                initial: Sequence[float]) -> list[tuple[float, ...]]:
    """Zero-order hold: the value of the last command with apply time <= t, else ``initial``."""
    index = np.searchsorted(apply_times, query_times, side='right') - 1
    table = np.vstack([np.asarray(initial, dtype=float)[None, :], values])
    return [tuple(row) for row in table[index + 1].tolist()]


def rk4(deriv: Deriv, x0: Sequence[float], inputs: tuple[list[tuple[float, ...]], ...],
        dt: float, steps: int, post: PostStep | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Integrate ``steps`` RK4 steps; returns states (steps+1, nx) and derivatives k1 (same).

    ``inputs`` = (u at t_n, u at t_n + dt/2, u at t_n + dt) for n = 0..steps-1. ``post`` may
    modify the state in place after each step (rate-independent operators such as backlash).
    The derivative row of the last state repeats the one before (no input is defined there).
    """
    u0, uh, u1 = inputs
    half = 0.5 * dt
    sixth = dt / 6.0
    x = [float(v) for v in x0]
    states = [x]
    rates: list[list[float]] = []
    for n in range(steps):
        k1 = deriv(x, u0[n])
        k2 = deriv([a + half * b for a, b in zip(x, k1)], uh[n])
        k3 = deriv([a + half * b for a, b in zip(x, k2)], uh[n])
        k4 = deriv([a + dt * b for a, b in zip(x, k3)], u1[n])
        x = [a + sixth * (b + 2.0 * (c + d) + e) for a, b, c, d, e in zip(x, k1, k2, k3, k4)]
        if post is not None:
            post(x)
        states.append(x)
        rates.append(k1)
    rates.append(rates[-1] if rates else [0.0] * len(x))
    return np.asarray(states), np.asarray(rates)
