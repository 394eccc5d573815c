"""Open any bag: a rosbag2 directory (metadata v4-v9, sqlite3 or mcap, split), a single
``.db3``/``.mcap`` file without ``metadata.yaml``, or a ROS 1 ``.bag`` (format 2.0).

Strict by default: damaged storage, messages pointing to a connection that does not exist,
``metadata.yaml`` counts that the storage does not hold and messages that do not decode are
:class:`BagError` naming the file or topic and the count; ``skip_corrupt=True`` turns each into a
:class:`BagWarning` with the count and reads what is intact.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rc_sim_description.bags.errors import BagError, one_line, warn
from rc_sim_description.bags.ros1 import Ros1File
from rc_sim_description.bags.rosbag2 import McapFile, Metadata, Sqlite3File, read_metadata
from rc_sim_description.bags.sources import FileScan, Source
from rc_sim_description.bags.typestore import (
    bag_typestore,
    decode_errors,
    fallback_typestores,
    normalise_type,
    ros2_store_for_ros1,
)

__all__ = ['Bag', 'Connection', 'TopicInfo', 'TopicMessages', 'open_bag', 'read_topic',
           'require_topics']

_MAGIC = {b'#ROSBAG': 'ros1', b'#ROSRECORD': 'ros1', b'\x89MCAP': 'mcap',
          b'SQLite format 3\x00': 'sqlite3'}
_SUFFIX = {'.bag': 'ros1', '.mcap': 'mcap', '.db3': 'sqlite3'}


@dataclass(frozen=True)
class Connection:
    """One connection of a bag (ROS 1 bags may hold several per topic; split rosbag2 bags one
    per file)."""

    id: int
    topic: str
    msgtype: str           # pkg/msg/Type
    serialization: str     # 'cdr' or 'ros1'
    count: int
    msgdef: str = ''
    msgdef_encoding: str = ''
    digest: str = ''
    qos: str = ''
    callerid: str = ''


@dataclass(frozen=True)
class TopicInfo:
    """A topic: its type, message count and first/last log time [ns] (None when empty)."""

    name: str
    msgtype: str
    count: int
    connections: tuple[Connection, ...]
    first_ns: int | None
    last_ns: int | None

    @property
    def rate_hz(self) -> float:
        """Mean message rate (count - 1) / (last - first); 0 when undefined (never NaN)."""
        if self.count < 2 or self.first_ns is None or self.last_ns is None or \
                self.last_ns <= self.first_ns:
            return 0.0
        return (self.count - 1) / ((self.last_ns - self.first_ns) * 1e-9)


@dataclass(frozen=True)
class TopicMessages:
    """Decoded messages of one topic in log-time order."""

    topic: str
    msgtype: str
    t_ns: npt.NDArray[np.int64]   # bag log (receive) times
    messages: list[Any]

    def __len__(self) -> int:
        return len(self.messages)


def _sniff(path: Path) -> str:
    try:
        with path.open('rb') as f:
            head = f.read(16)
    except OSError as exc:
        raise BagError(f'{path}: cannot read ({exc.strerror or exc})') from None
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return ''


def _resolve(path: Path) -> tuple[Path, str, list[Path], Metadata | None]:
    """(bag path, storage, storage files, metadata) of a user-given path."""
    if not path.exists():
        raise BagError(f'bag {str(path)!r} not found')
    if path.is_file() and path.suffix in ('.db3', '.mcap'):
        meta_path = path.parent / 'metadata.yaml'
        if meta_path.is_file():
            try:
                listed = read_metadata(meta_path).files
            except BagError:
                listed = ()
            if path.name in listed:
                path = path.parent  # a storage file of a rosbag2 directory: read the directory
    if path.is_dir():
        meta_path = path / 'metadata.yaml'
        if not meta_path.is_file():
            raise BagError(f'{path}: not a rosbag2 directory (no metadata.yaml; give a .db3 or '
                           '.mcap file itself to read it without metadata)')
        try:
            meta = read_metadata(meta_path)
        except BagError as exc:
            raise BagError(f'{path}: cannot read bag ({exc})') from None
        if meta.storage not in ('sqlite3', 'mcap'):
            raise BagError(f'{path}: unknown rosbag2 storage {meta.storage!r} (sqlite3 and mcap '
                           'are read)')
        if meta.compression:
            raise BagError(f'{path}: compressed rosbag2 bags (compression mode '
                           f'{meta.compression}) are not read; decompress it first with '
                           '"ros2 bag convert"')
        files = [path / name for name in meta.files]
        for f in files:
            if not f.is_file():
                raise BagError(f'{path}: storage file {f.name} listed in metadata.yaml is missing')
        return path, meta.storage, files, meta
    kind = _sniff(path) or _SUFFIX.get(path.suffix, '')
    if not kind:
        raise BagError(f'{path}: not a bag (expected a rosbag2 directory, .db3, .mcap or ROS 1 '
                       '.bag)')
    return path, kind, [path], None


def _source(kind: str, path: Path) -> Source:
    if kind == 'ros1':
        return Ros1File(path)
    if kind == 'mcap':
        return McapFile(path)
    return Sqlite3File(path)


class Bag:
    """An open bag: topics, types and counts, raw and decoded messages.

    Use :func:`open_bag`; attributes: ``path``, ``storage`` ('sqlite3', 'mcap' or 'ros1'),
    ``metadata_version`` (None without metadata.yaml), ``storage_version``, ``files``,
    ``connections``, ``topics`` (name -> :class:`TopicInfo`), ``message_count``, ``start_ns``,
    ``end_ns``, ``skip_corrupt``.
    """

    def __init__(self, path: Path, storage: str, files: list[Path], meta: Metadata | None, *,
                 skip_corrupt: bool = False) -> None:
        self.path = path
        self.storage = storage
        self.files = tuple(files)
        self.metadata_version = meta.version if meta is not None else None
        self.ros_distro = meta.ros_distro if meta is not None else ''
        self.skip_corrupt = skip_corrupt
        self._sources = [_source(storage, f) for f in files]
        self._scans: list[FileScan] = [s.scan() for s in self._sources]
        self.storage_version = self._scans[0].storage_version if self._scans else ''
        self._damaged = [bool(s.problem) for s in self._scans]
        for f, s in zip(files, self._scans):
            if s.problem:
                n = sum(s.counts.values())
                self._corrupt(f'{f}: {s.problem}', f'; {n} messages before it are read')
            if s.dangling:
                ids = ', '.join(str(i) for i in sorted(s.dangling))
                n = sum(s.dangling.values())
                self._corrupt(f'{f}: {n} messages point to a missing topic/connection id '
                              f'({ids})', '; they are skipped')
        self._build_connections(meta)
        if meta is not None:
            self._check_metadata(meta)
        self._typestore: Any = None
        self._ros2_store: Any = None
        self._cache: dict[str, object] = {}

    # ------------------------------------------------------------------ construction
    def _corrupt(self, message: str, skipped: str) -> None:
        if not self.skip_corrupt:
            raise BagError(f'{message} (--skip-corrupt reads the rest)')
        warn(message + skipped)

    def _build_connections(self, meta: Metadata | None) -> None:
        conns: list[Connection] = []
        self._local: dict[tuple[int, int], Connection] = {}
        for index, scan in enumerate(self._scans):
            for local_id, fc in sorted(scan.connections.items()):
                fmt = fc.serialization
                if meta is not None and meta.formats.get(fc.topic):
                    fmt = meta.formats[fc.topic]
                msgtype = normalise_type(fc.msgtype or (meta.types.get(fc.topic, '')
                                                        if meta else ''))
                conn = Connection(
                    id=len(conns), topic=fc.topic, msgtype=msgtype, serialization=fmt,
                    count=scan.counts.get(local_id, 0), msgdef=fc.msgdef,
                    msgdef_encoding=fc.msgdef_encoding, digest=fc.digest,
                    qos=fc.qos or (meta.qos.get(fc.topic, '') if meta else ''),
                    callerid=fc.callerid)
                conns.append(conn)
                self._local[(index, local_id)] = conn
        formats = {c.serialization for c in conns}
        if formats not in (set(), {'cdr'}, {'ros1'}):
            bad = next(c for c in conns if c.serialization not in ('cdr', 'ros1')) \
                if formats - {'cdr', 'ros1'} else conns[0]
            raise BagError(f'{self.path}: topic {bad.topic} has serialization format '
                           f'{bad.serialization!r}; only cdr (ROS 2) and ros1 are read')
        self.connections = tuple(conns)
        self.is_ros1 = formats == {'ros1'}
        topics: dict[str, list[Connection]] = {}
        for c in conns:
            topics.setdefault(c.topic, []).append(c)
        self.topics: dict[str, TopicInfo] = {}
        for name in sorted(topics):
            group = topics[name]
            types = sorted({c.msgtype for c in group})
            firsts = [s.first_ns[lid] for (i, lid), c in self._local.items()
                      if c.topic == name and lid in (s := self._scans[i]).first_ns]
            lasts = [self._scans[i].last_ns[lid] for (i, lid), c in self._local.items()
                     if c.topic == name and lid in self._scans[i].last_ns]
            self.topics[name] = TopicInfo(
                name=name, msgtype=types[0] if len(types) == 1 else ' | '.join(types),
                count=sum(c.count for c in group), connections=tuple(group),
                first_ns=min(firsts) if firsts else None, last_ns=max(lasts) if lasts else None)

    def _check_metadata(self, meta: Metadata) -> None:
        for topic, said in sorted(meta.counts.items()):
            have = self.topics[topic].count if topic in self.topics else 0
            if said != have and not any(self._damaged):
                self._corrupt(f'{self.path}: metadata.yaml says {topic} has {said} messages, '
                              f'the storage holds {have}', f'; the {have} stored are read')

    # ------------------------------------------------------------------ summary
    @property
    def message_count(self) -> int:
        """Messages in the storage (all topics)."""
        return sum(t.count for t in self.topics.values())

    @property
    def start_ns(self) -> int | None:
        """Earliest log time [ns] (None for a bag without messages)."""
        firsts = [t.first_ns for t in self.topics.values() if t.first_ns is not None]
        return min(firsts) if firsts else None

    @property
    def end_ns(self) -> int | None:
        """Latest log time [ns]."""
        lasts = [t.last_ns for t in self.topics.values() if t.last_ns is not None]
        return max(lasts) if lasts else None

    @property
    def duration(self) -> float:
        """end - start [s] (0 for fewer than two distinct times)."""
        s, e = self.start_ns, self.end_ns
        return (e - s) * 1e-9 if s is not None and e is not None else 0.0

    def topic(self, name: str) -> TopicInfo:
        """The topic ``name``; BagError listing the bag's topics when absent."""
        info = self.topics.get(name)
        if info is None:
            listed = ', '.join(self.topics) or 'none'
            raise BagError(f'{self.path}: topic {name} not in bag (it has: {listed})')
        return info

    # ------------------------------------------------------------------ types
    @property
    def typestore(self) -> Any:
        """rosbags typestore with the base types and every type the bag defines."""
        if self._typestore is None:
            defs = [d for s in self._scans for d in s.definitions]
            self._typestore = bag_typestore(defs, ros1=self.is_ros1, source=str(self.path))
        return self._typestore

    def known_type(self, msgtype: str) -> bool:
        """True when the bag or the ROS distribution stores define ``msgtype``."""
        return msgtype in self.typestore.types or any(
            msgtype in s.types for s in fallback_typestores(self.is_ros1))

    def decode(self, conn: Connection, raw: bytes | memoryview) -> Any:
        """Deserialize one message of ``conn``: with the bag's own definitions, else (a wrong
        definition in the bag) with the ROS distribution's; raises the library's exception."""
        stores = (self.typestore, *fallback_typestores(self.is_ros1))
        errors = decode_errors()
        error: BaseException | None = None
        for store in stores:
            if conn.msgtype not in store.types:
                continue
            try:
                if conn.serialization == 'ros1':
                    return store.deserialize_ros1(raw, conn.msgtype)
                return store.deserialize_cdr(raw, conn.msgtype)
            except errors as exc:
                error = error or exc
        if error is None:
            raise BagError(f'{self.path}: message type {conn.msgtype} of {conn.topic} is '
                           'neither defined in the bag nor a standard ROS type')
        raise error

    @property
    def ros2_typestore(self) -> Any:
        """The typestore of :meth:`to_cdr` output (the bag's own for a ROS 2 bag)."""
        if not self.is_ros1:
            return self.typestore
        if self._ros2_store is None:
            self._ros2_store = ros2_store_for_ros1(d for s in self._scans for d in s.definitions)
        return self._ros2_store

    def message_to_cdr(self, conn: Connection, msg: Any) -> bytes | memoryview:
        """CDR bytes of a decoded message of ``conn`` (ROS 1 messages are migrated to the ROS 2
        layout: ``Header.seq`` dropped)."""
        if not self.is_ros1:
            return self.typestore.serialize_cdr(msg, conn.msgtype)
        from rosbags.convert.converter import migrate_message

        dst = self.ros2_typestore
        migrated = migrate_message(self.typestore, dst, conn.msgtype, conn.msgtype, self._cache,
                                   msg)
        return dst.serialize_cdr(migrated, conn.msgtype)

    def to_cdr(self, conn: Connection, raw: bytes) -> bytes | memoryview:
        """CDR bytes of a raw message of ``conn`` (unchanged for a ROS 2 bag)."""
        return raw if not self.is_ros1 else self.message_to_cdr(conn, self.decode(conn, raw))

    # ------------------------------------------------------------------ messages
    def messages(self, topics: Iterable[str] | None = None
                 ) -> Iterator[tuple[Connection, int, bytes]]:
        """``(connection, log time [ns], raw bytes)`` of ``topics`` (all when None), file by file
        in storage order (time order for sqlite3, write order for mcap and ROS 1)."""
        wanted = None if topics is None else set(topics)
        for index, source in enumerate(self._sources):
            ids = {lid for (i, lid), c in self._local.items()
                   if i == index and (wanted is None or c.topic in wanted)}
            if not ids:
                continue
            for local_id, t_ns, raw in source.messages(None if wanted is None else ids):
                conn = self._local.get((index, local_id))
                if conn is not None:
                    yield conn, t_ns, raw

    def read(self, topic: str) -> TopicMessages:
        """Every message of ``topic``, decoded, sorted by log time (stable).

        Raises:
            BagError: the topic is absent, or (unless ``skip_corrupt``) messages do not decode.
        """
        info = self.topic(topic)
        for conn in info.connections:
            if conn.count and not self.known_type(conn.msgtype):
                raise BagError(f'{self.path}: {topic}: message type {conn.msgtype} is neither '
                               'defined in the bag nor a standard ROS type; cannot decode it')
        times: list[int] = []
        msgs: list[Any] = []
        bad, first_problem = 0, ''
        errors: tuple[type[BaseException], ...] = (BagError, *decode_errors())
        for conn, t_ns, raw in self.messages([topic]):
            try:
                msg = self.decode(conn, raw)
            except errors as exc:
                bad += 1
                first_problem = first_problem or one_line(exc)
                continue
            times.append(t_ns)
            msgs.append(msg)
        total = len(msgs) + bad
        if bad:
            self._corrupt(f'{self.path}: {topic}: {bad} of {total} messages do not decode as '
                          f'{info.msgtype} ({first_problem})', '; they are skipped')
        t = np.asarray(times, dtype=np.int64)
        order = np.argsort(t, kind='stable')
        return TopicMessages(topic, info.msgtype, t[order], [msgs[i] for i in order])

    def close(self) -> None:
        """Release the bag (storage files are opened per read; nothing is held)."""
        self._typestore = None


