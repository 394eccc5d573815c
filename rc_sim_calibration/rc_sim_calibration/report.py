"""Fit report: PNG figures and a Markdown summary (``--report DIR``).

Figures: open-loop trajectory overlays (measured vs nominal vs calibrated) per bag; yaw rate,
speed and commanded steering vs time per bag; optimiser convergence; the parameter correlation
matrix at the optimum. ``summary.md`` holds the before/after metric tables, the fitted values
with standard errors and every warning (identifiability, over-fitting).
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from pathlib import Path

import numpy as np

from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.fit import FitResult, parameter_unit
from rc_sim_calibration.replay import open_loop
from rc_sim_calibration.settings import FitSettings
from rc_sim_description.params import VehicleParams

__all__ = ['summary_markdown', 'write_report']


def _metric_rows(label: str, names: Sequence[str],
                 table: dict[str, list[dict[str, dict[str, float]]]]) -> list[str]:
    rows = []
    for i, name in enumerate(names):
        cells = []
        for ch in ('position', 'speed', 'yaw_rate'):
            try:
                before = table['nominal'][i][ch]['rmse']
                after = table['calibrated'][i][ch]['rmse']
                cells.append(f'{before:.4g} → {after:.4g}')
            except (KeyError, IndexError):
                cells.append('–')
        rows.append(f'| {label} | `{Path(name).name}` | ' + ' | '.join(cells) + ' |')
    return rows


def summary_markdown(result: FitResult, settings: FitSettings) -> str:
    """The Markdown summary of a fit."""
    ident = result.identifiability
    lines = [
        '# Calibration report', '',
        f'- optimiser: {settings.optimizer} (budget {settings.budget}), polish: '
        f'{"least_squares" if settings.polish else "off"}; {result.n_evals} evaluations in '
        f'{result.wall_time:.1f} s',
        f'- cost ({settings.cost.metric}, windows of {settings.horizon:g} s): '
        f'{result.cost_start:.4g} (nominal) → {result.cost_final:.4g} (calibrated)',
    ]
    if result.validate_cost:
        lines.append(f'- validation cost: {result.validate_cost["nominal"]:.4g} → '
                     f'{result.validate_cost["calibrated"]:.4g}')
    lines += ['', '## Parameters', '',
              '| parameter | unit | start | fitted | std. error | bounds |',
              '| --- | --- | --- | --- | --- | --- |']
    for i, name in enumerate(result.names):
        lines.append(f'| `{name}` | {parameter_unit(name)} | {result.start[i]:.6g} | '
                     f'{result.values[i]:.6g} | {ident.std_errors[i]:.3g} | '
                     f'[{result.lower[i]:.4g}, {result.upper[i]:.4g}] |')
    lines += ['', f'Condition number of the Jacobian: {ident.condition_number:.3g}.', '',
              '## Windowed RMSE per bag (nominal → calibrated)', '',
              '| set | bag | position [m] | speed [m/s] | yaw rate [rad/s] |',
              '| --- | --- | --- | --- | --- |']
    lines += _metric_rows('train', result.train_names, result.train_metrics)
    lines += _metric_rows('validate', result.validate_names, result.validate_metrics)
    lines += ['', '## Warnings', '']
    lines += [f'- {w}' for w in result.warnings] or ['- none']
    lines += ['', 'Figures: `trajectories.png`, `timeseries_<bag>.png`, `convergence.png`, '
              '`correlation.png`.', '']
    return '\n'.join(lines)


def write_report(out_dir: Path, result: FitResult, settings: FitSettings, base: VehicleParams,
                 train: Sequence[Dataset], validate: Sequence[Dataset]) -> list[Path]:
    """Write the figures and ``summary.md`` into an existing directory ``out_dir``."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    written: list[Path] = []
    datasets = list(train) + list(validate)
    preds = [(open_loop(base, ds, settings), open_loop(result.params, ds, settings))
             for ds in datasets]

    cols = min(3, len(datasets))
    rows = math.ceil(len(datasets) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4.5 * rows), squeeze=False)
    for ax, ds, (nom, cal) in zip(axes.flat, datasets, preds):
        ax.plot(ds.x, ds.y, 'k-', lw=2, label='measured')
        ax.plot(nom['x'], nom['y'], 'C3--', label='nominal')
        ax.plot(cal['x'], cal['y'], 'C0-', label='calibrated')
        tag = 'validate' if ds in validate else 'train'
        ax.set_title(f'{Path(ds.name).name} ({tag})', fontsize=9)
        ax.set_aspect('equal', adjustable='datalim')
        ax.set_xlabel('x [m]')
        ax.set_ylabel('y [m]')
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(datasets):]:
        ax.axis('off')
    axes.flat[0].legend(fontsize=8)
    fig.suptitle('Open-loop replay from the initial measured state')
    fig.tight_layout()
    written.append(out_dir / 'trajectories.png')
    fig.savefig(written[-1], dpi=90)
    plt.close(fig)

    for i, (ds, (nom, cal)) in enumerate(zip(datasets, preds)):
        fig, axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
        axes[0].plot(ds.t, ds.yaw_rate, 'k-', lw=1, label='measured')
        axes[0].plot(nom['t'], nom['yaw_rate'], 'C3--', label='nominal')
        axes[0].plot(cal['t'], cal['yaw_rate'], 'C0-', label='calibrated')
        axes[0].set_ylabel('yaw rate [rad/s]')
        axes[0].legend(fontsize=8)
        axes[1].plot(ds.t, ds.vx, 'k-', lw=1)
        axes[1].plot(nom['t'], nom['vx'], 'C3--')
        axes[1].plot(cal['t'], cal['vx'], 'C0-')
        axes[1].set_ylabel('speed vx [m/s]')
        steer_cmd, _ = ds.commands_at(ds.t)
        axes[2].step(ds.t, steer_cmd, 'k-', where='post', lw=1, label='commanded')
        axes[2].plot(nom['t'], nom['steering'], 'C3--', label='nominal actual')
        axes[2].plot(cal['t'], cal['steering'], 'C0-', label='calibrated actual')
        axes[2].set_ylabel('steering [rad]')
        axes[2].set_xlabel('t [s] (from the first message)')
        axes[2].legend(fontsize=8)
        for ax in axes:
            ax.grid(True, alpha=0.3)
        fig.suptitle(Path(ds.name).name)
        fig.tight_layout()
        written.append(out_dir / f'timeseries_{i:02d}_{Path(ds.name).name}.png')
        fig.savefig(written[-1], dpi=90)
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    g = result.global_result
    ax.semilogy(g.history_evals, g.history_best, 'C0.-', label=settings.optimizer)
    if result.polish_result is not None:
        ax.axhline(result.cost_final, color='C2', ls='--', label='after polish')
    ax.set_xlabel('objective evaluations')
    ax.set_ylabel('best cost')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend()
    fig.tight_layout()
    written.append(out_dir / 'convergence.png')
    fig.savefig(written[-1], dpi=90)
    plt.close(fig)

    corr = result.identifiability.correlation
    n = len(result.names)
    fig, ax = plt.subplots(figsize=(1.0 * n + 3, 0.9 * n + 2))
    im = ax.imshow(corr, vmin=-1, vmax=1, cmap='RdBu_r')
    ax.set_xticks(range(n), result.names, rotation=45, ha='right', fontsize=8)
    ax.set_yticks(range(n), result.names, fontsize=8)
    for (i, j), v in np.ndenumerate(corr):
        ax.text(j, i, f'{v:+.2f}', ha='center', va='center', fontsize=7,
                color='w' if abs(v) > 0.6 else 'k')
    fig.colorbar(im, ax=ax, label='correlation')
    ax.set_title('Parameter correlations at the optimum')
    fig.tight_layout()
    written.append(out_dir / 'correlation.png')
    fig.savefig(written[-1], dpi=90)
    plt.close(fig)

    written.append(out_dir / 'summary.md')
    written[-1].write_text(summary_markdown(result, settings), encoding='utf-8')
    return written
