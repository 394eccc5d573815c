"""``index.html`` of a campaign folder: the verdict first (pass/fail counts), then per varied
factor the pass rate and each metric's distribution (median [min, max]) per value, then the
worst runs with the one-line commands that reproduce each (``rcsim campaign run ... --only ID``
and, where one exists, the equivalent ``rcsim run`` / ``rcsim track``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import math
from pathlib import Path
import shlex
import statistics

from rc_sim_description.report_page import Page, fmt_number, provenance, write_page
from rc_sim_engine.campaign.expand import Run
from rc_sim_engine.campaign.results import columns
from rc_sim_engine.campaign.spec import CampaignSpec, resolve_path

__all__ = ['equivalent_command', 'reproduce_command', 'write_campaign_page']

#: How many of the worst runs the page lists.
WORST = 10
#: Metric columns per factor table, and the most values a factor table lists.
METRICS_PER_TABLE = 5
MAX_VALUES = 24


def reproduce_command(spec_path: str, out: Path, run_id: str) -> str:
    """``rcsim campaign run SPEC --out DIR --only ID`` (a new folder next to the campaign's)."""
    return shlex.join(['rcsim', 'campaign', 'run', spec_path, '--out',
                       f'{out}_{run_id}', '--only', run_id])


def equivalent_command(spec: CampaignSpec, run: Run, out: str) -> str:
    """The ``rcsim run`` / ``rcsim track`` command of the same run ('' when there is none:
    a python controller, inline vehicle values, lidar overrides, a tracker with a start pose)."""
    v = run.values
    kind = spec.driver.kind
    if (kind in ('python', 'ros_launch') or v.get('vehicle')
            or isinstance(v.get('lidar_errors'), Mapping)
            or (kind == 'tracker' and v.get('start'))):
        return ''
    world = resolve_path(spec.folder, str(v.get('world', 'basic_track' if kind == 'scenario'
                                                 else 'flat_track')))
    args = ['rcsim', 'run' if kind == 'scenario' else 'track', '--world', world]
    if kind == 'scenario':
        args += ['--scenario', resolve_path(spec.folder, str(v['scenario']))]
        if v.get('start'):
            args += ['--start', *(repr(float(x)) for x in v['start'])]
        if v.get('lidar_errors'):
            args += ['--lidar-errors', resolve_path(spec.folder, str(v['lidar_errors']))]
    else:
        args += ['--trajectory', str(v.get('trajectory', 'lemniscate')), '--controller',
                 str(spec.driver.controller), '--control-rate',
                 repr(spec.driver.control_rate_hz)]
        for key, value in spec.driver.settings:
            args += ['--set', f'{key}={value}']
    if spec.driver.duration_s is not None:
        args += ['--duration', repr(spec.driver.duration_s)]
    if v.get('model'):
        args += ['--model', str(v['model'])]
    files = v.get('params')
    for f in [] if files is None else files if isinstance(files, list) else [files]:
        args += ['--params', resolve_path(spec.folder, f)]
    args += ['--seed', str(run.seed), '--out', out]
    return shlex.join(args)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _shown(text: str) -> str:
    value = _number(text)
    return fmt_number(value) if value is not None else text or 'n/a'


def _distribution(values: Sequence[float]) -> str:
    if not values:
        return ''
    return (f'{fmt_number(statistics.median(values))} [{fmt_number(min(values))}, '
            f'{fmt_number(max(values))}]')


def _factor_tables(spec: CampaignSpec, header: list[str], rows: list[list[str]]
                   ) -> tuple[list[tuple[str, list[str], list[list[str]]]], list[str]]:
    """Per varied factor: pass rate and each metric's distribution per value, the metrics
    :data:`METRICS_PER_TABLE` at a time (the page stays as wide as a window); a factor with
    more than :data:`MAX_VALUES` values gets a note instead. Returns (tables, notes)."""
    varied = [k for k, _ in (*spec.grid, *spec.zipped)]
    metrics = list(spec.metric_columns)
    tables, notes = [], []
    for factor in varied:
        col = header.index(factor)
        groups: dict[str, list[list[str]]] = {}
        for r in rows:
            groups.setdefault(r[col], []).append(r)
        if len(groups) > MAX_VALUES:
            notes.append(f'{factor}: {len(groups)} values, too many for a table here (see '
                         'results.csv)')
            continue
        size = math.ceil(len(metrics) / max(math.ceil(len(metrics) / METRICS_PER_TABLE), 1))
        chunks = [metrics[i:i + size] for i in range(0, len(metrics), size)] or [[]]
        for n, chunk in enumerate(chunks):
            body = []
            for value, members in groups.items():
                n_pass = sum(1 for r in members if r[2] == 'true')
                line = [value or '(none)']
                if n == 0:
                    line += [str(len(members)), f'{n_pass}/{len(members)}']
                for m in chunk:
                    nums = [x for x in (_number(r[header.index(m)]) for r in members)
                            if x is not None]
                    line.append(_distribution(nums))
                body.append(line)
            title = (f"By {factor}: runs passed, each metric's median [min, max]" if n == 0
                     else f'By {factor} (continued)')
            tables.append((title, [factor, *(['runs', 'passed'] if n == 0 else []), *chunk],
                           body))
    return tables, notes


def _why(spec: CampaignSpec, header: list[str], r: list[str]) -> str:
    if r[1] == 'error':
        return r[header.index('error')]
    broken = [f'{rule.metric} = {_shown(r[header.index(rule.metric)])} (needs '
              f'{rule.text().partition(" ")[2]})' for rule in spec.pass_rules
              if not rule.holds(_number(r[header.index(rule.metric)]))]
    return '; '.join(broken) or 'passed'


def write_campaign_page(folder: Path, spec: CampaignSpec, runs: Sequence[Run],
                        rows: Mapping[str, list[str]], spec_path: str) -> Path:
    """Write ``folder/index.html`` from the table's rows; returns its path."""
    header = columns(spec)
    done = [rows[r.run_id] for r in runs if r.run_id in rows]
    by_id = {r.run_id: r for r in runs}
    n_pass = sum(1 for r in done if r[2] == 'true')
    n_err = sum(1 for r in done if r[1] == 'error')
    n_fail = len(done) - n_pass - n_err
    missing = len(runs) - len(done)
    verdict = (f'{n_pass} of {len(done)} runs passed, {n_fail} failed, {n_err} errors'
               + (f' ({missing} of the {len(runs)} runs of the spec not run yet)'
                  if missing else '') + '.')
    rules = '; '.join(rule.text() for rule in spec.pass_rules) or 'none (every run that ' \
        'finishes passes)'
    key = next((m for m in ('min_wall_distance_m', *spec.metric_columns)
                if m in spec.metric_columns), None)

    def rank(r: list[str]) -> tuple[int, float]:
        order = 0 if r[1] == 'error' else 1 if r[2] != 'true' else 2
        value = _number(r[header.index(key)]) if key else None
        return order, value if value is not None else math.inf

    worst = sorted(done, key=rank)[:WORST]
    factor_cols = list(spec.factor_names)
    worst_rows: list[list[str]] = []
    command_rows: list[list[str]] = []
    for r in worst:
        run = by_id[r[0]]
        factors = ', '.join(f'{k}={r[header.index(k)]}' for k in factor_cols)
        same = equivalent_command(spec, run, f'{folder}_{run.run_id}.bag')
        commands = reproduce_command(spec_path, folder, run.run_id) + (
            f'  |  {same}' if same else '')
        worst_rows.append([r[0], 'error' if r[1] == 'error' else 'pass' if r[2] == 'true'
                           else 'FAIL', factors, _why(spec, header, r), r[-1]])
        command_rows.append([r[0], commands])
    factor_tables, notes = _factor_tables(spec, header, done)
    page = Page(
        title=f'rcsim campaign: {spec.name}',
        lead=f'A test campaign of {len(runs)} runs (driver: {spec.driver.kind}'
             f'{f" {spec.driver.controller}" if spec.driver.controller else ""}); one row per '
             'run in results.csv, each reproducible bit for bit from its id.',
        ran=provenance(inputs=[('spec', spec_path)]),
        verdict=verdict, verdict_ok=n_fail == 0 and n_err == 0 and missing == 0,
        results=[('pass rule', rules), ('runs', str(len(runs))), ('passed', str(n_pass)),
                 ('failed', str(n_fail)), ('errors', str(n_err)),
                 ('bags kept', spec.keep_bags)],
        notes=notes,
        tables=[*factor_tables,
                ('Worst runs (errors, failures, then the smallest '
                 f'{key or "metric"})', ['run', 'verdict', 'factors', 'why', 'bag'],
                 worst_rows),
                ('The commands that reproduce them (bit for bit)',
                 ['run', 'how: rcsim campaign --only, and the same run as rcsim run / track'],
                 command_rows)],
        file_notes={'results.csv': 'one row per run: id, status, verdict, factors, metrics',
                    'campaign.json': 'the plan: every run id with its factors (resume checks '
                                     'it)'})
    return write_page(folder, page)

