"""Outputs of ``rcsim lidar fit``: the fitted YAML, the printed summary and the report directory.

The YAML is the format ``lidar apply --config`` reads (a flat LidarErrorConfig mapping) with a
comment header saying where each value comes from. The report directory holds ``index.html``
(the page to read: verdict, estimates in words, real vs simulated statistics, plots),
``report.md`` (estimates with standard errors and sample counts, static spans, real vs simulated
``lidar stats`` side by side), ``estimates.yaml`` (the same, machine-readable) and two plots.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rc_sim_sensors.fit_compare import (
    Z_LIMIT,
    FigureComparison,
    FrontBeam,
    compare_stats,
    front_beam,
)
from rc_sim_sensors.lidar_fit import UNOBSERVABLE, LidarFit, Span, simulate_like
from rc_sim_sensors.scan_geometry import Scan
from rc_sim_sensors.scan_stats import ScanStats

__all__ = ['SpanComparison', 'compare_spans', 'fitted_yaml', 'parameter_errors', 'summary_lines',
           'write_page', 'write_report']

_MM = ('noise_stddev', 'bias_markov_stddev', 'range_resolution', 'noise estimate')
_M = ('range p1', 'range median', 'range p99', 'depth_edge_threshold', 'range_dropout_start')
_PERCENT = ('dropout_probability', 'mixed_pixel_probability', 'spurious_probability',
            'scan_loss_probability', 'range_dropout_probability',
            'incidence_dropout_probability', 'intensity_dropout_probability')


@dataclass(frozen=True)
class SpanComparison:
    """``lidar stats`` of one static span, real and simulated, figure by figure."""

    span: Span
    real: ScanStats
    simulated: ScanStats
    figures: list[FigureComparison]
    #: the beam looking straight ahead, real and simulated (:func:`~rc_sim_sensors.fit_compare.
    #: front_beam`)
    front: tuple[FrontBeam, FrontBeam] | None = None

    @property
    def indistinguishable(self) -> bool:
        """Every figure within :data:`~rc_sim_sensors.fit_compare.Z_LIMIT` standard errors."""
        return all(f.indistinguishable for f in self.figures)


def parameter_errors(fit: LidarFit, scans: Sequence[Scan]) -> dict[str, float]:
    """Standard errors that the fitted parameters pass on to the simulated figures: the
    invalid-return rate (on the share of readings in usually valid directions) and the noise
    line at the span's median range."""
    e = fit.estimates
    p_se = e['dropout_probability'].se if math.isfinite(e['dropout_probability'].se) else 0.0
    valid = np.concatenate([s.valid() for s in scans])
    share = float(valid.mean()) if valid.size else 1.0
    median = float(np.median(np.concatenate([s.ranges[s.valid()] for s in scans]))) \
        if valid.any() else 0.0
    se0 = e['noise_stddev'].se if math.isfinite(e['noise_stddev'].se) else 0.0
    sek = e['noise_stddev_per_meter'].se if math.isfinite(e['noise_stddev_per_meter'].se) \
        else 0.0
    invalid = 'below range_min' if fit.config.out_of_range == 'zero' else '+inf'
    return {'valid': share * p_se, invalid: share * p_se, 'dropout estimate': p_se,
            'noise estimate': math.hypot(se0, median * sek)}


def compare_spans(fit: LidarFit, seed: int = 0,
                  progress: Callable[[str, float, float], None] | None = None,
                  ) -> list[SpanComparison]:
    """Simulate every static span with the fitted config and compare the stats figures (the
    simulated figures carry the fit's own uncertainty, :func:`parameter_errors`);
    ``progress(stage, done, total)`` is called span by span."""
    simulated = simulate_like(fit, seed=seed)
    out = []
    for i, (span, real, sim) in enumerate(zip(fit.spans, fit.span_scans, simulated)):
        if progress is not None:
            progress('checking the fit', i, len(fit.spans))
        a, b, figures = compare_stats(real, sim, f'{span.recording} {span.start:.1f}-'
                                      f'{span.end:.1f} s', seed, fit.config,
                                      parameter_errors(fit, real))
        out.append(SpanComparison(span, a, b, figures, (front_beam(real), front_beam(sim))))
    if progress is not None:
        progress('checking the fit', len(fit.spans), len(fit.spans))
    return out


