"""Compile the engine's numba kernels a command needs, once, on every core
(``python -m rc_sim_engine.sim.warmup [--command run|track|manoeuvre|fit] [--all]``).

numba compiles each ``@njit(cache=True)`` kernel on its first call and caches the machine code on
disk (``__pycache__``), so only the first run on a machine pays the compile (tens of seconds).
The kernels fall into sets (:data:`KERNEL_SETS`): the chassis integrator (the largest kernel), the
rest of the vehicle model (the loop's physics), the IMU accelerations (the same model, compiled
separately), lidar ray casting,
the lidar error model, collision checks, the simulation loop that calls the first four, the
calibrator's batch rollout. A command names the sets it needs (:data:`COMMANDS`: ``rcsim run``
needs neither the error model without ``--lidar-errors`` nor the rollout);
:func:`ensure_compiled` compiles the missing ones with one line saying what and roughly how long,
the independent sets in parallel (one process per core, at most 4; ``RC_SIM_COMPILE_WORKERS``
sets the number): this process takes one share, ``python -m rc_sim_engine.sim.warmup --worker
SETS`` processes the others, all into numba's cache, then the sets that call them (the loop) load
theirs from the cache. A set is compiled by calling its kernels
on tiny inputs of exactly the types a run passes (the arguments the loop hands to the compiled
stretch, captured from a small :class:`~rc_sim_engine.sim.simulator.Simulator`), so that the run
itself loads every kernel from the cache.

Which sets are compiled is kept in a stamp file beside numba's cache (``$NUMBA_CACHE_DIR`` or the
package's ``__pycache__``): the SHA-256 of the kernel sources, the numba version and the Python
version, then one set name per line. It is stale
whenever a kernel source changes (numba's own cache is then stale too, see
:mod:`rc_sim_engine.compiled.cache`). Concurrent commands wait for each other (a file lock) instead
of compiling the same kernels twice.

The racing step (:class:`rc_sim_engine.racing.race_core.RaceCore`, the Gymnasium envs) is not
compiled here: its first load says so instead (:func:`racing_compile_notice`, a stamp per variant).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
import contextlib
from dataclasses import dataclass
import hashlib
from importlib.metadata import PackageNotFoundError, version
import importlib.util
import os
from pathlib import Path
import subprocess
import sys
import time

__all__ = ['COMMANDS', 'KERNEL_SETS', 'MESSAGE', 'RACE_MESSAGE', 'KernelSet', 'compile_kernels',
           'compile_message', 'compiled_sets', 'ensure_compiled', 'kernels_compiled',
           'last_compile_s', 'main', 'plan_waves', 'racing_compile_notice', 'run_jobs',
           'sets_for']

#: Start of the line printed before a compile (the rest says what and how long).
MESSAGE = "compiling the engine's kernels"
#: Modules holding numba kernels the engine calls (module names; absent ones are skipped).
KERNEL_MODULES = (*(f'rc_sim_engine.{name}' for name in (
    'compiled.cache', 'vehicle.state', 'vehicle.packed', 'vehicle.tyres', 'vehicle.actuators',
    'vehicle.models', 'vehicle.servo_models', 'vehicle.drive_models',
    'vehicle.four_wheel_steering', 'vehicle.integrators', 'vehicle._kernels', 'world.raycast',
    'world.collision', 'vehicle.car', 'vehicle.rollout', 'sim.simulator', 'sim.loop_kernel',
    'sim.loop_cars', 'world.multicar', 'sim.warmup', 'sim.warmup_jobs')),
    'rc_sim_sensors.lidar_kernel')
_STAMP = 'rc_sim_engine_kernels.compiled'
RACE_MESSAGE = 'compiling the racing kernels (once, about a minute)...'
#: Modules of the racing step (:mod:`rc_sim_engine.racing.race_kernels` compiles the engine's
#: step in).
RACE_MODULES = (*KERNEL_MODULES, 'rc_sim_engine.world.map_grid', 'rc_sim_engine.world.map_lidar',
                'rc_sim_engine.compiled.atomics', 'rc_sim_engine.racing.race_kernels')


@dataclass(frozen=True)
class KernelSet:
    """Kernels compiled together: ``label`` for the message, ``cost_s`` the compile seconds on
    an idle 2-core machine (for the estimate; measured), ``after`` the sets whose kernels these
    call (compiled first, then loaded from the cache)."""

    label: str
    cost_s: float
    after: tuple[str, ...] = ()


#: Every kernel set, by name (its job: :data:`rc_sim_engine.sim.warmup_jobs.JOBS`).
KERNEL_SETS: dict[str, KernelSet] = {
    'chassis': KernelSet('chassis integrator', 18.0),
    'imu': KernelSet('IMU', 12.0),
    'vehicle': KernelSet('vehicle model', 8.0, ('chassis',)),
    'lidar': KernelSet('lidar rays', 7.0),
    'collisions': KernelSet('collisions', 12.0),
    'loop': KernelSet('simulation loop', 4.0, ('vehicle', 'imu', 'lidar', 'collisions')),
    'lidar_errors': KernelSet('lidar error model', 3.0),
    'rollout': KernelSet("calibrator's rollout", 6.0, ('vehicle',)),
}

_RUN = ('chassis', 'imu', 'vehicle', 'lidar', 'collisions', 'loop')
#: The sets each command needs (``--lidar-errors`` adds ``lidar_errors``).
COMMANDS: dict[str, tuple[str, ...]] = {
    'run': _RUN,
    'track': _RUN,
    'manoeuvre': _RUN,
    'fit': ('chassis', 'vehicle', 'rollout'),
    'all': tuple(KERNEL_SETS),
}


_LAST_COMPILE = [0.0]  # seconds the last ensure_compiled of this process spent


def last_compile_s() -> float:
    """Seconds the last :func:`ensure_compiled` of this process spent compiling (0: none)."""
    return _LAST_COMPILE[0]


def sets_for(command: str = 'run', *, lidar_errors: bool = False) -> tuple[str, ...]:
    """The kernel sets ``command`` needs (a name of :data:`COMMANDS`)."""
    sets = COMMANDS[command]
    return (*sets, 'lidar_errors') if lidar_errors and 'lidar_errors' not in sets else sets


# --------------------------------------------------------------------------- stamps
def _stamp_path() -> Path:
    """Beside numba's cache: ``$NUMBA_CACHE_DIR`` when set, else the package's __pycache__."""
    where = os.environ.get('NUMBA_CACHE_DIR')
    base = Path(where) if where else Path(__file__).resolve().parent / '__pycache__'
    return base / _STAMP


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


def compiled_sets() -> set[str]:
    """Names of the sets compiled for the current sources (cheap: no numba import)."""
    try:
        lines = _stamp_path().read_text(encoding='utf-8').split()
    except OSError:
        return set()
    return set(lines[1:]) if lines and lines[0] == _digest() else set()


def kernels_compiled(sets: Sequence[str] = _RUN) -> bool:
    """True when every set of ``sets`` was compiled for the current sources."""
    return set(sets) <= compiled_sets()


def _write_stamp(sets: Sequence[str]) -> None:
    path = _stamp_path()
    names = sorted(compiled_sets() | set(sets))
    try:
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_name(f'{path.name}.{os.getpid()}.tmp')
        tmp.write_text('\n'.join([_digest(), *names]) + '\n', encoding='utf-8')
        os.replace(tmp, path)
    except OSError:  # a read-only install: numba then caches elsewhere or not at all
        pass


@contextlib.contextmanager
def _lock(notify: Callable[[str], None] | None = None) -> Iterator[None]:
    """Serialise compiles of several processes (POSIX ``flock``; nothing elsewhere); ``notify``
    hears it when another process holds the lock."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path = _stamp_path().with_name('rc_sim_engine_kernels.lock')
    try:
        path.parent.mkdir(exist_ok=True)
        handle = path.open('a')
    except OSError:
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if notify is not None:
                notify(f'waiting for another process that is {MESSAGE[0].lower()}'
                       f'{MESSAGE[1:]}...')
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- planning
def _cores() -> int:
    """Processes a compile may use: ``$RC_SIM_COMPILE_WORKERS``, else the usable cores."""
    with contextlib.suppress(ValueError):
        return max(1, int(os.environ.get('RC_SIM_COMPILE_WORKERS', '')))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _closure(sets: Sequence[str]) -> list[str]:
    """``sets`` with the sets they come after, in :data:`KERNEL_SETS` order."""
    want: set[str] = set()
    todo = list(sets)
    while todo:
        name = todo.pop()
        if name not in want:
            want.add(name)
            todo.extend(KERNEL_SETS[name].after)
    return [name for name in KERNEL_SETS if name in want]


