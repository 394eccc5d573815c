"""The honest verdict of a fit: held-out error before (nominal) and after (calibrated).

Per held-out recording (``--validate``, or the held-out windows of the training recordings when
none is given) and channel (position, speed, yaw rate), the pooled RMSE of the window protocol for
the nominal parameters, the calibrated ones, and constant turn rate and velocity (CTRV, the floor
any model must beat). A channel is *worse* when the calibrated RMSE exceeds the nominal one by
more than ``verdict.worse_tolerance`` (2 %: below that the difference is within the noise of the
estimate) and by more than a floor (1 mm, 1 mm/s, 1 mrad/s). Any worse channel makes the fit
refuse to write ``calibrated.yaml`` (unless ``--accept-worse``; exit status
:data:`EXIT_WORSE`), with a one-line reason naming the recording and the channel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rc_sim_calibration.baselines import Windows, ctrv_predict
from rc_sim_calibration.predict import predict
from rc_sim_calibration.problem import CHANNEL_UNITS, Problem, channel_rmse, sample_errors
from rc_sim_calibration.settings import FitSettings
from rc_sim_calibration.windows import FitWindows
from rc_sim_description.params import VehicleParams

__all__ = ['EXIT_WORSE', 'BagScore', 'Verdict', 'judge', 'score_windows']

Array = np.ndarray
#: exit status of ``rcsim fit`` when held-out error rose (2 is bad input)
EXIT_WORSE = 3
FLOORS = {'position': 0.001, 'speed': 0.001, 'yaw_rate': 0.001}


@dataclass(frozen=True)
class BagScore:
    """Pooled RMSE per channel of one recording's held-out windows, per predictor."""

    name: str
    kind: str                      # 'validation' | 'held-out windows' | 'training'
    windows: int
    samples: int
    nominal: dict[str, float]
    calibrated: dict[str, float]
    ctrv: dict[str, float]


@dataclass
class Verdict:
    """Scores per held-out recording, the channels that got worse, and warnings."""

    held_out: list[BagScore]
    training: list[BagScore]
    worse: list[tuple[str, str, float, float]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no held-out channel got worse."""
        return not self.worse

    def reason(self) -> str:
        """One line naming the recordings and channels that got worse."""
        parts = [f'{Path(b).name} {ch.replace("_", " ")} RMSE {before:.4g} -> {after:.4g} '
                 f'{CHANNEL_UNITS[ch]}' for b, ch, before, after in self.worse]
        return 'held-out error rose: ' + '; '.join(parts)

    def lines(self) -> list[str]:
        """Summary lines: per training and held-out recording, nominal -> calibrated (CTRV)."""
        out = []
        for s in [*self.training, *self.held_out]:
            cells = ', '.join(f'{ch.replace("_", " ")} {s.nominal[ch]:.4g} -> '
                              f'{s.calibrated[ch]:.4g} {CHANNEL_UNITS[ch]}'
                              for ch in CHANNEL_UNITS)
            out.append(f'{s.kind} {Path(s.name).name} ({s.windows} windows): {cells} '
                       f'(CTRV: position {s.ctrv["position"]:.4g} m, yaw rate '
                       f'{s.ctrv["yaw_rate"]:.4g} rad/s)')
        out.append('verdict: ' + ('held-out error did not rise' if self.ok else self.reason()))
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


def score_windows(params: list[VehicleParams], offsets: Array, win: FitWindows,
                  settings: FitSettings, kind: str) -> list[BagScore]:
    """Per recording of ``win``: RMSE of params[0] (nominal) and params[1] (calibrated)."""
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
                            ctrv=_ctrv_rmse(sub)))
    return out


def judge(problem: Problem, nominal: VehicleParams, values: Array,
          offset0: tuple[float, float, float], all_win: FitWindows, holdout: Array,
          val_win: FitWindows | None, settings: FitSettings) -> Verdict:
    """Scores of the nominal and calibrated parameters, and what got worse."""
    calibrated = problem.params_for(values[None])[0]
    assert calibrated is not None
    offsets = np.vstack([np.asarray(offset0, float), problem.offsets_for(values[None])[0]])
    pair = [nominal, calibrated]
    training = score_windows(pair, offsets, all_win.subset(~holdout) if holdout.any()
                             else all_win, settings, 'training')
    if val_win is not None:
        held = score_windows(pair, offsets, val_win, settings, 'validation')
    elif holdout.any():
        held = score_windows(pair, offsets, all_win.subset(holdout), settings,
                             'held-out windows of')
    else:
        held = []
    verdict = Verdict(held_out=held, training=training)
    tol = settings.worse_tolerance
    for s in held:
        for ch in CHANNEL_UNITS:
            before, after = s.nominal[ch], s.calibrated[ch]
            if after > before * (1.0 + tol) and after - before > FLOORS[ch]:
                verdict.worse.append((s.name, ch, before, after))
    if not held:
        verdict.warnings.append('no held-out data (give --validate or more windows): the fit '
                                'could not be judged')
    return verdict
