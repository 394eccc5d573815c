"""Shared by the converters of the cars' own CSV logs into bags (benchmark tooling)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
import sys

import numpy as np
from numpy.typing import NDArray


class CsvError(ValueError):
    """A CSV log that the converter cannot read (one line, names the file and the problem)."""


def read_columns(path: Path, names: Sequence[str], kind: str, min_rows: int = 2
                 ) -> dict[str, NDArray[np.float64]]:
    """The ``names`` columns of a comma-separated log with one header line, by name; rows with
    a non-finite value are dropped. One-line :class:`CsvError` for an unreadable file, missing
    columns (``kind`` names what the file should be), ragged rows or fewer than ``min_rows``."""
    try:
        with open(path, encoding='utf-8') as f:
            header = [h.strip() for h in f.readline().split(',')]
    except OSError as exc:
        raise CsvError(f'{path}: cannot read ({exc.strerror})') from None
    missing = [n for n in names if n not in header]
    if missing:
        raise CsvError(f'{path}: not a {kind} (missing columns {missing})')
    try:
        data = np.loadtxt(path, delimiter=',', skiprows=1, ndmin=2)
    except ValueError as exc:
        raise CsvError(f'{path}: malformed row ({exc})') from None
    if data.shape[1] != len(header):
        raise CsvError(f'{path}: malformed rows ({data.shape[1]} values, {len(header)} columns)')
    data = data[np.all(np.isfinite(data), axis=1)]
    if data.shape[0] < min_rows:
        raise CsvError(f'{path}: fewer than {min_rows} complete rows')
    return {n: data[:, header.index(n)] for n in names}


def converter_main(convert: Callable[[Path, Path], Path], usage: str, argv: list[str]) -> int:
    """``convert(SOURCE, OUT_BAG_DIR)`` from the command line: prints the bag, or one line on
    stderr and exit 2 for wrong arguments or a :class:`CsvError` (nothing written)."""
    if len(argv) != 2:
        print(f'usage: {usage}', file=sys.stderr)
        return 2
    try:
        print(convert(Path(argv[0]), Path(argv[1])))
    except CsvError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2
    return 0
