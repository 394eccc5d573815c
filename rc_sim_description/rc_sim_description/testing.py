"""Test helpers shared by the packages' test suites."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ['realdata_dir']


def realdata_dir() -> Path | None:
    """The real-recording corpus: ``$RC_SIM_REALDATA``, else ``/work/shared/realdata``; None when
    absent (callers skip)."""
    path = Path(os.environ.get('RC_SIM_REALDATA', '/work/shared/realdata'))
    return path if path.is_dir() else None
