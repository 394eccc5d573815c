"""Fit settings (free set, bounds, priors, cost, optimiser) from ``config/fit_default.yaml``.

A user fit YAML merges over the packaged defaults key by key; the command line overrides both.
Free parameters are vehicle.yaml leaf names (``steering_gain``) or a Pacejka coefficient
(``pacejka_lateral.B``). Bounds forms: ``{relative: [a, b]}`` -> [a v0, b v0] (v0 = base value),
``{offset: [a, b]}`` -> [v0 + a, v0 + b], ``{absolute: [a, b]}``. Priors: ``{mean, std}`` or
``{relative_std}`` (mean = v0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_calibration.cost import CostConfig
from rc_sim_calibration.dataset import DatasetOptions
from rc_sim_calibration.errors import CalibrationError
from rc_sim_description.errors import VehicleParamsError
from rc_sim_description.params import VehicleParams, section_of
from rc_sim_description.paths import share_path
from rc_sim_description.yamlio import read_yaml

__all__ = [
    'DRIVE_DELAY',
    'MAX_EVALUATIONS',
    'OFFSET_NAMES',
    'PHYSICAL_LOWER',
    'PSEUDO_NAMES',
    'SERVO_MODELS',
    'FitSettings',
    'FreeParameter',
    'apply_values',
    'count_in',
    'default_fit_yaml',
    'load_fit_settings',
    'override_values',
    'parameter_value',
    'resolve_free',
]

_PACEJKA = ('pacejka_lateral', 'pacejka_longitudinal')
_TOP_KEYS = ('free', 'bounds', 'default_bounds', 'priors', 'measured_priors', 'cost',
             'optimizer', 'simulation', 'data', 'structures', 'verdict')
#: free parameter -> the measured vehicle keys that fix its prior (the first given wins)
MEASURED_SOURCES: dict[str, tuple[str, ...]] = {
    'effective_wheel_radius': ('effective_wheel_radius', 'wheel_radius'),
}
#: verdict.hold_out: whole recordings (when there are two or more) or windows of each
HOLD_OUT = ('recordings', 'windows')
#: structures.drive: the drive calibrated, or kept at its nominal (measured, vehicle.yaml)
#: values; with two or more recordings the one that predicts held-out recordings best is kept
DRIVE_OPTIONS = ('fitted', 'nominal')
#: fit parameters that are not vehicle.yaml keys: the measured frame in base_link (x, y, yaw)
OFFSET_NAMES = ('pose_offset_x', 'pose_offset_y', 'pose_offset_yaw')
#: identification-only parameter: the drive path's delay minus the steering path's [s] (the engine
#: has one command_latency; the written model folds it into the drive's lag, docs/calibration.md)
DRIVE_DELAY = 'drive_delay'
PSEUDO_NAMES = (*OFFSET_NAMES, DRIVE_DELAY)
#: lower bounds that are physical limits, not search limits (a value there is no warning)
PHYSICAL_LOWER = {
    'command_latency': 0.0, 'throttle_dead_band': 0.0, 'steering_dead_band': 0.0,
    'steering_backlash': 0.0, 'drag_coefficient': 0.0, 'steering_curvature_left': 0.0,
    'steering_curvature_right': 0.0, 'viscous_resistance': 0.0, 'rolling_resistance': 0.0,
    'motor_back_emf_gain': 0.0, 'steering_drag': 0.0, 'relaxation_length_front': 0.0,
    'relaxation_length_rear': 0.0,
}
SERVO_MODELS = ('first_order', 'second_order')


def default_fit_yaml() -> Path:
    """The packaged default fit settings."""
    return share_path('config/fit_default.yaml', 'rc_sim_calibration')


@dataclass(frozen=True)
class FitSettings:
    """Everything a fit needs besides the bags and the base vehicle parameters."""

    free: tuple[str, ...]
    bounds: dict[str, Any]
    default_bounds: dict[str, Any]
    priors: dict[str, Any]
    cost: CostConfig
    horizon: float
    optimizer: str
    budget: int
    popsize: int | None
    sigma0: float
    polish: bool
    polish_max_nfev: int
    seed: int
    model: str
    integrator: str
    dt: float
    data: DatasetOptions
    source: str
    free_auto: bool = False
    servo_models: tuple[str, ...] = SERVO_MODELS
    delay_options: tuple[bool, ...] = (True,)
    relax_options: tuple[bool, ...] = (False,)
    drive_options: tuple[str, ...] = ('fitted',)
    holdout_every: int = 3
    worse_tolerance: float = 0.02
    stage_budget: int = 300
    load_transfer: bool = True
    robust: bool = True
    tyre_model: str | None = 'fiala'
    parsimony: float = 0.02
    hold_out: str = 'recordings'
    prior_strength: float = 1.0
    prior_strengths: tuple[float, ...] = ()    # candidates chosen on held-out recordings
    measured_priors: dict[str, float] = field(default_factory=dict)
    measured: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FreeParameter:
    """One fitted parameter: name, start (base) value, bounds and optional Gaussian prior."""

    name: str
    start: float
    lower: float
    upper: float
    prior_mean: float | None = None
    prior_std: float | None = None

    @property
    def span(self) -> float:
        """Width of the search range."""
        return self.upper - self.lower


def _read(path: Path) -> dict[str, Any]:
    data = read_yaml(path, CalibrationError, label='fit config ')
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CalibrationError(f'fit config {path}: top level must be a mapping')
    for key in data:
        if key not in _TOP_KEYS:
            raise CalibrationError(f'fit config {path}: unknown key {key!r} '
                                   f'(known: {", ".join(_TOP_KEYS)})')
    return data


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Section-wise merge; a parameter's bounds or prior entry is replaced as a whole."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v} if k in ('bounds', 'priors') else _merge(out[k], v)
        else:
            out[k] = v
    return out


def _get(section: Mapping[str, Any], key: str, kind: type, where: str,
         nullable: bool = False) -> Any:
    if key not in section:
        raise CalibrationError(f'{where}.{key}: missing key')
    v = section[key]
    if v is None and nullable:
        return None
    if kind is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise CalibrationError(f'{where}.{key}: must be a finite number, got {v!r}')
        return float(v)
    if kind is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise CalibrationError(f'{where}.{key}: must be an integer, got {v!r}')
        return v
    if not isinstance(v, kind):
        raise CalibrationError(f'{where}.{key}: must be a {kind.__name__}, got {v!r}')
    return v


def load_fit_settings(path: str | os.PathLike[str] | None = None, *,
                      free: Sequence[str] | None = None,
                      overrides: Mapping[str, Mapping[str, Any]] | None = None) -> FitSettings:
    """Packaged defaults, merged with ``path`` then ``overrides`` ({section: {key: value}})."""
    data = _read(default_fit_yaml())
    source = 'fit_default.yaml'
    if path is not None:
        data = _merge(data, _read(Path(path)))
        source = str(path)
    if overrides:
        data = _merge(data, {k: dict(v) for k, v in overrides.items()})
    where = f'fit config {source}'
    names = list(free) if free is not None else data.get('free')
    auto = names == 'auto'
    if auto:
        names = []
    elif not isinstance(names, list) or not names or \
            not all(isinstance(n, str) for n in names):
        raise CalibrationError(f'{where}: free: must be auto or a non-empty list of parameter '
                               'names')
    if len(set(names)) != len(names):
        raise CalibrationError(f'{where}: free: a parameter is listed twice')
    for key in ('bounds', 'priors', 'cost', 'optimizer', 'simulation', 'data',
                'default_bounds', 'structures', 'verdict'):
        if not isinstance(data.get(key) or {}, dict):
            raise CalibrationError(f'{where}: {key}: must be a mapping')
    cost = data['cost']
    opt = data['optimizer']
    sim = data['simulation']
    d = data['data']
    try:
        cost_config = CostConfig(weights=dict(cost.get('weights') or {}),
                                 scales={**CostConfig().scales, **(cost.get('scales') or {})},
                                 metric=str(cost.get('metric', 'mse')))
    except TypeError:
        raise CalibrationError(f'{where}: cost: weights and scales must be numbers') from None
    known_data = {f.name for f in fields(DatasetOptions)}
    for key in d:
        if key not in known_data:
            raise CalibrationError(f'{where}: data.{key}: unknown key '
                                   f'(known: {", ".join(sorted(known_data))})')
    dopts = DatasetOptions(**{k: v for k, v in d.items() if k != 'mapper_overrides'})
    if not dopts.rate_hz > 0:
        raise CalibrationError(f'{where}: data.rate_hz: must be > 0, got {dopts.rate_hz!r}')
    settings = FitSettings(
        free=tuple(names), bounds=dict(data.get('bounds') or {}),
        default_bounds=dict(data.get('default_bounds') or {'relative': [0.5, 2.0]}),
        priors=dict(data.get('priors') or {}), cost=cost_config,
        horizon=_get(cost, 'horizon', float, f'{where}: cost'),
        optimizer=_get(opt, 'name', str, f'{where}: optimizer'),
        budget=_get(opt, 'budget', int, f'{where}: optimizer'),
        popsize=_get(opt, 'popsize', int, f'{where}: optimizer', nullable=True),
        sigma0=_get(opt, 'sigma0', float, f'{where}: optimizer'),
        polish=_get(opt, 'polish', bool, f'{where}: optimizer'),
        polish_max_nfev=_get(opt, 'polish_max_nfev', int, f'{where}: optimizer'),
        seed=_get(opt, 'seed', int, f'{where}: optimizer'),
        model=_get(sim, 'model', str, f'{where}: simulation'),
        integrator=_get(sim, 'integrator', str, f'{where}: simulation'),
        dt=_get(sim, 'dt', float, f'{where}: simulation'),
        data=dopts, source=source, free_auto=auto, **_structure_settings(data, where),
        load_transfer=bool(_get({'load_transfer': sim.get('load_transfer', True)},
                                'load_transfer', bool, f'{where}: simulation')),
        robust=bool(_get({'robust': cost.get('robust', True)}, 'robust', bool,
                         f'{where}: cost')),
        tyre_model=_tyre_model(sim.get('tyre_model', 'fiala'), where),
        hold_out=_hold_out(data.get('verdict') or {}, where),
        prior_strength=_prior_strength(cost, where)[0],
        prior_strengths=_prior_strength(cost, where),
        measured_priors=_measured_priors(data.get('measured_priors'), where))
    if not MIN_HORIZON <= settings.horizon <= MAX_HORIZON:
        raise CalibrationError(f'{where}: cost.horizon: must be in [{MIN_HORIZON:g}, '
                               f'{MAX_HORIZON:g}] s, got {settings.horizon:g}')
    if not MIN_DT <= settings.dt <= MAX_DT:
        raise CalibrationError(f'{where}: simulation.dt: must be in [{MIN_DT:g}, {MAX_DT:g}] s '
                               f'(the physics step of the replay), got {settings.dt:g}')
    if settings.dt >= settings.horizon:
        raise CalibrationError(f'{where}: simulation.dt {settings.dt:g} s must be below '
                               f'cost.horizon {settings.horizon:g} s')
    count_in(settings.budget, 1, MAX_EVALUATIONS, f'{where}: optimizer.budget')
    if settings.popsize is not None:
        count_in(settings.popsize, 2, 10_000, f'{where}: optimizer.popsize')
    if settings.seed < 0:
        raise CalibrationError(f'{where}: optimizer.seed: must be >= 0, got {settings.seed}')
    if not 0 < settings.sigma0 <= 1:
        raise CalibrationError(f'{where}: optimizer.sigma0: must be in (0, 1], got '
                               f'{settings.sigma0}')
    return settings


#: evaluations of one optimiser run: 100,000 is some hours of a long fit on this machine
MAX_EVALUATIONS = 100_000
#: [s] physics step of the replay: 0.1 ms (ten times finer than the engine's default 1 ms; a
#: step of microseconds multiplies every batch by thousands) to 50 ms
MIN_DT, MAX_DT = 1e-4, 0.05
#: [s] window length: 0.05 s (a few pose samples) to a minute
MIN_HORIZON, MAX_HORIZON = 0.05, 60.0
#: [s of driving] largest prior strength (beyond it the priors are constants: fix the parameter)
MAX_PRIOR_STRENGTH = 1e6


def count_in(value: int, low: int, high: int, where: str) -> None:
    """A count within [low, high]; a huge value is described by its size, not printed."""
    if low <= value <= high:
        return
    text = str(value) if abs(value) < 10 ** 12 else f'a {len(str(abs(value)))}-digit number'
    raise CalibrationError(f'{where}: must be in [{low:,}, {high:,}], got {text}')


def _hold_out(verdict: Mapping[str, Any], where: str) -> str:
    value = verdict.get('hold_out', 'recordings')
    if value not in HOLD_OUT:
        raise CalibrationError(f'{where}: verdict.hold_out: {" or ".join(HOLD_OUT)}, got '
                               f'{value!r}')
    return str(value)


def _prior_strength(cost: Mapping[str, Any], where: str) -> tuple[float, ...]:
    """``cost.prior_strength``: seconds of driving the priors weigh as; a list = candidates,
    the one that predicts held-out recordings best is kept (with two or more recordings)."""
    raw = cost.get('prior_strength', 1.0)
    items = raw if isinstance(raw, list) else [raw]
    if not items or len(items) > 8:
        raise CalibrationError(f'{where}: cost.prior_strength: a number or a list of 1 to 8 '
                               'numbers [s of driving]')
    out = []
    for value in items:
        v = _get({'prior_strength': value}, 'prior_strength', float, f'{where}: cost')
        if not 0 < v <= MAX_PRIOR_STRENGTH:
            raise CalibrationError(f'{where}: cost.prior_strength: must be in (0, '
                                   f'{MAX_PRIOR_STRENGTH:g}] s of driving, got {v:g}')
        out.append(v)
    return tuple(dict.fromkeys(out))


def _measured_priors(section: Any, where: str) -> dict[str, float]:
    """``measured_priors: {default: r, <parameter>: r}``: relative standard deviations of the
    priors of free parameters whose value was measured (given with --params)."""
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise CalibrationError(f'{where}: measured_priors: must be a mapping of parameter -> '
                               'relative standard deviation')
    out = {}
    for key in section:
        if key != 'default':
            _check_name(str(key))
        r = _get(section, key, float, f'{where}: measured_priors')
        if not 0 < r <= 10:
            raise CalibrationError(f'{where}: measured_priors.{key}: a relative standard '
                                   f'deviation in (0, 10], got {r:g}')
        out[str(key)] = r
    return out


def _tyre_model(value: Any, where: str) -> str | None:
    if value is None or value in ('linear', 'fiala', 'pacejka'):
        return value  # type: ignore[no-any-return]
    raise CalibrationError(f'{where}: simulation.tyre_model: linear, fiala, pacejka or null (the '
                           f"base parameters' model), got {value!r}")


def _bool_options(st: Mapping[str, Any], key: str, default: bool, where: str,
                  meaning: str) -> list[bool]:
    """``structures.<key>``: a bool or a non-empty list of bools (the candidates to try)."""
    value = st.get(key, [default])
    if isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, bool) for v in value):
        raise CalibrationError(f'{where}: structures.{key}: a list of {meaning}')
    return value


def _structure_settings(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """structures: {servo: [...], delay: [...], tyre_relaxation: [...], holdout_every},
    verdict: {worse_tolerance},
    optimizer.stage_budget."""
    st = data.get('structures') or {}
    servo = st.get('servo', list(SERVO_MODELS))
    if isinstance(servo, str):
        servo = [servo]
    if not isinstance(servo, list) or not servo or any(s not in SERVO_MODELS for s in servo):
        raise CalibrationError(f'{where}: structures.servo: a list of {", ".join(SERVO_MODELS)}')
    delay = _bool_options(st, 'delay', True, where,
                          'true (fit a transport delay) and/or false (none)')
    relax = _bool_options(st, 'tyre_relaxation', False, where,
                          'false (instantaneous tyres) and/or true (fitted relaxation lengths)')
    every = _get({'holdout_every': st.get('holdout_every', 3)}, 'holdout_every', int,
                 f'{where}: structures')
    if every < 2:
        raise CalibrationError(f'{where}: structures.holdout_every: must be >= 2, got {every}')
    verdict = data.get('verdict') or {}
    tol = _get({'worse_tolerance': verdict.get('worse_tolerance', 0.02)}, 'worse_tolerance',
               float, f'{where}: verdict')
    if not 0 <= tol < 1:
        raise CalibrationError(f'{where}: verdict.worse_tolerance: must be in [0, 1), got {tol}')
    opt = data.get('optimizer') or {}
    stage = _get({'stage_budget': opt.get('stage_budget', 300)}, 'stage_budget', int,
                 f'{where}: optimizer')
    count_in(stage, 0, MAX_EVALUATIONS, f'{where}: optimizer.stage_budget')
    parsimony = _get({'parsimony': st.get('parsimony', 0.02)}, 'parsimony', float,
                     f'{where}: structures')
    if not 0 <= parsimony < 1:
        raise CalibrationError(f'{where}: structures.parsimony: must be in [0, 1), got '
                               f'{parsimony}')
    drive = st.get('drive', list(DRIVE_OPTIONS))
    if isinstance(drive, str):
        drive = [drive]
    if not isinstance(drive, list) or not drive or any(d not in DRIVE_OPTIONS for d in drive):
        raise CalibrationError(f'{where}: structures.drive: a list of {", ".join(DRIVE_OPTIONS)} '
                               '(fitted: the drive is calibrated; nominal: it keeps the measured '
                               'and vehicle.yaml values)')
    return {'servo_models': tuple(dict.fromkeys(servo)), 'delay_options':
            tuple(dict.fromkeys(delay)), 'relax_options': tuple(dict.fromkeys(relax)),
            'drive_options': tuple(dict.fromkeys(drive)),
            'holdout_every': every, 'worse_tolerance': tol,
            'stage_budget': stage, 'parsimony': parsimony}


# --------------------------------------------------------------------------- parameters
def _check_name(name: str) -> None:
    if name in PSEUDO_NAMES:
        return
    leaf, _, coeff = name.partition('.')
    if coeff:
        if leaf not in _PACEJKA or coeff not in ('B', 'C', 'D', 'E'):
            raise CalibrationError(f'free parameter {name!r}: dotted names must be '
                                   'pacejka_lateral.B|C|D|E or pacejka_longitudinal.B|C|D|E')
        return
    try:
        section_of(leaf)
    except VehicleParamsError as exc:
        raise CalibrationError(f'free parameter: {exc}') from None


def parameter_value(params: VehicleParams, name: str,
                    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> float:
    """Current numeric value of a leaf (or ``pacejka_*.X``) parameter; ``pose_offset_*`` from
    ``offset``; the null leaves take their effective values (rolling radius, map gains)."""
    _check_name(name)
    if name in OFFSET_NAMES:
        return float(offset[OFFSET_NAMES.index(name)])
    if name == DRIVE_DELAY:
        return 0.0
    if name == 'effective_wheel_radius':
        return float(params.effective_wheel_radius)
    if name in ('steering_gain_left', 'steering_gain_right'):
        return float(params.normalised_steering_gains[name.endswith('right')])
    leaf, _, coeff = name.partition('.')
    value = params.leaf_values()[leaf]
    if coeff:
        value = value[coeff]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalibrationError(f'free parameter {name!r} is not a number (got {value!r}); '
                               f'numeric parameters: {", ".join(_numeric_names(params))}')
    return float(value)


def _numeric_names(params: VehicleParams) -> list[str]:
    return [k for k, v in params.leaf_values().items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _bounds(spec: Any, v0: float, name: str, where: str) -> tuple[float, float]:
    if not isinstance(spec, dict) or len(spec) != 1:
        raise CalibrationError(f'{where}.{name}: must be one of {{relative: [a, b]}}, '
                               '{offset: [a, b]} or {absolute: [a, b]}')
    (kind, pair), = spec.items()
    if (kind not in ('relative', 'offset', 'absolute') or not isinstance(pair, list) or
            len(pair) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                      and math.isfinite(x) for x in pair)):
        raise CalibrationError(f'{where}.{name}: must be one of {{relative: [a, b]}}, '
                               '{offset: [a, b]} or {absolute: [a, b]} with finite numbers')
    a, b = float(pair[0]), float(pair[1])
    if not a < b:
        raise CalibrationError(f'{where}.{name}: {{{kind}: [{a:g}, {b:g}]}}: the first number '
                               'must be below the second')
    if kind == 'relative':
        if v0 == 0:
            raise CalibrationError(f'{where}.{name}: relative bounds of a parameter whose base '
                                   'value is 0; give offset or absolute bounds')
        lo, hi = sorted((a * v0, b * v0))
    elif kind == 'offset':
        lo, hi = v0 + a, v0 + b
    else:
        lo, hi = a, b
    if not lo < hi:
        raise CalibrationError(f'{where}.{name}: lower bound {lo:g} must be below upper {hi:g}')
    return lo, hi


def resolve_free(settings: FitSettings, base: VehicleParams, names: Sequence[str] | None = None,
                 start: Mapping[str, float] | None = None,
                 offset: tuple[float, float, float] = (0.0, 0.0, 0.0), *,
                 measured: Mapping[str, Any] | None = None) -> list[FreeParameter]:
    """Check names, compute bounds around the base values and priors (one-line errors).

    ``names`` defaults to ``settings.free``; ``start`` gives start values (e.g. from the staged
    identification), clipped into the bounds; a ``relative_std`` prior is centred on the base
    value (what was measured, or the nominal one). A parameter whose value was ``measured``
    (a vehicle key of the user's --params, :data:`MEASURED_SOURCES`) gets the prior of
    ``measured_priors`` centred on it when that is tighter.
    """
    out: list[FreeParameter] = []
    start = start or {}
    for name in (settings.free if names is None else names):
        v0 = parameter_value(base, name, offset)
        where = f'fit config {settings.source}: bounds'
        if name in settings.bounds:
            lo, hi = _bounds(settings.bounds[name], v0, name, where)
        else:
            if v0 == 0:
                raise CalibrationError(f'free parameter {name!r} has base value 0 and no bounds; '
                                       f'add bounds.{name} to the fit config')
            lo, hi = _bounds(settings.default_bounds, v0, name,
                             f'fit config {settings.source}: default_bounds')
        if not lo <= v0 <= hi:
            raise CalibrationError(f'free parameter {name!r}: start value {v0:g} is outside its '
                                   f'bounds [{lo:g}, {hi:g}]')
        s0 = float(np.clip(start.get(name, v0), lo, hi))
        mean = std = None
        prior = settings.priors.get(name)
        if prior is not None:
            pw = f'fit config {settings.source}: priors.{name}'
            if not isinstance(prior, dict):
                raise CalibrationError(f'{pw}: must be {{mean, std}} or {{relative_std}}')
            if 'relative_std' in prior:      # centred on the base (measured / nominal) value
                mean = v0
                std = _get(prior, 'relative_std', float, pw) * abs(v0 or s0)
            else:
                mean, std = _get(prior, 'mean', float, pw), _get(prior, 'std', float, pw)
            if not std > 0:
                raise CalibrationError(f'{pw}: the standard deviation must be > 0')
        rel = _measured_std(settings, name, measured or {})
        if rel is not None and v0 != 0 and (std is None or rel * abs(v0) < std):
            mean, std = v0, rel * abs(v0)
        out.append(FreeParameter(name, s0, lo, hi, mean, std))
    for name in settings.priors:
        if name not in settings.free:
            _check_name(name)
    return out


def _measured_std(settings: FitSettings, name: str, measured: Mapping[str, Any]
                  ) -> float | None:
    """Relative std of the prior of a measured parameter (None when it was not measured)."""
    sources = MEASURED_SOURCES.get(name, (name.partition('.')[0],))
    if not any(k in measured for k in sources) or not settings.measured_priors:
        return None
    return settings.measured_priors.get(name, settings.measured_priors.get('default'))


def apply_values(base: VehicleParams, names: Sequence[str], values: Sequence[float] | np.ndarray
                 ) -> VehicleParams:
    """``base`` with the named parameters replaced (validated; VehicleParamsError if invalid)."""
    kw: dict[str, Any] = {}
    for name, value in zip(names, values):
        if name in PSEUDO_NAMES:
            continue
        leaf, _, coeff = name.partition('.')
        if coeff:
            current = kw.get(leaf) or dict(base.leaf_values()[leaf])
            current[coeff] = float(value)
            kw[leaf] = current
        else:
            kw[leaf] = float(value)
    return base.with_values(**kw)


def override_values(params: VehicleParams, names: Sequence[str]) -> dict[str, Any]:
    """Leaf -> value mapping of the fitted parameters for :func:`dump_override` (the measured
    frame's offset is not a vehicle key and is left out)."""
    leaves = params.leaf_values()
    return {leaf: _tidy(leaves[leaf])
            for leaf in dict.fromkeys(n.partition('.')[0] for n in names
                                      if n not in PSEUDO_NAMES)}


def _tidy(value: Any) -> Any:
    """Floats rounded to 12 significant digits: 101.0, not 101.00000000000003, in the YAML."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f'{value:.12g}')
    return value

