"""Harness of the live ROS 2 tests: isolated domains, node processes, a probe node, the ros2 CLI.

Every node under test runs as its own process, started exactly as a user starts it
(``ros2 run PKG EXE --ros-args ...`` or ``ros2 launch PKG FILE arg:=value``), in a process group
of its own so that SIGINT reaches it as Ctrl-C does. The test judges it through a :class:`Probe`:
an rclpy node in the test process, in the same ROS domain, that publishes inputs and records what
comes back. Each test gets a domain id nobody else on the machine holds (a lock file per id), so
tests, and concurrent test sessions, never see each other's nodes; discovery stays on localhost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import contextlib
from dataclasses import dataclass, field
import os
from pathlib import Path
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import yaml

from rc_sim_engine.campaign.ros_run import DomainLease  # the campaign runs' lease

__all__ = ['DomainLease', 'Inbox', 'LiveRos', 'ParameterClient', 'Probe', 'RosProcess', 'Terminal',
           'missing_ros', 'spin_until', 'wait_until']

#: Python modules the live tests need beyond rclpy (the ROS-only tests once checked rclpy alone).
REQUIRED_MODULES = ('rclpy', 'launch', 'launch_ros', 'ros2cli', 'ament_index_python',
                    'std_msgs', 'std_srvs', 'geometry_msgs', 'nav_msgs', 'sensor_msgs',
                    'rosgraph_msgs', 'tf2_msgs', 'ackermann_msgs', 'rcl_interfaces')
#: The packages under test, colcon-built (``ros2 run`` finds them through the ament index).
PACKAGES = ('rc_sim_description', 'rc_sim_control', 'rc_sim_sensors', 'rc_sim_engine',
            'rc_sim_calibration')


def missing_ros() -> str | None:
    """Why the live tests cannot run here (one line), or None when everything is present."""
    import importlib
    import shutil

    for name in REQUIRED_MODULES:
        try:
            importlib.import_module(name)
        except Exception as exc:
            return f'ROS 2 Python module {name} is missing ({type(exc).__name__}: {exc})'
    if shutil.which('ros2') is None:
        return 'the ros2 command is not on PATH'
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    for package in PACKAGES:
        try:
            get_package_prefix(package)
        except PackageNotFoundError:
            return (f'package {package} is not colcon-built here (run scripts/test_ros, or '
                    'colcon build and source install/setup.bash)')
    return None


def wait_until(predicate: Callable[[], Any], timeout: float, what: str,
               period: float = 0.02) -> Any:
    """Poll ``predicate`` until it returns something truthy (returned); AssertionError naming
    ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out after {timeout:g} s waiting for {what}')
        time.sleep(period)


