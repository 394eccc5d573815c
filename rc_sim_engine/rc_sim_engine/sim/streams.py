"""Recorded streams of a run: :class:`Series`, :class:`SimResult`, running statistics, the
conversion of state snapshots into sensor streams, and decimation for plots.

The loop records the full state of every car when odometry, IMU or joint states are due; a
:class:`StreamDeriver` turns a block of snapshots into the ``odom``, ``imu`` and ``joints`` streams
with the car's own output functions (a probe :class:`~rc_sim_engine.vehicle.car.Car` whose rows are
the snapshots, so the conversion is vectorized). Blocks can follow each other (a long run streamed
in chunks): the joint velocities (backward differences) carry over from one block to the next.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import RcSimError
from rc_sim_description.params import VehicleParams
from rc_sim_engine.sim.sensors import JOINT_NAMES, imu_specific_force
from rc_sim_engine.sim.series import Series, concat_series
from rc_sim_engine.sim.sim_config import CollisionEvent, SimConfig
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.world.sdf import World

__all__ = ['STREAM_FIELDS', 'Decimator', 'NonFiniteError', 'RunStats', 'Series', 'SimResult',
           'StreamDeriver', 'check_finite', 'concat_series']

FloatArray = NDArray[np.float64]
_PROBE_ROWS = 512  # rows of the probe Car converting snapshots into sensor streams

#: Fields of the streams derived from snapshots.
STREAM_FIELDS: dict[str, tuple[str, ...]] = {
    'odom': ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'speed', 'steering', 'wheel_speed'),
    'imu': ('yaw', 'yaw_rate', 'ax', 'ay', 'fx', 'fy', 'fz'),
    'joints': ('position', 'wheel_speed'),
}


class NonFiniteError(RcSimError):
    """The simulated state became non-finite (NaN or infinite): the physics diverged."""


@dataclass
class RunStats:
    """Running per-car statistics of a run (exact over every sample, however it is chunked)."""

    n_cars: int
    distance: FloatArray = field(init=False)
    max_lateral: FloatArray = field(init=False)
    max_speed: FloatArray = field(init=False)
    _last_xy: FloatArray | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.distance = np.zeros(self.n_cars)
        self.max_lateral = np.zeros(self.n_cars)
        self.max_speed = np.zeros(self.n_cars)

    def update(self, streams: dict[str, Series]) -> None:
        """Add the samples of a block (``odom`` and ``imu`` streams)."""
        odom, imu = streams['odom'], streams['imu']
        if len(odom['t_ns']):
            xy = np.stack([odom['x'], odom['y']], axis=-1)  # (K, N, 2)
            if self._last_xy is not None:
                xy = np.concatenate([self._last_xy[None], xy])
            d = np.diff(xy, axis=0)
            self.distance = self.distance + np.sum(np.hypot(d[..., 0], d[..., 1]), axis=0)
            self._last_xy = xy[-1].copy()
            self.max_speed = np.maximum(self.max_speed, np.max(np.abs(odom['speed']), axis=0))
        if len(imu['t_ns']):
            self.max_lateral = np.maximum(self.max_lateral, np.max(np.abs(imu['ay']), axis=0))


@dataclass
class SimResult:
    """Everything a run produced; streams are :class:`Series` keyed by field name.

    * ``odom``: t_ns, x, y, yaw, vx, vy, yaw_rate, speed, steering, wheel_speed (K, N)
    * ``imu``: t_ns, yaw, yaw_rate, ax, ay (CG, body), fx, fy, fz (specific force at the mount)
    * ``joints``: t_ns, position, velocity (K, N, 6) in :data:`JOINT_NAMES` order
    * ``commands``: t_ns, linear_x, angular_z (NaN when a controller gives mapper outputs),
      steering_angle, wheel_speed (mapper outputs sent to the car), accepted (K, N)
    * ``scan``: t_ns, stamp_ns (K, N) (with error-model latency), ranges (K, N, B) float32,
      raw (ideal ranges when an error model is used), lost (K, N)
    * ``clock``: t_ns

    A run streamed to a sink (``Simulator.play(..., sink=...)``) keeps only decimated streams
    (``decimated`` True: at most a few thousand samples each, for plots) and its statistics in
    ``stats`` (over every sample).
    """

    params: list[VehicleParams]
    world: World
    config: SimConfig
    streams: dict[str, Series]
    collisions: list[CollisionEvent]
    scan_angles: FloatArray
    sim_time: float
    wall_time: float
    mapper_mode: str
    stats: RunStats | None = None
    decimated: bool = False

    @property
    def n_cars(self) -> int:
        """Number of cars."""
        return len(self.params)

    @property
    def realtime_factor(self) -> float:
        """Simulated time / wall-clock time of the loop."""
        return self.sim_time / self.wall_time if self.wall_time > 0 else math.inf

    def summary(self) -> dict[str, Any]:
        """Per-car distance [m], max |lateral acceleration| [m/s^2], max |speed| [m/s],
        collisions, real-time factor."""
        stats = self.stats
        if stats is None:
            stats = RunStats(self.n_cars)
            stats.update(self.streams)
        counts = [sum(1 for e in self.collisions if e.car == i) for i in range(self.n_cars)]
        return {
            'sim_time_s': self.sim_time,
            'wall_time_s': self.wall_time,
            'realtime_factor': self.realtime_factor,
            'distance_m': [float(d) for d in stats.distance],
            'max_lateral_acceleration_mps2': [float(a) for a in stats.max_lateral],
            'max_speed_mps': [float(v) for v in stats.max_speed],
            'collisions': counts,
        }


def check_finite(streams: dict[str, Series], names: tuple[str, ...] = ('odom', 'imu', 'joints')
                 ) -> None:
    """:class:`NonFiniteError` naming the first non-finite sample of the given streams."""
    first: tuple[int, str] | None = None
    for name in names:
        series = streams.get(name)
        if not series or not len(series['t_ns']):
            continue
        for key, values in series.items():
            if key == 't_ns':
                continue
            bad = ~np.isfinite(values.reshape(len(values), -1)).all(axis=1)
            if bad.any():
                k = int(np.argmax(bad))
                t = int(series['t_ns'][k])
                if first is None or t < first[0]:
                    row = values[k].reshape(values.shape[1], -1)
                    car = int(np.argmax(~np.isfinite(row).all(axis=1)))
                    value = row[car][~np.isfinite(row[car])][0]
                    first = (t, f'car {car} {name}.{key} = {value}')
    if first is not None:
        raise NonFiniteError(f'the simulation became non-finite at t = {first[0] * 1e-9:.3f} s: '
                             f'{first[1]} (check the vehicle parameters for physically absurd '
                             'values)')


class StreamDeriver:
    """Snapshots of the full state -> ``odom``, ``imu``, ``joints`` streams (block by block)."""

    def __init__(self, params: list[VehicleParams], config: SimConfig,
                 periods: dict[str, int]) -> None:
        self.params = params
        self.config = config
        self.periods = periods
        self._dt_ns = round(config.dt * 1e9)
        self._probes: dict[tuple[int, int], Car] = {}
        self.reset()

    def reset(self) -> None:
        """Forget the previous block (a new run starts)."""
        self._last_position: FloatArray | None = None

    def _probe(self, i: int, k: int) -> Car:
        """Car i's probe for blocks of ``k`` snapshots: ``_PROBE_ROWS`` rows, or the power of
        two >= k (at least 8) for small blocks (a live node converts a few at a time)."""
        rows = min(_PROBE_ROWS, max(8, 1 << max(0, k - 1).bit_length()))
        probe = self._probes.get((i, rows))
        if probe is None:
            cfg = self.config
            probe = Car(self.params[i], model=cfg.model, integrator=cfg.integrator, dt=cfg.dt,
                        n=rows, tyre_model=cfg.tyre_model)
            self._probes[(i, rows)] = probe
        return probe

    @staticmethod
    def outputs(probe: Car, p: VehicleParams) -> dict[str, FloatArray]:
        """Sensor values of every row of ``probe`` (odometry, IMU, joint positions)."""
        x, y, yaw = probe.base_link_pose()
        vx, vy, r = probe.base_link_twist()
        ax, ay = probe.body_acceleration()
        fx, fy, fz = imu_specific_force(ax, ay, r, p)
        angles = probe.wheel_angles()
        return {'x': x, 'y': y, 'yaw': (yaw + np.pi) % (2 * np.pi) - np.pi, 'vx': vx, 'vy': vy,
                'yaw_rate': r, 'speed': probe.speed, 'steering': probe.steering_angle(),
                'wheel_speed': probe.wheel_speed(), 'ax': ax, 'ay': ay, 'fx': fx, 'fy': fy,
                'fz': fz, 'position': np.stack([angles[j] for j in JOINT_NAMES], axis=-1)}

    def derive(self, steps: NDArray[np.int64], states: FloatArray) -> dict[str, Series]:
        """Streams of the snapshots ``states`` (K, N, n_state) taken at ``steps`` (K,)."""
        k_total = len(steps)
        cols: dict[str, list[FloatArray]] = {}
        for i, p in enumerate(self.params):
            probe = self._probe(i, k_total)
            rows = probe.n
            parts: dict[str, list[FloatArray]] = {}
            for lo in range(0, max(k_total, 1), rows):
                chunk = states[lo:lo + rows, i, :]
                if len(chunk):
                    probe.state[:len(chunk)] = chunk
                    probe.state[len(chunk):] = chunk[-1]
                for key, val in self.outputs(probe, p).items():
                    parts.setdefault(key, []).append(val[:len(chunk)])
            for key, vals in parts.items():
                cols.setdefault(key, []).append(np.concatenate(vals))
        car_axis = {key: np.stack(val, axis=1) for key, val in cols.items()}  # (K, N, ...)
        t_ns = steps * self._dt_ns
        out: dict[str, Series] = {}
        for name, keys in STREAM_FIELDS.items():
            sel = steps % self.periods[name] == 0
            out[name] = Series({'t_ns': t_ns[sel], **{k: car_axis[k][sel] for k in keys}})
        joints = out['joints']
        pos = joints['position']
        vel = np.zeros_like(pos)
        period_s = self.periods['joints'] * self.config.dt
        if len(pos):  # backward difference over the joint-state period
            if self._last_position is None:
                vel[0, :, 4] = vel[0, :, 5] = joints['wheel_speed'][0]
            else:
                vel[0] = (pos[0] - self._last_position) / period_s
            vel[1:] = np.diff(pos, axis=0) / period_s
            self._last_position = pos[-1].copy()
        joints['velocity'] = vel
        return out


class Decimator:
    """Every ``stride``-th sample of a stream, at most ``cap`` kept: when the cap is reached the
    stride doubles and every other kept sample is dropped (the samples stay evenly spaced)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.stride = 1
        self._count = 0
        self._index: list[NDArray[np.int64]] = []
        self._blocks: list[Series] = []

    def add(self, series: Series) -> None:
        """Offer the next samples of the stream."""
        n = len(series.get('t_ns', ()))
        if n == 0:
            return
        index = self._count + np.arange(n)
        self._count += n
        keep = index % self.stride == 0
        if keep.any():
            self._blocks.append(Series({k: v[keep] for k, v in series.items()}))
            self._index.append(index[keep])
        while sum(len(i) for i in self._index) > self.cap:
            self.stride *= 2
            for j, (block, idx) in enumerate(zip(self._blocks, self._index)):
                sel = idx % self.stride == 0
                self._blocks[j] = Series({k: v[sel] for k, v in block.items()})
                self._index[j] = idx[sel]

    def series(self, empty: Series) -> Series:
        """The kept samples."""
        return concat_series(self._blocks, empty)
