"""Manoeuvres run closed loop in the engine: obstacle avoidance and parallel parking.

**Avoidance**: the car follows the racing line (lane centre line) of
``basic_track`` with the Kanayama law; a box stands on the line. Every lidar scan is projected onto
the line (arc length s, lateral offset d); returns in the car's corridor ahead are the obstacle.
On first detection, S_T,min = pi sqrt(k d_r / (2 C_max)) with C_max = min(tan(delta_max)/L,
gamma_max/v^2) is compared with the free distance to the obstacle: if it fits, the reference is
shifted by the quintic d(s) of W. Nelson (IEEE ICRA 1989) (out, hold past the obstacle, back); if
not, the car stops. The reference keeps its timing s(t) = s0 + v t, so the switch is seamless.

**Parallel parking** (the open-loop profile of I. E. Paromtchik and C. Laugier, IEEE Intelligent
Vehicles Symposium 1996): two parked boxes and a free slot beside the lane. The slot geometry
(measured by range sensors on a real car) is taken as known; the search evaluates the kinematic
model under the profile over a grid of (T, delta_max), vectorized, and keeps the pair whose final
footprint lies inside the slot with the largest clearance along the way; the engine then plays the
profile open loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.errors import ConfigError

__all__ = [
    'AvoidanceConfig',
    'AvoidanceOutcome',
    'AvoidancePlanner',
    'ParkingConfig',
    'ParkingOutcome',
    'ParkingPlan',
    'footprint_corners',
    'parking_world',
    'plan_parking',
    'racing_line',
    'run_avoidance',
    'run_parking',
    'with_boxes',
]

FloatArray = npt.NDArray[np.float64]


# --------------------------------------------------------------------------- helpers
def with_boxes(world: Any, boxes: Sequence[tuple[str, float, float, float, float, float, float]]
               ) -> Any:
    """Copy of ``world`` with extra static boxes ``(name, cx, cy, yaw, length, width, height)``."""
    if not boxes:
        return world
    rows = np.array([[cx, cy, yaw, 0.5 * ln, 0.5 * w] for _, cx, cy, yaw, ln, w, _ in boxes])
    zs = np.array([[0.0, h] for *_, h in boxes])
    return replace(world, boxes=np.vstack([world.boxes.reshape(-1, 5), rows]),
                   box_z=np.vstack([world.box_z.reshape(-1, 2), zs]),
                   box_names=(*world.box_names, *(b[0] for b in boxes)))


def footprint_corners(x: npt.ArrayLike, y: npt.ArrayLike, yaw: npt.ArrayLike,
                      footprint: Any) -> FloatArray:
    """(..., 4, 2) corners of the car footprint for base_link poses."""
    xa, ya, yawa = (np.asarray(a, dtype=float)[..., None] for a in (x, y, yaw))
    lx = footprint.center_x + footprint.half_length * np.array([1.0, -1.0, -1.0, 1.0])
    ly = footprint.half_width * np.array([1.0, 1.0, -1.0, -1.0])
    c, s = np.cos(yawa), np.sin(yawa)
    return np.stack([xa + c * lx - s * ly, ya + s * lx + c * ly], axis=-1)


def racing_line() -> Any:
    """Centre line of ``basic_track`` as a :class:`SegmentPath` (from the track spec)."""
    from rc_sim_control.trajectories import SegmentPath
    from rc_sim_description.worlds import TRACKS

    spec = TRACKS['basic_track']
    straight, radius = spec.size
    return SegmentPath.stadium(straight, radius, x0=-0.5 * straight, y0=-radius, yaw0=0.0)


def _pose(obs: Any) -> Any:
    from rc_sim_control.tracking import MeasuredPose

    return MeasuredPose(float(obs.x[0]), float(obs.y[0]), float(obs.yaw[0]), float(obs.vx[0]))


# --------------------------------------------------------------------------- avoidance
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
    from rc_sim_engine.collision import footprint_from_params
    from rc_sim_engine.sensors import lidar_pose
    from rc_sim_engine.simulator import SimConfig, Simulator
    from rc_sim_engine.tracking_run import evaluate_result
    from rc_sim_engine.world import load_world

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


# --------------------------------------------------------------------------- parking
@dataclass(frozen=True)
class ParkingConfig:
    """A slot between two parked boxes on the right of the lane (lengths in m, REP 103).

    The lane runs along +x at y = 0 (the car's base_link starts there, at rest, with its rear
    axle ``start_ahead`` ahead of the front box's rear face); the parked boxes' centres are at
    y = -``slot_offset``; the slot between them is ``slot_length`` long and ``slot_width`` wide
    (centred on the parked row).
    """

    slot_length: float = 1.2
    slot_offset: float = 0.4
    slot_width: float = 0.4
    box_length: float = 0.45
    box_width: float = 0.25
    start_ahead: float = 0.3
    speed: float = 0.4  # v_max of eq. 15
    acceleration: float = 2.0  # v'_max of eq. 19
    margin: float = 0.03  # clearance kept by the search [m]

    def __post_init__(self) -> None:
        for key in ('slot_length', 'slot_offset', 'slot_width', 'box_length', 'box_width', 'speed',
                    'acceleration', 'margin'):
            v = getattr(self, key)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ConfigError(f'parking: {key} must be a number > 0, got {v!r}')

    def slot_rect(self) -> tuple[float, float, float, float]:
        """(x_min, x_max, y_min, y_max) of the free slot (origin: back box's front face)."""
        half = 0.5 * self.slot_width
        return (0.0, self.slot_length, -self.slot_offset - half, -self.slot_offset + half)


def parking_world(config: ParkingConfig) -> Any:
    """flat_track plus the two parked boxes of ``config``."""
    from rc_sim_description.paths import world_path
    from rc_sim_engine.world import load_world

    c = config
    half = 0.5 * c.box_length
    return with_boxes(load_world(world_path('flat_track')), [
        ('parked_back', -half, -c.slot_offset, 0.0, c.box_length, c.box_width, 0.3),
        ('parked_front', c.slot_length + half, -c.slot_offset, 0.0, c.box_length, c.box_width,
         0.3)])


@dataclass
class ParkingPlan:
    """The chosen profile and its kinematic prediction."""

    profile: Any  # rc_sim_control.trajectories.ParkingProfile
    start: tuple[float, float, float]
    final: tuple[float, float, float]
    clearance: float
    candidates: int
    feasible: int


def _kinematic_rollout(params: Any, profiles: Sequence[Any], start: tuple[float, float, float],
                       dt: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Rear-axle poses (P, K) of the kinematic bicycle under each profile (exact arcs per step)."""
    big_t = max(p.duration for p in profiles)
    t = np.arange(0.0, big_t + dt, dt)
    cmds = [p.commands(t) for p in profiles]
    v = np.stack([c[0] for c in cmds])
    k = np.tan(np.stack([c[1] for c in cmds])) / params.geometry.wheelbase
    dpsi = v * k * dt
    yaw = start[2] + np.concatenate([np.zeros((len(profiles), 1)), np.cumsum(dpsi, axis=1)],
                                    axis=1)
    mid = yaw[:, :-1] + 0.5 * dpsi  # exact chord of the arc: |chord| = 2 sin(dpsi/2)/k ~ v dt
    chord = v * dt * np.sinc(dpsi / (2 * np.pi))
    x = start[0] + np.concatenate([np.zeros((len(profiles), 1)),
                                   np.cumsum(chord * np.cos(mid), axis=1)], axis=1)
    y = start[1] + np.concatenate([np.zeros((len(profiles), 1)),
                                   np.cumsum(chord * np.sin(mid), axis=1)], axis=1)
    return x, y, yaw


def plan_parking(params: Any, config: ParkingConfig, world: Any,
                 n_grid: int = 40, dt: float = 0.01) -> ParkingPlan:
    """Search (T, delta_max) of the parking profile on a grid with the kinematic model.

    Keeps the candidates whose final footprint is inside the slot rectangle shrunk by ``margin``
    and whose swept footprint keeps ``margin`` from the boxes;
    returns the one with the largest longitudinal clearance in the slot.
    """
    from rc_sim_control.trajectories import ParkingProfile, parking_profile_limits
    from rc_sim_engine.collision import (
        Footprint,
        WorldArrays,
        deepest_contacts,
        footprint_from_params,
    )

    c = config
    foot = footprint_from_params(params)
    start_x = c.slot_length + c.start_ahead
    start = (start_x, 0.0, 0.0)
    delta_lim = params.steering.max_steering_angle
    t_star, t_min = parking_profile_limits(delta_lim, params.steering.max_steering_rate,
                                           c.speed, c.acceleration)
    durations = np.linspace(max(t_min, 2.0 * t_star), max(4.0 * t_min, 12.0), n_grid)
    deltas = np.linspace(0.3 * delta_lim, delta_lim, n_grid)
    profiles = [ParkingProfile(float(T), min(t_star, float(T)), float(dm), c.speed,
                               k_delta=-1.0, k_v=-1.0)
                for T in durations for dm in deltas]
    x, y, yaw = _kinematic_rollout(params, profiles, start, dt)
    last = np.array([round(p.duration / dt) for p in profiles])
    rows = np.arange(len(profiles))
    xf, yf, yawf = x[rows, last], y[rows, last], yaw[rows, last]
    corners = footprint_corners(xf, yf, yawf, foot)
    x0, x1, y0, y1 = c.slot_rect()
    cx, cy = corners[..., 0], corners[..., 1]
    m = c.margin
    ok = (np.all((cx >= x0 + m) & (cx <= x1 - m) & (cy >= y0 + m) & (cy <= y1 - m), axis=-1)
          & (np.abs(yawf) < 0.05))
    grown = Footprint(foot.center_x, foot.half_length + c.margin, foot.half_width + c.margin)
    arrays = WorldArrays.from_world(world)
    best, best_gap = -1, -math.inf
    feasible = 0
    for i in np.nonzero(ok)[0]:
        step = slice(0, last[i] + 1, 5)
        kind, _, _, _ = deepest_contacts(x[i, step], y[i, step], yaw[i, step], grown, arrays)
        if np.any(kind >= 0):
            continue
        feasible += 1
        gap = float(min(np.min(cx[i]) - x0, x1 - np.max(cx[i])))
        if gap > best_gap:
            best, best_gap = int(i), gap
    if best < 0:
        raise ConfigError(f'parking: no (T, delta_max) in the search grid parks in a '
                          f'{c.slot_length:.2f} m slot without touching the boxes '
                          f'(try a longer slot)')
    return ParkingPlan(profiles[best], start, (float(xf[best]), float(yf[best]),
                                               float(yawf[best])),
                       best_gap, len(profiles), feasible)


@dataclass
class ParkingOutcome:
    """Result of :func:`run_parking`."""

    result: Any
    world: Any
    plan: ParkingPlan
    config: ParkingConfig
    final: tuple[float, float, float]
    in_slot: bool
    corners: FloatArray = field(repr=False)

    @property
    def collided(self) -> bool:
        """True if the car touched anything."""
        return bool(self.result.collisions)


def run_parking(params: Any, config: ParkingConfig | None = None, *,
                model: str = 'single_track', tyre_model: str | None = None, seed: int = 0,
                progress: Callable[[float], None] | None = None) -> ParkingOutcome:
    """Plan (kinematic search) then play the parking profile open loop in the engine."""
    from rc_sim_control.tracking import TrackingCommand, twist_from_command
    from rc_sim_engine.collision import footprint_from_params
    from rc_sim_engine.simulator import SimConfig, Simulator

    cfg = config or ParkingConfig()
    world = parking_world(cfg)
    plan = plan_parking(params, cfg, world)
    sim = Simulator(params, world, SimConfig(model=model, tyre_model=tyre_model, seed=seed,
                                             lidar=False, mapper_mode='steering_angle'),
                    start=plan.start)
    wheelbase = params.geometry.wheelbase

    def control(t: float, obs: Any) -> tuple[float, float]:
        v, delta = plan.profile.commands(np.array([t]))
        return twist_from_command(TrackingCommand(float(v[0]), float(delta[0])), wheelbase,
                                  'steering_angle')

    result = sim.run(plan.profile.duration + 1.0, control, progress=progress)
    odom = result.streams['odom']
    final = (float(odom['x'][-1, 0]), float(odom['y'][-1, 0]), float(odom['yaw'][-1, 0]))
    corners = footprint_corners(final[0], final[1], final[2], footprint_from_params(params))
    x0, x1, y0, y1 = cfg.slot_rect()
    in_slot = bool(np.all((corners[:, 0] >= x0) & (corners[:, 0] <= x1)
                          & (corners[:, 1] >= y0) & (corners[:, 1] <= y1)))
    return ParkingOutcome(result, world, plan, cfg, final, in_slot, corners)
