"""Reuse reference solutions between test runs (they never depend on the engine's code).

The key hashes the reference sources, the scipy/numpy/vehiclemodels versions and a description
of the inputs (parameters, manoeuvres, time grid), so any change recomputes. Files live in
pytest's cache directory (``.pytest_cache/d/rc_sim_reference``); without the cache plugin
(``-p no:cacheprovider``) everything is recomputed. This keeps repeated runs (and mutation
testing, which reruns the suite once per mutant) from re-integrating identical references.
"""

from __future__ import annotations

from collections.abc import Callable
import hashlib
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

_SOURCES = sorted(Path(__file__).resolve().parent.glob('*.py'))


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return '-'


def cached(request: pytest.FixtureRequest, description: str,
           compute: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """``compute()`` (a dict of arrays), or its stored result for the same key."""
    cache = getattr(request.config, 'cache', None)
    if cache is None:
        return compute()
    digest = hashlib.sha256(description.encode())
    for source in _SOURCES:
        digest.update(source.read_bytes())
    for package in ('numpy', 'scipy', 'commonroad-vehicle-models'):
        digest.update(_version(package).encode())
    path = Path(cache.mkdir('rc_sim_reference')) / f'{digest.hexdigest()[:32]}.npz'
    if path.exists():
        with np.load(path) as stored:
            return {k: stored[k] for k in stored.files}
    result = compute()
    tmp = path.with_name(path.name + '.tmp.npz')
    np.savez(tmp, **result)
    tmp.replace(path)
    return result
