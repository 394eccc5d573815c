"""The one ``main()`` of every rc-sim node: init, build, spin, shut down, one-line user errors.

Reference: ros2_gz_reference.md §7.1 (``rclpy.init`` returns None on Jazzy and Humble,
``ExternalShutdownException`` lives in ``rclpy.executors``, ``rclpy.try_shutdown`` is safe after a
signal already shut the context down). A node constructor that raises
:class:`~rc_sim_description.errors.RcSimError` (bad parameter, bad file), or ROS arguments rcl
cannot parse (``-p name`` without a value, a missing ``--params-file``), print
``error: <one line>`` on stderr (and nothing else) and the entry point returns 2, never a
traceback.

Shutdown (Ctrl-C, ``ros2 launch`` forwarding it, SIGTERM): the first SIGINT or SIGTERM ends the
spin (a KeyboardInterrupt in the main thread, as with rclpy's default handler); every later one
is ignored, so destroy_node and rclpy's shutdown run to their end and the process exits 0
without a traceback however often Ctrl-C is pressed (objects the interrupt cut short in their
construction are not reported when they are collected; an error the interrupt caused inside
rclpy's C++ bindings, which re-raise it as another exception, counts as the interrupt). Once
:func:`run_node` returns, SIGINT stays ignored (the interpreter's exit would otherwise restore the
default action, and a Ctrl-C then kills the process) and SIGTERM is back to its default. A
background spin thread (``foreground``) is stopped and joined before the node is destroyed: a
thread still inside rclpy at interpreter exit aborts the process (``terminate called without an
active exception``, status 134).
"""

from __future__ import annotations

from collections.abc import Callable
import os
import re
import signal
import sys
import tempfile
import threading
from types import FrameType
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

from rc_sim_description.errors import RcSimError

__all__ = ['run_node']

#: Signals that end a node: Ctrl-C, and what launchers and service managers send.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Longest wait for the background spin thread to see its stop flag [s] (it polls at 0.1 s).
JOIN_TIMEOUT_S = 5.0


def run_node(factory: Callable[[], Any], args: list[str] | None = None, *,
             foreground: Callable[[Any], None] | None = None) -> int:
    """Run the node built by ``factory``; exit status 0, or 2 after a one-line user error.

    Without ``foreground`` the executor spins in this thread until Ctrl-C / shutdown. With it,
    the executor spins in a background thread while ``foreground(node)`` runs here (e.g. a
    terminal key loop); when it returns, or Ctrl-C interrupts it, the spin thread is stopped
    and joined before the node is destroyed. Meant as the last act of a node process: the
    signal handling of the module docstring stays in place afterwards.
    """
    stop = _StopSignals()  # before rclpy.init: rclpy's handlers chain to it
    executor: SingleThreadedExecutor | None = None
    node = None
    spinner: _BackgroundSpin | None = None
    status = 0
    try:
        _init_rclpy(args)
        executor = SingleThreadedExecutor()
        node = factory()
        executor.add_node(node)
        if foreground is None:
            executor.spin()
        else:
            spinner = _BackgroundSpin(executor)
            foreground(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except _rclpy.RCLError as exc:
        if executor is None:  # rclpy.init: unparsable ROS arguments
            print(f'error: {_rcl_message(exc)}', file=sys.stderr)
            status = 2
        elif rclpy.ok():  # a real error; else a signal shut the context down under the spin
            raise
    except RcSimError as exc:
        print(f'error: {exc}', file=sys.stderr)
        status = 2
    except Exception:
        # The interrupt can land inside rclpy's C++ bindings, which turn it into another
        # error (pybind11: "RuntimeError: Unable to convert call argument ..." from a
        # subscription's take_message): after a stop signal that is the stop, not a fault.
        if not stop.interrupted:
            raise
    finally:
        stop.stopping = True  # from here on Ctrl-C interrupts nothing
        if stop.interrupted:  # the interrupt may have cut an rclpy object's construction short:
            sys.unraisablehook = _quiet  # its __del__ then fails, with nothing left to do
        if spinner is not None:
            spinner.stop()
        if executor is not None:
            executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        stop.finish()
    return status


class _StopSignals:
    """The first SIGINT/SIGTERM raises KeyboardInterrupt in the main thread, later ones are
    ignored. Python handlers run in the main thread between bytecodes, so the flag is set before
    any second signal is handled. Not installed outside the main thread (signal.signal refuses)."""

    def __init__(self) -> None:
        self.stopping = False
        self.interrupted = False
        self.installed = threading.current_thread() is threading.main_thread()
        if self.installed:
            for signum in STOP_SIGNALS:
                signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.stopping:
            return
        self.stopping = self.interrupted = True
        raise KeyboardInterrupt

    def finish(self) -> None:
        """Cleanup done: SIGINT ignored to the end of the process, SIGTERM default."""
        self.stopping = True
        if self.installed:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _BackgroundSpin:
    """The executor spun in a thread until :meth:`stop` (or the context's shutdown)."""

    def __init__(self, executor: SingleThreadedExecutor) -> None:
        self._executor = executor
        self._stop = threading.Event()
        # daemon only as a last resort (a callback that never returns): stop() joins it
        self._thread = threading.Thread(target=self._spin, name='rc_sim-spin', daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        context = self._executor.context
        while not self._stop.is_set() and context.ok():
            try:
                self._executor.spin_once(timeout_sec=0.1)
            except ExternalShutdownException:
                return
            except _rclpy.RCLError:
                if context.ok():
                    raise
                return

    def stop(self) -> None:
        self._stop.set()
        self._executor.wake()
        self._thread.join(JOIN_TIMEOUT_S)


def _quiet(unraisable: Any) -> None:
    """``sys.unraisablehook`` after a Ctrl-C: e.g. ``Task.__del__`` of a task whose ``__init__``
    the KeyboardInterrupt cut short ("Exception ignored in ...", a traceback on the way out)."""


def _init_rclpy(args: list[str] | None) -> None:
    """``rclpy.init``; when it fails, rcl's own log lines about it (written to file descriptor
    2 before it raises) are dropped: the caller prints the one-line error. Nothing else runs
    yet (no thread, no node), so the capture only holds rcl's output, replayed on success."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            rclpy.init(args=args)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        if text := captured.read():
            os.write(2, text)


def _rcl_message(exc: BaseException) -> str:
    """rcl's error text on one line, without its source locations (``, at file.c:123``)."""
    return re.sub(r',? at /\S+:\d+', '', ' '.join(str(exc).split()))
