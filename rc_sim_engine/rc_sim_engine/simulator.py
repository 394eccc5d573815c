"""The simulation loop: fixed physics step, sensors at their own rates, collisions, commands.

Time is an integer step counter (``t = k dt``, stamps in integer nanoseconds), so runs are exactly
reproducible for a given seed (the only randomness is the lidar error model, one generator per car
spawned from ``SeedSequence(seed)``). Between two events the cars are stepped in one compiled call
(:meth:`Car.step` with ``n_steps``). Events, in this order when they fall on the same step:

1. collision check (see below), 2. sensors (odometry + TF, IMU, joint states, clock, lidar),
3. commands: a command source (scenario) or controller callback gives ``/cmd_vel`` (linear_x,
   angular_z) per car at ``command_rate``; it goes through the control core's
   :class:`~rc_sim_control.ackermann.CommandMapper` (same code as the ROS mapper node) into
   ``/steering_angle`` and ``/rear_wheel_speed``, which the car holds until the next command.

Collision checks are scheduled adaptively: after a check, the next one comes when a car could first
have covered the conservative gap between its footprint's bounding circle and the nearest obstacle
(speed now plus a margin, accelerating at twice the friction limit 2 mu g), and at least
``1 / collision_rate`` later; far from walls the loop skips checks, near walls it checks at
``collision_rate``.
A contact event is reported when a car that was clear touches an obstacle; the response is ``stop``
(push out along the contact normal, zero the velocities), ``bounce`` (push out, reflect the normal
velocity with ``restitution``) or ``ignore`` (events only). Cars do not collide with each other but
see each other in their lidar scans.

Pacing: ``realtime_factor = 0`` runs as fast as possible, ``X > 0`` sleeps to keep sim time at X
times wall time (time compression).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
import math
import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams
from rc_sim_engine.car import Car
from rc_sim_engine.collision import (
    Footprint,
    WorldArrays,
    check_cars,
    check_response,
    footprint_from_params,
)
from rc_sim_engine.sensors import (
    GRAVITY,
    JOINT_NAMES,
    Lidar,
    footprint_segments,
    imu_specific_force,
)
from rc_sim_engine.state import VX, VY, WHEEL_SPEED, YAW_RATE
from rc_sim_engine.world import World

__all__ = [
    'SETTLE_TIME',
    'CollisionEvent',
    'Observation',
    'SimConfig',
    'SimResult',
    'Simulator',
    'sequence_source',
]

FloatArray = NDArray[np.float64]
SETTLE_TIME = 1.0  # s simulated after a sequence's last command by default
_PROBE_ROWS = 512  # rows of the Car used to convert recorded states into sensor streams
CommandSource = Callable[[float, 'Observation'], tuple[ArrayLike, ArrayLike]]


@dataclass(frozen=True)
class SimConfig:
    """Loop settings; sensor specs and vehicle numbers come from vehicle.yaml, not from here.

    Attributes:
        dt: physics step [s] (default 1 kHz).
        model, integrator, tyre_model: passed to :class:`~rc_sim_engine.car.Car`.
        command_rate: rate of ``/cmd_vel`` -> mapper -> actuator commands [Hz] (the command
            bridge's 50 Hz).
        odom_rate: ground-truth ``/odom`` and ``/tf`` [Hz] (gz OdometryPublisher default 50 Hz).
        joint_state_rate: ``/joint_states`` [Hz]. clock_rate: ``/clock`` [Hz].
        collision_rate: highest collision check rate [Hz] (near obstacles); 0 disables collisions.
        collision_response: ``stop`` | ``bounce`` | ``ignore``. restitution: bounce coefficient.
        lidar: simulate the lidar. lidar_errors: an ``rc_sim_sensors`` ``LidarErrorConfig`` or
        None. seed: seed of every random generator of the run.
        realtime_factor: 0 = as fast as possible, else sim time / wall time to keep.
        mapper_mode: meaning of ``angular_z`` for controllers (scenarios carry their own mode).
        record: keep every sample for :meth:`Simulator.result` (False for endless live runs:
            only the latest scan is kept, see :meth:`Simulator.snapshot`).
    """

    dt: float = 1e-3
    model: str = 'single_track'
    integrator: str = 'rk4'
    tyre_model: str | None = None
    command_rate: float = 50.0
    odom_rate: float = 50.0
    joint_state_rate: float = 50.0
    clock_rate: float = 100.0
    collision_rate: float = 1000.0
    collision_response: str = 'stop'
    restitution: float = 0.3
    lidar: bool = True
    lidar_errors: Any = None
    seed: int = 0
    realtime_factor: float = 0.0
    mapper_mode: str = 'yaw_rate'
    record: bool = True

    def __post_init__(self) -> None:
        if not (math.isfinite(self.dt) and 0 < self.dt <= 0.1):
            raise ConfigError(f'sim config: dt must be in (0, 0.1] s, got {self.dt!r}')
        for name in ('command_rate', 'odom_rate', 'joint_state_rate', 'clock_rate'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f'sim config: {name} must be > 0 Hz, got {value!r}')
        if not (math.isfinite(self.collision_rate) and self.collision_rate >= 0):
            raise ConfigError(f'sim config: collision_rate must be >= 0 Hz, got '
                              f'{self.collision_rate!r}')
        check_response(self.collision_response)
        if not 0 <= self.restitution <= 1:
            raise ConfigError(f'sim config: restitution must be in [0, 1], got '
                              f'{self.restitution!r}')
        if not (math.isfinite(self.realtime_factor) and self.realtime_factor >= 0):
            raise ConfigError(f'sim config: realtime_factor must be >= 0 (0 = as fast as '
                              f'possible), got {self.realtime_factor!r}')
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f'sim config: seed must be an integer >= 0, got {self.seed!r}')

    def with_values(self, **values: Any) -> SimConfig:
        """Validated copy with some fields replaced."""
        known = {f.name for f in fields(self)}
        for key in values:
            if key not in known:
                raise ConfigError(f'sim config: unknown key {key!r}')
        return replace(self, **values)


@dataclass(frozen=True)
class CollisionEvent:
    """A car started touching an obstacle."""

    t: float
    car: int
    obstacle: str
    kind: str
    depth: float
    normal_x: float
    normal_y: float
    speed: float
    x: float
    y: float


@dataclass(frozen=True)
class Observation:
    """What a controller sees at time ``t``; arrays are (N,) (ground truth of base_link)."""

    t: float
    x: FloatArray
    y: FloatArray
    yaw: FloatArray
    vx: FloatArray
    vy: FloatArray
    yaw_rate: FloatArray
    steering_angle: FloatArray
    wheel_speed: FloatArray
    scan: FloatArray | None
    scan_angles: FloatArray | None
    in_contact: NDArray[np.bool_]


class Series(dict[str, np.ndarray]):
    """Recorded samples of one stream: ``t_ns`` (K,) and named arrays (K, N, ...)."""

    @property
    def t(self) -> FloatArray:
        """Sample times [s]."""
        return np.asarray(self['t_ns'], dtype=np.float64) * 1e-9


class _Recorder:
    def __init__(self) -> None:
        self.rows: dict[str, list[Any]] = {}

    def add(self, **values: Any) -> None:
        for key, value in values.items():
            self.rows.setdefault(key, []).append(value)

    def series(self) -> Series:
        out = Series()
        for key, rows in self.rows.items():
            out[key] = np.asarray(rows)
        return out


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

    @property
    def n_cars(self) -> int:
        """Number of cars."""
        return len(self.params)

    @property
    def realtime_factor(self) -> float:
        """Simulated time / wall-clock time of the loop."""
        return self.sim_time / self.wall_time if self.wall_time > 0 else math.inf

    def summary(self) -> dict[str, Any]:
        """Per-car distance [m], max |lateral acceleration| [m/s^2], collisions, real-time
        factor."""
        odom, imu = self.streams['odom'], self.streams['imu']
        dist = np.sum(np.hypot(np.diff(odom['x'], axis=0), np.diff(odom['y'], axis=0)), axis=0)
        lat = np.max(np.abs(imu['ay']), axis=0) if len(imu['ay']) else np.zeros(self.n_cars)
        counts = [sum(1 for e in self.collisions if e.car == i) for i in range(self.n_cars)]
        return {
            'sim_time_s': self.sim_time,
            'wall_time_s': self.wall_time,
            'realtime_factor': self.realtime_factor,
            'distance_m': [float(d) for d in np.atleast_1d(dist)],
            'max_lateral_acceleration_mps2': [float(a) for a in np.atleast_1d(lat)],
            'max_speed_mps': [float(v) for v in np.max(np.abs(odom['speed']), axis=0)],
            'collisions': counts,
        }


def sequence_source(seq: Any) -> CommandSource:
    """Command source playing a :class:`~rc_sim_control.commands.CommandSequence` (zero-order
    hold)."""
    from rc_sim_control.commands import sample

    def source(t: float, obs: Observation) -> tuple[ArrayLike, ArrayLike]:
        v, w = sample(seq, np.array([t]))
        return float(v[0]), float(w[0])

    return source


def _period_steps(rate: float, dt: float) -> int:
    return max(1, round(1.0 / (rate * dt)))


class Simulator:
    """N cars in one static world; step API (:meth:`step_to`, :meth:`observe`) and :meth:`run`.

    Args:
        params: one VehicleParams (with ``n``) or one per car.
        world: the obstacles.
        config: loop settings.
        start: base_link start pose(s) ``(x, y, yaw)`` or (N, 3).
        n: number of cars when ``params`` is a single set.
    """

    def __init__(self, params: VehicleParams | Sequence[VehicleParams], world: World,
                 config: SimConfig | None = None, *, start: ArrayLike = (0.0, 0.0, 0.0),
                 n: int | None = None) -> None:
        from rc_sim_control.ackermann import CommandMapper, MapperConfig

        self.config = config or SimConfig()
        cfg = self.config
        self.car = Car(params, model=cfg.model, integrator=cfg.integrator, dt=cfg.dt, n=n,
                       tyre_model=cfg.tyre_model)
        self.params: list[VehicleParams] = list(self.car.params)
        self.n = self.car.n
        self.world = world
        self._world_arrays = WorldArrays.from_world(world)
        self._footprints: list[Footprint] = [footprint_from_params(p) for p in self.params]
        self._foot_rows = np.array([[f.center_x, f.half_length, f.half_width]
                                    for f in self._footprints])
        self._dt_ns = round(cfg.dt * 1e9)
        self.lidars = [Lidar(p, world) for p in self.params] if cfg.lidar else []
        self._error_models: list[Any] = []
        # incidence angles only when the error model uses them (incidence dropout)
        self._want_incidence = (cfg.lidar and cfg.lidar_errors is not None and getattr(
            cfg.lidar_errors, 'incidence_dropout_probability', 0.0) > 0)
        self._mapper_cls = CommandMapper
        self._mapper_config_cls = MapperConfig
        self.set_mapper_mode(cfg.mapper_mode)
        self._mu_g = max(max(p.friction.mu1, p.friction.mu2) for p in self.params) * GRAVITY
        self._periods = {
            'odom': _period_steps(cfg.odom_rate, cfg.dt),
            'imu': _period_steps(self.params[0].sensors.imu_update_rate, cfg.dt),
            'joints': _period_steps(cfg.joint_state_rate, cfg.dt),
            'command': _period_steps(cfg.command_rate, cfg.dt),
        }
        self._clock_period = _period_steps(cfg.clock_rate, cfg.dt)  # stamps made in result()
        if cfg.lidar:
            self._periods['scan'] = _period_steps(self.params[0].sensors.lidar_update_rate, cfg.dt)
        self._collision_min = (_period_steps(cfg.collision_rate, cfg.dt)
                               if cfg.collision_rate > 0 and world.n_obstacles else 0)
        self.reset(start)

    # ------------------------------------------------------------------ set-up
    def set_mapper_mode(self, mode: str) -> None:
        """Mapper mode for ``/cmd_vel`` (``angular_z`` meaning); resets the mappers."""
        self.mapper_mode = mode
        self._mappers = [self._mapper_cls(self._mapper_config_cls.from_vehicle(p, mode=mode))
                         for p in self.params]

    def reset(self, start: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        """Put the cars at rest at their start poses and clear every recording."""
        poses = np.asarray(start, dtype=np.float64)
        if poses.shape == (3,):
            poses = np.tile(poses, (self.n, 1))
        if poses.shape != (self.n, 3) or not np.all(np.isfinite(poses)):
            raise ConfigError(f'start pose: expected finite (x, y, yaw) or ({self.n}, 3), got '
                              f'{np.asarray(start).tolist()!r}')
        self.car.reset(poses[:, 0], poses[:, 1], poses[:, 2], 0.0)
        self.step_index = 0
        self._steer_cmd = np.zeros(self.n)
        self._wheel_cmd = np.zeros(self.n)
        self._next = dict.fromkeys(self._periods, 0)
        self._next_collision = 0
        self._touching = np.zeros(self.n, dtype=bool)
        self._in_contact: NDArray[np.bool_] = np.zeros(self.n, dtype=bool)
        self._rec = {name: _Recorder() for name in ('scan', 'commands')}
        self._snap_steps: list[int] = []
        self._snap_states: list[FloatArray] = []
        self._plan: dict[str, Any] | None = None
        self._plan_done: list[Series] = []
        self._last_scan: FloatArray | None = None
        self.last_scan_sample: dict[str, Any] | None = None
        self.scan_count = 0
        self.collisions: list[CollisionEvent] = []
        self._source: CommandSource | None = None
        self._source_output = 'twist'
        self._wall = 0.0
        for m in self._mappers:
            m.reset()
        if self.config.lidar and self.config.lidar_errors is not None:
            from rc_sim_sensors.lidar_errors import LidarErrorModel

            # fresh generators: every reset replays the same random sequence for the seed
            seeds = np.random.SeedSequence(self.config.seed).spawn(self.n)
            self._error_models = [LidarErrorModel(self.config.lidar_errors,
                                                  np.random.default_rng(s)) for s in seeds]

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return self.step_index * self.config.dt

    @property
    def scan_angles(self) -> FloatArray:
        """Beam angles of car 0's lidar in the ``laser`` frame [rad]."""
        return self.lidars[0].angles if self.lidars else np.zeros(0)

    def set_source(self, source: CommandSource | None, output: str = 'twist') -> None:
        """Command source called at ``command_rate``: ``(t, obs) -> (linear_x, angular_z)``.

        With ``output='mapper'`` it returns the mapper outputs ``(steering_angle [rad],
        wheel_speed [rad/s])`` directly instead of a twist.
        """
        if output not in ('twist', 'mapper'):
            raise ConfigError(f"command source output must be 'twist' or 'mapper', got {output!r}")
        self._flush_plan()
        self._source = source
        self._source_output = output

    def _flush_plan(self) -> None:
        """Keep the executed part of the current plan's commands and drop the plan (a command
        issued at the current instant is superseded by the next source: no time elapsed)."""
        if self._plan is not None:
            rows = self._plan_rows
            keep = rows['t_ns'] < self.step_index * self._dt_ns
            self._plan_done.append(Series({key: val[keep] for key, val in rows.items()}))
        self._plan = None

    # ------------------------------------------------------------------ commands
    def command_twist(self, linear_x: ArrayLike, angular_z: ArrayLike) -> None:
        """Send ``/cmd_vel`` (scalar or (N,)) now through the mappers; NaN input is rejected."""
        v = np.broadcast_to(np.asarray(linear_x, dtype=np.float64), (self.n,))
        w = np.broadcast_to(np.asarray(angular_z, dtype=np.float64), (self.n,))
        t = self.time
        accepted = np.zeros(self.n, dtype=bool)
        for i, mapper in enumerate(self._mappers):
            out = mapper.update(float(v[i]), float(w[i]), t)
            if out is not None:  # rejected (NaN/inf): keep the previous command, like the node
                self._steer_cmd[i] = out.steering_angle
                self._wheel_cmd[i] = out.wheel_speed
                accepted[i] = True
        self._record_command(v, w, accepted)

    def command(self, steering_angle: ArrayLike, wheel_speed: ArrayLike) -> None:
        """Send mapper outputs directly (``/steering_angle`` [rad], ``/rear_wheel_speed``
        [rad/s])."""
        s = np.broadcast_to(np.asarray(steering_angle, dtype=np.float64), (self.n,))
        w = np.broadcast_to(np.asarray(wheel_speed, dtype=np.float64), (self.n,))
        ok = np.isfinite(s) & np.isfinite(w)
        self._steer_cmd[ok] = s[ok]
        self._wheel_cmd[ok] = w[ok]
        nan = np.full(self.n, np.nan)
        self._record_command(nan, nan, ok)

    def _record_command(self, v: FloatArray, w: FloatArray, accepted: NDArray[np.bool_]) -> None:
        if not self.config.record:
            return
        self._rec['commands'].add(t_ns=self.step_index * self._dt_ns, linear_x=v.copy(),
                                  angular_z=w.copy(), steering_angle=self._steer_cmd.copy(),
                                  wheel_speed=self._wheel_cmd.copy(), accepted=accepted)

    # ------------------------------------------------------------------ loop
    def step_to(self, t: float) -> None:
        """Advance to time ``t`` [s] (rounded to whole steps), handling every event on the way."""
        target = round(t / self.config.dt)
        pace = self.config.realtime_factor
        wall0 = time.perf_counter()
        t0 = self.time
        while True:
            self._events()
            if self.step_index >= target:
                break
            nxt = min(min(self._next.values()), target)
            if self._collision_min:
                nxt = min(nxt, self._next_collision)
            n_steps = max(nxt - self.step_index, 1)
            if self.n == 1:  # scalar commands take the car's allocation-free path
                self.car.step(float(self._steer_cmd[0]), float(self._wheel_cmd[0]), n_steps)
            else:
                self.car.step(self._steer_cmd, self._wheel_cmd, n_steps)
            self.step_index += n_steps
            if pace > 0:
                ahead = (self.time - t0) / pace - (time.perf_counter() - wall0)
                if ahead > 1e-3:
                    time.sleep(ahead)
        self._wall += time.perf_counter() - wall0

    def _events(self) -> None:
        k = self.step_index
        nxt = self._next
        if self._collision_min and k >= self._next_collision:
            self._check_collisions()
        snap = False
        for name in ('odom', 'imu', 'joints'):
            if k >= nxt[name]:
                snap = True
                nxt[name] = k + self._periods[name]
        if snap and self.config.record:  # one snapshot serves every stream due now
            self._snap_steps.append(k)
            self._snap_states.append(self.car.state.copy())
        if 'scan' in nxt and k >= nxt['scan']:
            self._sample_scan()
            nxt['scan'] = k + self._periods['scan']
        if k >= nxt['command']:
            self._next_command(k)

    def _next_command(self, k: int) -> None:
        period = self._periods['command']
        plan = self._plan
        if plan is not None:  # precomputed plan: apply the tick's mapped command, jump to a change
            tick = k // period
            if tick < len(plan['change_next']):
                self._steer_cmd[:] = plan['steering_angle'][tick]
                self._wheel_cmd[:] = plan['wheel_speed'][tick]
                self._next['command'] = int(plan['change_next'][tick]) * period
            else:
                self._next['command'] = k + period
            return
        if self._source is not None:
            a, b = self._source(self.time, self.observe())
            if self._source_output == 'twist':
                self.command_twist(a, b)
            else:
                self.command(a, b)
        self._next['command'] = k + period

    def play(self, seq: Any, duration: float | None = None, *,
             progress: Callable[[float], None] | None = None) -> SimResult:
        """Run a :class:`~rc_sim_control.commands.CommandSequence` from the current state.

        ``/cmd_vel`` is sampled (zero-order hold) at ``command_rate`` and mapped up front with
        :func:`rc_sim_control.ackermann.map_sequence` in the sequence's mode (the vectorized twin
        of the streaming :class:`CommandMapper`: same hold, rate limit and rejection rules), so the
        loop only switches precomputed commands. ``duration`` defaults to the sequence's end plus
        :data:`SETTLE_TIME` (the car comes to rest after the last command).
        """
        from rc_sim_control.ackermann import MapperConfig, map_sequence
        from rc_sim_control.commands import sample

        period = self._periods['command']
        t_cmd = period * self.config.dt
        end = float(seq.t[-1]) + SETTLE_TIME if duration is None else float(duration)
        if not (math.isfinite(end) and end > 0):
            raise ConfigError(f'duration must be > 0 s, got {end!r}')
        self._flush_plan()
        start_tick = -(-self.step_index // period)
        ticks = np.arange(start_tick, math.ceil((self.step_index * self.config.dt + end)
                                                / t_cmd) + 1)
        t = ticks * t_cmd
        v, w = sample(seq, t - ticks[0] * t_cmd)
        self.set_mapper_mode(seq.mode)
        k = len(t)
        steer = np.empty((k, self.n))
        wheel = np.empty((k, self.n))
        valid = np.empty((k, self.n), dtype=bool)
        groups: dict[Any, list[int]] = {}  # cars sharing a mapper config share one mapping
        for i, p in enumerate(self.params):
            groups.setdefault(MapperConfig.from_vehicle(p, mode=seq.mode), []).append(i)
        for config, cars in groups.items():
            for i in cars:  # the rate limit starts from each car's current command
                mapped = map_sequence(t, v, w, config,
                                      initial_steering_angle=float(self._steer_cmd[i]))
                steer[:, i] = mapped.steering_angle
                wheel[:, i] = mapped.wheel_speed
                valid[:, i] = mapped.valid
                if len(cars) > 1 and np.all(self._steer_cmd[cars] == self._steer_cmd[i]):
                    steer[:, cars] = steer[:, i:i + 1]
                    wheel[:, cars] = wheel[:, i:i + 1]
                    valid[:, cars] = valid[:, i:i + 1]
                    break
        full_steer = np.full((start_tick + k, self.n), np.nan)
        full_wheel = np.full((start_tick + k, self.n), np.nan)
        full_steer[start_tick:], full_wheel[start_tick:] = steer, wheel
        change = np.ones(len(full_steer), dtype=bool)
        change[start_tick + 1:] = (np.any(np.diff(steer, axis=0) != 0, axis=1)
                                   | np.any(np.diff(wheel, axis=0) != 0, axis=1))
        change_idx = np.flatnonzero(change)
        # tick -> index of the next tick whose command differs (or the end)
        nxt = np.searchsorted(change_idx, np.arange(len(change)), side='right')
        change_next = np.append(change_idx, len(change))[nxt]
        self._plan = {'steering_angle': full_steer, 'wheel_speed': full_wheel,
                      'change_next': change_next}
        self._next['command'] = start_tick * period
        self._plan_rows = {'t_ns': np.round(t * 1e9).astype(np.int64),
                           'linear_x': np.repeat(v[:, None], self.n, axis=1),
                           'angular_z': np.repeat(w[:, None], self.n, axis=1),
                           'steering_angle': steer, 'wheel_speed': wheel, 'accepted': valid}
        return self.run(end, progress=progress)

    def run(self, duration: float, source: CommandSource | None = None, *,
            output: str = 'twist', progress: Callable[[float], None] | None = None,
            chunk: float = 0.5) -> SimResult:
        """Run for ``duration`` s from the current state with ``source`` and return the result.

        ``progress(t)`` is called about every ``chunk`` s of sim time.
        """
        if not (math.isfinite(duration) and duration > 0):
            raise ConfigError(f'duration must be > 0 s, got {duration!r}')
        if source is not None:
            if hasattr(source, 'linear_x') and hasattr(source, 'mode'):
                return self.play(source, duration, progress=progress)
            self.set_source(source, output)
        end = self.time + duration
        while self.time < end - 0.5 * self.config.dt:
            self.step_to(min(self.time + chunk, end))
            if progress is not None:
                progress(self.time)
        return self.result()

    def result(self) -> SimResult:
        """The recordings so far (state snapshots converted to sensor streams, vectorized)."""
        streams = self._derive_streams()
        streams['scan'] = self._rec['scan'].series()
        blocks = [block for block in self._plan_done if len(block['t_ns'])]
        if self._plan is not None:
            rows = self._plan_rows
            keep = rows['t_ns'] <= self.step_index * self._dt_ns
            blocks.append(Series({key: val[keep] for key, val in rows.items()}))
        recorded = self._rec['commands'].series()
        if len(recorded):
            blocks.append(recorded)
        if blocks:
            merged = {key: np.concatenate([b[key] for b in blocks]) for key in blocks[0]}
            order = np.argsort(merged['t_ns'], kind='stable')
            commands = Series({key: val[order] for key, val in merged.items()})
        else:
            commands = Series(t_ns=np.zeros(0, dtype=np.int64))
        streams['commands'] = commands
        streams['clock'] = Series(t_ns=np.arange(0, self.step_index + 1, self._clock_period,
                                                 dtype=np.int64) * self._dt_ns)
        return SimResult(params=self.params, world=self.world, config=self.config,
                         streams=streams, collisions=list(self.collisions),
                         scan_angles=self.scan_angles, sim_time=self.time, wall_time=self._wall,
                         mapper_mode=self.mapper_mode)

    @staticmethod
    def _outputs(probe: Car, p: VehicleParams) -> dict[str, FloatArray]:
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

    def _derive_streams(self) -> dict[str, Series]:
        steps = np.asarray(self._snap_steps, dtype=np.int64)
        states: FloatArray
        if len(steps) == 0:
            states = np.zeros((0, self.n, self.car.state.shape[1]))
        else:
            states = np.stack(self._snap_states)  # (K, N, n_state)
        cols: dict[str, list[FloatArray]] = {}
        k_total = len(steps)
        size = max(1, min(k_total, _PROBE_ROWS))
        for i, p in enumerate(self.params):
            # a probe Car of `size` rows converts the snapshots chunk by chunk (vectorized) with
            # the car's own output functions; its set-up cost does not grow with the run length
            probe = Car(p, model=self.config.model, integrator=self.config.integrator,
                        dt=self.config.dt, n=size, tyre_model=self.config.tyre_model)
            parts: dict[str, list[FloatArray]] = {}
            for lo in range(0, k_total, size):
                chunk = states[lo:lo + size, i, :]
                probe.state[:len(chunk)] = chunk
                probe.state[len(chunk):] = chunk[-1]
                for key, val in self._outputs(probe, p).items():
                    parts.setdefault(key, []).append(val[:len(chunk)])
            for key, vals in parts.items():
                cols.setdefault(key, []).append(np.concatenate(vals))
            if not parts:
                for key, val in self._outputs(probe, p).items():
                    cols.setdefault(key, []).append(val[:0])
        car_axis = {key: np.stack(val, axis=1) for key, val in cols.items()}  # (K, N, ...)
        t_ns = steps * self._dt_ns
        out: dict[str, Series] = {}
        fields_of = {
            'odom': ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'speed', 'steering', 'wheel_speed'),
            'imu': ('yaw', 'yaw_rate', 'ax', 'ay', 'fx', 'fy', 'fz'),
            'joints': ('position', 'wheel_speed'),
        }
        for name, keys in fields_of.items():
            sel = steps % self._periods[name] == 0
            out[name] = Series({'t_ns': t_ns[sel], **{k: car_axis[k][sel] for k in keys}})
        joints = out['joints']
        pos = joints['position']
        vel = np.zeros_like(pos)
        if len(pos) > 1:  # backward difference over the joint-state period
            vel[1:] = np.diff(pos, axis=0) / (self._periods['joints'] * self.config.dt)
        if len(pos):
            vel[0, :, 4] = vel[0, :, 5] = joints['wheel_speed'][0]
        joints['velocity'] = vel
        return out

    # ------------------------------------------------------------------ observation & sensors
    def observe(self) -> Observation:
        """Ground-truth state of every car now and the last lidar scan."""
        x, y, yaw = self.car.base_link_pose()
        vx, vy, r = self.car.base_link_twist()
        return Observation(t=self.time, x=x, y=y, yaw=yaw, vx=vx, vy=vy, yaw_rate=r,
                           steering_angle=self.car.steering_angle(),
                           wheel_speed=self.car.wheel_speed(), scan=self._last_scan,
                           scan_angles=self.scan_angles if self.lidars else None,
                           in_contact=self._in_contact.copy())

    def snapshot(self) -> dict[str, Any]:
        """Current sensor values of every car (N,) for live publishing: odom fields, IMU
        (``fx, fy, fz``, ``ax, ay``), joint ``position`` (N, 6) and ``velocity`` (N, 6: wheel
        joints from the wheel speeds, steering joints 0), and ``t_ns``."""
        x, y, yaw = self.car.base_link_pose()
        vx, vy, r = self.car.base_link_twist()
        ax, ay = self.car.body_acceleration()
        fx, fy, fz = np.empty(self.n), np.empty(self.n), np.empty(self.n)
        for i, p in enumerate(self.params):
            a, b, c = imu_specific_force(ax[i:i + 1], ay[i:i + 1], r[i:i + 1], p)
            fx[i], fy[i], fz[i] = a[0], b[0], c[0]
        angles = self.car.wheel_angles()
        pos = np.stack([angles[name] for name in JOINT_NAMES], axis=-1)
        omega = self.car.wheel_speed()
        vel = np.zeros_like(pos)
        vel[:, 2:] = omega[:, None]  # rolling wheels (the front ones approximately)
        return {'t_ns': self.step_index * self._dt_ns, 'x': x,
                'y': y, 'yaw': (yaw + np.pi) % (2 * np.pi) - np.pi, 'vx': vx, 'vy': vy,
                'yaw_rate': r, 'speed': self.car.speed, 'steering': self.car.steering_angle(),
                'wheel_speed': omega, 'ax': ax, 'ay': ay, 'fx': fx, 'fy': fy, 'fz': fz,
                'position': pos, 'velocity': vel}

    def _sample_scan(self) -> None:
        x, y, yaw = self.car.base_link_pose()
        t_ns = self.step_index * self._dt_ns
        ideal = np.empty((self.n, self.lidars[0].fan.n_beams))
        incidence = np.empty_like(ideal) if self._want_incidence else None
        for i, lidar in enumerate(self.lidars):
            extra = None
            if self.n > 1:
                others = np.arange(self.n) != i
                f = self._footprints[i]
                extra = footprint_segments(x[others], y[others], yaw[others], f.center_x,
                                           f.half_length, f.half_width)
            ideal[i] = lidar.scan(float(x[i]), float(y[i]), float(yaw[i]), extra_segments=extra,
                                  incidence_out=None if incidence is None else incidence[i])
        if self._error_models:
            ranges = np.empty_like(ideal)
            stamps = np.empty(self.n, dtype=np.int64)
            lost = np.zeros(self.n, dtype=bool)
            for i, em in enumerate(self._error_models):
                out = em.apply(ideal[i], self.lidars[i].angles, t_ns * 1e-9,
                               incidence=None if incidence is None else incidence[i])
                ranges[i] = out.ranges
                stamps[i] = round(float(out.stamp) * 1e9)
                lost[i] = bool(out.lost)
            sample = {'t_ns': t_ns, 'stamp_ns': stamps, 'ranges': ranges.astype(np.float32),
                      'raw': ideal.astype(np.float32), 'lost': lost}
        else:
            ranges = ideal
            sample = {'t_ns': t_ns, 'stamp_ns': np.full(self.n, t_ns, dtype=np.int64),
                      'ranges': ideal.astype(np.float32), 'lost': np.zeros(self.n, dtype=bool)}
        if self.config.record:
            self._rec['scan'].add(**sample)
        self._last_scan = ranges
        self.last_scan_sample = sample
        self.scan_count += 1

    # ------------------------------------------------------------------ collisions
    def _check_collisions(self) -> None:
        x, y, yaw = self.car.base_link_pose()
        gap, kind, index, depth, normal = check_cars(x, y, yaw, self._foot_rows,
                                                     self._world_arrays)
        contact = kind >= 0
        for i in np.flatnonzero(gap <= 5e-3):
            if not contact[i]:
                if self._touching[i] and gap[i] <= 0:  # released once clear by 5 mm (no chatter)
                    grown = self._foot_rows[i:i + 1] + np.array([[0.0, 5e-3, 5e-3]])
                    self._touching[i] = check_cars(x[i:i + 1], y[i:i + 1], yaw[i:i + 1], grown,
                                                   self._world_arrays)[1][0] >= 0
                continue
            nx, ny, d = float(normal[i, 0]), float(normal[i, 1]), float(depth[i])
            if not self._touching[i]:
                self.collisions.append(CollisionEvent(
                    t=self.time, car=int(i),
                    obstacle=self.world.obstacle_name(int(kind[i]), int(index[i])),
                    kind=('box', 'disc', 'ring')[int(kind[i])], depth=d, normal_x=nx,
                    normal_y=ny, speed=float(self.car.speed[i]), x=float(x[i]), y=float(y[i])))
            self._touching[i] = True
            self._respond(int(i), float(x[i]) + d * nx, float(y[i]) + d * ny, float(yaw[i]), nx,
                          ny)
        self._touching[gap > 5e-3] = False
        self._in_contact = contact
        self._next_collision = self.step_index + max(self._collision_min,
                                                     self._safe_steps(float(np.min(gap))))

    def _safe_steps(self, gap: float) -> int:
        """Whole steps before any car can cover ``gap``: v0 T + a T^2 / 2 <= gap with
        v0 = |v| + |r| e (footprint centre speed, e its offset from the CG) + 0.5 m/s and
        a = 2 mu g (twice the friction-limited acceleration)."""
        if gap <= 0.0:
            return 0
        s = self.car.state
        v0 = float(np.max(np.hypot(s[:, VX], s[:, VY]) + np.abs(s[:, YAW_RATE]) * 0.5)) + 0.5
        a = 2.0 * self._mu_g
        horizon = (math.sqrt(v0 * v0 + 2.0 * a * gap) - v0) / a
        return int(horizon / self.config.dt)

    def _respond(self, i: int, x: float, y: float, yaw: float, nx: float, ny: float) -> None:
        response = self.config.collision_response
        if response == 'ignore':
            return
        mask = np.zeros(self.n, dtype=bool)
        mask[i] = True
        self.car.set_pose(mask, np.array([x]), np.array([y]), np.array([yaw]))
        if response == 'stop':
            self.car.stop(mask)
            return
        # bounce: reflect the CG velocity's normal component (world frame), keep the tangential one
        s = self.car.state
        c, sn = math.cos(yaw), math.sin(yaw)
        vwx = c * s[i, VX] - sn * s[i, VY]
        vwy = sn * s[i, VX] + c * s[i, VY]
        vn = vwx * nx + vwy * ny
        if vn < 0:
            k = 1.0 + self.config.restitution
            vwx -= k * vn * nx
            vwy -= k * vn * ny
            s[i, VX] = c * vwx + sn * vwy
            s[i, VY] = -sn * vwx + c * vwy
            s[i, WHEEL_SPEED] = s[i, VX] / self.params[i].effective_wheel_radius
