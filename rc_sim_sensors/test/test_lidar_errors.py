"""Statistical and exact tests of the lidar error model (fixed seeds, tolerances from sample sizes).

Each statistical check uses a z = 5 band around the analytic value: the standard error of a sample
mean is sigma / sqrt(N), of a sample variance sigma^2 sqrt(2 / (N - 1)) (normal data), of a
proportion sqrt(p (1 - p) / N). With fixed seeds the tests are deterministic; the band only says
the seed was not cherry-picked.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import (
    LidarErrorModel,
    LidarErrorState,
    apply_lidar_errors,
    uniforms_per_scan,
)
from rc_sim_sensors.lidar_kernel import normal_from_uniform
from rc_sim_sensors.scene import room_scan

Z = 5.0
BEAMS = 1081
ANGLES = np.linspace(-0.75 * math.pi, 0.75 * math.pi, BEAMS)

EVERY_EFFECT = {
    'noise_mean': 0.002, 'noise_stddev': 0.02, 'noise_stddev_per_meter': 0.005, 'bias_initial': 0.01,
    'bias_walk_stddev': 0.001, 'bias_markov_stddev': 0.01, 'bias_correlation_time': 2.0,
    'dropout_probability': 0.05, 'scan_loss_probability': 0.1, 'range_min': 0.06, 'range_max': 10.0,
    'range_resolution': 0.001, 'angle_resolution': math.radians(0.5), 'azimuth_jitter_stddev': 0.001,
    'mount_yaw_offset': 0.01, 'latency': 0.02, 'spurious_probability': 0.01, 'mixed_pixel_probability': 0.5,
    'incidence_dropout_probability': 0.5, 'intensity_dropout_probability': 0.3,
}


def cfg(**kw: object) -> LidarErrorConfig:
    return LidarErrorConfig.from_mapping(kw, 'test')


def scene_batch(scans: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    ranges, incidence = room_scan(ANGLES)
    r = np.tile(ranges, (scans, 1))
    a = np.tile(incidence, (scans, 1))
    intensity = 2.0 * np.cos(a) / (1.0 + 0.2 * r)
    return r, a, intensity, np.arange(scans) / 40.0


def run(config: LidarErrorConfig, ranges: np.ndarray, seed: int = 0, stamps: object = None,
        angles: np.ndarray | None = None, **kw: object):
    scans = ranges.shape[0] if ranges.ndim == 2 else 1
    if stamps is None:
        stamps = np.arange(scans) / 40.0 if ranges.ndim == 2 else 0.0
    out, state = apply_lidar_errors(ranges, ANGLES if angles is None else angles, stamps, config,
                                    LidarErrorState(), np.random.default_rng(seed), **kw)
    return out, state


# --------------------------------------------------------------------------- identity, determinism
def test_zero_effect_config_is_identity_and_draws_nothing():
    rng = np.random.default_rng(3)
    ranges = rng.uniform(0.0, 30.0, (20, BEAMS))
    ranges[0, :5] = [np.inf, np.nan, 0.0, 1e-9, 1e6]
    intensities = rng.uniform(0, 100, (20, BEAMS)).astype(np.float32)
    gen = np.random.default_rng(7)
    before = gen.bit_generator.state
    out, state = apply_lidar_errors(ranges, ANGLES, np.arange(20.0), LidarErrorConfig(),
                                    LidarErrorState(), gen, intensities)
    assert gen.bit_generator.state == before
    np.testing.assert_array_equal(out.ranges, ranges)
    assert out.ranges.dtype == ranges.dtype
    np.testing.assert_array_equal(out.intensities, intensities)
    assert out.intensities.dtype == np.float32
    np.testing.assert_array_equal(out.stamp, np.arange(20.0))
    assert not out.lost.any()
    assert state.scan_count == 20
    assert uniforms_per_scan(LidarErrorConfig(), BEAMS) == 0


def test_same_seed_same_output_and_different_seed_differs():
    r, a, inten, stamps = scene_batch(30)
    config = cfg(**EVERY_EFFECT)
    o1, s1 = run(config, r, 11, stamps, intensities=inten, incidence=a)
    o2, s2 = run(config, r, 11, stamps, intensities=inten, incidence=a)
    o3, _ = run(config, r, 12, stamps, intensities=inten, incidence=a)
    np.testing.assert_array_equal(o1.ranges, o2.ranges)
    np.testing.assert_array_equal(o1.intensities, o2.intensities)
    assert s1 == s2
    assert not np.array_equal(o1.ranges, o3.ranges)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_batch_is_bit_identical_to_scan_by_scan(dtype):
    r, a, inten, stamps = scene_batch(40)
    r, inten = r.astype(dtype), inten.astype(dtype)
    config = cfg(**EVERY_EFFECT)
    batch, batch_state = run(config, r, 5, stamps, intensities=inten, incidence=a)
    model = LidarErrorModel(config, np.random.default_rng(5))
    singles = [model.apply(r[k], ANGLES, stamps[k], inten[k], a[k]) for k in range(40)]
    np.testing.assert_array_equal(batch.ranges, np.stack([s.ranges for s in singles]))
    np.testing.assert_array_equal(batch.intensities, np.stack([s.intensities for s in singles]))
    np.testing.assert_array_equal(batch.lost, [s.lost for s in singles])
    np.testing.assert_array_equal(batch.bias, [s.bias for s in singles])
    np.testing.assert_array_equal(batch.stamp, [s.stamp for s in singles])
    assert batch.ranges.dtype == dtype
    assert model.state == batch_state
    # split batches continue the same stream too
    model2 = LidarErrorModel(config, 5)
    first = model2.apply(r[:15], ANGLES, stamps[:15], inten[:15], a[:15])
    second = model2.apply(r[15:], ANGLES, stamps[15:], inten[15:], a[15:])
    np.testing.assert_array_equal(np.vstack([first.ranges, second.ranges]), batch.ranges)


def test_model_seed_defaults_to_config_seed():
    r, _, _, _ = scene_batch(3)
    config = cfg(noise_stddev=0.01, seed=42)
    a = LidarErrorModel(config).apply(r, ANGLES, np.arange(3.0))
    b = LidarErrorModel(config, 42).apply(r, ANGLES, np.arange(3.0))
    np.testing.assert_array_equal(a.ranges, b.ranges)


def test_every_effect_creates_no_nan_and_keeps_input_nan():
    r, a, inten, stamps = scene_batch(50)
    r[:, 100] = np.nan
    out, _ = run(cfg(**EVERY_EFFECT), r, 1, stamps, intensities=inten, incidence=a)
    nan = np.isnan(out.ranges)
    # NaN beams only come from the NaN input beam, seen by beams up to 4 increments away
    # (0.5 deg encoder quantization + 0.01 rad mount offset).
    assert nan.any()
    assert set(np.nonzero(nan)[1]) <= set(range(96, 105))
    assert not np.isnan(out.intensities).any()


# --------------------------------------------------------------------------- normal deviates
def test_inverse_normal_cdf_matches_scipy_ndtri():
    special = pytest.importorskip('scipy.special')
    u = np.concatenate([np.linspace(0.0, 1.0 - 2**-53, 20001),
                        [1e-300, 1e-12, 0.02425, 0.97575, 1 - 1e-12]])
    ours = np.array([normal_from_uniform(float(x)) for x in u])
    half_ulp = 2.0**-54
    ref = np.where(u < 0.5, special.ndtri(u + half_ulp), -special.ndtri((1.0 - u) - half_ulp))
    assert np.isfinite(ours).all()
    np.testing.assert_allclose(ours, ref, rtol=1.2e-9, atol=1e-12)
    assert ours[0] < -8.0 and ours[20000] > 8.0  # tails reach ~8.3 sigma, symmetric


# --------------------------------------------------------------------------- noise and bias
def test_gaussian_noise_mean_and_stddev_within_confidence_interval():
    mu, sigma = 0.003, 0.02
    r = np.full((200, BEAMS), 4.0)
    out, _ = run(cfg(noise_mean=mu, noise_stddev=sigma), r, 2)
    err = (out.ranges - r).ravel()
    n = err.size
    assert abs(err.mean() - mu) < Z * sigma / math.sqrt(n)
    assert abs(err.var(ddof=1) - sigma**2) < Z * sigma**2 * math.sqrt(2.0 / (n - 1))
    # normal shape: P(|n| < 1 sigma) = 0.682689
    p1 = 0.6826894921370859
    frac = np.mean(np.abs(err - mu) < sigma)
    assert abs(frac - p1) < Z * math.sqrt(p1 * (1 - p1) / n)


def test_range_proportional_noise_sigma0_plus_k_d():
    sigma0, k = 0.01, 0.01
    for d in (1.0, 8.0):
        r = np.full((100, BEAMS), d)
        out, _ = run(cfg(noise_stddev=sigma0, noise_stddev_per_meter=k), r, 3)
        err = (out.ranges - r).ravel()
        sigma = sigma0 + k * d
        assert abs(err.std(ddof=1) - sigma) < Z * sigma * math.sqrt(0.5 / (err.size - 1))


def test_random_walk_variance_grows_linearly_with_scan_count():
    sigma_b, scans, runs = 0.002, 60, 1500
    config = cfg(bias_initial=0.05, bias_walk_stddev=sigma_b)
    biases = np.empty((runs, scans))
    for m in range(runs):
        out, _ = run(config, np.full((scans, 1), 3.0), seed=1000 + m,
                     angles=np.zeros(1))
        biases[m] = out.bias
        np.testing.assert_allclose(out.ranges[:, 0], 3.0 + out.bias, rtol=0, atol=1e-15)
    assert np.all(biases[:, 0] == 0.05)
    k = np.arange(scans)
    var = (biases - 0.05).var(axis=0, ddof=1)
    expected = k * sigma_b**2
    tol = Z * expected * math.sqrt(2.0 / (runs - 1))
    assert np.all(np.abs(var[1:] - expected[1:]) < tol[1:])
    slope, intercept = np.polyfit(k, var, 1)
    assert abs(slope - sigma_b**2) < Z * sigma_b**2 * math.sqrt(2.0 / (runs - 1))
    assert abs(intercept) < Z * scans * sigma_b**2 * math.sqrt(2.0 / (runs - 1))


def test_gauss_markov_bias_variance_follows_analytic_transient():
    sigma_g, tau, dt, scans, runs = 0.01, 0.25, 0.025, 80, 1500
    config = cfg(bias_markov_stddev=sigma_g, bias_correlation_time=tau)
    stamps = np.arange(scans) * dt
    biases = np.empty((runs, scans))
    for m in range(runs):
        out, _ = run(config, np.full((scans, 1), 3.0), seed=5000 + m, stamps=stamps,
                     angles=np.zeros(1))
        biases[m] = out.bias
    phi = math.exp(-dt / tau)
    k = np.arange(scans)
    expected = sigma_g**2 * (1.0 - phi ** (2 * k))  # Var g_k with g_0 = 0
    var = biases.var(axis=0, ddof=1)
    tol = Z * expected * math.sqrt(2.0 / (runs - 1))
    assert np.all(np.abs(var[1:] - expected[1:]) < tol[1:])
    # lag-one autocorrelation in the stationary part equals phi
    late = biases[:, 60:]
    rho = np.mean(late[:, 1:] * late[:, :-1]) / np.mean(late**2)
    n_eff = late.shape[0]
    assert abs(rho - phi) < Z * (1 - phi**2) / math.sqrt(n_eff)


def test_reset_bias_returns_to_initial_value():
    model = LidarErrorModel(cfg(bias_initial=0.02, bias_walk_stddev=0.01), 0)
    model.apply(np.full((50, 3), 2.0), np.array([-0.1, 0.0, 0.1]), np.arange(50.0))
    assert model.bias != 0.02
    model.reset_bias()
    assert model.bias == 0.02


def test_a_drifted_bias_stays_applied_when_the_drift_is_switched_off():
    """set_config keeps the state: after the walk stops (sigma_b = 0, b0 = 0) the scans still
    read d + b_k, the bias the model reports."""
    config = cfg(bias_walk_stddev=0.05)
    model = LidarErrorModel(config, 1)
    angles = np.array([0.0, 0.1])
    model.apply(np.full((10, 2), 2.0), angles, np.arange(10) * 0.1)
    held = model.bias
    assert held != 0.0
    model.set_config(config.with_values(bias_walk_stddev=0.0))
    out = model.apply(np.full(2, 2.0), angles, 1.0)
    assert out.bias == held
    np.testing.assert_array_equal(out.ranges, 2.0 + held)
    model.reset_bias()
    np.testing.assert_array_equal(model.apply(np.full(2, 2.0), angles, 1.1).ranges, 2.0)


def test_compile_kernels_compiles_the_node_variants_once():
    from rc_sim_sensors.lidar_errors import compile_kernels

    first = compile_kernels()
    assert first >= 0
    assert compile_kernels() == 0  # loaded or compiled already in this process


# --------------------------------------------------------------------------- dropout and loss
def test_dropout_fraction_within_binomial_interval_and_rep117_inf():
    p = 0.1
    r = np.full((100, BEAMS), 2.0)
    out, _ = run(cfg(dropout_probability=p), r, 4)
    dropped = np.isposinf(out.ranges)
    n = dropped.size
    assert abs(dropped.mean() - p) < Z * math.sqrt(p * (1 - p) / n)
    np.testing.assert_array_equal(out.ranges[~dropped], 2.0)


def test_scan_loss_fraction():
    # 1e5 scans: the z = 5 band is +-0.0063, narrow enough to catch a 10 % error in p (0.02)
    p, scans = 0.2, 100_000
    out, _ = run(cfg(scan_loss_probability=p), np.full((scans, 2), 1.0), 5,
                 angles=np.array([0.0, 0.1]))
    assert abs(out.lost.mean() - p) < Z * math.sqrt(p * (1 - p) / scans)


def test_incidence_and_intensity_dependent_dropout():
    p_g, start = 0.6, 1.0
    r = np.full((200, BEAMS), 2.0)
    alpha = np.tile(np.linspace(0.0, math.pi / 2, BEAMS), (200, 1))
    out, _ = run(cfg(incidence_dropout_probability=p_g, incidence_dropout_start=start), r, 6,
                 incidence=alpha)
    drop = np.isposinf(out.ranges)
    assert not drop[alpha < start].any()
    expected = p_g * np.clip((alpha - start) / (math.pi / 2 - start), 0, 1)
    n = drop[alpha >= start].size
    p_mean = expected[alpha >= start].mean()
    assert abs(drop[alpha >= start].mean() - p_mean) < Z * math.sqrt(p_mean / n)
    # intensity: p = p0 (1 - I / I_lim) below the limit, 0 above; dropped rays read intensity 0
    inten = np.tile(np.where(np.arange(BEAMS) % 2 == 0, 0.0, 5.0), (200, 1))
    out, _ = run(cfg(intensity_dropout_probability=0.4, intensity_dropout_limit=2.0), r, 7,
                 intensities=inten)
    drop = np.isposinf(out.ranges)
    assert not drop[inten == 5.0].any()
    n = drop[inten == 0.0].size
    assert abs(drop[inten == 0.0].mean() - 0.4) < Z * math.sqrt(0.24 / n)
    np.testing.assert_array_equal(out.intensities[drop], 0.0)


def test_spurious_returns_are_uniform_between_limits():
    p_s, p_d, r_min, r_max = 0.05, 0.2, 0.5, 10.0
    r = np.full((400, BEAMS), 3.0)
    out, _ = run(cfg(spurious_probability=p_s, dropout_probability=p_d, range_min=r_min,
                     range_max=r_max), r, 8)
    spurious = np.isfinite(out.ranges) & (out.ranges != 3.0)
    p = p_s * (1 - p_d)
    n = r.size
    assert abs(spurious.mean() - p) < Z * math.sqrt(p * (1 - p) / n)
    values = out.ranges[spurious]
    assert values.min() >= r_min and values.max() <= r_max
    width = r_max - r_min
    assert abs(values.mean() - (r_min + r_max) / 2) < Z * width / math.sqrt(12 * values.size)
    for q in (0.25, 0.5, 0.75):  # uniform quantiles
        frac = np.mean(values < r_min + q * width)
        assert abs(frac - q) < Z * math.sqrt(q * (1 - q) / values.size)


# --------------------------------------------------------------------------- limits, quantization
def test_rep117_limits_and_clamp_mode():
    ranges = np.array([0.05, 0.1, 3.0, 5.0, 5.01, np.inf, np.nan, -np.inf])
    angles = np.linspace(-0.1, 0.1, ranges.size)
    out, _ = run(cfg(range_min=0.1, range_max=5.0), ranges, angles=angles)
    np.testing.assert_array_equal(out.ranges,
                                  [-np.inf, 0.1, 3.0, 5.0, np.inf, np.inf, np.nan, -np.inf])
    out, _ = run(cfg(range_min=0.1, range_max=5.0, out_of_range='clamp'), ranges, angles=angles)
    np.testing.assert_array_equal(out.ranges, [0.1, 0.1, 3.0, 5.0, 5.0, 5.0, np.nan, 0.1])
    out, _ = run(cfg(range_max=5.0, out_of_range='clamp', dropout_probability=1.0),
                 ranges[:4], angles=angles[:4])
    np.testing.assert_array_equal(out.ranges, 5.0)


def test_noise_pushing_below_zero_reads_minus_inf():
    out, _ = run(cfg(noise_mean=-1.0), np.array([0.5, 2.0]), angles=np.array([0.0, 0.1]))
    np.testing.assert_array_equal(out.ranges, [-np.inf, 1.0])


def test_range_quantization_steps_are_exact():
    q = 0.01
    rng = np.random.default_rng(9)
    r = rng.uniform(0.1, 9.0, (10, BEAMS))
    out, _ = run(cfg(range_resolution=q), r)
    steps = out.ranges / q
    np.testing.assert_allclose(steps, np.round(steps), rtol=0, atol=1e-9)
    assert np.all(np.abs(out.ranges - r) <= q / 2 + 1e-12)
    assert len(np.unique(np.round(np.diff(np.unique(out.ranges)) / q))) > 0


def test_angular_quantization_reports_range_at_nearest_encoder_angle():
    increment = math.radians(0.25)
    angles = np.arange(-540, 541) * increment
    rng = np.random.default_rng(10)
    r = rng.uniform(1.0, 9.0, angles.size)
    res = math.radians(1.0)
    out, _ = run(cfg(angle_resolution=res), r, angles=angles)
    expected_idx = np.array([np.argmin(np.abs(angles - res * round(t / res))) for t in angles])
    np.testing.assert_array_equal(out.ranges, r[expected_idx])
    assert len(np.unique(out.ranges)) == len(np.unique(expected_idx))


def test_mount_yaw_offset_shifts_the_scan_by_whole_beams():
    increment = math.radians(0.25)
    angles = np.arange(-540, 541) * increment
    r = np.random.default_rng(11).uniform(1.0, 9.0, angles.size)
    out, _ = run(cfg(mount_yaw_offset=3 * increment), r, angles=angles)
    np.testing.assert_array_equal(out.ranges[:-3], r[3:])
    np.testing.assert_array_equal(out.ranges[-3:], r[-1])  # clamped at the last beam


def test_azimuth_jitter_on_a_linear_ramp():
    increment = math.radians(0.25)
    angles = np.arange(-540, 541) * increment
    slope = 0.5  # m/rad, smooth surface: neighbours differ by ~2 mm < edge threshold
    r = np.tile(3.0 + slope * angles, (200, 1))
    sigma_a = 0.2 * increment
    out, _ = run(cfg(azimuth_jitter_stddev=sigma_a), r, 12, angles=angles)
    err = (out.ranges - r)[:, 20:-20].ravel()  # away from the clamped ends
    sigma = slope * sigma_a
    assert abs(err.std(ddof=1) - sigma) < Z * sigma * math.sqrt(0.5 / (err.size - 1))
    assert abs(err.mean()) < Z * sigma / math.sqrt(err.size)


def test_latency_delays_the_stamp():
    out, _ = run(cfg(latency=0.03), np.full((4, 3), 1.0), stamps=np.arange(4.0),
                 angles=np.array([0.0, 0.1, 0.2]))
    np.testing.assert_allclose(out.stamp, np.arange(4.0) + 0.03)


def test_mixed_pixels_lie_between_foreground_and_background():
    p = 0.3
    scans = 2000
    row = np.where(np.arange(BEAMS) % 40 < 20, 2.0, 6.0)  # depth edges every 20 beams
    r = np.tile(row, (scans, 1))
    out, _ = run(cfg(mixed_pixel_probability=p), r, 13)
    edge = np.zeros(BEAMS, dtype=bool)
    edge[:-1] = row[1:] != row[:-1]
    changed = out.ranges != r
    assert not changed[:, ~edge].any()
    mixed = out.ranges[:, edge]
    assert np.all((mixed >= 2.0) & (mixed <= 6.0))
    n = mixed.size
    frac = changed[:, edge].mean()
    assert abs(frac - p) < Z * math.sqrt(p * (1 - p) / n)
    inner = mixed[changed[:, edge]]
    assert abs(inner.mean() - 4.0) < Z * 4.0 / math.sqrt(12 * inner.size)


def test_input_validation_errors():
    with pytest.raises(ValueError, match='angles'):
        run(LidarErrorConfig(), np.ones(5), angles=np.zeros(4))
    with pytest.raises(ValueError, match='stamp'):
        run(LidarErrorConfig(), np.ones((3, 5)), stamps=np.zeros(2), angles=np.zeros(5))
    with pytest.raises(ValueError, match='intensities'):
        run(LidarErrorConfig(), np.ones(5), angles=np.zeros(5), intensities=np.ones(4))


def test_empty_batch_keeps_the_state():
    state = LidarErrorState(bias_walk=0.1, scan_count=5, last_stamp=2.0)
    out, new = apply_lidar_errors(np.zeros((0, 4)), np.linspace(0, 1, 4), np.zeros(0),
                                  cfg(**EVERY_EFFECT), state, np.random.default_rng(0))
    assert out.ranges.shape == (0, 4) and new == state



# --------------------------------------------------------------------------- driver conventions
def test_zero_mode_writes_zero_for_every_invalid_reading():
    r = np.array([[0.01, 0.5, 20.0, np.inf, -np.inf, np.nan, 3.0]])
    angles = np.linspace(0.0, 0.6, 7)
    out, _ = run(cfg(range_min=0.1, range_max=10.0, out_of_range='zero'), r, angles=angles)
    np.testing.assert_array_equal(out.ranges[0], [0.0, 0.5, 0.0, 0.0, 0.0, np.nan, 3.0])
    out, _ = run(cfg(range_min=0.1, range_max=10.0, out_of_range='zero', dropout_probability=1.0),
                 r, angles=angles)
    np.testing.assert_array_equal(out.ranges[0], np.zeros(7))  # a dropped ray is 0, as +inf


def test_range_dropout_ramps_linearly_to_range_max():
    """p(d) = p_r clip((d - d0) / (range_max - d0), 0, 1): binomial bands at four ranges."""
    p_r, d0, r_max = 0.6, 2.0, 10.0
    config = cfg(range_dropout_probability=p_r, range_dropout_start=d0, range_max=r_max)
    for d in (1.0, 4.0, 8.0, 9.999):
        out, _ = run(config, np.full((200, BEAMS), d), 21)
        p = p_r * min(max((d - d0) / (r_max - d0), 0.0), 1.0)
        frac = np.isposinf(out.ranges).mean()
        n = out.ranges.size
        assert abs(frac - p) < Z * math.sqrt(max(p * (1 - p), 1e-12) / n) + 1e-12, (d, frac, p)


def test_range_dropout_needs_finite_range_max_and_start_below_it():
    with pytest.raises(Exception, match='range_dropout_probability: needs a finite range_max'):
        cfg(range_dropout_probability=0.1)
    with pytest.raises(Exception, match='range_dropout_start: must be < range_max'):
        cfg(range_dropout_probability=0.1, range_max=5.0, range_dropout_start=6.0)


# --------------------------------------------------------------------------- bounds
def test_wide_scans_are_chunked_with_the_same_stream(monkeypatch):
    """Memory per call is bounded: a 40,000-beam scan batch goes through in small chunks, and the
    result is bit-identical to scan-by-scan calls (one row of uniforms per scan)."""
    beams = 40_000
    angles = np.linspace(-math.pi, math.pi, beams, endpoint=False)
    ranges = np.tile(room_scan(angles)[0], (5, 1))
    config = cfg(**EVERY_EFFECT)
    batch, _ = apply_lidar_errors(ranges, angles, np.arange(5) / 10, config, LidarErrorState(),
                                  np.random.default_rng(4))
    model = LidarErrorModel(config, 4)
    singles = np.stack([model.apply(ranges[k], angles, k / 10).ranges for k in range(5)])
    np.testing.assert_array_equal(batch.ranges, singles)


def test_beam_limit_is_checked_before_allocating(monkeypatch):
    from rc_sim_description.errors import ConfigError

    monkeypatch.setenv('RC_SIM_MAX_SCAN_BEAMS', '1000')
    with pytest.raises(ConfigError, match='1081 beams per scan exceed the limit of 1000 '
                       r'\(raise it with the environment variable RC_SIM_MAX_SCAN_BEAMS\)'):
        run(cfg(noise_stddev=0.01), np.ones(BEAMS))


@pytest.mark.parametrize('angles', [np.zeros(BEAMS), np.full(BEAMS, np.nan)])
def test_degenerate_angle_grids_are_refused(angles):
    with pytest.raises(ValueError, match='angles must'):
        run(cfg(angle_resolution=0.01), np.ones(BEAMS), angles=angles)


def test_beam_correlated_noise_is_ar1_along_the_beams():
    """n_i = rho n_i-1 + sqrt(1 - rho^2) e_i: unit variance, lag-k correlation rho^k."""
    rho, sigma = 0.45, 0.01
    r = np.full((300, BEAMS), 4.0)
    out, _ = run(cfg(noise_stddev=sigma, noise_beam_correlation=rho), r, 17)
    err = (out.ranges - r)[:, 1:]  # beam 0 starts the recursion
    n = err.size
    assert abs(err.std() - sigma) < Z * sigma * math.sqrt((1 + rho**2) / (1 - rho**2) / (2 * n))
    for lag in (1, 2, 3):
        c = np.mean(err[:, lag:] * err[:, :-lag]) / err.var()
        # standard error of a lag-k autocorrelation of an AR(1) series (Bartlett's formula)
        se = math.sqrt(((1 + rho**2) * (1 - rho**(2 * lag)) / (1 - rho**2)
                        - 2 * lag * rho**(2 * lag)) / n)
        assert abs(c - rho**lag) < Z * se, (lag, c)
    independent, _ = run(cfg(noise_stddev=sigma), r, 17)
    assert abs(np.corrcoef((independent.ranges - r)[:, 1:].ravel(),
                           (independent.ranges - r)[:, :-1].ravel())[0, 1]) < Z / math.sqrt(n)
