"""Fit report: PNG figures and a Markdown summary (``--report DIR``).

``summary.md``: the verdict (per held-out recording: nominal, calibrated and CTRV RMSE of position,
speed and yaw rate), the structure comparison, the staged identification, the fitted values with
standard errors, warnings. Figures: residuals vs time per held-out recording (nominal and
calibrated), the fitted steering map and drive curve against the data, optimiser convergence and
the parameter correlation matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.fit import FitResult, parameter_unit
from rc_sim_calibration.predict import predict, servo_time_constant, steering_targets
from rc_sim_calibration.problem import CHANNEL_UNITS, sample_errors
from rc_sim_calibration.settings import FitSettings
from rc_sim_calibration.staged import Signals, signals
from rc_sim_calibration.verdict import BagScore
from rc_sim_calibration.windows import FitWindows, build_windows
from rc_sim_description.params import VehicleParams

__all__ = ['summary_markdown', 'write_report']



def _score_rows(scores: Sequence[BagScore]) -> list[str]:
    rows = []
    for s in scores:
        cells = [f'{s.nominal[ch]:.4g} → **{s.calibrated[ch]:.4g}** ({s.ctrv[ch]:.4g})'
                 for ch in CHANNEL_UNITS]
        rows.append(f'| {s.kind} | `{Path(s.name).name}` | {s.windows} | ' + ' | '.join(cells)
                    + ' |')
    return rows


def summary_markdown(result: FitResult, settings: FitSettings) -> str:
    """The Markdown summary of a fit."""
    ident = result.identifiability
    v = result.verdict
    lines = [
        '# Calibration report', '',
        f'**Verdict: {"held-out error did not rise" if v.ok else v.reason()}.**', '',
        f'- {len(result.train_names)} training and {len(result.validate_names)} validation '
        f'recording(s); {result.n_evals} evaluations in {result.wall_time:.1f} s wall '
        f'({result.cpu_time:.1f} s CPU)',
        f'- windows of {settings.horizon:g} s (docs/prediction_windows.md); cost '
        f'{result.cost_start:.4g} (data-initialised start) → {result.cost_final:.4g}',
        '', '## Held-out prediction (RMSE: nominal → **calibrated** (CTRV))', '',
        '| set | recording | windows | position [m] | speed [m/s] | yaw rate [rad/s] |',
        '| --- | --- | --- | --- | --- | --- |']
    lines += _score_rows(v.held_out) or ['| – | – | – | – | – | – |']
    lines += ['', 'Training windows (for reference):', '',
              '| set | recording | windows | position [m] | speed [m/s] | yaw rate [rad/s] |',
              '| --- | --- | --- | --- | --- | --- |']
    lines += _score_rows(v.training)
    lines += ['', '## Model structure', '',
              'Each candidate was fitted from the staged start on the training windows and '
              'scored on the held-out windows of the training recordings (every '
              f'{settings.holdout_every}th pair).', '',
              '| structure | cost | position [m] | speed [m/s] | yaw rate [rad/s] | chosen |',
              '| --- | --- | --- | --- | --- | --- |']
    for i, s in enumerate(result.scores):
        lines.append(f'| {s.candidate.label} | {s.cost:.4g} | {s.rmse["position"]:.4g} | '
                     f'{s.rmse["speed"]:.4g} | {s.rmse["yaw_rate"]:.4g} | '
                     f'{"yes" if i == result.chosen else ""} |')
    lines += ['', '## Staged identification (start values)', '']
    lines += [f'- {n}' for n in result.stage.notes] or ['- none']
    lines += ['', '## Parameters', '',
              '| parameter | unit | start | fitted | std. error | bounds |',
              '| --- | --- | --- | --- | --- | --- |']
    for i, name in enumerate(result.names):
        lines.append(f'| `{name}` | {parameter_unit(name)} | {result.start[i]:.6g} | '
                     f'{result.values[i]:.6g} | {ident.std_errors[i]:.3g} | '
                     f'[{result.lower[i]:.4g}, {result.upper[i]:.4g}] |')
    for key, value in result.structure.items():
        lines.append(f'| `{key}` | | | {value} | | structure |')
    if result.offset_fitted:
        o = result.offset
        lines += ['', f'Measured point (fitted; not a vehicle key): `--odom-offset '
                  f'{o[0]:.4f},{o[1]:.4f},{o[2]:.5f}` for `rcsim replay`, or `offset: '
                  f'[{o[0]:.4f}, {o[1]:.4f}, {o[2]:.5f}]` in the recording description.']
    lines += ['', f'Condition number of the Jacobian: {ident.condition_number:.3g}.', '',
              '## Warnings', '']
    lines += [f'- {w}' for w in result.warnings] or ['- none']
    lines += ['', 'Figures: `residuals_NN_<recording>.png`, `steering_map.png`, '
              '`drive_curve.png`, `convergence.png`, `correlation.png`.', '']
    return '\n'.join(lines)


def _offsets(result: FitResult) -> np.ndarray:
    return np.vstack([np.zeros(3), np.asarray(result.offset)])


def _residual_figure(plt: Any, path: Path, win: FitWindows, result: FitResult,
                     settings: FitSettings, title: str) -> None:
    pred = predict([result.nominal, result.params], _offsets(result), win, dt=settings.dt,
                   model=settings.model, integrator=settings.integrator,
                   load_transfer=settings.load_transfer)
    errs = sample_errors(pred, win)
    t = win.start[win.sample_window] + win.tau
    sc = win.scored()
    fig, axes = plt.subplots(3, 1, figsize=(10, 7), sharex=True)
    for ax, ch in zip(axes, CHANNEL_UNITS):
        for row, (label, style) in enumerate((('nominal', 'C3.'), ('calibrated', 'C0.'))):
            ax.plot(t[sc], errs[ch][row][sc], style, ms=2, label=label)
        ax.axhline(0.0, color='k', lw=0.5)
        ax.set_ylabel(f'{ch.replace("_", " ")} error [{CHANNEL_UNITS[ch]}]')
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8, markerscale=4)
    axes[-1].set_xlabel('t [s] from the first message (each window restarts from the '
                        'measured state)')
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


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
    ax.plot(c, a, 'k.', ms=2, alpha=0.4, label='data: L r / v + K v r (steady samples)')
    lo, hi = (-1.0, 1.0) if kind == 'normalised' else (float(np.min(c, initial=-0.3)),
                                                        float(np.max(c, initial=0.3)))
    grid = np.linspace(lo, hi, 201)
    ax.plot(grid, steering_targets(grid, nominal, kind), 'C3--', label='nominal map')
    ax.plot(grid, steering_targets(grid, p, kind), 'C0-', lw=2, label='fitted map')
    ax.set_xlabel('steering command ' + ('(normalised)' if kind == 'normalised' else '[rad]'))
    ax.set_ylabel('bicycle steering angle [rad]')
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f'Steering map (understeer gradient K = {k_us:.4g} rad/(m/s²))')
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
                 train: Sequence[Dataset], validate: Sequence[Dataset]) -> list[Path]:
    """Write the figures and ``summary.md`` into an existing directory ``out_dir``."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    written: list[Path] = []
    lookback = float(result.windows.t_cmd[0]) * -1.0
    if validate:
        win = build_windows(validate, settings.horizon, lookback=lookback, dt=settings.dt)
        sets = [(win.of_bag(b), name, 'validation') for b, name in enumerate(win.names)]
    else:
        held = result.windows.subset(result.holdout) if result.holdout.any() \
            else result.windows
        sets = [(held.of_bag(b), name, 'held-out windows')
                for b, name in enumerate(held.names) if (held.bag == b).any()]
    for i, (w, name, kind) in enumerate(sets):
        if not w.n:
            continue
        path = out_dir / f'residuals_{i:02d}_{Path(name).name}.png'
        _residual_figure(plt, path, w, result, settings, f'{Path(name).name} ({kind})')
        written.append(path)
    data = [*train, *validate]
    written.append(out_dir / 'steering_map.png')
    _steering_figure(plt, written[-1], data, result.params, result.nominal)
    written.append(out_dir / 'drive_curve.png')
    _drive_figure(plt, written[-1], data, result.params, result.nominal)

    fig, ax = plt.subplots(figsize=(7, 4))
    g = result.global_result
    ax.semilogy(g.history_evals, g.history_best, 'C0.-', label=settings.optimizer)
    if result.polish_result is not None:
        ax.axhline(result.cost_final, color='C2', ls='--', label='after polish')
    ax.set_xlabel('objective evaluations (chosen structure)')
    ax.set_ylabel('best cost')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend()
    fig.tight_layout()
    written.append(out_dir / 'convergence.png')
    fig.savefig(written[-1], dpi=90)
    plt.close(fig)

    corr = result.identifiability.correlation
    n = len(result.names)
    fig, ax = plt.subplots(figsize=(0.8 * n + 3, 0.7 * n + 2))
    im = ax.imshow(corr, vmin=-1, vmax=1, cmap='RdBu_r')
    ax.set_xticks(range(n), result.names, rotation=45, ha='right', fontsize=7)
    ax.set_yticks(range(n), result.names, fontsize=7)
    for (i, j), val in np.ndenumerate(corr):
        ax.text(j, i, f'{val:+.2f}', ha='center', va='center', fontsize=6,
                color='w' if abs(val) > 0.6 else 'k')
    fig.colorbar(im, ax=ax, label='correlation')
    ax.set_title('Parameter correlations at the optimum')
    fig.tight_layout()
    written.append(out_dir / 'correlation.png')
    fig.savefig(written[-1], dpi=90)
    plt.close(fig)

    written.append(out_dir / 'summary.md')
    written[-1].write_text(summary_markdown(result, settings), encoding='utf-8')
    return written
