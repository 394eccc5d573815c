"""teleop_keyboard: keys -> /cmd_vel (geometry_msgs/Twist), like teleop_twist_keyboard.

Key table and key -> command logic are pure data/functions in :mod:`rc_sim_control.teleop`;
this node reads the terminal (raw mode), republishes the current command at ``repeat_rate`` and
stops the car when no key arrives for ``key_timeout`` s. ``mode`` must match the mapper's mode
(launch argument ``mode`` of control.launch.py). Run it in its own terminal:
``ros2 run rc_sim_control teleop_keyboard --ros-args -p mode:=yaw_rate``.
"""

from __future__ import annotations

import os
import select
import sys
import time
from typing import Any

from geometry_msgs.msg import Twist
import rclpy
from rclpy.node import Node

from rc_sim_control.node_params import teleop_specs
from rc_sim_control.nodes._common import declare, setup_parameters, vehicle_params
from rc_sim_control.teleop import (
    TeleopLimits,
    TeleopState,
    handle_idle,
    handle_key,
    help_text,
    twist_of,
)
from rc_sim_description.nodes.spin import run_node

CTRL_C = '\x03'


class TeleopKeyboard(Node):
    """Publishes cmd_vel; the key loop runs in :func:`main`."""

    def __init__(self) -> None:
        super().__init__('teleop_keyboard')
        vehicle = vehicle_params(self)
        mode_spec = next(s for s in teleop_specs(vehicle) if s.name == 'mode')
        mode = declare(self, [mode_spec])['mode']
        self.limits = TeleopLimits.from_vehicle(vehicle, mode)
        self.values: dict[str, Any] = {}
        self.state = TeleopState(speed=0.0, turn=0.0)
        setup_parameters(self, teleop_specs(vehicle, mode), None, self._apply)
        self.pub = self.create_publisher(Twist, 'cmd_vel', 10)

    def _apply(self, values: dict[str, Any]) -> None:
        """Start values and live changes of speed/turn (repeat_rate, key_timeout: next loop)."""
        self.values = values
        self.state = TeleopState(speed=min(float(values['speed']), self.limits.max_speed),
                                 turn=min(float(values['turn']), self.limits.max_turn),
                                 travel=self.state.travel, steer=self.state.steer)

    def publish(self) -> None:
        v, z = twist_of(self.state, self.limits)
        msg = Twist()
        msg.linear.x = float(v)
        msg.angular.z = float(z)
        self.pub.publish(msg)


def _read_key(timeout: float, settings: Any) -> str | None:
    """One key within ``timeout`` s (raw mode only while waiting, as teleop_twist_keyboard).

    Keys typed in between (cooked mode) are kept: raw mode is set with TCSANOW, not
    tty.setraw's default TCSAFLUSH, which discards them (a lost stop key). One byte straight
    from the file descriptor: ``sys.stdin.read(1)`` would buffer the keys typed after it,
    which ``select`` on the descriptor then no longer sees."""
    import termios
    import tty

    fd = sys.stdin.fileno()
    tty.setraw(fd, termios.TCSANOW)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return os.read(fd, 1).decode('latin-1') if ready else None
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, settings)


def _key_loop(node: TeleopKeyboard, settings: Any) -> None:
    last_key = time.monotonic()
    print(help_text(node.state, node.limits))
    while rclpy.ok():
        period = 1.0 / float(node.values['repeat_rate'])
        key_timeout = float(node.values['key_timeout'])
        key = _read_key(period, settings)
        now = time.monotonic()
        if key == CTRL_C:
            break
        if key is not None:
            old = node.state
            node.state = handle_key(node.state, key, node.limits)
            last_key = now
            if (old.speed, old.turn) != (node.state.speed, node.state.turn):
                print(f'speed {node.state.speed:.3g} m/s, turn {node.state.turn:.3g}')
        else:
            node.state = handle_idle(node.state, now - last_key, key_timeout)
        node.publish()
    node.state = handle_key(node.state, ' ', node.limits)
    if rclpy.ok():  # leave the car stopped (not possible once a signal shut the context down)
        node.publish()


def main(args: list[str] | None = None) -> int:
    """Entry point (ros2 run rc_sim_control teleop_keyboard); needs a terminal."""
    import termios

    if not sys.stdin.isatty():
        print('error: teleop_keyboard needs an interactive terminal (stdin is not a tty)',
              file=sys.stderr)
        return 2
    saved = termios.tcgetattr(sys.stdin)
    try:  # the key loop runs in this thread; run_node spins the node in a joined thread
        return run_node(TeleopKeyboard, args, foreground=lambda node: _key_loop(node, saved))
    finally:
        termios.tcsetattr(sys.stdin, termios.TCSADRAIN, saved)


if __name__ == '__main__':
    raise SystemExit(main())
