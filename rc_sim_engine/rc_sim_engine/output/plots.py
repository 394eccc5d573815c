"""PNG plots of a run (matplotlib, Agg backend).

* ``trajectory.png``: the world's obstacles, the base_link path of every car coloured by speed
  (one colour per car when the speed is nearly constant: :func:`steady_speed`), start and
  collision markers, and one lidar scan drawn in the world frame (snapshot at mid-run).
* ``signals.png``: speed (actual vs ``/cmd_vel`` linear.x), yaw rate (ground truth vs IMU) and
  steering angle (actual vs ``/steering_angle`` command) against time.

Long runs are drawn from evenly decimated samples (at most :data:`MAX_POINTS` per curve; a
streamed run's result is decimated already), so a plot costs the same whatever the run length.
Margins are fixed (one drawing pass per figure).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_description.atomic import atomic_output_file

__all__ = ['MAX_POINTS', 'draw_world', 'plot_signals', 'plot_trajectory', 'save_run_plots',
           'steady_speed']

#: Samples per curve at most (evenly decimated beyond).
MAX_POINTS = 4096


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt


WALL_COLOR = '0.55'  # matplotlib grey level of walls and obstacles


def _every(n: int) -> slice:
    """Evenly spaced indices of at most MAX_POINTS of n samples (the last one kept)."""
    step = max(1, -(-n // MAX_POINTS))
    return slice((n - 1) % step, None, step)


def draw_world(ax: Any, world: Any) -> None:
    """Walls and obstacles of ``world`` on the axes ``ax`` (grey patches; the boxes as one
    collection: one artist however many walls)."""
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Circle

    # neutral grey: a coloured wall would read as a value of the speed colour map
    labels = iter(['walls / obstacles'])
    if len(world.boxes):
        ax.add_collection(PolyCollection(world.box_corners(), closed=True, facecolors=WALL_COLOR,
                                         edgecolors='none', label=next(labels)))
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
    from rc_sim_engine.sim.sensors import lidar_pose

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


def steady_speed(speed: np.ndarray, spread: float = 0.1) -> float | None:
    """The typical speed [m/s] when nearly every sample is close to it (the 5th to 95th
    percentile of the moving samples within ``spread`` of their median), else None."""
    moving = speed[np.isfinite(speed) & (speed > 0.02)]
    if moving.size < 10:
        return None
    lo, mid, hi = np.percentile(moving, [5.0, 50.0, 95.0])
    return float(mid) if hi - lo <= spread * max(float(mid), 0.1) else None


def plot_trajectory(result: Any, path: str | os.PathLike[str], title: str = '') -> None:
    """Trajectory over the track walls with a lidar scan snapshot (PNG, written atomically)."""
    plt = _pyplot()
    odom = result.streams['odom']
    sel = _every(len(odom['t_ns']))
    xs, ys = [result.world.bounds(0.5)[:2]], [result.world.bounds(0.5)[2:]]
    for car in range(result.n_cars):
        if len(odom['x'][sel, car]):
            xs.append((float(odom['x'][sel, car].min()), float(odom['x'][sel, car].max())))
            ys.append((float(odom['y'][sel, car].min()), float(odom['y'][sel, car].max())))
    lo_x = min(a for a, _ in xs) - 0.3
    hi_x = max(b for _, b in xs) + 0.3
    lo_y = min(a for a, _ in ys) - 0.3
    hi_y = max(b for _, b in ys) + 0.3
    # figure height from the equal-aspect axes (no tight bounding box: one drawing pass)
    steady = steady_speed(np.abs(odom['speed'][sel, :result.n_cars]).ravel())
    width_in, left, top_in, bottom_in = 8.0, 0.09, 0.45, 1.2
    right = 0.9 if steady is None else 0.97
    axes_w = (right - left) * width_in  # the colour bar takes 4 % + 0.1 in of it
    axes_w = axes_w if steady is not None else axes_w / 1.04 - 0.1
    axes_h = axes_w * (hi_y - lo_y) / (hi_x - lo_x)
    height_in = min(max(axes_h + top_in + bottom_in, 3.5), 11.0)
    fig, ax = plt.subplots(figsize=(width_in, height_in), dpi=110)
    fig.subplots_adjust(left=left, right=right, top=1 - top_in / height_in,
                        bottom=bottom_in / height_in)
    draw_world(ax, result.world)
    sc = None
    for car in range(result.n_cars):
        x, y = odom['x'][sel, car], odom['y'][sel, car]
        speed = np.abs(odom['speed'][sel, car])
        if steady is None:  # the colour shows the speed
            sc = ax.scatter(x, y, c=speed, s=3, cmap='viridis', zorder=3)
            ax.plot(x, y, color='0.6', linewidth=0.5, zorder=2)
        else:  # one speed nearly throughout: a colour bar would say nothing
            label = (f'path ({steady:.2f} m/s most of the time)' if result.n_cars == 1
                     else f'car {car} ({steady:.2f} m/s most of the time)' if car == 0
                     else f'car {car}')
            ax.plot(x, y, color=f'C{car % 10}', linewidth=1.6, zorder=3, label=label)
        if len(x):
            ax.plot(x[0], y[0], marker='o', color='green', markersize=8, zorder=4,
                    label='start' if car == 0 else None)
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
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    ax.set_aspect('equal')
    ax.set_xlabel('x [m] (odom)')
    ax.set_ylabel('y [m] (odom)')
    ax.set_title(title or f'{result.world.name}: trajectory')
    ax.grid(True, alpha=0.3)
    ax.legend(loc='upper center', bbox_to_anchor=(0.5, -0.6 / axes_h), ncol=3, fontsize=9,
              frameon=False)  # below the axes: never hides the track
    _save(fig, path)


def plot_signals(result: Any, path: str | os.PathLike[str], title: str = '') -> None:
    """Speed, yaw rate and steering angle against time (car 0; PNG, written atomically)."""
    plt = _pyplot()
    fig, axes = plt.subplots(3, 1, figsize=(9, 7.5), dpi=110, sharex=True)
    fig.subplots_adjust(left=0.09, right=0.98, top=0.95, bottom=0.07, hspace=0.1)
    odom, imu, cmd = result.streams['odom'], result.streams['imu'], result.streams['commands']
    so, si = _every(len(odom['t_ns'])), _every(len(imu['t_ns']))
    ot = odom.t[so]
    sc = _every(len(cmd.get('t_ns', ())))
    ct = cmd.t[sc] if len(cmd.get('t_ns', ())) else np.zeros(0)
    axes[0].plot(ot, odom['speed'][so, 0], label='speed (ground truth)')
    if len(ct) and np.any(np.isfinite(cmd['linear_x'][sc, 0])):
        axes[0].step(ct, cmd['linear_x'][sc, 0], where='post', linestyle='--',
                     label='/cmd_vel linear.x')
    axes[0].set_ylabel('speed [m/s]')
    axes[1].plot(imu.t[si], imu['yaw_rate'][si, 0], color='tab:orange', label='/imu angular z')
    axes[1].plot(ot, odom['yaw_rate'][so, 0], color='tab:blue', linestyle=':',
                 label='yaw rate (ground truth)')
    axes[1].set_ylabel('yaw rate [rad/s]')
    axes[2].plot(ot, np.degrees(odom['steering'][so, 0]), label='steering (actual)')
    if len(ct):
        axes[2].step(ct, np.degrees(cmd['steering_angle'][sc, 0]), where='post', linestyle='--',
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
    _save(fig, path)


def _save(fig: Any, path: str | os.PathLike[str]) -> None:
    plt = _pyplot()
    try:
        with atomic_output_file(path) as tmp:
            fig.savefig(tmp, format='png', pil_kwargs={'compress_level': 1})
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
