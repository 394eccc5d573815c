"""The ``index.html`` of the lidar commands' output folders, in words: ``lidar apply`` (the bag
with errors), ``lidar stats --out`` (a scan topic's statistics) and ``lidar fit --report``.

Each page says what ran (command line, input bag and topic, error config, seed, versions, wall
time), the result in one sentence, the figures with their units, then plots to read at their
natural size (for ``apply``: one scan before and after the error model, and the distribution of
the range changes), and the files. Plots are drawn with matplotlib (Agg).
"""

from __future__ import annotations

from collections.abc import Sequence
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_description.report_page import Page, Plot, fmt_number, provenance, write_page
from rc_sim_sensors.scan_geometry import Scan
from rc_sim_sensors.scan_stats import ScanStats

__all__ = ['config_rows', 'stats_rows', 'write_apply_page', 'write_fit_page', 'write_stats_page']

_PROBABILITY = '-'


def _pct(value: float) -> str:
    return 'not available' if not math.isfinite(value) else f'{100 * value:.3g} %'


def _mm(value: float) -> str:
    return 'not available' if not math.isfinite(value) else f'{fmt_number(1000 * value)} mm'


def config_rows(config: Any) -> list[tuple[str, str]]:
    """(what it does, value with unit) of every error-model key that differs from no error."""
    from rc_sim_sensors.lidar_config import LidarErrorConfig, config_fields

    base = LidarErrorConfig()
    rows = []
    for f in config_fields():
        if f.name == 'seed':
            continue
        value = getattr(config, f.name)
        if value == getattr(base, f.name):
            continue
        doc = str(f.metadata.get('doc', f.name)).split('. ')[0].rstrip('.')
        unit = str(f.metadata.get('unit', ''))
        if isinstance(value, float):
            if unit == _PROBABILITY and 'probability' in f.name:
                text = _pct(value)
            elif unit == 'm' and abs(value) < 1 and value != 0:
                text = _mm(value)
            elif unit in ('-', ''):
                text = fmt_number(value)
            else:
                text = f'{fmt_number(value)} {unit}'
        else:
            text = str(value)
        rows.append((f'{doc} ({f.name})', text))
    return rows


def stats_rows(stats: ScanStats) -> list[tuple[str, str]]:
    """The figures of ``lidar stats`` in words and units (undefined ones left out)."""
    beams = (f'{stats.beams_min}' if stats.beams_min == stats.beams_max else
             f'{stats.beams_min} to {stats.beams_max}')
    rows = [('scans', f'{stats.scans:,}' + (f' ({stats.skipped} unusable ones skipped)'
                                            if stats.skipped else '')),
            ('beams per scan', beams)]
    if math.isfinite(stats.rate_hz) and stats.rate_hz > 0:
        rows.append(('scan rate', f'{fmt_number(stats.rate_hz)} Hz'))
    rows += [('valid readings', _pct(stats.valid_fraction))]
    for label, value in (('no return (+inf)', stats.pos_inf_fraction),
                         ('below range_min (-inf, 0)', stats.neg_inf_fraction
                          + stats.low_fraction),
                         ('above range_max', stats.high_fraction), ('NaN', stats.nan_fraction)):
        if value > 0:
            rows.append((f'invalid: {label}', _pct(value)))
    if math.isfinite(stats.dropout_estimate):
        rows.append(('dropouts (invalid where most scans see something)',
                     _pct(stats.dropout_estimate)))
    if math.isfinite(stats.noise_estimate):
        rows.append(('range noise (standard deviation, from still scans)',
                     f'{_mm(stats.noise_estimate)} (from {stats.noise_pairs:,} of '
                     f'{stats.pairs:,} scan pairs)'))
    else:
        rows.append(('range noise', f'not measurable: the sensor never stands still in '
                     f'{stats.pairs:,} scan pairs'))
    if math.isfinite(stats.range_median):
        rows.append(('ranges (1st percentile, median, 99th percentile)',
                     f'{stats.range_p01:.3f} m, {stats.range_median:.3f} m, '
                     f'{stats.range_p99:.3f} m'))
    return rows


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt


