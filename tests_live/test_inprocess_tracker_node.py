"""trajectory_tracker node in the test process: parameters validated live, active switch."""

from __future__ import annotations

import pytest
import rclpy
from rclpy.parameter import Parameter

from rc_sim_control.nodes.trajectory_tracker import TrajectoryTracker


@pytest.fixture
def node():
    rclpy.init()
    n = TrajectoryTracker()
    yield n
    n.destroy_node()
    rclpy.try_shutdown()


def test_invalid_gain_is_rejected_with_a_reason(node) -> None:
    result = node.set_parameters([Parameter('kp', Parameter.Type.DOUBLE, -1.0)])[0]
    assert not result.successful and 'kp' in result.reason
    assert node.get_parameter('kp').value == 5.0


def test_shape_is_locked_while_active(node) -> None:
    ok = node.set_parameters([Parameter('amplitude', Parameter.Type.DOUBLE, 2.0)])[0]
    assert ok.successful
    node.set_parameters([Parameter('active', Parameter.Type.BOOL, True)])
    from rc_sim_control.tracking import MeasuredPose

    node.pose = MeasuredPose(0.0, 0.0, 0.0, 0.0)
    node.on_timer()
    assert node.session.active
    locked = node.set_parameters([Parameter('amplitude', Parameter.Type.DOUBLE, 1.0)])[0]
    assert not locked.successful and 'while active' in locked.reason
