"""The one ``main()`` of every rc-sim node: init, build, spin, shut down, one-line user errors.

Reference: ros2_gz_reference.md §7.1 (``rclpy.init`` returns None on Jazzy and Humble,
``ExternalShutdownException`` lives in ``rclpy.executors``, ``rclpy.try_shutdown`` is safe after a
signal already shut the context down). A node constructor that raises
:class:`~rc_sim_description.errors.RcSimError` (bad parameter, bad file) prints
``error: <one line>`` on stderr and the entry point returns 2, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
import contextlib
import sys
import threading
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from rc_sim_description.errors import RcSimError

__all__ = ['run_node']


def run_node(factory: Callable[[], Any], args: list[str] | None = None, *,
             foreground: Callable[[Any], None] | None = None) -> int:
    """Run the node built by ``factory``; exit status 0, or 2 after a one-line user error.

    Without ``foreground`` the executor spins in this thread until Ctrl-C / shutdown. With it,
    the executor spins in a daemon thread while ``foreground(node)`` runs here (e.g. a
    terminal key loop); when it returns the executor is stopped before the node is destroyed.
    """
    rclpy.init(args=args)
    executor = SingleThreadedExecutor()
    node = None
    try:
        node = factory()
        executor.add_node(node)
        if foreground is None:
            executor.spin()
        else:
            threading.Thread(target=_spin_quietly, args=(executor,), daemon=True).start()
            foreground(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RcSimError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2
    finally:
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


def _spin_quietly(executor: SingleThreadedExecutor) -> None:
    """Background spin that ends silently when the context or the executor shuts down."""
    with contextlib.suppress(ExternalShutdownException):
        executor.spin()