def plan_waves(sets: Sequence[str], workers: int) -> list[list[list[str]]]:
    """Waves of bins, each bin the sets one process compiles in turn. A set joins a wave when
    the sets it comes after are done in earlier waves, or all sit in one chain of this wave (it
    then follows them in their bin: ``vehicle`` after ``chassis``); chains are split into at most
    ``workers`` bins of about equal cost (largest first), the first bin the most expensive."""
    left = [s for s in KERNEL_SETS if s in sets]
    waves = []
    while left:
        chains: list[list[str]] = []
        chain_of: dict[str, int] = {}
        grown = True
        while grown:
            grown = False
            for name in left:
                if name in chain_of:
                    continue
                deps = [a for a in KERNEL_SETS[name].after if a in left]
                if any(d not in chain_of for d in deps):
                    continue
                owners = {chain_of[d] for d in deps}
                if len(owners) > 1:
                    continue  # it joins chains: the next wave
                if owners:
                    k = owners.pop()
                else:
                    k = len(chains)
                    chains.append([])
                chains[k].append(name)
                chain_of[name] = k
                grown = True

        def cost(names: list[str]) -> float:
            return sum(KERNEL_SETS[s].cost_s for s in names)

        chains.sort(key=lambda c: -cost(c))
        bins: list[list[str]] = [[] for _ in range(max(1, min(workers, len(chains))))]
        for chain in chains:
            min(bins, key=cost).extend(chain)
        bins.sort(key=lambda b: -cost(b))
        waves.append(bins)
        left = [s for s in left if s not in chain_of]
    return waves


