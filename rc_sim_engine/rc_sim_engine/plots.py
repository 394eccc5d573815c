"""PNG plots of a run (matplotlib, Agg backend).

* ``trajectory.png``: the world's obstacles, the base_link path of every car coloured by speed,
  start and collision markers, and one lidar scan drawn in the world frame (snapshot at mid-run).
* ``signals.png``: speed (actual vs ``/cmd_vel`` linear.x), yaw rate (ground truth vs IMU) and
  steering angle (actual vs ``/steering_angle`` command) against time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_description.atomic import atomic_output_file

__all__ = ['draw_world', 'plot_signals', 'plot_trajectory', 'save_run_plots']


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt


WALL_COLOR = '0.55'  # matplotlib grey level of walls and obstacles


def draw_world(ax: Any, world: Any) -> None:
    """Walls and obstacles of ``world`` on the axes ``ax`` (grey patches)."""
    from matplotlib.patches import Circle, Polygon

    # neutral grey: a coloured wall would read as a value of the speed colour map
    labels = iter(['walls / obstacles'])
    for corners in world.box_corners():
        ax.add_patch(Polygon(corners, closed=True, facecolor=WALL_COLOR, edgecolor='none',
                             label=next(labels, None)))
    for cx, cy, r in world.circles:
        ax.add_patch(Circle((cx, cy), r, facecolor=WALL_COLOR, edgecolor='none',
                            label=next(labels, None)))
    for cx, cy, r in world.rings:
        ax.add_patch(Circle((cx, cy), r, fill=False, edgecolor=WALL_COLOR, linewidth=2,
                            label=next(labels, None)))


def _scan_snapshot(result: Any, car: int
                   ) -> tuple[np.ndarray, np.ndarray, tuple[float, float]] | None:
    """World-frame points of the scan nearest mid-run and the base_link x, y it was taken at
    (pose interpolated from odometry)."""
    from rc_sim_engine.sensors import lidar_pose

    scan, odom = result.streams['scan'], result.streams['odom']
    if not len(scan.get('t_ns', ())) or len(odom['t_ns']) < 2:
        return None
    k = len(scan['t_ns']) // 2
    t = scan['t_ns'][k] * 1e-9
    ot = odom.t
    x = float(np.interp(t, ot, odom['x'][:, car]))
    y = float(np.interp(t, ot, odom['y'][:, car]))
    yaw = float(np.interp(t, ot, np.unwrap(odom['yaw'][:, car])))
    ox, oy, heading = lidar_pose(x, y, yaw, result.params[car])
    ranges = scan['ranges'][k, car].astype(np.float64)
    ok = np.isfinite(ranges)
    a = heading + result.scan_angles[ok]
    return ox + ranges[ok] * np.cos(a), oy + ranges[ok] * np.sin(a), (x, y)


def plot_trajectory(result: Any, path: str | os.PathLike[str], title: str = '') -> None:
    """Trajectory over the track walls with a lidar scan snapshot (PNG, written atomically)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 6.5), dpi=110)
    draw_world(ax, result.world)
    odom = result.streams['odom']
    xs, ys = [result.world.bounds(0.5)[:2]], [result.world.bounds(0.5)[2:]]
    sc = None
    for car in range(result.n_cars):
        x, y = odom['x'][:, car], odom['y'][:, car]
        speed = np.abs(odom['speed'][:, car])
        sc = ax.scatter(x, y, c=speed, s=3, cmap='viridis', zorder=3)
        ax.plot(x, y, color='0.6', linewidth=0.5, zorder=2)
        if len(x):
            ax.plot(x[0], y[0], marker='o', color='green', markersize=8, zorder=4,
                    label='start' if car == 0 else None)
            xs.append((float(x.min()), float(x.max())))
            ys.append((float(y.min()), float(y.max())))
        snap = _scan_snapshot(result, car) if result.scan_angles.size else None
        if snap is not None:
            ax.scatter(snap[0], snap[1], s=1.5, color='red', zorder=5,
                       label='lidar scan (mid-run)' if car == 0 else None)
            ax.plot(*snap[2], marker='^', color='red', markeredgecolor='black', markersize=8,
                    linestyle='none', zorder=6, label='car at that scan' if car == 0 else None)
    for i, event in enumerate(result.collisions):
        ax.plot(event.x, event.y, marker='x', color='black', markersize=10, mew=2, zorder=6,
                label='collision' if i == 0 else None)
    if sc is not None:
        from mpl_toolkits.axes_grid1 import make_axes_locatable

        cax = make_axes_locatable(ax).append_axes('right', size='4%', pad=0.1)
        fig.colorbar(sc, cax=cax, label='speed [m/s]')  # as tall as the equal-aspect axes
    lo_x = min(a for a, _ in xs) - 0.3
    hi_x = max(b for _, b in xs) + 0.3
    lo_y = min(a for a, _ in ys) - 0.3
    hi_y = max(b for _, b in ys) + 0.3
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    ax.set_aspect('equal')
    ax.set_xlabel('x [m] (odom)')
    ax.set_ylabel('y [m] (odom)')
    ax.set_title(title or f'{result.world.name}: trajectory')
    ax.grid(True, alpha=0.3)
    ax.legend(loc='upper center', bbox_to_anchor=(0.5, -0.1), ncol=4, fontsize=8,
              frameon=False)  # below the axes: never hides the track
    _save(fig, path)


