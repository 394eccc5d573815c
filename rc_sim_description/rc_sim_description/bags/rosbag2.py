"""rosbag2 storage files read directly: sqlite3 (old and new schema) and mcap, plus
``metadata.yaml`` (versions 4 to 9).

sqlite3: tables ``topics`` and ``messages`` (every version); since schema version 4 also
``message_definitions`` and ``metadata``. mcap: records walked in file order with
the ``mcap`` library's stream reader (CRCs checked), so a file without summary or index (a
killed recording, a truncated download) reads up to its damage.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
import sqlite3
from typing import Any

from rc_sim_description.bags.errors import BagError, one_line
from rc_sim_description.bags.sources import FileConnection, FileScan

__all__ = ['McapFile', 'Metadata', 'Sqlite3File', 'mcap_damage_errors', 'read_metadata']


# --------------------------------------------------------------------------- metadata.yaml
@dataclass(frozen=True)
class Metadata:
    """The parts of a rosbag2 ``metadata.yaml`` the reader uses."""

    version: int
    storage: str
    files: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)  # topic -> message_count
    types: dict[str, str] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)  # topic -> serialization_format
    qos: dict[str, str] = field(default_factory=dict)
    message_count: int | None = None
    ros_distro: str = ''
    compression: str = ''


def _qos_text(value: Any) -> str:
    """offered_qos_profiles: a YAML string up to Iron, a list since Jazzy (metadata v9)."""
    if value is None or value == '':
        return ''
    if isinstance(value, str):
        return value
    import yaml

    return str(yaml.safe_dump(value, sort_keys=False))


def read_metadata(path: Path) -> Metadata:
    """Parse ``metadata.yaml``; one-line BagError naming the file and the bad key."""
    from rc_sim_description.yamlio import read_yaml

    data = read_yaml(path, BagError)
    info = data.get('rosbag2_bagfile_information') if isinstance(data, dict) else None
    if not isinstance(info, dict):
        raise BagError(f'{path}: not a rosbag2 metadata file (no rosbag2_bagfile_information)')

    def need(key: str, kind: type | tuple[type, ...]) -> Any:
        value = info.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise BagError(f'{path}: rosbag2_bagfile_information.{key} is missing or malformed')
        return value

    version = need('version', int)
    storage = need('storage_identifier', str)
    files = need('relative_file_paths', list)
    if not all(isinstance(f, str) for f in files):
        raise BagError(f'{path}: relative_file_paths must be file names')
    counts: dict[str, int] = {}
    types: dict[str, str] = {}
    formats: dict[str, str] = {}
    qos: dict[str, str] = {}
    for i, entry in enumerate(info.get('topics_with_message_count') or []):
        meta = entry.get('topic_metadata') if isinstance(entry, dict) else None
        count = entry.get('message_count') if isinstance(entry, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get('name'), str) or \
                not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise BagError(f'{path}: topics_with_message_count[{i}] is malformed')
        name = meta['name']
        counts[name] = counts.get(name, 0) + count
        types[name] = str(meta.get('type', ''))
        formats[name] = str(meta.get('serialization_format', ''))
        qos[name] = _qos_text(meta.get('offered_qos_profiles'))
    total = info.get('message_count')
    mode = str(info.get('compression_mode') or '')
    return Metadata(version=version, storage=storage, files=tuple(files), counts=counts,
                    types=types, formats=formats, qos=qos,
                    message_count=total if isinstance(total, int) else None,
                    ros_distro=str(info.get('ros_distro') or ''),
                    compression=mode if mode.upper() != 'NONE' else '')


# --------------------------------------------------------------------------- sqlite3
@dataclass
class Sqlite3File:
    """One rosbag2 sqlite3 file (``.db3``), opened read-only."""

    path: Path

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(f'file:{self.path}?mode=ro&immutable=1', uri=True)
            db.execute('SELECT name FROM sqlite_master').fetchall()
        except sqlite3.Error as exc:
            raise BagError(f'{self.path}: cannot read bag (not sqlite3: '
                           f'{one_line(exc)})') from None
        return db

    def scan(self) -> FileScan:
        """Topics, definitions and counts from the tables (no message bodies are read)."""
        db = self._connect()
        try:
            tables = {r[0] for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            if not {'topics', 'messages'} <= tables:
                raise BagError(f'{self.path}: not a rosbag2 sqlite3 file (no topics/messages '
                               'tables)')
            scan = FileScan()
            schema = 0
            if 'schema' in tables:
                row = db.execute('SELECT MAX(schema_version) FROM schema').fetchone()
                schema = int(row[0] or 0)
            scan.storage_version = f'sqlite3 schema {schema}' if schema else 'sqlite3 (old schema)'
            columns = {r[1] for r in db.execute('PRAGMA table_info(topics)')}
            qos = 'offered_qos_profiles' if 'offered_qos_profiles' in columns else "''"
            digest = 'type_description_hash' if 'type_description_hash' in columns else "''"
            for tid, name, msgtype, fmt, qos_text, hash_ in db.execute(
                    f'SELECT id, name, type, serialization_format, {qos}, {digest} '
                    'FROM topics'):
                scan.connections[int(tid)] = FileConnection(
                    local_id=int(tid), topic=str(name), msgtype=str(msgtype),
                    serialization=str(fmt), digest=str(hash_ or ''), qos=str(qos_text or ''))
            if 'message_definitions' in tables:
                for msgtype, encoding, text in db.execute(
                        'SELECT topic_type, encoding, encoded_message_definition '
                        'FROM message_definitions'):
                    if encoding in ('ros2msg', 'ros2idl') and text:
                        scan.definitions.append((str(msgtype), str(text), str(encoding)))
            for tid, n, first, last in db.execute(
                    'SELECT topic_id, COUNT(*), MIN(timestamp), MAX(timestamp) FROM messages '
                    'GROUP BY topic_id'):
                scan.counts[int(tid)] = int(n)
                scan.first_ns[int(tid)] = int(first)
                scan.last_ns[int(tid)] = int(last)
        except sqlite3.Error as exc:
            raise BagError(f'{self.path}: cannot read bag (corrupt sqlite3: '
                           f'{one_line(exc)})') from None
        finally:
            db.close()
        return scan.finish()

    def messages(self, local_ids: set[int] | None) -> Iterator[tuple[int, int, bytes]]:
        """Messages in timestamp order."""
        db = self._connect()
        try:
            if local_ids is None:
                rows = db.execute('SELECT topic_id, timestamp, data FROM messages '
                                  'ORDER BY timestamp, id')
            else:
                marks = ','.join('?' * len(local_ids))
                rows = db.execute(f'SELECT topic_id, timestamp, data FROM messages WHERE '
                                  f'topic_id IN ({marks}) ORDER BY timestamp, id',
                                  sorted(local_ids))
            for tid, t_ns, data in rows:
                yield int(tid), int(t_ns), bytes(data)
        except sqlite3.Error as exc:
            raise BagError(f'{self.path}: cannot read bag (corrupt sqlite3: '
                           f'{one_line(exc)})') from None
        finally:
            db.close()


# --------------------------------------------------------------------------- mcap
def mcap_damage_errors() -> tuple[type[BaseException], ...]:
    """What the ``mcap`` stream reader raises on damaged data: its own errors (bad magic, end of
    file, record too long), a failed CRC or a bad UTF-8 string (``ValueError``), a bad record
    layout (``struct.error``, ``OverflowError``), a failing compressed chunk (zstandard's
    ``ZstdError``, lz4's ``RuntimeError``) and the file's I/O errors."""
    import struct

    from mcap.exceptions import McapError

    errors: tuple[type[BaseException], ...] = (
        McapError, ValueError, struct.error, OverflowError, RuntimeError, OSError)
    try:
        import zstandard
    except ImportError:  # mcap then refuses zstd chunks with its own error
        return errors
    return (*errors, zstandard.ZstdError)


def _mcap_records(path: Path) -> Iterator[Any]:
    from mcap.stream_reader import StreamReader

    with path.open('rb') as f:
        yield from StreamReader(f, validate_crcs=True, record_size_limit=1 << 31).records


@dataclass
class McapFile:
    """One mcap file (ROS 2 profile: cdr messages, ros2msg / ros2idl schemas)."""

    path: Path

    def scan(self) -> FileScan:
        """Walk every record once (schemas, channels, message counts, damage)."""
        from mcap.records import Channel, Header, Message, Schema

        scan = FileScan(storage_version='mcap')
        schemas: dict[int, Any] = {}
        try:
            for record in _mcap_records(self.path):
                if isinstance(record, Message):
                    scan.add(record.channel_id, record.log_time)
                elif isinstance(record, Channel) and record.id not in scan.connections:
                    schema = schemas.get(record.schema_id)
                    name = schema.name if schema is not None else ''
                    scan.connections[record.id] = FileConnection(
                        local_id=record.id, topic=record.topic, msgtype=name,
                        serialization=record.message_encoding,
                        qos=str(record.metadata.get('offered_qos_profiles', '')))
                elif isinstance(record, Schema) and record.id not in schemas:
                    schemas[record.id] = record
                    text = record.data.decode('utf-8', 'replace')
                    if record.encoding in ('ros2msg', 'ros2idl'):
                        scan.definitions.append((record.name, text, record.encoding))
                elif isinstance(record, Header):
                    scan.storage_version = f'mcap ({record.library or "unknown writer"})'
        except mcap_damage_errors() as exc:
            scan.problem = f'damaged mcap data ({one_line(exc)})'
        return scan.finish()

    def messages(self, local_ids: set[int] | None) -> Iterator[tuple[int, int, bytes]]:
        """Messages in file order; stops at the damage :meth:`scan` reported."""
        from mcap.records import Message

        try:
            for record in _mcap_records(self.path):
                if isinstance(record, Message) and (local_ids is None or
                                                    record.channel_id in local_ids):
                    yield record.channel_id, record.log_time, bytes(record.data)
        except mcap_damage_errors():  # the damage scan() found and reported
            return


def definitions_of(scans: Mapping[Path, FileScan]) -> list[tuple[str, str, str]]:
    """Every message definition the files carry."""
    return [d for s in scans.values() for d in s.definitions]
