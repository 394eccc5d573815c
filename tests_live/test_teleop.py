"""Live: teleop_keyboard (ros2 run on a pseudo-terminal) judged by the key table of the docs.

The node runs as a user runs it, in a terminal: ``ros2 run rc_sim_control teleop_keyboard`` with
a pseudo-terminal as its controlling terminal (``ros.run(..., tty=True)``); the test types keys on
it and the probe reads /cmd_vel. Expected values are written here from docs/control.md
("teleop_keyboard": the key layout, the parameter defaults, the mode units, the dead man) with
the vehicle numbers read from the installed vehicle.yaml; nothing comes from rc_sim_control.

Ctrl-C: in raw mode (while the node waits for a key) it arrives as the byte 0x03 and ends the
key loop; SIGINT to the process group is the other way a terminal (or a launcher) ends it. Both
must end the process with status 0, without ``terminate called without an active exception``
(the abort of a node spun in a daemon thread at interpreter exit) or a traceback.
"""

from __future__ import annotations

import math
from pathlib import Path
import random
import signal
import time
from typing import Any

from ament_index_python.packages import get_package_share_directory
from geometry_msgs.msg import Twist
from live_harness import Inbox, wait_until
import pytest
import yaml

CTRL_C = '\x03'
BANNER = 'CTRL-C: quit'  # last line of the help text: the key loop is about to read keys
# docs/control.md: key -> (travel, steer), +1 = forward / left; k, space and any other key stop
KEYS: dict[str, tuple[int, int]] = {
    'u': (1, 1), 'i': (1, 0), 'o': (1, -1),
    'j': (0, 1), 'k': (0, 0), 'l': (0, -1),
    'm': (-1, 1), ',': (-1, 0), '.': (-1, -1),
    ' ': (0, 0), 'p': (0, 0),
}
# q/z: speed and turn x1.1 / x0.9; w/x: speed only; e/c: turn only
SCALES: dict[str, tuple[float, float]] = {
    'q': (1.1, 1.1), 'z': (0.9, 0.9), 'w': (1.1, 1.0), 'x': (0.9, 1.0), 'e': (1.0, 1.1),
    'c': (1.0, 0.9),
}


def vehicle() -> dict[str, float]:
    """L, delta_max and v_max = omega_max r from the vehicle.yaml the node loads."""
    path = Path(get_package_share_directory('rc_sim_description')) / 'config' / 'vehicle.yaml'
    doc = yaml.safe_load(path.read_text())
    geometry, drive = doc['geometry'], doc['drive']
    return {'L': float(geometry['wheelbase']),
            'delta_max': float(doc['steering']['max_steering_angle']),
            'v_max': float(drive['max_wheel_speed']) * float(geometry['wheel_radius'])}


def limits(mode: str) -> tuple[float, float]:
    """(max speed [m/s], max turn in the mode's unit; radius mode: a curvature)."""
    car = vehicle()
    kappa_max = math.tan(car['delta_max']) / car['L']
    turn = {'steering_angle': car['delta_max'], 'curvature': kappa_max, 'radius': kappa_max,
            'yaw_rate': car['v_max'] * kappa_max}[mode]
    return car['v_max'], turn


def documented_defaults(mode: str) -> tuple[float, float]:
    """docs/control.md: speed min(1, v_max/2); turn half the limit (yaw_rate: half of full lock
    at ``speed``)."""
    car = vehicle()
    speed = min(1.0, car['v_max'] / 2)
    kappa_max = math.tan(car['delta_max']) / car['L']
    turn = 0.5 * (speed * kappa_max if mode == 'yaw_rate' else limits(mode)[1])
    return speed, turn


