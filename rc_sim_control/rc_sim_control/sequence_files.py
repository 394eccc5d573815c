"""Command sequence files (YAML scenarios): save, load and validate.

``angular_z`` is read in the sequence's ``mode``
(:data:`~rc_sim_control.ackermann.MAPPER_MODES`), exactly like ``/cmd_vel`` by the mapper, so the
embedded engine (``rcsim run --scenario file.yaml``) and the real car
(``rear_wheel_speed_publisher``) play the same files.

File format (YAML mapping; ``t`` [s] strictly increasing, same length lists)::

    name: circle_left
    description: free text
    mode: steering_angle
    t: [0.0, 0.02, ...]
    linear_x: [0.0, 0.04, ...]
    angular_z: [0.3, 0.3, ...]
"""

from __future__ import annotations

from collections.abc import Mapping
import difflib
import os
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rc_sim_control.command_sequence import (
    CommandSequence,
)
from rc_sim_description.atomic import atomic_write_text
from rc_sim_description.errors import ConfigError
from rc_sim_description.yamlio import number_hint, read_yaml

__all__ = [
    'load_sequence',
    'save_sequence',
    'sequence_from_mapping',
]

_KEYS = ('name', 'description', 'mode', 't', 'linear_x', 'angular_z')


def _sequence_dict(seq: CommandSequence) -> dict[str, Any]:
    return {'name': seq.name, 'description': seq.description, 'mode': seq.mode,
            't': seq.t.tolist(), 'linear_x': seq.linear_x.tolist(),
            'angular_z': seq.angular_z.tolist()}


def save_sequence(seq: CommandSequence, path: str | os.PathLike[str]) -> None:
    """Write ``seq`` as a YAML scenario file, atomically (floats round-trip exactly)."""
    header = ('# rc-sim command sequence (rc_sim_control.commands): zero-order hold of\n'
              f'# (linear_x [m/s], angular_z in mode {seq.mode!r}) from each t [s] to the next.\n')
    text = yaml.safe_dump(_sequence_dict(seq), sort_keys=False, default_flow_style=None,
                          width=99)
    atomic_write_text(path, header + text)


def sequence_from_mapping(data: Mapping[str, Any], source: str) -> CommandSequence:
    """Validate a parsed scenario mapping (one-line :class:`ConfigError` naming source and key)."""
    if not isinstance(data, Mapping):
        raise ConfigError(f'{source}: top level must be a mapping with keys {", ".join(_KEYS)}, '
                          f'got {type(data).__name__}')
    for key in data:
        if key not in _KEYS:
            hint = difflib.get_close_matches(str(key), _KEYS, n=1)
            extra = f' (did you mean {hint[0]!r}?)' if hint else ''
            raise ConfigError(f'{source}: {key}: unknown key{extra}')
    for key in ('mode', 't', 'linear_x', 'angular_z'):
        if key not in data:
            raise ConfigError(f'{source}: {key}: missing key')
    for key in ('name', 'description', 'mode'):
        if key in data and not isinstance(data[key], str):
            raise ConfigError(f'{source}: {key}: must be a string, got {data[key]!r}')
    arrays = {}
    for key in ('t', 'linear_x', 'angular_z'):
        values = data[key]
        if not isinstance(values, list):
            raise ConfigError(f'{source}: {key}: must be a list of numbers, '
                              f'got {type(values).__name__}')
        for i, x in enumerate(values):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise ConfigError(f'{source}: {key}[{i}]: must be a number, got {x!r}'
                                  f'{number_hint(x)}')
        arrays[key] = np.asarray(values, dtype=np.float64)
    return CommandSequence(arrays['t'], arrays['linear_x'], arrays['angular_z'], data['mode'],
                           data.get('name', '') or '', data.get('description', '') or '',
                           _source=source)


def load_sequence(path: str | os.PathLike[str]) -> CommandSequence:
    """Read and validate a YAML scenario file written by :func:`save_sequence` (or by hand)."""
    p = Path(path)
    data = read_yaml(p, label='sequence file ')
    if not isinstance(data, dict):
        raise ConfigError(f'{p}: top level must be a mapping with keys {", ".join(_KEYS)}')
    return sequence_from_mapping(data, str(p))
