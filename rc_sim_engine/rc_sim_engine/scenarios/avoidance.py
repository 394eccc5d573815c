"""Manoeuvres run closed loop in the engine: obstacle avoidance.

**Avoidance**: the car follows the racing line (lane centre line) of
``basic_track`` with the Kanayama law; a box stands on the line. Every lidar scan is projected onto
the line (arc length s, lateral offset d); returns in the car's corridor ahead are the obstacle.
On first detection, S_T,min = pi sqrt(k d_r / (2 C_max)) with C_max = min(tan(delta_max)/L,
gamma_max/v^2) is compared with the free distance to the obstacle: if it fits, the reference is
shifted by the quintic d(s) of W. Nelson (IEEE ICRA 1989) (out, hold past the obstacle, back); if
not, the car stops. The reference keeps its timing s(t) = s0 + v t, so the switch is seamless.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
import math
from typing import Any

import numpy as np

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.errors import ConfigError
from rc_sim_engine.scenarios.common import (
    FloatArray,
    _pose,
    racing_line,
    with_boxes,
)

__all__ = [
    'AvoidanceConfig',
    'AvoidanceOutcome',
    'AvoidancePlanner',
    'run_avoidance',
]


@dataclass(frozen=True)
class AvoidanceConfig:
    """Avoidance scenario on basic_track (lengths in m, along the racing line from the spawn).

    ``obstacle_ahead``: arc length from the car's centre of mass at spawn to the box centre.
    ``detection_range``: how far ahead along the line returns count as obstacles (the decision of
    eq. 12 is taken at the first detection). ``lateral_acceleration``: gamma_max of eq. 13
    (None: half the friction limit mu g).
    """

    speed: float = 0.8
    obstacle_ahead: float = 9.0
    obstacle_length: float = 0.3
    obstacle_width: float = 0.2
    shift: float = 0.35
    detection_range: float = 2.5
    margin: float = 0.1
    lateral_acceleration: float | None = None
    controller: str = 'kanayama'
    duration: float | None = None

    def __post_init__(self) -> None:
        for key in ('speed', 'obstacle_ahead', 'obstacle_length', 'obstacle_width', 'shift',
                    'detection_range', 'margin'):
            v = getattr(self, key)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ConfigError(f'avoidance: {key} must be a number > 0, got {v!r}')


@dataclass
class AvoidancePlanner:
    """Lidar returns -> obstacle on the racing line -> lane shift or stop.

    Arc lengths are unwrapped and refer to the centre of mass on the nominal line.
    """

    path: Any
    speed: float
    shift: float
    s_t_min: float
    front_overhang: float  # centre of mass -> footprint front [m]
    rear_overhang: float  # centre of mass -> footprint rear [m]
    corridor: float  # |d| below which a return blocks the car [m]
    detection_range: float
    margin: float
    decision: str = 'none'  # none | avoid | stop
    s_detect: float = math.nan
    gap_at_detection: float = math.nan
    s_near: float = math.nan
    s_far: float = math.nan
    d_obstacle: float = 0.0
    plan: Any = None  # LaneShift

    def __post_init__(self) -> None:
        from scipy.spatial import cKDTree

        self._grid = np.arange(0.0, self.path.length, 0.005)
        pts = self.path.point(self._grid)
        self._heading = pts.heading
        self._xy = np.column_stack([pts.x, pts.y])
        self._tree = cKDTree(self._xy)

    def locate(self, px: FloatArray, py: FloatArray, s_car: float
               ) -> tuple[FloatArray, FloatArray]:
        """(s, d) of the points: nearest line point (KD-tree on a 5 mm grid), s unwrapped near
        ``s_car``, d > 0 on the left."""
        _, j = self._tree.query(np.column_stack([px, py]))
        s = self._grid[j]
        if self.path.closed:
            s = s + np.round((s_car - s) / self.path.length) * self.path.length
        dx, dy = px - self._xy[j, 0], py - self._xy[j, 1]
        return s, -np.sin(self._heading[j]) * dx + np.cos(self._heading[j]) * dy

    def update(self, px: FloatArray, py: FloatArray, s_car: float) -> bool:
        """Feed one scan (odom points); True when the reference changed."""
        if self.decision == 'stop' or px.size == 0:
            return False
        s, d = self.locate(px, py, s_car)
        ahead = s - s_car
        hit = (np.abs(d) < self.corridor) & (ahead > 0.0) & (ahead <= self.detection_range)
        if not np.any(hit):
            return False
        s_near, s_far = float(np.min(s[hit])), float(np.max(s[hit]))
        if self.decision == 'avoid':
            if s_far <= self.s_far + 1e-3 or self.plan is None:
                return False
            back_start = self.plan.s_start + self.plan.s_t + self.plan.s_hold
            if s_car + 0.0 >= back_start:  # already shifting back: keep the plan
                return False
            self.s_far = s_far
            self.plan = replace(self.plan, s_hold=self._hold(self.plan.s_start, self.plan.s_t))
            return True
        from rc_sim_control.trajectories import LaneShift

        self.s_detect, self.s_near, self.s_far = s_car, s_near, s_far
        self.d_obstacle = float(np.mean(d[hit]))
        free = s_near - self.margin - (s_car + self.front_overhang)
        self.gap_at_detection = free
        if free < self.s_t_min:
            self.decision = 'stop'
            return True
        s_t = min(free, 1.25 * self.s_t_min)
        s_start = s_near - self.margin - self.front_overhang - s_t
        sign = -1.0 if self.d_obstacle > 0.05 else 1.0  # pass on the freer side (left if centred)
        self.decision = 'avoid'
        self.plan = LaneShift(s_start=s_start, d_r=sign * self.shift, s_t=s_t,
                              s_hold=self._hold(s_start, s_t))
        return True

    def _hold(self, s_start: float, s_t: float) -> float:
        return max(self.s_far + self.margin + self.rear_overhang - (s_start + s_t), 0.0)


@dataclass
class AvoidanceOutcome:
    """Result of :func:`run_avoidance`."""

    result: Any
    world: Any
    planner: AvoidancePlanner
    paths: list[tuple[int, FloatArray, FloatArray, FloatArray, FloatArray]]
    evaluation: Any  # tracking metrics of the (shifted) reference; None when the car stopped
    obstacle_xy: tuple[float, float]
    stop_distance: float  # after a stop: gap car front -> box along the line [m] (else NaN)

    @property
    def collided(self) -> bool:
        """True if the car touched anything."""
        return bool(self.result.collisions)


def run_avoidance(params: Any, config: AvoidanceConfig | None = None, *,
                  model: str = 'single_track', tyre_model: str | None = None, seed: int = 0,
                  transient: float = 3.0,
                  progress: Callable[[float], None] | None = None) -> AvoidanceOutcome:
    """Drive the racing line of basic_track past (or stop before) a box; returns the outcome."""
    from rc_sim_control.tracking import make_controller, twist_from_command
    from rc_sim_control.trajectories import (
        PathTrajectory,
        lane_shift_max_curvature,
        min_lane_shift_length,
    )
    from rc_sim_description.paths import world_path
    from rc_sim_description.worlds import spawn_pose
    from rc_sim_engine.scenarios.tracking import evaluate_result
    from rc_sim_engine.sim.sensors import lidar_pose
    from rc_sim_engine.sim.simulator import SimConfig, Simulator
    from rc_sim_engine.world.collision import footprint_from_params
    from rc_sim_engine.world.sdf import load_world

    cfg = config or AvoidanceConfig()
    wp = world_path('basic_track')
    spawn = spawn_pose(wp)
    path = racing_line()
    lr = params.geometry.cg_to_rear_axle
    cx0, cy0 = spawn.x + lr * math.cos(spawn.yaw), spawn.y + lr * math.sin(spawn.yaw)
    s0 = path.project(cx0, cy0)
    box = path.point(np.array([s0 + cfg.obstacle_ahead]))
    obstacle = (float(box.x[0]), float(box.y[0]))
    world = with_boxes(load_world(wp), [('obstacle', obstacle[0], obstacle[1],
                                         float(box.heading[0]), cfg.obstacle_length,
                                         cfg.obstacle_width, 0.3)])
    foot = footprint_from_params(params)
    gamma = (cfg.lateral_acceleration if cfg.lateral_acceleration is not None
             else 0.5 * params.friction.mu2 * GRAVITY_MPS2)
    c_max = lane_shift_max_curvature(params.steering.max_steering_angle,
                                     params.geometry.wheelbase, gamma, cfg.speed)
    planner = AvoidancePlanner(
        path=path, speed=cfg.speed, shift=cfg.shift,
        s_t_min=min_lane_shift_length(cfg.shift, c_max),
        front_overhang=foot.center_x + foot.half_length - lr,
        rear_overhang=lr - (foot.center_x - foot.half_length),
        corridor=foot.half_width + cfg.margin, detection_range=cfg.detection_range,
        margin=cfg.margin)
    controller = make_controller(cfg.controller, params)
    state: dict[str, Any] = {'traj': PathTrajectory(path, cfg.speed, s_start=s0,
                                                    name='racing_line'),
                             'scan': None, 'stopped_steer': 0.0}
    duration = cfg.duration or (0.75 * path.length / cfg.speed)
    paths: list[tuple[int, FloatArray, FloatArray, FloatArray, FloatArray]] = []

    def publish(t_now: float) -> None:
        t = np.arange(t_now, duration + 1e-9, 0.05)
        ref = state['traj'].sample(t)
        paths.append((round(t_now * 1e9), t, ref.x, ref.y, ref.heading))

    publish(0.0)
    sim = Simulator(params, world, SimConfig(model=model, tyre_model=tyre_model, seed=seed,
                                             mapper_mode='steering_angle'),
                    start=(spawn.x, spawn.y, spawn.yaw))

    def control(t: float, obs: Any) -> tuple[float, float]:
        pose = _pose(obs)
        s_car = s0 + cfg.speed * t  # reference arc length (the car tracks it)
        new_scan = obs.scan is not None and obs.scan is not state['scan']
        if new_scan and planner.decision != 'stop':
            state['scan'] = obs.scan
            ox, oy, heading = lidar_pose(pose.x, pose.y, pose.yaw, params)
            r = np.asarray(obs.scan, dtype=float).reshape(-1, len(obs.scan_angles))[0]
            ok = np.isfinite(r) & (r < min(params.sensors.lidar_range_max,
                                           cfg.detection_range + 1.0))
            ang = heading + np.asarray(obs.scan_angles)[ok]
            cx = pose.x + lr * math.cos(pose.yaw)
            cy = pose.y + lr * math.sin(pose.yaw)
            s_meas = path.project(cx, cy, s_guess=s_car, window=1.0)
            s_meas += round((s_car - s_meas) / path.length) * path.length
            if planner.update(ox + r[ok] * np.cos(ang), oy + r[ok] * np.sin(ang), s_meas):
                if planner.decision == 'avoid':
                    state['traj'] = PathTrajectory(path, cfg.speed, s_start=s0,
                                                   shift=planner.plan, name='lane_shift')
                    publish(t)
                else:
                    state['stopped_steer'] = float(obs.steering_angle[0])
        if planner.decision == 'stop':
            return 0.0, state['stopped_steer']
        cmd = controller.command(t, pose, state['traj'])
        return twist_from_command(cmd, params.geometry.wheelbase, 'steering_angle')

    result = sim.run(duration, control, progress=progress)
    stop_gap = math.nan
    evaluation = None
    if planner.decision == 'stop':
        odom = result.streams['odom']
        xf, yf, yawf = (float(odom[k][-1, 0]) for k in ('x', 'y', 'yaw'))
        s_f = path.project(xf + lr * math.cos(yawf), yf + lr * math.sin(yawf),
                           s_guess=planner.s_detect % path.length, window=1.0)
        s_box = (s0 + cfg.obstacle_ahead) % path.length
        stop_gap = (s_box - 0.5 * cfg.obstacle_length - s_f - planner.front_overhang)
    else:
        evaluation = evaluate_result(result, paths, params, transient)
    return AvoidanceOutcome(result, world, planner, paths, evaluation, obstacle, stop_gap)