def expected_twist(mode: str, travel: int, steer: int, speed: float,
                   turn: float) -> tuple[float, float]:
    """(linear.x, angular.z) of a key: v = travel speed; angular.z in the mode's unit (radius:
    R = 1/kappa, 0 = straight; yaw_rate: psi_dot = v tan(delta)/L, so reversing with the wheels
    left yaws clockwise)."""
    v = travel * speed
    kappa = steer * turn
    if mode == 'radius':
        return v, (1.0 / kappa if kappa else 0.0)
    if mode == 'yaw_rate' and travel < 0:
        return v, -kappa
    return v, kappa


def same(msg: Twist, want: tuple[float, float]) -> bool:
    return (math.isclose(msg.linear.x, want[0], rel_tol=1e-9, abs_tol=1e-12)
            and math.isclose(msg.angular.z, want[1], rel_tol=1e-9, abs_tol=1e-12))


class Teleop:
    """A teleop_keyboard process on its own terminal and the probe's inbox of /cmd_vel."""

    def __init__(self, ros: Any, params: dict[str, Any] | None = None, *,
                 cmd: Inbox | None = None, listen: bool = True) -> None:
        """``cmd``: the inbox of an earlier Teleop (the probe keeps its subscription);
        ``listen=False``: no /cmd_vel at all (only the process and its terminal)."""
        self.proc = ros.run('rc_sim_control', 'teleop_keyboard', params, tty=True)
        self.cmd: Inbox = (cmd or ros.probe.subscribe(Twist, '/cmd_vel')) if listen else Inbox('')
        self.proc.wait_output(BANNER, timeout=60)
        if listen:
            ros.probe.wait_publishers('/cmd_vel')
            self.cmd.clear()
            self.cmd.wait(1, timeout=20)  # matched: the repeated command arrives

    def press(self, key: str, want: tuple[float, float], timeout: float = 20.0) -> None:
        """Type ``key``; wait until /cmd_vel carries ``want`` (three messages in a row)."""
        self.cmd.clear()
        self.proc.tty.send(key)
        try:
            self.cmd.wait(3, timeout=timeout, where=lambda m: same(m, want))
        except AssertionError as exc:
            last = self.cmd.last()
            got = None if last is None else (last.linear.x, last.angular.z)
            raise AssertionError(f'key {key!r}: /cmd_vel {got}, expected {want}\n'
                                 f'{self.proc.output()[-1500:]}') from exc

    def quit(self) -> int:
        self.proc.tty.send(CTRL_C)
        return self.proc.wait(30)


def clean_exit(proc: Any, status: int) -> str | None:
    """Why this end is not clean (status, abort, traceback), or None."""
    out = proc.output()
    if status != 0 or 'terminate called' in out or 'Traceback' in out:
        return f'exit {status}: ...{out[-800:]}'
    return None


# ------------------------------------------------------------------ key table
@pytest.mark.parametrize('mode', ['steering_angle', 'curvature', 'radius', 'yaw_rate'])
def test_key_table_in_each_mode_with_the_documented_defaults(ros, mode):
    """Every key of the layout, in each mapper mode, with the default speed and turn."""
    speed, turn = documented_defaults(mode)
    teleop = Teleop(ros, {'mode': mode, 'key_timeout': 30.0, 'repeat_rate': 20.0})
    assert f'mode {mode}' in teleop.proc.output()
    for key in ['i', 'u', 'o', 'j', 'l', ',', 'm', '.', 'k', 'u', ' ', 'o', 'p']:
        travel, steer = KEYS[key]
        teleop.press(key, expected_twist(mode, travel, steer, speed, turn))
    assert teleop.quit() == 0, teleop.proc.output()


