"""No NaN or infinity leaves the program: checks for every writer of numbers (docs/limits.md).

A writer calls one of these on what it is about to write; a non-finite number raises a one-line
:class:`~rc_sim_description.errors.RcSimError` naming where it is (file, key path, column, time)
instead of being written. Which error is the caller's choice: bad input
(:class:`~rc_sim_description.errors.ConfigError` or a ``BagError``, exit 2, naming the
recording, topic and time) or a result that degenerated
(:class:`~rc_sim_description.errors.DegenerateError`, exit 3, naming the parameter).

* :func:`check_finite_tree`: nested mappings, sequences, numbers and numpy arrays (YAML, JSON,
  reports); :func:`finite_json` dumps after the check (``allow_nan=False``);
  :func:`rc_sim_description.yamlio.dump_yaml` is the YAML writer.
* :func:`check_finite_columns`: the columns of a table (CSV) with an optional time column.
* :func:`non_finite_field`: the first non-finite float field of a message object (dataclass
  fields, numpy arrays), for bag writers.
"""

from __future__ import annotations

from collections.abc import Mapping
import dataclasses
import json
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_description.errors import ConfigError, RcSimError

__all__ = ['check_finite_columns', 'check_finite_tree', 'finite_json', 'first_non_finite',
           'non_finite_field']


def _join(path: str, part: str) -> str:
    if part.startswith('['):
        return path + part
    return f'{path}.{part}' if path else part


def _bad_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (float, np.floating)):
        return not math.isfinite(float(value))
    if isinstance(value, complex):
        return not (math.isfinite(value.real) and math.isfinite(value.imag))
    return False


def first_non_finite(data: Any, path: str = '') -> tuple[str, Any] | None:
    """``(key path, value)`` of the first NaN or infinite number in ``data`` (mappings,
    sequences, numbers, numpy arrays; ``a.b[2]``), or None when every number is finite."""
    if _bad_number(data):
        return path or '<value>', data
    if isinstance(data, np.ndarray):
        if data.dtype.kind in 'fc' and data.size:
            bad = ~np.isfinite(data)
            if bad.any():
                index = np.unravel_index(int(np.argmax(bad)), data.shape)
                where = ''.join(f'[{int(i)}]' for i in index)
                return _join(path, where) if path else where, data[index]
        elif data.dtype.kind == 'O':
            for i, item in enumerate(data.ravel().tolist()):
                found = first_non_finite(item, _join(path, f'[{i}]'))
                if found is not None:
                    return found
        return None
    if isinstance(data, Mapping):
        for key, value in data.items():
            found = first_non_finite(value, _join(path, str(key)))
            if found is not None:
                return found
        return None
    if isinstance(data, (list, tuple)):
        for i, item in enumerate(data):
            found = first_non_finite(item, _join(path, f'[{i}]'))
            if found is not None:
                return found
    return None


def check_finite_tree(data: Any, where: str, *, error: type[RcSimError] = ConfigError,
                      hint: str = '') -> None:
    """Raise ``error('<where>: <key path> is nan<hint>')`` for the first non-finite number."""
    found = first_non_finite(data)
    if found is not None:
        path, value = found
        raise error(f'{where}: {path} is {float(np.real(value))!r}{hint}')


def finite_json(data: Any, where: str, *, error: type[RcSimError] = ConfigError,
                hint: str = '', **kwargs: Any) -> str:
    """``json.dumps(data, allow_nan=False, **kwargs)`` after :func:`check_finite_tree` (JSON has
    no NaN: Python would write the invalid token ``NaN``)."""
    check_finite_tree(data, where, error=error, hint=hint)
    return json.dumps(data, allow_nan=False, **kwargs)


def check_finite_columns(columns: Mapping[str, npt.ArrayLike], where: str, *,
                         t: npt.ArrayLike | None = None, error: type[RcSimError] = ConfigError,
                         hint: str = '') -> None:
    """Raise ``error`` naming the column, the row, its time ``t`` [s] (when given) and how many
    values are not finite, for the first NaN or infinity of a table's columns."""
    times = None if t is None else np.asarray(t, dtype=np.float64).ravel()
    for name, values in columns.items():
        arr = np.asarray(values)
        if arr.dtype.kind not in 'fc' or not arr.size:
            continue
        bad = ~np.isfinite(arr)
        if bad.any():
            rows = bad.reshape(len(arr), -1).any(axis=1) if arr.ndim else bad.reshape(1)
            row = int(np.argmax(rows))
            at = (f' at t = {times[row]:.3f} s' if times is not None and row < len(times)
                  and math.isfinite(times[row]) else '')
            value = arr.reshape(len(rows), -1)[row][bad.reshape(len(rows), -1)[row]][0]
            raise error(f'{where}: {name} is {float(np.real(value))!r}{at} (row {row}; '
                        f'{int(rows.sum())} of {len(rows)} rows not finite){hint}')


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls))
        _FIELD_NAMES[cls] = names
    return names


def _bad_field(msg: Any, skip: tuple[str, ...]) -> tuple[list[str], Any] | None:
    """``(reversed path parts, value)`` of the first non-finite float in ``msg``, or None (the
    path is built only on the way back from a hit: messages with 10^5 poses stay fast)."""
    if isinstance(msg, float):
        return None if math.isfinite(msg) else ([], msg)
    if msg is None or isinstance(msg, (int, str, bytes)):
        return None
    if isinstance(msg, np.ndarray):
        if msg.dtype.kind in 'fc' and msg.size and not np.isfinite(msg).all():
            index = np.unravel_index(int(np.argmax(~np.isfinite(msg))), msg.shape)
            return [''.join(f'[{int(i)}]' for i in index)], msg[index]
        return None
    if isinstance(msg, np.generic):
        return None if not _bad_number(msg) else ([], msg)
    if isinstance(msg, (list, tuple)):
        for i, item in enumerate(msg):
            found = _bad_field(item, skip)
            if found is not None:
                found[0].append(f'[{i}]')
                return found
        return None
    if hasattr(type(msg), '__dataclass_fields__'):
        for name in _field_names(type(msg)):
            if name in skip:
                continue
            found = _bad_field(getattr(msg, name), skip)
            if found is not None:
                found[0].append(name)
                return found
    return None


def non_finite_field(msg: Any, skip: tuple[str, ...] = ()) -> str | None:
    """``field.path = value`` of the first NaN or infinite float in a message object (a
    dataclass such as the rosbags typestore messages; numpy arrays and lists inside), or None.
    Fields named in ``skip`` (e.g. LaserScan ``ranges``, where REP 117 gives NaN and inf a
    meaning) are not looked at."""
    found = _bad_field(msg, skip)
    if found is None:
        return None
    parts, value = found
    path = ''
    for part in reversed(parts):
        path = _join(path, part)
    return f'{path or "<value>"} = {float(np.real(value))!r}'
