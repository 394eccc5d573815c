"""Fit vehicle parameters to recorded data by replaying the recorded commands in the engine.

1. **Windows**: every training recording is tiled by the window protocol
   (:mod:`rc_sim_calibration.windows`, the same windows ``rcsim replay --horizon`` predicts and
   the independent evaluator scores). Every ``holdout_every``-th pair of windows is held out to
   select the model structure (and to judge the fit when no validation recordings are given);
   the others fit the parameters.
2. **Staged identification** (:mod:`rc_sim_calibration.staged`): start values from the data.
3. **Structures**: with ``free: auto`` every candidate (servo first or second order, each with a
   fitted transport delay >= 0, or also none with ``structures.delay: [true, false]``; the drive
   the commands need: a speed-loop ESC for speed commands, the ESC + DC motor model for a
   throttle) gets a short local search from the staged start and from a related candidate's; the
   candidate with the lowest cost on the held-out windows is kept, then searched further (CMA-ES)
   and polished (least squares). A ``free`` list fixes the structure of the base parameters.
4. **Verdict** (:mod:`rc_sim_calibration.verdict`): nominal vs calibrated RMSE per held-out
   recording and channel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
import math
import time
from typing import Any

import numpy as np

from rc_sim_calibration.coverage import coverage_warnings
from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.identifiability import Identifiability, analyse
from rc_sim_calibration.optimizers import OptimResult, optimise, polish
from rc_sim_calibration.problem import Problem, channel_rmse
from rc_sim_calibration.settings import (
    DRIVE_DELAY,
    OFFSET_NAMES,
    PHYSICAL_LOWER,
    FitSettings,
    apply_values,
    resolve_free,
)
from rc_sim_calibration.staged import (
    StageResult,
    default_inertia_scaled,
    initial_values,
    signals,
)
from rc_sim_calibration.structures import (
    Candidate,
    CandidateScore,
    StructureKey,
    candidates,
    choose,
    holdout_mask,
    stage_start,
    warm_start,
)
from rc_sim_calibration.verdict import Verdict, judge
from rc_sim_calibration.windows import FitWindows, build_windows
from rc_sim_description.params import SECTIONS, VehicleParams

__all__ = ['Candidate', 'FitResult', 'candidates', 'check_kinds', 'check_settings', 'fit',
           'nominal_params', 'parameter_unit']

Array = np.ndarray
ProgressFn = Callable[[int], None]
SERVO_PREROLL = 0.4  # [s] command history before a window that sets the servo state


def parameter_unit(name: str) -> str:
    """Unit of a free parameter from the vehicle.yaml schema ('-' for Pacejka coefficients)."""
    if name in OFFSET_NAMES:
        return 'rad' if name.endswith('yaw') else 'm'
    if name == DRIVE_DELAY:
        return 's'
    for cls in SECTIONS.values():
        for f in fields_of(cls):
            if f.name == name:
                return str(f.metadata.get('unit', '-'))
    return '-'


def fields_of(cls: type) -> tuple[Any, ...]:
    from dataclasses import fields

    return fields(cls)


def nominal_params(base: VehicleParams, drive_kind: str) -> VehicleParams:
    """The base parameters able to replay the commands (a throttle needs drive_model throttle;
    speed commands on a throttle base fall back to the speed-loop ESC). The fit's nominal model
    also scales vehicle.yaml's yaw inertia by m L^2 when the base gave another mass or
    wheelbase but no inertia (:func:`rc_sim_calibration.staged.default_inertia_scaled`)."""
    if drive_kind == 'throttle' and base.drive.drive_model != 'throttle':
        return base.with_values(drive_model='throttle')
    if drive_kind != 'throttle' and base.drive.drive_model == 'throttle':
        return base.with_values(drive_model='first_order')
    return base


@dataclass
class FitResult:
    """Outcome of :func:`fit`."""

    names: tuple[str, ...]
    start: Array
    values: Array
    lower: Array
    upper: Array
    params: VehicleParams
    nominal: VehicleParams
    structure: dict[str, Any]
    offset: tuple[float, float, float]
    offset_fitted: bool
    cost_start: float
    cost_final: float
    n_evals: int
    wall_time: float
    cpu_time: float
    global_result: OptimResult
    polish_result: OptimResult | None
    identifiability: Identifiability
    train_names: tuple[str, ...]
    validate_names: tuple[str, ...]
    scores: list[CandidateScore]
    chosen: int
    stage: StageResult
    verdict: Verdict
    windows: FitWindows
    holdout: Array
    warnings: list[str] = field(default_factory=list)

    @property
    def written_keys(self) -> tuple[str, ...]:
        """Vehicle keys of calibrated.yaml: the fitted ones and the structure's."""
        keys = [n for n in self.names if n not in (*OFFSET_NAMES, DRIVE_DELAY)]
        keys += [k for k in self.structure if k not in keys]
        return tuple(keys)

    def summary_lines(self) -> list[str]:
        """Header lines for the calibrated YAML (fit metrics)."""
        c = self.scores[self.chosen].candidate.label
        lines = [f'rc_sim_calibration fit: {len(self.train_names)} training recording(s), '
                 f'{len(self.validate_names)} validation recording(s), {self.n_evals} '
                 f'evaluations, {self.wall_time:.1f} s wall ({self.cpu_time:.1f} s CPU)',
                 f'structure: {c} (chosen among {len(self.scores)} on held-out windows)',
                 f'training cost {self.cost_start:.4g} (nominal) -> {self.cost_final:.4g}']
        lines += self.verdict.lines()
        for i, name in enumerate(self.names):
            se = self.identifiability.std_errors[i]
            lines.append(f'{name}: {self.start[i]:.6g} -> {self.values[i]:.6g} '
                         f'{parameter_unit(name)} (se {se:.3g})')
        if self.offset_fitted:
            lines.append('measured point (fitted, not a vehicle key): pass --odom-offset '
                         f'{self.offset[0]:.4f},{self.offset[1]:.4f},{self.offset[2]:.5f} to '
                         'replay, or add it to the recording description as pose offset')
        lines += [f'warning: {w}' for w in self.warnings]
        return lines


