"""The honest verdict of a fit: the calibrated model against three references on held-out data.

Held-out data are whole recordings whenever there are at least two (``rc_sim_calibration.fit``:
``--validate`` recordings, or each session, else each recording, predicted by a fit that did not
see it); with one recording, every third pair of its windows (left out of the fit). On the same
windows, per recording and channel (position, speed, yaw rate: pooled RMSE of the window
protocol), four predictors:

* **calibrated**: the fitted model;
* **nominal**: the same engine with the base parameters (vehicle.yaml and the measured values
  given with ``--params``): what the simulator does without calibration;
* **CTRV**: constant turn rate and velocity from each window's measured initial state (Schubert,
  Richter & Wanielik 2008): the floor any model driven by the commands must beat;
* **kinematic**: the kinematic bicycle on the measured geometry (Rajamani 2012, sec. 2.2), driven
  by the recorded commands through the nominal steering map, without actuator dynamics (the
  speed command as the speed; a duty car keeps its initial speed).

Rules: a channel is *worse* when the calibrated RMSE exceeds the nominal one by more than
``verdict.worse_tolerance`` (2 %) and a floor (1 mm, 1 mm/s, 1 mrad/s). Worse than nominal on
any held-out recording: the fit is rejected (exit status :data:`EXIT_WORSE`, one line naming
the recording). Worse than CTRV in position or yaw rate: a warning naming the recording (the
model, although better than not calibrating, predicts less well than extrapolating the measured
motion). When most free parameters are not determined by the recordings the fit is rejected
too (the data cannot support it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_calibration.baselines import (
    Windows,
    ctrv_predict,
    measured_from_reference,
    reference_from_measured,
)
from rc_sim_calibration.predict import predict, steering_targets
from rc_sim_calibration.problem import CHANNEL_UNITS, channel_rmse, sample_errors
from rc_sim_calibration.settings import FitSettings
from rc_sim_calibration.windows import FitWindows
from rc_sim_description.params import VehicleParams

__all__ = ['EXIT_WORSE', 'PREDICTORS', 'BagScore', 'Verdict', 'judge', 'kinematic_rmse', 'num',
           'ordinal', 'score_windows']

Array = np.ndarray
#: exit status of ``rcsim fit`` when the fit is rejected (2 is bad input)
EXIT_WORSE = 3
FLOORS = {'position': 0.001, 'speed': 0.001, 'yaw_rate': 0.001}
#: the predictors of every score, in table order
PREDICTORS = ('calibrated', 'nominal', 'ctrv', 'kinematic')
PREDICTOR_LABELS = {'calibrated': 'calibrated', 'nominal': 'nominal', 'ctrv': 'CTRV',
                    'kinematic': 'kinematic'}
#: channels on which CTRV being better is reported (its speed is the initial one held)
CTRV_CHANNELS = ('position', 'yaw_rate')
CHANNEL_NAMES = {'position': 'position', 'speed': 'speed', 'yaw_rate': 'yaw rate'}


def ordinal(n: int) -> str:
    """'second', 'third', ... (``n``-th beyond fifth)."""
    return {2: 'second', 3: 'third', 4: 'fourth', 5: 'fifth'}.get(n, f'{n}th')


def num(value: float, digits: int = 3) -> str:
    """A number for people: ``digits`` significant digits, ``n/a`` when not finite (no report
    or summary shows ``nan`` or ``inf``)."""
    if value is None or not math.isfinite(value):
        return 'n/a'
    return f'{value:.{digits}g}'


@dataclass(frozen=True)
class BagScore:
    """Pooled RMSE per channel of one recording's held-out windows, per predictor."""

    name: str
    kind: str                      # how the recording was held out (plain words)
    windows: int
    samples: int
    nominal: dict[str, float]
    calibrated: dict[str, float]
    ctrv: dict[str, float]
    kinematic: dict[str, float] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The recording's name (its file or directory name)."""
        return Path(self.name).name

    def of(self, predictor: str) -> dict[str, float]:
        """The RMSEs of a predictor (``PREDICTORS``)."""
        return dict(getattr(self, predictor))