def spin_until(executor: Any, done: Callable[[], bool], timeout: float = 3.0) -> bool:
    """Spin ``executor`` (of nodes in the test process) until ``done()`` or ``timeout`` s;
    returns ``done()``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and not done():
        executor.spin_once(timeout_sec=0.02)
    return done()


class Terminal:
    """The master side of a pseudo-terminal: what a process started with ``tty=True`` sees as
    its controlling terminal (stdin, stdout, stderr). A thread copies everything it prints to
    the process log; :meth:`send` types keys (``'\\x03'`` is Ctrl-C: a byte in raw mode, SIGINT to
    the process group in cooked mode, as in a real terminal)."""

    def __init__(self, master_fd: int, log: Path) -> None:
        self._fd = master_fd
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._copy, args=(log,), daemon=True,
                                        name=f'tty-{master_fd}')
        self._thread.start()

    def send(self, keys: str | bytes) -> None:
        """Type ``keys`` (no-op once the terminal is closed)."""
        data = keys.encode() if isinstance(keys, str) else keys
        with self._lock:
            if self._fd >= 0:
                os.write(self._fd, data)

    def _copy(self, log: Path) -> None:
        """Terminal output -> log, until every process holding the slave side ended (EIO) or
        :meth:`close`; this thread alone closes the master fd (no write to a reused fd)."""
        with open(log, 'ab') as out:
            while not self._stop.is_set():
                try:
                    ready, _, _ = select.select([self._fd], [], [], 0.2)
                    data = os.read(self._fd, 65536) if ready else None
                except OSError:
                    break
                if data == b'':
                    break
                if data:
                    out.write(data)
                    out.flush()
        with self._lock:
            os.close(self._fd)
            self._fd = -1

    def drain(self, timeout: float = 5.0) -> None:
        """Wait until the output is copied to the end (the processes on the terminal ended)."""
        self._thread.join(timeout)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5.0)


#: Run by the harness in a new session on a pseudo-terminal: make it the controlling terminal
#: (TIOCSCTTY; Ctrl-C in cooked mode then signals the foreground group), then exec the command.
_CTTY_EXEC = ('import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); '
              'os.execvp(sys.argv[1], sys.argv[1:])')


@dataclass
class RosProcess:
    """A process started by the harness (its own session and process group)."""

    name: str
    argv: list[str]
    popen: subprocess.Popen[bytes]
    log: Path
    returncode: int | None = None
    #: its pseudo-terminal when started with ``tty=True`` (type keys with ``tty.send``)
    tty: Terminal | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def output(self) -> str:
        """Everything the process printed so far (stdout and stderr interleaved)."""
        try:
            return self.log.read_text(encoding='utf-8', errors='replace')
        except FileNotFoundError:
            return ''

    def wait_output(self, text: str, timeout: float = 20.0) -> str:
        """Wait until ``text`` appears in the output; fails early when the process ends."""
        def seen() -> bool:
            if text in self.output():
                return True
            if not self.alive():
                raise AssertionError(f'{self.name} exited ({self.popen.returncode}) before '
                                     f'printing {text!r}:\n{self.output()[-3000:]}')
            return False
        wait_until(seen, timeout, f'{text!r} from {self.name}')
        return self.output()

    def user_error(self, timeout: float = 60.0) -> str:
        """The one line a bad start-up gives (``error: ...``), after checking the contract: exit
        status 2, exactly one such line, no traceback."""
        status = self.wait(timeout)
        out = self.output()
        errors = [line for line in out.splitlines() if line.startswith('error: ')]
        assert status == 2, f'{self.name} exited {status}:\n{out[-3000:]}'
        assert len(errors) == 1 and 'Traceback' not in out, out[-3000:]
        return errors[0]

    def signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)

    def interrupt(self, timeout: float = 15.0) -> int:
        """Ctrl-C (SIGINT to the process group); the exit status. SIGTERM, then SIGKILL, if it
        does not end within ``timeout`` s (then the status is negative: the killing signal)."""
        if self.alive():
            self.signal(signal.SIGINT)
        return self.wait(timeout)

    def wait(self, timeout: float) -> int:
        """Exit status after at most ``timeout`` s, escalating to SIGTERM and SIGKILL."""
        try:
            self.returncode = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGTERM)
            try:
                self.popen.wait(5)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.popen.wait(5)
            self.returncode = self.popen.returncode
        self.signal(signal.SIGKILL)  # anything the process left behind in its group
        if self.tty is not None:
            self.tty.drain()  # its last output is in the log
        return self.returncode


class Inbox:
    """Messages received on one topic, with their monotonic receipt times (thread-safe)."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self._lock = threading.Lock()
        self._items: list[tuple[float, Any]] = []

    def __call__(self, msg: Any) -> None:
        with self._lock:
            self._items.append((time.monotonic(), msg))

    @property
    def messages(self) -> list[Any]:
        with self._lock:
            return [m for _, m in self._items]

    @property
    def stamped(self) -> list[tuple[float, Any]]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def last(self) -> Any:
        with self._lock:
            return self._items[-1][1] if self._items else None

    def wait(self, count: int = 1, timeout: float = 10.0,
             where: Callable[[Any], bool] | None = None) -> list[Any]:
        """Wait for ``count`` messages (matching ``where``); returns all matching ones."""
        def enough() -> list[Any] | None:
            got = [m for m in self.messages if where is None or where(m)]
            return got if len(got) >= count else None
        return wait_until(enough, timeout, f'{count} message(s) on {self.topic}')