def _estimate_s(waves: list[list[list[str]]]) -> float:
    """Wall seconds of ``waves`` on this machine now (idle costs scaled by the load)."""
    idle = sum(max(sum(KERNEL_SETS[s].cost_s for s in b) for b in wave) for wave in waves)
    cores = _cores()
    workers = max(len(wave) for wave in waves)
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return idle * max(1.0, (load + workers) / cores)


def compile_message(command: str, sets: Sequence[str]) -> str:
    """The one line said before compiling ``sets`` (exactly these) for ``command``: what, on
    how many cores, roughly how long."""
    todo = [s for s in KERNEL_SETS if s in sets]
    workers = min(_cores(), 4)
    waves = plan_waves(todo, workers)
    seconds = _estimate_s(waves)
    rough = f'{seconds:.0f}' if seconds < 20 else f'{5 * round(seconds / 5):.0f}'
    used = max(len(w) for w in waves) if waves else 1
    who = ('every command' if command == 'all' else
           f'rcsim {command}' if command in COMMANDS else command)
    return (f"{MESSAGE} for {who} "
            f"({', '.join(KERNEL_SETS[s].label for s in todo)}) on {used} "
            f"core{'s' if used > 1 else ''}, once: about {rough} s...")


def _start_worker(sets: Sequence[str]) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen([sys.executable, '-m', 'rc_sim_engine.sim.warmup', '--worker',
                                 ','.join(sets)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except OSError:
        return None


def run_jobs(sets: Sequence[str]) -> None:
    """Compile the kernel sets ``sets`` in this process (:mod:`.warmup_jobs`)."""
    from rc_sim_engine.sim.warmup_jobs import JOBS

    for name in sets:
        JOBS[name]()


def compile_kernels(sets: Sequence[str] = _RUN, *, workers: int | None = None,
                    closed: bool = True) -> float:
    """Compile (or load) the kernels of ``sets`` and (``closed``) the sets they come after, on
    up to ``workers`` processes (default: the cores, at most 4); returns the seconds it took.

    A worker that fails leaves its sets to this process (compiled here, one after the other).
    """
    # stale cache files go before any worker starts
    import rc_sim_engine.compiled.cache  # noqa: F401

    t0 = time.perf_counter()
    n = workers if workers is not None else min(_cores(), 4)
    todo = _closure(sets) if closed else [s for s in KERNEL_SETS if s in sets]
    for wave in plan_waves(todo, n):
        started = [(b, _start_worker(b)) for b in wave[1:]]
        run_jobs(wave[0])
        for names, proc in started:
            failed = proc is None or proc.wait() != 0
            if proc is not None and proc.stderr is not None:
                proc.stderr.close()
            if failed:
                run_jobs(names)
    return time.perf_counter() - t0


def ensure_compiled(notify: Callable[[str], None] | None = None, command: str = 'run', *,
                    lidar_errors: bool = False) -> float:
    """Compile the kernels ``command`` needs unless the stamp says they are; returns the
    seconds spent (0 if none).

    ``notify`` receives the one-line announcement (:func:`compile_message`) before a compile
    starts (e.g. print to stderr); another process compiling meanwhile is waited for.
    """
    sets = sets_for(command, lidar_errors=lidar_errors)
    _LAST_COMPILE[0] = 0.0
    if kernels_compiled(sets):
        return 0.0
    t0 = time.perf_counter()
    with _lock(notify):  # another process compiling them is waited for
        missing = [s for s in _closure(sets) if s not in compiled_sets()]
        if missing:
            if notify is not None:
                notify(compile_message(command, missing))
            compile_kernels(missing, closed=False)  # the others are in numba's cache
            _write_stamp(missing)
    _LAST_COMPILE[0] = time.perf_counter() - t0
    return _LAST_COMPILE[0]


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


def _import_run_modules() -> None:
    """Import what a run imports (its plots and pages too), so that their bytecode is
    written once."""
    import importlib

    for name in ('rc_sim_engine.cli', 'rc_sim_engine.cli.run', 'rc_sim_engine.sim.simulator',
                 'rc_sim_engine.sim.run_setup', 'rc_sim_engine.output.bags',
                 'rc_sim_description.bags.writer', 'rc_sim_engine.output.plots',
                 'rc_sim_engine.output.plot_worker', 'rc_sim_engine.output.animation',
                 'rc_sim_engine.output.index_page', 'matplotlib.pyplot', 'mpl_toolkits.axes_grid1',
                 'PIL.Image', 'rc_sim_sensors.cli', 'rc_sim_sensors.bag_tools'):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rc_sim_engine.sim.warmup``: compile what a command needs if not done yet, saying
    what and how long (``--all``: every set, e.g. before a test suite)."""
    import argparse

    parser = argparse.ArgumentParser(prog='python -m rc_sim_engine.sim.warmup',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('--command', default='run', choices=[c for c in COMMANDS if c != 'all'],
                        help='compile what this rcsim command needs (default: run)')
    parser.add_argument('--all', action='store_true', help='every kernel set')
    parser.add_argument('--bytecode', action='store_true',
                        help='also write the bytecode of the modules a run imports (as pip '
                        'does when it installs; uv does not), even with PYTHONDONTWRITEBYTECODE '
                        'set: for scripts/setup_env.sh after an install')
    parser.add_argument('--worker', metavar='SETS', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bytecode:  # this process and its workers
        sys.dont_write_bytecode = False
        os.environ.pop('PYTHONDONTWRITEBYTECODE', None)
    if args.worker:  # one share of a parallel compile (started by compile_kernels)
        run_jobs([s for s in args.worker.split(',') if s])
        return 0

    def say(message: str) -> None:
        if not os.environ.get('RC_SIM_QUIET'):
            print(f'>> {message}', file=sys.stderr, flush=True)

    said: list[str] = []

    def announce(message: str) -> None:
        said.append(message)
        say(message)

    elapsed = ensure_compiled(announce, 'all' if args.all else args.command)
    if args.bytecode:
        _import_run_modules()
    if any(m.startswith(MESSAGE) for m in said):
        say(f'kernels compiled in {elapsed:.0f} s (cached for later runs)')
    elif elapsed > 0.5:
        say(f'kernels ready after {elapsed:.0f} s (another process compiled them)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
