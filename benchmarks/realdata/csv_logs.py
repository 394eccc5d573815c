"""Shared by the converters of the cars' own CSV logs into bags (benchmark tooling)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
import sys


class CsvError(ValueError):
    """A CSV log that the converter cannot read (one line, names the file and the problem)."""


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
