"""Evaluation of a tracking run: base_link poses against published reference paths.

The reference is what the ``trajectory_tracker`` node publishes on ``/reference_path``: one
``nav_msgs/Path`` per activation whose poses carry their own reference time stamps. A path with
strictly increasing stamps gives the time-indexed centre-of-mass error ``e(t) = q(t) - q_ref(t)``;
a path without timing gives the distance to the path instead (:mod:`rc_sim_control.metrics`).
Used by ``rcsim track``, ``rcsim evaluate``, ``rcsim manoeuvre``, the tests and the benchmarks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_control.metrics import (
    TrackingMetrics,
    cg_positions,
    compute_metrics,
    path_distance_errors,
    tracking_errors,
)
from rc_sim_description.errors import ConfigError

__all__ = ['DEFAULT_TRANSIENT', 'EvaluatedRun', 'ReferencePath', 'combine_paths',
           'evaluate_arrays']

FloatArray = npt.NDArray[np.float64]
#: One published reference: (publication time [ns], t [s], x [m], y [m], yaw [rad]) in odom.
ReferencePath = tuple[int, FloatArray, FloatArray, FloatArray, FloatArray]
#: Start time [s] excluded from the "after transient" metrics (the car starts at rest).
DEFAULT_TRANSIENT = 3.0


@dataclass
class EvaluatedRun:
    """Centre-of-mass path, reference and errors of one car, with the RMSE/ISE metrics."""

    t: FloatArray
    cx: FloatArray
    cy: FloatArray
    t_ref: FloatArray
    x_ref: FloatArray
    y_ref: FloatArray
    t_err: FloatArray
    ex: FloatArray
    ey: FloatArray
    timed: bool
    metrics: TrackingMetrics  # whole run
    metrics_after: TrackingMetrics | None  # after the transient (None if too short)
    transient: float

    def report(self) -> dict[str, Any]:
        """JSON-ready summary."""
        out: dict[str, Any] = {'error': 'time-indexed' if self.timed else 'distance to path',
                               'transient_s': self.transient,
                               'whole_run': self.metrics.as_dict()}
        if self.metrics_after is not None:
            out['after_transient'] = self.metrics_after.as_dict()
        return out

    def lines(self) -> list[str]:
        """Printable summary lines."""
        kind = '' if self.timed else ' (no path timing: distance to the path)'
        out = [f'CoM error{kind}, whole run: {self.metrics.summary()}']
        if self.metrics_after is not None:
            out.append(f'CoM error after the {self.transient:g} s transient: '
                       f'{self.metrics_after.summary()}')
        return out


def combine_paths(paths: Sequence[ReferencePath]
                  ) -> tuple[FloatArray, FloatArray, FloatArray, bool]:
    """Merge published paths (stamps [s]): each one is valid from its publication time on.

    Returns (t, x, y, timed); ``timed`` is False when a path's stamps do not increase (then the
    last path is returned as a plain polyline).
    """
    pieces: list[tuple[FloatArray, FloatArray, FloatArray]] = []
    timed = True
    ordered = sorted(paths, key=lambda p: p[0])
    for k, (t_pub, t_raw, x_raw, y_raw, _) in enumerate(ordered):
        t, x, y = (np.asarray(a, dtype=float) for a in (t_raw, x_raw, y_raw))
        if t.size < 2 or np.any(np.diff(t) <= 0):
            timed = False
        t_end = ordered[k + 1][0] * 1e-9 if k + 1 < len(ordered) else math.inf
        keep = (t >= t_pub * 1e-9 - 1e-9) & (t < t_end)
        if k + 1 == len(ordered) or not timed:
            keep = t >= t_pub * 1e-9 - 1e-9
        pieces.append((t[keep], x[keep], y[keep]))
    if not timed:
        _, t_last, x_last, y_last, _ = ordered[-1]
        return (np.asarray(t_last, float), np.asarray(x_last, float),
                np.asarray(y_last, float), False)
    t = np.concatenate([p[0] for p in pieces])
    x = np.concatenate([p[1] for p in pieces])
    y = np.concatenate([p[2] for p in pieces])
    order = np.argsort(t, kind='stable')
    t, x, y = t[order], x[order], y[order]
    keep = np.concatenate([[True], np.diff(t) > 0])
    return t[keep], x[keep], y[keep], True


def evaluate_arrays(t: npt.ArrayLike, x: npt.ArrayLike, y: npt.ArrayLike, yaw: npt.ArrayLike,
                    paths: Sequence[ReferencePath], cg_to_rear_axle: float,
                    transient: float = DEFAULT_TRANSIENT) -> EvaluatedRun:
    """Centre-of-mass error metrics of base_link poses (t [s], x, y, yaw) against ``paths``.

    The centre of mass is ``cg_to_rear_axle`` ahead of base_link; the "after transient" metrics
    start ``transient`` seconds after the first error sample.
    """
    if not paths:
        raise ConfigError('no reference path to evaluate against')
    cx, cy = cg_positions(x, y, yaw, cg_to_rear_axle)
    t_ref, x_ref, y_ref, timed = combine_paths(paths)
    if timed:
        t_err, ex, ey = tracking_errors(t, cx, cy, t_ref, x_ref, y_ref)
    else:
        t_err = np.asarray(t, float)
        ex, ey = path_distance_errors(cx, cy, x_ref, y_ref)
    metrics = compute_metrics(t_err, ex, ey)
    after = None
    if t_err.size and np.count_nonzero(t_err >= t_err[0] + transient) >= 2:
        after = compute_metrics(t_err, ex, ey, t_start=float(t_err[0]) + transient)
    return EvaluatedRun(np.asarray(t, float), cx, cy, t_ref, x_ref, y_ref, t_err, ex, ey, timed,
                        metrics, after, transient)
