"""Seed-004 manoeuvres in the engine: lidar-triggered lane shift or stop, parallel parking."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.cli import main
from rc_sim_engine.scenarios.manoeuvres import (
    AvoidanceConfig,
    AvoidancePlanner,
    ParkingConfig,
    footprint_corners,
    parking_world,
    plan_parking,
    racing_line,
    run_avoidance,
    run_parking,
)
from rc_sim_engine.world.collision import footprint_from_params

PARAMS = load_vehicle_params()


def test_avoidance_shifts_around_the_box_without_collision() -> None:
    out = run_avoidance(PARAMS)
    pl = out.planner
    assert pl.decision == 'avoid'
    assert pl.gap_at_detection >= pl.s_t_min
    assert not out.collided
    # the car really went around: its CoM passed the box at >= d_r - 5 cm off the line
    odom = out.result.streams['odom']
    lr = PARAMS.geometry.cg_to_rear_axle
    cx = odom['x'][:, 0] + lr * np.cos(odom['yaw'][:, 0])
    cy = odom['y'][:, 0] + lr * np.sin(odom['yaw'][:, 0])
    ox, oy = out.obstacle_xy
    near = np.argmin(np.hypot(cx - ox, cy - oy))
    assert math.hypot(cx[near] - ox, cy[near] - oy) > AvoidanceConfig().shift - 0.05
    assert out.evaluation.metrics_after.rmse < 0.02  # it tracked the shifted reference
    assert len(out.paths) >= 2  # nominal, then re-planned as more of the box shows up
    s_box_end = pl.path.project(ox, oy) + 0.5 * AvoidanceConfig().obstacle_length
    assert pl.s_far == pytest.approx(s_box_end, abs=0.03)  # the far end was seen
    assert pl.plan.s_start + pl.plan.s_t + pl.plan.s_hold >= s_box_end + pl.rear_overhang


def test_late_detection_stops_before_the_box() -> None:
    out = run_avoidance(PARAMS, AvoidanceConfig(detection_range=1.2))
    pl = out.planner
    assert pl.decision == 'stop' and pl.gap_at_detection < pl.s_t_min
    assert not out.collided
    assert 0.0 < out.stop_distance < 1.2
    assert abs(float(out.result.streams['odom']['speed'][-1, 0])) < 0.01


def test_planner_decision_follows_eq_12() -> None:
    path = racing_line()
    kw = {'path': path, 'speed': 1.0, 'shift': 0.35, 's_t_min': 1.0, 'front_overhang': 0.2,
          'rear_overhang': 0.25, 'corridor': 0.25, 'detection_range': 3.0, 'margin': 0.1}
    box = path.point(np.linspace(2.0, 2.1, 5))  # a short wall segment 2 m along the line
    far = AvoidancePlanner(**kw)
    assert far.update(box.x, box.y, s_car=0.0) and far.decision == 'avoid'
    assert far.plan.s_start + far.plan.s_t == pytest.approx(2.0 - 0.1 - 0.2, abs=0.01)
    assert far.plan.d_r == 0.35
    near = AvoidancePlanner(**kw)
    assert near.update(box.x, box.y, s_car=1.0) and near.decision == 'stop'
    wall = AvoidancePlanner(**kw)  # returns 0.6 m off the line are not obstacles
    assert not wall.update(box.x - 0.6 * np.sin(box.heading), box.y + 0.6 * np.cos(box.heading),
                           s_car=0.0)


def test_parking_ends_inside_the_slot_without_collision() -> None:
    out = run_parking(PARAMS)
    assert out.in_slot and not out.collided
    x0, x1, y0, y1 = out.config.slot_rect()
    assert np.all((out.corners[:, 0] > x0) & (out.corners[:, 0] < x1))
    assert np.all((out.corners[:, 1] > y0) & (out.corners[:, 1] < y1))
    assert abs(out.final[2]) < math.radians(2)
    # engine vs the kinematic prediction of the search
    assert math.hypot(out.final[0] - out.plan.final[0], out.final[1] - out.plan.final[1]) < 0.05


def test_parking_search_respects_the_slot_and_symmetric_heading() -> None:
    cfg = ParkingConfig()
    plan = plan_parking(PARAMS, cfg, parking_world(cfg))
    assert plan.feasible >= 1
    assert abs(plan.final[2]) < 1e-6  # A(t) odd and B(t) even about T/2: heading returns
    corners = footprint_corners(*plan.final, footprint_from_params(PARAMS))
    x0, x1, y0, y1 = cfg.slot_rect()
    m = cfg.margin
    assert np.all((corners[:, 0] >= x0 + m) & (corners[:, 0] <= x1 - m))
    assert np.all((corners[:, 1] >= y0 + m) & (corners[:, 1] <= y1 - m))
    with pytest.raises(ConfigError, match='no \\(T, delta_max\\)'):
        short = ParkingConfig(slot_length=0.5)
        plan_parking(PARAMS, short, parking_world(short))


def test_manoeuvre_cli_writes_a_bag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / 'late'
    assert main(['manoeuvre', 'avoid_late', '--out', str(out)]) == 0
    report = json.loads((out / 'metrics.json').read_text())
    assert report['decision'] == 'stop' and report['collisions'] == 0
    assert (out / 'manoeuvre.png').is_file()
    text = capsys.readouterr().out
    assert '-> stop' in text
    # UX review: the detection line printed the free distance (after the margin) as the distance
    # ahead, the same number as the final stop gap; now both distances are named
    gap, margin = report['gap_at_detection'], AvoidanceConfig().margin
    assert f'detected {gap + margin:.2f} m ahead of the car front (free distance {gap:.2f} m' in text
