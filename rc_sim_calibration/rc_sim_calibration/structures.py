"""Model structures of the fit: the candidates, their free parameters and start values, and the
choice among them on held-out windows (a parsimony rule).

Candidates (``free: auto``): servo first or second order, each with a fitted transport delay
(or also none with ``structures.delay: [true, false]``), with instantaneous tyres (and on request,
``structures.tyre_relaxation: [false, true]``, also with fitted tyre relaxation lengths), with the
drive the commands need (a speed-loop ESC for speed commands, the ESC + DC motor model for a
throttle). Each starts from the staged identification and, when one was fitted, from a related
candidate's values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rc_sim_calibration.problem import Problem
from rc_sim_calibration.settings import DRIVE_DELAY, OFFSET_NAMES, FitSettings
from rc_sim_calibration.staged import StageResult
from rc_sim_calibration.windows import FitWindows
from rc_sim_description.params import VehicleParams

__all__ = ['DRIVE_NAMES', 'RELAX_NAMES', 'Candidate', 'CandidateScore', 'StructureKey',
           'candidates', 'choose', 'holdout_mask', 'relaxation_start', 'stage_start',
           'structure_key', 'warm_start']

Array = np.ndarray
#: the tyre relaxation lengths a relaxed candidate fits
RELAX_NAMES = ('relaxation_length_front', 'relaxation_length_rear')
#: (servo model, fitted delay, tyre relaxation) of a candidate
StructureKey = tuple[str, bool, bool]
#: the drive's free parameters: a speed-loop ESC, an ESC + DC motor (throttle)
SPEED_DRIVE_NAMES = ('effective_wheel_radius', 'drive_time_constant', 'max_acceleration',
                     'max_deceleration')
THROTTLE_DRIVE_NAMES = ('motor_force_gain', 'motor_back_emf_gain', 'rolling_resistance',
                        'viscous_resistance', 'drag_coefficient', 'steering_drag',
                        'throttle_dead_band', 'throttle_time_constant')
#: an acceleration drive (acceleration or force commands): its gain, lag and limits, and the
#: resistances it works against
ACCELERATION_DRIVE_NAMES = ('acceleration_gain', 'acceleration_time_constant',
                            'max_acceleration', 'max_deceleration', 'rolling_resistance',
                            'viscous_resistance', 'steering_drag')
#: every drive parameter (``structures.drive: nominal`` keeps them at their base values)
DRIVE_NAMES = frozenset((*SPEED_DRIVE_NAMES, *THROTTLE_DRIVE_NAMES, *ACCELERATION_DRIVE_NAMES,
                         DRIVE_DELAY))
#: the drive model each drive command kind of a recording needs
_DRIVE_MODEL = {'throttle': 'throttle', 'acceleration': 'acceleration'}
_DRIVE_LABEL = {'throttle': 'throttle', 'acceleration': 'acceleration',
                'first_order': 'speed-loop ESC'}


@dataclass(frozen=True)
class Candidate:
    """A model structure: its label, the vehicle keys it sets and its free parameters."""

    label: str
    structure: dict[str, Any]
    names: tuple[str, ...]

    @property
    def key(self) -> StructureKey:
        """(servo model, fitted delay, tyre relaxation)."""
        return structure_key(self.structure)


def structure_key(structure: dict[str, Any]) -> StructureKey:
    """(servo model, fitted delay, tyre relaxation) of a candidate's structure keys."""
    return (structure.get('servo_model', ''), structure.get('command_latency') != 0.0,
            structure.get('relaxation_length_front', 0.0) > 0.0)


def _free_auto(kinds: tuple[str, str], servo: str, delay: bool, fit_offset: bool,
               tyre_model: str, relax: bool) -> tuple[str, ...]:
    steer_kind, drive_kind = kinds
    names = ['steering_offset']
    names += (['steering_gain_left', 'steering_gain_right', 'steering_curvature_left',
               'steering_curvature_right'] if steer_kind == 'normalised' else
              ['steering_gain', 'steering_linkage_quadratic', 'steering_linkage_cubic'])
    names += ['servo_time_constant'] if servo == 'first_order' else \
        ['servo_natural_frequency', 'servo_damping_ratio']
    names += ['max_steering_rate', 'steering_backlash']
    if delay:
        names.append('command_latency')
    names.append(DRIVE_DELAY)
    names += ['cornering_stiffness_front', 'cornering_stiffness_rear', 'yaw_inertia',
              'cg_height']
    if tyre_model == 'fiala':
        names.append('mu2')                          # lateral friction: where the tyres saturate
    if relax:
        names += list(RELAX_NAMES)
    names += list({'throttle': THROTTLE_DRIVE_NAMES, 'acceleration': ACCELERATION_DRIVE_NAMES
                   }.get(drive_kind, SPEED_DRIVE_NAMES))
    if fit_offset:
        names += list(OFFSET_NAMES)
    return tuple(names)