def _writable(problem: Problem, values: Array, settings: FitSettings
              ) -> tuple[Problem, dict[str, float]]:
    """The final problem of a model the engine can run: the identified steering latency fixed,
    the drive's own delay (``drive_delay``, identification only) folded into the drive's lag
    (first-order ESC: drive_time_constant; throttle: throttle_time_constant; a first-order lag
    of the same mean delay), every other parameter free from its identified value. Returns the
    problem and the fixed values ({} when there is no drive delay)."""
    if DRIVE_DELAY not in problem.names:
        return problem, {}
    v = dict(zip(problem.names, (float(x) for x in values)))
    lat = v.get('command_latency', problem.base.timing.command_latency)
    extra = max(lat + v.pop(DRIVE_DELAY), 0.0) - lat
    key = 'throttle_time_constant' if problem.base.drive.drive_model == 'throttle' else \
        'drive_time_constant'
    base_tau = getattr(problem.base.drive, key)
    v[key] = max(v.get(key, base_tau) + extra, 0.005)
    fixed = {'command_latency': lat} if 'command_latency' in v else {}
    base = problem.base.with_values(command_latency=lat, **({key: v[key]} if key not in
                                                            problem.names else {}))
    free = [replace(f, start=float(np.clip(v[f.name], f.lower, f.upper)))
            for f in problem.free if f.name not in (DRIVE_DELAY, 'command_latency')]
    final = Problem(base, free, problem.win, settings, problem.offset0)
    final.window_weight = problem.window_weight
    return final, fixed


def _extend(ident: Identifiability, names: Sequence[str], values: Array) -> Identifiability:
    """The analysis with parameters fixed after identification appended (no standard error)."""
    if not names:
        return ident
    n0, k = len(ident.names), len(names)
    corr = np.eye(n0 + k)
    corr[:n0, :n0] = ident.correlation
    return replace(ident, names=(*ident.names, *names), values=np.asarray(values),
                   std_errors=np.concatenate([ident.std_errors, np.full(k, np.nan)]),
                   correlation=corr)


def _search(problem: Problem, settings: FitSettings, budget: int, sigma: float,
            rng: np.random.Generator, tick: ProgressFn, u0: Array | None = None
            ) -> OptimResult:
    u_start = problem.start_unit if u0 is None else u0
    return optimise(settings.optimizer, problem.cost, u_start, rng, budget=max(budget, 2),
                    popsize=settings.popsize, sigma0=sigma, progress=tick)


def _bound_warnings(problem: Problem, u: Array, values: Array, jac_u: Array, r: Array
                    ) -> list[str]:
    """A parameter on a search bound that the data pull past it (the cost gradient points out
    of the box); bounds at physical limits (latency 0, dead band 0) are not reported."""
    grad = 2.0 * jac_u.T @ r
    out = []
    for i, f in enumerate(problem.free):
        at_lo, at_hi = u[i] < 1e-3, u[i] > 1.0 - 1e-3
        if at_lo and f.name in PHYSICAL_LOWER and math.isclose(f.lower, PHYSICAL_LOWER[f.name],
                                                               abs_tol=1e-12):
            continue
        if (at_lo and grad[i] > 0) or (at_hi and grad[i] < 0):
            side = 'lower' if at_lo else 'upper'
            out.append(f'{f.name} ended at its {side} search bound ({values[i]:.6g}) and the '
                       'data pull it further: widen bounds.' + f.name + ' in a fit YAML, or the '
                       'model structure lacks something the data show')
    return out


