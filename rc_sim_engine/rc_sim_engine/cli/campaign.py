"""``rcsim campaign run``: a test campaign from a YAML spec (docs/campaigns.md).

    rcsim campaign run campaign.yaml --out runs/campaign [--workers N | --dask local:N |
                                                          --scheduler tcp://HOST:8786]

The logic is ROS-free in :mod:`rc_sim_engine.campaign`; this module parses and prints.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ['command', 'register']


def register(subparsers: Any) -> None:
    """Add ``rcsim campaign run``."""
    p = subparsers.add_parser(
        'campaign', help='test campaigns: one YAML spec, many seeded runs, one results table',
        description='Test campaigns (docs/campaigns.md): a YAML spec says what varies (worlds, '
        'scenarios, trajectories, start poses, vehicle overrides, lidar error presets, seeds), '
        'what drives the car and what is measured; rcsim campaign run expands it into runs '
        'with stable ids and writes results.csv and index.html.')
    sub = p.add_subparsers(dest='campaign_command', metavar='VERB', required=True)
    r = sub.add_parser(
        'run', help='run (or resume) a campaign into a folder',
        description='Expand SPEC into runs, run those not yet in OUT/results.csv on local '
        'worker processes (or a Dask cluster), append one row per run as it ends, and write '
        'OUT/index.html. Re-running the same command resumes; a spec that only adds runs '
        'extends the campaign, any other change is refused. Exit status: 0 all runs passed, '
        '1 some failed or errored, 2 bad input. Example: rcsim campaign run campaign.yaml '
        '--out runs/campaign')
    r.add_argument('spec', metavar='SPEC', help='campaign spec YAML')
    r.add_argument('--out', required=True, help='campaign folder (created, or resumed)')
    r.add_argument('--workers', type=int, default=None, metavar='N',
                   help='local worker processes (default: the CPU count; 1 runs in this '
                   'process)')
    r.add_argument('--only', action='append', default=[], metavar='RUN_ID',
                   help='run only this run (repeatable): reproduces it bit for bit')
    where = r.add_mutually_exclusive_group()
    where.add_argument('--dask', metavar='local:N', help='run on a Dask LocalCluster of N '
                       'worker processes (needs dask[distributed])')
    where.add_argument('--scheduler', metavar='ADDRESS', help='run on the Dask cluster of this '
                       'scheduler, e.g. tcp://10.0.0.5:8786 (needs dask[distributed])')
    r.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """Run ``rcsim campaign run``; returns 0 (all passed) or 1 (some failed)."""
    from contextlib import ExitStack

    from rc_sim_description.cli_support import progress
    from rc_sim_engine.campaign.runner import run_campaign
    from rc_sim_engine.compiled.cache import start_numba_without_blas

    start_numba_without_blas()  # this process (and its forked workers) runs kernels only

    with ExitStack() as stack:
        def bar(total: int) -> Any:
            return stack.enter_context(progress('campaign', total=max(total, 1)))

        summary = run_campaign(args.spec, args.out, workers=args.workers, only=args.only,
                               dask=args.dask, scheduler=args.scheduler, progress=bar)
    print(f'rcsim campaign {summary.spec.name}: {summary.total} runs ({summary.skipped} already '
          f'in the table, {summary.executed} run now): {summary.passed} passed, '
          f'{summary.failed} failed, {summary.errors} errors')
    print(f'  results  {summary.out / "results.csv"}')
    print(f'  summary  {summary.page}')
    return 0 if summary.failed == 0 and summary.errors == 0 else 1
