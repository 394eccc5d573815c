"""Start-pose choice: predicted kinematic path is the analytic circle; free poses are kept."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_control.commands import CommandSequence
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.world.sdf import World
from rc_sim_engine.world.start_pose import choose_start, predicted_path

P = load_vehicle_params()


def circle(radius: float, duration: float) -> CommandSequence:
    delta = math.atan(P.geometry.wheelbase / radius)
    return CommandSequence(np.array([0.0, duration]), np.array([1.0, 0.0]),
                           np.array([delta, delta]), 'steering_angle')


def test_predicted_path_is_the_kinematic_circle() -> None:
    radius = 1.5
    x, y, yaw = predicted_path(circle(radius, 5.0), P, dt=0.001)
    # rear axle on the circle of radius R = L / tan(delta) centred at (0, R)
    np.testing.assert_allclose(np.hypot(x, y - radius), radius, atol=2e-3)
    assert yaw[-1] == pytest.approx(5.0 / radius, rel=1e-3)


def test_free_spawn_is_kept_and_blocked_one_is_moved() -> None:
    seq = circle(1.0, 7.0)  # a full circle of radius 1 m to the left
    empty = World('e', 't')
    assert choose_start(empty, P, seq, (1.0, 2.0, 0.3)).moved is False
    wall = World('w', 't', boxes=np.array([[0.0, 1.0, 0.0, 3.0, 0.05]]),
                 box_z=np.array([[0.0, 0.3]]), box_names=('wall',))
    choice = choose_start(wall, P, seq, (0.0, 0.0, 0.0))
    assert choice.moved and choice.clearance >= 0.05
    # the chosen start keeps the whole predicted circle clear of the wall (|y - 1| > 0.05 + car)
    x, y, _ = predicted_path(seq, P)
    c, s = math.cos(choice.yaw), math.sin(choice.yaw)
    wy = choice.y + s * x + c * y
    wx = choice.x + c * x - s * y
    inside_x = np.abs(wx) <= 3.0 + 0.5
    assert np.all(np.abs(wy[inside_x] - 1.0) > 0.05 + 0.1)


@pytest.mark.parametrize('margin', [0.3, 0.6])
def test_moved_start_honours_the_requested_margin(margin: float) -> None:
    """A wider margin must push the start further: the predicted path keeps ``margin`` from the
    wall (necessary condition checked: base_link lies inside the footprint)."""
    seq = circle(1.0, 7.0)
    wall = World('w', 't', boxes=np.array([[0.0, 1.0, 0.0, 3.0, 0.05]]),
                 box_z=np.array([[0.0, 0.3]]), box_names=('wall',))
    choice = choose_start(wall, P, seq, (0.0, 0.0, 0.0), margin=margin)
    assert choice.moved and choice.clearance >= margin
    x, y, _ = predicted_path(seq, P)
    c, s = math.cos(choice.yaw), math.sin(choice.yaw)
    wx = choice.x + c * x - s * y
    wy = choice.y + s * x + c * y
    inside_x = np.abs(wx) <= 3.0 + 0.5
    assert np.all(np.abs(wy[inside_x] - 1.0) > margin + 0.05)