@contextmanager
def open_bag(path: str | os.PathLike[str], *, skip_corrupt: bool = False,
             allow_empty: bool = False) -> Iterator[Bag]:
    """Open a bag (rosbag2 directory, .db3, .mcap or ROS 1 .bag).

    Raises:
        BagError: one line when the bag is missing, not a bag, damaged (unless
            ``skip_corrupt``), or holds no messages (unless ``allow_empty``).
    """
    bag_path, storage, files, meta = _resolve(Path(path))
    bag = Bag(bag_path, storage, files, meta, skip_corrupt=skip_corrupt)
    if not allow_empty and bag.message_count == 0:
        raise BagError(f'{bag_path}: bag holds no messages')
    try:
        yield bag
    finally:
        bag.close()


def require_topics(bag: Bag, topics: Iterable[str], path: str | os.PathLike[str] | None = None
                   ) -> dict[str, str]:
    """Topic -> message type of the bag; BagError naming the first missing topic."""
    for topic in topics:
        if topic not in bag.topics:
            listed = ', '.join(bag.topics) or 'none'
            raise BagError(f'{path or bag.path}: topic {topic} not in bag (it has: {listed})')
    return {name: info.msgtype for name, info in bag.topics.items()}


def read_topic(bag: Bag, topic: str) -> tuple[npt.NDArray[np.int64], list[Any]]:
    """Log times [ns] and decoded messages of one topic, in time order."""
    got = bag.read(topic)
    return got.t_ns, got.messages