class ParameterClient:
    """Parameters of a running node through its parameter services (what ``ros2 param`` calls),
    from the probe: the same checks on the node's side, without a CLI process per call (a
    ``ros2 param set --no-daemon`` costs seconds of start-up and discovery). Tests that are about
    the CLI itself use it; this is for the many changes a test makes besides."""

    def __init__(self, probe: Probe, node_name: str, timeout: float = 20.0) -> None:
        from rclpy.parameter_client import AsyncParameterClient

        self._client = AsyncParameterClient(probe.node, node_name)
        self.timeout = timeout
        if not self._client.wait_for_services(timeout_sec=timeout):
            raise AssertionError(f'no parameter services of {node_name} within {timeout:g} s')

    def _result(self, future: Any) -> Any:
        wait_until(future.done, self.timeout, 'a parameter service reply')
        return future.result()

    def set(self, name: str, value: Any) -> tuple[bool, str]:
        """(accepted, reason) of setting ``name`` to ``value`` (its Python type is the
        parameter's type: 3 is an integer, 3.0 a double)."""
        from rclpy.parameter import Parameter

        (result,) = self._result(self._client.set_parameters([Parameter(name, value=value)])
                                 ).results
        return bool(result.successful), str(result.reason)

    def get(self, name: str) -> Any:
        from rclpy.parameter import parameter_value_to_python

        (value,) = self._result(self._client.get_parameters([name])).values
        return parameter_value_to_python(value)

    def all(self) -> dict[str, Any]:
        """Every parameter's value (as ``ros2 param dump``)."""
        names = list(self._result(self._client.list_parameters()).result.names)
        from rclpy.parameter import parameter_value_to_python

        values = self._result(self._client.get_parameters(names)).values
        return {n: parameter_value_to_python(v) for n, v in zip(names, values)}


class Probe:
    """An rclpy node of the test in the domain under test, spun in a background thread."""

    def __init__(self, domain_id: int, name: str = 'live_probe') -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.signals import SignalHandlerOptions

        self.context = rclpy.Context()
        # no signal handlers: Ctrl-C stays pytest's, and rclpy's global handler is not touched
        rclpy.init(context=self.context, domain_id=domain_id,
                   signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, name=f'{name}-spin', daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while not self._stop.is_set() and self.context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.02)
            except Exception:
                if self._stop.is_set() or not self.context.ok():
                    return
                raise

    def subscribe(self, msg_type: Any, topic: str, qos: Any = 10) -> Inbox:
        inbox = Inbox(topic)
        self.node.create_subscription(msg_type, topic, inbox, qos)
        return inbox

    def publisher(self, msg_type: Any, topic: str, qos: Any = 10) -> Any:
        return self.node.create_publisher(msg_type, topic, qos)

    def wait_matched(self, publisher: Any, count: int = 1, timeout: float = 20.0) -> None:
        """Wait until ``count`` subscribers matched ``publisher`` (a message sent earlier is
        lost)."""
        wait_until(lambda: publisher.get_subscription_count() >= count, timeout,
                   f'{count} subscriber(s) of {publisher.topic_name}')

    def wait_publishers(self, topic: str, count: int = 1, timeout: float = 20.0) -> None:
        wait_until(lambda: self.node.count_publishers(topic) >= count, timeout,
                   f'{count} publisher(s) of {topic}')

    def parameters(self, node_name: str) -> ParameterClient:
        """A client of ``node_name``'s parameters (fully qualified, e.g. ``/sim_node``)."""
        return ParameterClient(self, node_name)

    def node_names(self) -> list[str]:
        """Fully qualified names of the nodes this probe discovered (itself excluded)."""
        own = self.node.get_fully_qualified_name()
        return sorted({(ns.rstrip('/') + '/' + n) for n, ns in
                       self.node.get_node_names_and_namespaces()} - {own})

    def topics(self) -> dict[str, list[str]]:
        return dict(self.node.get_topic_names_and_types())

    def close(self) -> None:
        import rclpy

        self._stop.set()
        self._thread.join(timeout=5.0)
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def _params_file(folder: Path, params: Mapping[str, Any]) -> Path:
    """A ROS 2 parameter file applying ``params`` to every node of the process."""
    fd, name = tempfile.mkstemp(prefix='params_', suffix='.yaml', dir=folder)
    with os.fdopen(fd, 'w', encoding='utf-8') as f:
        yaml.safe_dump({'/**': {'ros__parameters': dict(params)}}, f, sort_keys=False)
    return Path(name)


def _launch_value(value: Any) -> str:
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


