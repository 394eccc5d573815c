"""Compile the engine's numba kernels ahead of a run (``python -m rc_sim_engine.warmup``).

numba compiles each ``@njit(cache=True)`` kernel on its first call and caches the machine code on
disk (``__pycache__``), so only the first run on a machine pays the compile (tens of seconds).
:func:`compile_kernels` makes that first call on purpose: a short simulation of every kind a
command starts (single track and kinematic models, lidar with the error model, collisions, the
calibrator's batch rollout). ``scripts/setup_env.sh`` runs it once, with a message, and the
commands call :func:`ensure_compiled` so that a compile that still happens is announced and kept
out of the reported real-time factor.

Whether the kernels are compiled is kept in a stamp file beside numba's cache: the SHA-256 of the
kernel sources, the numba version and the Python version. It changes whenever a kernel source does
(numba's own cache is then stale too, see :mod:`rc_sim_engine._jit_cache`).

The racing step (:class:`rc_sim_engine.race_core.RaceCore`, the Gymnasium envs) is not compiled
here: it costs another minute that most users never need. Its first load says so instead
(:func:`racing_compile_notice`, a stamp per kernel variant).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import contextlib
import hashlib
from importlib.metadata import PackageNotFoundError, version
import importlib.util
import os
from pathlib import Path
import sys
import time

__all__ = ['MESSAGE', 'RACE_MESSAGE', 'compile_kernels', 'ensure_compiled', 'kernels_compiled',
           'main', 'racing_compile_notice']

MESSAGE = "compiling the engine's kernels (once, about a minute)..."
#: Modules holding numba kernels the engine calls (module names; absent ones are skipped).
KERNEL_MODULES = ('rc_sim_engine._jit_cache', 'rc_sim_engine.state', 'rc_sim_engine.packed',
                  'rc_sim_engine.tyres', 'rc_sim_engine.actuators', 'rc_sim_engine.models',
                  'rc_sim_engine.four_wheel_steering', 'rc_sim_engine.integrators',
                  'rc_sim_engine._kernels', 'rc_sim_engine.raycast', 'rc_sim_engine.collision',
                  'rc_sim_engine.car', 'rc_sim_engine.rollout', 'rc_sim_engine.simulator',
                  'rc_sim_engine.loop_kernel', 'rc_sim_engine.loop_cars', 'rc_sim_engine.multicar',
                  'rc_sim_engine.warmup', 'rc_sim_sensors.lidar_kernel')
_STAMP = 'rc_sim_engine_kernels.compiled'
RACE_MESSAGE = 'compiling the racing kernels (once, about a minute)...'
#: Modules of the racing step (:mod:`rc_sim_engine.race_kernels` compiles the engine's step in).
RACE_MODULES = (*KERNEL_MODULES, 'rc_sim_engine.map_grid', 'rc_sim_engine.map_lidar',
                'rc_sim_engine.atomics', 'rc_sim_engine.race_kernels')


def _stamp_path() -> Path:
    return Path(__file__).resolve().parent / '__pycache__' / _STAMP


def _race_stamp_path(variant: str) -> Path:
    return _stamp_path().with_name(f'rc_sim_engine_race_{variant}.compiled')


def _digest(modules: tuple[str, ...] = KERNEL_MODULES) -> str:
    """SHA-256 of the kernel sources, the numba version and the Python version."""
    h = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, 'origin', None)
        h.update(name.encode())
        if origin:
            with contextlib.suppress(OSError):
                h.update(Path(origin).read_bytes())
    with contextlib.suppress(PackageNotFoundError):
        h.update(version('numba').encode())
    h.update(sys.version.encode())
    return h.hexdigest()


def kernels_compiled() -> bool:
    """True when :func:`compile_kernels` ran for the current sources (cheap: no numba import)."""
    try:
        return _stamp_path().read_text(encoding='utf-8') == _digest()
    except OSError:
        return False


def compile_kernels() -> float:
    """Run tiny simulations that compile (or load) every kernel; returns the seconds it took."""
    import numpy as np

    from rc_sim_control.commands import manoeuvre
    from rc_sim_description.params import load_vehicle_params
    from rc_sim_description.paths import world_path
    from rc_sim_description.worlds import spawn_pose
    from rc_sim_engine.collision import WorldArrays, deepest_contacts, footprint_from_params
    from rc_sim_engine.rollout import rollout
    from rc_sim_engine.simulator import SimConfig, Simulator
    from rc_sim_engine.start_pose import choose_start
    from rc_sim_engine.world import load_world
    from rc_sim_sensors.lidar_config import LidarErrorConfig

    t0 = time.perf_counter()
    params = load_vehicle_params()
    path = world_path('basic_track')
    world = load_world(path)
    spawn = spawn_pose(path)
    errors = LidarErrorConfig.from_preset('harsh')
    choose_start(world, params, manoeuvre('line', params, duration=0.5, ramp_time=0.1),
                 (spawn.x, spawn.y, spawn.yaw))
    for model in ('single_track', 'kinematic'):
        sim = Simulator(params, world, SimConfig(model=model, lidar_errors=errors),
                        start=(spawn.x, spawn.y, spawn.yaw))
        sim.command_twist(0.5, 0.2)
        sim.step_to(0.06)
        sim.result()
    poses = np.zeros(4)
    for view in (poses, poses[::2]):  # contiguous and strided paths (the parking search)
        deepest_contacts(view, view, view, footprint_from_params(params),
                         WorldArrays.from_world(world))
    t = np.linspace(0.0, 0.05, 6)
    rollout([params], t, np.zeros((1, t.size)), np.full((1, t.size), 5.0), None, t_out=t)
    return time.perf_counter() - t0


def _write_stamp() -> None:
    path = _stamp_path()
    try:
        path.parent.mkdir(exist_ok=True)
        path.write_text(_digest(), encoding='utf-8')
    except OSError:  # a read-only install: numba then caches elsewhere or not at all
        pass


def ensure_compiled(notify: Callable[[str], None] | None = None) -> float:
    """Compile the kernels unless the stamp says they are; returns the seconds spent (0 if none).

    ``notify`` receives :data:`MESSAGE` before a compile starts (e.g. print to stderr).
    """
    if kernels_compiled():
        return 0.0
    if notify is not None:
        notify(MESSAGE)
    elapsed = compile_kernels()
    _write_stamp()
    return elapsed


@contextlib.contextmanager
def racing_compile_notice(variant: str) -> Iterator[None]:
    """Around the first load of a racing step kernel (``variant``: serial or parallel): say on
    stderr that it compiles when its stamp (the sources' digest) is missing or stale, then
    write the stamp. Quiet with ``RC_SIM_QUIET`` set."""
    path = _race_stamp_path(variant)
    digest = _digest(RACE_MODULES)
    try:
        done = path.read_text(encoding='utf-8') == digest
    except OSError:
        done = False
    if not done and not os.environ.get('RC_SIM_QUIET'):
        print(f'{RACE_MESSAGE} ({variant})', file=sys.stderr, flush=True)
    yield
    if not done:
        with contextlib.suppress(OSError):
            path.parent.mkdir(exist_ok=True)
            path.write_text(digest, encoding='utf-8')


def main() -> int:
    """``python -m rc_sim_engine.warmup``: compile if needed, say so and how long it took."""
    def say(message: str) -> None:
        print(f'>> {message}', file=sys.stderr, flush=True)

    elapsed = ensure_compiled(say)
    if elapsed and not os.environ.get('RC_SIM_QUIET'):
        print(f'>> kernels compiled in {elapsed:.0f} s (cached for later runs)', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
