"""Field schema of the vehicle parameters: unit, meaning, valid range and extra check per key.

Every field of the :mod:`rc_sim_description.params` dataclasses is declared with :func:`param`,
whose metadata drives the loader (range and type checks, one-line errors), the generated
reference ``docs/vehicle_parameters.md`` and the range table of ``docs/limits.md``.

A :class:`Range` is the set of values for which the physics of every model of the suite stays
meaningful, chosen generous enough for any real 1:5 to 1:43 RC car (docs/limits.md gives the
reasons); values outside it are refused at load with the range in the message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import math
from typing import Any

__all__ = ['Check', 'Range', 'bound_text', 'one_of', 'param', 'unit_vector3']

Check = Callable[[Any], str | None]

_NAMED_BOUNDS = {math.pi: 'pi', math.pi / 2: 'pi/2', 2 * math.pi: '2*pi'}


def bound_text(x: float) -> str:
    """``pi``, ``pi/2``, ``2*pi`` (and their negatives) by name, other numbers with ``:g``."""
    for value, name in _NAMED_BOUNDS.items():
        if x == value:
            return name
        if x == -value:
            return f'-{name}'
    return f'{x:g}'


@dataclass(frozen=True)
class Range:
    """Valid interval of a numeric key: ``[lo, hi]``, either end open when flagged."""

    lo: float
    hi: float
    lo_open: bool = False
    hi_open: bool = False

    def contains(self, v: float) -> bool:
        """True when ``v`` lies in the interval (NaN never does)."""
        above = self.lo < v if self.lo_open else self.lo <= v
        below = v < self.hi if self.hi_open else v <= self.hi
        return above and below

    def text(self, unit: str = '') -> str:
        """``(0, pi/2) rad``, ``[0.01, 100] kg``; unit ``-`` (dimensionless) is left out."""
        left, right = '(' if self.lo_open else '[', ')' if self.hi_open else ']'
        suffix = f' {unit}' if unit and unit != '-' else ''
        return f'{left}{bound_text(self.lo)}, {bound_text(self.hi)}{right}{suffix}'

    def problem(self, v: float, unit: str = '') -> str | None:
        """``must be in [lo, hi] unit, got v`` or None."""
        if self.contains(v):
            return None
        shown = repr(v)
        if len(shown) > 24:  # a huge integer: its size, not its 400 digits
            shown = f'an integer of {len(str(abs(int(v))))} digits'
        return f'must be in {self.text(unit)}, got {shown}'


def param(unit: str, doc: str, valid: Range | None = None, check: Check | None = None, *,
          nullable: bool = False) -> Any:
    """Dataclass field with schema metadata: unit, description, valid range, extra check.

    ``valid`` is required for every numeric key (``test_param_ranges.py`` enforces it);
    ``check`` adds a non-interval rule (a choice, a unit vector).
    """
    return field(metadata={'unit': unit, 'doc': doc, 'range': valid, 'check': check,
                           'nullable': nullable})


def one_of(choices: tuple[str, ...]) -> Check:
    """Check that a string is one of ``choices``."""
    def check(v: str) -> str | None:
        return None if v in choices else f'must be one of {", ".join(choices)}, got {v!r}'
    return check


def unit_vector3(v: tuple[float, ...]) -> str | None:
    """Check for a list of three numbers of norm 1."""
    if len(v) != 3:
        return f'must be a list of 3 numbers, got {len(v)}'
    norm = math.sqrt(sum(c * c for c in v))
    return None if abs(norm - 1.0) < 1e-6 else f'must be a unit vector, got norm {norm:.6g}'