@dataclass
class LiveRos:
    """One test's ROS world: a private domain, its processes, its probe, its files."""

    folder: Path
    base_env: Mapping[str, str]
    lease: DomainLease = field(default_factory=DomainLease)
    processes: list[RosProcess] = field(default_factory=list)
    _probe: Probe | None = None

    @property
    def domain_id(self) -> int:
        return self.lease.domain_id

    @property
    def env(self) -> dict[str, str]:
        env = dict(self.base_env)
        env['ROS_DOMAIN_ID'] = str(self.domain_id)
        return env

    @property
    def probe(self) -> Probe:
        if self._probe is None:
            self._probe = Probe(self.domain_id)
        return self._probe

    def start(self, argv: Sequence[str], name: str | None = None, *,
              env: Mapping[str, str] | None = None, stdin: Any = subprocess.DEVNULL,
              stdout: Any = None, tty: bool = False) -> RosProcess:
        """Start ``argv`` in its own session; output goes to a log file in the test folder.
        ``tty=True``: on a pseudo-terminal of its own instead (stdin, stdout and stderr, the
        session's controlling terminal), as when a user runs it in a terminal window."""
        name = name or ' '.join(argv[:4])
        log = self.folder / f'proc{len(self.processes)}.log'
        if tty:
            return self._start_on_tty(argv, name, log, env)
        with open(log, 'wb') as out:
            popen = subprocess.Popen(list(argv), env={**self.env, **(env or {})},
                                     stdin=stdin, stdout=stdout if stdout is not None else out,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     cwd=self.folder)
        proc = RosProcess(name, list(argv), popen, log)
        self.processes.append(proc)
        return proc

    def _start_on_tty(self, argv: Sequence[str], name: str, log: Path,
                      env: Mapping[str, str] | None) -> RosProcess:
        log.touch()
        master, slave = os.openpty()
        try:
            popen = subprocess.Popen([sys.executable, '-c', _CTTY_EXEC, *argv],
                                     env={**self.env, **(env or {})}, stdin=slave, stdout=slave,
                                     stderr=slave, start_new_session=True, cwd=self.folder)
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        proc = RosProcess(name, list(argv), popen, log, tty=Terminal(master, log))
        self.processes.append(proc)
        return proc

    def run(self, package: str, executable: str, params: Mapping[str, Any] | None = None, *,
            remap: Mapping[str, str] | None = None, namespace: str | None = None,
            args: Iterable[str] = (), **kwargs: Any) -> RosProcess:
        """``ros2 run package executable --ros-args --params-file ... -r from:=to ...``."""
        argv = ['ros2', 'run', package, executable, *args]
        ros_args: list[str] = []
        if params:
            ros_args += ['--params-file', str(_params_file(self.folder, params))]
        for src, dst in (remap or {}).items():
            ros_args += ['-r', f'{src}:={dst}']
        if namespace:
            ros_args += ['-r', f'__ns:={namespace}']
        if ros_args:
            argv += ['--ros-args', *ros_args]
        return self.start(argv, f'{package}/{executable}', **kwargs)

    def launch(self, package: str, launch_file: str, **arguments: Any) -> RosProcess:
        """``ros2 launch package launch_file name:=value ...``."""
        argv = ['ros2', 'launch', package, launch_file,
                *(f'{k}:={_launch_value(v)}' for k, v in arguments.items())]
        return self.start(argv, f'launch {package}/{launch_file}')

    def cli(self, *args: str, timeout: float = 60.0, check: bool = True,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run a ``ros2`` command to completion in this domain; its output as text."""
        done = subprocess.run(['ros2', *args], env=self.env, cwd=self.folder, text=True,
                              capture_output=True, timeout=timeout, input=input_text,
                              start_new_session=True)
        if check and done.returncode != 0:
            raise AssertionError(f'ros2 {" ".join(args)} exited {done.returncode}:\n'
                                 f'{done.stdout}\n{done.stderr}')
        return done

    def close(self) -> dict[str, int]:
        """End every process (Ctrl-C first), close the probe, free the domain; the exit
        statuses by process name."""
        statuses: dict[str, int] = {}
        try:
            for proc in reversed(self.processes):
                status = proc.returncode if proc.returncode is not None else proc.interrupt()
                statuses[proc.name] = status
        finally:
            for proc in self.processes:
                if proc.tty is not None:
                    proc.tty.close()
            if self._probe is not None:
                self._probe.close()
                self._probe = None
            self.lease.release()
        return statuses
