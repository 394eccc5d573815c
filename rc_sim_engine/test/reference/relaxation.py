"""Tyre relaxation of the reference: the first-order transient slip angle of an axle.

Pacejka, *Tire and Vehicle Dynamics*, 3rd ed. 2012, §7.2 (the single-contact-point transient
model) writes ``sigma dalpha'/dt + |V_x| alpha' = -V_sy``; for small angles
``-V_sy = |V_x| tan(alpha) ~ |V_x| alpha``. ``docs/engine.md`` states it with the geometric
(atan2) slip angle alpha, a speed floor and a rate cap:

    dalpha'/dt = lambda (alpha_bar - alpha'),   lambda = min(max(|v_x|, 0.2 m/s) / sigma, 400 1/s)

with v_x the contact velocity along the wheel and alpha_bar the slip angle with |v_x| floored at
0.2 m/s (the geometric one above that speed); sigma = 0 means no relaxation (alpha' unused,
rate 0). The floors let alpha' settle to 0 at standstill; the cap (a 2.5 ms lag, the engine's largest
sub-step) makes sigma -> 0 the instantaneous tyre delayed by 2.5 ms, not the instantaneous tyre
itself.
"""

from __future__ import annotations

import numpy as np

FloatArray = np.ndarray

RELAXATION_SPEED_FLOOR = 0.2  # m/s: floor of |v_x| in the relaxation rate
RELAXATION_RATE_CAP = 400.0  # 1/s: cap of the relaxation rate |v_x| / sigma


def relaxation_gain(v_along: FloatArray, sigma: FloatArray | float) -> FloatArray:
    """``lambda = min(max(|v_x|, 0.2 m/s) / sigma, 400 1/s)``; 0 where ``sigma = 0``."""
    relaxed = np.asarray(sigma) > 0
    lam = np.minimum(np.maximum(np.abs(v_along), RELAXATION_SPEED_FLOOR)
                     / np.where(relaxed, sigma, 1.0), RELAXATION_RATE_CAP)
    return np.where(relaxed, lam, 0.0)


def relaxation_rate(alpha: FloatArray, alpha_relaxed: FloatArray, v_along: FloatArray,
                    sigma: FloatArray | float) -> FloatArray:
    """``dalpha'/dt = lambda (alpha - alpha')`` (0 where ``sigma = 0``)."""
    return relaxation_gain(v_along, sigma) * (alpha - alpha_relaxed)
