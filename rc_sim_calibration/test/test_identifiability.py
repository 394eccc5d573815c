"""Identifiability against the closed-form statistics of linear regression."""

import numpy as np
import pytest

from rc_sim_calibration.identifiability import analyse


def test_straight_line_fit_matches_textbook_formulas():
    rng = np.random.default_rng(5)
    x = np.linspace(0.0, 10.0, 50)
    y = 1.0 + 0.5 * x + rng.normal(0.0, 0.2, x.size)
    jac = np.column_stack([np.ones_like(x), x])        # d(model)/d(a, b)
    coef = np.linalg.lstsq(jac, y, rcond=None)[0]
    r = jac @ coef - y
    out = analyse(jac, r, ['a', 'b'], coef)
    s = np.sqrt(r @ r / (x.size - 2))
    sxx = np.sum((x - x.mean()) ** 2)
    # Draper & Smith: se(b) = s / sqrt(Sxx), se(a) = s sqrt(1/n + xbar^2 / Sxx),
    # corr(a, b) = -xbar / sqrt(mean(x^2))
    assert out.std_errors[1] == pytest.approx(s / np.sqrt(sxx), rel=1e-10)
    assert out.std_errors[0] == pytest.approx(s * np.sqrt(1 / x.size + x.mean() ** 2 / sxx),
                                              rel=1e-10)
    assert out.correlation[0, 1] == pytest.approx(-x.mean() / np.sqrt(np.mean(x ** 2)),
                                                  rel=1e-10)
    assert out.flags == ()


def test_confounded_pair_is_flagged():
    x = np.linspace(0.0, 1.0, 30)
    # y = (a + b) x: only the sum is determined
    jac = np.column_stack([x, x, np.ones_like(x)])
    r = np.random.default_rng(0).normal(0.0, 0.01, x.size)
    out = analyse(jac, r, ['mass', 'cornering_stiffness_front', 'c'], np.ones(3))
    assert out.correlation[0, 1] == pytest.approx(-1.0)
    assert ('mass', 'cornering_stiffness_front', pytest.approx(-1.0)) in out.confounded_pairs
    assert set(out.unidentifiable) == {'mass', 'cornering_stiffness_front'}
    assert np.isinf(out.std_errors[:2]).all() and np.isfinite(out.std_errors[2])


def test_nearly_confounded_pair_and_wide_standard_error():
    x = np.linspace(0.0, 1.0, 30)
    jac = np.column_stack([x, x + 1e-3 * x ** 2])
    r = np.random.default_rng(1).normal(0.0, 0.05, x.size)
    out = analyse(jac, r, ['p', 'q'], np.ones(2), ranges=np.array([1.0, 1.0]))
    assert abs(out.correlation[0, 1]) > 0.95
    assert any('confounded' in f for f in out.flags)
    assert set(out.unidentifiable) == {'p', 'q'}  # se far beyond half the range
