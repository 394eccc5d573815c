"""Lidar error model: a pure, vectorized transform of ideal 2D scans into realistic ones.

``apply_lidar_errors`` takes one scan ``(B,)`` or a batch ``(S, B)`` of ideal ranges, the scan's
angle grid, the timestamp(s), a :class:`LidarErrorConfig`, an explicit :class:`LidarErrorState`
(bias, last stamp, scan counter) and a ``numpy.random.Generator``; it returns the corrupted scan(s)
and the new state. Effects, in the order they are applied (equations in ``docs/lidar_errors.md``):

1. angular: beam i reports the ideal scan sampled at
   phi_i = Q_a(theta_i) + yaw_offset + N(0, sigma_az^2), with Q_a(x) = a * round(x / a)
   (linear interpolation between neighbouring beams, nearest beam across a depth edge);
2. mixed pixels: a beam next to a depth edge (|d_i+1 - d_i| > threshold) returns, with probability
   p_mix, d_i + w (d_i+1 - d_i), w ~ U(0, 1);
3. range noise and bias: z = d + b_k + mu + sigma(d) n, n ~ N(0, 1),
   sigma(d) = sigma0 + k d (datasheets state accuracy as a constant plus a percentage);
   neighbouring beams' n may be correlated: n_i = rho n_i-1 + sqrt(1 - rho^2) e_i (AR(1));
   b_k = b0 + w_k + g_k with the random walk w_k+1 = w_k + N(0, sigma_b^2) and the first-order
   Gauss-Markov process g_k+1 = phi g_k + sqrt(1 - phi^2) sigma_g N(0, 1), phi = exp(-dt / tau)
   (the exact discretisation of an Ornstein-Uhlenbeck process, as gz-sensors' dynamic bias);
4. ray events: a ray is dropped with
   p_i = 1 - (1 - p_drop)(1 - p_inc(alpha_i))(1 - p_int(I_i))(1 - p_rng(z_i)),
   p_inc = p_g clip((alpha - alpha0) / (pi/2 - alpha0), 0, 1), p_int = p_0 max(0, 1 - I / I_lim)
   (CARLA-style intensity dropoff), p_rng = p_r clip((z - d0) / (range_max - d0), 0, 1) (weak far
   returns); a ray that is not dropped is, with probability p_spur, an outlier uniform in
   [range_min, range_max];
5. range quantization: z = q round(z / q);
6. limits (REP 117): z < range_min -> -inf, z > range_max -> +inf, dropped -> +inf
   (``out_of_range: clamp`` clamps to [range_min, range_max] instead; ``zero`` writes 0 for
   every invalid reading, as many drivers do);
7. latency: stamp' = stamp + latency; whole-scan loss with probability p_loss (``lost`` flag).

Randomness: each scan consumes one row of ``rng.random`` of a length fixed by the config
(normals are Phi^-1(u), Acklam's inverse normal CDF), so a batch is bit-identical to the same scans
applied one by one with the same generator. A config without random effects draws nothing.
Input NaNs (invalid readings) stay NaN; the model itself never creates a NaN. The angle grid
must be finite with a non-zero increment, and a scan may have at most
:func:`~rc_sim_sensors.scan_geometry.max_scan_beams` beams (checked before anything is
allocated; memory per call is bounded by chunking whatever the beam count).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_kernel import bias_series, corrupt_scans
from rc_sim_sensors.scan_geometry import BEAM_LIMIT_VARIABLE, max_scan_beams

__all__ = ['LidarErrorConfig', 'LidarErrorModel', 'LidarErrorState', 'LidarScanOut',
           'apply_lidar_errors', 'compile_kernels', 'uniforms_per_scan']

FloatArray = NDArray[np.floating[Any]]
_CHUNK = 32  # scans per kernel call (32 x 4 x 1081 uniforms ~ 1 MB)
_CHUNK_UNIFORMS = 1 << 18  # at most this many uniforms per kernel call (2 MB), any beam count
_MODES = {'rep117': 0, 'clamp': 1, 'zero': 2}


@dataclass(frozen=True)
class LidarErrorState:
    """Explicit state carried from scan to scan.

    ``bias_walk`` (w_k) and ``bias_markov`` (g_k) are the bias of the last scan minus
    ``bias_initial``; ``last_stamp`` is that scan's input stamp [s] (NaN before the first scan).
    """

    bias_walk: float = 0.0
    bias_markov: float = 0.0
    last_stamp: float = math.nan
    scan_count: int = 0

    def bias(self, config: LidarErrorConfig) -> float:
        """Range bias b_k = b0 + w_k + g_k of the last scan [m]."""
        return config.bias_initial + self.bias_walk + self.bias_markov

    def reset_bias(self) -> LidarErrorState:
        """Copy with the drifting parts of the bias back to zero (bias = bias_initial)."""
        return replace(self, bias_walk=0.0, bias_markov=0.0)


@dataclass(frozen=True)
class LidarScanOut:
    """Corrupted scan(s): arrays are ``(B,)`` for one scan and ``(S, B)`` for a batch.

    ``stamp`` [s] includes the latency; ``lost`` marks scans that must not be published;
    ``bias`` is the range bias b_k applied to each scan [m].
    """

    ranges: FloatArray
    intensities: FloatArray | None
    stamp: float | FloatArray
    lost: bool | NDArray[np.bool_]
    bias: float | FloatArray


def _blocks(config: LidarErrorConfig) -> tuple[int, int, int, int, int]:
    """Row offsets (event, mix, noise, jitter) of the per-beam uniform blocks (-1 = not drawn)
    and the number of blocks."""
    offsets = []
    k = 0
    for enabled in (config.has_ray_events, config.mixed_pixel_probability > 0,
                    config.has_noise, config.azimuth_jitter_stddev > 0):
        offsets.append(k if enabled else -1)
        k += int(enabled)
    return offsets[0], offsets[1], offsets[2], offsets[3], k


def uniforms_per_scan(config: LidarErrorConfig, beams: int) -> int:
    """Number of U[0, 1) draws one scan consumes: 3 per scan (loss, two bias normals) plus one per
    beam and enabled block; 0 when the config has no random effect."""
    per_beam = _blocks(config)[4]
    random_scan = (config.scan_loss_probability > 0 or config.bias_walk_stddev > 0
                   or config.bias_markov_stddev > 0)
    if per_beam == 0 and not random_scan:
        return 0
    return 3 + per_beam * beams


def apply_lidar_errors(
    ranges: ArrayLike, angles: ArrayLike, stamp: float | ArrayLike, config: LidarErrorConfig,
    state: LidarErrorState, rng: np.random.Generator, intensities: ArrayLike | None = None,
    incidence: ArrayLike | None = None,
) -> tuple[LidarScanOut, LidarErrorState]:
    """Apply every configured effect to one scan ``(B,)`` or consecutive scans ``(S, B)``.

    Args:
        ranges: ideal ranges [m] (+inf = no return; NaN = invalid, kept as is).
        angles: the beam angles theta_i [rad], a uniform grid of length B (LaserScan convention).
        stamp: scan time [s], a float or ``(S,)`` for a batch.
        config: the error parameters.
        state: the state after the previous scan (``LidarErrorState()`` to start).
        rng: the generator; every random number comes from it.
        intensities: optional intensities, same shape as ``ranges`` (output keeps their dtype).
        incidence: optional incidence angles alpha [rad] (0 = normal), same shape as ``ranges``.

    Returns:
        The corrupted scan(s) (ranges keep the input float dtype) and the new state.
    """
    r_in = np.asarray(ranges)
    single = r_in.ndim == 1
    if r_in.ndim not in (1, 2):
        raise ValueError(f'ranges must have shape (B,) or (S, B), got {r_in.shape}')
    r = _float_2d(r_in)
    n_scans, n_beams = r.shape
    limit = max_scan_beams()
    if n_beams > limit:
        raise ConfigError(f'{n_beams} beams per scan exceed the limit of {limit} (raise it with '
                          f'the environment variable {BEAM_LIMIT_VARIABLE})')
    theta = np.asarray(angles, dtype=np.float64)
    if theta.shape != (n_beams,):
        raise ValueError(f'angles must have shape ({n_beams},), got {theta.shape}')
    stamps = np.array(stamp, dtype=np.float64, ndmin=1)
    if stamps.shape != (n_scans,):
        raise ValueError(f'stamp must be a float or have shape ({n_scans},), got {stamps.shape}')
    inten_in = _optional(intensities, r_in.shape, 'intensities')
    alpha = _optional(incidence, r_in.shape, 'incidence')
    if not math.isfinite(float(theta.sum())):  # one pass; a NaN or inf anywhere shows
        raise ValueError('angles must be finite')
    if n_beams > 1 and theta[-1] == theta[0]:
        raise ValueError('angles must have a non-zero increment')
    if alpha is not None:
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    c = config

    n_u = uniforms_per_scan(c, n_beams)
    event, mix, noise, jitter, _ = _blocks(c)
    increment = (theta[-1] - theta[0]) / (n_beams - 1) if n_beams > 1 else 1.0
    phi_base = theta
    if c.angle_resolution > 0:
        phi_base = c.angle_resolution * np.round(theta / c.angle_resolution)
    phi_base = phi_base + c.mount_yaw_offset
    params = np.array([
        c.azimuth_jitter_stddev, c.depth_edge_threshold, c.noise_mean, c.noise_stddev,
        c.noise_stddev_per_meter, c.dropout_probability, c.incidence_dropout_start,
        c.incidence_dropout_probability, c.intensity_dropout_limit,
        c.intensity_dropout_probability, c.spurious_probability, c.range_min, c.range_max,
        c.range_resolution, c.mixed_pixel_probability, c.range_dropout_probability,
        c.range_dropout_start, c.noise_beam_correlation])
    # the offset stage also runs for a bias that drifted earlier and now holds (its stddevs set
    # to 0 live): the state's bias is still there
    add_offset = (c.has_noise or c.has_bias or c.noise_mean != 0 or state.bias_walk != 0
                  or state.bias_markov != 0)
    flags = np.array([c.has_angular_effects, _MODES[c.out_of_range], add_offset],
                     dtype=np.int64)
    blocks = np.array([event, mix, noise, jitter], dtype=np.int64)
    dummy = np.zeros((1, 1))
    ranges_out = np.empty_like(r)
    inten_kernel = dummy if inten_in is None else np.empty_like(inten_in)
    bias = np.empty(n_scans)
    lost = np.zeros(n_scans, dtype=bool)
    walk0, markov0, last_stamp = state.bias_walk, state.bias_markov, state.last_stamp
    # Chunks of scans keep the uniforms cache-resident; the stream is drawn in the same order,
    # so the result does not depend on the chunk size.
    chunk = max(1, min(_CHUNK, _CHUNK_UNIFORMS // max(n_u, 1)))
    for k0 in range(0, n_scans, chunk):
        k1 = min(k0 + chunk, n_scans)
        u = rng.random((k1 - k0, n_u)) if n_u else np.zeros((k1 - k0, 3))
        # per scan: bias b_k = b0 + w_k + g_k and scan loss
        walk, markov = bias_series(u, stamps[k0:k1], state.scan_count + k0, walk0, markov0,
                                   last_stamp, c.bias_walk_stddev, c.bias_markov_stddev,
                                   c.bias_correlation_time)
        walk0, markov0, last_stamp = float(walk[-1]), float(markov[-1]), float(stamps[k1 - 1])
        bias[k0:k1] = c.bias_initial + walk + markov
        if n_u:
            lost[k0:k1] = u[:, 0] < c.scan_loss_probability
        # per beam: stages 1-6 in the kernel
        corrupt_scans(
            r[k0:k1], phi_base, float(theta[0]) if n_beams else 0.0, float(increment), u, blocks,
            bias[k0:k1], dummy if inten_in is None else inten_in[k0:k1], inten_in is not None,
            dummy if alpha is None else alpha[k0:k1], alpha is not None, params, flags,
            ranges_out[k0:k1], inten_kernel if inten_in is None else inten_kernel[k0:k1])
    new_state = LidarErrorState(bias_walk=walk0, bias_markov=markov0, last_stamp=last_stamp,
                                scan_count=state.scan_count + n_scans)

    inten_out = None if inten_in is None else inten_kernel
    stamps_out = stamps + c.latency
    if single:
        out = LidarScanOut(ranges_out[0], None if inten_out is None else inten_out[0],
                           float(stamps_out[0]), bool(lost[0]), float(bias[0]))
    else:
        out = LidarScanOut(ranges_out, inten_out, stamps_out, lost, bias)
    return out, new_state


def compile_kernels(dtypes: tuple[type[np.floating[Any]], ...] = (np.float32,),
                    beams: int = 1081) -> int:
    """Compile the kernels now (or load them from numba's on-disk cache) for scans of each of
    ``dtypes``, with and without intensities: the variants a caller such as the ROS node uses,
    so that its first scan does not pay the compile (seconds in a fresh checkout or an empty
    ``NUMBA_CACHE_DIR``). Runs a throwaway identity model on one dummy scan of ``beams`` beams
    (the beam count does not change the compiled code). Returns how many kernel variants were
    compiled (0: all loaded from the cache or compiled before in this process)."""
    before = _compiled_count()
    angles = np.linspace(-1.0, 1.0, beams)
    for dtype in dtypes:
        ranges = np.ones(beams, dtype=dtype)
        for intensities in (None, ranges):
            apply_lidar_errors(ranges, angles, 0.0, LidarErrorConfig(), LidarErrorState(),
                               np.random.default_rng(0), intensities)
    return _compiled_count() - before


def _compiled_count() -> int:
    """Kernel variants compiled in this process (numba's cache misses; 0 without the stats)."""
    total = 0
    for kernel in (corrupt_scans, bias_series):
        misses = getattr(getattr(kernel, 'stats', None), 'cache_misses', None)
        total += sum(misses.values()) if misses is not None else 0
    return total


# --------------------------------------------------------------------------- stages
def _float_2d(values: ArrayLike) -> FloatArray:
    """C-contiguous (S, B) view of float32/float64 data (other dtypes become float64)."""
    arr = np.asarray(values)
    dtype = arr.dtype if arr.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    return np.ascontiguousarray(arr.reshape(1, -1) if arr.ndim == 1 else arr, dtype=dtype)


def _optional(values: ArrayLike | None, shape: tuple[int, ...], name: str) -> FloatArray | None:
    if values is None:
        return None
    arr = np.asarray(values)
    if arr.shape != shape:
        raise ValueError(f'{name} must have the shape of ranges {shape}, got {arr.shape}')
    return _float_2d(arr)


class LidarErrorModel:
    """Stateful wrapper used by the engine and the node: holds the config, state and generator."""

    def __init__(self, config: LidarErrorConfig,
                 seed_or_rng: int | np.random.Generator | None = None) -> None:
        """``seed_or_rng``: a Generator, a seed, or None for ``config.seed``."""
        self.config = config
        if isinstance(seed_or_rng, np.random.Generator):
            self.rng = seed_or_rng
        else:
            self.rng = np.random.default_rng(config.seed if seed_or_rng is None else seed_or_rng)
        self.state = LidarErrorState()

    def apply(self, ranges: ArrayLike, angles: ArrayLike, stamp: float | ArrayLike,
              intensities: ArrayLike | None = None,
              incidence: ArrayLike | None = None) -> LidarScanOut:
        """Corrupt one scan (or a batch of consecutive scans) and advance the state."""
        out, self.state = apply_lidar_errors(ranges, angles, stamp, self.config, self.state,
                                             self.rng, intensities, incidence)
        return out

    def reset_bias(self) -> None:
        """Bring the drifting bias back to ``bias_initial``."""
        self.state = self.state.reset_bias()

    def set_config(self, config: LidarErrorConfig) -> None:
        """Swap the parameters (live update); the state and generator carry on."""
        self.config = config

    @property
    def bias(self) -> float:
        """Range bias of the last scan [m]."""
        return self.state.bias(self.config)
