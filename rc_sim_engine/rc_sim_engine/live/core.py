"""ROS-free core of ``sim_node``: parameter schema and checks, simulator set-up, the messages of
each step, wall-clock pacing and the lockstep gate.

``sim_node`` publishes exactly the messages ``rcsim run`` writes into its bags: the simulator
streams every sample (odometry and /tf, IMU, joint states, scans, /clock) at its own simulated
time and rate to a :class:`LiveOutput`, which serialises them in bulk
(:func:`rc_sim_engine.output.bags.sim_batches`, the bag writer's CDR) and hands them over in time
order; the node only publishes the bytes. How far the simulation runs per wall-clock tick is
decided by
:class:`LivePacer` (``realtime_factor``: sim time = factor x wall time; 0 = as fast as the
machine allows), and in lockstep mode by :class:`LockstepGate` (each control period waits for
that period's command, so a run over ROS is deterministic under any machine load).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
import math
from typing import Any

import numpy as np

from rc_sim_control.ackermann import MAPPER_MODES
from rc_sim_control.node_params import ParamSpec, check_spec
from rc_sim_description.bags.bulk_storage import sorted_rows
from rc_sim_description.bags.cdr_bulk import RawBatch
from rc_sim_description.errors import ConfigError
from rc_sim_description.frames import car_namespaces
from rc_sim_description.limits import MAX_CARS
from rc_sim_engine.live.inputs import raw_commands
from rc_sim_engine.sim.sim_config import CollisionEvent
from rc_sim_engine.sim.simulator import SimConfig, Simulator
from rc_sim_engine.world.collision import COLLISION_RESPONSES

__all__ = ['COMMAND_TOPICS', 'NODE_PARAMETERS', 'LiveOutput', 'LivePacer', 'LockstepGate',
           'build_simulator', 'car_namespaces', 'car_vector', 'collision_line',
           'lockstep_waits_for', 'node_parameter_problem', 'output_topics']

#: The most wall-clock time one timer callback spends stepping [s] before it lets the executor
#: take the commands that arrived meanwhile (the next callback goes on where it stopped).
TICK_BUDGET_S = 0.02
#: Sim time stepped per stretch inside a callback when nothing else limits it [s].
STRETCH_S = 0.02
#: How far behind its wall-clock schedule a paced run may fall before the schedule is moved
#: (the run then slows down instead of racing to catch up) [s of wall time].
MAX_LAG_S = 0.25

# Parameters of sim_node (the shared ParamSpec schema of every rc-sim node). All but
# realtime_factor and paused are read-only: they define the simulation built at start-up.
NODE_PARAMETERS: tuple[ParamSpec, ...] = (
    ParamSpec('world', 'basic_track', 'World name or SDF path (rc_sim_description worlds).',
              read_only=True),
    ParamSpec('x', 0.0, 'Start x of base_link in odom [m].', -1e4, 1e4, read_only=True),
    ParamSpec('y', 0.0, 'Start y of base_link in odom [m].', -1e4, 1e4, read_only=True),
    ParamSpec('yaw', 0.0, 'Start yaw of base_link in odom [rad].', -math.pi, math.pi,
              read_only=True),
    ParamSpec('params_file', '', 'Vehicle override YAML merged over vehicle.yaml ("" = none).',
              read_only=True),
    ParamSpec('realtime_factor', 1.0, 'Simulated time per wall-clock time; 0 = as fast as the '
              'machine allows (time compression; every message still at its own sim time).',
              0.0, 10000.0),
    ParamSpec('paused', False, 'true: the simulation (and /clock) stands still; false: it goes '
              'on from where it stood.'),
    ParamSpec('lockstep', False, 'true: each control period (1 / command_rate of sim time) '
              "waits for that period's command (one /cmd_vel, or one /steering_angle and one "
              '/rear_wheel_speed, per period, taken in order): a deterministic run under any '
              'machine load. The controller must answer every period once.', read_only=True),
    ParamSpec('command_rate', 50.0, 'Control periods per simulated second in lockstep mode '
              '[Hz]; also the rate /odom and /tf are published at.', 1.0, 1000.0,
              read_only=True),
    ParamSpec('seed', 0, 'Seed of every random generator (lidar errors).', 0, 2 ** 31 - 1,
              read_only=True),
    ParamSpec('lidar_errors', '', 'rc_sim_sensors preset or YAML applied inside the node '
              '(publishes /scan); "" = none (ideal /scan_raw only, as with the injector).',
              read_only=True),
    ParamSpec('collision_response', 'stop', 'stop | bounce | ignore.',
              choices=tuple(COLLISION_RESPONSES), read_only=True),
    ParamSpec('use_cmd_vel', False, 'Also accept /cmd_vel through the control core mapper.',
              read_only=True),
    ParamSpec('recording', '', 'Recording description YAML (docs/recordings.md): drive the car '
              'with the command topics it names, as the real car takes them: steering + drive '
              '(+ enable, the deadman) as std_msgs scalars of their kinds (e.g. a normalised '
              'servo command and an ESC duty), an Ackermann command, or a twist; the mapper '
              'topics are then not subscribed for steering + drive. "" = none.',
              read_only=True),
    ParamSpec('raw_command_type', 'Float32', 'Message type of the raw steering, drive and enable '
              'topics: Float32 or Float64 (std_msgs; their MultiArray for a role with an index).',
              choices=('Float32', 'Float64'), read_only=True),
    ParamSpec('mapper_mode', 'yaw_rate', 'Meaning of /cmd_vel angular.z: '
              + ' | '.join(MAPPER_MODES) + '.', choices=MAPPER_MODES, read_only=True),
    ParamSpec('num_cars', 1, 'Number of cars; car 0 at (x, y, yaw), the others lined up behind '
              'it; with several, car i publishes and subscribes under car_<i>/ with frames '
              'car_<i>/...', 1, int(MAX_CARS.default), read_only=True),
    ParamSpec('publish_rate', 100.0, 'Wall-clock rate of the stepping timer [Hz] (with '
              'realtime_factor > 0; each tick publishes every message due since the last).',
              1.0, 1000.0, read_only=True),
)
_SPECS = {spec.name: spec for spec in NODE_PARAMETERS}
#: Topics of the recorded streams that are the node's inputs, never its outputs.
COMMAND_TOPICS = ('cmd_vel', 'steering_angle', 'rear_wheel_speed')


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
    """A live Simulator from node parameter values (streams every sample to the sink the node
    attaches; keeps none); one-line RcSimError if bad."""
    from rc_sim_description.params import load_vehicle_params
    from rc_sim_description.paths import world_path
    from rc_sim_engine.sim.run_setup import lidar_error_config
    from rc_sim_engine.world.sdf import load_world

    for name, value in values.items():
        problem = node_parameter_problem(name, value)
        if problem:
            raise ConfigError(f'sim_node parameter {problem}')
    params_file = str(values.get('params_file', '') or '')
    params = load_vehicle_params(overrides=[params_file] if params_file else [])
    world = load_world(world_path(str(values.get('world', 'basic_track'))))
    errors = lidar_error_config(str(values.get('lidar_errors', '') or ''),
                                'sim_node parameter lidar_errors')
    raw = raw_commands(str(values['recording'])) if values.get('recording') else None
    kinds = raw.simulator_kinds if raw is not None else ('angle', 'wheel_speed')
    if raw is not None and kinds != ('angle', 'wheel_speed') and values.get('use_cmd_vel'):
        raise ConfigError(f'sim_node: use_cmd_vel with recording {values["recording"]}: the car '
                          f'takes its raw {kinds[0]} + {kinds[1]} commands from it; use one '
                          'of the two')
    rate = float(values.get('command_rate', 50.0))
    config = SimConfig(seed=int(values.get('seed', 0)), lidar_errors=errors,
                       collision_response=str(values.get('collision_response', 'stop')),
                       mapper_mode=str(values.get('mapper_mode', 'yaw_rate')), record=True,
                       command_rate=rate, odom_rate=rate)
    start = (float(values.get('x', 0.0)), float(values.get('y', 0.0)),
             float(values.get('yaw', 0.0)))
    n = int(values.get('num_cars', 1))
    steering_kind, drive_kind = kinds
    if n == 1:
        return Simulator(params, world, config, start=start, steering_kind=steering_kind,
                         drive_kind=drive_kind)
    from rc_sim_engine.sim.car_grid import lined_up

    return Simulator([params] * n, world, config, start=lined_up(world, params, start, n),
                     steering_kind=steering_kind, drive_kind=drive_kind)


def car_vector(n: int, i: int, value: float) -> np.ndarray:
    """(n,) command array: ``value`` for car ``i``, NaN (keep the current command) for the
    others (:meth:`Simulator.command` and :meth:`Simulator.command_twist` hold them)."""
    out = np.full(n, np.nan)
    out[i] = value
    return out


def output_topics(n_cars: int, lidar_errors: bool) -> dict[str, tuple[str, str]]:
    """Stream topic (as :func:`~rc_sim_engine.output.bags.sim_batches` names it) -> (the node's
    topic name, message type). Car topics are relative (a node namespace applies), /clock and /tf
    global; without an error model the ideal scan is published as ``scan_raw`` (the
    ``lidar_error_injector`` makes ``scan`` of it), with one as ``scan_raw`` and ``scan``."""
    out = {'/clock': ('/clock', 'rosgraph_msgs/msg/Clock'),
           '/tf': ('/tf', 'tf2_msgs/msg/TFMessage')}
    kinds = {'odom': 'nav_msgs/msg/Odometry', 'imu': 'sensor_msgs/msg/Imu',
             'joint_states': 'sensor_msgs/msg/JointState'}
    for ns in car_namespaces(n_cars):
        prefix = f'{ns}/' if ns else ''
        for name, msgtype in kinds.items():
            out[f'/{prefix}{name}'] = (prefix + name, msgtype)
        scan = 'sensor_msgs/msg/LaserScan'
        if lidar_errors:
            out[f'/{prefix}scan_raw'] = (prefix + 'scan_raw', scan)
            out[f'/{prefix}scan'] = (prefix + 'scan', scan)
        else:
            out[f'/{prefix}scan'] = (prefix + 'scan_raw', scan)
    return out


class LiveOutput:
    """The sink of a live simulator: every stream sample as a serialised message, in time order.

    :meth:`attach` makes ``sim`` stream to it; after each :meth:`Simulator.step_to`,
    :meth:`take` returns ``(topic index, CDR bytes)`` pairs, ordered by stamp and, at equal
    stamps, as the bags order their topics (/clock first). Commands (the node's own inputs) are
    not republished; scans delayed by the error model's latency come with the step that reaches
    their stamp.
    """

    def __init__(self, sim: Simulator, lidar_errors: bool) -> None:
        from rc_sim_engine.output.bags import SimBagStream

        self.topics = output_topics(sim.n, lidar_errors)
        self.names = list(self.topics)
        self._index = {name: k for k, name in enumerate(self.names)}
        self._pending: list[RawBatch] = []
        self._stream = SimBagStream(self, sim.params, robot_model=False)  # type: ignore[arg-type]
        sim.attach_sink(self._stream)

    def write_batches(self, batches: list[RawBatch]) -> None:
        """Called by the bag stream with each chunk's messages (the bag writer's interface)."""
        self._pending.extend(b for b in batches if len(b)
                             and b.topic.rsplit('/', 1)[-1] not in COMMAND_TOPICS)

    def take(self) -> tuple[list[int], list[bytes]]:
        """Messages since the last call: their topic indices (into :attr:`names`) and bytes."""
        batches, self._pending = self._pending, []
        if not batches:
            return [], []
        which, _, views = sorted_rows(batches, [b.rows for b in batches])
        topic = [self._index[b.topic] for b in batches]
        return [topic[j] for j in which.tolist()], [v.tobytes() for v in views]


def collision_line(event: CollisionEvent, namespaces: list[str], response: str) -> str:
    """One log line for a contact event (who, what, when, where, how fast, what happened)."""
    who = namespaces[event.car] or 'the car'
    what = {'stop': 'stopped there', 'bounce': 'bounced off',
            'ignore': 'driving on (collision_response ignore)'}.get(response, response)
    return (f'{who} hit {event.kind} {event.obstacle!r} at t = {event.t:.3f} s, '
            f'(x, y) = ({event.x:.2f}, {event.y:.2f}) m, at {abs(event.speed):.2f} m/s: {what}')


class LivePacer:
    """How far to step at wall time ``now``: sim time = realtime_factor x wall time.

    With a factor > 0 :meth:`target` returns the sim time due at ``now``; when the simulation
    lags its schedule by more than ``max_lag`` s of wall time, the schedule moves (the run slows
    down instead of racing to catch up, the lag is counted in :attr:`slipped_s`). With factor 0
    there is no schedule: every call allows ``chunk`` s more (as fast as the machine allows).
    """

    def __init__(self, realtime_factor: float, now: float, sim_time: float = 0.0,
                 max_lag: float = MAX_LAG_S, chunk: float = STRETCH_S) -> None:
        self.realtime_factor = float(realtime_factor)
        self.max_lag = max_lag
        self.chunk = chunk
        self.slipped_s = 0.0
        self._wall0 = now
        self._sim0 = sim_time

    def set_realtime_factor(self, factor: float, now: float, sim_time: float) -> None:
        """Change the factor from now on (no jump in sim time); also used to resume."""
        self.realtime_factor = float(factor)
        self._wall0, self._sim0 = now, sim_time

    def target(self, now: float, sim_time: float) -> float:
        """Sim time to reach at wall time ``now`` given the current ``sim_time``."""
        if self.realtime_factor <= 0.0:
            return sim_time + self.chunk
        goal = self._sim0 + (now - self._wall0) * self.realtime_factor
        lag = (goal - sim_time) / self.realtime_factor
        if lag > self.max_lag:  # behind schedule: move it (slow down, no catch-up spiral)
            self.slipped_s += lag - self.max_lag
            self._wall0 = now - self.max_lag
            self._sim0 = sim_time
            goal = sim_time + self.max_lag * self.realtime_factor
        return goal

    def achieved(self, wall_s: float, sim_s: float) -> float:
        """Real-time factor actually achieved over a window."""
        return sim_s / wall_s if wall_s > 0 else math.inf


@dataclass
class LockstepGate:
    """Lockstep bookkeeping: one command per control period, taken in arrival order.

    ``inputs`` are the command topics a period needs one message of each (``('cmd_vel',)``, or
    ``('steering_angle', 'rear_wheel_speed')``). :meth:`offer` queues a message's values;
    :meth:`take` returns the next period's values once every input has one, else None.
    """

    inputs: tuple[str, ...]
    queues: dict[str, deque[tuple[float, ...]]] = field(default_factory=dict)
    periods: int = 0

    def __post_init__(self) -> None:
        self.queues = {name: deque() for name in self.inputs}

    def offer(self, topic: str, *values: float) -> None:
        self.queues[topic].append(tuple(values))

    def ready(self) -> bool:
        return all(self.queues[name] for name in self.inputs)

    def take(self) -> dict[str, tuple[float, ...]] | None:
        if not self.ready():
            return None
        self.periods += 1
        return {name: self.queues[name].popleft() for name in self.inputs}

    def backlog(self) -> int:
        """Periods' worth of commands queued beyond the next one (> 0: the controller answers
        more than once per period)."""
        return max(0, min(len(q) for q in self.queues.values()) - 1)


def lockstep_waits_for(publishers: dict[str, set[str]], publishers_matched: dict[str, int],
                       readers: dict[str, set[str]],
                       readers_matched: dict[str, int]) -> str | None:
    """What a lockstep run still waits for before its first period (None: nothing).

    ``publishers``: command topic -> the nodes publishing it (graph), ``publishers_matched``:
    how many of them the node's subscription matched; ``readers``: output topic -> the nodes
    subscribing it, ``readers_matched``: how many the node's publisher matched. The run starts
    when every command topic has a publisher, every one of them is matched, and every
    controller (command publisher) reads one of the outputs through a matched subscription:
    a message sent earlier would be lost, and the controller would wait for it forever.
    """
    for topic, nodes in publishers.items():
        if not nodes:
            return f'a publisher of {topic}'
        if publishers_matched.get(topic, 0) < len(nodes):
            return f'the publishers of {topic} to connect'
    for node in sorted(set().union(*publishers.values())):
        read = [t for t, nodes in readers.items() if node in nodes]
        if not read:
            return f'{node} to subscribe to one of ' + ', '.join(sorted(readers))
        for topic in read:
            if readers_matched.get(topic, 0) < len(readers[topic]):
                return f'the subscribers of {topic} to connect'
    return None
