"""Costs against hand-computed values (MSE, RMSE, ITAE, weights, residual form)."""

import numpy as np
import pytest

from rc_sim_calibration.cost import CostConfig, channel_metrics, residuals, scalar_cost
from rc_sim_calibration.errors import CalibrationError


def _errors(p=2, w=3, k=11, value=0.2):
    t = np.linspace(0.0, 1.0, k)
    e = np.full((p, w, k), value)
    e[1] *= 2.0
    mask = np.ones((w, k), dtype=bool)
    return t, {'position': e, 'speed': e.copy(), 'yaw_rate': e.copy()}, \
        {'position': mask, 'speed': mask, 'yaw_rate': mask}


def test_metrics_of_a_constant_error():
    t, errs, masks = _errors()
    m = channel_metrics(errs, masks, t)['speed']
    np.testing.assert_allclose(m['mse'], [0.04, 0.16])
    np.testing.assert_allclose(m['rmse'], [0.2, 0.4])
    # ITAE of |e| = c over [0, 1] sampled at dt = 0.1: c * sum(t) * dt = c * 5.5 * 0.1
    np.testing.assert_allclose(m['itae'], [0.2 * 0.55, 0.4 * 0.55])


def test_masked_samples_are_ignored():
    t, errs, masks = _errors()
    errs['speed'][:, :, 5] = 100.0
    masks = dict(masks, speed=masks['speed'].copy())
    masks['speed'][:, 5] = False
    np.testing.assert_allclose(channel_metrics(errs, masks, t)['speed']['mse'], [0.04, 0.16])


def test_mse_cost_is_the_weighted_sum_and_equals_the_residual_squares():
    t, errs, masks = _errors()
    cfg = CostConfig(weights={'position': 1.0, 'speed': 2.0, 'yaw_rate': 0.5},
                     scales={'position': 0.1, 'speed': 0.2, 'yaw_rate': 0.4})
    j = scalar_cost(errs, masks, t, cfg)
    expected = 1.0 * 0.04 / 0.01 + 2.0 * 0.04 / 0.04 + 0.5 * 0.04 / 0.16
    assert j[0] == pytest.approx(expected)
    r = residuals(errs, masks, cfg)
    np.testing.assert_allclose(np.sum(r ** 2, axis=1), j)


def test_position_components_give_the_same_squares():
    t, errs, masks = _errors()
    ang = np.random.default_rng(0).uniform(0, 2 * np.pi, errs['position'].shape)
    errs['position_xy'] = np.stack([errs['position'] * np.cos(ang),
                                    errs['position'] * np.sin(ang)], axis=-1)
    cfg = CostConfig()
    r = residuals(errs, masks, cfg)
    np.testing.assert_allclose(np.sum(r ** 2, axis=1), scalar_cost(errs, masks, t, cfg))


def test_rmse_and_itae_metrics_and_prior():
    t, errs, masks = _errors()
    cfg = CostConfig(weights={'speed': 1.0}, scales={'speed': 0.2}, metric='rmse')
    np.testing.assert_allclose(scalar_cost(errs, masks, t, cfg), [1.0, 2.0])
    cfg = CostConfig(weights={'speed': 1.0}, scales={'speed': 0.2}, metric='itae')
    # |e| = s everywhere -> 1 up to the trapezoid-vs-rectangle factor sum(t) dt / (H^2/2) = 1.1
    np.testing.assert_allclose(scalar_cost(errs, masks, t, cfg), [1.1, 2.2])
    n = masks['speed'].sum()
    prior = np.array([4.0, 0.0])
    cfg = CostConfig(weights={'speed': 1.0}, scales={'speed': 0.2})
    np.testing.assert_allclose(scalar_cost(errs, masks, t, cfg, prior), [1.0 + 4.0 / n, 4.0])


def test_nan_errors_cost_infinity():
    t, errs, masks = _errors()
    errs['yaw_rate'][1, 0, 0] = np.nan
    j = scalar_cost(errs, masks, t, CostConfig())
    assert np.isfinite(j[0]) and j[1] == np.inf


@pytest.mark.parametrize('kwargs, match', [
    ({'metric': 'mae'}, 'metric'),
    ({'weights': {'heading': 1.0}}, 'unknown channel'),
    ({'scales': {'speed': 0.0}}, 'scales.speed'),
    ({'weights': {'position': 0.0, 'speed': 0.0, 'yaw_rate': 0.0}}, 'at least one'),
])
def test_bad_cost_config(kwargs, match):
    with pytest.raises(CalibrationError, match=match):
        CostConfig(**kwargs)