@dataclass
class Verdict:
    """Scores per held-out recording, what got worse, and what beat the calibrated model."""

    held_out: list[BagScore]
    training: list[BagScore]
    scheme: str = ''
    worse: list[tuple[str, str, float, float]] = field(default_factory=list)
    ctrv_better: list[tuple[str, str, float, float]] = field(default_factory=list)
    undetermined: tuple[str, ...] = ()
    n_free: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the fit is accepted: no held-out recording worse than nominal and most free
        parameters determined by the data."""
        return not self.worse and not self.degenerate

    @property
    def degenerate(self) -> bool:
        """True when most free parameters are not determined by the recordings."""
        return self.n_free > 0 and 2 * len(self.undetermined) > self.n_free

    def reason(self) -> str:
        """One line: why the fit is rejected (the first held-out recording that got worse,
        naming every channel of it, or the undetermined parameters)."""
        if self.worse:
            first = self.worse[0][0]
            parts = [f'{CHANNEL_NAMES[ch]} RMSE {num(after, 4)} {CHANNEL_UNITS[ch]} against '
                     f'{num(before, 4)} nominal' for b, ch, before, after in self.worse
                     if b == first]
            others = sorted({Path(b).name for b, *_ in self.worse} - {Path(first).name})
            more = f' (also worse on {", ".join(others)})' if others else ''
            return (f'calibrated worse than nominal on held-out recording {Path(first).name}: '
                    + ', '.join(parts) + more)
        if self.degenerate:
            return (f'most free parameters ({len(self.undetermined)} of {self.n_free}) are not '
                    'determined by these recordings: ' + ', '.join(self.undetermined) +
                    '; record the manoeuvres of rcsim protocol or free fewer parameters (--free)')
        return ''

    def headline(self) -> str:
        """The final verdict line."""
        if not self.held_out:
            return 'verdict: not judged (no held-out data)'
        if not self.ok:
            return 'verdict: rejected: ' + self.reason()
        n = len(self.held_out)
        what = 'held-out recording' if self.held_out[0].kind != 'held-out windows' else \
            'recording (held-out windows)'
        text = (f'verdict: calibrated at least as good as nominal on {"every" if n > 1 else "the"}'
                f' {what}')
        if self.ctrv_better:
            names = sorted({Path(b).name for b, *_ in self.ctrv_better})
            text += f'; CTRV predicts better on {", ".join(names)}'
        return text

    def lines(self) -> list[str]:
        """Summary lines: the scheme, per held-out recording the four predictors, the verdict."""
        out = [f'held out: {self.scheme}'] if self.scheme else []
        for s in self.held_out:
            cells = '; '.join(
                f'{CHANNEL_NAMES[ch]} {num(s.calibrated[ch])} {CHANNEL_UNITS[ch]} (nominal '
                f'{num(s.nominal[ch])}, CTRV {num(s.ctrv[ch])}, kinematic '
                f'{num(s.kinematic.get(ch, math.nan))})' for ch in CHANNEL_UNITS)
            out.append(f'{s.label} ({s.windows} windows): {cells}')
        out.append(self.headline())
        return out


def _ctrv_rmse(win: FitWindows) -> dict[str, float]:
    w = Windows(horizon=win.horizon, index=win.index, start=win.start, x0=win.x0, y0=win.y0,
                yaw0=win.yaw0, vx0=win.vx0, vy0=win.vy0, yaw_rate0=win.yaw_rate0,
                sample_window=win.sample_window, sample_t=win.start[win.sample_window] + win.tau,
                skipped={})
    c = ctrv_predict(w)
    errs = {'position': np.hypot(c.x - win.x, c.y - win.y)[None], 'speed': (c.vx - win.vx)[None],
            'yaw_rate': (c.yaw_rate - win.yaw_rate)[None], 'yaw': (c.yaw - win.yaw)[None]}
    return {k: float(v[0]) for k, v in channel_rmse(errs, win).items()}


def kinematic_rmse(win: FitWindows, nominal: VehicleParams,
                   offset: tuple[float, float, float] | Array) -> dict[str, float]:
    """RMSE per channel of the kinematic bicycle on the measured geometry (module docstring):
    x' = v cos psi, y' = v sin psi, psi' = v tan(delta) / L at the rear axle, delta = the
    nominal steering map of the recorded command, v = the commanded wheel speed times the
    rolling radius (a duty car: the window's initial speed), integrated exactly per step of the
    command grid (arcs); then moved to the measured frame like every other predictor."""
    offset_all = np.asarray(offset, dtype=float).reshape(3)
    known = np.array(win.offset_known)[win.bag]
    fixed = np.array(win.offsets, dtype=float).reshape(-1, 3)[win.bag]
    off = np.where(known[:, None], fixed, offset_all[None, :])
    o: Any = (off[:, 0], off[:, 1], off[:, 2])       # per-window offsets (arrays)
    xb, yb, yawb, vxb, _, _ = reference_from_measured(win.x0, win.y0, win.yaw0, win.vx0,
                                                      win.vy0, win.yaw_rate0, o)
    n_back = win.n_back
    dt = float(win.t_cmd[n_back + 1] - win.t_cmd[n_back]) if win.t_cmd.size > n_back + 1 else \
        0.01
    steer = steering_targets(win.steering_cmd[:, n_back:], nominal, win.steering_kind)
    if win.drive_kind in ('throttle', 'acceleration'):  # no speed command: the start speed
        speed = np.repeat(vxb[:, None], steer.shape[1], axis=1)
    else:
        speed = win.drive_cmd[:, n_back:] * nominal.effective_wheel_radius
    rate = speed * np.tan(steer) / nominal.geometry.wheelbase
    k_steps = steer.shape[1]
    x = np.empty((win.n, k_steps))
    y = np.empty_like(x)
    yaw = np.empty_like(x)
    x[:, 0], y[:, 0], yaw[:, 0] = xb, yb, yawb
    for k in range(k_steps - 1):         # exact arc over the step: chord length v dt sinc
        turn = rate[:, k] * dt
        chord = speed[:, k] * dt * np.sinc(turn / (2.0 * np.pi))
        heading = yaw[:, k] + 0.5 * turn
        x[:, k + 1] = x[:, k] + chord * np.cos(heading)
        y[:, k + 1] = y[:, k] + chord * np.sin(heading)
        yaw[:, k + 1] = yaw[:, k] + turn
    pos = np.clip(win.tau / dt, 0.0, k_steps - 1.000001)
    kk = np.floor(pos).astype(int)
    frac = pos - kk
    j = win.sample_window

    def at(grid: Array) -> Array:
        return np.asarray((1.0 - frac) * grid[j, kk] + frac * grid[j, kk + 1])

    zero = np.zeros(j.size)
    o_s: Any = (off[j, 0], off[j, 1], off[j, 2])
    mx, my, myaw, mvx, _, mr = measured_from_reference(
        at(x), at(y), at(yaw), speed[j, kk], zero, rate[j, kk], o_s)
    errs = {'position': np.hypot(mx - win.x, my - win.y)[None], 'speed': (mvx - win.vx)[None],
            'yaw_rate': (mr - win.yaw_rate)[None], 'yaw': (myaw - win.yaw)[None]}
    return {ch: float(v[0]) for ch, v in channel_rmse(errs, win).items()}


def score_windows(params: list[VehicleParams], offsets: Array, win: FitWindows,
                  settings: FitSettings, kind: str) -> list[BagScore]:
    """Per recording of ``win``: RMSE of params[0] (nominal) and params[1] (calibrated), CTRV
    and the kinematic bicycle (on params[0]'s geometry)."""
    pred = predict(params, offsets, win, dt=settings.dt, model=settings.model,
                   integrator=settings.integrator, load_transfer=settings.load_transfer)
    errs = sample_errors(pred, win)
    out = []
    for b, name in enumerate(win.names):
        sel_w = win.bag == b
        if not sel_w.any():
            continue
        sub = win.subset(sel_w)
        sel_s = sel_w[win.sample_window]
        rm = channel_rmse({k: v[:, sel_s] for k, v in errs.items()}, sub)
        out.append(BagScore(name=name, kind=kind, windows=sub.n, samples=int(sub.scored().sum()),
                            nominal={k: float(v[0]) for k, v in rm.items()},
                            calibrated={k: float(v[1]) for k, v in rm.items()},
                            ctrv=_ctrv_rmse(sub),
                            kinematic=kinematic_rmse(sub, params[0], offsets[0])))
    return out


def judge(held: Sequence[BagScore], training: Sequence[BagScore], settings: FitSettings, *,
          scheme: str = '', undetermined: Sequence[str] = (), n_free: int = 0) -> Verdict:
    """Apply the rules of the module docstring to the held-out scores."""
    verdict = Verdict(held_out=list(held), training=list(training), scheme=scheme,
                      undetermined=tuple(undetermined), n_free=n_free)
    tol = settings.worse_tolerance
    for s in held:
        for ch in CHANNEL_UNITS:
            before, after = s.nominal[ch], s.calibrated[ch]
            lost = not math.isfinite(after) and math.isfinite(before)
            if lost or (after > before * (1.0 + tol) and after - before > FLOORS[ch]):
                verdict.worse.append((s.name, ch, before, after))
        beaten = [(ch, s.ctrv[ch], s.calibrated[ch]) for ch in CTRV_CHANNELS
                  if s.calibrated[ch] > s.ctrv[ch] * (1.0 + tol) and
                  s.calibrated[ch] - s.ctrv[ch] > FLOORS[ch]]
        for ch, ctrv, cal in beaten:
            verdict.ctrv_better.append((s.name, ch, ctrv, cal))
        if beaten:
            verdict.warnings.append(
                f'on {s.label} CTRV (the measured motion held constant) predicts better than the '
                'calibrated model: ' + ', '.join(
                    f'{CHANNEL_NAMES[ch]} {num(ctrv)} against {num(cal)} {CHANNEL_UNITS[ch]}'
                    for ch, ctrv, cal in beaten) +
                ' (the commands explain less of this recording than its own motion does)')
    if not held:
        verdict.warnings.append('no held-out data (give --validate or more windows): the fit '
                                'could not be judged')
    return verdict
