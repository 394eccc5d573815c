"""The campaign folder: ``results.csv`` (one row per run, stable columns) and ``campaign.json``
(the plan: every run id with its factors and the table's columns).

Rows are appended one whole line per ``write`` and synced, as each run ends, so an interrupted
campaign loses at most the runs in flight; a torn last line is dropped when the table is read
again. When the campaign ends the table is rewritten atomically in the spec's run order, so the
same campaign gives the same bytes however many workers ran it and however often it resumed.
A resumed campaign must keep every run of the previous plan (it may add runs) and the same
columns; anything else is refused with one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

from rc_sim_description.atomic import atomic_write_text
from rc_sim_description.errors import ConfigError, OutputError
from rc_sim_engine.campaign.execute import Outcome, passed
from rc_sim_engine.campaign.expand import Run, canonical_json
from rc_sim_engine.campaign.spec import CampaignSpec

__all__ = ['PLAN_NAME', 'TABLE_NAME', 'ResultsTable', 'cell', 'check_plan', 'columns', 'row',
           'write_plan']

TABLE_NAME = 'results.csv'
PLAN_NAME = 'campaign.json'
PLAN_FORMAT = 1


def columns(spec: CampaignSpec) -> list[str]:
    """The table's columns: id, status, verdict, factors, metrics, error, bag."""
    return ['run_id', 'status', 'passed', *spec.factor_names, *spec.metric_columns, 'error',
            'bag']


def cell(value: Any) -> str:
    """A table cell: '' for None, integers plainly, floats by repr, lists and maps as JSON."""
    if value is None:
        return ''
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, (list, dict)):
        return canonical_json(value)
    return str(value)


def row(spec: CampaignSpec, run: Run, outcome: Outcome) -> list[str]:
    """The table row of a finished run (no wall time: rows are reproducible byte for byte)."""
    bag = f'bags/{run.run_id}' if outcome.bag else ''
    return [run.run_id, outcome.status, cell(passed(spec, outcome)),
            *(cell(run.values[k]) for k in spec.factor_names),
            *(cell(outcome.metrics.get(m)) for m in spec.metric_columns), outcome.error, bag]


def _line(values: Sequence[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator='\n').writerow(values)
    return buf.getvalue()


class ResultsTable:
    """``results.csv`` of a campaign folder (see the module docstring)."""

    def __init__(self, folder: Path, header: Sequence[str]) -> None:
        self.path = folder / TABLE_NAME
        self.header = list(header)

    def load(self) -> dict[str, list[str]]:
        """Rows by run id (creating the table with its header when missing); a torn last line
        is cut off the file."""
        if not self.path.exists():
            atomic_write_text(self.path, _line(self.header))
            return {}
        raw = self.path.read_bytes()
        if raw and not raw.endswith(b'\n'):  # a run interrupted while its line was written
            keep = raw.rfind(b'\n') + 1
            with open(self.path, 'r+b') as fh:
                fh.truncate(keep)
            raw = raw[:keep]
        rows = list(csv.reader(io.StringIO(raw.decode('utf-8'))))
        if not rows or rows[0] != self.header:
            raise ConfigError(f'{self.path}: its columns are not those of this spec (the '
                              'metrics or factors changed); give a new --out')
        return {r[0]: r for r in rows[1:] if len(r) == len(self.header)}

    def append(self, values: Sequence[str]) -> None:
        """Add one row: one write of one whole line, flushed to disk."""
        data = _line(values).encode('utf-8')
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, data)
            os.fsync(fd)
        except OSError as exc:
            raise OutputError(f'{self.path}: cannot append ({exc.strerror})') from None
        finally:
            os.close(fd)

    def finish(self, rows: dict[str, list[str]], order: Iterable[str]) -> None:
        """Rewrite the table atomically in ``order`` (ids without a row are left out)."""
        text = _line(self.header) + ''.join(_line(rows[i]) for i in order if i in rows)
        atomic_write_text(self.path, text)


def _plan(spec: CampaignSpec, runs: Sequence[Run]) -> dict[str, Any]:
    return {'format': PLAN_FORMAT, 'campaign': spec.name, 'columns': columns(spec),
            'driver': spec.driver.as_dict(),
            'runs': [[r.run_id, dict(r.factors)] for r in runs]}


def check_plan(folder: Path, spec: CampaignSpec, runs: Sequence[Run]) -> int:
    """Refuse a changed spec (returns the number of runs the previous plan had, 0 if none):
    every previous run must still be in ``runs`` and the columns must be the same."""
    path = folder / PLAN_NAME
    if not path.exists():
        return 0
    try:
        old = json.loads(path.read_text(encoding='utf-8'))
        old_ids = [str(r[0]) for r in old['runs']]
        old_columns = list(old['columns'])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        raise ConfigError(f'{path}: unreadable campaign plan; give a new --out') from None
    if old_columns != columns(spec):
        raise ConfigError(f'{folder}: the spec changed its factors or metrics (columns '
                          f'{", ".join(old_columns)} before); only adding runs is allowed in an '
                          'existing --out: give a new --out')
    new = {r.run_id for r in runs}
    gone = [i for i in old_ids if i not in new]
    if gone:
        raise ConfigError(f'{folder}: the spec changed: {len(gone)} run(s) of the previous spec '
                          f'are not in it (e.g. {gone[0]}); only adding runs is allowed in an '
                          'existing --out: give a new --out')
    return len(old_ids)


def write_plan(folder: Path, spec: CampaignSpec, runs: Sequence[Run]) -> None:
    """Write ``campaign.json`` atomically."""
    atomic_write_text(folder / PLAN_NAME, json.dumps(_plan(spec, runs), indent=1,
                                                     sort_keys=True, allow_nan=False) + '\n')
