"""The one error type of the bag layer, and its warning (``skip_corrupt=True``)."""

from __future__ import annotations

import warnings

from rc_sim_description.errors import RcSimError

__all__ = ['BagError', 'BagWarning', 'one_line', 'warn']


class BagError(RcSimError):
    """A bag is missing, unreadable, corrupt, or lacks a needed topic (one line naming it)."""


class BagWarning(UserWarning):
    """Corrupt data that ``skip_corrupt=True`` turned from an error into a warning."""


def warn(message: str) -> None:
    """Emit a :class:`BagWarning` (``rcsim`` prints it as ``warning: <message>``)."""
    warnings.warn(message, BagWarning, stacklevel=3)


def one_line(exc: BaseException) -> str:
    """``Type: first line`` of a third-party exception, for a one-line error."""
    text = ' '.join(str(exc).split())
    name = type(exc).__name__
    return f'{name}: {text[:200]}' if text else name
