"""Atomic rosbag2 writer (version 8: Humble's ``ros2 bag`` and later read it), sqlite3 or mcap,
through the ``rosbags`` library.

``with BagWriter(out) as bag: bag.write(topic, msgtype, t_ns, msg)`` serialises typestore
messages; :meth:`BagWriter.write_raw` takes CDR bytes that the caller serialised itself and
:meth:`BagWriter.write_batches` whole batches of them (fixed-layout messages packed in bulk with
numpy by :mod:`rc_sim_description.bags.cdr_bulk`), written many per storage call
(:mod:`rc_sim_description.bags.bulk_storage`). The bag is built in a temporary directory next to
``path`` and renamed on success; a failure (also a full disk or another OS error: one
:class:`~rc_sim_description.errors.OutputError` line naming ``path``) leaves nothing behind.
With ``finite=True`` (the ``rcsim`` commands), :meth:`BagWriter.write` refuses a message with a
NaN or infinite float field (LaserScan ``ranges`` and ``intensities`` excepted: REP 117 gives
them a meaning) instead of writing it.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack, suppress
import os
from pathlib import Path
from types import TracebackType
from typing import Any

from rc_sim_description.atomic import atomic_output_dir, output_os_error, rename_bag_storage
from rc_sim_description.bags.cdr_bulk import RawBatch
from rc_sim_description.bags.errors import BagError, one_line
from rc_sim_description.bags.typestore import base_typestore, definition_errors, writer_definition
from rc_sim_description.errors import ConfigError, OutputError

__all__ = ['STORAGES', 'BagWriter', 'latched_qos', 'parse_qos']

STORAGES = ('sqlite3', 'mcap')
#: fields whose NaN and inf carry a meaning (REP 117: no return, out of range)
_MEANINGFUL_NON_FINITE = ('ranges', 'intensities')


def _storage_errors() -> tuple[type[BaseException], ...]:
    """What opening, writing and closing a rosbags writer raises: its ``WriterError`` (bad
    options, an existing bag), the file system's ``OSError`` and SQLite's errors."""
    import sqlite3

    from rosbags.rosbag2 import WriterError

    return (WriterError, OSError, sqlite3.Error)


def latched_qos() -> list[Any]:
    """QoS of a latched topic (reliable, transient local, keep last 1), as robot_state_publisher
    offers ``/tf_static`` and ``/robot_description``; ``ros2 bag play`` replays it so."""
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    never = QosTime(0, 0)
    return [Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL,
                never, never, QosLiveliness.AUTOMATIC, never, False)]


def parse_qos(text: str) -> list[Any]:
    """offered_qos_profiles YAML text -> rosbags Qos list ([] when empty or unreadable)."""
    if not text.strip() or text.strip() == 'latching':
        return latched_qos() if text.strip() == 'latching' else []
    from rosbags.rosbag2.metadata import parse_qos as rosbags_parse_qos

    try:
        return list(rosbags_parse_qos(text))
    except (ValueError, KeyError, TypeError, AttributeError):  # foreign/odd QoS: drop it
        return []


class BagWriter:
    """Atomic rosbag2 writer: ``with BagWriter(out) as bag: bag.write(topic, type, t_ns, msg)``.

    Other files (plots, summaries) may be put into :attr:`directory` before the ``with`` block
    ends. Topics are added on first write with the base typestore (ROS 2 Humble +
    ackermann_msgs), or explicitly with :meth:`add_topic` (another typestore, QoS).
    """

    def __init__(self, path: str | os.PathLike[str], *, storage: str = 'sqlite3',
                 force: bool = False, finite: bool = False) -> None:
        if storage not in STORAGES:
            raise ConfigError(f'unknown bag storage {storage!r} (choose one of '
                              f'{", ".join(STORAGES)})')
        self.path = Path(path)
        self.storage = storage
        self.force = force
        self.finite = finite
        self._stack: ExitStack | None = None
        self._writer: Any = None
        self._connections: dict[str, Any] = {}
        self._stores: dict[str, Any] = {}
        self._tmp: Path | None = None
        self._closed = False
        self._renamed = False
        self.counts: dict[str, int] = {}

    @property
    def directory(self) -> Path:
        """The (temporary) bag directory while writing."""
        if self._tmp is None:
            raise OutputError(f'{self.path}: bag is not open')
        return self._tmp

    def __enter__(self) -> BagWriter:
        from rosbags.rosbag2 import StoragePlugin

        from rc_sim_description.bags.bulk_storage import BulkWriter

        stack = ExitStack()
        try:
            self._tmp = stack.enter_context(atomic_output_dir(self.path, force=self.force,
                                                              kind='bag'))
        except OSError as exc:
            raise self._storage_error('create', exc) from None
        plugin = StoragePlugin.SQLITE3 if self.storage == 'sqlite3' else StoragePlugin.MCAP
        try:
            self._writer = BulkWriter(self._tmp, version=8, storage_plugin=plugin)
            self._writer.open()
        except _storage_errors() as exc:
            error = self._storage_error('create', exc)
            # a failure: the temporary directory goes (never renamed into place); what the
            # cleanup raises is its own report of the same failure
            with suppress(BaseException):
                stack.__exit__(type(exc), exc, exc.__traceback__)
            self._tmp = None
            raise error from None
        self._stack = stack
        return self

    def _storage_error(self, verb: str, exc: BaseException) -> OutputError:
        """One line for a storage failure: the OS reason and what to do when it is one (full
        disk, quota, read-only, ...), else the library's message."""
        near = [p for p in (self._tmp, self.path.parent) if p is not None]
        translated = output_os_error(self.path, exc, *near)
        if translated is not None:
            return translated
        return OutputError(f'{self.path}: cannot {verb} bag ({one_line(exc)})')

    def add_topic(self, topic: str, msgtype: str, *, typestore: Any = None,
                  qos: list[Any] | None = None) -> None:
        """Declare ``topic`` with its type (definition and hash from ``typestore``, default the
        base store) and offered QoS (default none recorded)."""
        if topic in self._connections:
            if self._connections[topic].msgtype != msgtype:
                raise ConfigError(f'{self.path}: topic {topic} written as '
                                  f'{self._connections[topic].msgtype} and {msgtype}')
            return
        store = typestore
        try:
            if store is None:
                msgdef, digest = writer_definition(msgtype)
            else:
                msgdef, _ = store.generate_msgdef(msgtype, ros_version=2)
                digest = store.hash_rihs01(msgtype)
        except definition_errors() as exc:
            raise BagError(f'{self.path}: cannot write {topic}: no definition of {msgtype} '
                           f'({one_line(exc)})') from None
        try:
            conn = self._writer.add_connection(topic, msgtype, msgdef=msgdef, rihs01=digest,
                                               offered_qos_profiles=qos or [])
        except _storage_errors() as exc:  # a full disk ...: one line naming the bag
            raise self._storage_error('write', exc) from None
        self._connections[topic] = conn
        if store is not None:
            self._stores[topic] = store
        self.counts[topic] = 0

    def write(self, topic: str, msgtype: str, t_ns: int, msg: Any) -> None:
        """Serialise ``msg`` (a typestore message of ``msgtype``) on ``topic`` at ``t_ns``."""
        self.add_topic(topic, msgtype)
        if self._connections[topic].msgtype != msgtype:
            raise ConfigError(f'{self.path}: topic {topic} written as '
                              f'{self._connections[topic].msgtype} and {msgtype}')
        if self.finite:
            from rc_sim_description.finite import non_finite_field

            bad = non_finite_field(msg, skip=_MEANINGFUL_NON_FINITE)
            if bad is not None:
                raise BagError(f'{self.path}: {topic} at t = {int(t_ns) * 1e-9:.3f} s: {bad} '
                               f'({msgtype}): a bag never holds NaN or infinite measurements '
                               '(nothing was written)')
        store = self._stores.get(topic) or base_typestore()
        data = store.serialize_cdr(msg, msgtype)
        try:
            self._writer.write(self._connections[topic], int(t_ns), data)
        except _storage_errors() as exc:  # a full disk ...: one line naming the bag
            raise self._storage_error('write', exc) from None
        self.counts[topic] += 1

    def write_raw(self, topic: str, t_ns: int, cdr: bytes | memoryview,
                  msgtype: str | None = None) -> None:
        """Write CDR bytes (little-endian, with the 4-byte encapsulation header) serialised by
        the caller; ``msgtype`` declares the topic on first use."""
        if topic not in self._connections:
            if msgtype is None:
                raise ConfigError(f'{self.path}: write_raw on undeclared topic {topic} '
                                  '(give msgtype or call add_topic first)')
            self.add_topic(topic, msgtype)
        try:
            self._writer.write(self._connections[topic], int(t_ns), cdr)
        except _storage_errors() as exc:  # a full disk ...: one line naming the bag
            raise self._storage_error('write', exc) from None
        self.counts[topic] += 1

    def write_batches(self, batches: Sequence[RawBatch]) -> None:
        """Write batches of serialised messages (one topic each), merged in time order (equal
        stamps: lower ``order`` first), many messages per storage call."""
        for batch in batches:
            self.add_topic(batch.topic, batch.msgtype)
            if self._connections[batch.topic].msgtype != batch.msgtype:
                raise ConfigError(f'{self.path}: topic {batch.topic} written as '
                                  f'{self._connections[batch.topic].msgtype} and '
                                  f'{batch.msgtype}')
        try:
            self._writer.write_many([self._connections[b.topic] for b in batches], batches)
        except _storage_errors() as exc:  # a full disk ...: one line naming the bag
            raise self._storage_error('write', exc) from None
        for batch in batches:
            self.counts[batch.topic] += len(batch)

    def finish_storage(self) -> None:
        """Write the bag's indexes and metadata now (no more messages) and give the storage
        file its final name; files may still be added to :attr:`directory` until the ``with``
        block ends (e.g. plots, a summary page that lists the files)."""
        if self._writer is not None and not self._closed:
            self._closed = True
            try:
                self._writer.close()
                assert self._tmp is not None
                rename_bag_storage(self._tmp, self.path.name)
                self._renamed = True
            except _storage_errors() as exc:
                raise self._storage_error('finish', exc) from None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self._stack is not None and self._tmp is not None
        stack, tmp = self._stack, self._tmp
        self._stack = None
        try:
            if not self._closed:
                self._closed = True
                self._writer.close()
            if exc_type is None and not self._renamed:
                rename_bag_storage(tmp, self.path.name)
        except _storage_errors() as err:
            if exc_type is None:
                error = self._storage_error('finish', err)
                self._tmp = None
                with suppress(BaseException):  # the cleanup's report of the same failure
                    stack.__exit__(type(err), err, err.__traceback__)
                raise error from None
        self._tmp = None
        stack.__exit__(exc_type, exc, tb)