def _fmt(name: str, value: float) -> str:
    if not math.isfinite(value):
        return 'n/a'
    if name == 'azimuth_jitter_stddev':
        return f'{value * 1000:.3g} mrad'
    if name in _M:
        return f'{value:.3f} m'
    if name in _MM or name.endswith('_stddev'):
        return f'{value * 1000:.3g} mm'
    if name in _PERCENT or name in ('valid', '+inf', '-inf', 'nan', 'below range_min',
                                    'above range_max', 'dropout estimate'):
        return f'{value:.3%}'
    if name == 'noise_stddev_per_meter':
        return f'{value * 1000:.3g} mm/m'
    if name == 'bias_correlation_time':
        return f'{value:.3g} s'
    return f'{value:.4g}'


def _span_text(span: Span) -> str:
    return (f'{span.recording}: scans {span.first}-{span.last} ({span.scans} scans, '
            f'{span.start:.2f}-{span.end:.2f} s)')


def summary_lines(fit: LidarFit, comparisons: Sequence[SpanComparison]) -> list[str]:
    """The printed summary: spans, estimates, per-span figure comparison and the verdict."""
    lines = [f'static spans ({fit.static_pairs} of {fit.pairs} scan pairs; a pair is static '
             'when its scan-to-scan change is at most 1.5x the motion-compensated one):']
    lines += [f'  {_span_text(s)}' for s in fit.spans]
    lines.append('estimates (value +- standard error, samples):')
    for name, e in fit.estimates.items():
        se = f' +- {_fmt(name, e.se)}' if math.isfinite(e.se) and e.se > 0 else ''
        lines.append(f'  {name:26s} {_fmt(name, e.value)}{se} (n={e.samples}) {e.note}')
    lines += [f'  note: {n}' for n in fit.notes]
    for c in comparisons:
        lines.append(f'real vs simulated lidar stats, {_span_text(c.span)}:')
        for f in c.figures:
            flag = '' if f.indistinguishable else f'   <- |z| > {Z_LIMIT:g}'
            lines.append(f'  {f.figure:18s} real {_fmt(f.figure, f.real):>10s}   simulated '
                         f'{_fmt(f.figure, f.simulated):>10s}   z {f.z:+.2f}{flag}')
        if c.front is not None and c.front[0].readings > 1:
            r, m = c.front
            lines.append(f'  front beam         real {r.mean:.4f} m +- {r.std * 1000:.2f} mm   '
                         f'simulated {m.mean:.4f} m +- {m.std * 1000:.2f} mm '
                         f'({r.readings} / {m.readings} scans)')
    bad = [c for c in comparisons if not c.indistinguishable]
    lines.append('verdict: simulated scans are statistically indistinguishable from the real '
                 f'ones on every lidar stats figure (|z| <= {Z_LIMIT:g})' if not bad else
                 f'verdict: {len(bad)} of {len(comparisons)} spans differ on some figure')
    return lines


def fitted_yaml(fit: LidarFit, sources: Sequence[str]) -> str:
    """The config as YAML with a comment header (provenance, spans, unobservable keys)."""
    head = ['# Lidar error config fitted by "rcsim lidar fit" from static recordings of a real '
            'sensor.', f'# recordings: {", ".join(sources)}', '# static spans used:']
    head += [f'#   {_span_text(s)}' for s in fit.spans]
    head.append('# not observable from a static recording (left at 0): ' + ', '.join(
        f'{k} ({why})' for k, why in UNOBSERVABLE.items()))
    head.append('# standard errors and sample counts: the --report directory')
    values = {k: (float(f'{v:.4g}') if isinstance(v, float) else v)
              for k, v in fit.config.to_dict().items()}
    return '\n'.join(head) + '\n' + yaml.safe_dump(values, sort_keys=False)


