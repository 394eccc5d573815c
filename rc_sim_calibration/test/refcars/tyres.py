"""Tyre force laws of the reference cars (scalar float functions, called inside the ODEs).

Sign convention: a positive slip angle ``alpha`` (wheel pointing left of its velocity) gives a
positive (leftward) lateral force; a positive slip ratio ``kappa`` (wheel faster than the ground)
gives a positive (forward) force.

* Fiala brush model with a parabolic pressure distribution (Fiala 1954; Pacejka, *Tyre and
  Vehicle Dynamics*, 3rd ed. 2012, ch. 3 'brush model'; as written in Hindiyeh & Gerdes 2014):
  z = tan(alpha), z_sl = 3 mu Fz / C;
  Fy = C z - C^2 |z| z / (3 mu Fz) + C^3 z^3 / (27 mu^2 Fz^2) for |z| < z_sl, else mu Fz sign(z).
* Magic Formula (Pacejka 2012, ch. 4): F = D sin(C atan(B x - E (B x - atan(B x)))),
  D = mu Fz, B = K / (C D) with K the slope at x = 0.
* Degressive load sensitivity of the cornering stiffness (Pacejka 2012, ch. 4: the
  cornering stiffness grows less than proportionally with the load):
  K(Fz) = c Fz (1 - eps (Fz / Fz0 - 1)), floored at 0.3 c Fz.
* Combined slip by friction-circle truncation (Pacejka 2012, ch. 4; Rajamani, *Vehicle
  Dynamics and Control*, 2nd ed. 2012, ch. 13): when |(Fx, Fy)| > mu Fz both are scaled down
  onto the circle.
"""

from __future__ import annotations

import math

__all__ = ['fiala_lateral', 'friction_circle', 'load_sensitive_stiffness', 'magic_formula']


def fiala_lateral(alpha: float, stiffness: float, mu_fz: float) -> float:
    """Fiala brush-model lateral force [N]; ``stiffness`` C [N/rad], ``mu_fz`` = mu Fz [N]."""
    if mu_fz <= 0.0:
        return 0.0
    z = math.tan(alpha)
    if abs(z) >= 3.0 * mu_fz / stiffness:
        return math.copysign(mu_fz, z)
    c = stiffness
    return c * z - c * c * abs(z) * z / (3.0 * mu_fz) + c ** 3 * z ** 3 / (27.0 * mu_fz * mu_fz)


def magic_formula(x: float, slope: float, shape: float, mu_fz: float, curvature: float) -> float:
    """Magic Formula force [N] at slip ``x`` with initial slope ``slope`` [N/unit slip]."""
    if mu_fz <= 0.0:
        return 0.0
    b = slope / (shape * mu_fz)
    bx = b * x
    return mu_fz * math.sin(shape * math.atan(bx - curvature * (bx - math.atan(bx))))


def load_sensitive_stiffness(coeff: float, fz: float, fz_nominal: float, eps: float) -> float:
    """Degressive cornering stiffness K(Fz) = c Fz (1 - eps (Fz/Fz0 - 1)) [N/rad], Fz >= 0."""
    fz = max(fz, 0.0)
    return coeff * fz * max(1.0 - eps * (fz / fz_nominal - 1.0), 0.3)


def friction_circle(fx: float, fy: float, mu_fz: float) -> tuple[float, float]:
    """Scale (fx, fy) onto the friction circle of radius mu Fz when it lies outside."""
    norm = math.hypot(fx, fy)
    if norm <= mu_fz or norm == 0.0:
        return fx, fy
    scale = max(mu_fz, 0.0) / norm
    return fx * scale, fy * scale
