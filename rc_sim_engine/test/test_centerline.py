"""Centre lines: CSV formats, extraction from a map against the generator's own line, progress
and lap timing in the race step against brute-force projection and the kinematic lap time."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rc_sim_engine.world.centerline import CenterLine, extract_centerline, load_centerline_csv
from rc_sim_engine.world.track_gen import TRACKS, render_track
from rc_sim_engine.world.track_map import OccupancyMap, TrackMapError


def circle(n: int = 400, r: float = 5.0) -> np.ndarray:
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.stack([r * np.cos(t), r * np.sin(t)], axis=1)


def test_csv_formats(tmp_path: Path) -> None:
    pts = circle(50)
    (tmp_path / 'plain.csv').write_text('\n'.join(f'{x},{y}' for x, y in pts))
    (tmp_path / 'f1.csv').write_text('# x_m,y_m,w_tr_right_m,w_tr_left_m\n' + '\n'.join(
        f'{x},{y},1.1,1.2' for x, y in pts))
    (tmp_path / 'race.csv').write_text('# s_m; x_m; y_m; psi_rad\n' + '\n'.join(
        f'{i};{x};{y};0.0' for i, (x, y) in enumerate(pts)))
    for name in ('plain', 'f1', 'race'):
        line = load_centerline_csv(tmp_path / f'{name}.csv')
        np.testing.assert_allclose(line.xy, pts)
        assert line.length == pytest.approx(2 * 50 * 5.0 * math.sin(math.pi / 50))
    (tmp_path / 'bad.csv').write_text('1,2\n3,x\n')
    with pytest.raises(TrackMapError, match=r'bad.csv:2'):
        load_centerline_csv(tmp_path / 'bad.csv')
    with pytest.raises(TrackMapError, match='at least 3'):
        CenterLine.from_points(np.zeros((2, 2)))


def test_projection_and_orientation() -> None:
    line = CenterLine.from_points(circle())
    s, lat = line.project(np.array([0.0, 6.0]), np.array([4.0, 0.0]))
    # quarter turn, counter-clockwise (a point 1 m inside a 400-gon projects up to 1 m x
    # pi / 400 before the vertex)
    assert s[0] == pytest.approx(0.5 * math.pi * 5.0, abs=0.01)
    assert lat[0] == pytest.approx(1.0, abs=1e-3) and lat[1] == pytest.approx(-1.0, abs=1e-3)
    # a start heading clockwise reverses the line and puts s = 0 at the start's projection
    cw = line.oriented((0.0, -5.2, math.pi))
    x, y, yaw = cw.pose_at(0.0)
    assert (float(x), float(y)) == pytest.approx((0.0, -5.0), abs=1e-9)
    assert math.cos(float(yaw) - math.pi) > 0.99
    assert line.oriented(None).signed_area() > 0


def test_extraction_matches_generator_line() -> None:
    design = TRACKS['chicane_track']
    image, origin, truth = render_track(design)
    values = np.where(image[::-1] == 254, 0, np.where(image[::-1] == 0, 100, -1)).astype(np.int8)
    occ = OccupancyMap(values, design.resolution, origin, name='chicane')
    start = (0.0, -3.0, 0.0)
    line = extract_centerline(occ, start=start)
    _, lateral = truth.project(line.xy[:, 0], line.xy[:, 1])
    assert np.max(np.abs(lateral)) < 0.05  # within one cell of the generator's centre line
    assert line.length == pytest.approx(truth.length, rel=0.01)
    x, y, _ = line.pose_at(0.0)
    assert math.hypot(float(x) - 0.0, float(y) + 3.0) < 0.05
    open_map = OccupancyMap(np.zeros((20, 20), dtype=np.int8), 0.1, (0.0, 0.0, 0.0))
    with pytest.raises(TrackMapError, match='not a closed track'):
        extract_centerline(open_map, unknown='free')


def test_progress_and_lap_time_in_race_step() -> None:
    from rc_sim_engine.racing.race_core import RaceCore
    from rc_sim_engine.racing.race_kernels import OBS_LAPS, OBS_LAST_LAP, OBS_PROGRESS, OBS_S
    from rc_sim_engine.world.track import load_track

    track = load_track('chicane_track', lidar_mode='exact')
    core = RaceCore(track, n_worlds=1, lidar=False, model='kinematic')
    core.reset_cars([0], [track.start_pose])
    line = track.centerline
    wheelbase = core.params[0].geometry.wheelbase
    speed = 1.0
    steps = 0
    while core.obs[0, OBS_LAPS] < 1 and steps < 10_000:
        base = core.base[0]
        s, _ = line.project(base[0], base[1])
        x, y, _ = line.pose_at(s + 0.8)  # pure pursuit on the centre line
        dx, dy = float(x[0]) - base[0], float(y[0]) - base[1]
        ly = -math.sin(base[2]) * dx + math.cos(base[2]) * dy
        kappa = 2.0 * ly / (dx * dx + dy * dy)
        core.step(np.array([[math.atan(kappa * wheelbase), speed]]))
        steps += 1
        ref_s, _ = line.project(core.base[0, 0], core.base[0, 1])
        assert core.obs[0, OBS_S] == pytest.approx(float(ref_s[0]), abs=1e-9)
    assert core.obs[0, OBS_LAPS] == 1
    # the car tracks the centre line at 1 m/s: lap time = lap length / speed within 3 %
    assert core.obs[0, OBS_LAST_LAP] == pytest.approx(line.length / speed, rel=0.03)
    assert core.obs[0, OBS_PROGRESS] == pytest.approx(line.length, abs=0.05)
