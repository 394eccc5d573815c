"""ROS-free core of the ``bag_recorder`` node: a small ``ros2 bag record`` for machines without
rosbag2.

``ros2 run rc_sim_description bag_recorder --ros-args -p topics:="[/cmd_vel, /odom]"
-p output:=my_run`` subscribes to each topic with serialized (raw CDR) messages and writes them,
unchanged, into a rosbag2 bag (version 8, sqlite3 or mcap) through the project's bag layer
(:class:`~rc_sim_description.bags.writer.BagWriter`): every reader of rc-sim (``rcsim inspect``,
``fit``) and ``ros2 bag`` read it. The node (``nodes/bag_recorder.py``) only discovers the topics'
types and publishers' QoS, subscribes and hands the bytes to :class:`Recorder`.

Like ``ros2 bag record``: a topic that has no publisher yet is subscribed as soon as one appears;
the subscription QoS adapts to the publishers (:func:`subscription_qos`: reliable only when every
publisher is, transient local, "latched", only when every publisher is, so ``/tf_static`` and
``/robot_description`` are recorded and marked latched in the bag's metadata); each message is
stored at its receive time on the node's clock (sim time with ``use_sim_time:=true``, as
``ros2 bag record --use-sim-time``). The bag is built in a temporary directory beside ``output``
and renamed when the recording ends (Ctrl-C): a failure leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
import re
from typing import Any

from rc_sim_description.bags.writer import STORAGES, BagWriter, latched_qos
from rc_sim_description.errors import ConfigError, OutputError

__all__ = ['RECORDER_PARAMETERS', 'Recorder', 'RecorderSettings', 'SubscriptionQos',
           'parse_topics', 'recorder_settings', 'subscription_qos', 'summary_line']

#: ROS 2 topic name (absolute or relative; ``~`` and substitutions are not taken): tokens of
#: letters, digits and underscores separated by single slashes, a token not starting with a digit
#: (design.ros2.org "Topic and Service name mapping to DDS").
_TOPIC = re.compile(r'/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*')

#: name -> (default, description) of the node's parameters (besides use_sim_time)
RECORDER_PARAMETERS: dict[str, tuple[Any, str]] = {
    'topics': ([], 'Topics to record: a list ("[/cmd_vel, /odom]") or one string of names '
               'separated by commas or spaces.'),
    'output': ('', 'Bag directory to write (created when the recording ends; must not exist '
               'unless force).'),
    'storage': ('sqlite3', 'Storage plug-in: sqlite3 (Humble and later read it) or mcap.'),
    'force': (False, 'Replace an existing output.'),
}


def parse_topics(value: Any) -> tuple[str, ...]:
    """The ``topics`` parameter as absolute names: a list of strings or one string of names
    separated by commas or spaces; relative names are taken from the root namespace ``/``.
    One-line :class:`ConfigError` for an empty list, a bad name or a repeated topic."""
    if isinstance(value, str):
        items: list[Any] = [t for t in re.split(r'[\s,]+', value.strip().strip('[]')) if t]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    elif value is None:
        items = []
    else:
        raise ConfigError(f'parameter topics: expected a list of topic names, got {value!r}')
    if not items:
        raise ConfigError('parameter topics: no topics given (e.g. -p topics:="[/cmd_vel, '
                          '/odom]")')
    out: list[str] = []
    for item in items:
        name = item.strip() if isinstance(item, str) else item
        if not isinstance(name, str) or not _TOPIC.fullmatch(name):
            raise ConfigError(f'parameter topics: {item!r} is not a topic name (letters, '
                              'digits, underscores and slashes)')
        name = name if name.startswith('/') else '/' + name
        if name in out:
            raise ConfigError(f'parameter topics: {name} is given twice')
        out.append(name)
    return tuple(out)


@dataclass(frozen=True)
class RecorderSettings:
    """Validated parameters of the recorder."""

    topics: tuple[str, ...]
    output: Path
    storage: str = 'sqlite3'
    force: bool = False


def recorder_settings(values: Mapping[str, Any]) -> RecorderSettings:
    """Validate the node parameters (missing ones take their default); one-line errors, and an
    existing ``output`` is refused now rather than when the recording ends."""
    unknown = sorted(set(values) - set(RECORDER_PARAMETERS))
    if unknown:
        raise ConfigError(f'unknown parameter {unknown[0]!r} (known: '
                          f'{", ".join(RECORDER_PARAMETERS)})')
    v = {name: values.get(name, default) for name, (default, _) in RECORDER_PARAMETERS.items()}
    topics = parse_topics(v['topics'])
    output = str(v['output'] or '').strip()
    if not output:
        raise ConfigError('parameter output: no bag directory given (e.g. -p output:=my_run)')
    storage = str(v['storage']).strip()
    if storage not in STORAGES:
        raise ConfigError(f'parameter storage: expected {" or ".join(STORAGES)}, got '
                          f'{storage!r}')
    force = v['force']
    if not isinstance(force, bool):
        raise ConfigError(f'parameter force: expected true or false, got {force!r}')
    path = Path(output).expanduser()
    if path.exists() and not force:
        raise OutputError(f'{path} exists already (use -p force:=true to replace it)')
    return RecorderSettings(topics, path, storage, force)


@dataclass(frozen=True)
class SubscriptionQos:
    """What the recorder's subscription asks for (depth is the node's choice)."""

    reliable: bool
    transient_local: bool


def subscription_qos(publishers: Iterable[tuple[bool, bool]]) -> SubscriptionQos:
    """QoS that matches every publisher, ``(reliable, transient_local)`` each, as rosbag2's
    adaptive QoS: reliable only if all are reliable (a reliable reader does not match a
    best-effort writer), transient local only if all are (a transient-local reader does not match
    a volatile writer). No publisher: reliable and volatile."""
    pubs = list(publishers)
    if not pubs:
        return SubscriptionQos(reliable=True, transient_local=False)
    return SubscriptionQos(reliable=all(r for r, _ in pubs),
                           transient_local=all(t for _, t in pubs))


@dataclass
class _Topic:
    msgtype: str
    pending: list[bytes] = field(default_factory=list)


class Recorder:
    """Writes raw CDR messages of the declared topics into one bag.

    ``open()`` starts the bag (a temporary directory beside the output), :meth:`add_topic`
    declares a topic once its type is known, :meth:`record` stores a message at its receive time
    [ns]; a time of 0 or less (a sim clock that has not ticked yet) keeps the message until the
    first valid time, at which it is stored. :meth:`close` renames the bag into place.
    """

    def __init__(self, settings: RecorderSettings) -> None:
        self.settings = settings
        self._bag: BagWriter | None = None
        self._topics: dict[str, _Topic] = {}
        self._waiting: list[tuple[str, bytes]] = []
        self.last_time_ns = 0

    @property
    def topics(self) -> dict[str, str]:
        """Declared topic -> message type."""
        return {name: t.msgtype for name, t in self._topics.items()}

    def open(self) -> None:
        """Start the bag; OutputError when the output cannot be written."""
        bag = BagWriter(self.settings.output, storage=self.settings.storage,
                        force=self.settings.force)
        bag.__enter__()
        self._bag = bag

    def add_topic(self, topic: str, msgtype: str, *, latched: bool = False) -> None:
        """Declare ``topic`` with its type (``pkg/msg/Type``); ``latched`` records the QoS of a
        transient-local publisher. BagError when the type has no known definition."""
        if self._bag is None:
            raise OutputError(f'{self.settings.output}: recorder is not open')
        if topic in self._topics:
            return
        self._bag.add_topic(topic, msgtype, qos=latched_qos() if latched else None)
        self._topics[topic] = _Topic(msgtype)

    def record(self, topic: str, t_ns: int, data: bytes | memoryview) -> None:
        """Store one serialized message received at ``t_ns``."""
        if self._bag is None or topic not in self._topics:
            raise OutputError(f'{self.settings.output}: {topic} is not recorded')
        if t_ns <= 0:
            self._waiting.append((topic, bytes(data)))
            return
        t_ns = max(int(t_ns), self.last_time_ns)  # a clock may step back (sim time reset)
        for name, held in self._waiting:
            self._bag.write_raw(name, t_ns, held)
        self._waiting.clear()
        self._bag.write_raw(topic, t_ns, data)
        self.last_time_ns = t_ns

    @property
    def counts(self) -> dict[str, int]:
        """Messages stored per declared topic (held ones not yet)."""
        return dict(self._bag.counts) if self._bag is not None else {}

    def missing(self) -> list[str]:
        """Requested topics that were never declared (no publisher seen)."""
        return [t for t in self.settings.topics if t not in self._topics]

    def close(self) -> str:
        """Finish the bag (held messages at the last time seen) and rename it into place; the
        summary line."""
        if self._bag is None:
            raise OutputError(f'{self.settings.output}: recorder is not open')
        bag, self._bag = self._bag, None
        for name, held in self._waiting:
            bag.write_raw(name, max(self.last_time_ns, 1), held)
        self._waiting.clear()
        counts = dict(bag.counts)
        bag.__exit__(None, None, None)
        return summary_line(self.settings.output, counts, self.missing())

    def abort(self) -> None:
        """Drop the bag being written (nothing is left behind)."""
        if self._bag is not None:
            bag, self._bag = self._bag, None
            bag.__exit__(OutputError, OutputError('recording aborted'), None)


def summary_line(output: Path, counts: Mapping[str, int], missing: Sequence[str]) -> str:
    """``wrote BAG: N messages (/a 10, /b 3)`` plus the topics that never appeared."""
    total = sum(counts.values())
    per_topic = ', '.join(f'{t} {n}' for t, n in counts.items())
    line = f'wrote {output}: {total} message(s)' + (f' ({per_topic})' if per_topic else '')
    if missing:
        line += f'; never published, not in the bag: {", ".join(missing)}'
    return line

