"""Command plumbing of the loop: ``/cmd_vel`` through the control core's mappers, the precomputed
plan of a command sequence, and the log of every command sent (the ``commands`` stream).

* Controllers: ``/cmd_vel`` -> :class:`~rc_sim_control.ackermann.CommandMapper` per car (the code
  of the ROS mapper node) -> ``/steering_angle``, ``/rear_wheel_speed``; NaN/inf is rejected
  (the previous command is held, ``accepted`` False), as the node does.
* Sequences: ``/cmd_vel`` sampled (zero-order hold) at ``command_rate`` and mapped up front with
  :func:`~rc_sim_control.ackermann.map_sequence` (the vectorized twin of the streaming mapper:
  same hold, rate limit and rejection rules) into a :class:`CommandPlan`; the compiled loop only
  switches precomputed commands, jumping from one change to the next.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.params import VehicleParams
from rc_sim_engine.sim.series import Series, concat_series
from rc_sim_engine.sim.sim_config import CommandSource, Observation

__all__ = ['CommandLog', 'CommandPlan', 'Mappers', 'build_plan', 'plan_bytes', 'sequence_source']

FloatArray = NDArray[np.float64]
_KEYS = ('t_ns', 'linear_x', 'angular_z', 'steering_angle', 'wheel_speed', 'accepted')


def plan_bytes(ticks: int, n_cars: int) -> int:
    """Memory of a plan of ``ticks`` command periods for ``n_cars`` cars [bytes] (about)."""
    return ticks * (8 * 6 + n_cars * (8 * 6 + 2))


class Mappers:
    """One streaming ``/cmd_vel`` mapper per car (the mode says what ``angular_z`` means)."""

    def __init__(self, params: list[VehicleParams], mode: str) -> None:
        from rc_sim_control.ackermann import CommandMapper, MapperConfig

        self.mode = mode
        self._mappers = [CommandMapper(MapperConfig.from_vehicle(p, mode=mode)) for p in params]

    def reset(self) -> None:
        """Forget the previous commands (rate limit and hold start afresh)."""
        for m in self._mappers:
            m.reset()

    def map(self, linear_x: FloatArray, angular_z: FloatArray, t: float, steer: FloatArray,
            wheel: FloatArray) -> NDArray[np.bool_]:
        """Map per car into ``steer``/``wheel`` (in place); returns which cars accepted."""
        accepted = np.zeros(len(self._mappers), dtype=bool)
        for i, mapper in enumerate(self._mappers):
            out = mapper.update(float(linear_x[i]), float(angular_z[i]), t)
            if out is not None:  # rejected (NaN/inf): keep the previous command, like the node
                steer[i] = out.steering_angle
                wheel[i] = out.wheel_speed
                accepted[i] = True
        return accepted


@dataclass
class CommandPlan:
    """Mapped commands of a sequence per command tick (absolute tick index ``start_tick + j``).

    ``steering_angle``/``wheel_speed`` (T, N) hold rows from tick 0 (NaN before ``start_tick``);
    ``change_next[tick]`` is the next tick whose command differs (or T); ``rows`` is the
    ``commands`` stream of the plan (one row per tick from ``start_tick``).
    """

    start_tick: int
    steering_angle: FloatArray
    wheel_speed: FloatArray
    change_next: NDArray[np.int64]
    rows: dict[str, np.ndarray]


def build_plan(seq: Any, params: list[VehicleParams], start_step: int, end_s: float,
               period: int, dt: float, steer_now: FloatArray) -> CommandPlan:
    """The plan of ``seq`` played from step ``start_step`` for ``end_s`` seconds."""
    from rc_sim_control.ackermann import MapperConfig, map_sequence
    from rc_sim_control.commands import sample

    n = len(params)
    t_cmd = period * dt
    start_tick = -(-start_step // period)
    ticks = np.arange(start_tick, math.ceil((start_step * dt + end_s) / t_cmd) + 1)
    t = ticks * t_cmd
    v, w = sample(seq, t - ticks[0] * t_cmd)
    k = len(t)
    steer = np.empty((k, n))
    wheel = np.empty((k, n))
    valid = np.empty((k, n), dtype=bool)
    groups: dict[Any, list[int]] = {}  # cars sharing a mapper config share one mapping
    for i, p in enumerate(params):
        groups.setdefault(MapperConfig.from_vehicle(p, mode=seq.mode), []).append(i)
    for config, cars in groups.items():
        for i in cars:  # the rate limit starts from each car's current command
            mapped = map_sequence(t, v, w, config, initial_steering_angle=float(steer_now[i]))
            steer[:, i] = mapped.steering_angle
            wheel[:, i] = mapped.wheel_speed
            valid[:, i] = mapped.valid
            if len(cars) > 1 and np.all(steer_now[cars] == steer_now[i]):
                steer[:, cars] = steer[:, i:i + 1]
                wheel[:, cars] = wheel[:, i:i + 1]
                valid[:, cars] = valid[:, i:i + 1]
                break
    full_steer = np.full((start_tick + k, n), np.nan)
    full_wheel = np.full((start_tick + k, n), np.nan)
    full_steer[start_tick:], full_wheel[start_tick:] = steer, wheel
    steer, wheel = full_steer[start_tick:], full_wheel[start_tick:]  # the rows share them
    change = np.ones(len(full_steer), dtype=bool)
    change[start_tick + 1:] = (np.any(np.diff(steer, axis=0) != 0, axis=1)
                               | np.any(np.diff(wheel, axis=0) != 0, axis=1))
    change_idx = np.flatnonzero(change)
    # tick -> index of the next tick whose command differs (or the end)
    nxt = np.searchsorted(change_idx, np.arange(len(change)), side='right')
    change_next = np.append(change_idx, len(change))[nxt].astype(np.int64)
    rows = {'t_ns': np.round(t * 1e9).astype(np.int64),
            'linear_x': np.broadcast_to(v[:, None], (k, n)),
            'angular_z': np.broadcast_to(w[:, None], (k, n)),
            'steering_angle': steer, 'wheel_speed': wheel, 'accepted': valid}
    return CommandPlan(start_tick, full_steer, full_wheel, change_next, rows)


def sequence_source(seq: Any) -> CommandSource:
    """Command source playing a :class:`~rc_sim_control.commands.CommandSequence` (zero-order
    hold)."""
    from rc_sim_control.commands import sample

    def source(t: float, obs: Observation) -> tuple[ArrayLike, ArrayLike]:
        v, w = sample(seq, np.array([t]))
        return float(v[0]), float(w[0])

    return source


class CommandLog:
    """Every command sent: rows of played plans, of the current plan up to now, and of
    commands sent one by one (controllers, :meth:`Simulator.command`)."""

    def __init__(self) -> None:
        self._done: list[Series] = []
        self._plan_rows: dict[str, np.ndarray] | None = None
        self._single: list[dict[str, Any]] = []
        self._taken_ns = -1  # streaming: rows at or before this stamp were handed out
        self._plan_pos = 0  # streaming: plan rows before this index were handed out

    def record(self, t_ns: int, linear_x: FloatArray, angular_z: FloatArray,
               steering_angle: FloatArray, wheel_speed: FloatArray,
               accepted: NDArray[np.bool_]) -> None:
        """One command of every car sent at ``t_ns``."""
        self._single.append({'t_ns': t_ns, 'linear_x': linear_x.copy(),
                             'angular_z': angular_z.copy(),
                             'steering_angle': steering_angle.copy(),
                             'wheel_speed': wheel_speed.copy(), 'accepted': accepted.copy()})

    def start_plan(self, rows: dict[str, np.ndarray]) -> None:
        """A plan starts (its rows enter the log as time passes)."""
        self._plan_rows = rows
        self._plan_pos = 0

    def end_plan(self, now_ns: int) -> None:
        """Keep the executed part of the current plan (rows before now: a command issued at the
        current instant is superseded by whatever comes next, no time elapsed)."""
        if self._plan_rows is not None:
            rows = {k: v[self._plan_pos:] for k, v in self._plan_rows.items()}  # not handed out
            keep = rows['t_ns'] < now_ns
            self._done.append(Series({k: v[keep] for k, v in rows.items()}))
        self._plan_rows = None
        self._plan_pos = 0

    def _single_series(self) -> Series:
        if not self._single:
            return Series()
        return Series({key: np.asarray([row[key] for row in self._single]) for key in _KEYS})

    def series(self, now_ns: int) -> Series:
        """The ``commands`` stream up to now (sorted by time)."""
        blocks = list(self._done)
        if self._plan_rows is not None:
            keep = self._plan_rows['t_ns'] <= now_ns
            blocks.append(Series({k: v[keep] for k, v in self._plan_rows.items()}))
        blocks.append(self._single_series())
        merged = concat_series(blocks, Series(t_ns=np.zeros(0, dtype=np.int64)))
        if len(merged) > 1:
            order = np.argsort(merged['t_ns'], kind='stable')
            merged = Series({key: val[order] for key, val in merged.items()})
        return merged

    def take(self, until_ns: int, inclusive: bool) -> Series:
        """Streaming: the rows not handed out yet up to ``until_ns``; they leave the log."""
        blocks = list(self._done)
        self._done = []
        rows = self._plan_rows
        if rows is not None:
            hi = int(np.searchsorted(rows['t_ns'], until_ns,
                                     side='right' if inclusive else 'left'))
            lo = max(self._plan_pos, int(np.searchsorted(rows['t_ns'], self._taken_ns,
                                                         side='right')))
            blocks.append(Series({k: v[lo:hi] for k, v in rows.items()}))
            self._plan_pos = max(self._plan_pos, hi)
        single = self._single_series()
        if self._single:
            t = single['t_ns']
            sel = (t > self._taken_ns) & (t <= until_ns if inclusive else t < until_ns)
            blocks.append(Series({k: v[sel] for k, v in single.items()}))
            self._single = [row for row, keep in zip(self._single, sel) if not keep]
        out = concat_series(blocks, Series(t_ns=np.zeros(0, dtype=np.int64)))
        if len(out['t_ns']) > 1:
            order = np.argsort(out['t_ns'], kind='stable')
            out = Series({key: val[order] for key, val in out.items()})
        if len(out['t_ns']):
            self._taken_ns = max(self._taken_ns, int(out['t_ns'][-1]))
        return out
