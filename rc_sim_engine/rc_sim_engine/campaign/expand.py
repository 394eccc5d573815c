"""Spec -> runs: the grid's cartesian product, crossed with the zipped list, with stable ids.

A run's id is the first 12 hex digits of the SHA-256 of its canonical JSON identity (driver,
fixed and varied factors, format version): the same resolved run has the same id in any spec,
order or machine, so a resumed or extended campaign recognises it. Its seed is the ``seed``
factor when the spec gives one, else derived from the id (:func:`run_seed`).
"""

from __future__ import annotations

from dataclasses import dataclass
import hashlib
import itertools
import json
from typing import Any

from rc_sim_engine.campaign.spec import CampaignSpec

__all__ = ['ID_VERSION', 'Run', 'canonical_json', 'expand', 'run_seed']

ID_VERSION = 1


def canonical_json(data: Any) -> str:
    """Key-sorted compact JSON (floats by repr: the same text on every machine)."""
    return json.dumps(data, sort_keys=True, separators=(',', ':'), allow_nan=False)


@dataclass(frozen=True)
class Run:
    """One run: its id, its index in the spec's order and its resolved factor values."""

    run_id: str
    index: int
    factors: tuple[tuple[str, Any], ...]

    @property
    def values(self) -> dict[str, Any]:
        """Factor name -> value."""
        return dict(self.factors)

    @property
    def seed(self) -> int:
        """The seed of every random generator of this run."""
        return run_seed(self.run_id, self.values.get('seed'))


def run_seed(run_id: str, seed: int | None) -> int:
    """The ``seed`` factor, or (none given) the id's first 7 hex digits as an integer."""
    return int(seed) if seed is not None else int(run_id[:7], 16)


def _identity(spec: CampaignSpec, factors: dict[str, Any]) -> str:
    return canonical_json({'v': ID_VERSION, 'driver': spec.driver.as_dict(), 'factors': factors})


def expand(spec: CampaignSpec) -> list[Run]:
    """Every run of ``spec`` in spec order; a run repeated by the factors is kept once.

    Count: product of the grid's value counts x the list's length (1 for an empty block).
    """
    grid_keys = [k for k, _ in spec.grid]
    grid_rows = list(itertools.product(*(v for _, v in spec.grid)))
    list_keys = [k for k, _ in spec.zipped]
    list_rows = list(zip(*(v for _, v in spec.zipped))) if spec.zipped else [()]
    runs: list[Run] = []
    seen: set[str] = set()
    for grow in grid_rows:
        for lrow in list_rows:
            factors = {**dict(spec.fixed), **dict(zip(grid_keys, grow)),
                       **dict(zip(list_keys, lrow))}
            ordered = tuple((k, factors[k]) for k in spec.factor_names)
            run_id = hashlib.sha256(_identity(spec, factors).encode()).hexdigest()[:12]
            if run_id in seen:
                continue
            seen.add(run_id)
            runs.append(Run(run_id, len(runs), ordered))
    return runs