def plot_signals(result: Any, path: str | os.PathLike[str], title: str = '') -> None:
    """Speed, yaw rate and steering angle against time (car 0; PNG, written atomically)."""
    plt = _pyplot()
    fig, axes = plt.subplots(3, 1, figsize=(9, 7.5), dpi=110, sharex=True)
    odom, imu, cmd = result.streams['odom'], result.streams['imu'], result.streams['commands']
    ot = odom.t
    ct = cmd.t if len(cmd.get('t_ns', ())) else np.zeros(0)
    axes[0].plot(ot, odom['speed'][:, 0], label='speed (ground truth)')
    if len(ct) and np.any(np.isfinite(cmd['linear_x'][:, 0])):
        axes[0].step(ct, cmd['linear_x'][:, 0], where='post', linestyle='--',
                     label='/cmd_vel linear.x')
    axes[0].set_ylabel('speed [m/s]')
    axes[1].plot(imu.t, imu['yaw_rate'][:, 0], color='tab:orange', label='/imu angular z')
    axes[1].plot(ot, odom['yaw_rate'][:, 0], color='tab:blue', linestyle=':',
                 label='yaw rate (ground truth)')
    axes[1].set_ylabel('yaw rate [rad/s]')
    axes[2].plot(ot, np.degrees(odom['steering'][:, 0]), label='steering (actual)')
    if len(ct):
        axes[2].step(ct, np.degrees(cmd['steering_angle'][:, 0]), where='post', linestyle='--',
                     label='/steering_angle command')
    axes[2].set_ylabel('steering [deg]')
    axes[2].set_xlabel('time [s]')
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(loc='upper right', fontsize=8)
    for event in result.collisions:
        for ax in axes:
            ax.axvline(event.t, color='black', linestyle='-.', linewidth=0.8)
    axes[0].set_title(title or 'signals')
    fig.tight_layout()
    _save(fig, path)


def _save(fig: Any, path: str | os.PathLike[str]) -> None:
    plt = _pyplot()
    try:
        with atomic_output_file(path) as tmp:
            fig.savefig(tmp, format='png', bbox_inches='tight')
    finally:
        plt.close(fig)


def save_run_plots(result: Any, directory: str | os.PathLike[str], title: str = ''
                   ) -> list[Path]:
    """Write ``trajectory.png`` and ``signals.png`` into ``directory``; returns their paths."""
    d = Path(directory)
    paths = [d / 'trajectory.png', d / 'signals.png']
    plot_trajectory(result, paths[0], title)
    plot_signals(result, paths[1], title)
    return paths
