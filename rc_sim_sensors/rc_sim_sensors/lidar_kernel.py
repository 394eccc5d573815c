"""numba kernel of the per-beam lidar effects (stages 1-6 of :mod:`rc_sim_sensors.lidar_errors`).

Each scan is processed alone, in short per-stage loops over its beams (they pipeline better than
one long loop), from its own row of pre-drawn uniforms, so the result depends only on that row
(batch == scan by scan). The equations are documented in ``lidar_errors`` and
``docs/lidar_errors.md``; this module only evaluates them fast (``@njit(cache=True)``).
"""

from __future__ import annotations

import math
from typing import Any

from numba import njit
import numpy as np
from numpy.typing import NDArray

__all__ = ['SNAP', 'bias_series', 'corrupt_scans', 'normal_from_uniform']

SNAP = 1e-6  # fractional beam indices this close to an integer are snapped (exact quantization)

F64 = NDArray[np.float64]
Floats = NDArray[np.floating[Any]]  # float32 or float64 (numba compiles one version per dtype)


# Acklam's rational approximation of the inverse normal CDF (P. J. Acklam, 2003; relative error
# < 1.15e-9, checked against scipy.special.ndtri in the tests).
_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
      1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
      6.680131188771972e+01, -1.328068155288572e+01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
      -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
      3.754408661907416e+00)
_P_LOW = 0.02425
_HALF_ULP = 2.0 ** -54  # maps U[0, 1) on the 2^-53 grid to the open interval (0, 1)


