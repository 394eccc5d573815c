"""Gymnasium interface: :class:`RaceEnv` (one car) and :class:`RaceVectorEnv` (M worlds x N cars
stepped by one compiled call). Needs ``pip install rc_sim_engine[gym]`` (gymnasium >= 1.0).

Observation (``Dict``, float32; per car):

| key | shape | content |
| --- | --- | --- |
| ``scan`` | (B,) | lidar ranges [m], B = lidar_samples; no return -> range_max, |
| | | closer than range_min -> 0; the other cars of the world are seen |
| ``pose`` | (3,) | base_link x, y [m], yaw [rad] in the map frame |
| ``velocity`` | (3,) | base_link vx, vy [m/s], yaw rate [rad/s] |
| ``progress`` | (2,) | arc length from the start line along the centre line [m], in |
| | | [0, lap length); lateral offset from the centre line [m] (+ left) |

Action (``Box`` (2,) float32): ``action_mode='steering'``: bicycle steering angle [rad] in
``+-max_steering_angle`` and speed [m/s] in ``[min_speed, max_speed]`` (rear wheel speed command
``v / r``); ``'curvature'``: path curvature [1/m] in ``+-tan(max_steering_angle) / L`` and speed.
Actions are clipped to the box; non-finite actions raise.

Reward: pluggable ``reward(RewardInput) -> (n,) array``; default :class:`ProgressReward`: metres
gained along the centre line in the step, minus ``collision_penalty`` on a collision.
Termination: a wall or car contact. Truncation: ``max_episode_time`` [s] of simulated time.
Resets are seeded (``reset(seed=...)``): grid start (``random_start=False``) or a uniformly
random arc length with random lateral offset and heading error. The vector env resets a car on
the step after it terminated or was truncated (gymnasium ``AutoresetMode.NEXT_STEP``); cars are
the sub-environments (``num_envs = M N``, car k in world k // N), each its own episode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
from typing import Any

try:
    import gymnasium as gym
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError:  # pragma: no cover - exercised only without the extra
    from rc_sim_description.errors import ConfigError

    raise ConfigError('the Gymnasium interface needs gymnasium: pip install '
                      '"rc_sim_engine[gym]" (or pip install gymnasium)') from None
import numpy as np
from numpy.typing import NDArray

from rc_sim_description.params import VehicleParams
from rc_sim_engine.racing.race_core import RaceCore
from rc_sim_engine.racing.race_kernels import (
    OBS_CAR_DEPTH,
    OBS_DS,
    OBS_LAP_TIME,
    OBS_LAPS,
    OBS_LAST_LAP,
    OBS_LATERAL,
    OBS_PROGRESS,
    OBS_S,
    OBS_TIME,
    OBS_WALL_DEPTH,
)
from rc_sim_engine.vehicle.packed import P_LR
from rc_sim_engine.world.track import Track, load_track

__all__ = ['ProgressReward', 'RaceEnv', 'RaceVectorEnv', 'RewardInput']

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class RewardInput:
    """What a reward function sees, per car (arrays of shape (n,))."""

    progress_delta: FloatArray   # metres gained along the centre line this step
    progress: FloatArray         # metres from the start line since the reset
    speed: FloatArray            # base_link vx [m/s]
    lateral: FloatArray          # offset from the centre line [m]
    wall_collision: NDArray[np.bool_]
    car_collision: NDArray[np.bool_]
    actions: FloatArray          # (n, 2) as applied (clipped)
    dt: float


RewardFn = Callable[[RewardInput], FloatArray]


@dataclass(frozen=True)
class ProgressReward:
    """``progress_delta - collision_penalty * (wall or car collision)`` [m]."""

    collision_penalty: float = 1.0

    def __call__(self, inp: RewardInput) -> FloatArray:
        """Reward per car."""
        hit = inp.wall_collision | inp.car_collision
        return inp.progress_delta - self.collision_penalty * hit


class _RaceBase:
    """Spaces, resets and stepping shared by both envs (over a RaceCore)."""

    core: RaceCore
    np_random: np.random.Generator

    def _setup(self, track: Track | str, params: VehicleParams | Sequence[VehicleParams] | None,
               n_worlds: int, n_cars: int, dt: float, lidar: bool, action_mode: str,
               max_episode_time: float, reward: RewardFn | None, random_start: bool,
               min_speed: float, track_options: dict[str, Any] | None,
               parallel: bool | None = None) -> None:
        from rc_sim_description.errors import ConfigError

        if not (math.isfinite(max_episode_time) and max_episode_time > 0):
            raise ConfigError(f'max_episode_time must be > 0 s, got {max_episode_time!r}')
        if isinstance(track, Track):
            self.track = track
        else:
            self.track = load_track(track, **(track_options or {}))
        self.core = RaceCore(self.track, params, n_worlds=n_worlds, n_cars=n_cars, dt=dt,
                             lidar=lidar, action_mode=action_mode, parallel=parallel)
        self.reward_fn: RewardFn = reward if reward is not None else ProgressReward()
        self.max_episode_time = float(max_episode_time)
        self.random_start = bool(random_start)
        p = self.core.params[0]
        max_steer = p.steering.max_steering_angle
        if action_mode == 'curvature':
            max_steer = math.tan(max_steer) / p.geometry.wheelbase
        if not min_speed < p.max_speed:
            raise ConfigError(f'min_speed {min_speed} must be below max_speed {p.max_speed}')
        self._low = np.array([-max_steer, min_speed], dtype=np.float32)
        self._high = np.array([max_steer, p.max_speed], dtype=np.float32)
        self.single_action_space_ = spaces.Box(self._low, self._high, dtype=np.float32)
        r_max = float(p.sensors.lidar_range_max)
        n_beams = self.core.scans.shape[1]
        inf = np.inf
        self.single_observation_space_ = spaces.Dict({
            'scan': spaces.Box(0.0, r_max if lidar else 0.0, (n_beams,), np.float32),
            'pose': spaces.Box(np.array([-inf, -inf, -np.pi], np.float32),
                               np.array([inf, inf, np.pi], np.float32), dtype=np.float32),
            'velocity': spaces.Box(-inf, inf, (3,), np.float32),
            'progress': spaces.Box(np.array([0.0, -inf], np.float32),
                                   np.array([self.track.centerline.length, inf], np.float32),
                                   dtype=np.float32),
        })
        self._lr = float(self.core.packed[0, P_LR])
        self._bounds = (float(self._low[0]), float(self._high[0]), float(self._low[1]),
                        float(self._high[1]))

    # ------------------------------------------------------------------ resets
    def _start_poses(self, cars: NDArray[np.int64]) -> FloatArray:
        """Base_link poses for ``cars``: their grid slot, or random along the centre line."""
        n = self.core.n_cars
        if not self.random_start:
            return self.track.grid_poses(n)[cars % n]
        line = self.track.centerline
        rng = self.np_random
        s = rng.uniform(0.0, line.length, len(cars))
        x, y, yaw = line.pose_at(s)
        lateral = rng.uniform(-0.25, 0.25, len(cars))
        yaw = yaw + rng.uniform(-0.1, 0.1, len(cars))
        return np.stack([x - lateral * np.sin(yaw), y + lateral * np.cos(yaw),
                         np.angle(np.exp(1j * yaw))], axis=1)

    def _reset_cars(self, cars: NDArray[np.int64]) -> None:
        core = self.core
        core.reset_cars(cars, self._start_poses(cars))
        for _ in range(20):  # a respawned car must not overlap another car of its world
            core.observe(cars)
            clash = cars[core.obs[cars, OBS_CAR_DEPTH] > 0.0]
            if not len(clash):
                return
            line = self.track.centerline
            x, y, yaw = line.pose_at(self.np_random.uniform(0.0, line.length, len(clash)))
            core.reset_cars(clash, np.stack([x, y, yaw], axis=1))

    # ------------------------------------------------------------------ outputs
    def _observations(self, cars: slice | NDArray[np.int64]) -> dict[str, NDArray[np.float32]]:
        core = self.core
        lr = core.packed[cars, P_LR]
        st = core.states[cars]
        pose = core.base[cars].astype(np.float32)
        pose[..., 2] = (core.base[cars, 2] + math.pi) % (2.0 * math.pi) - math.pi
        return {
            'scan': core.scans[cars].copy(),
            'pose': pose,
            'velocity': np.stack([st[:, 3], st[:, 4] - lr * st[:, 5], st[:, 5]],
                                 axis=1).astype(np.float32),
            'progress': core.obs[cars][..., [OBS_S, OBS_LATERAL]].astype(np.float32),
        }

    def _advance(self, actions: Any) -> tuple[FloatArray, NDArray[np.bool_],
                                              NDArray[np.bool_], NDArray[np.bool_],
                                              NDArray[np.bool_]]:
        core = self.core
        a = core.check_actions(actions)
        np.clip(a, self._low, self._high, out=core.actions)
        core.step()
        obs = core.obs
        wall = obs[:, OBS_WALL_DEPTH] > 0.0
        car = obs[:, OBS_CAR_DEPTH] > 0.0
        inp = RewardInput(obs[:, OBS_DS].copy(), obs[:, OBS_PROGRESS].copy(),
                          core.states[:, 3].copy(), obs[:, OBS_LATERAL].copy(), wall, car,
                          core.actions.copy(), core.dt)
        reward = np.asarray(self.reward_fn(inp), dtype=np.float64).reshape(core.n_total)
        terminated = wall | car
        truncated = (obs[:, OBS_TIME] >= self.max_episode_time - 1e-9) & ~terminated
        return reward, terminated, truncated, wall, car

    def _info(self, cars: slice | NDArray[np.int64]) -> dict[str, Any]:
        obs = self.core.obs
        return {'laps': obs[cars, OBS_LAPS].astype(np.int64),
                'last_lap_time': obs[cars, OBS_LAST_LAP].copy(),
                'lap_time': obs[cars, OBS_LAP_TIME].copy(),
                'time': obs[cars, OBS_TIME].copy(),
                'wall_collision': obs[cars, OBS_WALL_DEPTH] > 0.0,
                'car_collision': obs[cars, OBS_CAR_DEPTH] > 0.0}


class RaceEnv(_RaceBase, gym.Env[dict[str, NDArray[np.float32]], NDArray[np.float32]]):
    """One car on a track map (see the module doc for spaces, reward and episode ends).

    Args:
        track: a :class:`~rc_sim_engine.world.track.Track`, a map YAML path or a shipped map name.
        params: vehicle parameters (default: vehicle.yaml).
        dt: step [s] (default 10 ms); lidar: scan every step.
        action_mode: 'steering' (angle + speed) or 'curvature' (curvature + speed).
        max_episode_time: truncation [s]; reward: reward function (default ProgressReward()).
        random_start: random start along the track instead of the start pose.
        track_options: keyword arguments of :func:`~rc_sim_engine.world.track.load_track`.
    """

    metadata: dict[str, Any] = {'render_modes': []}

    def __init__(self, track: Track | str = 'chicane_track',
                 params: VehicleParams | None = None, *, dt: float = 0.01, lidar: bool = True,
                 action_mode: str = 'steering', max_episode_time: float = 60.0,
                 reward: RewardFn | None = None, random_start: bool = False,
                 min_speed: float = 0.0, track_options: dict[str, Any] | None = None) -> None:
        self._setup(track, params, 1, 1, dt, lidar, action_mode, max_episode_time, reward,
                    random_start, min_speed, track_options)
        self.action_space = self.single_action_space_
        self.observation_space = self.single_observation_space_  # type: ignore[assignment]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, NDArray[np.float32]], dict[str, Any]]:
        """Start a new episode (seeded)."""
        super().reset(seed=seed)
        self._reset_cars(np.zeros(1, dtype=np.int64))
        self.core.observe()
        return self._single_obs(), self._single_info()

    def step(self, action: NDArray[np.float32]) -> tuple[dict[str, NDArray[np.float32]], float,
                                                         bool, bool, dict[str, Any]]:
        """Advance one step ``dt`` (scalar fast path of the vector env's arithmetic)."""
        try:
            steer, speed = np.asarray(action, dtype=np.float64).reshape(2).tolist()
        except (TypeError, ValueError):
            steer = speed = math.nan
        if not (math.isfinite(steer) and math.isfinite(speed)):
            from rc_sim_description.errors import ConfigError

            raise ConfigError(f'action must be 2 finite numbers, got {action!r}')
        core = self.core
        applied = core.actions  # written in place: the kernel call needs no new arrays
        lo_steer, hi_steer, lo_speed, hi_speed = self._bounds
        applied[0, 0] = min(max(steer, lo_steer), hi_steer)
        applied[0, 1] = min(max(speed, lo_speed), hi_speed)
        core.step()
        o = core.obs[0].tolist()
        wall = o[OBS_WALL_DEPTH] > 0.0
        car = o[OBS_CAR_DEPTH] > 0.0
        fn = self.reward_fn
        if type(fn) is ProgressReward:
            reward = o[OBS_DS] - fn.collision_penalty * float(wall or car)
        else:
            inp = RewardInput(np.array([o[OBS_DS]]), np.array([o[OBS_PROGRESS]]),
                              core.states[:, 3].copy(), np.array([o[OBS_LATERAL]]),
                              np.array([wall]), np.array([car]), applied.copy(), core.dt)
            reward = float(np.asarray(fn(inp), dtype=np.float64).reshape(1)[0])
        terminated = wall or car
        truncated = o[OBS_TIME] >= self.max_episode_time - 1e-9 and not terminated
        return self._single_obs(o), reward, terminated, truncated, self._single_info(o)

    def _single_obs(self, o: list[float] | None = None) -> dict[str, NDArray[np.float32]]:
        core = self.core
        if o is None:
            o = core.obs[0].tolist()
        x, y, yaw = core.base[0].tolist()
        vx, vy, r = core.states[0, 3:6].tolist()
        values = np.array([x, y, (yaw + math.pi) % (2.0 * math.pi) - math.pi, vx,
                           vy - self._lr * r, r, o[OBS_S], o[OBS_LATERAL]], dtype=np.float32)
        return {'scan': core.scans[0].copy(), 'pose': values[0:3], 'velocity': values[3:6],
                'progress': values[6:8]}

    def _single_info(self, o: list[float] | None = None) -> dict[str, Any]:
        if o is None:
            o = self.core.obs[0].tolist()
        return {'laps': int(o[OBS_LAPS]), 'last_lap_time': o[OBS_LAST_LAP],
                'lap_time': o[OBS_LAP_TIME], 'time': o[OBS_TIME],
                'wall_collision': o[OBS_WALL_DEPTH] > 0.0,
                'car_collision': o[OBS_CAR_DEPTH] > 0.0}


class RaceVectorEnv(_RaceBase, VectorEnv[dict[str, NDArray[np.float32]],
                                         NDArray[np.float32], NDArray[Any]]):
    """M worlds x N cars as ``num_envs = M N`` sub-environments stepped by ONE compiled call.

    The N cars of a world see and can hit each other; worlds are independent. Arguments as
    :class:`RaceEnv`, plus ``n_worlds``, ``n_cars`` and ``parallel`` (numba threads; None: from
    :data:`~rc_sim_engine.racing.race_core.PARALLEL_MIN_CARS` cars).
    """

    metadata: dict[str, Any] = {'autoreset_mode': AutoresetMode.NEXT_STEP, 'render_modes': []}

    def __init__(self, track: Track | str = 'chicane_track',
                 params: VehicleParams | Sequence[VehicleParams] | None = None, *,
                 n_worlds: int = 1, n_cars: int = 1, dt: float = 0.01, lidar: bool = True,
                 action_mode: str = 'steering', max_episode_time: float = 60.0,
                 reward: RewardFn | None = None, random_start: bool = False,
                 min_speed: float = 0.0, track_options: dict[str, Any] | None = None,
                 parallel: bool | None = None) -> None:
        self._setup(track, params, n_worlds, n_cars, dt, lidar, action_mode, max_episode_time,
                    reward, random_start, min_speed, track_options, parallel)
        self.num_envs = self.core.n_total
        self.single_action_space = self.single_action_space_
        self.single_observation_space = self.single_observation_space_
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)

    def reset(self, *, seed: int | Sequence[int] | None = None,
              options: dict[str, Any] | None = None
              ) -> tuple[dict[str, NDArray[np.float32]], dict[str, Any]]:
        """Reset every car (seeded)."""
        if seed is not None and not isinstance(seed, int):
            seed = int(np.random.SeedSequence(list(seed)).generate_state(1)[0])
        super().reset(seed=seed)
        self._reset_cars(np.arange(self.num_envs, dtype=np.int64))
        self.core.observe()
        self._autoreset[:] = False
        return self._observations(slice(None)), self._info(slice(None))

    def step(self, actions: NDArray[np.float32]
             ) -> tuple[dict[str, NDArray[np.float32]], FloatArray, NDArray[np.bool_],
                        NDArray[np.bool_], dict[str, Any]]:
        """One compiled call: step every car; cars that ended last step are reset instead."""
        core = self.core
        done = np.nonzero(self._autoreset)[0]
        if len(done):
            self._reset_cars(done)
            core.active[done] = 2
        try:
            reward, terminated, truncated, _, _ = self._advance(actions)
        finally:
            core.active[:] = 1
        if len(done):
            reward[done] = 0.0
            terminated[done] = False
            truncated[done] = False
        self._autoreset = terminated | truncated
        return (self._observations(slice(None)), reward, terminated, truncated,
                self._info(slice(None)))


gym.register(id='rc_sim/Race-v0', entry_point='rc_sim_engine.racing.gym_env:RaceEnv')
