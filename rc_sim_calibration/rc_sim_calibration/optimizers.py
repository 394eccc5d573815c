"""Optimisers over the unit box u in [0, 1]^n; every population is ONE batch evaluation.

The objective is a batch function ``f(U) -> J`` with U of shape (P, n) and J of shape (P,), so the
caller can replay all P parameter sets in one batch rollout. Global optimisers:

- ``grid``: full factorial grid, ``k = floor(budget^(1/n))`` points per axis (k >= 2), in batches;
- ``cma``: CMA-ES (Hansen's ``cma`` package, ask/tell, box bounds by its BoundTransform), random
  numbers drawn from the caller's ``numpy.random.Generator`` (no global seeding);
- ``bayes``: Bayesian optimisation with optuna's TPE sampler (multivariate, constant liar), trials
  asked in batches of ``batch_size`` and told together.

Local polish: ``scipy.optimize.least_squares`` (trust-region reflective, box bounds) on the
residual vector, with a forward-difference Jacobian whose n perturbations form one batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import itertools
import math
from typing import Any

import numpy as np

from rc_sim_calibration.errors import CalibrationError

__all__ = ['OPTIMIZERS', 'OptimResult', 'optimise', 'polish', 'run_bayes', 'run_cma', 'run_grid']

Array = np.ndarray
BatchObjective = Callable[[Array], Array]
BatchResiduals = Callable[[Array], Array]
Progress = Callable[[int], None]

OPTIMIZERS: tuple[str, ...] = ('cma', 'bayes', 'grid')


@dataclass
class OptimResult:
    """Best point in unit coordinates, its cost, evaluation count and convergence history."""

    u: Array
    cost: float
    n_evals: int
    history_evals: list[int] = field(default_factory=list)   # cumulative evaluations
    history_best: list[float] = field(default_factory=list)  # best cost so far
    message: str = ''

    def record(self, n_new: int, costs: Array, points: Array) -> None:
        """Account for a batch of evaluations and keep the best point."""
        self.n_evals += n_new
        if costs.size:
            i = int(np.argmin(costs))
            if costs[i] < self.cost:
                self.cost, self.u = float(costs[i]), points[i].copy()
        self.history_evals.append(self.n_evals)
        self.history_best.append(self.cost)


def _noop(_: int) -> None:
    return None


def run_grid(f: BatchObjective, n: int, budget: int, *, batch_size: int = 256,
             progress: Progress = _noop) -> OptimResult:
    """Full factorial grid on [0, 1]^n with floor(budget^(1/n)) (>= 2) points per axis."""
    k = max(2, math.floor(budget ** (1.0 / n) + 1e-9))
    axis = np.linspace(0.0, 1.0, k)
    res = OptimResult(u=np.full(n, 0.5), cost=math.inf, n_evals=0, message=f'grid {k}^{n}')
    it = itertools.product(axis, repeat=n)
    while True:
        chunk = np.array(list(itertools.islice(it, batch_size)), dtype=float)
        if chunk.size == 0:
            break
        res.record(len(chunk), f(chunk), chunk)
        progress(len(chunk))
    return res


def run_cma(f: BatchObjective, u0: Array, rng: np.random.Generator, *, budget: int,
            sigma0: float = 0.25, popsize: int | None = None, tolfun: float = 1e-9,
            progress: Progress = _noop) -> OptimResult:
    """CMA-ES (``cma.CMAEvolutionStrategy``) in [0, 1]^n; one batch per generation."""
    import cma

    n = int(u0.size)
    opts: dict[str, Any] = {
        'bounds': [[0.0] * n, [1.0] * n], 'maxfevals': budget, 'verbose': -9,
        'verb_log': 0, 'verb_disp': 0, 'seed': math.nan, 'tolfun': tolfun,
        'randn': lambda *shape: rng.standard_normal(shape),
    }
    if popsize is not None:
        opts['popsize'] = int(popsize)
    if n == 1:
        # cma needs n >= 2: optimise a dummy second coordinate that the objective ignores.
        res = run_cma(lambda U: f(U[:, :1]), np.array([float(u0[0]), 0.5]), rng, budget=budget,
                      sigma0=sigma0, popsize=popsize, tolfun=tolfun, progress=progress)
        res.u = res.u[:1]
        return res
    es = cma.CMAEvolutionStrategy(np.clip(u0, 0.0, 1.0).tolist(), sigma0, opts)
    res = OptimResult(u=np.clip(u0, 0.0, 1.0), cost=math.inf, n_evals=0, message='')
    start = np.clip(u0, 0.0, 1.0)[None]
    res.record(1, f(start), start)
    progress(1)
    while not es.stop():
        pop = np.clip(np.asarray(es.ask(), dtype=float), 0.0, 1.0)
        costs = np.asarray(f(pop), dtype=float)
        es.tell(list(pop), np.where(np.isfinite(costs), costs, 1e300).tolist())
        res.record(len(pop), costs, pop)
        progress(len(pop))
    res.message = 'cma: ' + ', '.join(f'{k}={v}' for k, v in es.stop().items())
    return res


def run_bayes(f: BatchObjective, u0: Array, seed: int, *, budget: int, batch_size: int = 16,
              progress: Progress = _noop) -> OptimResult:
    """Bayesian optimisation (optuna TPE, multivariate, constant liar), batches of trials."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    n = int(u0.size)
    sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True,
                                         n_startup_trials=min(max(10, 2 * n), budget // 2))
    study = optuna.create_study(sampler=sampler, direction='minimize')
    names = [f'u{i}' for i in range(n)]
    study.enqueue_trial({k: float(v) for k, v in zip(names, np.clip(u0, 0.0, 1.0))})
    dist = optuna.distributions.FloatDistribution(0.0, 1.0)
    res = OptimResult(u=np.clip(u0, 0.0, 1.0), cost=math.inf, n_evals=0, message='bayes: TPE')
    while res.n_evals < budget:
        m = min(batch_size, budget - res.n_evals)
        trials = [study.ask(dict.fromkeys(names, dist)) for _ in range(m)]
        pop = np.array([[t.params[k] for k in names] for t in trials], dtype=float)
        costs = np.asarray(f(pop), dtype=float)
        for t, c in zip(trials, costs):
            study.tell(t, float(c) if np.isfinite(c) else 1e300)
        res.record(m, costs, pop)
        progress(m)
    return res


def polish(residual_fn: BatchResiduals, u0: Array, *, max_nfev: int = 30,
           step: float = 1e-3, progress: Progress = _noop) -> tuple[OptimResult, Array, Array]:
    """Least-squares polish in [0, 1]^n; returns (result, residuals r(u*), Jacobian dr/du at u*).

    The Jacobian is a forward difference with step ``step`` (towards the interior), its n perturbed
    points evaluated as one batch.
    """
    from scipy.optimize import least_squares

    n = int(u0.size)
    counter = {'evals': 0}
    last: dict[str, Any] = {'key': None, 'r': None}

    def fun(u: Array) -> Array:
        u = np.asarray(u, dtype=float)
        key = u.tobytes()
        if last['key'] != key:
            counter['evals'] += 1
            progress(1)
            last['key'], last['r'] = key, np.asarray(residual_fn(u[None])[0], dtype=float)
        return np.asarray(last['r'])

    def jac(u: Array) -> Array:
        u = np.asarray(u, dtype=float)
        r0 = fun(u)
        h = np.where(u + step <= 1.0, step, -step)
        r = np.asarray(residual_fn(u[None] + np.diag(h)), dtype=float)
        counter['evals'] += n
        progress(n)
        return np.asarray(((r - r0[None]) / h[:, None]).T)

    u_start = np.clip(u0, 0.0, 1.0)
    sol = least_squares(fun, u_start, jac=jac, bounds=(np.zeros(n), np.ones(n)), method='trf',
                        max_nfev=max_nfev, x_scale=np.full(n, 0.1))
    u_best = np.clip(sol.x, 0.0, 1.0)
    r, jacobian = fun(u_best), jac(u_best)
    cost = float(r @ r)
    res = OptimResult(u=u_best, cost=cost, n_evals=counter['evals'],
                      history_evals=[counter['evals']], history_best=[cost],
                      message=f'least_squares: {sol.message}')
    return res, r, jacobian


def optimise(name: str, f: BatchObjective, u0: Array, rng: np.random.Generator, *, budget: int,
             popsize: int | None = None, sigma0: float = 0.25,
             progress: Progress = _noop) -> OptimResult:
    """Dispatch to a global optimiser by name (one-line error for an unknown name)."""
    if budget < 1:
        raise CalibrationError(f'optimiser budget must be >= 1 evaluation, got {budget}')
    if name == 'cma':
        return run_cma(f, u0, rng, budget=budget, sigma0=sigma0, popsize=popsize,
                       progress=progress)
    if name == 'bayes':
        return run_bayes(f, u0, int(rng.integers(2**31 - 1)), budget=budget,
                         batch_size=popsize or 16, progress=progress)
    if name == 'grid':
        return run_grid(f, int(u0.size), budget, progress=progress)
    raise CalibrationError(f'unknown optimiser {name!r} (use one of {", ".join(OPTIMIZERS)})')