@njit(cache=True)
def normal_from_uniform(u: float) -> float:  # pragma: no cover - jitted
    """N(0, 1) deviate Phi^-1(p) from one U[0, 1) draw, p = u + 2^-54 in (0, 1) (inverse transform
    sampling); the upper tail uses 1 - p = (1 - u) - 2^-54, exact in floating point."""
    tail = u + _HALF_ULP if u < 0.5 else (1.0 - u) - _HALF_ULP
    if tail < _P_LOW:
        q = math.sqrt(-2.0 * math.log(tail))
        x = ((((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5])
             / ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0))
        return x if u < 0.5 else -x
    q = (u + _HALF_ULP) - 0.5
    r = q * q
    return (((((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * q)
            / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0))


@njit(cache=True)
def corrupt_scans(ranges: Floats, phi_base: F64, theta0: float, increment: float, u: F64,
                  blocks: NDArray[np.int64], bias: F64, inten: Floats, has_inten: bool,
                  alpha: Floats, has_alpha: bool, p: F64, flags: NDArray[np.int64],
                  out: Floats, out_i: Floats) -> None:  # pragma: no cover - jitted
    """Apply stages 1-6 to ``ranges`` (S, B), writing ``out`` (and ``out_i`` when ``has_inten``).

    ``blocks`` = (event, mix, noise, jitter) offsets of the per-beam uniform blocks in
    ``u[:, 3:]`` (-1 = off);
    ``p`` = (jitter_stddev, edge_threshold, noise_mean, noise_stddev, noise_stddev_per_meter,
    dropout_probability, incidence_start, incidence_probability, intensity_limit,
    intensity_probability, spurious_probability, range_min, range_max, range_resolution,
    mixed_pixel_probability, range_dropout_probability, range_dropout_start,
    noise_beam_correlation);
    ``flags`` = (angular, out-of-range mode (0 rep117, 1 clamp, 2 zero), add_offset).
    """
    n_scans, n_beams = ranges.shape
    jitter, edge = p[0], p[1]
    mean, sigma0, sigma_k = p[2], p[3], p[4]
    p_drop, inc_start, p_inc, i_limit, p_int, p_spur = p[5], p[6], p[7], p[8], p[9], p[10]
    r_min, r_max, quantum, p_mix = p[11], p[12], p[13], p[14]
    p_rng, rng_start, rho = p[15], p[16], p[17]
    rho_c = math.sqrt(1.0 - rho * rho)
    angular, mode, add_offset = flags[0] != 0, flags[1], flags[2] != 0
    clamp, zero = mode == 1, mode == 2
    event, mix, noi, jit = blocks[0], blocks[1], blocks[2], blocks[3]
    row = np.empty(n_beams)
    row_i = np.empty(n_beams)
    row_a = np.empty(n_beams)
    n_jit = np.zeros(n_beams)
    n_noise = np.zeros(n_beams)
    mixed = np.empty(n_beams)
    drop = np.zeros(n_beams, dtype=np.bool_)
    keep_base = 1.0 - p_drop
    inv_quantum = 1.0 / quantum if quantum > 0.0 else 0.0
    inv_span = 1.0 / (0.5 * math.pi - inc_start)
    inv_limit = 1.0 / i_limit
    inv_rng_span = 1.0 / (r_max - rng_start) if p_rng > 0.0 else 0.0
    inv_increment = 1.0 / increment
    last = n_beams - 1.0
    for s in range(n_scans):
        # normal deviates of this scan (tight loops pipeline far better than inline calls)
        if jit >= 0:
            base = 3 + jit * n_beams
            for i in range(n_beams):
                n_jit[i] = normal_from_uniform(u[s, base + i])
        if noi >= 0:
            base = 3 + noi * n_beams
            for i in range(n_beams):
                n_noise[i] = normal_from_uniform(u[s, base + i])
            if rho != 0.0:  # stationary AR(1) along the beams: unit variance, lag-1 corr rho
                for i in range(1, n_beams):
                    n_noise[i] = rho * n_noise[i - 1] + rho_c * n_noise[i]
        # 1. angular resampling
        if angular and n_beams > 1:
            for i in range(n_beams):
                phi = phi_base[i]
                if jit >= 0:
                    phi += jitter * n_jit[i]
                x = (phi - theta0) * inv_increment
                x = min(max(x, 0.0), last)
                nearest = np.rint(x)
                if abs(x - nearest) < SNAP:
                    x = nearest
                i0 = int(x)
                i1 = min(i0 + 1, n_beams - 1)
                f = x - i0
                r0 = ranges[s, i0]
                r1 = ranges[s, i1]
                if f == 0.0:
                    j = i0
                elif math.isfinite(r0) and math.isfinite(r1) and abs(r1 - r0) <= edge:
                    j = -1
                else:
                    j = i0 if f < 0.5 else i1
                if j >= 0:
                    row[i] = ranges[s, j]
                    if has_inten:
                        row_i[i] = inten[s, j]
                    if has_alpha:
                        row_a[i] = alpha[s, j]
                else:  # linear interpolation, exact at f = 0
                    row[i] = r0 + f * (r1 - r0)
                    if has_inten:
                        row_i[i] = inten[s, i0] + f * (inten[s, i1] - inten[s, i0])
                    if has_alpha:
                        row_a[i] = alpha[s, i0] + f * (alpha[s, i1] - alpha[s, i0])
        else:
            for i in range(n_beams):
                row[i] = ranges[s, i]
                if has_inten:
                    row_i[i] = inten[s, i]
                if has_alpha:
                    row_a[i] = alpha[s, i]
        # 2. mixed pixel with the right neighbour: d_i + w (d_i+1 - d_i), w = u / p_mix
        if mix >= 0:
            base = 3 + mix * n_beams
            for i in range(n_beams - 1):
                d = row[i]
                jump = row[i + 1] - d
                um = u[s, base + i]
                hit = math.isfinite(jump) and abs(jump) > edge and um < p_mix
                mixed[i] = d + (um / p_mix) * jump if hit else d
            for i in range(n_beams - 1):
                row[i] = mixed[i]
        # 3. bias and noise on finite ranges: z = d + b + mu + (sigma0 + k d) n
        if add_offset:
            offset = bias[s] + mean
            if noi >= 0:
                for i in range(n_beams):
                    d = row[i]
                    v = d + offset + (sigma0 + sigma_k * abs(d)) * n_noise[i]
                    row[i] = v if math.isfinite(d) else d
            else:
                for i in range(n_beams):
                    d = row[i]
                    row[i] = d + offset if math.isfinite(d) else d
        # 4. dropout (incidence / intensity dependent) and spurious returns
        if event >= 0:
            base = 3 + event * n_beams
            for i in range(n_beams):
                keep = keep_base
                if has_alpha and p_inc > 0.0:
                    ramp = (abs(row_a[i]) - inc_start) * inv_span
                    keep *= 1.0 - p_inc * min(max(ramp, 0.0), 1.0)
                if has_inten and p_int > 0.0:
                    ramp = 1.0 - row_i[i] * inv_limit
                    keep *= 1.0 - p_int * min(max(ramp, 0.0), 1.0)
                if p_rng > 0.0 and not math.isnan(row[i]):
                    ramp = (row[i] - rng_start) * inv_rng_span
                    keep *= 1.0 - p_rng * min(max(ramp, 0.0), 1.0)
                pd = 1.0 - keep
                ue = u[s, base + i]
                drop[i] = ue < pd
                if p_spur > 0.0:
                    width = p_spur * keep
                    if pd <= ue < pd + width:
                        row[i] = r_min + (r_max - r_min) * ((ue - pd) / width)
        # 5. range quantization
        if quantum > 0.0:
            for i in range(n_beams):
                row[i] = quantum * np.rint(row[i] * inv_quantum)
        # 6. limits (REP 117 or clamp) and output
        for i in range(n_beams):
            d = row[i]
            dropped = event >= 0 and drop[i]
            if clamp:
                if dropped:
                    d = r_max
                elif d < r_min:
                    d = r_min
                elif d > r_max:
                    d = r_max
            elif zero:
                if dropped or d < r_min or d > r_max:
                    d = 0.0
            elif dropped:
                d = math.inf
            elif d < r_min:
                d = -math.inf
            elif d > r_max:
                d = math.inf
            out[s, i] = d
            if has_inten:
                out_i[s, i] = 0.0 if dropped else row_i[i]


@njit(cache=True)
def bias_series(u: F64, stamps: F64, first_index: int, walk0: float, markov0: float,
                last_stamp: float, walk_stddev: float, markov_stddev: float,
                correlation_time: float) -> tuple[F64, F64]:  # pragma: no cover - jitted
    """Drifting bias parts of each scan: w_k = w_k-1 + sigma_b n1 (random walk) and
    g_k = phi g_k-1 + sqrt(1 - phi^2) sigma_g n2, phi = exp(-dt / tau) (Gauss-Markov, the exact
    discretisation of an Ornstein-Uhlenbeck process); n1, n2 = Phi^-1(u[:, 1]), Phi^-1(u[:, 2]).
    The scan with global index 0 keeps (w, g) = (walk0, markov0); dt < 0 counts as 0."""
    n = stamps.shape[0]
    walk = np.empty(n)
    markov = np.empty(n)
    w, g, prev = walk0, markov0, last_stamp
    for k in range(n):
        if first_index + k > 0 and (walk_stddev > 0.0 or markov_stddev > 0.0):
            w += walk_stddev * normal_from_uniform(u[k, 1])
            if markov_stddev > 0.0:
                dt = max(stamps[k] - prev, 0.0) if math.isfinite(prev) else 0.0
                phi = math.exp(-dt / correlation_time)
                g = phi * g + math.sqrt(max(1.0 - phi * phi, 0.0)) * markov_stddev * \
                    normal_from_uniform(u[k, 2])
        walk[k] = w
        markov[k] = g
        prev = stamps[k]
    return walk, markov
