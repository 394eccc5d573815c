"""Keyboard teleoperation core: key tables as data and a pure key -> command function.

Layout of ``teleop_twist_keyboard`` / the MIT racecar teleop, read as car controls (steer left =
delta > 0, whatever the mapper mode)::

    u  i  o        forward-left   forward   forward-right
    j  k  l        steer left     stop      steer right
    m  ,  .        back-left      back      back-right

    q/z: speed and turn x1.1 / x0.9    w/x: speed only    e/c: turn only
    space or k: stop;  any other key: stop (dead man: releasing every key also stops, see
    ``key_timeout`` of the node).

``speed`` [m/s] and ``turn`` (in the unit of the mapper ``mode``: rad for steering_angle, 1/m for
curvature, rad/s for yaw_rate; radius mode keeps a curvature and sends R = 1/kappa) are clamped to
the vehicle limits from vehicle.yaml. In yaw_rate mode the sign of angular_z follows the travel
direction (reversing with the wheels steered left yaws clockwise: psi_dot = v tan(delta) / L).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import math

from rc_sim_control.ackermann import MAPPER_MODES
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams

__all__ = [
    'MOVE_BINDINGS',
    'SCALE_BINDINGS',
    'STOP_KEYS',
    'TeleopLimits',
    'TeleopState',
    'handle_idle',
    'handle_key',
    'help_text',
    'twist_of',
]

# key -> (travel direction, steering direction), +1 = forward / left
MOVE_BINDINGS: dict[str, tuple[int, int]] = {
    'u': (1, 1), 'i': (1, 0), 'o': (1, -1),
    'j': (0, 1), 'l': (0, -1),
    'm': (-1, 1), ',': (-1, 0), '.': (-1, -1),
}
# key -> (speed factor, turn factor)
SCALE_BINDINGS: dict[str, tuple[float, float]] = {
    'q': (1.1, 1.1), 'z': (0.9, 0.9),
    'w': (1.1, 1.0), 'x': (0.9, 1.0),
    'e': (1.0, 1.1), 'c': (1.0, 0.9),
}
STOP_KEYS: tuple[str, ...] = ('k', ' ')


@dataclass(frozen=True)
class TeleopLimits:
    """Clamps of the teleop: speed [m/s] and turn (mapper-mode unit; curvature in radius mode)."""

    mode: str
    max_speed: float
    max_turn: float
    wheelbase: float

    @classmethod
    def from_vehicle(cls, params: VehicleParams, mode: str = 'yaw_rate') -> TeleopLimits:
        """Limits from vehicle.yaml: v_max = omega_max r; turn from delta_max for ``mode``."""
        if mode not in MAPPER_MODES:
            raise ConfigError(f'teleop: mode: must be one of {", ".join(MAPPER_MODES)}, '
                              f'got {mode!r}')
        L = params.geometry.wheelbase
        tan_max = math.tan(params.steering.max_steering_angle)
        max_turn = {'steering_angle': params.steering.max_steering_angle,
                    'curvature': tan_max / L, 'radius': tan_max / L,
                    'yaw_rate': params.max_speed * tan_max / L}[mode]
        return cls(mode=mode, max_speed=params.max_speed, max_turn=max_turn, wheelbase=L)


@dataclass(frozen=True)
class TeleopState:
    """Speed and turn magnitudes, and the current direction keys (0 = none)."""

    speed: float
    turn: float
    travel: int = 0
    steer: int = 0


def handle_key(state: TeleopState, key: str, limits: TeleopLimits) -> TeleopState:
    """New state after ``key`` (pure). Unknown keys and stop keys stop the car."""
    if key in MOVE_BINDINGS:
        travel, steer = MOVE_BINDINGS[key]
        return replace(state, travel=travel, steer=steer)
    if key in SCALE_BINDINGS:
        fs, ft = SCALE_BINDINGS[key]
        return replace(state, speed=min(state.speed * fs, limits.max_speed),
                       turn=min(state.turn * ft, limits.max_turn))
    return replace(state, travel=0, steer=0)


def handle_idle(state: TeleopState, idle_time: float, key_timeout: float) -> TeleopState:
    """Dead man: stop (keep speed/turn settings) after ``key_timeout`` s without a key."""
    if idle_time > key_timeout and (state.travel or state.steer):
        return replace(state, travel=0, steer=0)
    return state


def twist_of(state: TeleopState, limits: TeleopLimits) -> tuple[float, float]:
    """(linear_x [m/s], angular_z in the mapper mode) for ``state``."""
    v = state.travel * min(state.speed, limits.max_speed)
    turn = state.steer * min(state.turn, limits.max_turn)
    if limits.mode == 'radius':
        return v, (1.0 / turn if turn else 0.0)  # R = 0 means straight for the mapper
    if limits.mode == 'yaw_rate':
        # turn is the yaw rate at full speed scale; sign of psi_dot = sign(v) * sign(delta)
        return v, (turn if state.travel >= 0 else -turn)
    return v, turn


def help_text(state: TeleopState, limits: TeleopLimits) -> str:
    """Banner printed by the node (generated from the tables)."""
    unit = {'steering_angle': 'rad', 'curvature': '1/m', 'radius': '1/m (sent as R = 1/kappa)',
            'yaw_rate': 'rad/s'}[limits.mode]
    moves = '  '.join(f'{k!r}:{v}' for k, v in MOVE_BINDINGS.items())
    scales = '  '.join(f'{k!r}:x{v[0]:g}/x{v[1]:g}' for k, v in SCALE_BINDINGS.items())
    return ('rc_sim teleop (keys as in teleop_twist_keyboard; +steer = left)\n'
            '   u  i  o\n   j  k  l\n   m  ,  .\n'
            f'moves (travel, steer): {moves}\n'
            f'scale (speed, turn): {scales}\n'
            'space/k or any other key: stop; CTRL-C: quit\n'
            f'mode {limits.mode}: speed {state.speed:.3g} m/s (max {limits.max_speed:.3g}), '
            f'turn {state.turn:.3g} {unit} (max {limits.max_turn:.3g})')