def _match(before: Sequence[Scan], after: Sequence[Scan], latency: float
           ) -> list[tuple[Scan, Scan]]:
    """Input and output scans paired by header stamp (the output is delayed by ``latency``;
    lost scans have no partner)."""
    if not before or not after:
        return []
    stamps = np.array([s.stamp for s in before])
    pairs = []
    for scan in after:
        k = int(np.argmin(np.abs(stamps - (scan.stamp - latency))))
        if abs(stamps[k] - (scan.stamp - latency)) < 1e-4 and before[k].beams == scan.beams:
            pairs.append((before[k], scan))
    return pairs


def _plot_scan_pair(pair: tuple[Scan, Scan], path: Path) -> None:
    """One scan before and after the error model: range against beam angle, and the points in
    the sensor frame."""
    plt = _pyplot()
    before, after = pair
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 8.5), dpi=100,
                                      gridspec_kw={'height_ratios': [1, 1.4]})
    deg_b, deg_a = np.degrees(before.angles), np.degrees(after.angles)
    rb = np.where(np.isfinite(before.ranges), before.ranges, np.nan)
    ra = np.where(np.isfinite(after.ranges), after.ranges, np.nan)
    top.plot(deg_b, rb, color='0.3', linewidth=1.2, label='input (before)')
    top.plot(deg_a, ra, '.', color='tab:red', markersize=2.5, label='output (with errors)')
    lost = ~np.isfinite(after.ranges) & np.isfinite(before.ranges)
    if lost.any():
        top.plot(deg_a[lost], np.full(int(lost.sum()), np.nanmax(rb) * 1.03), '|',
                 color='tab:blue', markersize=8, label='no return in the output')
    top.set_xlabel('beam angle [deg]')
    top.set_ylabel('range [m]')
    top.grid(True, alpha=0.3)
    top.legend(loc='upper right', fontsize=10)
    top.set_title(f'scan at t = {before.stamp:.2f} s (header stamp of the input)')
    for scan, style, label in ((before, {'color': '0.3', 's': 10}, 'input'),
                               (after, {'color': 'tab:red', 's': 3}, 'output')):
        ok = np.isfinite(scan.ranges)
        a = scan.angles[ok]
        bottom.scatter(scan.ranges[ok] * np.cos(a), scan.ranges[ok] * np.sin(a), label=label,
                       **style)  # type: ignore[arg-type]
    bottom.plot([0], [0], marker='^', color='black', linestyle='none', label='sensor')
    ok = np.isfinite(before.ranges)
    reach = 1.25 * float(np.max(before.ranges[ok])) if ok.any() else 1.0
    bottom.set_xlim(-reach, reach)
    bottom.set_ylim(-reach, reach)
    bottom.set_aspect('equal', adjustable='box')
    bottom.set_xlabel('x [m] (sensor frame, forward)')
    bottom.set_ylabel('y [m] (left)')
    bottom.grid(True, alpha=0.3)
    bottom.legend(loc='upper right', fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _plot_changes(pairs: Sequence[tuple[Scan, Scan]], path: Path) -> str:
    """Histogram of output - input ranges where both are valid (the bulk: within 6 robust
    standard deviations of the median; farther ones are counted as outliers); returns its
    description in words."""
    plt = _pyplot()
    diffs = []
    for before, after in pairs:
        ok = np.isfinite(before.ranges) & np.isfinite(after.ranges)
        diffs.append((after.ranges[ok] - before.ranges[ok]).astype(np.float64))
    d = np.concatenate(diffs) if diffs else np.zeros(0)
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=100)
    if not d.size:
        plt.close(fig)
        return ''
    median = float(np.median(d))
    sigma = 1.4826 * float(np.median(np.abs(d - median)))  # robust standard deviation
    half = max(6.0 * sigma, 1e-3)
    bulk = np.abs(d - median) <= half
    far = int(d.size - bulk.sum())
    ax.hist(d[bulk] * 1000, bins=100, color='tab:red', alpha=0.8)
    ax.axvline(median * 1000, color='black', linewidth=1, linestyle='--', label='median')
    ax.set_xlabel('output range - input range [mm] (readings valid in both)')
    ax.set_ylabel('readings')
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=10)
    outliers = (f'; {far:,} readings ({100 * far / d.size:.2g} %) moved farther (outliers, '
                'not drawn)' if far else '')
    ax.set_title(f'median {_mm(median)}, robust standard deviation {_mm(sigma)}', fontsize=11)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return (f'median {_mm(median)}, robust standard deviation {_mm(sigma)} over {d.size:,} '
            f'readings valid before and after{outliers}')