def _estimates_data(fit: LidarFit, comparisons: Sequence[SpanComparison]) -> dict[str, Any]:
    def num(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    return {
        'spans': [{'recording': s.recording, 'first_scan': s.first, 'last_scan': s.last,
                   'start_s': num(s.start), 'end_s': num(s.end)} for s in fit.spans],
        'estimates': {k: {'value': num(e.value), 'se': num(e.se), 'samples': e.samples,
                          'how': e.note} for k, e in fit.estimates.items()},
        'noise_by_range': [{'range_lo_m': num(b.lo), 'range_hi_m': num(b.hi),
                            'sigma_m': num(b.sigma), 'se_m': num(b.se), 'samples': b.n}
                           for b in fit.noise_bins],
        'invalid_return_ramps': [{'covariate': r.covariate, 'p0': num(r.p0), 'p1': num(r.p1),
                                  'start': num(r.start), 'lrt': num(r.lrt),
                                  'dispersion': num(r.dispersion), 'held_out': r.held_out,
                                  'kept': r.significant}
                                 for r in fit.ramps],
        'comparison': [{'span': _span_text(c.span), 'figures': {
            f.figure: {'real': num(f.real), 'simulated': num(f.simulated), 'se': num(f.se),
                       'z': num(f.z)} for f in c.figures},
            'front_beam': None if c.front is None else {
                side: {'mean_m': num(b.mean), 'std_m': num(b.std), 'scans': b.readings,
                       'invalid_fraction': num(b.invalid)}
                for side, b in zip(('real', 'simulated'), c.front)}} for c in comparisons],
    }


def write_report(directory: Path, fit: LidarFit, comparisons: Sequence[SpanComparison],
                 sources: Sequence[str], *, seed: int | None = None,
                 out_yaml: str | None = None) -> None:
    """report.md, estimates.yaml, noise_vs_range.png, static_spans.png and index.html (the
    page to read: :func:`write_page`) in ``directory`` (an existing, empty directory: the caller
    makes it atomic)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / 'estimates.yaml').write_text(
        yaml.safe_dump(_estimates_data(fit, comparisons), sort_keys=False), encoding='utf-8')
    lines = ['# Lidar error fit', '', f'Recordings: {", ".join(sources)}', '', '```']
    lines += summary_lines(fit, comparisons)
    lines += ['```', '', '## Noise by range', '', '| range [m] | sigma [mm] | se [mm] | n |',
              '|---|---|---|---|']
    lines += [f'| {b.lo:.2f}-{b.hi:.2f} | {b.sigma * 1000:.2f} | {b.se * 1000:.2f} | {b.n} |'
              for b in fit.noise_bins]
    lines += ['', '## Fitted config', '', '```yaml', fitted_yaml(fit, sources).rstrip(), '```',
              '', '![noise](noise_vs_range.png)', '![static](static_spans.png)', '']
    (directory / 'report.md').write_text('\n'.join(lines), encoding='utf-8')
    _plots(directory, fit)
    write_page(directory, fit, comparisons, sources, seed=seed, out_yaml=out_yaml)


def _words(name: str) -> str:
    """What an estimated key means, in words (the config field's description)."""
    from rc_sim_sensors.lidar_config import config_fields

    docs = {f.name: str(f.metadata.get('doc', '')) for f in config_fields()}
    doc = docs.get(name, '').split('. ')[0].rstrip('.')
    return f'{doc} ({name})' if doc else name.replace('_', ' ')


def _user(name: str, value: float) -> str:
    text = _fmt(name, value)
    return 'not available' if text == 'n/a' else text


def write_page(directory: Path, fit: LidarFit, comparisons: Sequence[SpanComparison],
               sources: Sequence[str], *, seed: int | None = None,
               out_yaml: str | None = None) -> Path:
    """``index.html`` of the report directory: verdict, estimates in words, the real against
    simulated statistics, the noise by range, the plots."""
    from rc_sim_sensors.lidar_pages import write_fit_page

    bad = [c for c in comparisons if not c.indistinguishable]
    if not comparisons:
        verdict, ok = 'No still span was found: nothing could be checked.', False
    elif not bad:
        verdict, ok = (f'The simulated scans match the real ones: on all {len(comparisons)} '
                       f'still span{"s" if len(comparisons) > 1 else ""}, every statistic is '
                       f'within {Z_LIMIT:g} standard errors.'), True
    else:
        verdict, ok = (f'{len(bad)} of {len(comparisons)} still spans differ from the '
                       f'simulation on some statistic (more than {Z_LIMIT:g} standard errors; '
                       'marked in the table below).'), False
    estimates = []
    for name, e in fit.estimates.items():
        value = _user(name, e.value)
        if math.isfinite(e.se) and e.se > 0:
            value += f' ± {_user(name, e.se)}'
        estimates.append([_words(name), value, f'{e.samples:,}', e.note])
    comparison = _comparison_rows(comparisons)
    noise = [[f'{b.lo:.2f}-{b.hi:.2f} m', f'{b.sigma * 1000:.2f} mm',
              f'{b.se * 1000:.2f} mm' if math.isfinite(b.se) else 'not available', f'{b.n:,}']
             for b in fit.noise_bins]
    spans = [[s.recording, f'{s.first}-{s.last}', f'{s.scans:,}',
              f'{s.start:.2f}-{s.end:.2f} s'] for s in fit.spans]
    return write_fit_page(directory, sources=sources, verdict=verdict, verdict_ok=ok,
                          estimates=estimates, spans=spans, comparison=comparison, noise=noise,
                          seed=seed, out_yaml=out_yaml)


def _comparison_rows(comparisons: Sequence[SpanComparison]) -> list[list[str]]:
    """One row per statistic over every span: real and simulated (their range over the
    spans), the largest difference in standard errors and the spans that differ; statistics
    that are zero everywhere are left out."""
    rows = []
    names = [f.figure for f in comparisons[0].figures] if comparisons else []
    for k, name in enumerate(names):
        figs = [c.figures[k] for c in comparisons]
        values = [v for f in figs for v in (f.real, f.simulated)]
        if all(v == 0 for v in values):
            continue

        def spread(xs: list[float], name: str = name) -> str:
            lo, hi = min(xs), max(xs)
            return _user(name, lo) if lo == hi else f'{_user(name, lo)} to {_user(name, hi)}'

        finite = [f for f in figs if math.isfinite(f.z)]
        worst = max(finite, key=lambda f: abs(f.z)) if finite else None
        differ = sum(1 for f in figs if not f.indistinguishable)
        rows.append([name, spread([f.real for f in figs]), spread([f.simulated for f in figs]),
                     f'{worst.z:+.2f}' if worst is not None else 'not available',
                     f'{differ} of {len(figs)}' if differ else 'none'])
    return rows


def _plots(directory: Path, fit: LidarFit) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))  # 900 x 500 pixels: readable at 100 %
    x = np.array([b.mean_range for b in fit.noise_bins])
    ax.errorbar(x, [b.sigma * 1000 for b in fit.noise_bins],
                yerr=[b.se * 1000 for b in fit.noise_bins], fmt='o', label='range bins')
    d = np.linspace(0.0, max(float(x.max()), 0.1) * 1.1, 50)
    c = fit.config
    ax.plot(d, (c.noise_stddev + c.noise_stddev_per_meter * d) * 1000, label='fitted sigma(d)')
    ax.set_xlabel('range [m]')
    ax.set_ylabel('noise sigma [mm]')
    ax.legend()
    fig.tight_layout()
    fig.savefig(directory / 'noise_vs_range.png', dpi=100)
    plt.close(fig)
    fig, axes = plt.subplots(len(fit.traces), 1, figsize=(9, 1 + 2.8 * len(fit.traces)),
                             squeeze=False)
    for ax, trace in zip(axes[:, 0], fit.traces):
        ax.semilogy(trace.time, trace.raw * 1000, '.', label='raw scan-to-scan')
        ax.semilogy(trace.time, trace.compensated * 1000, '.', label='motion-compensated')
        for span in (s for s in fit.spans if s.recording == trace.recording):
            ax.axvspan(span.start, span.end, alpha=0.2, color='green')
        ax.set_title(trace.recording, fontsize=11)
        ax.set_ylabel('scale [mm]')
    axes[-1, 0].set_xlabel('time [s] (static spans shaded)')
    axes[0, 0].legend(fontsize=10)
    fig.tight_layout()
    fig.savefig(directory / 'static_spans.png', dpi=100)
    plt.close(fig)
