"""Keep numba's on-disk cache of the engine kernels consistent across source edits.

numba keys a cached function on the modification stamp of its OWN file only, so editing
``vehicle/models.py`` would leave a stale compiled ``_kernels.advance`` (which inlines it) on
disk, and editing ``world/raycast.py`` a stale ``loop_kernel.run_stretch`` (which compiles its
ray caster in). On import, this hashes every kernel source of the package and, when the hash
changed since the last run, deletes their numba cache files (``<room>/__pycache__/<module>.*.nbi
|nbc``) so they are rebuilt.
Read-only installs (sources never change) are left alone.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
import sys
from typing import Any

__all__ = ['KERNEL_SOURCES', 'compiled_entry', 'invalidate_stale_cache',
           'start_numba_without_blas']

#: the kernel sources, relative to the package folder (a kernel compiles in functions of these)
KERNEL_SOURCES = ('vehicle/state.py', 'vehicle/packed.py', 'vehicle/tyres.py',
                  'vehicle/actuators.py', 'vehicle/servo_models.py', 'vehicle/drive_models.py',
                  'vehicle/models.py', 'vehicle/integrators.py', 'vehicle/_kernels.py',
                  'vehicle/four_wheel_steering.py', 'compiled/cache.py', 'sim/loop_kernel.py',
                  # the racing kernels compile in functions of these modules
                  'world/collision.py', 'world/raycast.py', 'world/map_grid.py',
                  'world/map_lidar.py', 'world/multicar.py', 'racing/race_kernels.py',
                  'sim/loop_cars.py', 'compiled/atomics.py')
_STAMP = 'rc_sim_engine_kernels.sha256'


def invalidate_stale_cache(package_dir: Path | None = None) -> bool:
    """Delete the cache files when the kernel sources changed; True when it deleted them.

    The stamp (the sources' hash) sits in ``compiled/__pycache__``; the cache files of a module
    in the ``__pycache__`` beside it (``<room>/__pycache__/<module>.*.nbi|nbc``).
    """
    here = package_dir or Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for name in KERNEL_SOURCES:
        try:
            digest.update((here / name).read_bytes())
        except FileNotFoundError:
            digest.update(name.encode())  # an optional model module that is absent
        except OSError:
            return False
    stamp = here / 'compiled' / '__pycache__' / _STAMP
    try:
        if stamp.read_text() == digest.hexdigest():
            return False
    except OSError:
        pass
    try:
        rooms: dict[Path, list[str]] = {}
        for name in KERNEL_SOURCES:
            source = here / name
            rooms.setdefault(source.parent / '__pycache__', []).append(source.stem + '.')
        for cache, stems in rooms.items():
            cache.mkdir(exist_ok=True)
            for f in list(cache.glob('*.nbi')) + list(cache.glob('*.nbc')):
                if f.name.startswith(tuple(stems)):  # only this package's kernel modules
                    f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        return False
    return True


def start_numba_without_blas() -> bool:
    """Initialise numba's CPU target (done once per process before the first kernel loads)
    without importing ``scipy.linalg``; True when it did.

    numba looks for BLAS (``scipy.linalg.cython_blas``) while it initialises, for ``np.dot`` and
    ``np.linalg`` inside kernels, which no rc-sim kernel uses; importing ``scipy.linalg`` costs
    a command about a tenth of a second of start-up. For command-line runs only: a process that
    compiles its own kernels with linear algebra must not call it. ``scipy.linalg`` imports
    normally afterwards; nothing is done when it is imported already.
    """
    if 'scipy.linalg' in sys.modules:
        return False
    from numba.core.registry import cpu_target

    sys.modules['scipy.linalg'] = None  # type: ignore[assignment]  # import -> ImportError
    try:
        cpu_target.target_context.refresh()
    finally:
        if sys.modules.get('scipy.linalg', 0) is None:
            del sys.modules['scipy.linalg']
    return True


def compiled_entry(kernel: Any, args: tuple[Any, ...]) -> Any:
    """The compiled entry point of the numba ``kernel`` for exactly the types of ``args``
    (compiled, or loaded from the cache, now). Calling it skips numba's per-call type
    dispatch, about 15 ns per argument: only for calls whose arguments are these same
    persistent arrays. The dispatcher itself where numba exposes no such entry."""
    import numba

    sig = tuple(numba.typeof(a) for a in args)
    try:
        kernel.compile(sig)
        return kernel.overloads[sig].entry_point
    except (AttributeError, KeyError, TypeError):
        return kernel


invalidate_stale_cache()

