"""Generate the figures of docs/lidar_errors.md (fixed seeds: re-running gives the same images).

    MPLBACKEND=Agg python rc_sim_sensors/scripts/plot_lidar_presets.py [--out docs/img]

Writes ``lidar_preset_<name>.png`` (ideal vs corrupted scan of the synthetic room, top view and
range vs angle) for every preset, and ``lidar_bias_models.png`` (random-walk and Gauss-Markov bias
with their analytic +-2 sigma envelopes).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from rc_sim_description.atomic import atomic_output_file
from rc_sim_description.params import load_vehicle_params
from rc_sim_sensors.lidar_config import PRESETS, LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel
from rc_sim_sensors.scene import room_scan

_LIDAR = load_vehicle_params().sensors  # the car's lidar spec (vehicle.yaml)
BEAMS = _LIDAR.lidar_samples
FOV = _LIDAR.lidar_fov
SEED = 2024


def _save(fig: object, path: Path) -> None:
    with atomic_output_file(path) as tmp:
        fig.savefig(tmp, format='png', dpi=110)  # type: ignore[attr-defined]


def plot_preset(name: str, out_dir: Path) -> Path:
    """Ideal vs corrupted scan (after 40 scans, so the bias has drifted) for one preset."""
    import matplotlib.pyplot as plt

    config = LidarErrorConfig.from_preset(name)
    angles = np.linspace(-FOV / 2, FOV / 2, BEAMS)
    ideal, incidence = room_scan(angles)
    intensity = 2.0 * np.cos(incidence) / (1.0 + 0.2 * ideal)
    model = LidarErrorModel(config, SEED)
    scans = 40
    out = model.apply(np.tile(ideal, (scans, 1)), angles, np.arange(scans) / 40.0,
                      np.tile(intensity, (scans, 1)), np.tile(incidence, (scans, 1)))
    k = int(np.flatnonzero(~out.lost)[-1])
    noisy = out.ranges[k]
    fig, (ax_xy, ax_r) = plt.subplots(1, 2, figsize=(12, 5.6),
                                      gridspec_kw={'width_ratios': [1, 1.4]})
    ax_xy.plot(ideal * np.cos(angles), ideal * np.sin(angles), '-', color='0.6', lw=1,
               label='ideal')
    finite = np.isfinite(noisy)
    ax_xy.plot(noisy[finite] * np.cos(angles[finite]), noisy[finite] * np.sin(angles[finite]),
               '.', ms=2.5, color='tab:red', label='corrupted')
    ax_xy.plot([0], [0], 'k^', ms=8)
    ax_xy.set_aspect('equal')
    ax_xy.set_xlabel('x [m] (laser frame)')
    ax_xy.set_ylabel('y [m]')
    ax_xy.legend(loc='lower left', fontsize=8)
    ax_xy.set_title(f'preset {name}: top view')
    deg = np.degrees(angles)
    ax_r.plot(deg, ideal, '-', color='0.6', lw=1, label='ideal')
    ax_r.plot(deg[finite], noisy[finite], '.', ms=2, color='tab:red', label='corrupted')
    top = max(float(np.max(ideal)), float(np.max(noisy[finite]) if finite.any() else 0.0))
    for value, marker, label in ((np.inf, 'v', '+inf (no return / beyond range_max)'),
                                 (-np.inf, '^', '-inf (below range_min)')):
        hit = noisy == value
        if hit.any():
            ax_r.plot(deg[hit], np.full(hit.sum(), top * 1.04 if value > 0 else 0.0), marker,
                      ms=3, color='tab:blue' if value > 0 else 'tab:green',
                      label=f'{label}: {hit.mean():.1%}')
    ax_r.set_xlabel('beam angle [deg]')
    ax_r.set_ylabel('range [m]')
    ax_r.legend(loc='upper center', bbox_to_anchor=(0.5, -0.12), ncol=3, fontsize=8)
    bias = np.asarray(out.bias)
    ax_r.set_title(f'scan {k} of {scans}, bias {float(bias[k]) * 1000:.1f} mm, '
                   f'stamp +{config.latency * 1000:.0f} ms')
    fig.tight_layout()
    path = out_dir / f'lidar_preset_{name}.png'
    _save(fig, path)
    plt.close(fig)
    return path


def plot_bias_models(out_dir: Path) -> Path:
    """Random walk (Var = k sigma_b^2) and Gauss-Markov (Var = sigma_g^2 (1 - phi^2k)) bias."""
    import matplotlib.pyplot as plt

    scans, runs, dt = 400, 200, 0.025
    rw = LidarErrorConfig.from_mapping({'bias_walk_stddev': 0.001}, 'plot')
    gm = LidarErrorConfig.from_mapping({'bias_markov_stddev': 0.01,
                                        'bias_correlation_time': 2.0}, 'plot')
    k = np.arange(scans)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    for ax, config, title, envelope in (
            (axes[0], rw, 'random walk, sigma_b = 1 mm/scan', 2 * 0.001 * np.sqrt(k)),
            (axes[1], gm, 'Gauss-Markov, sigma_g = 10 mm, tau = 2 s',
             2 * 0.01 * np.sqrt(1 - np.exp(-2 * k * dt / 2.0)))):
        for run in range(runs):
            model = LidarErrorModel(config, SEED + run)
            out = model.apply(np.ones((scans, 1)), np.zeros(1), k * dt)
            ax.plot(k * dt, np.asarray(out.bias) * 1000, lw=0.5, alpha=0.25, color='tab:blue')
        ax.plot(k * dt, envelope * 1000, 'k--', lw=1.5, label='analytic +-2 sigma')
        ax.plot(k * dt, -envelope * 1000, 'k--', lw=1.5)
        ax.set_title(title)
        ax.set_xlabel('time [s] (40 Hz scans)')
        ax.legend(loc='upper left', fontsize=8)
    axes[0].set_ylabel('bias [mm]')
    fig.tight_layout()
    path = out_dir / 'lidar_bias_models.png'
    _save(fig, path)
    plt.close(fig)
    return path


def main() -> None:
    """Write every figure."""
    import matplotlib

    matplotlib.use('Agg')
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--out', default=str(Path(__file__).resolve().parents[2] / 'docs' / 'img'))
    args = parser.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in PRESETS:
        print(plot_preset(name, out_dir))
    print(plot_bias_models(out_dir))


if __name__ == '__main__':
    main()
