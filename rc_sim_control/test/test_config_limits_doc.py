"""The limits table of docs/limits.md ("Scenarios, manoeuvres, trajectories, tracker") quotes
the constants of the code: each row's value equals the constant it names."""

from __future__ import annotations

import importlib
import math
from pathlib import Path
import re

DOC = Path(__file__).resolve().parents[2] / 'docs' / 'limits.md'
ROW = re.compile(r'^\| `(rc_sim_control\.[\w.]+)` \| ([^|]+) \|')


def _number(text: str) -> float:
    text = text.strip().split()[0].rstrip(',')
    return math.pi / 2 if text == 'pi/2' else float(text)


def test_every_quoted_limit_equals_its_constant() -> None:
    rows = [ROW.match(line) for line in DOC.read_text(encoding='utf-8').splitlines()]
    found = [m for m in rows if m]
    assert len(found) >= 15
    for m in found:
        module, _, name = m.group(1).rpartition('.')
        value = getattr(importlib.import_module(module), name)
        quoted = m.group(2)
        if isinstance(value, dict):  # MAX_ANGULAR_Z: values in the order of the modes
            numbers = [_number(part) for part in quoted.split(',')]
            assert numbers == list(value.values()), name
        elif name == 'MAX_WAYPOINT_BYTES':
            assert value == int(quoted.split()[0]) * 1024 * 1024
        else:
            assert _number(quoted) == value, name
