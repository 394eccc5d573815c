"""The atomic intrinsics: old values returned, every claim distinct across threads, int64 only."""

from __future__ import annotations

from numba import njit, prange
from numba.core.errors import TypingError
import numpy as np
import pytest

from rc_sim_engine.compiled.atomics import atomic_add, atomic_load


@njit
def _add_twice(a: np.ndarray) -> tuple[int, int, int]:
    first = atomic_add(a, 1, 5)
    second = atomic_add(a, 1, -2)
    return first, second, atomic_load(a, 1)


@njit(parallel=True)
def _claim_all(counter: np.ndarray, owner: np.ndarray, workers: int) -> None:
    for _ in prange(workers):
        while True:
            k = atomic_add(counter, 0, 1)
            if k >= owner.shape[0]:
                break
            owner[k] += 1  # claimed by this worker alone: counted once


def test_add_returns_the_old_value_and_load_reads_the_new() -> None:
    a = np.array([7, 10, 3], dtype=np.int64)
    assert _add_twice(a) == (10, 15, 13)
    assert a.tolist() == [7, 13, 3]


def test_every_index_is_claimed_once_by_concurrent_workers() -> None:
    owner = np.zeros(100_000, dtype=np.int64)
    counter = np.zeros(1, dtype=np.int64)
    _claim_all(counter, owner, 4)
    assert np.all(owner == 1)
    assert counter[0] == owner.shape[0] + 4  # each worker's last claim overshoots once


def test_float_arrays_are_refused_at_compile_time() -> None:
    with pytest.raises(TypingError):
        _add_twice(np.zeros(3))
