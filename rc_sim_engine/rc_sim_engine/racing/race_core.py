"""Batched racing state: M worlds x N cars on one track, stepped by one compiled call.

    core = RaceCore(load_track('chicane_track'), params, n_worlds=256, n_cars=1, dt=0.01)
    core.reset_cars(np.arange(core.n_total), core.track.grid_poses(1).repeat(256, axis=0))
    core.step(actions)              # (M N, 2): steering angle [rad] (or curvature), speed [m/s]
    core.scans, core.base, core.obs[:, OBS_S], core.wall_contact, core.car_contact

The step is :func:`rc_sim_engine.racing.race_kernels.race_step` (serial) or ``race_step_parallel``
(threads, from :data:`PARALLEL_MIN_CARS` cars): the same vehicle step as :class:`Car` (latency,
servo, wheel loop, model, integrator), wall and car-to-car contacts, lidar scans with the other
cars in them, progress along the centre line and lap times. Contacts are reported, not resolved:
callers decide (the Gymnasium envs terminate the car).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams, load_vehicle_params
from rc_sim_engine.compiled.cache import compiled_entry
from rc_sim_engine.racing.race_kernels import (
    A_ACTIONS,
    A_BASE,
    A_BEAMS,
    A_BUF,
    A_CENTERS,
    A_CFG,
    A_COUNT,
    A_DEPTH,
    A_FP,
    A_GEO,
    A_LINE_S,
    A_LINE_XY,
    A_META,
    A_MOUNT,
    A_NORMAL,
    A_OBS,
    A_PARAMS,
    A_RECT,
    A_STATES,
    CFG_ACTION_MODE,
    CFG_ANGLE_INC,
    CFG_ANGLE_MIN,
    CFG_DT,
    CFG_INTEG,
    CFG_LAP_LENGTH,
    CFG_LIDAR,
    CFG_MODEL,
    CFG_N_CARS,
    CFG_N_SUB,
    CFG_PROJECT,
    CFG_RANGE_MAX,
    CFG_RANGE_MIN,
    CFG_SIZE,
    I_ACTIVE,
    I_COUNT,
    I_DELAY,
    I_ENTRY,
    I_HEAD,
    I_OTHER,
    I_PRIMED,
    I_SYNC,
    OBS_PROGRESS,
    OBS_S,
    OBS_SIZE,
    S_COUNT,
    S_SCANS,
    SYNC_SIZE,
    SYNC_THREADS,
    carve,
    race_step,
    race_step_parallel,
    views_of,
)
from rc_sim_engine.sim.warmup import racing_compile_notice
from rc_sim_engine.vehicle.actuators import latency_steps
from rc_sim_engine.vehicle.car import as_param_list
from rc_sim_engine.vehicle.integrators import get_integrator, substeps
from rc_sim_engine.vehicle.models import get_model
from rc_sim_engine.vehicle.packed import P_LR, P_R, pack_params
from rc_sim_engine.vehicle.state import N_STATE, SPEED_REFERENCE, VX, WHEEL_SPEED, YAW, X, Y
from rc_sim_engine.world.collision import footprint_from_params
from rc_sim_engine.world.track import Track

__all__ = ['ACTION_MODES', 'PARALLEL_MIN_CARS', 'RaceCore']

FloatArray = NDArray[np.float64]
ACTION_MODES = ('steering', 'curvature')
_F64 = np.dtype(np.float64)
_NDARRAY = np.ndarray
#: Attributes :meth:`RaceCore._bind` derives (left out of copies and pickles, rebuilt after).
_DERIVED = frozenset({'states', 'packed', 'actions', 'buf', 'cfg', 'footprints', 'mount',
                      'cos_beam', 'sin_beam', 'base', 'rect', 'obs', 'normal',
                      'delay', 'primed', 'active', 'head', 'other', 'scans', '_f64', '_i64',
                      '_step'})
#: From this many cars in total the step runs on numba threads (2 cores, 1080-beam lidars: 8 cars
#: 22,500 steps/s threaded against 15,700 serial; 4 cars no gain; bench_racing_multicar.py).
PARALLEL_MIN_CARS = 8


class RaceCore:
    """State and buffers of M x N cars on a :class:`~rc_sim_engine.world.track.Track` (module doc).

    Args:
        params: one VehicleParams for every car, or N (one per car of a world, repeated in
            every world). The lidar spec (samples, field of view) must be common.
        n_worlds, n_cars: M independent worlds of N interacting cars; car k is in world k // N.
        dt: step [s]; lidar: cast a scan every step; action_mode: 'steering' or 'curvature'.
        parallel: force threads on/off (None: from :data:`PARALLEL_MIN_CARS` cars).
    """

    def __init__(self, track: Track, params: VehicleParams | Sequence[VehicleParams] | None = None,
                 *, n_worlds: int = 1, n_cars: int = 1, dt: float = 0.01, lidar: bool = True,
                 action_mode: str = 'steering', model: str = 'single_track',
                 integrator: str = 'rk4', tyre_model: str | None = None,
                 parallel: bool | None = None) -> None:
        if int(n_worlds) < 1 or int(n_cars) < 1:
            raise ConfigError(f'need n_worlds >= 1 and n_cars >= 1, got {n_worlds}, {n_cars}')
        if action_mode not in ACTION_MODES:
            raise ConfigError(f'action_mode {action_mode!r}: choose {" or ".join(ACTION_MODES)}')
        self.track = track
        self.n_worlds, self.n_cars = int(n_worlds), int(n_cars)
        self.n_total = self.n_worlds * self.n_cars
        plist = as_param_list(params if params is not None else load_vehicle_params(),
                              self.n_cars) * self.n_worlds
        self.params = plist
        s0 = plist[0].sensors
        if any((p.sensors.lidar_samples, p.sensors.lidar_fov) != (s0.lidar_samples, s0.lidar_fov)
               for p in plist):
            raise ConfigError('every car needs the same lidar_samples and lidar_fov')
        if lidar and s0.lidar_range_max > track.lidar.meta[2] + 1e-9:
            raise ConfigError(f'lidar_range_max {s0.lidar_range_max} m exceeds the track '
                              f'table range_cap {track.lidar.meta[2]} m (load_track range_cap)')
        model_spec = get_model(model)
        self.dt = float(dt)
        n_sub = substeps(self.dt)
        packed = pack_params(plist, tyre_model=tyre_model, substep=self.dt / n_sub)
        delay = [latency_steps(p.timing.command_latency, self.dt) for p in plist]
        fps = [footprint_from_params(p) for p in plist]
        self.angles = s0.lidar_angle_min + s0.lidar_angle_increment * np.arange(s0.lidar_samples)
        cfg = np.zeros(CFG_SIZE)
        cfg[CFG_DT] = self.dt
        cfg[CFG_N_CARS] = self.n_cars
        cfg[CFG_ACTION_MODE] = ACTION_MODES.index(action_mode)
        cfg[CFG_LIDAR] = 1.0 if lidar else 0.0
        cfg[CFG_ANGLE_MIN] = s0.lidar_angle_min
        cfg[CFG_ANGLE_INC] = s0.lidar_angle_increment
        cfg[CFG_RANGE_MIN] = s0.lidar_range_min
        cfg[CFG_RANGE_MAX] = s0.lidar_range_max
        cfg[CFG_LAP_LENGTH] = track.centerline.length
        cfg[CFG_N_SUB] = n_sub
        cfg[CFG_MODEL] = model_spec.kernel_id
        cfg[CFG_INTEG] = get_integrator(integrator)
        cfg[CFG_PROJECT] = 1.0 if model_spec.project_kinematic else 0.0
        self.lidar = bool(lidar)
        n = self.n_total
        n_beams = len(self.angles) if lidar else 1
        ring = max(delay) + 1
        line = track.centerline
        ml = track.lidar
        shapes = {A_STATES: (n, N_STATE), A_PARAMS: packed.shape, A_BUF: (n, 2 * ring),
                  A_ACTIONS: (n, 2), A_CFG: (1, CFG_SIZE), A_FP: (n, 3), A_MOUNT: (n, 3),
                  A_BEAMS: (1, len(self.angles)), A_BASE: (n, 3), A_RECT: (n, 6),
                  A_OBS: (n, OBS_SIZE),
                  A_NORMAL: (n, 2), A_DEPTH: (1, n), A_GEO: (1, len(track.grid.geo)),
                  A_CENTERS: ml.centers.shape, A_META: (1, len(ml.meta)),
                  A_LINE_XY: line.xy.shape, A_LINE_S: (1, len(line.s))}
        int_shapes = {I_DELAY: (1, n), I_PRIMED: (1, n), I_ACTIVE: (1, n), I_HEAD: (1, 1),
                      I_OTHER: (1, n), I_ENTRY: (n, (n_beams + 1) // 2),
                      I_SYNC: (1, SYNC_SIZE)}
        # every array is a view of ONE buffer (kernel argument; race_kernels.A_*, I_*, S_*),
        # written in place, never rebound
        self._buf, _, _, _ = carve([shapes[a] for a in range(A_COUNT)],
                                   [int_shapes[a] for a in range(I_COUNT)], [(n, n_beams)])
        self._threads = self.n_total >= PARALLEL_MIN_CARS if parallel is None else bool(parallel)
        self._bind()
        fviews = views_of(self._buf, A_COUNT, I_COUNT, S_COUNT)[0]
        fviews[A_GEO][0] = track.grid.geo
        fviews[A_CENTERS][:] = ml.centers
        fviews[A_META][0] = ml.meta
        fviews[A_LINE_XY][:] = line.xy
        fviews[A_LINE_S][0] = line.s
        self.delay[:] = delay
        self.active[:] = 1
        self.other[:] = -1
        self.packed[:] = packed
        self.cfg[:] = cfg
        self.footprints[:] = [[f.center_x, f.half_length, f.half_width] for f in fps]
        self.mount[:] = [[p.sensors.lidar_mount_x, p.sensors.lidar_mount_y,
                          p.sensors.lidar_mount_yaw] for p in plist]
        self.cos_beam[:], self.sin_beam[:] = np.cos(self.angles), np.sin(self.angles)

    def _bind(self) -> None:
        """The views of the buffer, the kernel's arguments and its compiled entry: derived from
        the rest, so a copy or an unpickled core rebuilds them (a copied view would no longer be
        a view of the copied buffer)."""
        views, ints, f32s = views_of(self._buf, A_COUNT, I_COUNT, S_COUNT)
        self._f64, self._i64 = self._buf, self._buf.view(np.int64)
        self.scans = f32s[S_SCANS]
        self.states, self.packed, self.actions = views[A_STATES], views[A_PARAMS], views[A_ACTIONS]
        self.buf = views[A_BUF].reshape(self.n_total, -1, 2)
        self.cfg = views[A_CFG][0]
        self.footprints, self.mount = views[A_FP], views[A_MOUNT]
        beams = views[A_BEAMS][0].view(np.float32)  # float32 cos and sin: the scan's precision
        self.cos_beam, self.sin_beam = beams[:len(self.angles)], beams[len(self.angles):]
        self.base, self.rect = views[A_BASE], views[A_RECT]
        self.obs, self.normal = views[A_OBS], views[A_NORMAL]
        self.delay, self.primed = ints[I_DELAY][0], ints[I_PRIMED][0]
        self.active, self.head, self.other = ints[I_ACTIVE][0], ints[I_HEAD][0], ints[I_OTHER][0]
        ints[I_SYNC][0, SYNC_THREADS] = numba.get_num_threads()  # the threaded step's workers
        track = self.track
        # every argument of the kernel is a persistent array: build the call once
        args = (self._buf, track.grid.wall, track.cells, track.lidar.lut)
        with racing_compile_notice('parallel' if self._threads else 'serial'):
            kernel = compiled_entry(race_step_parallel if self._threads else race_step,
                                    (*args, self.actions))
        self._step = partial(kernel, *args)  # (actions) -> 0, or -1: refused

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in _DERIVED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind()

    # ------------------------------------------------------------------ control
    def reset_cars(self, cars: ArrayLike, poses: ArrayLike, speed: ArrayLike = 0.0) -> None:
        """Put cars (indices) at base_link poses (n, 3) with forward speed [m/s], actuators at
        rest, progress counted from the start line (negative behind it), lap clock and last lap
        time at 0."""
        idx = np.atleast_1d(np.asarray(cars, dtype=np.int64))
        pose = np.asarray(poses, dtype=np.float64).reshape(len(idx), 3)
        if not np.all(np.isfinite(pose)):
            raise ConfigError('reset poses must be finite')
        v = np.broadcast_to(np.asarray(speed, dtype=np.float64), (len(idx),))
        lr = self.packed[idx, P_LR]
        self.states[idx] = 0.0
        self.states[idx, X] = pose[:, 0] + lr * np.cos(pose[:, 2])
        self.states[idx, Y] = pose[:, 1] + lr * np.sin(pose[:, 2])
        self.states[idx, YAW] = pose[:, 2]
        self.states[idx, VX] = v
        self.states[idx, WHEEL_SPEED] = v / self.packed[idx, P_R]
        self.states[idx, SPEED_REFERENCE] = v  # a throttle car's speed controller: settled
        self.primed[idx] = 0
        self.buf[idx] = 0.0
        self.base[idx] = pose
        s, _ = self.track.centerline.project(pose[:, 0], pose[:, 1])
        length = self.track.centerline.length
        self.obs[idx] = 0.0
        self.obs[idx, OBS_S] = s
        self.obs[idx, OBS_PROGRESS] = np.where(s > 0.5 * length, s - length, s)

    def step(self, actions: FloatArray | None = None) -> None:
        """One step of every active car with ``actions`` (M N, 2) (no checks of the values: the
        envs validate); None: the commands already written into :attr:`actions`.

        A C-contiguous (M N, 2) float64 array goes to the compiled step as an argument (a numpy
        copy into :attr:`actions` first costs more than the rest of the call once other code
        has run); anything else is copied the numpy way first."""
        a = self.actions if actions is None else actions
        if (type(a) is not _NDARRAY or a.dtype is not _F64 or a.ndim != 2
                or self._step(a) < 0):  # < 0: shape or strides refused
            self.actions[...] = a
            self._step(self.actions)

    def observe(self, cars: ArrayLike | None = None) -> None:
        """Refresh contacts, scans and centre-line position of ``cars`` (default all) at their
        current poses without stepping anything (one kernel call)."""
        saved = self.active.copy()
        head = int(self.head[0])
        self.active[:] = 0
        self.active[np.arange(self.n_total) if cars is None else np.asarray(cars)] = 2
        try:
            self._step(self.actions)
        finally:
            self.active[:] = saved
            self.head[0] = head

    # ------------------------------------------------------------------ outputs
    @property
    def velocity(self) -> FloatArray:
        """(M N, 3) base_link twist ``vx, vy, yaw_rate`` in its own frame."""
        lr = self.packed[:, P_LR]
        vx = self.states[:, VX]
        r = self.states[:, 5]
        return np.stack([vx, self.states[:, 4] - lr * r, r], axis=1)

    def check_actions(self, actions: ArrayLike) -> FloatArray:
        """Actions as a finite (M N, 2) float64 array (one-line ConfigError otherwise)."""
        a = np.asarray(actions, dtype=np.float64)
        if a.shape != (self.n_total, 2):
            a = a.reshape(self.n_total, 2) if a.size == 2 * self.n_total else a
        if a.shape != (self.n_total, 2) or not np.all(np.isfinite(a)):
            raise ConfigError(f'actions must be finite, shape ({self.n_total}, 2); got '
                              f'{np.shape(actions)}')
        return np.ascontiguousarray(a)
