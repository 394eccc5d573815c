"""Run a campaign: check the folder, skip the runs already in the table, execute the rest on
local worker processes (default) or on a Dask cluster, stream each row into the table as it
ends, then rewrite the table in order and write ``index.html``.

Why Dask (``distributed``) rather than Ray: it is pure Python and installs with pip alone (no
native daemon or object store to run), a ``LocalCluster`` of processes tests the very code path
a real cluster uses, and ``dask scheduler`` / ``dask worker ADDRESS`` on any machines with the
packages installed is the whole deployment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
import os
from pathlib import Path
import sys
from typing import Any

from rc_sim_description.errors import ConfigError, OutputError
from rc_sim_engine.campaign.execute import Outcome, execute_run
from rc_sim_engine.campaign.expand import Run, expand
from rc_sim_engine.campaign.results import (
    PLAN_NAME,
    ResultsTable,
    check_plan,
    columns,
    row,
    write_plan,
)
from rc_sim_engine.campaign.spec import CampaignSpec, load_spec, resolve_path

__all__ = ['CampaignSummary', 'run_campaign', 'spec_inputs']

#: What a campaign folder holds (a resumed --out may hold only these).
FOLDER_ENTRIES = ('results.csv', PLAN_NAME, 'index.html', 'bags', 'inputs', '.*')
DASK_MISSING = ('--dask/--scheduler need Dask: pip install "dask[distributed]" (or the '
                'rc_sim_engine[campaign] extra)')


@dataclass
class CampaignSummary:
    """Counts of a finished ``rcsim campaign run``."""

    spec: CampaignSpec
    out: Path
    total: int       # runs of the spec (or of --only)
    skipped: int     # already in the table
    executed: int
    passed: int
    failed: int
    errors: int
    page: Path


def spec_inputs(spec: CampaignSpec) -> dict[str, list[str]]:
    """The files a campaign reads (its --out must overlap none of them)."""
    files: list[str] = []
    values = [v for _, v in spec.fixed] + [v for _, vs in (*spec.grid, *spec.zipped) for v in vs]
    for value in values:
        for item in (value if isinstance(value, list) else [value]):
            if isinstance(item, str):
                path = resolve_path(spec.folder, item)
                if Path(path).is_file():
                    files.append(path)
    return {'SPEC': [spec.path], 'spec files': sorted(set(files))}


def _check_out(out: Path, spec: CampaignSpec) -> None:
    from rc_sim_description.atomic import check_output_path

    inputs = spec_inputs(spec)
    if out.exists():
        if not (out / PLAN_NAME).is_file():
            raise OutputError(f'{out} exists and is not a campaign folder (no {PLAN_NAME}); '
                              'give a new --out')
        import fnmatch

        for entry in sorted(out.iterdir()):
            if not any(fnmatch.fnmatchcase(entry.name, p) for p in FOLDER_ENTRIES):
                raise OutputError(f'{out} holds {entry.name}, which a campaign does not write; '
                                  'give a new --out')
        root = out.resolve()
        for flag, files in inputs.items():
            for file in files:
                if root in Path(file).resolve().parents:
                    raise OutputError(f'--out {out} contains the input {flag} {file}: give '
                                      'another --out')
    else:
        check_output_path(out, inputs=inputs)  # made once the runs can start


def _select(runs: list[Run], only: Sequence[str]) -> list[Run]:
    if not only:
        return runs
    from rc_sim_description.yamlio import did_you_mean

    by_id = {r.run_id: r for r in runs}
    for run_id in only:
        if run_id not in by_id:
            raise ConfigError(f'--only {run_id}: no run of the spec has this id'
                              f'{did_you_mean(run_id, by_id)}')
    return [r for r in runs if r.run_id in set(only)]


class _Local:
    """Local worker processes (none for one worker or one run: this process runs them),
    started before the progress bar's thread so the workers fork from a quiet process."""

    def __init__(self, workers: int, n_runs: int) -> None:
        self.pool: Any = None
        if workers > 1 and n_runs > 1:
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(max_workers=min(workers, n_runs),
                                            initializer=_worker_init)

    def runs(self, spec: CampaignSpec, pending: list[Run], out: str
             ) -> Iterator[tuple[Run, Outcome]]:
        """Run every pending run; yield each outcome as it ends."""
        if self.pool is None:
            for run in pending:
                yield run, execute_run(spec, run, out)
            return
        from concurrent.futures import as_completed

        futures = {self.pool.submit(execute_run, spec, run, out): run for run in pending}
        for future in as_completed(futures):
            yield futures[future], future.result()

    def close(self) -> None:
        """Stop the workers: the runs in flight end, the queued ones are dropped."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _worker_init() -> None:
    """Workers ignore Ctrl-C: the command stops them (after their current run)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def parse_dask(value: str) -> int:
    """``local:N`` -> N (>= 1)."""
    kind, _, count = value.partition(':')
    if kind != 'local' or not count.isdigit() or int(count) < 1:
        raise ConfigError(f'--dask: expected local:N (N >= 1 worker processes), got {value!r}')
    return int(count)


