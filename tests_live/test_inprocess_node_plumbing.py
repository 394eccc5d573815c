"""Shared node plumbing (nodes/spin.py, nodes/parameters.py): one-line errors, exit status,
shutdown (repeated Ctrl-C, the background spin thread).

In the test process; the processes as users start them are tested in test_shutdown.py and
test_teleop.py.
"""

from __future__ import annotations

from collections.abc import Iterator
import signal
import threading

import pytest
import rclpy
from rclpy.node import Node
from rclpy.parameter import Parameter

from rc_sim_description.errors import ConfigError
from rc_sim_description.nodes.parameters import declare_typed
from rc_sim_description.nodes.spin import run_node


@pytest.fixture(autouse=True)
def _signal_handlers() -> Iterator[None]:
    """run_node leaves SIGINT ignored (it ends a process): give pytest its handlers back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


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


def _spin_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == 'rc_sim-spin']


def test_run_node_joins_the_spin_thread_before_returning() -> None:
    """The background spin thread spins (a timer fires) and is gone when run_node returns: a
    thread inside rclpy at interpreter exit aborts the process (terminate called ...)."""
    fired = threading.Event()

    def loop(node: Node) -> None:
        node.create_timer(0.01, fired.set)
        assert fired.wait(10.0)
        assert _spin_threads()

    assert run_node(lambda: Node('probe'), [], foreground=loop) == 0
    assert not _spin_threads()
    assert not rclpy.ok()


class _CtrlCAgainOnDestroy(Node):
    """A node whose destruction is interrupted by a second Ctrl-C."""

    def destroy_node(self) -> None:
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):  # bytecodes: the Python handler runs here
            pass
        super().destroy_node()


@pytest.mark.parametrize('first', ['sigint', 'sigterm'])
def test_a_second_ctrl_c_during_the_shutdown_is_ignored(first: str, capsys) -> None:
    """The first SIGINT/SIGTERM ends the foreground (KeyboardInterrupt), the SIGINT during
    destroy_node is ignored; afterwards SIGINT stays ignored, SIGTERM is back to default."""
    signum = signal.SIGINT if first == 'sigint' else signal.SIGTERM

    def loop(node: Node) -> None:
        signal.raise_signal(signum)
        for _ in range(1000):
            pass
        raise AssertionError('the signal did not interrupt the loop')

    assert run_node(lambda: _CtrlCAgainOnDestroy('probe'), [], foreground=loop) == 0
    assert capsys.readouterr().err == ''
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_an_interrupt_rclpy_turned_into_another_error_is_still_a_clean_stop(capsys) -> None:
    """pybind11 re-raises a KeyboardInterrupt that lands in its argument conversion as
    ``RuntimeError: Unable to convert call argument ...`` (seen from take_message when Ctrl-C
    hit sim_node's spin): after a stop signal, status 0 and no traceback; without one, the
    error is the node's fault and propagates."""
    def converted(node: Node) -> None:
        try:
            signal.raise_signal(signal.SIGINT)
            for _ in range(1000):
                pass
        except KeyboardInterrupt:
            raise RuntimeError("Unable to convert call argument '0' to Python object") from None

    assert run_node(lambda: Node('probe'), [], foreground=converted) == 0
    assert capsys.readouterr().err == ''

    def broken(node: Node) -> None:
        raise RuntimeError('a real fault')

    with pytest.raises(RuntimeError, match='a real fault'):
        run_node(lambda: Node('probe'), [], foreground=broken)


@pytest.mark.parametrize('ros_args', [['-p', 'rate'], ['--params-file', '/no/such/file.yaml']])
def test_unparsable_ros_arguments_are_one_line_and_status_2(ros_args, capfd) -> None:
    """Only the error line on stderr (file descriptor 2: rcl logs there before raising)."""
    assert run_node(lambda: Node('probe'), ['--ros-args', *ros_args]) == 2
    err = capfd.readouterr().err
    assert err.startswith('error: failed to initialize rcl: ') and err.count('\n') == 1, err
    assert ' '.join(ros_args) in err and '.c:' not in err


@pytest.mark.parametrize(('override', 'why'), [(5000.0, 'range'), (5, 'type'), ('fast', 'type')])
def test_declare_typed_rejects_bad_overrides_with_the_parameter_name(rclpy_init, override,
                                                                     why) -> None:
    node = Node('probe', parameter_overrides=[Parameter('rate', value=override)])
    try:
        with pytest.raises(ConfigError, match=r'^probe: parameter rate: ') as info:
            declare_typed(node, 'rate', 50.0, 'rate [Hz]', low=1.0, high=1000.0)
        assert '\n' not in str(info.value), why
    finally:
        node.destroy_node()


def test_declare_typed_returns_the_override_and_keeps_the_range(rclpy_init) -> None:
    node = Node('probe', parameter_overrides=[Parameter('rate', value=20.0)])
    try:
        assert declare_typed(node, 'rate', 50.0, 'rate [Hz]', low=1.0, high=1000.0) == 20.0
        assert declare_typed(node, 'rate', 99.0, 'declared twice: kept') == 20.0
        rejected = node.set_parameters([Parameter('rate', value=0.5)])[0]
        assert not rejected.successful
        assert node.get_parameter('rate').value == 20.0
    finally:
        node.destroy_node()
