"""Live: every node of the suite ends cleanly, started with ``ros2 run`` as a user starts it.

* Ctrl-C (SIGINT to the process group, as a terminal sends it): exit status 0, no traceback.
* Two or three SIGINTs in quick succession (an impatient user, or a launcher and a terminal
  both forwarding Ctrl-C): the later ones land in the shutdown (destroy_node, rclpy shutdown,
  interpreter exit); still status 0 and no traceback (defect 7: a KeyboardInterrupt traceback
  from destroy_node, or death by SIGINT once the interpreter restored the default handler).
* SIGTERM to the node process (how ``ros2 launch`` escalates, how service managers stop a
  process): status 0, no traceback (rclpy shuts the context down on SIGTERM while the executor
  still spins: an RCLError traceback before the fix).
* A bad parameter at start: exactly one line ``error: ...`` on stderr naming it, status 2.

teleop_keyboard needs a terminal: tests_live/test_teleop.py covers it.
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import random
import signal
import time
from typing import Any

from live_harness import RosProcess, wait_until
import pytest


@dataclass(frozen=True)
class Exe:
    package: str
    executable: str
    ready: str            # a topic the node creates late in its constructor
    ready_kind: str       # 'pub' or 'sub'
    bad: tuple[str, str]  # a parameter (name, value) it refuses at start

    def __str__(self) -> str:
        return self.executable


NODES = [
    Exe('rc_sim_control', 'turning_command_mapper', '/turn_radius', 'pub', ('mode', 'sideways')),
    Exe('rc_sim_control', 'rear_wheel_speed_bridge', '/rear_wheel_speed', 'sub',
        ('publish_rate', '-5.0')),
    Exe('rc_sim_control', 'rear_wheel_speed_publisher', '/rear_wheel_speed', 'pub',
        ('steering_angle', '3.0')),
    Exe('rc_sim_control', 'wheel_odometry', '/tf', 'pub', ('distance_noise', 'fast')),
    Exe('rc_sim_control', 'trajectory_tracker', '/reference_path', 'pub',
        ('control_rate', 'fast')),
    Exe('rc_sim_sensors', 'lidar_error_injector', '/scan', 'pub', ('preset', 'no_such_lidar')),
    Exe('rc_sim_engine', 'sim_node', '/odom', 'pub', ('realtime_factor', '-1.0')),
]
IDS = [str(n) for n in NODES]


def start(ros: Any, exe: Exe) -> RosProcess:
    """``ros2 run`` the node; return once it is up (its late topic is in the graph)."""
    proc = ros.run(exe.package, exe.executable)
    count = (ros.probe.node.count_publishers if exe.ready_kind == 'pub'
             else ros.probe.node.count_subscribers)

    def up() -> bool:
        if not proc.alive():
            raise AssertionError(f'{exe} ended at start:\n{proc.output()[-3000:]}')
        return count(exe.ready) >= 1
    wait_until(up, 90.0, f'{exe} to create {exe.ready}')
    time.sleep(0.3)  # the rest of the constructor, the first spin
    return proc


def unclean(proc: RosProcess, status: int) -> str | None:
    """Why this end is not clean, or None."""
    out = proc.output()
    if status == 0 and 'Traceback' not in out and 'terminate called' not in out:
        return None
    return f'exit {status}:\n{out[-2500:]}'


def node_pid(proc: RosProcess) -> int:
    """Pid of the node process: the child of ``ros2 run``."""
    children = Path(f'/proc/{proc.pid}/task/{proc.pid}/children')
    found = wait_until(lambda: children.read_text().split(), 20.0, 'the child of ros2 run')
    return int(found[0])


@pytest.mark.parametrize('exe', NODES, ids=IDS)
def test_one_ctrl_c_exits_0(ros, exe):
    proc = start(ros, exe)
    status = proc.interrupt(timeout=30)
    assert unclean(proc, status) is None, unclean(proc, status)


@pytest.mark.parametrize('exe', NODES, ids=IDS)
def test_repeated_sigint_during_shutdown_exits_0(ros, exe):
    """Defect 7: 2-3 SIGINTs 2-50 ms apart, four rounds; each must end with 0, no traceback."""
    rng = random.Random(7)
    failures = []
    for gaps in [(0.002,), (0.02, 0.03), (0.035,), (0.05, 0.01)]:
        proc = start(ros, exe)
        proc.signal(signal.SIGINT)
        for gap in gaps:
            time.sleep(gap * rng.uniform(0.8, 1.2))
            proc.signal(signal.SIGINT)
        status = proc.wait(30)
        if (why := unclean(proc, status)) is not None:
            failures.append(f'gaps {gaps}: {why}')
    assert not failures, '\n'.join(failures)


@pytest.mark.parametrize('exe', NODES, ids=IDS)
def test_sigterm_exits_0(ros, exe):
    proc = start(ros, exe)
    os.kill(node_pid(proc), signal.SIGTERM)
    status = proc.wait(30)
    assert unclean(proc, status) is None, unclean(proc, status)


@pytest.mark.parametrize('exe', NODES, ids=IDS)
def test_bad_parameter_is_one_error_line_and_status_2(ros, exe):
    name, value = exe.bad
    done = ros.cli('run', exe.package, exe.executable, '--ros-args', '-p', f'{name}:={value}',
                   check=False, timeout=120, input_text='')
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done
    assert len(lines) == 1 and lines[0].startswith('error: '), done.stderr
    assert (name in lines[0] or value in lines[0]), lines[0]


@pytest.mark.parametrize('exe', NODES, ids=IDS)
def test_unparsable_ros_arguments_are_one_error_line_and_status_2(ros, exe):
    """ROS arguments rcl cannot parse (a params file that does not exist): one line, status 2
    (an RCLError traceback from rclpy.init and status 1 before)."""
    missing = str(ros.folder / 'no_such_params.yaml')
    done = ros.cli('run', exe.package, exe.executable, '--ros-args', '--params-file', missing,
                   check=False, timeout=120, input_text='')
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done
    assert len(lines) == 1 and lines[0].startswith('error: ') and missing in lines[0], done.stderr
