"""Shared node plumbing (nodes/spin.py, nodes/parameters.py): one-line errors, exit status.

Needs rclpy: skipped here, run in the ROS container workflow (colcon test).
"""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip('rclpy')

from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from rc_sim_description.errors import ConfigError  # noqa: E402
from rc_sim_description.nodes.parameters import declare_typed  # noqa: E402
from rc_sim_description.nodes.spin import run_node  # noqa: E402

pytestmark = pytest.mark.ros


@pytest.fixture
def ros():
    rclpy.init()
    yield
    rclpy.try_shutdown()


def test_run_node_turns_a_user_error_into_one_line_and_status_2(capsys) -> None:
    def factory() -> Node:
        raise ConfigError('probe: parameter rate: must be > 0')

    assert run_node(factory, []) == 2
    err = capsys.readouterr().err
    assert err == 'error: probe: parameter rate: must be > 0\n'
    assert not rclpy.ok()  # the context was shut down


def test_run_node_foreground_returns_0_after_the_loop(capsys) -> None:
    seen = []
    assert run_node(lambda: Node('probe'), [],
                    foreground=lambda node: seen.append(node.get_name())) == 0
    assert seen == ['probe']
    assert capsys.readouterr().err == ''


@pytest.mark.parametrize(('override', 'why'), [(5000.0, 'range'), (5, 'type'), ('fast', 'type')])
def test_declare_typed_rejects_bad_overrides_with_the_parameter_name(ros, override, why) -> None:
    node = Node('probe', parameter_overrides=[Parameter('rate', value=override)])
    try:
        with pytest.raises(ConfigError, match=r'^probe: parameter rate: ') as info:
            declare_typed(node, 'rate', 50.0, 'rate [Hz]', low=1.0, high=1000.0)
        assert '\n' not in str(info.value), why
    finally:
        node.destroy_node()


def test_declare_typed_returns_the_override_and_keeps_the_range(ros) -> None:
    node = Node('probe', parameter_overrides=[Parameter('rate', value=20.0)])
    try:
        assert declare_typed(node, 'rate', 50.0, 'rate [Hz]', low=1.0, high=1000.0) == 20.0
        assert declare_typed(node, 'rate', 99.0, 'declared twice: kept') == 20.0
        rejected = node.set_parameters([Parameter('rate', value=0.5)])[0]
        assert not rejected.successful
        assert node.get_parameter('rate').value == 20.0
    finally:
        node.destroy_node()
