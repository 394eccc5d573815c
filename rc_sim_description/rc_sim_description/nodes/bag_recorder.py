"""bag_recorder: record topics into a rosbag2 bag where ``ros2 bag`` is not installed.

``ros2 run rc_sim_description bag_recorder --ros-args -p topics:="[/cmd_vel, /odom]"
-p output:=my_run [-p storage:=mcap] [-p use_sim_time:=true]``; Ctrl-C ends the recording and
writes the bag. Subscribes with serialized messages (``raw=True``: the CDR bytes are stored as
received, nothing is decoded) as soon as a topic has a publisher, with a QoS that matches its
publishers. All logic (parameters, QoS choice, the bag) is in :mod:`rc_sim_description.recorder`.

Its own ``main``: the bag must be finished after Ctrl-C even when a second SIGINT follows (a
terminal's Ctrl-C reaches every process of ``ros2 launch``, which then forwards one more), so
SIGINT and SIGTERM only set a flag here and are ignored while the bag is written.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rosidl_runtime_py.utilities import get_message

from rc_sim_description.bags.errors import BagError
from rc_sim_description.errors import RcSimError
from rc_sim_description.nodes.parameters import declare_typed
from rc_sim_description.recorder import (
    RECORDER_PARAMETERS,
    Recorder,
    recorder_settings,
    subscription_qos,
)

#: messages a subscription queues while the bag is being written (keep last)
QUEUE_DEPTH = 1000
DISCOVERY_PERIOD_S = 0.5


class BagRecorder(Node):
    """Subscribes the requested topics (raw) and feeds :class:`Recorder`."""

    def __init__(self) -> None:
        super().__init__('bag_recorder')
        values: dict[str, Any] = {}
        for name, (default, description) in RECORDER_PARAMETERS.items():
            if name == 'topics':  # a list or one string: dynamically typed
                self.declare_parameter(name, None, ParameterDescriptor(
                    description=description, dynamic_typing=True, read_only=True))
                values[name] = self.get_parameter(name).value
            else:
                values[name] = declare_typed(self, name, default, description, read_only=True)
        self.recorder = Recorder(recorder_settings(values))
        self._skipped: set[str] = set()
        self.failed = False
        self.recorder.open()
        wall = Clock(clock_type=ClockType.STEADY_TIME)  # discovery must not wait for /clock
        self.create_timer(DISCOVERY_PERIOD_S, self._discover, clock=wall)
        settings = self.recorder.settings
        self.get_logger().info(
            f'recording {", ".join(settings.topics)} into {settings.output} '
            f'({settings.storage}); Ctrl-C ends the recording')
        self._discover()

    def _discover(self) -> None:
        """Subscribe every requested topic that now has a publisher."""
        waiting = [t for t in self.recorder.missing() if t not in self._skipped]
        if not waiting:
            return
        types = dict(self.get_topic_names_and_types())
        for topic in waiting:
            names = types.get(topic)
            publishers = self.get_publishers_info_by_topic(topic) if names else []
            if not names or not publishers:
                continue
            if len(names) > 1:
                self._skip(topic, f'{topic} has several types ({", ".join(names)}): not '
                           'recorded')
                continue
            msgtype = names[0]
            qos = subscription_qos(
                (p.qos_profile.reliability == ReliabilityPolicy.RELIABLE,
                 p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL)
                for p in publishers)
            try:
                msg_class = get_message(msgtype)
                self.recorder.add_topic(topic, msgtype, latched=qos.transient_local)
            except (AttributeError, ModuleNotFoundError, ValueError) as exc:
                self._skip(topic, f'{topic}: type {msgtype} is not installed here ({exc}): '
                           'not recorded')
                continue
            except BagError as exc:
                self._skip(topic, f'{exc}: not recorded')
                continue
            profile = QoSProfile(
                history=HistoryPolicy.KEEP_LAST, depth=QUEUE_DEPTH,
                reliability=(ReliabilityPolicy.RELIABLE if qos.reliable
                             else ReliabilityPolicy.BEST_EFFORT),
                durability=(DurabilityPolicy.TRANSIENT_LOCAL if qos.transient_local
                            else DurabilityPolicy.VOLATILE))
            self.create_subscription(msg_class, topic,
                                     lambda data, t=topic: self._on_message(t, data), profile,
                                     raw=True)
            self.get_logger().info(f'recording {topic} ({msgtype}'
                                   + (', latched)' if qos.transient_local else ')'))

    def _skip(self, topic: str, line: str) -> None:
        self._skipped.add(topic)
        self.get_logger().warning(line)

    def _on_message(self, topic: str, data: bytes) -> None:
        if self.failed:
            return
        try:
            self.recorder.record(topic, self.get_clock().now().nanoseconds, data)
        except RcSimError as exc:  # the storage failed (disk full ...): stop recording
            self.failed = True
            self.get_logger().error(f'{exc}')

    def finish(self) -> int:
        """Write the bag (exit status 0) or drop it after a storage failure (1)."""
        if self.failed:
            self.recorder.abort()
            return 1
        try:
            line = self.recorder.close()
        except RcSimError as exc:
            print(f'error: {exc}', file=sys.stderr)
            return 1
        missing = self.recorder.missing()
        (self.get_logger().warning if missing else self.get_logger().info)(line)
        return 0


def main(args: list[str] | None = None) -> int:
    """Entry point (``ros2 run rc_sim_description bag_recorder``)."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM)}
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node: BagRecorder | None = None
    executor = SingleThreadedExecutor()
    status = 0
    try:
        try:
            node = BagRecorder()
        except RcSimError as exc:
            print(f'error: {exc}', file=sys.stderr)
            return 2
        executor.add_node(node)
        while not stop.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    finally:
        for sig in previous:  # a second Ctrl-C must not interrupt writing the bag
            signal.signal(sig, signal.SIG_IGN)
        if node is not None:
            status = node.finish()
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return status


if __name__ == '__main__':
    raise SystemExit(main())
