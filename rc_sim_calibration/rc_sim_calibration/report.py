"""Fit report (``--report DIR``): ``index.html`` (and the same text as ``summary.md``), figures.

The page opens with one screen: the verdict; a table of the held-out prediction errors of the
calibrated model, the nominal car, CTRV and the kinematic bicycle per held-out recording; the
parameters that moved, with how well the recordings determine each ("well determined",
"confounded with X", "not determined by these recordings"). Then what ran, the warnings and the
details: the training errors, the structure comparison, the staged identification, every
parameter with its bounds, the pairs the data do not separate, the figures (error percentile
bands per held-out recording, which stay legible with hundreds of windows; the steering map; the
drive curve) and the files. No number is shown as ``nan`` or ``inf`` (``n/a`` instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import html
import math
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.fit import FitResult, HeldSet, parameter_unit
from rc_sim_calibration.predict import predict, servo_time_constant, steering_targets
from rc_sim_calibration.problem import CHANNEL_UNITS, sample_errors
from rc_sim_calibration.settings import OFFSET_NAMES, FitSettings, parameter_value
from rc_sim_calibration.staged import Signals, signals
from rc_sim_calibration.verdict import CHANNEL_NAMES, PREDICTOR_LABELS, PREDICTORS, num, ordinal
from rc_sim_description.params import VehicleParams

__all__ = ['Report', 'build_report', 'render_html', 'render_markdown', 'write_report']

#: a parameter "moved" when it changed by more than this fraction of its nominal value (or of
#: its search range, for a nominal value of 0)
MOVED = 0.01
#: percentiles of the error bands (and the median)
BANDS = (10.0, 50.0, 90.0)


@dataclass
class Report:
    """What the page and summary.md show, top to bottom (texts and table rows, no markup)."""

    title: str
    lead: str
    verdict: str
    verdict_ok: bool
    scheme: str
    held_header: list[str]
    held_rows: list[list[str]]
    moved_header: list[str]
    moved_rows: list[list[str]]
    unmoved: str
    ran: list[tuple[str, str]]
    warnings: list[str]
    details: list[tuple[str, str, list[str], list[list[str]]]] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)


def _rel_change(old: float, new: float, span: float) -> float:
    scale = abs(old) if old != 0 else max(abs(span), 1e-12)
    return abs(new - old) / scale


def _value(v: float, unit: str) -> str:
    text = num(v, 4)
    return text if text == 'n/a' or unit in ('', '-') else f'{text} {unit}'


def build_report(result: FitResult, settings: FitSettings, *, command: str = '',
                 inputs: Sequence[tuple[str, str]] = (), figures: Sequence[tuple[str, str]] = ()
                 ) -> Report:
    """The report of a fit (see the module docstring)."""
    v = result.verdict
    label = result.scores[result.chosen].candidate.label
    recs = ', '.join(Path(n).name for n in result.train_names)
    lead = (f'rc-sim fitted to {len(result.train_names)} recording(s) ({recs}) with the structure '
            f'"{label}". Errors are RMSEs of open-loop predictions over {settings.horizon:g}-s '
            'windows, each started from the measured state (docs/prediction_windows.md).')
    verdict = v.headline().removeprefix('verdict: ')
    verdict = verdict[:1].upper() + verdict[1:] + '.'
    held_header = ['recording', 'windows', 'predictor',
                   *(f'{CHANNEL_NAMES[ch]} [{u}]' for ch, u in CHANNEL_UNITS.items())]
    held_rows = []
    for s in v.held_out:
        for k, pred in enumerate(PREDICTORS):
            vals = s.of(pred)
            held_rows.append([s.label if k == 0 else '', str(s.windows) if k == 0 else '',
                              PREDICTOR_LABELS[pred],
                              *(num(vals.get(ch, math.nan)) for ch in CHANNEL_UNITS)])
    status = result.status
    moved_rows, unmoved = [], []
    for i, name in enumerate(result.names):
        if name in OFFSET_NAMES:
            continue
        try:
            nominal = parameter_value(result.nominal, name)
        except CalibrationError:
            nominal = float(result.start[i])
        unit = parameter_unit(name)
        span = float(result.upper[i] - result.lower[i])
        if _rel_change(nominal, float(result.values[i]), span) > MOVED:
            moved_rows.append([name, _value(nominal, unit), _value(float(result.values[i]), unit),
                               status[i]])
        else:
            unmoved.append(name)
    moved_header = ['parameter', 'nominal car', 'calibrated', 'how well the recordings '
                    'determine it']
    ran = [('command', command)] if command else []
    ran += list(inputs)
    ran += [('recordings fitted', recs)]
    if result.validate_names:
        ran.append(('validation recordings', ', '.join(Path(n).name
                                                       for n in result.validate_names)))
    ran += [('held out', v.scheme or 'nothing (too few windows)'),
            ('seed', str(settings.seed)),
            ('fit time', f'{result.wall_time:.1f} s wall, {result.cpu_time:.1f} s CPU, '
                         f'{result.n_evals} model evaluations')]
    try:
        from rc_sim_description.report_page import software_versions

        ran.append(('software', software_versions()))
    except ImportError:       # pragma: no cover - older rc_sim_description
        pass
    rep = Report(title='Calibration report', lead=lead, verdict=verdict, verdict_ok=v.ok,
                 scheme=v.scheme, held_header=held_header, held_rows=held_rows,
                 moved_header=moved_header, moved_rows=moved_rows,
                 unmoved=', '.join(unmoved), ran=ran, warnings=list(result.warnings),
                 figures=list(figures))
    rep.details = _details(result, settings)
    return rep


def _details(result: FitResult, settings: FitSettings
             ) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """(title, sentence, header, rows) of the detail tables."""
    out = []
    train_rows = [[s.label, str(s.windows), *(f'{num(s.calibrated[ch])} (nominal '
                                               f'{num(s.nominal[ch])})' for ch in CHANNEL_UNITS)]
                  for s in result.verdict.training]
    out.append(('Errors on the fitted windows', 'How well the written model follows the '
                'recordings it was fitted on (a fit is judged on the held-out ones above).',
                ['recording', 'windows', *(f'{CHANNEL_NAMES[ch]} [{u}]'
                                            for ch, u in CHANNEL_UNITS.items())], train_rows))
    every = ordinal(settings.holdout_every)
    rows = []
    for i, sc in enumerate(result.scores):
        rows.append([sc.candidate.label, num(sc.cost, 4) if len(result.scores) > 1 else '-',
                     *(num(sc.rmse.get(ch, math.nan)) for ch in CHANNEL_UNITS),
                     'chosen' if i == result.chosen else ''])
    out.append(('Model structures compared', f'Each candidate was fitted on the training '
                f'windows and scored on every {every} pair of windows, left out for this choice '
                f"(cost: the fit's normalised error; lower is better; within "
                f'{settings.parsimony:.0%} the simpler structure wins).',
                ['structure', 'cost', *(f'{CHANNEL_NAMES[ch]} [{u}]'
                                        for ch, u in CHANNEL_UNITS.items()), ''], rows))
    out.append(('Staged identification', 'Start values from the data, before the search.',
                ['stage'], [[n] for n in result.stage.notes] or [['none']]))
    status = result.status
    rows = []
    for i, name in enumerate(result.names):
        unit = parameter_unit(name)
        try:
            nominal = parameter_value(result.nominal, name)
        except CalibrationError:
            nominal = math.nan
        rows.append([name, _value(nominal, unit), _value(float(result.start[i]), unit),
                     _value(float(result.values[i]), unit),
                     f'{num(float(result.lower[i]), 4)} to {num(float(result.upper[i]), 4)}',
                     status[i]])
    for key, value in result.structure.items():
        rows.append([key, '', '', str(value), 'structure', ''])
    out.append(('Every fitted parameter', 'Nominal: the car without calibration; start: the '
                'staged identification the search started from.',
                ['parameter', 'nominal', 'start', 'calibrated', 'search range', 'determined'],
                rows))
    pairs = [[a, b, f'{rho:+.2f}'] for a, b, rho in result.identifiability.confounded_pairs]
    out.append(('Pairs the recordings do not separate', 'Correlation of the two estimates: '
                'near +1 or -1, the data fix only a combination of the two (the warnings say '
                'what separates them).', ['parameter', 'parameter', 'correlation'], pairs))
    if result.offset_fitted:
        o = result.offset
        out.append(('Measured point', 'Fitted (not a vehicle key): give it to rcsim replay as '
                    f'--odom-offset {o[0]:.4f},{o[1]:.4f},{o[2]:.5f}, or to the recording '
                    f'description as pose offset [{o[0]:.4f}, {o[1]:.4f}, {o[2]:.5f}].', [], []))
    return out


def render_markdown(rep: Report) -> str:
    """``summary.md``: the report as Markdown."""
    def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
        if not rows:
            return []
        return ['| ' + ' | '.join(header) + ' |', '|' + ' --- |' * len(header),
                *('| ' + ' | '.join(c.replace('|', '/') for c in r) + ' |' for r in rows), '']

    lines = [f'# {rep.title}', '', rep.lead, '', f'**Verdict: {rep.verdict}**', '',
             f'Held out: {rep.scheme}.' if rep.scheme else '', '',
             '## Held-out prediction error', '', *table(rep.held_header, rep.held_rows),
             '## What the calibration changed', '', *table(rep.moved_header, rep.moved_rows)]
    if rep.unmoved:
        lines += [f'Fitted but unchanged (within {MOVED:.0%}): {rep.unmoved}.', '']
    lines += ['## What ran', '', *(f'- {k}: {v}' for k, v in rep.ran), '', '## Warnings', '']
    lines += [f'- {w}' for w in rep.warnings] or ['- none']
    lines.append('')
    for title, sentence, header, rows in rep.details:
        lines += [f'## {title}', '', sentence, '', *table(header, rows)]
    if rep.figures:
        lines += ['## Figures', '', *(f'- `{n}`: {c}' for n, c in rep.figures), '']
    return '\n'.join(lines)


_STYLE = '''
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;
 max-width:1100px;margin:1.2em auto;padding:0 1.2em;color:#1d1d1d;line-height:1.4;font-size:16px}
h1{font-size:1.6em;margin:.2em 0 .1em} h2{font-size:1.2em;margin:1.4em 0 .4em;
 border-bottom:1px solid #ddd;padding-bottom:.2em}
p.lead{color:#444;margin:.2em 0 .8em}
p.verdict{font-size:1.12em;background:#eef6ee;border-left:5px solid #3a8f3a;padding:.5em .9em}
p.verdict.bad{background:#fbeaea;border-left-color:#c0392b}
table{border-collapse:collapse;margin:.3em 0 .8em} td,th{border-bottom:1px solid #e3e3e3;
 padding:.25em .9em .25em 0;text-align:left;vertical-align:top}
th{color:#555;font-weight:600} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.cal td{font-weight:600} tr.first td{border-top:2px solid #bbb}
table.kv td:first-child{color:#555;white-space:nowrap;padding-right:1.4em}
code{background:#f2f2f2;padding:.1em .3em;border-radius:3px;font-size:.92em;overflow-wrap:anywhere}
figure{margin:1em 0 1.8em} img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{color:#444} p.small{color:#555;font-size:.95em}
'''


def _numeric(text: str) -> bool:
    try:
        float(text.split()[0])
    except (ValueError, IndexError):
        return False
    return True


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], *,
                held: bool = False) -> list[str]:
    esc = html.escape
    out = ['<table><tr>' + ''.join(f'<th>{esc(h)}</th>' for h in header) + '</tr>']
    for row in rows:
        cls = []
        if held and row[2] == 'calibrated':
            cls.append('cal')
        if held and row[0]:
            cls.append('first')
        attr = f' class="{" ".join(cls)}"' if cls else ''
        out.append(f'<tr{attr}>' + ''.join(
            f'<td class="num">{esc(c)}</td>' if i and _numeric(c) else f'<td>{esc(c)}</td>'
            for i, c in enumerate(row)) + '</tr>')
    out.append('</table>')
    return out


def render_html(rep: Report, files: Sequence[Path]) -> str:
    """``index.html``: the report as a static page (no script, no network)."""
    esc = html.escape
    parts = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f'<title>{esc(rep.title)}</title><style>{_STYLE}</style></head><body>',
             f'<h1>{esc(rep.title)}</h1>', f'<p class="lead">{esc(rep.lead)}</p>',
             f'<p class="verdict{"" if rep.verdict_ok else " bad"}">{esc(rep.verdict)}</p>']
    if rep.scheme:
        parts.append(f'<p class="small">Held out: {esc(rep.scheme)}.</p>')
    parts += ['<h2>Held-out prediction error</h2>',
              *_html_table(rep.held_header, rep.held_rows, held=True),
              '<h2>What the calibration changed</h2>']
    parts += _html_table(rep.moved_header, rep.moved_rows) if rep.moved_rows else \
        ['<p>No parameter moved by more than 1 %.</p>']
    if rep.unmoved:
        parts.append(f'<p class="small">Fitted but unchanged (within {MOVED:.0%}): '
                     f'{esc(rep.unmoved)}.</p>')
    parts += ['<h2>What ran</h2>', '<table class="kv">']
    for key, value in rep.ran:
        cell = f'<code>{esc(value)}</code>' if key == 'command' else esc(value)
        parts.append(f'<tr><td>{esc(key)}</td><td>{cell}</td></tr>')
    parts += ['</table>', '<h2>Warnings</h2>', '<ul>']
    parts += [f'<li>{esc(w)}</li>' for w in rep.warnings] or ['<li>none</li>']
    parts.append('</ul>')
    for title, sentence, header, rows in rep.details:
        parts += [f'<h2>{esc(title)}</h2>', f'<p class="small">{esc(sentence)}</p>']
        if rows:
            parts += _html_table(header, rows)
    names = {p.name for p in files}
    shown = [(n, c) for n, c in rep.figures if n in names]
    if shown:
        parts.append('<h2>Figures</h2>')
        parts += [f'<figure><img src="{esc(n)}" alt="{esc(c)}"><figcaption>{esc(c)} '
                  f'(<a href="{esc(n)}">{esc(n)}</a>)</figcaption></figure>' for n, c in shown]
    parts += ['<h2>Files</h2>', '<table><tr><th>file</th><th>size</th></tr>']
    parts += [f'<tr><td><a href="{esc(p.name)}">{esc(p.name)}</a></td>'
              f'<td class="num">{p.stat().st_size / 1000:.1f} kB</td></tr>' for p in files]
    parts += ['</table>', '</body></html>', '']
    return '\n'.join(parts)


def _band_figure(plt: Any, path: Path, held: HeldSet, result: FitResult,
                 settings: FitSettings, title: str) -> None:
    """Percentile bands (10-90 %, median) of the absolute error against the time into the
    window, for the calibrated and the nominal model: legible for any number of windows."""
    win = held.win
    pred = predict([result.nominal, held.params],
                   np.vstack([np.asarray(_nominal_offset(result), float),
                              np.asarray(held.offset, float)]), win, dt=settings.dt,
                   model=settings.model, integrator=settings.integrator,
                   load_transfer=settings.load_transfer)
    errs = sample_errors(pred, win)
    sc = win.scored()
    tau = win.tau[sc]
    edges = np.linspace(0.0, float(win.horizon), 11)
    mid = 0.5 * (edges[1:] + edges[:-1])
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    for ax, ch in zip(axes, CHANNEL_UNITS):
        for row, (label, colour) in enumerate((('nominal', 'C3'), ('calibrated', 'C0'))):
            e = np.abs(errs[ch][row][sc])
            ok = np.isfinite(e)
            q = np.full((len(BANDS), mid.size), np.nan)
            for k in range(mid.size):
                sel = ok & (tau >= edges[k]) & (tau <= edges[k + 1])
                if sel.sum() >= 3:
                    q[:, k] = np.percentile(e[sel], BANDS)
            ax.fill_between(mid, q[0], q[2], color=colour, alpha=0.2, lw=0)
            ax.plot(mid, q[1], color=colour, lw=2, label=f'{label}: median, 10-90 %')
        ax.set_xlabel('time into the window [s]')
        ax.set_ylabel(f'|{CHANNEL_NAMES[ch]} error| [{CHANNEL_UNITS[ch]}]')
        ax.set_ylim(bottom=0.0)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=9)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _nominal_offset(result: FitResult) -> tuple[float, float, float]:
    known = [o for o, k in zip(result.windows.offsets, result.windows.offset_known) if k]
    return known[0] if known else (0.0, 0.0, 0.0)


def _steady(s: Signals) -> np.ndarray:
    """Samples in a steady state: moving, yaw rate and speed nearly constant over 0.3 s."""
    dt = float(np.median(np.diff(s.t)))
    n = max(3, round(0.3 / dt))
    k = np.ones(n) / n
    dr = np.abs(np.gradient(s.r, s.t))
    return np.asarray((s.v > 0.3) & (np.convolve(dr, k, 'same') < 0.5) &
                      (np.convolve(np.abs(s.a), k, 'same') < 0.3))


def _steering_figure(plt: Any, path: Path, datasets: Sequence[Dataset], p: VehicleParams,
                     nominal: VehicleParams) -> None:
    kind = datasets[0].steering_kind
    g, m = p.geometry, p.mass_properties.mass
    k_us = m / g.wheelbase * (g.cg_to_rear_axle / p.tyres.cornering_stiffness_front -
                              g.cg_to_front_axle / p.tyres.cornering_stiffness_rear)
    cmds, angles = [], []
    for ds in datasets:
        s = signals(ds)
        lat = p.timing.command_latency
        cmd = np.interp(s.t - lat - servo_time_constant(p), s.tc, s.steer)
        ok = _steady(s)
        cmds.append(cmd[ok])
        angles.append(np.arctan(g.wheelbase * s.r[ok] / s.v[ok]) + k_us * s.v[ok] * s.r[ok])
    c, a = np.concatenate(cmds), np.concatenate(angles)
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.plot(c, a, 'k.', ms=2, alpha=0.4,
            label=f'steady samples: L r / v + K v r (K = {k_us:.3g} rad/(m/s²) of the calibrated '
            'tyres)')
    lo, hi = (-1.0, 1.0) if kind == 'normalised' else (float(np.min(c, initial=-0.3)),
                                                        float(np.max(c, initial=0.3)))
    grid = np.linspace(lo, hi, 201)
    ax.plot(grid, steering_targets(grid, nominal, kind), 'C3--', label='nominal map')
    ax.plot(grid, steering_targets(grid, p, kind), 'C0-', lw=2, label='fitted map')
    ax.set_xlabel('steering command ' + ('(normalised)' if kind == 'normalised' else '[rad]'))
    ax.set_ylabel('bicycle steering angle [rad]')
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title('Steering map: calibrated against nominal')
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _drive_figure(plt: Any, path: Path, datasets: Sequence[Dataset], p: VehicleParams,
                  nominal: VehicleParams) -> None:
    fig, ax = plt.subplots(figsize=(7, 5))
    throttle = datasets[0].drive_kind == 'throttle'
    xs, vs = [], []
    for ds in datasets:
        s = signals(ds)
        lag = p.drive.throttle_time_constant if throttle else p.drive.drive_time_constant
        cmd = np.interp(s.t - p.timing.command_latency - lag, s.tc, s.drive)
        ok = (np.abs(s.a) < 0.15) & (s.v > 0.05) & (np.abs(s.r) < 1.5)
        xs.append(cmd[ok])
        vs.append(s.v[ok])
    x, v = np.concatenate(xs), np.concatenate(vs)
    ax.plot(x, v, 'k.', ms=2, alpha=0.4, label='data: speed at nearly constant speed')
    grid = np.linspace(min(0.0, float(np.min(x, initial=0.0))), float(np.max(x, initial=1.0)),
                       200)
    for q, style, label in ((nominal, 'C3--', 'nominal'), (p, 'C0-', 'fitted')):
        ax.plot(grid, _steady_speed(grid, q, throttle), style, lw=2 if label == 'fitted' else 1,
                label=f'{label} steady state')
    ax.set_xlabel('duty (delayed, lagged)' if throttle else 'wheel speed command [rad/s]')
    ax.set_ylabel('speed of the measured point [m/s]')
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title('Drive: throttle -> speed' if throttle else
                 f'Drive: rolling radius {p.effective_wheel_radius:.5g} m')
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _steady_speed(x: np.ndarray, p: VehicleParams, throttle: bool) -> np.ndarray:
    """Steady speed: R omega (speed loop) or the root of (C_m1 - C_m2 v) d = C_r0 + C_r1 v +
    C_r2 v^2 with d the effective duty (throttle)."""
    if not throttle:
        return np.asarray(p.effective_wheel_radius * x)
    d = p.drive
    eff = np.sign(x) * np.maximum(np.abs(x) - d.throttle_dead_band, 0.0)
    out = np.zeros_like(x)
    for i, e in enumerate(np.abs(eff)):
        a, b, c = d.drag_coefficient, d.viscous_resistance + d.motor_back_emf_gain * e, \
            d.rolling_resistance - d.motor_force_gain * e
        if c >= 0:
            continue
        out[i] = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a) if a > 1e-12 else -c / b
    return np.asarray(np.sign(eff) * out)


def write_report(out_dir: Path, result: FitResult, settings: FitSettings,
                 train: Sequence[Dataset], validate: Sequence[Dataset], *, command: str = '',
                 inputs: Sequence[tuple[str, str]] = ()) -> list[Path]:
    """Write the figures, ``summary.md`` and ``index.html`` into an existing directory."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    written: list[Path] = []
    figures: list[tuple[str, str]] = []
    for i, held in enumerate(result.held_sets):
        for b, name in enumerate(held.win.names):
            if not (held.win.bag == b).any():
                continue
            sub = held.win.of_bag(b)
            path = out_dir / f'errors_{i:02d}_{Path(name).name}.png'
            what = 'held-out recording' if result.verdict.held_out and \
                result.verdict.held_out[0].kind != 'held-out windows' else 'held-out windows'
            _band_figure(plt, path, HeldSet(sub, held.params, held.offset), result, settings,
                         f'{Path(name).name} ({what}, {sub.n} windows)')
            written.append(path)
            figures.append((path.name, f'{Path(name).name}: how the prediction error grows '
                            'over a window, calibrated against nominal (median and 10-90 % of '
                            f'{sub.n} windows)'))
    data = [*train, *validate]
    written.append(out_dir / 'steering_map.png')
    _steering_figure(plt, written[-1], data, result.params, result.nominal)
    figures.append(('steering_map.png', 'steering command against the steering angle the '
                    'steady turns of the recordings imply, with the fitted and nominal maps'))
    if data[0].drive_kind != 'acceleration':  # an acceleration has no steady speed
        written.append(out_dir / 'drive_curve.png')
        _drive_figure(plt, written[-1], data, result.params, result.nominal)
        figures.append(('drive_curve.png', 'steady speed against the drive command, with the '
                        'fitted and nominal drive'))
    rep = build_report(result, settings, command=command, inputs=inputs, figures=figures)
    written.append(out_dir / 'summary.md')
    written[-1].write_text(render_markdown(rep), encoding='utf-8')
    files = sorted(p for p in out_dir.iterdir() if p.is_file())
    written.append(out_dir / 'index.html')
    written[-1].write_text(render_html(rep, files), encoding='utf-8')
    return written