def test_scale_keys_and_the_vehicle_limits(ros):
    """q/z, w/x, e/c scale speed and turn by 1.1 / 0.9; both are clamped to the vehicle
    limits (v_max = omega_max r, delta_max), also when the start values exceed them."""
    mode = 'steering_angle'
    v_max, turn_max = limits(mode)
    speed, turn = 1.0, 0.2
    teleop = Teleop(ros, {'mode': mode, 'speed': speed, 'turn': turn, 'key_timeout': 30.0,
                          'repeat_rate': 20.0})
    teleop.press('u', (speed, turn))
    for key in 'qzwxecq':
        fs, ft = SCALES[key]
        speed, turn = min(speed * fs, v_max), min(turn * ft, turn_max)
        teleop.press(key, (speed, turn))  # the direction keys stay: the new values at once
    teleop.press('.', (-speed, -turn))
    assert teleop.quit() == 0, teleop.proc.output()

    fast = Teleop(ros, {'mode': mode, 'speed': 50.0, 'turn': 5.0, 'key_timeout': 30.0,
                        'repeat_rate': 20.0}, cmd=teleop.cmd)
    fast.press('u', (v_max, turn_max))
    fast.press('q', (v_max, turn_max))  # at the limits already
    fast.press('z', (0.9 * v_max, 0.9 * turn_max))
    fast.press('w', (min(0.99 * v_max, v_max), 0.9 * turn_max))
    assert fast.quit() == 0, fast.proc.output()


def test_keys_typed_ahead_are_all_applied(ros):
    """Keys typed faster than the loop reads them (one write, as a paste or key repeat) are
    applied one by one; none is discarded when the terminal goes back to raw mode."""
    speed, turn = 1.0, 0.2
    teleop = Teleop(ros, {'mode': 'steering_angle', 'speed': speed, 'turn': turn,
                          'key_timeout': 30.0, 'repeat_rate': 20.0})
    teleop.press('u', (speed, turn))
    burst = 'wwwqeexcz'
    for key in burst:
        fs, ft = SCALES[key]
        speed, turn = speed * fs, turn * ft
    teleop.press(burst, (speed, turn))
    teleop.press('iku', (speed, turn))  # the last direction key wins
    teleop.press('uk', (0.0, 0.0))
    assert teleop.quit() == 0, teleop.proc.output()


def test_yaw_rate_reversing_and_radius_signs(ros):
    """yaw_rate mode with explicit speed/turn: m (back-left) yaws clockwise (psi_dot < 0);
    radius mode: u sends R = +1/kappa, o sends R = -1/kappa, i sends 0 (straight)."""
    teleop = Teleop(ros, {'mode': 'yaw_rate', 'speed': 0.5, 'turn': 0.8, 'key_timeout': 30.0})
    teleop.press('u', (0.5, 0.8))
    teleop.press('m', (-0.5, -0.8))
    teleop.press('.', (-0.5, 0.8))
    assert teleop.quit() == 0, teleop.proc.output()
    radius = Teleop(ros, {'mode': 'radius', 'speed': 0.5, 'turn': 0.4, 'key_timeout': 30.0},
                    cmd=teleop.cmd)
    radius.press('u', (0.5, 2.5))
    radius.press('o', (0.5, -2.5))
    radius.press('i', (0.5, 0.0))
    assert radius.quit() == 0, radius.proc.output()


# ------------------------------------------------------------------ dead man, quitting
def test_key_timeout_stops_the_car_and_keeps_the_settings(ros):
    """No key for ``key_timeout`` s: /cmd_vel drops to zero, never earlier; the next key moves
    again at the same speed; keys typed faster than the timeout keep it moving."""
    key_timeout = 1.0
    teleop = Teleop(ros, {'mode': 'steering_angle', 'speed': 0.7, 'turn': 0.1,
                          'key_timeout': key_timeout, 'repeat_rate': 20.0})
    sent = time.monotonic()
    teleop.press('i', (0.7, 0.0))
    teleop.cmd.wait(1, timeout=key_timeout + 10.0, where=lambda m: same(m, (0.0, 0.0)))
    t_stop = next(t for t, m in teleop.cmd.stamped if same(m, (0.0, 0.0)))
    assert t_stop - sent >= key_timeout, f'stopped {t_stop - sent:.3f} s after the key'
    teleop.press('u', (0.7, 0.1))  # settings kept

    teleop.cmd.clear()  # keys every 0.2 s (a held key): never stops
    end = time.monotonic() + 2.5
    while time.monotonic() < end:
        teleop.proc.tty.send('u')
        time.sleep(0.2)
    moving = teleop.cmd.messages
    assert len(moving) >= 5
    assert all(same(m, (0.7, 0.1)) for m in moving), [(m.linear.x, m.angular.z) for m in moving]
    assert teleop.quit() == 0, teleop.proc.output()


