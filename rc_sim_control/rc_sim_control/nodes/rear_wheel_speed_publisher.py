"""rear_wheel_speed_publisher: test commands on /steering_angle and /rear_wheel_speed.

A fixed speed [m/s] and steering angle [rad] at ``publish_rate``, or a command
sequence: a YAML file (``sequence_file``, :mod:`rc_sim_control.commands` format, the same files
``rcsim run --scenario`` plays) or a named manoeuvre generated from vehicle.yaml (``manoeuvre``:
line, circle_left, circle_right, two_circles, steering_steps, speed_steps, slalom,
steering_chirp). Sequence samples are mapped by :class:`~rc_sim_control.ackermann.CommandMapper`
in the sequence's mode (limits and steering-rate limit from vehicle.yaml), so the real car and
the simulators receive the same commands. The sequence starts at the first timer tick at which
an output topic has a subscriber, so a consumer started after this node (the car's bridge, the
simulator, a recorder) still gets the whole sequence from its first sample; until then nothing
is published.
"""

from __future__ import annotations

from typing import Any

from rclpy.node import Node
from std_msgs.msg import Float64

from rc_sim_control.ackermann import CommandMapper, MapperConfig
from rc_sim_control.commands import (
    SequencePlayer,
    canonical_manoeuvre,
    load_sequence,
    manoeuvre,
)
from rc_sim_control.node_params import publisher_specs
from rc_sim_control.nodes._common import now_seconds, retime, setup_parameters, vehicle_params
from rc_sim_description.errors import ConfigError
from rc_sim_description.nodes.spin import run_node

QOS_DEPTH = 10


def _config(values: dict[str, Any], mode: str) -> MapperConfig:
    keys = ('wheelbase', 'track_width', 'wheel_radius', 'max_steering_angle',
            'max_steering_rate', 'max_wheel_speed')
    return MapperConfig(**{k: values[k] for k in keys}, mode=mode,
                        command_timeout=float('inf'))


class RearWheelSpeedPublisher(Node):
    """Fixed command or sequence -> steering_angle, rear_wheel_speed."""

    def __init__(self) -> None:
        super().__init__('rear_wheel_speed_publisher')
        self._vehicle = vehicle_params(self)
        self._specs = publisher_specs(self._vehicle)
        self._player: SequencePlayer | None = None
        self._mapper: CommandMapper | None = None
        self._values: dict[str, Any] = {}
        self._timer: Any = None
        self._rate = 0.0
        self._t0: float | None = None
        self._announced_end = False
        self._pub_steer = self.create_publisher(Float64, 'steering_angle', QOS_DEPTH)
        self._pub_speed = self.create_publisher(Float64, 'rear_wheel_speed', QOS_DEPTH)
        values = setup_parameters(self, self._specs, lambda v: _config(dict(v), 'yaw_rate'),
                                  self._apply)
        self._player = self._load_player(values)
        mode = self._player.seq.mode if self._player else 'steering_angle'
        self._mapper = CommandMapper(_config(values, mode))
        if self._player is not None:
            seq = self._player.seq
            what = f'sequence {seq.name or "(unnamed)"} ({seq.duration:.1f} s, mode {mode})'
        else:
            what = (f'fixed speed {values["speed"]} m/s, steering angle '
                    f'{values["steering_angle"]} rad')
        self.get_logger().info(f'publishing {what} at {values["publish_rate"]} Hz')

    def _load_player(self, values: dict[str, Any]) -> SequencePlayer | None:
        path, name = values['sequence_file'], values['manoeuvre']
        if path and name:
            raise ConfigError('rear_wheel_speed_publisher: set sequence_file or manoeuvre, '
                              'not both')
        if path:
            return SequencePlayer(load_sequence(path), bool(values['loop']))
        if name:
            note = canonical_manoeuvre(name)[1]
            if note:
                self.get_logger().warning(f'deprecated: {note}')
            return SequencePlayer(manoeuvre(name, self._vehicle), bool(values['loop']))
        return None

    def _apply(self, values: dict[str, Any]) -> None:
        self._values = values
        if self._mapper is not None:
            self._mapper.reconfigure(_config(values, self._mapper.config.mode))
        if self._player is not None:
            self._player = SequencePlayer(self._player.seq, bool(values['loop']))
        rate = float(values['publish_rate'])
        if rate != self._rate:
            self._timer = retime(self, self._timer, rate, self._on_timer)
            self._rate = rate

    def _listened(self) -> bool:
        """An output topic has a subscriber."""
        return (self._pub_steer.get_subscription_count() > 0
                or self._pub_speed.get_subscription_count() > 0)

    def _on_timer(self) -> None:
        if self._mapper is None:
            return
        t = now_seconds(self)
        if self._player is None:
            v, z = float(self._values['speed']), float(self._values['steering_angle'])
        else:
            if self._t0 is None:
                if not self._listened():
                    return  # nobody would receive the first samples: start when someone listens
                self._t0 = t
                self.get_logger().info('a subscriber is listening: sequence started')
            v, z, done = self._player.command(t - self._t0)
            if done and not self._announced_end:
                self.get_logger().info('sequence finished: holding its last sample')
                self._announced_end = True
        out = self._mapper.update(v, z, t)
        if out is None:
            return
        self._pub_steer.publish(Float64(data=float(out.steering_angle)))
        self._pub_speed.publish(Float64(data=float(out.wheel_speed)))


def main(args: list[str] | None = None) -> int:
    """Entry point (ros2 run rc_sim_control rear_wheel_speed_publisher)."""
    return run_node(RearWheelSpeedPublisher, args)


if __name__ == '__main__':
    raise SystemExit(main())
