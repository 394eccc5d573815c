"""Identifiability at the optimum from the residual Jacobian (Gauss-Newton approximation).

With residuals r (M,) and Jacobian J = dr/dtheta (M, n) at the optimum theta*, the covariance of
the least-squares estimate is (Bard 1974, Nonlinear Parameter Estimation, ch. 7)

    Cov(theta) = s^2 (J^T J)^-1,    s^2 = r^T r / (M - n),

the standard errors are sqrt(diag Cov) and the correlations rho_ij = Cov_ij / (se_i se_j). A pair
with |rho| > 0.95 is confounded (the data constrain only a combination of the two, e.g. mass vs
cornering stiffness); a parameter whose standard error exceeds half its search range, or lies in
the null space of J (singular value below 1e-10 of the largest), is not identifiable. The residual
samples are autocorrelated in time, so these standard errors are optimistic (a lower bound).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np

__all__ = ['KNOWN_PAIRS', 'Identifiability', 'analyse', 'parameter_status']

Array = np.ndarray
#: pairs that real recordings often cannot separate, what separates them, and the correlation
#: from which they are reported as confounded (below the general 0.95)
KNOWN_PAIRS: dict[frozenset[str], str] = {
    frozenset(p): why for ps, why in (
        ((('steering_gain', 'cornering_stiffness_front'),
          ('steering_gain', 'cornering_stiffness_rear'),
          ('steering_gain_left', 'cornering_stiffness_front'),
          ('steering_gain_right', 'cornering_stiffness_front')),
         'a larger steering angle on softer tyres turns the car as much as a smaller one on '
         'stiffer tyres; slow steady circles, or steering angles measured at standstill '
         '(fit_measured_steering.yaml), separate them'),
        ((('command_latency', 'servo_time_constant'),
          ('command_latency', 'servo_natural_frequency'),
          ('command_latency', 'servo_damping_ratio')),
         'a transport delay and a servo lag both make the steering late; steering steps held '
         'for a second and a chirp to 2-3 Hz separate them'),
    ) for p in ps}
KNOWN_RHO = 0.7


@dataclass(frozen=True)
class Identifiability:
    """Standard errors, correlation matrix and the flags of an estimate."""

    names: tuple[str, ...]
    values: Array          # (n,) estimate
    std_errors: Array      # (n,) inf where not identifiable
    correlation: Array     # (n, n)
    condition_number: float
    flags: tuple[str, ...]
    confounded_pairs: tuple[tuple[str, str, float], ...]
    unidentifiable: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        """Plain data for JSON / Markdown reports."""
        return {
            'std_errors': {n: float(s) for n, s in zip(self.names, self.std_errors)},
            'correlation': self.correlation.tolist(),
            'condition_number': self.condition_number,
            'flags': list(self.flags),
        }


def analyse(jacobian: Array, residual: Array, names: Sequence[str], values: Array, *,
            ranges: Array | None = None, rho_threshold: float = 0.95,
            rcond: float = 1e-10) -> Identifiability:
    """Identifiability of ``values`` from J (M, n) in physical units and the residuals (M,)."""
    jac = np.asarray(jacobian, dtype=float)
    r = np.asarray(residual, dtype=float)
    m, n = jac.shape
    dof = max(m - n, 1)
    s2 = float(r @ r) / dof
    _, sv, vt = np.linalg.svd(jac, full_matrices=False)
    smax = float(sv[0]) if sv.size else 0.0
    good = sv > rcond * smax if smax > 0 else np.zeros_like(sv, dtype=bool)
    inv_s2 = np.where(good, 1.0 / np.where(good, sv, 1.0) ** 2, 0.0)
    cov = (vt.T * inv_s2) @ vt * s2
    var = np.diag(cov).copy()
    null = vt[~good]                         # directions the data do not constrain
    in_null = (np.abs(null) > 1e-6).any(axis=0) if null.size else np.zeros(n, dtype=bool)
    se = np.where(in_null, np.inf, np.sqrt(np.maximum(var, 0.0)))
    with np.errstate(invalid='ignore', divide='ignore'):
        denom = np.sqrt(np.outer(np.maximum(var, 0.0), np.maximum(var, 0.0)))
        corr = np.where(denom > 0, cov / denom, 0.0)
    np.fill_diagonal(corr, 1.0)
    for i in range(n):       # null-space members are perfectly confounded with their partners
        for j in range(n):
            if i != j and in_null[i] and in_null[j]:
                k = np.abs(null[:, i] * null[:, j]).argmax()
                corr[i, j] = float(np.sign(null[k, i] * null[k, j]))
    cond = float(smax / sv[-1]) if sv.size and sv[-1] > 0 else float('inf')
    flags: list[str] = []
    pairs: list[tuple[str, str, float]] = []
    for i in range(n):
        for j in range(i + 1, n):
            known = KNOWN_PAIRS.get(frozenset((names[i], names[j])))
            if abs(corr[i, j]) > rho_threshold or (known and abs(corr[i, j]) >= KNOWN_RHO):
                pairs.append((names[i], names[j], float(corr[i, j])))
                why = known or 'the data fix only a combination'
                flags.append(f'{names[i]} and {names[j]} are confounded '
                             f'(rho = {corr[i, j]:+.2f}): {why}')
    weak: list[str] = []
    for i in range(n):
        too_wide = ranges is not None and np.isfinite(se[i]) and se[i] > 0.5 * float(ranges[i])
        if in_null[i] or not np.isfinite(se[i]) or too_wide:
            weak.append(names[i])
            why = 'no sensitivity in the data' if in_null[i] or not np.isfinite(se[i]) else \
                f'standard error {se[i]:.3g} exceeds half its search range'
            flags.append(f'{names[i]} is not determined by these recordings ({why}): its prior '
                         'or start value holds it')
    return Identifiability(names=tuple(names), values=np.asarray(values, dtype=float),
                           std_errors=se, correlation=corr, condition_number=cond,
                           flags=tuple(flags), confounded_pairs=tuple(pairs),
                           unidentifiable=tuple(weak))


def parameter_status(ident: Identifiability, names: Sequence[str],
                     fixed: Sequence[str] = ()) -> list[str]:
    """Per parameter of ``names``, in plain words and one status each: ``not determined by these
    recordings`` (no sensitivity, or a standard error beyond half its search range: its prior
    or start holds it), ``confounded with X`` (the strongest partner of a confounded pair),
    ``well determined (+- se)``; ``fixed`` names (identified, then held for the final polish)
    say so."""
    out = []
    index = {name: i for i, name in enumerate(ident.names)}
    for name in names:
        i = index.get(name)
        if name in fixed or i is None:
            out.append('identified, then held for the final polish')
            continue
        if name in ident.unidentifiable:
            out.append('not determined by these recordings')
            continue
        partners = [(abs(rho), b if a == name else a) for a, b, rho in ident.confounded_pairs
                    if name in (a, b)]
        if partners:
            out.append(f'confounded with {max(partners)[1]}')
            continue
        se = float(ident.std_errors[i])
        out.append(f'well determined (±{se:.2g})' if math.isfinite(se) else 'well determined')
    return out
