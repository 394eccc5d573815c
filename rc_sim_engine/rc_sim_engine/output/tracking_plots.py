"""Figures of tracking runs and manoeuvres (matplotlib, Agg backend, PNG written atomically).

* :func:`plot_tracking`: 2D centre-of-mass path against the reference, x(t), y(t) and |e|(t).
* :func:`plot_parking`: parked boxes, slot, base_link path with footprints; commands vs time.
* :func:`plot_stop`: an avoidance that ended in a stop: track, obstacle and driven path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_control.evaluation import EvaluatedRun

__all__ = ['plot_parking', 'plot_stop', 'plot_tracking']


def plot_tracking(ev: EvaluatedRun, path: str | Path, title: str,
                  world: Any | None = None) -> None:
    """2D CoM path vs reference, x(t), y(t), and |e|(t); PNG, atomic."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from rc_sim_description.atomic import atomic_output_file

    fig, axes = plt.subplots(2, 2, figsize=(9.6, 7.6))  # 960 px: shown at its size
    ax = axes[0, 0]
    if world is not None and len(world.boxes):
        for corners in world.box_corners():
            ring = np.vstack([corners, corners[:1]])
            ax.fill(ring[:, 0], ring[:, 1], color='0.6', lw=0)
    ax.plot(ev.cx, ev.cy, color='tab:blue', lw=1.5, label='actual (CoM)')
    ax.plot(ev.x_ref, ev.y_ref, ':', color='tab:orange', lw=2, label='reference')
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.legend(loc='best', fontsize=10)
    ax.set_title('trajectory (odom)')
    if ev.timed:
        for axis, actual, ref, name in ((axes[0, 1], ev.cx, ev.x_ref, 'x'),
                                        (axes[1, 0], ev.cy, ev.y_ref, 'y')):
            axis.plot(ev.t, actual, color='tab:blue', label=f'actual {name}')
            axis.plot(ev.t_ref, ref, ':', color='tab:orange', lw=2, label=f'reference {name}')
            axis.set_xlabel('t [s]')
            axis.set_ylabel(f'{name} [m]')
            axis.legend(loc='best', fontsize=10)
    else:
        axes[0, 1].axis('off')
        axes[1, 0].axis('off')
    ax = axes[1, 1]
    ax.plot(ev.t_err, 100 * np.hypot(ev.ex, ev.ey), color='tab:red')
    ax.axvline(ev.t_err[0] + ev.transient, color='0.5', ls='--', lw=1)
    ax.set_xlabel('t [s]')
    ax.set_ylabel('|e| [cm]')
    m = ev.metrics_after or ev.metrics
    span = (f'after {ev.transient:g} s' if ev.metrics_after is not None else 'whole run')
    ax.set_title(f'CoM error ({span}): RMSE {100 * m.rmse:.2f} cm, ISE {m.ise:.2e} m²s',
                 fontsize=10)
    fig.suptitle(title)
    fig.tight_layout()
    with atomic_output_file(path) as tmp:
        fig.savefig(tmp, format='png', dpi=100)
    plt.close(fig)


def plot_parking(outcome: Any, path: str | Path, title: str) -> None:
    """Parking figure: boxes, slot, rear-axle path and footprints; speed and steering vs time."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from rc_sim_description.atomic import atomic_output_file
    from rc_sim_engine.scenarios.manoeuvres import footprint_corners
    from rc_sim_engine.world.collision import footprint_from_params

    res = outcome.result
    odom, cmds = res.streams['odom'], res.streams['commands']
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.6, 4.6),
                                 gridspec_kw={'width_ratios': [3, 2]})
    for k, corners in enumerate(outcome.world.box_corners()):
        ring = np.vstack([corners, corners[:1]])
        ax.fill(ring[:, 0], ring[:, 1], color='0.6', lw=0, label='parked cars' if k == 0 else None)
    x0, x1, y0, y1 = outcome.config.slot_rect()
    ax.plot([x0, x1, x1, x0, x0], [y0, y0, y1, y1, y0], '--', color='tab:green', lw=1,
            label='slot')
    ax.plot(odom['x'][:, 0], odom['y'][:, 0], color='tab:blue', label='base_link path')
    foot = footprint_from_params(res.params[0])
    idx = np.linspace(0, len(odom['x']) - 1, 7).astype(int)
    for k in idx:
        c = footprint_corners(odom['x'][k, 0], odom['y'][k, 0], odom['yaw'][k, 0], foot)
        ring = np.vstack([c, c[:1]])
        ax.plot(ring[:, 0], ring[:, 1], color='tab:orange' if k == idx[-1] else '0.3',
                lw=1.5 if k == idx[-1] else 0.6,
                label='final footprint' if k == idx[-1] else
                ('footprints' if k == idx[0] else None))
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.legend(loc='upper left', fontsize=10)
    ax.set_title(f'in slot: {outcome.in_slot}, collisions: {len(res.collisions)}')
    t = cmds.t
    ax2.plot(t, cmds['linear_x'][:, 0], label='v command [m/s]')
    ax2.plot(t, cmds['angular_z'][:, 0], label='delta command [rad]')
    ax2.plot(odom.t, odom['speed'][:, 0], ':', label='v actual [m/s]')
    ax2.plot(odom.t, odom['steering'][:, 0], ':', label='delta actual [rad]')
    ax2.set_xlabel('t [s]')
    ax2.set_ylabel('speed [m/s], steering angle [rad]')
    ax2.legend(loc='best', fontsize=10)
    ax2.set_title('open-loop steering and speed profile')
    fig.suptitle(title)
    fig.tight_layout()
    with atomic_output_file(path) as tmp:
        fig.savefig(tmp, format='png', dpi=100)
    plt.close(fig)




def plot_stop(outcome: Any, path: str | Path, title: str) -> None:
    """Avoidance that ended in a stop: the track, the obstacle and the driven path."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from rc_sim_description.atomic import atomic_output_file

    odom = outcome.result.streams['odom']
    fig, ax = plt.subplots(figsize=(7, 5))
    for corners in outcome.world.box_corners():
        ring = np.vstack([corners, corners[:1]])
        ax.fill(ring[:, 0], ring[:, 1], color='0.6', lw=0)
    ax.plot(odom['x'][:, 0], odom['y'][:, 0], color='tab:blue', label='base_link')
    ax.plot(*outcome.obstacle_xy, 'rx', label='obstacle')
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_xlabel('x [m] (odom)')
    ax.set_ylabel('y [m] (odom)')
    ax.legend(loc='best', fontsize=10)
    ax.set_title(f'{title}: stopped {outcome.stop_distance:.2f} m before the obstacle')
    with atomic_output_file(path) as tmp:
        fig.savefig(tmp, format='png', dpi=100)
    plt.close(fig)


