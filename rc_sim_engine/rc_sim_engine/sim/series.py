"""A recorded stream of samples (:class:`Series`): plain numpy, importable without the kernels."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ['Series', 'concat_series']


class Series(dict[str, np.ndarray]):
    """Recorded samples of one stream: ``t_ns`` (K,) and named arrays (K, N, ...)."""

    @property
    def t(self) -> NDArray[np.float64]:
        """Sample times [s]."""
        return np.asarray(self['t_ns'], dtype=np.float64) * 1e-9


def concat_series(blocks: list[Series], empty: Series | None = None) -> Series:
    """One Series of consecutive blocks (``empty`` when none has samples)."""
    blocks = [b for b in blocks if len(b.get('t_ns', ()))]
    if not blocks:
        return empty if empty is not None else Series(t_ns=np.zeros(0, dtype=np.int64))
    if len(blocks) == 1:
        return Series(blocks[0])
    return Series({key: np.concatenate([b[key] for b in blocks]) for key in blocks[0]})
