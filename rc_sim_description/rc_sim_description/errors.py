"""User-facing error types shared by every rc-sim package.

Every error a user can cause (bad file, bad argument, bad bag) is raised as an :class:`RcSimError`
subclass whose message is one line naming the culprit. CLIs print it as ``error: <message>`` and
exit non-zero; nothing else prints a traceback to a user.
"""

from __future__ import annotations

__all__ = ['ConfigError', 'DegenerateError', 'OutputError', 'RcSimError', 'VehicleParamsError']


class RcSimError(Exception):
    """Base class for errors caused by user input; the message is one line naming the culprit.

    Names taken from user files (an SDF model, a URDF joint, a YAML key) may hold line breaks;
    ``str()`` shows each break as ``\\n`` so the message stays one line whatever it quotes.
    :attr:`exit_status` is the status the CLIs exit with (2: bad input).
    """

    exit_status = 2

    def __str__(self) -> str:
        text = super().__str__()
        lines = text.splitlines()
        return '\\n'.join(lines) if len(lines) > 1 else text.rstrip('\r\n')


class VehicleParamsError(RcSimError):
    """vehicle.yaml (or an override file) is missing, malformed or physically impossible."""


class ConfigError(RcSimError):
    """A configuration file or argument other than vehicle.yaml is invalid."""


class OutputError(RcSimError):
    """An output path cannot be written (exists, not writable, parent missing)."""


class DegenerateError(RcSimError):
    """A computed result is not usable (e.g. a fit whose parameter or cost became NaN or
    infinite): nothing is written and the CLIs exit with status 3 (docs/limits.md)."""

    exit_status = 3