class _Dask:
    """A Dask client (on a new LocalCluster of ``local`` processes, or connected to
    ``scheduler``), opened before the campaign folder is made: a bad address writes nothing."""

    def __init__(self, local: int | None, scheduler: str | None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ConfigError(DASK_MISSING) from None
        self.cluster: Any = None
        if local is not None:
            self.cluster = LocalCluster(n_workers=local, threads_per_worker=1, processes=True,
                                        dashboard_address=None)
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(scheduler, timeout='20s')
            except (OSError, TimeoutError, ValueError) as exc:
                raise ConfigError(f'--scheduler {scheduler}: cannot connect ({exc})'
                                  .splitlines()[0]) from None

    def runs(self, spec: CampaignSpec, pending: list[Run], out: str
             ) -> Iterator[tuple[Run, Outcome]]:
        """Submit every pending run; yield each outcome as it comes back."""
        from distributed import as_completed

        futures = {self.client.submit(execute_run, spec, run, out, pure=False,
                                      key=f'rcsim-campaign-{run.run_id}'): run
                   for run in pending}
        for future in as_completed(futures):
            yield futures[future], future.result()

    def close(self) -> None:
        """Disconnect (and stop the LocalCluster)."""
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def run_campaign(spec_path: str, out: str, *, workers: int | None = None,
                 only: Sequence[str] = (), dask: str | None = None,
                 scheduler: str | None = None,
                 progress: Callable[[int], Any] | None = None) -> CampaignSummary:
    """Run the campaign ``spec_path`` into the folder ``out`` (see the module docstring).

    ``workers``: local processes (default: the CPU count; 1 runs in this process).
    ``progress(total)`` returns an object whose ``advance()`` is called per finished run.
    """
    from rc_sim_engine.sim.warmup import ensure_compiled

    spec = load_spec(spec_path)
    if spec.driver.kind == 'ros_launch':
        from rc_sim_engine.campaign.ros_run import require_ros

        require_ros()
    local_dask = parse_dask(dask) if dask is not None else None
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    if n_workers < 1:
        raise ConfigError(f'--workers: must be >= 1, got {n_workers}')
    runs = expand(spec)
    selected = _select(runs, only)
    _check_out(Path(out), spec)
    check_plan(Path(out), spec, runs)
    if local_dask is None and scheduler is None and selected:
        ensure_compiled(lambda m: print(m, file=sys.stderr, flush=True), 'run',
                        lidar_errors=True)  # once, before the workers start
    executor = (_Dask(local_dask, scheduler) if local_dask is not None or scheduler is not None
                else _Local(n_workers, len(selected)))
    try:
        return _run(spec, spec_path, runs, selected, Path(out), executor, progress)
    finally:
        executor.close()


def _run(spec: CampaignSpec, spec_path: str, runs: list[Run], selected: list[Run],
         folder: Path, executor: _Dask | _Local,
         progress: Callable[[int], Any] | None) -> CampaignSummary:
    """The campaign after its inputs are checked (see :func:`run_campaign`)."""
    from rc_sim_engine.campaign.page import write_campaign_page

    folder.mkdir(parents=True, exist_ok=True)
    write_plan(folder, spec, runs)
    table = ResultsTable(folder, columns(spec))
    rows = table.load()
    pending = [r for r in selected if r.run_id not in rows]
    counter = progress(len(pending)) if progress is not None else None
    source = executor.runs(spec, pending, str(folder))
    executed = 0
    for run, outcome in source:
        values = row(spec, run, outcome)
        table.append(values)
        rows[run.run_id] = values
        executed += 1
        if counter is not None:
            counter.advance()
    table.finish(rows, [r.run_id for r in runs])
    chosen = {r.run_id for r in selected}
    mine = [rows[r.run_id] for r in selected if r.run_id in rows]
    n_pass = sum(1 for r in mine if r[2] == 'true')
    n_err = sum(1 for r in mine if r[1] == 'error')
    page = write_campaign_page(folder, spec, runs, rows, spec_path)
    return CampaignSummary(spec, folder, len(chosen), len(selected) - len(pending), executed,
                           n_pass, len(mine) - n_pass - n_err, n_err, page)
