"""Tyre force laws of the embedded engine (pure functions, SI units, numba-compiled scalars).

Sign convention (ISO-like): a positive slip angle ``alpha`` [rad] gives a
positive lateral force; a positive slip ratio ``kappa`` (wheel faster than the ground, driving)
gives a positive longitudinal force. Every law returns a force in newtons for a normal load ``fz``
[N].

* linear:  ``Fy = C alpha``
* Fiala:   ``Fy = C t - C^2 |t| t / (3 mu Fz) + C^3 t^3 / (27 mu^2 Fz^2)``, ``t = tan(alpha)``, and
  ``Fy = mu Fz sign(alpha)`` beyond ``alpha_sl = atan(3 mu Fz / C)`` when saturated (Pacejka, *Tire
  and Vehicle Dynamics*, 3rd ed., §3.2 brush model; ``fiala`` saturated, ``fiala_unsaturated``
  the polynomial everywhere).
* Magic Formula: ``F = Fz D sin(C atan(B x - E (B x - atan(B x))))`` with D a friction coefficient
  (Pacejka & Bakker 1987; a table for a 1:10 car with D in newtons: see
  :func:`racecar_pacejka_preset`).
"""

from __future__ import annotations

from dataclasses import asdict
from functools import lru_cache
import math
from typing import Any

from numba import njit, vectorize
import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import PacejkaCoefficients, VehicleParams
from rc_sim_engine.compiled import cache as _jit_cache  # noqa: F401  (must run before any cached kernel loads)

__all__ = [
    'RACECAR_TABLE_WHEEL_LOAD',
    'TYRE_IDS',
    'fiala_lateral_force',
    'linear_lateral_force',
    'magic_formula',
    'magic_formula_force',
    'racecar_pacejka_preset',
    'with_racecar_pacejka',
]

#: Tyre law ids used inside the compiled kernels.
TYRE_IDS: dict[str, int] = {'linear': 0, 'fiala': 1, 'fiala_unsaturated': 2, 'pacejka': 3}

#: Wheel normal load of that table (a 5.59 kg MIT-racecar-class car, the table's own g):
#: M_tot g / 4 = 5.5922 kg * 9.8065 m/s^2 / 4 [N].
RACECAR_TABLE_WHEEL_LOAD = 5.5922 * 9.8065 / 4.0


# --------------------------------------------------------------------------- compiled scalars
@njit(cache=True, error_model='numpy', inline='always')
def mf_shape(x: float, B: float, C: float, D: float, E: float) -> float:
    """Normalised Magic Formula ``D sin(C atan(B x - E (B x - atan(B x))))`` (force / Fz)."""
    bx = B * x
    if E == 0.0:
        return D * math.sin(C * math.atan(bx))
    return D * math.sin(C * math.atan(bx - E * (bx - math.atan(bx))))


@njit(cache=True, error_model='numpy', inline='always')
def fiala_scalar(alpha: float, c_alpha: float, mu: float, fz: float, saturate: bool) -> float:
    """Fiala brush lateral force [N] (equation in the module docstring)."""
    if fz <= 0.0 or mu <= 0.0:
        return 0.0
    mufz = mu * fz
    t = math.tan(max(-1.5, min(1.5, alpha)))
    if saturate and abs(t) >= 3.0 * mufz / c_alpha:
        return math.copysign(mufz, alpha)
    return (c_alpha * t - c_alpha * c_alpha * abs(t) * t / (3.0 * mufz)
            + c_alpha ** 3 * t ** 3 / (27.0 * mufz * mufz))


@njit(cache=True, error_model='numpy', inline='always')
def lateral_force(tyre_id: int, alpha: float, c_alpha: float, mu: float, fz: float, B: float,
                  C: float, D: float, E: float) -> float:
    """Lateral force [N] of the law ``tyre_id`` (see :data:`TYRE_IDS`)."""
    if tyre_id == 0:
        return c_alpha * alpha
    if tyre_id == 1:
        return fiala_scalar(alpha, c_alpha, mu, fz, True)
    if tyre_id == 2:
        return fiala_scalar(alpha, c_alpha, mu, fz, False)
    return fz * mf_shape(alpha, B, C, D, E)


# --------------------------------------------------------------------------- numpy API
def _mf_elementwise(x: float, B: float, C: float, D: float, E: float) -> float:  # pragma: no cover
    return mf_shape(x, B, C, D, E)


