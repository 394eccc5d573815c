"""Closed-loop trajectory tracking in the engine: the core of ``rcsim track``.

The tracking controller of :mod:`rc_sim_control.tracking` (the same :class:`TrackerSession` as the
``trajectory_tracker`` node) drives the engine: controller -> ``/cmd_vel`` (steering_angle mode)
-> command mapper -> actuators -> vehicle model. The run is evaluated with
:func:`rc_sim_control.evaluation.evaluate_arrays` (centre-of-mass error, RMSE and ISE). ROS-free;
the CLI, the tests and the benchmarks call :func:`run_tracking`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
from typing import Any

from rc_sim_control.evaluation import (
    DEFAULT_TRANSIENT,
    EvaluatedRun,
    ReferencePath,
    evaluate_arrays,
)
from rc_sim_control.tracking import MeasuredPose, TrackerSession, twist_from_command
from rc_sim_control.trajectories import Trajectory
from rc_sim_description.params import VehicleParams
from rc_sim_engine.sim.simulator import Observation, SimConfig, SimResult, Simulator
from rc_sim_engine.world.sdf import World

__all__ = ['DEFAULT_TRANSIENT', 'OPTION_KEYS', 'TrackingRun', 'evaluate_result', 'run_tracking',
           'tracker_settings']


@dataclass
class TrackingRun:
    """A closed-loop run: the simulator result, the placed reference and the CoM error metrics."""

    result: SimResult
    trajectory: Trajectory  # placed in odom
    controller: str
    duration: float
    paths: list[ReferencePath]  # the published reference paths
    evaluation: EvaluatedRun


def _pose(obs: Observation, i: int = 0) -> MeasuredPose:
    return MeasuredPose(float(obs.x[i]), float(obs.y[i]), float(obs.yaw[i]), float(obs.vx[i]))


def run_tracking(params: VehicleParams, world: World, values: dict[str, object], *,
                 model: str = 'single_track', tyre_model: str | None = None,
                 start: tuple[float, float, float] | None = None,
                 control_rate: float = 50.0, transient: float = DEFAULT_TRANSIENT,
                 seed: int = 0, lidar: bool = False,
                 offset: tuple[float, float, float] = (0.0, 0.0, 0.0),
                 progress: Callable[[float], None] | None = None) -> TrackingRun:
    """Track the trajectory of tracker ``values`` (see ``TRACKER_DEFAULTS``) from ``start``.

    The trajectory is placed so that it begins at the centre of mass of a car at ``start``
    (base_link x, y, yaw) with its heading; the car starts at rest at ``start`` moved by
    ``offset`` (forward [m], left [m], yaw [rad] in the start frame) to test convergence.
    """
    session = TrackerSession(params, values)
    config = SimConfig(model=model, tyre_model=tyre_model, lidar=lidar, seed=seed,
                       command_rate=control_rate, mapper_mode='steering_angle')
    x0, y0, yaw0 = start or (0.0, 0.0, 0.0)
    sim = Simulator(params, world, config, start=(x0, y0, yaw0))
    trajectory = session.activate(0.0, _pose(sim.observe()))
    if any(offset):
        c, s = math.cos(yaw0), math.sin(yaw0)
        sim.reset((x0 + c * offset[0] - s * offset[1], y0 + s * offset[0] + c * offset[1],
                   yaw0 + offset[2]))
    t_path, x_path, y_path, yaw_path = session.reference_path()
    wheelbase = params.geometry.wheelbase

    def controller(t: float, obs: Observation) -> tuple[float, float]:
        step = session.step(t, _pose(obs))
        if step is None:
            return 0.0, 0.0
        return twist_from_command(step.command, wheelbase, 'steering_angle')

    result = sim.run(session.duration, controller, progress=progress)
    paths: list[ReferencePath] = [(0, t_path, x_path, y_path, yaw_path)]
    evaluation = evaluate_result(result, paths, params, transient)
    return TrackingRun(result, trajectory, session.controller.name, session.duration, paths,
                       evaluation)


def evaluate_result(result: SimResult, paths: Sequence[ReferencePath], params: VehicleParams,
                    transient: float = DEFAULT_TRANSIENT) -> EvaluatedRun:
    """:func:`evaluate_arrays` on car 0 of a simulator result (its odometry stream)."""
    odom = result.streams['odom']
    return evaluate_arrays(odom.t, odom['x'][:, 0], odom['y'][:, 0], odom['yaw'][:, 0], paths,
                           params.geometry.cg_to_rear_axle, transient)


#: tracker parameters that have their own ``rcsim track`` option (a --set would be
#: overwritten by it)
OPTION_KEYS = {'trajectory_type': '--trajectory', 'controller': '--controller',
                'waypoints_file': '--waypoints', 'duration': '--duration'}


def tracker_settings(items: Sequence[str]) -> dict[str, Any]:
    """``key=value`` tracker parameters (``rcsim track --set``, a campaign's ``set``) ->
    typed values, each checked against :data:`rc_sim_control.tracking.TRACKER_DEFAULTS`."""
    from rc_sim_control.tracking import TRACKER_DEFAULTS
    from rc_sim_description.cli_support import split_key_value
    from rc_sim_description.errors import ConfigError
    from rc_sim_description.yamlio import did_you_mean

    settable = sorted(k for k in TRACKER_DEFAULTS if k not in OPTION_KEYS)
    out: dict[str, Any] = {}
    for item in items:
        key = item.partition('=')[0].strip()
        if key in OPTION_KEYS:
            raise ConfigError(f'--set {item!r}: use {OPTION_KEYS[key]} instead')
        key, raw = split_key_value(item, '--set')
        if key not in TRACKER_DEFAULTS:
            raise ConfigError(f'--set {item!r}: unknown tracker parameter {key!r}'
                              f'{did_you_mean(key, settable)}; known: {", ".join(settable)}')
        default = TRACKER_DEFAULTS[key]
        try:
            if isinstance(default, bool):
                if raw.lower() not in ('true', 'false', '1', '0'):
                    raise ValueError(raw)
                out[key] = raw.lower() in ('true', '1')
            elif isinstance(default, float):
                out[key] = float(raw)
            else:
                out[key] = raw
        except ValueError:
            raise ConfigError(f'--set {item!r}: {raw!r} is not a valid '
                              f'{type(default).__name__}') from None
    return out
