"""ROS-free core of ``sim_node``: parameter schema and checks, simulator set-up, wall-clock pacing.

The node (``nodes/sim_node.py``) only declares the parameters listed in :data:`NODE_PARAMETERS`,
converts messages and calls :class:`LivePacer` from a wall-clock timer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rc_sim_control.ackermann import MAPPER_MODES
from rc_sim_control.node_params import ParamSpec, check_spec
from rc_sim_description.errors import ConfigError
from rc_sim_description.frames import car_namespaces
from rc_sim_description.limits import MAX_CARS
from rc_sim_engine.collision import COLLISION_RESPONSES
from rc_sim_engine.simulator import SimConfig, Simulator

__all__ = ['NODE_PARAMETERS', 'LivePacer', 'build_simulator', 'car_namespaces', 'car_vector',
           'node_parameter_problem']

# Parameters of sim_node (the shared ParamSpec schema of every rc-sim node). All but
# realtime_factor are read-only: they define the simulation built at start-up.
NODE_PARAMETERS: tuple[ParamSpec, ...] = (
    ParamSpec('world', 'basic_track', 'World name or SDF path (rc_sim_description worlds).',
              read_only=True),
    ParamSpec('x', 0.0, 'Start x of base_link in odom [m].', -1e4, 1e4, read_only=True),
    ParamSpec('y', 0.0, 'Start y of base_link in odom [m].', -1e4, 1e4, read_only=True),
    ParamSpec('yaw', 0.0, 'Start yaw of base_link in odom [rad].', -math.pi, math.pi,
              read_only=True),
    ParamSpec('params_file', '', 'Vehicle override YAML merged over vehicle.yaml ("" = none).',
              read_only=True),
    ParamSpec('realtime_factor', 1.0, 'Simulated time per wall-clock time.', 0.01, 1000.0),
    ParamSpec('seed', 0, 'Seed of every random generator (lidar errors).', 0, 2 ** 31 - 1,
              read_only=True),
    ParamSpec('lidar_errors', '', 'rc_sim_sensors preset or YAML applied inside the node '
              '(publishes /scan); "" = none (ideal /scan_raw only, as with the injector).',
              read_only=True),
    ParamSpec('collision_response', 'stop', 'stop | bounce | ignore.',
              choices=tuple(COLLISION_RESPONSES), read_only=True),
    ParamSpec('use_cmd_vel', False, 'Also accept /cmd_vel through the control core mapper.',
              read_only=True),
    ParamSpec('mapper_mode', 'yaw_rate', 'Meaning of /cmd_vel angular.z: '
              + ' | '.join(MAPPER_MODES) + '.', choices=MAPPER_MODES, read_only=True),
    ParamSpec('num_cars', 1, 'Number of cars; car 0 at (x, y, yaw), the others lined up behind '
              'it; with several, car i publishes and subscribes under car_<i>/ with frames '
              'car_<i>/...', 1, int(MAX_CARS.default), read_only=True),
    ParamSpec('publish_rate', 100.0, 'Wall-clock rate of the stepping timer [Hz].', 1.0, 1000.0,
              read_only=True),
)
_SPECS = {spec.name: spec for spec in NODE_PARAMETERS}


def node_parameter_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is not acceptable for parameter ``name`` (None when it is)."""
    spec = _SPECS.get(name)
    if spec is None:
        return None  # not ours (e.g. use_sim_time)
    if isinstance(spec.default, bool):
        return None if isinstance(value, bool) else f'{name}: expected true or false'
    if (isinstance(spec.default, (int, float)) and isinstance(value, float)
            and not math.isfinite(value)):
        return f'{name}: must be finite, got {value!r}'
    return check_spec(spec, value)


def build_simulator(values: dict[str, Any]) -> Simulator:
    """A live (non-recording) Simulator from node parameter values; one-line RcSimError if bad."""
    from rc_sim_description.params import load_vehicle_params
    from rc_sim_description.paths import world_path
    from rc_sim_engine.world import load_world

    for name, value in values.items():
        problem = node_parameter_problem(name, value)
        if problem:
            raise ConfigError(f'sim_node parameter {problem}')
    params_file = str(values.get('params_file', '') or '')
    params = load_vehicle_params(overrides=[params_file] if params_file else [])
    world = load_world(world_path(str(values.get('world', 'basic_track'))))
    errors = None
    spec = str(values.get('lidar_errors', '') or '')
    if spec:
        from rc_sim_sensors.lidar_config import PRESETS, LidarErrorConfig

        errors = (LidarErrorConfig.from_preset(spec) if spec in PRESETS
                  else LidarErrorConfig.from_yaml(spec))
    config = SimConfig(seed=int(values.get('seed', 0)), lidar_errors=errors,
                       collision_response=str(values.get('collision_response', 'stop')),
                       mapper_mode=str(values.get('mapper_mode', 'yaw_rate')), record=False)
    start = (float(values.get('x', 0.0)), float(values.get('y', 0.0)),
             float(values.get('yaw', 0.0)))
    n = int(values.get('num_cars', 1))
    if n == 1:
        return Simulator(params, world, config, start=start)
    from rc_sim_engine.car_grid import lined_up

    return Simulator([params] * n, world, config, start=lined_up(world, params, start, n))




def car_vector(n: int, i: int, value: float) -> np.ndarray:
    """(n,) command array: ``value`` for car ``i``, NaN (keep the current command) for the
    others (:meth:`Simulator.command` and :meth:`Simulator.command_twist` hold them)."""
    out = np.full(n, np.nan)
    out[i] = value
    return out


class LivePacer:
    """Keeps sim time = realtime_factor x wall time; falls behind gracefully (no catch-up spiral).

    :meth:`target` returns the sim time to step to at wall time ``now`` [s]; each call advances at
    most ``max_step`` s of sim time, and when the simulator lags more than that the reference is
    shifted (the run slows down instead of freezing the node).
    """

    def __init__(self, realtime_factor: float, now: float, sim_time: float = 0.0,
                 max_step: float = 0.25) -> None:
        self.realtime_factor = float(realtime_factor)
        self._wall0 = now
        self._sim0 = sim_time
        self.max_step = max_step

    def set_realtime_factor(self, factor: float, now: float, sim_time: float) -> None:
        """Change the factor from now on (no jump in sim time)."""
        self.realtime_factor = float(factor)
        self._wall0, self._sim0 = now, sim_time

    def target(self, now: float, sim_time: float) -> float:
        """Sim time to reach at wall time ``now`` given the current ``sim_time``."""
        goal = self._sim0 + (now - self._wall0) * self.realtime_factor
        if goal - sim_time > self.max_step:
            self._wall0, self._sim0 = now, sim_time + self.max_step
            return sim_time + self.max_step
        return goal
