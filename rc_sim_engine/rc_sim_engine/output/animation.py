"""An animation of a run to watch: walls, the car footprint, its trail and the lidar scan (GIF).

Frames are drawn with matplotlib and written by pillow (it comes with matplotlib; no ffmpeg) with
one adaptive 64-colour palette for the whole clip. Cost and
size are bounded whatever the run length: at most :data:`MAX_FRAMES` frames at most
:data:`MAX_FPS` frames per second of video. A run up to MAX_FRAMES / MAX_FPS = 30 s plays in real
time at MAX_FPS; a longer one is sampled at MAX_FRAMES evenly spaced times and plays faster (the
speed-up is printed in the title). Each frame redraws only the moving artists (footprints, trail,
scan points, clock) on a 720 x 576 figure whose text reads at its natural size, so a 300-frame
GIF takes a few seconds.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_engine.sim.simulator import SimResult

__all__ = ['MAX_FPS', 'MAX_FRAMES', 'frame_times', 'write_animation']

FloatArray = npt.NDArray[np.float64]
MAX_FRAMES = 300
MAX_FPS = 10


def frame_times(t_end: float, *, max_frames: int = MAX_FRAMES,
                max_fps: int = MAX_FPS) -> tuple[FloatArray, int]:
    """(frame times [s] in [0, t_end], video frames per second).

    ``min(max_frames, t_end * max_fps + 1)`` evenly spaced frames; the video plays at ``max_fps``
    (real time when the run is at most ``max_frames / max_fps`` long, faster otherwise).
    """
    if not (math.isfinite(t_end) and t_end > 0):
        return np.zeros(1), max_fps
    n = int(min(max_frames, math.floor(t_end * max_fps) + 1))
    return np.linspace(0.0, t_end, max(n, 2)), max_fps


def _footprint_rings(x: FloatArray, y: FloatArray, yaw: FloatArray, center_x: float,
                     half_length: float, half_width: float) -> FloatArray:
    """(..., 5, 2) closed outlines of the car footprint at base_link poses."""
    lx = center_x + half_length * np.array([1.0, -1.0, -1.0, 1.0, 1.0])
    ly = half_width * np.array([1.0, 1.0, -1.0, -1.0, 1.0])
    c, s = np.cos(yaw)[..., None], np.sin(yaw)[..., None]
    return np.stack([x[..., None] + c * lx - s * ly, y[..., None] + s * lx + c * ly], axis=-1)


def _scan_points(result: SimResult, t_frames: FloatArray, poses: tuple[FloatArray, ...],
                 car: int) -> list[FloatArray]:
    """World (M, 2) points of the latest scan at each frame time (empty when none yet)."""
    from rc_sim_engine.sim.sensors import lidar_pose

    scan = result.streams.get('scan')
    empty = np.zeros((0, 2))
    if scan is None or not len(scan.get('t_ns', ())) or not result.scan_angles.size:
        return [empty] * len(t_frames)
    t_scan = np.asarray(scan['t_ns'], dtype=np.float64) * 1e-9
    k = np.searchsorted(t_scan, t_frames, side='right') - 1
    xs, ys, yaws = poses
    out = []
    for i, ki in enumerate(k):
        if ki < 0:
            out.append(empty)
            continue
        ranges = np.asarray(scan['ranges'][ki, car], dtype=np.float64)
        ok = np.isfinite(ranges)
        ox, oy, heading = lidar_pose(float(xs[i]), float(ys[i]), float(yaws[i]),
                                     result.params[car])
        a = heading + result.scan_angles[ok]
        out.append(np.column_stack([ox + ranges[ok] * np.cos(a), oy + ranges[ok] * np.sin(a)]))
    return out


def write_animation(result: SimResult, path: str | os.PathLike[str], title: str = '', *,
                    max_frames: int = MAX_FRAMES, max_fps: int = MAX_FPS,
                    dpi: int = 96) -> Path:
    """Write a GIF of ``result`` (every car: footprint and trail; car 0's lidar scan) atomically.

    Frames are subsampled as :func:`frame_times` says; returns the path.
    """
    from matplotlib import rcParams
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    from rc_sim_description.atomic import atomic_output_file
    from rc_sim_engine.output.plots import draw_world
    from rc_sim_engine.world.collision import footprint_from_params

    odom = result.streams['odom']
    t_odom = odom.t
    t_end = float(t_odom[-1]) if len(t_odom) else 0.0
    t_frames, fps = frame_times(t_end, max_frames=max_frames, max_fps=max_fps)
    n_cars = result.n_cars
    xs = np.stack([np.interp(t_frames, t_odom, odom['x'][:, c]) for c in range(n_cars)])
    ys = np.stack([np.interp(t_frames, t_odom, odom['y'][:, c]) for c in range(n_cars)])
    yaws = np.stack([np.interp(t_frames, t_odom, np.unwrap(odom['yaw'][:, c]))
                     for c in range(n_cars)])
    rings = [_footprint_rings(xs[c], ys[c], yaws[c], *_footprint(footprint_from_params(p)))
             for c, p in enumerate(result.params)]
    scans = _scan_points(result, t_frames, (xs[0], ys[0], yaws[0]), 0)

    fig = Figure(figsize=(7.5, 6.0), dpi=dpi)  # 720 x 576 pixels: its text reads at 100 %
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    draw_world(ax, result.world)
    lo_x, hi_x, lo_y, hi_y = result.world.bounds(0.5)
    lo_x, hi_x = min(lo_x, float(xs.min()) - 0.5), max(hi_x, float(xs.max()) + 0.5)
    lo_y, hi_y = min(lo_y, float(ys.min()) - 0.5), max(hi_y, float(ys.max()) + 0.5)
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    ax.set_aspect('equal')
    ax.set_xlabel('x [m] (odom)', fontsize=11)
    ax.set_ylabel('y [m] (odom)', fontsize=11)
    ax.tick_params(labelsize=10)
    ax.grid(True, alpha=0.3)
    colours = rcParams['axes.prop_cycle'].by_key()['color']
    trails = [ax.plot([], [], lw=1.0, color=colours[c % len(colours)], animated=True)[0]
              for c in range(n_cars)]
    cars = [ax.plot([], [], lw=1.8, color=colours[c % len(colours)], animated=True)[0]
            for c in range(n_cars)]
    scan_dots = ax.scatter(np.zeros(0), np.zeros(0), s=2, color='red', zorder=5,
                           label='lidar scan', animated=True)
    clock = ax.text(0.02, 0.97, '', transform=ax.transAxes, va='top', fontsize=12,
                    family='monospace', animated=True)
    speedup = t_end / max((len(t_frames) - 1) / fps, 1e-9)
    pace = 'real time' if speedup < 1.05 else f'{speedup:.1f}x real time'
    ax.set_title(f'{title or result.world.name} ({pace})', fontsize=12)
    if result.scan_angles.size:
        ax.legend(loc='upper right', fontsize=10)
    fig.tight_layout()

    def update(i: int) -> list[Any]:
        for c in range(n_cars):
            trails[c].set_data(xs[c, :i + 1], ys[c, :i + 1])
            cars[c].set_data(rings[c][i, :, 0], rings[c][i, :, 1])
        scan_dots.set_offsets(scans[i])
        clock.set_text(f't = {t_frames[i]:5.1f} s')
        return [*trails, *cars, scan_dots, clock]

    target = Path(path)
    canvas.draw()  # the static background (world, axes) once; frames redraw only the movers
    background = canvas.copy_from_bbox(fig.bbox)
    def render(i: int) -> Any:
        canvas.restore_region(background)
        for artist in update(i):
            ax.draw_artist(artist)
        return Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])

    # one adaptive palette for the whole clip, from the last frame (full trail): fast, no flicker
    palette = render(len(t_frames) - 1).quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    images = [render(i).quantize(palette=palette, dither=Image.Dither.NONE)
              for i in range(len(t_frames))]
    with atomic_output_file(target) as tmp:
        images[0].save(tmp, format='GIF', save_all=True, append_images=images[1:],
                       duration=round(1000 / fps), loop=0)
    return target


def _footprint(foot: Any) -> tuple[float, float, float]:
    return float(foot.center_x), float(foot.half_length), float(foot.half_width)
