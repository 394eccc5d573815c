"""The simulation loop: fixed physics step, sensors at their own rates, collisions, commands.

Time is an integer step counter (``t = k dt``, stamps in integer nanoseconds): runs are exactly
reproducible for a seed (the only randomness, the lidar error model, has one generator per car
from ``SeedSequence(seed)``). Events on one step, in order: collisions
(:mod:`~rc_sim_engine.sim.collision_response`), snapshot for odometry/IMU/joints
(:mod:`~rc_sim_engine.sim.streams`) and lidar (:mod:`~rc_sim_engine.sim.sensor_sampling`), commands
(:mod:`~rc_sim_engine.sim.command_plan`: a controller through the control core's mapper, or a
sequence's precomputed plan). Between Python events the loop runs compiled
(:func:`~rc_sim_engine.sim.loop_kernel.run_stretch`, without the GIL). Recordings stay in memory or
are streamed chunk by chunk to a sink (:mod:`~rc_sim_engine.sim.recorder`). A non-finite state
stops the run at once (:class:`~rc_sim_engine.sim.streams.NonFiniteError`). Pacing:
:mod:`~rc_sim_engine.sim.pacing`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams
from rc_sim_engine.sim import loop_kernel as lk
from rc_sim_engine.sim.collision_response import CollisionRig
from rc_sim_engine.sim.command_plan import (
    CommandLog,
    CommandPlan,
    Mappers,
    build_plan,
    sequence_source,
)
from rc_sim_engine.sim.loop_buffers import LoopBuffers
from rc_sim_engine.sim.pacing import Pacer
from rc_sim_engine.sim.recorder import (
    MemoryRecorder,
    StreamingRecorder,
    StreamSink,
    streaming_bytes,
)
from rc_sim_engine.sim.run_limits import check_cars, check_run, check_start, check_world
from rc_sim_engine.sim.sensor_sampling import LidarRig, live_snapshot
from rc_sim_engine.sim.sim_config import (
    SETTLE_TIME,
    CollisionEvent,
    CommandSource,
    Observation,
    SimConfig,
    period_steps,
)
from rc_sim_engine.sim.streams import NonFiniteError, Series, SimResult
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.state import N_STATE, STATE_FIELDS
from rc_sim_engine.world.sdf import World

__all__ = [
    'SETTLE_TIME',
    'CollisionEvent',
    'Observation',
    'Series',
    'SimConfig',
    'SimResult',
    'Simulator',
    'sequence_source',
]

FloatArray = NDArray[np.float64]
#: Bytes of recordings a streamed run holds before it hands a chunk to its sink.
CHUNK_BYTES = 16e6
#: The command kinds of the control core's mapper (/cmd_vel, sequences, controllers).
MAPPER_KINDS = ('angle', 'wheel_speed')


class Simulator:
    """N cars in one static world; step API (:meth:`step_to`, :meth:`observe`) and :meth:`run`.

    Args:
        params: one VehicleParams (with ``n``) or one per car.
        world: the obstacles.
        config: loop settings.
        start: base_link start pose(s) ``(x, y, yaw)`` or (N, 3).
        n: number of cars when ``params`` is a single set.
        steering_kind, drive_kind: what :meth:`command` sends
        (:class:`~rc_sim_engine.vehicle.car.Car`):
            by default the mapper's steering angle [rad] and wheel speed [rad/s], which every
            car takes (a normalised-servo or throttle car through its own code's chain); the
            raw commands of a real car (e.g. ``'normalised'`` and ``'throttle'``) drive it as
            they drive the real one, and then :meth:`command_twist` and :meth:`play`, whose
            mapper makes angles and wheel speeds, are refused.
    """

    def __init__(self, params: VehicleParams | Sequence[VehicleParams], world: World,
                 config: SimConfig | None = None, *, start: ArrayLike = (0.0, 0.0, 0.0),
                 n: int | None = None, steering_kind: str = 'angle',
                 drive_kind: str = 'wheel_speed') -> None:
        self.config = config or SimConfig()
        cfg = self.config
        check_cars(n if n is not None else 1 if isinstance(params, VehicleParams)
                   else len(params))
        check_world(world)
        self.car = Car(params, model=cfg.model, integrator=cfg.integrator, dt=cfg.dt, n=n,
                       tyre_model=cfg.tyre_model, steering_kind=steering_kind,
                       drive_kind=drive_kind)
        self.command_kinds = (steering_kind, drive_kind)
        self.params: list[VehicleParams] = list(self.car.params)
        self.n = self.car.n
        self.world = world
        self._dt_ns = round(cfg.dt * 1e9)
        self._collisions = CollisionRig(self.params, world, cfg)
        self._lidar = (LidarRig(self.params, world, self._collisions.foot, cfg.lidar_errors)
                       if cfg.lidar else None)
        self.lidars = self._lidar.lidars if self._lidar is not None else []
        self._periods = {
            'odom': period_steps(cfg.odom_rate, cfg.dt),
            'imu': period_steps(self.params[0].sensors.imu_update_rate, cfg.dt),
            'joints': period_steps(cfg.joint_state_rate, cfg.dt),
            'command': period_steps(cfg.command_rate, cfg.dt),
        }
        if cfg.lidar:
            self._periods['scan'] = period_steps(self.params[0].sensors.lidar_update_rate,
                                                 cfg.dt)
        self._clock_period = period_steps(cfg.clock_rate, cfg.dt)
        self._kernel_periods = np.array([
            self._periods['odom'], self._periods['imu'], self._periods['joints'],
            self._periods.get('scan', 0), self._periods['command'],
            self._collisions.min_period], dtype=np.int64)
        self._lr = self.car.base_link_offset
        self._buf = LoopBuffers.allocate(
            self.n, cfg.record, self._lidar,
            self._periods.get('scan', 1) * cfg.dt, CHUNK_BYTES)
        from rc_sim_engine.sim.streams import StreamDeriver

        self._deriver = StreamDeriver(self.params, cfg, self._periods)
        self.set_mapper_mode(cfg.mapper_mode)
        self.reset(start)

    # ------------------------------------------------------------------ set-up
    def set_mapper_mode(self, mode: str) -> None:
        """Mapper mode for ``/cmd_vel`` (``angular_z`` meaning); resets the mappers."""
        self.mapper_mode = mode
        self._mappers = Mappers(self.params, mode)

    def reset(self, start: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        """Put the cars at rest at their start poses and clear every recording."""
        poses = np.asarray(start, dtype=np.float64)
        if poses.shape == (3,):
            poses = np.tile(poses, (self.n, 1))
        if poses.shape != (self.n, 3) or not np.all(np.isfinite(poses)):
            raise ConfigError(f'start pose: expected finite (x, y, yaw) or ({self.n}, 3), got '
                              f'{np.asarray(start).tolist()!r}')
        check_start(poses)
        self.car.reset(poses[:, 0], poses[:, 1], poses[:, 2], 0.0)
        self.step_index = 0
        self._steer_cmd = np.zeros(self.n)
        self._wheel_cmd = np.zeros(self.n)
        self._buf.sched[:] = 0
        self._collisions.reset()
        self._log = CommandLog()
        self._recorder: MemoryRecorder | StreamingRecorder = self._memory_recorder()
        self._plan: CommandPlan | None = None
        self._last_scan: FloatArray | None = None
        self.last_scan_sample: dict[str, Any] | None = None
        self.scan_count = 0
        self.collisions: list[CollisionEvent] = []
        self._source: CommandSource | None = None
        self._source_output = 'twist'
        self._wall = 0.0
        self._defer_scans = False
        self._mappers.reset()
        if self._lidar is not None:
            self._lidar.reset(self.config.seed)

    def attach_sink(self, sink: StreamSink) -> None:
        """Stream every sample to ``sink`` at the end of every stretch from now on, keeping none
        (a live publisher: ``sim_node``); needs ``record=True``. :meth:`reset` detaches it."""
        if not self.config.record:
            raise ConfigError('attach_sink: the simulator must record (SimConfig(record=True))')
        self._recorder = StreamingRecorder(sink, self._deriver, self._log, self.n, N_STATE,
                                           self._dt_ns, self._clock_period, 0.0,
                                           threaded=False, keep=False)

    def _memory_recorder(self) -> MemoryRecorder:
        return MemoryRecorder(self._deriver, self._log, self.n, N_STATE, self._dt_ns,
                              self._clock_period)

    def buffer_bytes(self, streaming: bool) -> float:
        """Memory of the loop's buffers [bytes]; ``streaming``: plus the chunks a streamed run
        holds (the recorder's pending chunk, the sink's queue and the one being written, and
        the decimated copies kept for plots)."""
        beams = self.lidars[0].fan.n_beams if self.lidars else 0
        return self._buf.nbytes + (streaming_bytes(self.n, beams, CHUNK_BYTES) if streaming
                                   else 0.0)

    @property
    def periods(self) -> dict[str, int]:
        """Event periods in physics steps: ``odom``, ``imu``, ``joints``, ``command``, ``clock``
        and (with the lidar) ``scan``."""
        return {**self._periods, 'clock': self._clock_period}

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
        self._end_plan()
        self._source = source
        self._source_output = output
        self._buf.sched[lk.S_NEXT_COMMAND] = self.step_index  # due now (if any source)

    def _end_plan(self) -> None:
        self._log.end_plan(self.step_index * self._dt_ns)
        self._plan = None

    # ------------------------------------------------------------------ commands
    def _check_mapper_kinds(self, what: str) -> None:
        if self.command_kinds != MAPPER_KINDS:
            raise ConfigError(f'{what}: this simulator takes {self.command_kinds[0]} + '
                              f'{self.command_kinds[1]} commands (the raw commands of the car), '
                              "not the mapper's steering angle and wheel speed")

    def command_twist(self, linear_x: ArrayLike, angular_z: ArrayLike) -> None:
        """Send ``/cmd_vel`` (scalar or (N,)) now through the mappers; NaN input is rejected."""
        self._check_mapper_kinds('/cmd_vel')
        v = np.broadcast_to(np.asarray(linear_x, dtype=np.float64), (self.n,))
        w = np.broadcast_to(np.asarray(angular_z, dtype=np.float64), (self.n,))
        accepted = self._mappers.map(v, w, self.time, self._steer_cmd, self._wheel_cmd)
        self._record_command(v, w, accepted)

    def command(self, steering_angle: ArrayLike, wheel_speed: ArrayLike) -> None:
        """Send mapper outputs directly (``/steering_angle`` [rad], ``/rear_wheel_speed``
        [rad/s]), or the commands of the kinds the simulator was built for (``command_kinds``,
        e.g. a normalised servo command and an ESC duty)."""
        s = np.broadcast_to(np.asarray(steering_angle, dtype=np.float64), (self.n,))
        w = np.broadcast_to(np.asarray(wheel_speed, dtype=np.float64), (self.n,))
        ok = np.isfinite(s) & np.isfinite(w)
        self._steer_cmd[ok] = s[ok]
        self._wheel_cmd[ok] = w[ok]
        nan = np.full(self.n, np.nan)
        self._record_command(nan, nan, ok)

    def _record_command(self, v: FloatArray, w: FloatArray, accepted: NDArray[np.bool_]) -> None:
        if self.config.record:
            self._log.record(self.step_index * self._dt_ns, v, w, self._steer_cmd,
                             self._wheel_cmd, accepted)

    def _source_command(self) -> None:
        if self._source is not None:
            a, b = self._source(self.time, self.observe())
            if self._source_output == 'twist':
                self.command_twist(a, b)
            else:
                self.command(a, b)
        self._buf.sched[lk.S_NEXT_COMMAND] = self.step_index + self._periods['command']

    # ------------------------------------------------------------------ loop
    def step_to(self, t: float) -> None:
        """Advance to time ``t`` [s] (rounded to whole steps), handling every event on the way."""
        target = max(round(t / self.config.dt), self.step_index)
        factor = self.config.realtime_factor
        check_run(self, (target - self.step_index) * self.config.dt, plan_ticks=0,
                  streaming=self._recorder.streaming)
        pacer = Pacer(factor, self.time) if factor > 0 else None
        wall0 = time.perf_counter()
        try:
            while True:
                k_end = target
                if pacer is not None:
                    k_end = min(target, self.step_index + pacer.stretch_steps(self.config.dt))
                status = self._stretch(k_end)
                if status == lk.NEED_COMMAND:
                    self._source_command()
                elif status == lk.FULL:
                    self._recorder.flush(self.step_index, inclusive=False)
                elif status == lk.DONE:
                    self._recorder.flush(self.step_index, inclusive=True)
                    if pacer is not None:
                        pacer.wait(self.time)
                    if self.step_index >= target:
                        break
        finally:
            self._wall += time.perf_counter() - wall0

    def _stretch(self, k_end: int) -> int:
        """One compiled stretch towards ``k_end``; empties the buffers; returns its status."""
        sched, car = self._buf.sched, self.car
        sched[lk.S_K] = self.step_index
        head, primed = car.delay_head
        sched[lk.S_HEAD], sched[lk.S_PRIMED] = head, int(primed)
        plan = self._plan
        if plan is None and self._source is None:  # nobody to ask at command ticks (commands
            # come through command() / command_twist() between steps): one stretch, not one
            # per command period, so the scans of the stretch are cast in one call
            sched[lk.S_NEXT_COMMAND] = max(int(sched[lk.S_NEXT_COMMAND]), k_end + 1)
        plan_steer, plan_next = ((plan.steering_angle, plan.change_next) if plan is not None
                                 else self._buf.no_plan)
        plan_wheel = plan.wheel_speed if plan is not None else plan_steer
        rig = self._collisions
        arrays = rig.arrays
        state, packed, n_sub, model_id, integ_id, project, delay_buf, delay, throttle = (
            car.stepping())
        k0 = self.step_index
        status = lk.run_stretch(
            k_end, state, packed, self._steer_cmd, self._wheel_cmd, self.config.dt, n_sub,
            model_id, integ_id, project, delay_buf, delay, throttle, sched,
            self._kernel_periods, plan is not None, plan_steer, plan_wheel, plan_next,
            self.config.record, self._buf.snap_states, self._buf.snap_steps, self._lr, rig.radius,
            rig.foot, self._buf.scan_poses, self._buf.scan_steps, arrays.boxes, rig.box_cos,
            rig.box_sin, arrays.discs, arrays.rings, rig.response, rig.restitution, rig.mu_g,
            rig.touching, rig.in_contact, rig.events, rig.mass)
        self.step_index = int(sched[lk.S_K])
        car.stepped(self.step_index - k0, int(sched[lk.S_HEAD]), bool(sched[lk.S_PRIMED]))
        self._drain()
        if status == lk.NON_FINITE:
            car_i = int(sched[lk.S_BAD_CAR])
            bad = ', '.join(f'{name} = {value}' for name, value in zip(STATE_FIELDS, state[car_i])
                            if not math.isfinite(value))
            raise NonFiniteError(
                f'the simulation became non-finite at t = {self.time:.3f} s: car {car_i} state '
                f'{bad} (check the vehicle parameters for physically absurd values)')
        return int(status)

    def _drain(self) -> None:
        """Hand the buffers' contents to the recorder, the lidar error model and the events."""
        sched = self._buf.sched
        n_snap = int(sched[lk.S_N_SNAP])
        if n_snap:
            self._recorder.add_snapshots(self._buf.snap_steps[:n_snap].copy(),
                                         self._buf.snap_states[:n_snap].copy())
            sched[lk.S_N_SNAP] = 0
        n_scan = int(sched[lk.S_N_SCAN])
        if n_scan and self._lidar is not None:
            t_ns = self._buf.scan_steps[:n_scan] * self._dt_ns
            poses = self._buf.scan_poses[:n_scan].copy()
            if self._defer_scans:  # cast with the chunk's conversion, in its thread
                assert isinstance(self._recorder, StreamingRecorder)
                self._recorder.add_scan_poses(t_ns, poses, n_scan * self._lidar.scan_bytes)
            else:
                sample, self._last_scan = self._lidar.cast(t_ns, poses)
                if self.config.record:
                    self._recorder.add_scans(sample)
                self.last_scan_sample = _latest(sample)
            self.scan_count += n_scan
            sched[lk.S_N_SCAN] = 0
        n_event = int(sched[lk.S_N_EVENT])
        if n_event:
            self.collisions.extend(self._collisions.take_events(n_event, self.config.dt))
            sched[lk.S_N_EVENT] = 0

    def play(self, seq: Any, duration: float | None = None, *,
             progress: Callable[[float], None] | None = None,
             sink: StreamSink | None = None) -> SimResult:
        """Run a :class:`~rc_sim_control.commands.CommandSequence` from the current state.

        ``/cmd_vel`` is sampled (zero-order hold) at ``command_rate`` and mapped up front with
        :func:`rc_sim_control.ackermann.map_sequence` in the sequence's mode (the vectorized twin
        of the streaming :class:`CommandMapper`: same hold, rate limit and rejection rules), so the
        loop only switches precomputed commands. ``duration`` defaults to the sequence's end plus
        :data:`SETTLE_TIME` (the car comes to rest after the last command). With ``sink`` the
        recordings are streamed to it chunk by chunk (bounded memory) and the result keeps
        decimated streams and running statistics.
        """
        self._check_mapper_kinds('a command sequence')
        end = float(seq.t[-1]) + SETTLE_TIME if duration is None else float(duration)
        if not (math.isfinite(end) and end > 0):
            raise ConfigError(f'duration must be > 0 s, got {end!r}')
        period = self._periods['command']
        ticks = math.ceil((self.step_index * self.config.dt + end) / (period * self.config.dt))
        name = str(getattr(seq, 'name', '') or 'sequence')
        label = f'{name!r} (ends at {float(seq.t[-1]):g} s)' if duration is None else None
        check_run(self, end, plan_ticks=ticks, streaming=sink is not None, label=label)
        self._end_plan()
        self.set_mapper_mode(seq.mode)
        plan = build_plan(seq, self.params, self.step_index, end, period, self.config.dt,
                          self._steer_cmd)
        self._plan = plan
        self._log.start_plan(plan.rows)
        self._buf.sched[lk.S_NEXT_COMMAND] = plan.start_tick * period
        return self._run_until(self.time + end, progress, sink)

    def run(self, duration: float, source: CommandSource | None = None, *,
            output: str = 'twist', progress: Callable[[float], None] | None = None,
            chunk: float = 0.5, sink: StreamSink | None = None) -> SimResult:
        """Run for ``duration`` s from the current state with ``source`` and return the result.

        ``progress(t)`` is called about every ``chunk`` s of sim time; ``sink`` streams the
        recordings (see :meth:`play`).
        """
        if not (math.isfinite(duration) and duration > 0):
            raise ConfigError(f'duration must be > 0 s, got {duration!r}')
        if source is not None:
            if hasattr(source, 'linear_x') and hasattr(source, 'mode'):
                return self.play(source, duration, progress=progress, sink=sink)
            self.set_source(source, output)
        check_run(self, duration, plan_ticks=0, streaming=sink is not None)
        return self._run_until(self.time + duration, progress, sink, chunk)

    def _run_until(self, end: float, progress: Callable[[float], None] | None,
                   sink: StreamSink | None, chunk: float = 0.5) -> SimResult:
        if sink is None:
            self._loop_until(end, progress, chunk)
            return self.result()
        if not self._recorder.empty:
            raise ConfigError('a streamed run must start with nothing recorded (a new or '
                              'reset Simulator)')
        # nothing reads the scans during a played sequence: they are cast with each chunk's
        # conversion, in a thread of its own, while the loop goes on
        self._defer_scans = self._plan is not None and self._lidar is not None
        recorder = StreamingRecorder(sink, self._deriver, self._log, self.n, N_STATE,
                                     self._dt_ns, self._clock_period, CHUNK_BYTES,
                                     finish_scans=self._lidar.cast if self._lidar else None)
        self._recorder = recorder
        try:
            self._loop_until(end, progress, chunk)
            self._wall -= recorder.sink_seconds  # the loop's wall time: without the sink's
            recorder.flush(self.step_index, inclusive=True, final=True)
            recorder.close()
        except BaseException:  # any failure, Ctrl-C included: stop the sink thread, re-raise
            recorder.close(abandon=True)
            raise
        finally:
            self._defer_scans = False
            self._log = CommandLog()  # a later run records afresh
            self._recorder = self._memory_recorder()
        if recorder.converter.last_scan is not None:
            sample, self._last_scan = recorder.converter.last_scan
            self.last_scan_sample = _latest(sample)
        return self._result(recorder.streams(self.step_index), recorder)

    def _loop_until(self, end: float, progress: Callable[[float], None] | None,
                    chunk: float) -> None:
        while self.time < end - 0.5 * self.config.dt:
            self.step_to(min(self.time + chunk, end))
            if progress is not None:
                progress(self.time)

    def result(self) -> SimResult:
        """The recordings so far (state snapshots converted to sensor streams, vectorized)."""
        return self._result(self._recorder.streams(self.step_index), None)

    def _result(self, streams: dict[str, Series],
                streamed: StreamingRecorder | None) -> SimResult:
        return SimResult(params=self.params, world=self.world, config=self.config,
                         streams=streams, collisions=list(self.collisions),
                         scan_angles=self.scan_angles, sim_time=self.time, wall_time=self._wall,
                         mapper_mode=self.mapper_mode,
                         stats=streamed.stats if streamed is not None else None,
                         decimated=streamed is not None)

    # ------------------------------------------------------------------ observation & sensors
    def observe(self) -> Observation:
        """Ground-truth state of every car now and the last lidar scan."""
        x, y, yaw = self.car.base_link_pose()
        vx, vy, r = self.car.base_link_twist()
        return Observation(t=self.time, x=x, y=y, yaw=yaw, vx=vx, vy=vy, yaw_rate=r,
                           steering_angle=self.car.steering_angle(),
                           wheel_speed=self.car.wheel_speed(), scan=self._last_scan,
                           scan_angles=self.scan_angles if self.lidars else None,
                           in_contact=self._collisions.in_contact.copy())

    def snapshot(self) -> dict[str, Any]:
        """Current sensor values of every car (N,) for live publishing: odom fields, IMU
        (``fx, fy, fz``, ``ax, ay``), joint ``position`` (N, 6) and ``velocity`` (N, 6: wheel
        joints from the wheel speeds, steering joints 0), and ``t_ns``."""
        return live_snapshot(self.car, self.params, self.step_index * self._dt_ns)


def _latest(sample: dict[str, np.ndarray]) -> dict[str, Any]:
    """The last scan of a block of lidar samples (as a live node publishes it)."""
    return {key: (int(val[-1]) if key == 't_ns' else val[-1]) for key, val in sample.items()}