def fit(train: Sequence[Dataset], base: VehicleParams, settings: FitSettings, *,
        validate: Sequence[Dataset] = (), progress: ProgressFn | None = None) -> FitResult:
    """Fit on ``train`` (structure selection on its held-out windows); judge on ``validate``
    (or, without it, on those held-out windows)."""
    started, cpu0 = time.perf_counter(), time.process_time()
    tick = progress or (lambda _: None)
    kinds = train[0].kinds
    nominal = nominal_params(base, kinds[1])
    iz = default_inertia_scaled(nominal)
    if iz is not None:            # vehicle.yaml's inertia for another mass and wheelbase
        nominal = nominal.with_values(yaw_inertia=iz)
    fit_offset = not all(ds.offset_known for ds in train)
    offset0 = next((ds.pose_offset for ds in train if ds.offset_known), (0.0, 0.0, 0.0))
    cands = candidates(settings, kinds, nominal, fit_offset)
    lat_hi = max(float(resolve_free(settings, nominal, ['command_latency'])[0].upper),
                 nominal.timing.command_latency)
    lookback = lat_hi + SERVO_PREROLL
    all_win = build_windows(train, settings.horizon, lookback=lookback, dt=settings.dt)
    holdout = holdout_mask(all_win, settings.holdout_every)
    fit_win = all_win.subset(~holdout) if holdout.any() else all_win
    sel_win = all_win.subset(holdout) if holdout.any() else all_win

    stage = initial_values(train, nominal, fit_offset=fit_offset)
    stage0 = initial_values(train, nominal, fit_offset=fit_offset, fixed_latency=0.0) \
        if all(c.structure.get('command_latency') == 0.0 for c in cands) else None
    rng = np.random.default_rng(settings.seed)
    scores: list[CandidateScore] = []
    done: dict[StructureKey, dict[str, float]] = {}
    several = len(cands) > 1 and settings.stage_budget > 0

    def score(i: int, cand: Candidate, problem: Problem, u: Array) -> CandidateScore:
        values = problem.to_values(u)
        done[cand.key] = dict(zip(problem.names, values))
        sel_cost = float(problem.cost_of(values[None], sel_win, settings.cost,
                                         with_prior=False)[0]) \
            if len(cands) > 1 else math.nan
        rm = {k: float(v[0]) for k, v in channel_rmse(problem.errors(values[None], sel_win),
                                                      sel_win).items()}
        return CandidateScore(cand, values, sel_cost, rm, problem, u)

    # round 1: every candidate from the staged (or a related candidate's) start
    for i, cand in enumerate(cands):
        cbase = nominal.with_values(**cand.structure) if cand.structure else nominal
        # a related candidate's fit and the staged values are two basins (a second-order
        # servo warm-started from a first-order fit keeps its extra delay): both are tried
        starts = [s for s in (warm_start(cand, done), stage_start(cand, stage, stage0)) if s]
        best_fit: tuple[float, Problem, Array] | None = None
        for start in starts:
            free = resolve_free(settings, cbase, cand.names, start, offset0)
            problem = Problem(cbase, free, fit_win, settings, offset0)
            u = problem.start_unit
            if several:
                nfev = max(2, settings.stage_budget // (len(free) + 1))
                u = polish(problem.residuals, u, max_nfev=nfev, progress=tick)[0].u
            cost = float(problem.cost(u[None])[0])
            if best_fit is None or cost < best_fit[0]:
                best_fit = (cost, problem, u)
        assert best_fit is not None
        scores.append(score(i, cand, best_fit[1], best_fit[2]))
    # round 2 (successive halving): the best two continue
    if several and len(cands) > 2:
        for i in list(np.argsort([s.cost for s in scores]))[:2]:
            sc = scores[i]
            nfev = max(2, 2 * settings.stage_budget // (len(sc.problem.free) + 1))
            u = polish(sc.problem.residuals, sc.u, max_nfev=nfev, progress=tick)[0].u
            scores[i] = score(i, sc.candidate, sc.problem, u)
    chosen = choose(scores, settings.parsimony)
    best = scores[chosen]
    problem = best.problem
    if settings.robust:
        problem.set_robust_weights(best.values)
    u0 = problem.start_unit
    cost_start = float(problem.cost(u0[None])[0])
    result = _search(problem, settings, settings.budget, settings.sigma0 * 0.5, rng, tick,
                     best.u)
    u_id = result.u
    if settings.polish and DRIVE_DELAY in problem.names:   # identification: own drive delay
        u_id = polish(problem.residuals, u_id, max_nfev=max(2, settings.polish_max_nfev // 2),
                      progress=tick)[0].u
    final, fixed = _writable(problem, problem.to_values(u_id), settings)
    u_best = final.start_unit
    polish_res: OptimResult | None = None
    if settings.polish:
        polish_res, r, jac_u = polish(final.residuals, u_best,
                                      max_nfev=settings.polish_max_nfev, progress=tick)
        if float(final.cost(polish_res.u[None])[0]) <= float(final.cost(u_best[None])[0]):
            u_best = polish_res.u
    if polish_res is None or not np.array_equal(u_best, polish_res.u):
        _, r, jac_u = polish(final.residuals, u_best, max_nfev=1, progress=tick)
    values = final.to_values(u_best)
    jac = jac_u / final.dvalue_du(u_best)[None, :]
    n_data = r.size - final.prior_idx.size          # what the data alone say (no prior rows)
    ident = analyse(jac[:n_data], r[:n_data], final.names, values,
                    ranges=np.array([f.span for f in final.free]))
    params = apply_values(final.base, final.names, values)
    offset = tuple(float(v) for v in final.offsets_for(values[None])[0])
    cost_final = float(final.cost(u_best[None])[0])
    warnings = _bound_warnings(final, u_best, values, jac_u, r)
    if cost_final > cost_start:
        warnings.append('the fit did not improve on its data-initialised start')
    scores[chosen] = replace(best, values=problem.to_values(u_id), u=u_id)

    val_win = build_windows(validate, settings.horizon, lookback=lookback, dt=settings.dt) \
        if validate else None
    verdict = judge(final, nominal, values, offset0, all_win, holdout, val_win, settings)
    warnings += list(verdict.warnings)   # what the data lack, then what they cannot separate
    warnings += coverage_warnings([signals(d) for d in train], nominal.geometry.wheelbase,
                                  train[0].drive_kind)
    warnings += list(ident.flags)
    free_out = list(final.free) + [f for f in problem.free if f.name in fixed]
    values_out = np.concatenate([values, [fixed[f.name] for f in free_out[len(values):]]])
    ident = _extend(ident, [f.name for f in free_out[len(values):]], values_out)
    return FitResult(
        names=tuple(f.name for f in free_out), start=np.array([f.start for f in free_out]),
        values=values_out, lower=np.array([f.lower for f in free_out]),
        upper=np.array([f.upper for f in free_out]), params=params, nominal=nominal,
        structure=dict(best.candidate.structure), offset=offset,  # type: ignore[arg-type]
        offset_fitted=fit_offset, cost_start=cost_start, cost_final=cost_final,
        n_evals=sum(s.problem.n_evals for s in scores), wall_time=time.perf_counter() - started,
        cpu_time=time.process_time() - cpu0, global_result=result, polish_result=polish_res,
        identifiability=ident, train_names=tuple(d.name for d in train),
        validate_names=tuple(d.name for d in validate), scores=scores, chosen=chosen,
        stage=stage, verdict=verdict, windows=all_win, holdout=holdout, warnings=warnings)


def check_settings(settings: FitSettings, base: VehicleParams) -> None:
    """Every free parameter of every candidate structure (any command kind) resolves: names,
    bounds and priors checked before any bag is read (one-line CalibrationError)."""
    names: dict[str, None] = {}
    for kinds in (('angle', 'wheel_speed'), ('normalised', 'throttle')):
        for cand in candidates(settings, kinds, base, fit_offset=True):
            names.update(dict.fromkeys(cand.names))
    resolve_free(settings, nominal_params(base, 'throttle'), list(names))


def check_kinds(train: Sequence[Dataset], validate: Sequence[Dataset]) -> None:
    """All recordings must share one command kind (CalibrationError naming them)."""
    kinds = {ds.kinds for ds in [*train, *validate]}
    if len(kinds) > 1:
        listed = '; '.join(f'{ds.name}: {ds.steering_kind} + {ds.drive_kind}'
                           for ds in [*train, *validate])
        raise CalibrationError(f'the recordings mix command kinds ({listed}): fit one kind at '
                               'a time')