def test_ctrl_c_leaves_the_car_stopped(ros):
    """Ctrl-C while driving: the last /cmd_vel the node sends is a stop, and it exits 0."""
    teleop = Teleop(ros, {'mode': 'steering_angle', 'key_timeout': 30.0})
    speed, turn = documented_defaults('steering_angle')
    teleop.press('u', (speed, turn))
    assert teleop.quit() == 0, teleop.proc.output()
    wait_until(lambda: same(teleop.cmd.last(), (0.0, 0.0)), 10.0, 'the stop command')


def test_ctrl_c_quits_cleanly_every_time(ros):
    """Defect 2: Ctrl-C (0x03 on the terminal) 15 times; every run exits 0 without the
    ``terminate called without an active exception`` abort (status 134) of a daemon spin thread
    at interpreter exit."""
    random.seed(2)
    failures = []
    for run in range(15):
        teleop = Teleop(ros, {'key_timeout': 30.0}, listen=False)
        if run % 3 == 1:
            teleop.proc.tty.send('i')  # quit while driving, too
        time.sleep(random.uniform(0.0, 0.3))
        status = teleop.quit()
        if (why := clean_exit(teleop.proc, status)) is not None:
            failures.append(f'run {run}: {why}')
    assert not failures, f'{len(failures)}/15 unclean quits:\n' + '\n'.join(failures)


def test_sigint_to_the_process_group_quits_cleanly(ros):
    """Ctrl-C as a launcher (or a cooked-mode terminal) sends it: SIGINT to the process group of
    ``ros2 run``; once, and twice in quick succession."""
    failures = []
    for run, gaps in enumerate([(), (), (), (0.03,), (0.01,), (0.05, 0.02)]):
        teleop = Teleop(ros, {'key_timeout': 30.0}, listen=False)
        teleop.proc.signal(signal.SIGINT)
        for gap in gaps:
            time.sleep(gap)
            teleop.proc.signal(signal.SIGINT)
        status = teleop.proc.wait(30)
        if (why := clean_exit(teleop.proc, status)) is not None:
            failures.append(f'run {run} (gaps {gaps}): {why}')
    assert not failures, '\n'.join(failures)


# ------------------------------------------------------------------ user errors
@pytest.mark.parametrize(('param', 'value'), [('mode', 'sideways'), ('key_timeout', '0.0'),
                                              ('repeat_rate', 'fast')])
def test_bad_parameter_is_one_error_line_and_status_2(ros, param, value):
    """A bad parameter on a terminal: one ``error: ...`` line naming it, exit status 2."""
    proc = ros.start(['ros2', 'run', 'rc_sim_control', 'teleop_keyboard', '--ros-args', '-p',
                      f'{param}:={value}'], tty=True)
    status = proc.wait(60)
    out = proc.output()
    errors = [line for line in out.splitlines() if line.startswith('error:')]
    assert status == 2, out
    assert len(errors) == 1 and param in errors[0], out
    assert 'Traceback' not in out


def test_without_a_terminal_it_refuses_with_one_line(ros):
    """stdin not a terminal: one ``error:`` line on stderr, exit status 2."""
    done = ros.cli('run', 'rc_sim_control', 'teleop_keyboard', check=False, timeout=60,
                   input_text='')  # stdin: an empty pipe
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('error:') and 'terminal' in lines[0], done
