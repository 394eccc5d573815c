"""Open-loop replay of a bag's commands from its initial measured state (``rcsim replay``).

The prediction starts at the first grid sample of the (trimmed) dataset with the measured pose and
twist and runs to its end without re-initialisation, so position errors include the drift. Metrics
compare the prediction with the measurements on the dataset grid; the windowed metrics (the fit's
cost windows) are printed too.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.fit import make_windows, predict_windows, window_errors
from rc_sim_calibration.settings import FitSettings
from rc_sim_description.params import VehicleParams

__all__ = ['CSV_COLUMNS', 'open_loop', 'replay_metrics', 'write_prediction_csv']

Array = np.ndarray
CSV_COLUMNS = ('t', 'x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate')


def open_loop(params: VehicleParams, ds: Dataset, settings: FitSettings) -> dict[str, Array]:
    """Predicted t, x, y, yaw, vx, vy, yaw_rate, wheel_speed, steering (K,) over the dataset."""
    lookback = params.timing.command_latency + 2 * settings.dt
    win = make_windows([ds], None, lookback=lookback, command_dt=settings.dt)
    pred = predict_windows([params], win, settings)
    out = {k: v[0, 0] for k, v in pred.items()}
    out['t'] = ds.t[0] + win.t_rel
    return out


def replay_metrics(params: VehicleParams, ds: Dataset, settings: FitSettings
                   ) -> dict[str, Any]:
    """Open-loop and windowed RMSE of position [m], speed [m/s] and yaw rate [rad/s]."""
    pred = open_loop(params, ds, settings)
    n = min(pred['t'].size, ds.t.size)
    pos = np.hypot(pred['x'][:n] - ds.x[:n], pred['y'][:n] - ds.y[:n])
    result: dict[str, Any] = {
        'bag': ds.name,
        'duration_s': float(ds.duration),
        'open_loop': {
            'position_rmse_m': float(np.sqrt(np.mean(pos ** 2))),
            'final_position_error_m': float(pos[-1]),
            'speed_rmse_mps': float(np.sqrt(np.mean((pred['vx'][:n] - ds.vx[:n]) ** 2))),
            'yaw_rate_rmse_radps': float(np.sqrt(np.mean((pred['yaw_rate'][:n]
                                                           - ds.yaw_rate[:n]) ** 2))),
        },
    }
    lookback = params.timing.command_latency + 2 * settings.dt
    try:
        win = make_windows([ds], settings.horizon, lookback=lookback, command_dt=settings.dt)
    except CalibrationError:  # a bag shorter than one window has no windowed metrics
        return result
    errs = window_errors(predict_windows([params], win, settings), win)
    masks = win.masks()
    result['windowed'] = {'horizon_s': settings.horizon, 'windows': win.n}
    for ch, unit in (('position', 'm'), ('speed', 'mps'), ('yaw_rate', 'radps')):
        e = errs[ch][0][masks[ch]]
        result['windowed'][f'{ch}_rmse_{unit}'] = float(np.sqrt(np.mean(e ** 2)))
    return result


def write_prediction_csv(pred: dict[str, Array], path: str | os.PathLike[str]) -> None:
    """CSV with header ``t,x,y,yaw,vx,vy,yaw_rate`` (atomic)."""
    from rc_sim_description.atomic import atomic_write_text

    table = np.column_stack([pred[c] for c in CSV_COLUMNS])
    lines = [','.join(CSV_COLUMNS)] + [','.join(f'{v:.9g}' for v in row) for row in table]
    atomic_write_text(path, '\n'.join(lines) + '\n')
