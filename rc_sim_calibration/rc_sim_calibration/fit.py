"""Fit vehicle parameters to recorded data by replaying the recorded commands in the engine.

1. **Windows**: every training recording is tiled by the window protocol
   (:mod:`rc_sim_calibration.windows`, the same windows ``rcsim replay --horizon`` predicts and
   the independent evaluator scores). Every ``holdout_every``-th pair of windows is left out to
   select the model structure.
2. **Staged identification** (:mod:`rc_sim_calibration.staged`): start values from the data.
3. **Structures**: with ``free: auto`` every candidate (servo first or second order, each with a
   fitted transport delay >= 0; the drive the commands need) gets a short least-squares search
   from the staged start and from a related candidate's; the one with the lowest cost on the
   left-out windows is kept (the simpler one within ``parsimony``).
4. **Whole recordings held out** (two or more training recordings, no ``--validate``): each
   session (recordings more than :data:`SESSION_GAP` apart), else each recording, is predicted
   by the kept structure fitted on the others alone (:func:`recording_groups`). Across sessions
   the variants of ``structures.drive`` (the drive calibrated or kept nominal) and of
   ``cost.prior_strength`` are compared there; the one that predicts the held-out recordings
   best is kept.
5. **Final fit** on every window of every recording (one recording: without the left-out
   windows): robust window weights, a CMA-ES guard and a least-squares polish.
6. **Verdict** (:mod:`rc_sim_calibration.verdict`): on the held-out recordings (their fits of
   step 4; ``--validate`` recordings and the left-out windows of one recording: the final model)
   the calibrated model against nominal, CTRV and the kinematic bicycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
import math
from pathlib import Path
import time
from typing import Any

import numpy as np

from rc_sim_calibration.coverage import coverage_warnings
from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.identifiability import Identifiability, analyse, parameter_status
from rc_sim_calibration.optimizers import OptimResult, optimise, polish
from rc_sim_calibration.problem import Problem, channel_rmse
from rc_sim_calibration.settings import (
    DRIVE_DELAY,
    OFFSET_NAMES,
    PHYSICAL_LOWER,
    FitSettings,
    apply_values,
    override_values,
    resolve_free,
)
from rc_sim_calibration.staged import (
    StageResult,
    default_inertia_scaled,
    initial_values,
    signals,
)
from rc_sim_calibration.structures import (
    DRIVE_NAMES,
    Candidate,
    CandidateScore,
    StructureKey,
    candidates,
    choose,
    holdout_mask,
    stage_start,
    warm_start,
)
from rc_sim_calibration.verdict import Verdict, judge, num, ordinal, score_windows
from rc_sim_calibration.windows import FitWindows, build_windows
from rc_sim_description.params import SECTIONS, VehicleParams

__all__ = [
    'Candidate',
    'FitResult',
    'HeldSet',
    'candidates',
    'check_channels',
    'check_finite',
    'check_fit_size',
    'check_kinds',
    'check_settings',
    'fit',
    'nominal_params',
    'parameter_unit',
    'recording_groups',
]

Array = np.ndarray
ProgressFn = Callable[[int], None]
StageFn = Callable[[str, int], None]
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
    force_drive = {'throttle': 'throttle', 'acceleration': 'acceleration'}.get(drive_kind)
    if force_drive is not None and base.drive.drive_model != force_drive:
        return base.with_values(drive_model=force_drive, drive_command=None)
    if force_drive is None and base.drive.drive_model in ('throttle', 'acceleration'):
        return base.with_values(drive_model='first_order', drive_command=None)
    return base


@dataclass(frozen=True)
class HeldSet:
    """Held-out windows and the model that predicted them (the fit without them, or the
    written model for validation recordings and held-out windows)."""

    win: FitWindows
    params: VehicleParams
    offset: Array


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
    fixed_names: tuple[str, ...] = ()
    held_sets: list[HeldSet] = field(default_factory=list)
    measured: dict[str, Any] = field(default_factory=dict)
    command_kinds: tuple[str, str] = ('angle', 'wheel_speed')

    @property
    def written_keys(self) -> tuple[str, ...]:
        """The fitted vehicle keys and the structure's (:meth:`complete_values` writes them
        with everything else the model needs)."""
        keys = [n.partition('.')[0] for n in self.names if n not in (*OFFSET_NAMES, DRIVE_DELAY)]
        keys += [k for k in self.structure if k not in keys]
        return tuple(dict.fromkeys(keys))

    def complete_values(self) -> dict[str, Any]:
        """Every vehicle key of the calibrated model that differs from vehicle.yaml, the
        measured values it was given (``measured``), the fitted values, the structure (servo,
        drive, tyre model, delay) and the car's command kinds: merged over vehicle.yaml alone
        it is the fitted model (calibrated.yaml loads without the measured file)."""
        from rc_sim_description.params import load_vehicle_params

        defaults = load_vehicle_params().leaf_values()
        leaves = self.params.leaf_values()
        keys = [*self.measured, *self.written_keys]
        keys += [k for k, v in leaves.items() if k in defaults and v != defaults[k]]
        steer_kind, drive_kind = self.command_kinds
        kinds = {'steering_command': steer_kind, 'drive_command': drive_kind}
        out = override_values(self.params, list(dict.fromkeys(keys)))
        for key, value in kinds.items():
            if key in leaves:
                out[key] = value
        return out

    def summary_lines(self) -> list[str]:
        """Header lines for the calibrated YAML and the terminal: what was fitted, the verdict
        against nominal, CTRV and the kinematic bicycle, the parameters that moved."""
        c = self.scores[self.chosen].candidate.label
        lines = [f'rc_sim_calibration fit: {len(self.train_names)} training recording(s) '
                 f'({", ".join(Path(n).name for n in self.train_names)}), '
                 f'{len(self.validate_names)} validation recording(s), {self.n_evals} '
                 f'evaluations, {self.wall_time:.1f} s wall ({self.cpu_time:.1f} s CPU)',
                 f'structure: {c} (chosen among {len(self.scores)} on held-out windows)']
        lines += self.verdict.lines()
        for i, name in enumerate(self.names):
            lines.append(f'{name}: {num(self.start[i], 6)} -> {num(self.values[i], 6)} '
                         f'{parameter_unit(name)} ({self.status[i]})')
        if self.offset_fitted:
            lines.append('measured point (fitted, not a vehicle key): pass --odom-offset '
                         f'{self.offset[0]:.4f},{self.offset[1]:.4f},{self.offset[2]:.5f} to '
                         'replay, or add it to the recording description as pose offset')
        lines += [f'warning: {w}' for w in self.warnings]
        return lines

    @property
    def status(self) -> list[str]:
        """Per fitted parameter, in plain words: well determined, confounded with another, not
        determined by these recordings (held by its prior or bound), or fixed after
        identification (:func:`rc_sim_calibration.identifiability.parameter_status`)."""
        return parameter_status(self.identifiability, self.names, self.fixed_names)


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
    key = {'throttle': 'throttle_time_constant', 'acceleration': 'acceleration_time_constant'
           }.get(problem.base.drive.drive_model, 'drive_time_constant')
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


#: [s] recordings that start more than this after the previous one ended are another session
SESSION_GAP = 4 * 3600.0
#: at most this many held-out folds (more recordings share folds round-robin)
MAX_FOLDS = 3


def recording_groups(datasets: Sequence[Dataset]) -> tuple[list[list[int]], str, bool]:
    """The recordings held out together, the scheme in words, and whether the groups are
    sessions: each session (recordings that start within :data:`SESSION_GAP` of the previous
    one's end, by their bag clocks) when there are several, else each recording; at most
    :data:`MAX_FOLDS` groups (more share a group round-robin)."""
    order = sorted(range(len(datasets)), key=lambda i: datasets[i].start_ns)
    sessions: list[list[int]] = []
    end = -math.inf
    for i in order:
        ds = datasets[i]
        start = ds.start_ns * 1e-9 + (float(ds.t[0]) if ds.t.size else 0.0)
        if not sessions or start - end > SESSION_GAP:
            sessions.append([])
        sessions[-1].append(i)
        end = max(end, ds.start_ns * 1e-9 + (float(ds.t[-1]) if ds.t.size else 0.0))
    by_session = len(sessions) >= 2
    groups = sessions if by_session else [[i] for i in order]
    what = 'each session' if by_session else 'each recording'
    if len(groups) > MAX_FOLDS:
        merged: list[list[int]] = [[] for _ in range(MAX_FOLDS)]
        for k, g in enumerate(groups):
            merged[k % MAX_FOLDS] += g
        groups = merged
        what = f'{"sessions" if by_session else "recordings"} in {MAX_FOLDS} groups, each group'
    names = ['+'.join(Path(datasets[i].name).name for i in g) for g in groups]
    return groups, (f'{what} in turn ({"; ".join(names)}), predicted by a fit of the chosen '
                    'structure on the other recordings; the written model is fitted on all of '
                    'them'), by_session


@dataclass(frozen=True)
class Variant:
    """A regularisation of the chosen structure, chosen on held-out recordings: the drive
    calibrated or kept at its nominal values, and the prior strength [s of driving]."""

    drive: str
    strength: float

    @property
    def label(self) -> str:
        """'drive fitted, priors 1 s'."""
        return f'drive {self.drive}, priors {self.strength:g} s'

    def candidate(self, cand: Candidate, nominal: VehicleParams) -> Candidate:
        """``cand`` without the drive's free parameters when the drive stays nominal (the
        nominal car's drive model and values: what the car does without calibration)."""
        if self.drive == 'fitted':
            return cand
        structure = dict(cand.structure)
        structure.pop('drive_model', None)
        label = cand.label.rsplit(', drive', 1)[0] + \
            f', drive nominal ({nominal.drive.drive_model})'
        return replace(cand, label=label, structure=structure,
                       names=tuple(n for n in cand.names if n not in DRIVE_NAMES))


@dataclass
class Fold:
    """One held-out group: the model fitted without it and its cost on the held-out windows."""

    group: list[int]
    params: VehicleParams
    offset: Array
    u: Array
    held_cost: float


def _fold_model(cand: Candidate, cbase: VehicleParams, nominal: VehicleParams,
                train: Sequence[Dataset], group: list[int], all_win: FitWindows,
                settings: FitSettings, offset0: tuple[float, float, float], fit_offset: bool,
                tick: ProgressFn, watch: Callable[[Any], None],
                warm: Fold | None = None) -> Fold:
    """The chosen structure fitted on the recordings outside ``group`` alone, from their own
    staged identification (nothing of the held-out recordings; or from ``warm``, the same
    fold at another prior strength): the parameters and measured-frame offset it predicts the
    held-out recordings with, and its cost there (no prior)."""
    keep = [i for i in range(len(train)) if i not in group]
    in_group = np.isin(all_win.bag, group)
    stage = initial_values([train[i] for i in keep], nominal, fit_offset=fit_offset)
    free = resolve_free(settings, cbase, cand.names, stage_start(cand, stage, None), offset0,
                        measured=settings.measured)
    problem = Problem(cbase, free, all_win.subset(~in_group), settings, offset0)
    watch(problem)
    nfev = max(2, 3 * settings.stage_budget // (len(free) + 1))
    u0 = problem.start_unit if warm is None else warm.u
    u = polish(problem.residuals, u0, max_nfev=nfev if warm is None else max(2, nfev // 2),
               progress=tick)[0].u
    values = problem.to_values(u)
    held = all_win.subset(in_group)
    cost = float(problem.cost_of(values[None], held, with_prior=False)[0]) * held.n
    final, _ = _writable(problem, values, settings)
    params = apply_values(final.base, final.names, [f.start for f in final.free])
    return Fold(group, params, problem.offsets_for(values[None])[0], u, cost)


def fit(train: Sequence[Dataset], base: VehicleParams, settings: FitSettings, *,
        validate: Sequence[Dataset] = (), progress: ProgressFn | None = None,
        reporter: Any = None) -> FitResult:
    """Fit on ``train`` (structure selection on held-out windows of it); judge on ``validate``
    or, with two or more training recordings, on each session (else recording) predicted by a
    fit that did not see it; with one recording, on held-out windows (docstring of
    :mod:`rc_sim_calibration.verdict`). ``stages(name, budget)`` is told when each stage starts
    (its evaluation budget), ``progress(n)`` after every n evaluations; a ``reporter``
    (:class:`rc_sim_calibration.progress.FitProgress`) is told the stages, the evaluations and
    the problems whose best cost it shows."""
    started, cpu0 = time.perf_counter(), time.process_time()
    tick = progress or (reporter.advance if reporter is not None else (lambda _: None))
    stage_of: StageFn = reporter.stage if reporter is not None else (lambda _n, _b: None)
    watch = reporter.watch if reporter is not None else (lambda _p: None)
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
    check_fit_size(train, settings, max(len(c.names) for c in cands), lookback)
    all_win = build_windows(train, settings.horizon, lookback=lookback, dt=settings.dt)
    check_channels(all_win, settings)
    holdout = holdout_mask(all_win, settings.holdout_every)
    fit_win = all_win.subset(~holdout) if holdout.any() else all_win
    sel_win = all_win.subset(holdout) if holdout.any() else all_win
    by_recording = settings.hold_out == 'recordings' and (len(train) >= 2 or bool(validate))

    stage_of('staged identification', 0)
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
    stage_of(f'structures ({len(cands)} candidates)',
             settings.stage_budget * len(cands) * 2 if several else 0)
    for i, cand in enumerate(cands):
        cbase = nominal.with_values(**cand.structure) if cand.structure else nominal
        # a related candidate's fit and the staged values are two basins (a second-order
        # servo warm-started from a first-order fit keeps its extra delay): both are tried
        starts = [s for s in (warm_start(cand, done), stage_start(cand, stage, stage0)) if s]
        best_fit: tuple[float, Problem, Array] | None = None
        for start in starts:
            free = resolve_free(settings, cbase, cand.names, start, offset0,
                                measured=settings.measured)
            problem = Problem(cbase, free, fit_win, settings, offset0)
            watch(problem)
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
    # whole recordings held out in turn: each fitted without them, for every variant (the drive
    # calibrated or kept nominal; the prior strengths); the variant that predicts them best is
    # kept, and its fits judge the written model
    groups, scheme, by_session = recording_groups(train) if by_recording and not validate \
        else ([], '', False)
    strengths = settings.prior_strengths or (settings.prior_strength,)
    # the drive is compared across sessions (a drive calibrated on one day may not hold on
    # another); within one session it is calibrated
    drives = settings.drive_options if settings.free_auto and by_session else \
        settings.drive_options[:1]
    variants = [Variant(d, v) for d in drives for v in strengths]
    folds: dict[Variant, list[Fold]] = {}
    variant_costs: dict[Variant, float] = {}
    cand = best.candidate
    if groups and len(variants) > 0:
        stage_of(f'held-out recordings ({len(groups)} folds x {len(variants)} variants)',
                 len(groups) * len(variants) * 3 * settings.stage_budget)
        for variant in variants:
            st = replace(settings, prior_strength=variant.strength)
            vc = variant.candidate(cand, nominal)
            cbase = nominal.with_values(**vc.structure) if vc.structure else nominal
            warm = [f for v, f in folds.items() if v.drive == variant.drive]
            folds[variant] = [
                _fold_model(vc, cbase, nominal, train, g, all_win, st, offset0, fit_offset,
                            tick, watch, warm[-1][j] if warm else None)
                for j, g in enumerate(groups)]
            variant_costs[variant] = sum(f.held_cost for f in folds[variant])
        chosen_variant = min(variants, key=lambda v: variant_costs[v])
    else:
        chosen_variant = variants[0]
    settings = replace(settings, prior_strength=chosen_variant.strength)
    if chosen_variant.drive == 'nominal':
        cand = chosen_variant.candidate(cand, nominal)
        values0 = dict(zip(problem.names, problem.to_values(best.u)))
        free = [f for f in problem.free if f.name not in DRIVE_NAMES]
        cbase = nominal.with_values(**cand.structure) if cand.structure else nominal
        problem = Problem(cbase, free, problem.win, settings, offset0)
        best = replace(best, u=problem.to_unit(np.array([values0[f.name] for f in free])))
    stage_of('search (CMA-ES)', settings.budget)
    if (by_recording and holdout.any()) or settings.prior_strength != \
            problem.settings.prior_strength:
        problem = Problem(problem.base, problem.free, all_win if by_recording else fit_win,
                          settings, offset0)   # the written model learns from every window
    watch(problem)
    if settings.robust:
        problem.set_robust_weights(problem.to_values(best.u))
    u0 = problem.start_unit
    cost_start = float(problem.cost(u0[None])[0])
    result = _search(problem, settings, settings.budget, settings.sigma0 * 0.5, rng, tick,
                     best.u)
    u_id = result.u
    n_free = len(problem.free) + 1
    stage_of('least-squares polish', settings.polish_max_nfev * n_free * 2
             if settings.polish else n_free)
    if settings.polish and DRIVE_DELAY in problem.names:   # identification: own drive delay
        u_id = polish(problem.residuals, u_id, max_nfev=max(2, settings.polish_max_nfev // 2),
                      progress=tick)[0].u
    final, fixed = _writable(problem, problem.to_values(u_id), settings)
    watch(final)
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
    check_finite(final.names, values)
    jac = jac_u / final.dvalue_du(u_best)[None, :]
    n_data = r.size - final.prior_idx.size          # what the data alone say (no prior rows)
    ident = analyse(jac[:n_data], r[:n_data], final.names, values,
                    ranges=np.array([f.span for f in final.free]))
    params = apply_values(final.base, final.names, values)
    offset = tuple(float(v) for v in final.offsets_for(values[None])[0])
    check_finite(OFFSET_NAMES, offset)
    cost_final = float(final.cost(u_best[None])[0])
    status = dict(zip(final.names, parameter_status(ident, final.names, ())))
    warnings = [w for w in _bound_warnings(final, u_best, values, jac_u, r)
                if not status[w.split()[0]].startswith('not determined')]
    if cost_final > cost_start:
        warnings.append('the fit did not improve on its data-initialised start')
    scores[chosen] = replace(best, values=problem.to_values(u_id), u=u_id)

    nominal_offset = np.asarray(offset0, float)
    pair_offsets = np.vstack([nominal_offset, np.asarray(offset)])
    if validate:
        stage_of('validation recordings', 0)
        val_win = build_windows(validate, settings.horizon, lookback=lookback, dt=settings.dt)
        held = score_windows([nominal, params], pair_offsets, val_win, settings, 'validation')
        held_sets = [HeldSet(val_win, params, np.asarray(offset))]
        scheme = ('the validation recordings (' +
                  ', '.join(Path(d.name).name for d in validate) + '), which the fit did not see')
    elif groups:
        held, held_sets = [], []
        for fold in folds[chosen_variant]:
            in_group = np.isin(all_win.bag, fold.group)
            held += score_windows([nominal, fold.params], np.vstack([nominal_offset, fold.offset]),
                                  all_win.subset(in_group), settings, 'held-out recording')
            held_sets.append(HeldSet(all_win.subset(in_group), fold.params, fold.offset))
        held.sort(key=lambda b: list(all_win.names).index(b.name))
        if len(variants) > 1:
            scheme += ('; variants compared on them (held-out cost, lower is better): ' +
                       ', '.join(f'{v.label} {num(variant_costs[v], 4)}' for v in variants) +
                       f'; kept: {chosen_variant.label}')
    elif holdout.any():
        held = score_windows([nominal, params], pair_offsets, all_win.subset(holdout), settings,
                             'held-out windows')
        held_sets = [HeldSet(all_win.subset(holdout), params, np.asarray(offset))]
        scheme = (f'every {ordinal(settings.holdout_every)} pair of '
                  f'{settings.horizon:g}-s windows of '
                  f'{"the recording" if len(train) == 1 else "each recording"}, left out of the '
                  'fit (with one recording; a second recording is a stronger test)')
    else:
        held, scheme, held_sets = [], '', []
    training = score_windows([nominal, params], pair_offsets,
                             fit_win if not by_recording else all_win, settings, 'training')
    verdict = judge(held, training, settings, scheme=scheme,
                    undetermined=[n for n, st in status.items()
                                  if st.startswith('not determined')],
                    n_free=len(final.names))
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
        structure=dict(cand.structure), offset=offset,  # type: ignore[arg-type]
        offset_fitted=fit_offset, cost_start=cost_start, cost_final=cost_final,
        n_evals=sum(s.problem.n_evals for s in scores) +
        (problem.n_evals if problem is not best.problem else 0),
        wall_time=time.perf_counter() - started,
        cpu_time=time.process_time() - cpu0, global_result=result, polish_result=polish_res,
        identifiability=ident, train_names=tuple(d.name for d in train),
        validate_names=tuple(d.name for d in validate), scores=scores, chosen=chosen,
        stage=stage, verdict=verdict, windows=all_win, holdout=holdout, warnings=warnings,
        fixed_names=tuple(fixed), held_sets=held_sets, measured=dict(settings.measured),
        command_kinds=(train[0].steering_kind, train[0].drive_command))


def check_finite(names: Sequence[str], values: Sequence[float] | Array) -> None:
    """DegenerateError (exit status 3) naming the first parameter that is NaN or infinite: a
    fit that degenerated writes nothing."""
    from rc_sim_description.errors import DegenerateError

    for name, value in zip(names, values):
        if not math.isfinite(float(value)):
            raise DegenerateError(f'the fit degenerated: {name} became {value} (nothing '
                                  'written; check the recordings and the fit settings)')


def check_fit_size(datasets: Sequence[Dataset], settings: FitSettings, n_free: int,
                   lookback: float) -> None:
    """The largest batch of the fit (a Jacobian: n + 1 parameter sets, or a CMA-ES population,
    times the windows, times the command grid) within the memory limit of docs/limits.md,
    before anything of that size is allocated (ConfigError, exit status 2). The windows are
    counted from the recordings' durations (at most one per horizon, plus one per recording)."""
    from rc_sim_description.limits import MAX_MEMORY_MB

    sets = max(n_free + 1, settings.popsize or 0, 4 + int(3 * math.log(max(n_free, 1))))
    windows = sum(int(ds.duration / settings.horizon) + 1 for ds in datasets)
    steps = int((lookback + settings.horizon) / settings.dt) + 3
    out = int(settings.horizon / 0.01) + 2
    # per car and command step: the delayed steering and drive commands and their tiled copies
    # (8 float64 arrays); per car and output sample: the rollout's 12 state outputs
    megabytes = sets * windows * (8 * steps + 12 * out) * 8 / 1e6
    MAX_MEMORY_MB.check(megabytes, f'fit batch of {sets} parameter sets x {windows} windows x '
                        f'{steps} steps (simulation.dt {settings.dt:g} s, cost.horizon '
                        f'{settings.horizon:g} s)')


def check_channels(win: FitWindows, settings: FitSettings) -> None:
    """At least one channel with a cost weight > 0 has data in the recordings (a one-line
    CalibrationError naming the weights and what the recordings have)."""
    from rc_sim_calibration.cost import CHANNELS
    from rc_sim_calibration.problem import sample_masks

    masks = sample_masks(win)
    weighted = [ch for ch in CHANNELS if settings.cost.weight(ch) > 0]
    if not any(ch in masks and masks[ch].any() for ch in weighted):
        have = [ch for ch, m in masks.items() if m.any()]
        raise CalibrationError(
            f'fit config {settings.source}: cost.weights: no channel with a weight > 0 has data '
            f'in the recordings (weighted: {", ".join(weighted) or "none"}; the recordings '
            f'have: {", ".join(have) or "none"})')


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
