"""Optimisers on functions with known minima; every population is one batch call."""

import numpy as np
import pytest

from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.optimizers import optimise, polish, run_grid

TARGET = np.array([0.3, 0.7, 0.55])


class Batch:
    """Quadratic bowl recording the batch sizes it is called with."""

    def __init__(self, target=TARGET):
        self.target = target
        self.calls = []

    def __call__(self, u):
        assert u.ndim == 2 and u.shape[1] == self.target.size
        self.calls.append(len(u))
        return np.sum((u - self.target) ** 2, axis=1)


def test_cma_finds_the_minimum_with_one_batch_per_generation():
    f = Batch()
    res = optimise('cma', f, np.full(3, 0.5), np.random.default_rng(1), budget=600, popsize=8)
    np.testing.assert_allclose(res.u, TARGET, atol=1e-3)
    assert res.n_evals == sum(f.calls) <= 600 + 8
    assert set(f.calls[1:]) == {8}  # after the start point: whole populations
    assert res.history_best == sorted(res.history_best, reverse=True)


def test_cma_is_deterministic_for_a_seed():
    a = optimise('cma', Batch(), np.full(3, 0.5), np.random.default_rng(7), budget=80)
    b = optimise('cma', Batch(), np.full(3, 0.5), np.random.default_rng(7), budget=80)
    np.testing.assert_array_equal(a.u, b.u)


def test_cma_one_dimension():
    f = Batch(np.array([0.8]))
    res = optimise('cma', f, np.array([0.2]), np.random.default_rng(0), budget=200)
    assert res.u.shape == (1,) and res.u[0] == pytest.approx(0.8, abs=1e-3)


def test_bayes_gets_close():
    f = Batch(np.array([0.25, 0.75]))
    res = optimise('bayes', f, np.full(2, 0.5), np.random.default_rng(0), budget=120,
                   popsize=12)
    assert res.n_evals == 120 and set(f.calls) == {12}
    assert np.linalg.norm(res.u - [0.25, 0.75]) < 0.1


def test_grid_evaluates_the_full_factorial():
    f = Batch(np.array([0.25, 0.75]))
    res = run_grid(f, 2, budget=25)
    assert res.n_evals == 25  # 5 x 5
    np.testing.assert_allclose(res.u, [0.25, 0.75])


def test_polish_solves_a_linear_least_squares_problem():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(40, 3))
    u_true = np.array([0.2, 0.6, 0.9])
    b = a @ u_true + rng.normal(0.0, 0.01, 40)

    def res_fn(u):
        return u @ a.T - b

    out, r, jac = polish(res_fn, np.full(3, 0.5), max_nfev=20)
    u_ls = np.linalg.lstsq(a, b, rcond=None)[0]
    np.testing.assert_allclose(out.u, u_ls, atol=1e-6)
    np.testing.assert_allclose(jac, a, atol=1e-6)
    np.testing.assert_allclose(r, res_fn(out.u[None])[0])


def test_unknown_optimiser_and_bad_budget():
    with pytest.raises(CalibrationError, match='unknown optimiser'):
        optimise('nelder', Batch(), np.full(3, 0.5), np.random.default_rng(0), budget=10)
    with pytest.raises(CalibrationError, match='budget'):
        optimise('cma', Batch(), np.full(3, 0.5), np.random.default_rng(0), budget=0)
