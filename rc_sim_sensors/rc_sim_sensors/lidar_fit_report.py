"""Outputs of ``rcsim lidar fit``: the fitted YAML, the printed summary and the report directory.

The YAML is the format ``lidar apply --config`` reads (a flat LidarErrorConfig mapping) with a
comment header saying where each value comes from. The report directory holds ``report.md``
(estimates with standard errors and sample counts, static spans, real vs simulated ``lidar
stats`` side by side), ``estimates.yaml`` (the same, machine-readable) and two plots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rc_sim_sensors.fit_compare import Z_LIMIT, FigureComparison, compare_stats
from rc_sim_sensors.lidar_fit import UNOBSERVABLE, LidarFit, Span, simulate_like
from rc_sim_sensors.scan_geometry import Scan
from rc_sim_sensors.scan_stats import ScanStats

__all__ = ['SpanComparison', 'compare_spans', 'fitted_yaml', 'parameter_errors', 'summary_lines',
           'write_report']

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


def compare_spans(fit: LidarFit, seed: int = 0) -> list[SpanComparison]:
    """Simulate every static span with the fitted config and compare the stats figures (the
    simulated figures carry the fit's own uncertainty, :func:`parameter_errors`)."""
    simulated = simulate_like(fit, seed=seed)
    out = []
    for span, real, sim in zip(fit.spans, fit.span_scans, simulated):
        a, b, figures = compare_stats(real, sim, f'{span.recording} {span.start:.1f}-'
                                      f'{span.end:.1f} s', seed, fit.config,
                                      parameter_errors(fit, real))
        out.append(SpanComparison(span, a, b, figures))
    return out


def _fmt(name: str, value: float) -> str:
    if not math.isfinite(value):
        return 'n/a'
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
                       'z': num(f.z)} for f in c.figures}} for c in comparisons],
    }


def write_report(directory: Path, fit: LidarFit, comparisons: Sequence[SpanComparison],
                 sources: Sequence[str]) -> None:
    """report.md, estimates.yaml, noise_vs_range.png and static_spans.png in ``directory``
    (an existing, empty directory: the caller makes it atomic)."""
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


def _plots(directory: Path, fit: LidarFit) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
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
    fig, axes = plt.subplots(len(fit.traces), 1, figsize=(7, 2.5 * len(fit.traces)),
                             squeeze=False)
    for ax, trace in zip(axes[:, 0], fit.traces):
        ax.semilogy(trace.time, trace.raw * 1000, '.', label='raw scan-to-scan')
        ax.semilogy(trace.time, trace.compensated * 1000, '.', label='motion-compensated')
        for span in (s for s in fit.spans if s.recording == trace.recording):
            ax.axvspan(span.start, span.end, alpha=0.2, color='green')
        ax.set_title(trace.recording, fontsize=9)
        ax.set_ylabel('scale [mm]')
    axes[-1, 0].set_xlabel('time [s] (static spans shaded)')
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(directory / 'static_spans.png', dpi=100)
    plt.close(fig)
