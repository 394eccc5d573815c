"""ROS 2 campaign runs (driver ``kind: ros_launch``): the user's own stack against ``sim_node``.

Each run, in a worker process:

1. leases a ROS domain id nobody else on the machine holds (an exclusive lock on
   ``$TMPDIR/rc_sim_ros_domains/<id>.lock``, the lock files of the live test harness), so
   parallel runs, and other sessions, never see each other's nodes; discovery stays on this
   machine (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``); ``ROS_HOME`` and ``ROS_LOG_DIR`` are in
   the run's temporary folder;
2. starts ``sim_node`` with the run's factors (world, start pose, params_file, lidar_errors,
   seed) in lockstep (``lockstep: true``, ``use_cmd_vel: true``, ``realtime_factor: 0``): each
   control period waits for one ``/cmd_vel``, so the run is the same whatever the load;
3. subscribes ``/odom`` in a small in-process recorder node and waits until it is connected,
   then starts the user's launch file (``ros2 launch``) or executable (``ros2 run``); the
   user's processes see ``RCSIM_RUN_ID``, ``RCSIM_RUN_SEED`` and ``RCSIM_RUN_DIR`` (the run's
   temporary folder) in their environment;
4. stops when the recorded odometry is one control period past the run's duration in sim time
   (the stack has then answered every message of the run; the record is cut at the duration),
   Ctrl-C's every process group it started (SIGTERM, then SIGKILL, if one does not end), and
   removes the Fast DDS shared-memory files no process holds any more (``fastdds shm clean``);
5. measures the run with the same metric functions as the Python runs, on a
   :class:`~rc_sim_engine.sim.streams.SimResult` built from the recorded ``/odom``: contacts are
   the odometry samples where the footprint is within :data:`CONTACT_MARGIN_M` of an obstacle
   (``sim_node``'s ``stop`` response pushes the car out to the surface), counted at their onsets.

The ROS side (rclpy) is :mod:`rc_sim_engine.nodes.campaign_ros`, imported inside the functions
that need it: this module imports without ROS 2
(:func:`require_ros` says what is missing in one line).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import contextlib
import fcntl
import math
import os
from pathlib import Path
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any

import numpy as np

from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_engine.campaign.expand import Run
from rc_sim_engine.campaign.factors import lidar_config, resolve_path
from rc_sim_engine.campaign.spec import CampaignSpec

__all__ = ['CONTACT_MARGIN_M', 'DomainLease', 'contact_events', 'execute_ros_run',
           'recorded_result', 'require_ros', 'run_env', 'sim_parameters', 'stop_process',
           'user_command']

NEEDS_ROS = ('needs ROS 2 (source /opt/ros/jazzy/setup.bash or . scripts/setup_ros.sh)')
#: Domain ids handed out (0 is left to the user; ids > 101 collide with Linux's ephemeral ports).
DOMAIN_IDS = tuple(range(1, 102))
LOCK_DIR = Path(tempfile.gettempdir()) / 'rc_sim_ros_domains'
#: An odometry sample is a contact when the footprint is this close to an obstacle [m].
CONTACT_MARGIN_M = 1e-3
#: Wall time [s] a process gets to end after SIGINT, then after SIGTERM.
STOP_TIMEOUTS_S = (10.0, 5.0)
#: Wall time [s] sim_node gets to come up and be connected to the recorder.
START_TIMEOUT_S = 60.0


def require_ros() -> None:
    """ConfigError (one line) unless rclpy, ``ros2`` and a colcon-built rc_sim_engine are here."""
    import importlib.util

    if importlib.util.find_spec('rclpy') is None:  # (the nodes package would exit)
        raise ConfigError(f'driver kind ros_launch {NEEDS_ROS}: rclpy is not importable')
    try:
        from rc_sim_engine.nodes.campaign_ros import ros_missing
    except ImportError as exc:
        raise ConfigError(f'driver kind ros_launch {NEEDS_ROS}: {exc}'.splitlines()[0]) from None
    if shutil.which('ros2') is None:
        raise ConfigError(f'driver kind ros_launch {NEEDS_ROS}: the ros2 command is not on PATH')
    reason = ros_missing()
    if reason:
        raise ConfigError(f'driver kind ros_launch {NEEDS_ROS}: {reason}')


class DomainLease:
    """A ROS domain id held by this process alone while the lease lasts (an exclusive lock on
    a file per id; the live tests take theirs here too). The search starts at an id given by
    the process id, so that processes starting together rarely try the same ones."""

    def __init__(self, ids: Sequence[int] = DOMAIN_IDS, wait_s: float = 60.0) -> None:
        LOCK_DIR.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + wait_s
        start = os.getpid() % len(ids)
        while True:
            for domain in (*ids[start:], *ids[:start]):
                fd = os.open(LOCK_DIR / f'{domain}.lock', os.O_CREAT | os.O_RDWR, 0o666)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                self.domain_id, self._fd = domain, fd
                return
            if time.monotonic() > deadline:
                raise RcSimError(f'no free ROS domain id among {ids[0]}..{ids[-1]}')
            time.sleep(0.5)

    def release(self) -> None:
        """Give the id back (closing the file drops the lock)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def run_env(base: Mapping[str, str], domain_id: int, folder: Path, run: Run) -> dict[str, str]:
    """The environment of a run's processes: its domain, localhost discovery, ROS_HOME and logs
    in ``folder``, and the run's id, seed and folder for the user's nodes."""
    env = dict(base)
    env.pop('ROS_LOCALHOST_ONLY', None)  # deprecated in Jazzy: the range below replaces it
    (folder / 'ros_home').mkdir(exist_ok=True)
    (folder / 'log').mkdir(exist_ok=True)
    env.update(ROS_DOMAIN_ID=str(domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               ROS_HOME=str(folder / 'ros_home'), ROS_LOG_DIR=str(folder / 'log'),
               PYTHONUNBUFFERED='1', RCUTILS_COLORIZED_OUTPUT='0', RCSIM_RUN_ID=run.run_id,
               RCSIM_RUN_SEED=str(run.seed), RCSIM_RUN_DIR=str(folder))
    return env


def sim_parameters(spec: CampaignSpec, run: Run, spawn: tuple[float, float, float],
                   folder: Path) -> dict[str, Any]:
    """sim_node's parameters for ``run``: its factors, lockstep on /cmd_vel as fast as possible.

    No ``lidar_errors`` factor: the ``ideal`` preset (so that ``/scan`` is published); a preset
    with ``set`` overrides is written to a YAML file in ``folder``.
    """
    from rc_sim_description.yamlio import dump_yaml

    values = run.values
    given = values.get('start')
    x, y, yaw = (float(v) for v in (given if given else spawn))
    lidar = values.get('lidar_errors')
    if lidar is None:
        lidar_value = 'ideal'
    elif isinstance(lidar, Mapping):
        path = folder / 'lidar_errors.yaml'
        path.write_text(dump_yaml(lidar_config(lidar, spec.folder).to_dict(), str(path)),
                        encoding='utf-8')
        lidar_value = str(path)
    else:
        from rc_sim_sensors.lidar_config import PRESETS

        lidar_value = lidar if lidar in PRESETS else resolve_path(spec.folder, lidar)
    params = values.get('params')
    return {
        'world': resolve_path(spec.folder, str(values.get('world', 'basic_track'))),
        'x': x, 'y': y, 'yaw': math.atan2(math.sin(yaw), math.cos(yaw)),
        'params_file': resolve_path(spec.folder, params) if params else '',
        'lidar_errors': lidar_value,
        'seed': int(run.seed),
        'lockstep': True, 'use_cmd_vel': True, 'realtime_factor': 0.0,
        'command_rate': float(spec.driver.control_rate_hz),
        'mapper_mode': spec.driver.mode,
    }


def user_command(spec: CampaignSpec) -> list[str]:
    """``ros2 launch PACKAGE FILE name:=value ...`` (or ``ros2 launch PATH ...``), or
    ``ros2 run PACKAGE EXECUTABLE --ros-args -p use_sim_time:=true -p name:=value ...``."""
    settings = dict(spec.driver.settings)
    args = list(settings.get('args', ()))
    if 'launch' in settings:
        launch = dict(settings['launch'])
        where = ([resolve_path(spec.folder, launch['path'])] if 'path' in launch
                 else [launch['package'], launch['file']])
        return ['ros2', 'launch', *where, *(f'{k}:={v}' for k, v in args)]
    target = dict(settings['run'])
    params = [('use_sim_time', 'true'), *args]
    return ['ros2', 'run', target['package'], target['executable'], '--ros-args',
            *(item for k, v in params for item in ('-p', f'{k}:={v}'))]


def stop_process(proc: subprocess.Popen[bytes], timeouts: Sequence[float] = STOP_TIMEOUTS_S
                 ) -> int:
    """End ``proc``'s process group: SIGINT (Ctrl-C), then SIGTERM, then SIGKILL, each after
    its timeout; returns the exit status."""
    for sig, wait_s in ((signal.SIGINT, timeouts[0]), (signal.SIGTERM, timeouts[1]),
                        (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait_s)
    # whatever the group still holds (a node its launch did not reap)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


def _clean_shm() -> None:
    """Remove the Fast DDS shared-memory files no running process holds any more."""
    fastdds = shutil.which('fastdds')
    if fastdds:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run([fastdds, 'shm', 'clean'], capture_output=True, check=False,
                           timeout=60)


def contact_events(t_s: np.ndarray, x: np.ndarray, y: np.ndarray, yaw: np.ndarray,
                   speed: np.ndarray, params: Any, world: Any) -> list[Any]:
    """A :class:`~rc_sim_engine.sim.sim_config.CollisionEvent` per contact onset: the odometry
    samples where the car's footprint, grown by :data:`CONTACT_MARGIN_M` on every side,
    overlaps an obstacle."""
    from rc_sim_description.footprint import Footprint
    from rc_sim_engine.sim.sim_config import CollisionEvent
    from rc_sim_engine.world.collision import WorldArrays, deepest_contacts, footprint_from_params

    if len(t_s) == 0:
        return []
    fp = footprint_from_params(params)
    grown = Footprint(fp.center_x, fp.half_length + CONTACT_MARGIN_M,
                      fp.half_width + CONTACT_MARGIN_M)
    kind, index, depth, normal = deepest_contacts(x, y, yaw, grown,
                                                  WorldArrays.from_world(world))
    touching = kind >= 0
    onsets = np.flatnonzero(touching & ~np.concatenate([[False], touching[:-1]]))
    kinds = ('box', 'disc', 'ring')
    return [CollisionEvent(float(t_s[k]), 0, f'obstacle {int(index[k])}',
                           kinds[int(kind[k])] if int(kind[k]) < len(kinds) else 'obstacle',
                           max(float(depth[k]) - CONTACT_MARGIN_M, 0.0), float(normal[k, 0]),
                           float(normal[k, 1]), float(speed[k]), float(x[k]), float(y[k]))
            for k in onsets]


def recorded_result(odom: np.ndarray, params: Any, world: Any, duration_s: float, wall_s: float,
                    mode: str) -> Any:
    """A :class:`~rc_sim_engine.sim.streams.SimResult` of one car from recorded odometry rows
    ``(t [s], x, y, yaw, vx, vy, yaw_rate)`` (K, 7), cut at ``duration_s``."""
    from rc_sim_engine.sim.series import Series
    from rc_sim_engine.sim.sim_config import SimConfig
    from rc_sim_engine.sim.streams import SimResult

    rows = np.asarray(odom, dtype=np.float64).reshape(-1, 7)
    rows = rows[rows[:, 0] <= duration_s + 1e-9]
    t = rows[:, 0]
    col = {name: rows[:, i + 1].reshape(-1, 1) for i, name in
           enumerate(('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate'))}
    speed = np.hypot(col['vx'], col['vy'])
    odom_series = Series(t_ns=np.round(t * 1e9).astype(np.int64), speed=speed, **col)
    imu = Series(t_ns=np.zeros(0, dtype=np.int64), ay=np.zeros((0, 1)))
    events = contact_events(t, col['x'][:, 0], col['y'][:, 0], col['yaw'][:, 0], speed[:, 0],
                            params, world)
    return SimResult([params], world, SimConfig(), {'odom': odom_series, 'imu': imu}, events,
                     np.zeros(0), float(t[-1]) if len(t) else 0.0, wall_s, mode)


def _last_line(log: Path) -> str:
    """The most telling line of a process log: its ``error:`` line, else its last line."""
    try:
        lines = [ln.strip() for ln in log.read_text(errors='replace').splitlines() if ln.strip()]
    except OSError:
        return ''
    errors = [ln for ln in lines if 'error' in ln.lower()]
    return (errors or lines or [''])[-1][:300]


def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, 'wb') as out:
        return subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def _sim_node_argv(parameters: dict[str, Any], folder: Path) -> list[str]:
    import yaml

    from rc_sim_engine.nodes.campaign_ros import sim_node_executable

    path = folder / 'sim_node.yaml'
    path.write_text(yaml.safe_dump({'sim_node': {'ros__parameters': parameters}}),
                    encoding='utf-8')
    return [sim_node_executable(), '--ros-args', '--params-file', str(path)]


def _drive(spec: CampaignSpec, run: Run, ctx: Any, spawn: tuple[float, float, float],
           folder: Path) -> np.ndarray:
    """Run the processes of ``run`` until its duration in sim time; the recorded odometry."""
    driver = spec.driver
    duration = float(driver.duration_s or 0.0)
    timeout = float(dict(driver.settings).get('timeout_s', 120.0))
    lease = DomainLease()
    procs: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    recorder: Any = None
    try:
        from rc_sim_engine.nodes.campaign_ros import OdomRecorder

        env = run_env(os.environ, lease.domain_id, folder, run)
        recorder = OdomRecorder(lease.domain_id, folder)
        argv = _sim_node_argv(sim_parameters(spec, run, spawn, folder), folder)
        procs.append(('sim_node', _start(argv, env, folder / 'sim_node.log'), folder /
                      'sim_node.log'))

        def check_alive() -> None:
            for name, proc, log in procs:
                if proc.poll() is not None:
                    raise RcSimError(f'{name} ended (exit status {proc.returncode}) at sim time '
                                     f'{max(recorder.sim_time, 0.0) if recorder else 0.0:.2f} '
                                     f's of {duration:g} s: {_last_line(log)}')

        start = time.monotonic()
        while not recorder.connected():
            recorder.spin(0.05)
            check_alive()
            if time.monotonic() - start > START_TIMEOUT_S:
                raise RcSimError(f'sim_node did not come up within {START_TIMEOUT_S:g} s')
        user_log = folder / 'user.log'
        procs.append((' '.join(user_command(spec)[:4]),
                      _start(user_command(spec), env, user_log), user_log))
        start = time.monotonic()
        # one period past the duration: the stack has answered the last period's messages
        end = duration + 1.0 / float(driver.control_rate_hz)
        while recorder.sim_time < end - 1e-9:
            recorder.spin(0.05)
            check_alive()
            if time.monotonic() - start > timeout:
                reached = max(recorder.sim_time, 0.0)
                raise RcSimError(f'timeout_s {timeout:g}: sim time {reached:.2f} s of '
                                 f'{duration:g} s (lockstep waits for one /cmd_vel per control '
                                 'period: does the stack subscribe an output of sim_node, e.g. '
                                 '/odom or /scan, and answer each period?)')
        return np.asarray(recorder.rows, dtype=np.float64).reshape(-1, 7)
    finally:
        for _, proc, _ in reversed(procs):
            stop_process(proc)
        if recorder is not None:
            recorder.close()
        lease.release()
        _clean_shm()


def execute_ros_run(spec: CampaignSpec, run: Run, ctx: Any,
                    spawn: tuple[float, float, float], folder: Path) -> Any:
    """Run ``run`` with the user's ROS 2 stack; the :class:`SimResult` of its recorded odometry
    (for :func:`rc_sim_engine.campaign.execute._measure`)."""
    require_ros()
    t0 = time.perf_counter()
    odom = _drive(spec, run, ctx, spawn, folder)
    return recorded_result(odom, ctx.params, ctx.world, float(spec.driver.duration_s or 0.0),
                           time.perf_counter() - t0, spec.driver.mode)