def candidates(settings: FitSettings, kinds: tuple[str, str], base: VehicleParams,
               fit_offset: bool) -> list[Candidate]:
    """The structures to compare (``free: auto``) or the one given by ``free`` and the base."""
    if not settings.free_auto:
        names = tuple(settings.free)
        if fit_offset:
            names += tuple(n for n in OFFSET_NAMES if n not in names)
        return [Candidate('as given', {}, names)]
    drive = _DRIVE_MODEL.get(kinds[1], 'first_order')
    tyres = settings.tyre_model or base.tyres.tyre_model
    sigma0 = relaxation_start(base)
    out = []
    for relax in settings.relax_options:           # instantaneous first: they warm-start the rest
        for delay in settings.delay_options:       # delayed ones first: they warm-start the rest
            for servo in settings.servo_models:
                structure: dict[str, Any] = {'servo_model': servo, 'drive_model': drive,
                                             'tyre_model': tyres}
                if not delay:
                    structure['command_latency'] = 0.0
                for name in RELAX_NAMES:
                    structure[name] = sigma0 if relax else 0.0
                label = f'servo {servo.replace("_", "-")}, {"delay" if delay else "no delay"}, ' \
                    f'drive {_DRIVE_LABEL[drive]}' + \
                    (', tyre relaxation' if relax else '')
                out.append(Candidate(label, structure, _free_auto(kinds, servo, delay, fit_offset,
                                                                  tyres, relax)))
    return out


def relaxation_start(base: VehicleParams) -> float:
    """Start value [m] of the fitted relaxation lengths: the base's front one when set, else
    the wheel radius (a start of the order of the tyre's size; the data move it)."""
    sigma = base.tyres.relaxation_length_front
    return sigma if sigma > 0.0 else base.geometry.wheel_radius


def warm_start(cand: Candidate, done: dict[StructureKey, dict[str, float]]
               ) -> dict[str, float] | None:
    """Start values of a candidate from a fitted related one (every other value carried over):
    a relaxed structure from its instantaneous twin (the relaxation lengths from the base);
    the second-order servo from the first-order one with the same mean delay (2 zeta / wn =
    tau, zeta 0.7); a structure without delay from its delayed twin, the delay added to the
    servo's mean lag. None when no related candidate was fitted yet."""
    servo, delay, relax = cand.key
    if relax and (servo, delay, False) in done:
        return dict(done[(servo, delay, False)])
    if delay and servo == 'second_order' and ('first_order', True, relax) in done:
        start = dict(done[('first_order', True, relax)])
        tau = start.pop('servo_time_constant', 0.05)
        return {**start, 'servo_damping_ratio': 0.7,
                'servo_natural_frequency': 1.4 / max(tau, 0.005)}
    if not delay and (servo, True, relax) in done:
        start = dict(done[(servo, True, relax)])
        lat = start.pop('command_latency', 0.0)
        if servo == 'first_order':
            start['servo_time_constant'] = start.get('servo_time_constant', 0.05) + lat
        else:
            zeta = start.get('servo_damping_ratio', 0.7)
            mean = 2.0 * zeta / start.get('servo_natural_frequency', 28.0) + lat
            start['servo_natural_frequency'] = 2.0 * zeta / max(mean, 0.005)
        return start
    return None


def stage_start(cand: Candidate, stage: StageResult, stage0: StageResult | None
                 ) -> dict[str, float]:
    """Start values from the staged identification (with or without a delay)."""
    src = stage0 if cand.structure.get('command_latency') == 0.0 and stage0 else stage
    start = dict(src.values)
    if cand.structure.get('servo_model') == 'second_order':
        tau = start.get('servo_time_constant', 0.05)
        start['servo_damping_ratio'] = 0.7
        start['servo_natural_frequency'] = 1.4 / max(tau, 0.01)  # mean delay 2 zeta / wn = tau
    return start


@dataclass
class CandidateScore:
    """One structure's fit and its figures on the selection windows."""

    candidate: Candidate
    values: Array
    cost: float
    rmse: dict[str, float]
    problem: Problem
    u: Array


def choose(scores: Sequence[CandidateScore], margin: float) -> int:
    """The candidate with the fewest free parameters among those whose held-out cost is within
    ``margin`` (relative) of the best (a parsimony rule: a richer structure must predict the
    held-out windows clearly better to be kept)."""
    if len(scores) < 2:
        return 0
    costs = np.array([s.cost for s in scores])
    best = float(np.nanmin(costs))
    near = [i for i, c in enumerate(costs) if c <= best * (1.0 + margin)]
    return min(near, key=lambda i: (len(scores[i].candidate.names), costs[i]))


def holdout_mask(win: FitWindows, every: int) -> Array:
    """Every ``every``-th pair of windows (by grid number) of each recording."""
    mask = (win.index // 2) % every == every - 1
    if mask.sum() < 2 or (~mask).sum() < 2:
        return np.zeros(win.n, dtype=bool)
    return np.asarray(mask)
