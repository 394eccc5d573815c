"""Property tests of the lidar error model over random configs (hypothesis, derandomized)."""

from __future__ import annotations

import numpy as np
import pytest

from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel, LidarErrorState, apply_lidar_errors

hypothesis = pytest.importorskip('hypothesis')
st = hypothesis.strategies


@hypothesis.settings(max_examples=30, deadline=None, derandomize=True)
@hypothesis.given(
    noise=st.floats(0, 0.5), k=st.floats(0, 0.05), walk=st.floats(0, 0.05),
    drop=st.floats(0, 1), spur=st.floats(0, 1), mix=st.floats(0, 1), jitter=st.floats(0, 0.05),
    res=st.floats(0, 0.2), clamp=st.booleans(), r_min=st.floats(0, 1), span=st.floats(0.5, 20),
    seed=st.integers(0, 2**32), split=st.integers(1, 6))
def test_property_limits_no_new_nan_and_batch_split_invariance(noise, k, walk, drop, spur, mix,
                                                                jitter, res, clamp, r_min, span,
                                                                seed, split):
    config = LidarErrorConfig.from_mapping({
        'noise_stddev': noise, 'noise_stddev_per_meter': k, 'bias_walk_stddev': walk,
        'dropout_probability': drop, 'spurious_probability': spur, 'mixed_pixel_probability': mix,
        'azimuth_jitter_stddev': jitter, 'angle_resolution': res, 'range_min': r_min,
        'range_max': r_min + span, 'out_of_range': 'clamp' if clamp else 'rep117'}, 'hypothesis')
    rng = np.random.default_rng(seed)
    ranges = rng.uniform(0.0, 25.0, (7, 50))
    ranges[rng.random((7, 50)) < 0.1] = np.inf
    angles = np.linspace(-1.0, 1.0, 50)
    whole, _ = apply_lidar_errors(ranges, angles, np.arange(7) / 40.0, config, LidarErrorState(),
                                  np.random.default_rng(seed))
    z = whole.ranges
    assert not np.isnan(z).any()
    finite = np.isfinite(z)
    assert np.all((z[finite] >= r_min) & (z[finite] <= r_min + span))
    if clamp:
        assert finite.all()
    model = LidarErrorModel(config, seed)
    parts = [model.apply(ranges[a:a + split], angles, np.arange(a, min(a + split, 7)) / 40.0).ranges
             for a in range(0, 7, split)]
    np.testing.assert_array_equal(np.vstack(parts), z)