def _fiala_elementwise(alpha: float, c_alpha: float, mu: float, fz: float,
                       saturate: bool) -> float:  # pragma: no cover
    return fiala_scalar(alpha, c_alpha, mu, fz, saturate)


@lru_cache(maxsize=1)
def _ufuncs() -> tuple[Any, Any]:
    """The numpy ufuncs of the tyre laws, built on first use (numba builds a vectorize eagerly;
    at import it would cost every command a few tenths of a second of start-up)."""
    mf = vectorize(['float64(float64, float64, float64, float64, float64)'],
                   cache=True)(_mf_elementwise)
    fiala = vectorize(['float64(float64, float64, float64, float64, boolean)'],
                      cache=True)(_fiala_elementwise)
    return mf, fiala


def magic_formula(x: ArrayLike, coefficients: PacejkaCoefficients) -> NDArray[np.float64]:
    """``D sin(C atan(B x - E (B x - atan(B x))))``: force per unit normal load [-]."""
    c = coefficients
    return np.asarray(_ufuncs()[0](np.asarray(x, dtype=float), c.B, c.C, c.D, c.E),
                      dtype=float)


def magic_formula_force(x: ArrayLike, fz: ArrayLike,
                        coefficients: PacejkaCoefficients) -> NDArray[np.float64]:
    """Magic Formula force [N] = ``fz * magic_formula(x)``."""
    return np.asarray(fz, dtype=float) * magic_formula(x, coefficients)


def linear_lateral_force(alpha: ArrayLike, cornering_stiffness: float) -> NDArray[np.float64]:
    """``Fy = C alpha`` [N]."""
    return cornering_stiffness * np.asarray(alpha, dtype=float)


def fiala_lateral_force(alpha: ArrayLike, cornering_stiffness: float, mu: float, fz: ArrayLike,
                        *, saturate: bool = True) -> NDArray[np.float64]:
    """Fiala brush lateral force [N], saturated at ``mu fz`` beyond the sliding angle if asked."""
    a, f = np.broadcast_arrays(np.asarray(alpha, dtype=float), np.asarray(fz, dtype=float))
    return np.asarray(_ufuncs()[1](a, float(cornering_stiffness), float(mu), f,
                                    bool(saturate)), dtype=float)


def racecar_pacejka_preset(wheel_load: float = RACECAR_TABLE_WHEEL_LOAD
                            ) -> tuple[PacejkaCoefficients, PacejkaCoefficients]:
    """(lateral, longitudinal) Magic Formula coefficients of a 1:10 car's table.

    The table (tuned on a figure eight of an MIT-racecar-class 1:10 car in Gazebo) is::

                 Fx (slip ratio)   Fy (slip angle)
        B        3                 10
        C        1.45              1.45
        D        19.0569 N         1.371 N
        E        0.52              0.97

    Its D is a force in newtons at the table's wheel load ``Fz = M_tot g / 4 = 13.71 N``. Our
    vehicle.yaml stores D as a friction coefficient (force = Fz D at the peak), so D is converted
    as ``D_mu = D_N / Fz``: 19.0569 / 13.71 = 1.390 (longitudinal) and 1.371 / 13.71 = 0.1000
    (lateral). B, C, E are dimensionless and carry over. Use with
    ``params.with_values(pacejka_lateral=...)`` after ``dataclasses.asdict``, or pass to
    :func:`magic_formula`.
    """
    if not wheel_load > 0:
        raise ConfigError(f'racecar_pacejka_preset: wheel_load must be > 0 N, got {wheel_load!r}')
    lateral = PacejkaCoefficients(B=10.0, C=1.45, D=1.371 / wheel_load, E=0.97)
    longitudinal = PacejkaCoefficients(B=3.0, C=1.45, D=19.0569 / wheel_load, E=0.52)
    return lateral, longitudinal


def with_racecar_pacejka(params: VehicleParams) -> VehicleParams:
    """Copy of ``params`` with ``tyre_model: pacejka`` and both coefficient sets of that table."""
    lateral, longitudinal = racecar_pacejka_preset()
    return params.with_values(tyre_model='pacejka', pacejka_lateral=asdict(lateral),
                              pacejka_longitudinal=asdict(longitudinal))