def write_apply_page(out: str | os.PathLike[str], *, bag: str, topic: str, config: Any,
                     config_name: str, seed: int | None, report: Any,
                     skip_corrupt: bool = False) -> Path:
    """``index.html`` (and two plots) of a ``lidar apply`` output bag; returns its path."""
    from rc_sim_sensors.bag_tools import read_scan_series
    from rc_sim_sensors.scan_stats import scan_stats

    folder = Path(out)
    before = read_scan_series(bag, topic, skip_corrupt=skip_corrupt).scans
    after_series = read_scan_series(folder, topic)
    pairs = _match(before, after_series.scans, float(config.latency))
    stats = scan_stats(after_series.scans, topic)
    plots = []
    change = ''
    if pairs:
        _plot_scan_pair(pairs[len(pairs) // 2], folder / 'scan_before_after.png')
        change = _plot_changes(pairs, folder / 'range_changes.png')
        plots = [Plot('scan_before_after.png', 'One scan (the middle one) before and after the '
                      'error model: range against beam angle, and the points seen from above '
                      'in the sensor frame.'),
                 Plot('range_changes.png', 'How much the error model moved the ranges: output '
                      'minus input over every reading valid in both.')]
    lost = report.scans_in - report.scans_out
    used_seed = seed if seed is not None else int(config.seed)
    page = Page(
        title=f'rcsim lidar apply: {config_name} errors on {topic} of {Path(bag).name}',
        lead=f'A copy of the bag {bag} in which {topic} went through the lidar error model; '
             'every other topic is copied unchanged. This folder is a rosbag2 bag.',
        verdict=(f'{report.scans_out:,} of {report.scans_in:,} scans written'
                 + (f' ({lost:,} lost to the scan-loss probability)' if lost else '')
                 + f', {report.other_messages:,} other messages copied; the output scans are '
                 f'{_pct(stats.valid_fraction)} valid.'),
        ran=provenance(seed=used_seed, inputs=[('input bag', bag), ('scan topic', topic),
                                               ('error config', config_name),
                                               ('output storage', report.storage)]),
        results_title='The output scans',
        results=stats_rows(stats) + ([('range changes (output - input)', change)]
                                     if change else []),
        tables=[('The error model', ['what it does (key)', 'value'],
                 [list(r) for r in config_rows(config)] or [['no error (every key at its '
                                                             'default)', '']])],
        plots=plots)
    return write_page(folder, page)


def write_stats_page(out: str | os.PathLike[str], stats: ScanStats, *, bag: str,
                     scans: Sequence[Scan]) -> Path:
    """``stats.yaml``, ``ranges.png`` and ``index.html`` of ``lidar stats --out``."""
    import yaml

    folder = Path(out)
    figures = {k: (float(v) if math.isfinite(v) else None)
               for k, v in stats.figures().items()}
    data = {'bag': bag, 'topic': stats.topic, 'scans': stats.scans,
            'beams': [stats.beams_min, stats.beams_max], 'rate_hz': (
                float(stats.rate_hz) if math.isfinite(stats.rate_hz) else None),
            'noise_pairs': stats.noise_pairs, 'pairs': stats.pairs, 'figures': figures}
    (folder / 'stats.yaml').write_text(yaml.safe_dump(data, sort_keys=False), encoding='utf-8')
    plots = []
    if scans:
        _plot_ranges(scans, folder / 'ranges.png')
        plots.append(Plot('ranges.png', 'Every scan as a row: range by beam angle and time '
                          '(white: no valid reading), and the share of valid readings per '
                          'scan.'))
    page = Page(title=f'rcsim lidar stats: {stats.topic} of {Path(bag).name}',
                lead=f'Statistics of the LaserScan topic {stats.topic} in the bag {bag}.',
                verdict=(f'{stats.scans:,} scans, {_pct(stats.valid_fraction)} of the readings '
                         'valid' + (f', range noise {_mm(stats.noise_estimate)}'
                                    if math.isfinite(stats.noise_estimate) else '') + '.'),
                ran=provenance(inputs=[('bag', bag), ('scan topic', stats.topic)]),
                results_title='Figures', results=stats_rows(stats), plots=plots)
    return write_page(folder, page)


def _plot_ranges(scans: Sequence[Scan], path: Path, max_rows: int = 600) -> None:
    plt = _pyplot()
    step = max(1, -(-len(scans) // max_rows))
    rows = scans[::step]
    beams = max(s.beams for s in rows)
    image = np.full((len(rows), beams), np.nan)
    for i, s in enumerate(rows):
        r = np.where(np.isfinite(s.ranges) & (s.ranges >= s.range_min) & (s.ranges <= s.range_max),
                     s.ranges, np.nan)
        image[i, :s.beams] = r
    t = np.array([s.stamp for s in rows]) - rows[0].stamp
    a0, a1 = math.degrees(rows[0].angle_min), math.degrees(rows[0].angles[-1])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7.5), dpi=100, sharex=False,
                                      gridspec_kw={'height_ratios': [2.2, 1]})
    im = top.imshow(image, aspect='auto', origin='lower', interpolation='nearest',
                    extent=(a0, a1, float(t[0]), float(t[-1]) if len(t) > 1 else 1.0),
                    cmap='viridis')
    fig.colorbar(im, ax=top, label='range [m]')
    top.set_xlabel('beam angle [deg]')
    top.set_ylabel('time [s]')
    valid = [float(np.mean(np.isfinite(s.ranges) & (s.ranges >= s.range_min)
                           & (s.ranges <= s.range_max))) for s in scans]
    tt = np.array([s.stamp for s in scans]) - scans[0].stamp
    bottom.plot(tt, np.array(valid) * 100, color='tab:blue')
    bottom.set_xlabel('time [s]')
    bottom.set_ylabel('valid readings [%]')
    bottom.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_fit_page(directory: str | os.PathLike[str], *, sources: Sequence[str], verdict: str,
                   verdict_ok: bool, estimates: Sequence[Sequence[str]],
                   spans: Sequence[Sequence[str]], comparison: Sequence[Sequence[str]],
                   noise: Sequence[Sequence[str]], seed: int | None, out_yaml: str | None
                   ) -> Path:
    """``index.html`` of a ``lidar fit --report`` directory (its plots are written already)."""
    page = Page(
        title='rcsim lidar fit: lidar errors fitted to a still sensor',
        lead=('Lidar error parameters estimated from recordings of a static scene (only its '
              'nearly still parts), then checked by simulating those spans with the fitted '
              'config and comparing the statistics.'),
        verdict=verdict, verdict_ok=verdict_ok,
        ran=provenance(seed=seed, inputs=[('recordings', ', '.join(sources)),
                                          ('fitted config', out_yaml or '')]),
        tables=[('Estimates', ['quantity (key in the fitted config)', 'estimate ± standard error',
                               'samples', 'how it was estimated'],
                 [list(r) for r in estimates]),
                ('Real against simulated statistics (the still spans simulated with the '
                 'fitted config)', ['statistic', 'real', 'simulated',
                                    'largest difference [standard errors]', 'spans that differ'],
                 [list(r) for r in comparison]),
                ('Still spans used', ['recording', 'scans', 'count', 'time'],
                 [list(r) for r in spans]),
                ('Noise by range', ['range', 'noise (standard deviation)', 'standard error',
                                    'readings'], [list(r) for r in noise])],
        plots=[Plot('noise_vs_range.png', 'Range noise against range: the estimate of each range '
                    'bin with its standard error, and the fitted line sigma(d) = sigma0 + k d.'),
               Plot('static_spans.png', 'Scan-to-scan change over each recording (raw and '
                    'motion-compensated); the shaded spans are the still ones the fit used.')],
        file_notes={'report.md': 'this report as text (Markdown)',
                    'estimates.yaml': 'every estimate with its standard error and sample count, '
                                      'machine-readable'})
    return write_page(directory, page)
