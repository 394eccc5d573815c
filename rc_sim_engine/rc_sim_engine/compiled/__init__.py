"""Numba infrastructure shared by every compiled kernel: the on-disk cache kept in step with
the kernel sources, and atomic int64 operations.

Bottom room: imports no other room.
"""

from rc_sim_description.lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    'atomics': ('atomic_add', 'atomic_load'),
    'cache': ('KERNEL_SOURCES', 'compiled_entry', 'invalidate_stale_cache',
        'start_numba_without_blas'),
})
