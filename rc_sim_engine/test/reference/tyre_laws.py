"""Lateral tyre laws of the reference (vectorised), written from their published forms.

- linear ``Fy = C alpha`` (Rajamani, *Vehicle Dynamics and Control*, 2nd ed. 2012, ch. 2);
- Fiala's brush model (Pacejka, *Tire and Vehicle Dynamics*, 3rd ed. 2012, §3.2, with
  ``t = tan(alpha)`` and full sliding beyond ``atan(3 mu Fz / C)``);
- the Magic Formula ``Fz D sin(C atan(B a - E (B a - atan(B a))))`` (Pacejka & Bakker 1987).

The cornering stiffness of the linear and the Fiala law scales with ``Fz / Fz_static`` (see
``single_track``'s docstring).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the parameters' type only: no import cycle at run time
    from .single_track import RefParams

Coefficients = tuple[float, float, float, float]
FloatArray = np.ndarray


def magic_formula(x: FloatArray, c: Coefficients) -> FloatArray:
    """Pacejka & Bakker (1987): D sin(C atan(B x - E (B x - atan(B x)))) (D a friction coeff.)."""
    b, cc, d, e = c
    bx = b * x
    return d * np.sin(cc * np.arctan(bx - e * (bx - np.arctan(bx))))


def fiala(alpha: FloatArray, c_alpha: FloatArray | float, mu: float,
          fz: FloatArray | float, saturate: bool = True) -> FloatArray:
    """Fiala brush model (Pacejka 2012 §3.2): cubic in tan(alpha) below full sliding.

    ``saturate=False``: the cubic for every alpha (engine.md's ``fiala_unsaturated``).
    """
    t = np.tan(alpha)
    mfz = mu * fz
    cubic = (c_alpha * t - c_alpha ** 2 * np.abs(t) * t / (3 * mfz)
             + c_alpha ** 3 * t ** 3 / (27 * mfz ** 2))
    if not saturate:
        return cubic
    sliding = np.abs(alpha) >= np.arctan(3 * mfz / c_alpha)
    return np.where(sliding, mfz * np.sign(alpha), cubic)


TYRE_LAWS = ('linear', 'fiala', 'fiala_unsaturated', 'pacejka')


def _law(name: str, alpha: FloatArray, fz: FloatArray, fz_static: FloatArray,
         c_alpha: FloatArray, p: RefParams) -> FloatArray:
    if name == 'linear':
        return c_alpha * fz / fz_static * alpha
    if name in ('fiala', 'fiala_unsaturated'):
        c = c_alpha * fz / fz_static if p.fiala_stiffness_scales_with_load else c_alpha
        return fiala(alpha, c, p.mu_lat, fz, saturate=name == 'fiala')
    return fz * magic_formula(alpha, p.lateral)


def lateral_force(alpha: FloatArray, fz: FloatArray, fz_static: FloatArray, c_alpha: FloatArray,
                  p: RefParams) -> FloatArray:
    """Axle lateral force of each car's law (``p.tyre_model`` a name or an (N, 1) array)."""
    if isinstance(p.tyre_model, str):
        return _law(p.tyre_model, alpha, fz, fz_static, c_alpha, p)
    out = 0.0 * alpha
    for name in TYRE_LAWS:
        mask = p.tyre_model == name
        if mask.any():
            out = np.where(mask, _law(name, alpha, fz, fz_static, c_alpha, p), out)
    return out
