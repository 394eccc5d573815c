"""Windowed open-loop prediction of a recording (``rcsim replay --horizon``).

The window protocol of ``docs/prediction_windows.md`` on every pose message of the recording
(:func:`rc_sim_calibration.windows.build_windows` with ``raw=True``, as the independent
evaluator reads them): each window starts from the measured state at its first pose sample and is
predicted from the recorded commands; one CSV row per pose stamp of every used window (the first
row is the initial state), pose of the measured frame in the recording's world frame, ``t`` on the
pose messages' header-stamp clock. The same computation is the fit's cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rc_sim_calibration.baselines import PredictionTable
from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.fit import SERVO_PREROLL, nominal_params
from rc_sim_calibration.predict import predict
from rc_sim_calibration.problem import channel_rmse, sample_errors
from rc_sim_calibration.settings import FitSettings
from rc_sim_calibration.windows import build_windows
from rc_sim_description.params import VehicleParams

__all__ = ['replay_windows']


def replay_windows(params: VehicleParams, ds: Dataset, settings: FitSettings, horizon: float
                   ) -> tuple[PredictionTable, dict[str, Any]]:
    """Predictions of every window of ``ds`` and the pooled RMSEs (JSON-ready dict)."""
    notes: list[str] = []
    p = nominal_params(params, ds.drive_kind)
    if p is not params:
        notes.append(f'the recording sends {ds.drive_kind} commands: drive_model '
                     f'{p.drive.drive_model} replays them')
    if not ds.offset_known:
        notes.append('the pose offset from base_link is unknown: the prediction takes the pose '
                     'at base_link (give --odom-offset X,Y,YAW, e.g. the one a fit printed)')
    lookback = max(p.timing.command_latency, 0.2) + SERVO_PREROLL
    win = build_windows([ds], horizon, lookback=lookback, dt=settings.dt, raw=True)
    pred = predict([p], np.array([ds.pose_offset], dtype=float), win, dt=settings.dt,
                   model=settings.model, integrator=settings.integrator,
                   load_transfer=settings.load_transfer)
    t_abs = ds.start_ns * 1e-9 + win.start[win.sample_window] + win.tau
    table = PredictionTable(window=win.index[win.sample_window], t=t_abs, x=pred.x[0],
                            y=pred.y[0], yaw=pred.yaw[0], vx=pred.vx[0], vy=pred.vy[0],
                            yaw_rate=pred.yaw_rate[0])
    rmse = channel_rmse(sample_errors(pred, win), win)
    metrics: dict[str, Any] = {
        'bag': ds.name, 'horizon_s': horizon, 'windows': win.n,
        'skipped': {k: len(v) for k, v in win.skipped[0].items()},
        'samples': int(win.scored().sum()),
        'position_rmse_m': float(rmse['position'][0]),
        'speed_rmse_mps': float(rmse['speed'][0]),
        'yaw_rate_rmse_radps': float(rmse['yaw_rate'][0]),
        'pose_offset': list(ds.pose_offset), 'offset_source': ds.offset_source or 'unknown',
        'notes': notes,
    }
    return table, metrics
