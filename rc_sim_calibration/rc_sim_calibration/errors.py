"""Error type of the calibration package (one-line user errors, see docs/conventions.md)."""

from __future__ import annotations

from rc_sim_description.errors import RcSimError

__all__ = ['CalibrationError']


class CalibrationError(RcSimError):
    """A bag, fit configuration or fit request cannot be used; the message names the culprit."""
