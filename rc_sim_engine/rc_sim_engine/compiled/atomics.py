"""Atomic int64 array operations for numba kernels (LLVM ``atomicrmw`` / ``load atomic``).

numba has no CPU atomics; these two intrinsics let the threads of one ``prange`` region claim
work and wait for each other (:func:`rc_sim_engine.racing.race_kernels.race_step_parallel`). Both
are sequentially consistent: a write made before an :func:`atomic_add` is visible to a thread that
reads the added value with :func:`atomic_load` (or another :func:`atomic_add`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
import numpy as np
from numpy.typing import NDArray

__all__ = ['atomic_add', 'atomic_load']


def _pointer(context: Any, builder: Any, aryty: Any, ary: Any, idx: Any) -> Any:
    array = context.make_array(aryty)(context, builder, ary)
    return cgutils.get_item_pointer(context, builder, aryty, array, [idx])


@intrinsic
def _atomic_add(typingctx: Any, arr: Any, idx: Any, val: Any) -> Any:
    """``arr[idx] += val`` as one atomic operation on an int64 array; returns the old value."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64):
        return None
    sig = types.int64(arr, types.intp, types.int64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ptr = _pointer(context, builder, sig.args[0], args[0], args[1])
        return builder.atomic_rmw('add', ptr, args[2], 'seq_cst')

    return sig, codegen


@intrinsic
def _atomic_load(typingctx: Any, arr: Any, idx: Any) -> Any:
    """``arr[idx]`` of an int64 array, read atomically (never hoisted out of a waiting loop)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64):
        return None
    sig = types.int64(arr, types.intp)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ptr = _pointer(context, builder, sig.args[0], args[0], args[1])
        return builder.load_atomic(ptr, 'seq_cst', 8)

    return sig, codegen


#: The intrinsics as they are called (numba passes the typing context itself).
atomic_add = cast(Callable[[NDArray[np.int64], int, int], int], _atomic_add)
atomic_load = cast(Callable[[NDArray[np.int64], int], int], _atomic_load)
