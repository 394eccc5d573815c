"""ROS 1 bags (format 2.0) read by walking the records and chunks, never trusting the index.

Format: http://wiki.ros.org/Bags/Format/2.0 . Each record is ``header_len (uint32 LE), header
(fields: uint32 length, name=value), data_len (uint32), data``; ``op`` 0x05 chunks hold the
connection (0x07) and message data (0x02) records, compressed with ``none``, ``bz2`` or ``lz4``
(LZ4 frame format). Index records (0x04, 0x06) and the index section are skipped, so bags with
unsorted chunks, several connections per topic, a malformed index or no index at all (a
recording that was killed) read alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
import mmap
from pathlib import Path
import struct

from rc_sim_description.bags.errors import BagError, one_line
from rc_sim_description.bags.sources import FileConnection, FileScan

__all__ = ['MAGIC', 'Ros1File']

MAGIC = b'#ROSBAG V2.0\n'
_LEGACY = b'#ROSRECORD'
_OP_MSG, _OP_HEADER, _OP_INDEX, _OP_CHUNK, _OP_CHUNK_INFO, _OP_CONN = 2, 3, 4, 5, 6, 7
_MAX_RECORD = 1 << 31  # a record longer than 2 GiB is a corrupt length field


class _CorruptError(Exception):
    """Structural damage at a byte offset (turned into BagError / a warning by the caller)."""


def _fields(buf: bytes | memoryview, where: str) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    pos, end = 0, len(buf)
    while pos < end:
        if pos + 4 > end:
            raise _CorruptError(f'{where}: truncated header field')
        (n,) = struct.unpack_from('<I', buf, pos)
        pos += 4
        if n > end - pos:
            raise _CorruptError(f'{where}: header field longer than its header')
        name, sep, value = bytes(buf[pos:pos + n]).partition(b'=')
        if not sep:
            raise _CorruptError(f'{where}: header field without "="')
        out[name.decode('ascii', 'replace')] = value
        pos += n
    return out


def _records(buf: bytes | memoryview | mmap.mmap, start: int, where: str
             ) -> Iterator[tuple[dict[str, bytes], memoryview, int]]:
    """(header fields, data, offset) of consecutive records in ``buf`` from ``start``."""
    view = memoryview(buf)
    pos, end = start, len(view)
    while pos < end:
        if end - pos < 4:
            raise _CorruptError(f'{where}: truncated record at byte {pos}')
        (hlen,) = struct.unpack_from('<I', view, pos)
        if hlen > _MAX_RECORD or pos + 4 + hlen + 4 > end:
            raise _CorruptError(f'{where}: truncated record at byte {pos}')
        header = _fields(view[pos + 4:pos + 4 + hlen], f'{where}: record at byte {pos}')
        (dlen,) = struct.unpack_from('<I', view, pos + 4 + hlen)
        dstart = pos + 8 + hlen
        if _op(header) == _OP_INDEX and header.get('ver') == b'\x01\x00\x00\x00':
            # index data version 1 holds `count` entries of 12 bytes (time, offset); some
            # writers declared another data length: the entry count is what the format defines
            dlen = 12 * _u32(header, 'count', f'{where}: index record at byte {pos}')
        if dlen > _MAX_RECORD or dstart + dlen > end:
            raise _CorruptError(f'{where}: truncated record data at byte {pos}')
        yield header, view[dstart:dstart + dlen], pos
        pos = dstart + dlen


def _op(header: dict[str, bytes]) -> int:
    op = header.get('op', b'')
    return op[0] if len(op) == 1 else -1


def _u32(header: dict[str, bytes], key: str, where: str) -> int:
    value = header.get(key, b'')
    if len(value) != 4:
        raise _CorruptError(f'{where}: missing or malformed {key!r} field')
    return int(struct.unpack('<I', value)[0])


def _time_ns(value: bytes, where: str) -> int:
    if len(value) != 8:
        raise _CorruptError(f'{where}: malformed time field')
    sec, nsec = struct.unpack('<II', value)
    return sec * 1_000_000_000 + nsec


def _decompress(compression: bytes, data: memoryview, size: int, where: str) -> bytes:
    kind = compression.decode('ascii', 'replace')
    try:
        if kind == 'none':
            out = bytes(data)
        elif kind == 'bz2':
            import bz2

            out = bz2.decompress(data)
        elif kind == 'lz4':
            import lz4.frame

            out = lz4.frame.decompress(data)
        else:
            raise _CorruptError(f'{where}: unknown chunk compression {kind!r}')
    except _CorruptError:
        raise
    except (OSError, ValueError, RuntimeError) as exc:  # bz2: OSError; lz4: RuntimeError
        raise _CorruptError(f'{where}: cannot decompress {kind} chunk ({one_line(exc)})') from None
    if len(out) != size:
        raise _CorruptError(f'{where}: chunk holds {len(out)} bytes, its header says {size}')
    return out


@dataclass
class Ros1File:
    """One ROS 1 ``.bag`` file (format 2.0; the pre-2010 V1.2 format is refused)."""

    path: Path

    def _open(self) -> bytes | mmap.mmap:
        try:
            with self.path.open('rb') as f:
                data: bytes | mmap.mmap = (mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                                           if self.path.stat().st_size else b'')
        except OSError as exc:
            raise BagError(f'{self.path}: cannot read ({exc.strerror or exc})') from None
        head = bytes(data[:32])
        if head.startswith(_LEGACY):
            version = head.split(b'\n')[0].decode('ascii', 'replace')
            raise BagError(f'{self.path}: legacy ROS 1 bag format {version!r} (before 2010) is '
                           'not supported; only "#ROSBAG V2.0" bags are read')
        if not head.startswith(MAGIC):
            raise BagError(f'{self.path}: not a ROS 1 bag (no "#ROSBAG V2.0" magic)')
        return data

    def _walk(self, data: bytes | mmap.mmap, scan: FileScan | None, local_ids: set[int] | None
              ) -> Iterator[tuple[int, int, bytes]]:
        where = str(self.path)
        for header, body, offset in _records(data, len(MAGIC), where):
            op = _op(header)
            if op == _OP_CONN and scan is not None:
                self._connection(header, body, scan, f'{where}: byte {offset}')
            elif op == _OP_MSG:  # messages outside chunks (allowed by the format)
                conn = _u32(header, 'conn', f'{where}: byte {offset}')
                t_ns = _time_ns(header.get('time', b''), f'{where}: byte {offset}')
                if scan is not None:
                    scan.add(conn, t_ns)
                elif local_ids is None or conn in local_ids:
                    yield conn, t_ns, bytes(body)
            elif op == _OP_CHUNK:
                chunk_where = f'{where}: chunk at byte {offset}'
                size = _u32(header, 'size', chunk_where)
                raw = _decompress(header.get('compression', b''), body, size, chunk_where)
                for h, b, _ in _records(raw, 0, chunk_where):
                    inner = _op(h)
                    if inner == _OP_CONN and scan is not None:
                        self._connection(h, b, scan, chunk_where)
                    elif inner == _OP_MSG:
                        conn = _u32(h, 'conn', chunk_where)
                        t_ns = _time_ns(h.get('time', b''), chunk_where)
                        if scan is not None:
                            scan.add(conn, t_ns)
                        elif local_ids is None or conn in local_ids:
                            yield conn, t_ns, bytes(b)
            elif op not in (_OP_HEADER, _OP_INDEX, _OP_CHUNK_INFO, _OP_CONN):
                raise _CorruptError(f'{where}: unknown record op {op} at byte {offset}')

    @staticmethod
    def _connection(header: dict[str, bytes], body: memoryview, scan: FileScan,
                    where: str) -> None:
        conn = _u32(header, 'conn', where)
        if conn in scan.connections:
            return  # repeated in the index section
        info = _fields(body, f'{where}: connection {conn}')
        text = {k: v.decode('utf-8', 'replace') for k, v in info.items()}
        topic = text.get('topic') or header.get('topic', b'').decode('utf-8', 'replace')
        msgtype = text.get('type', '')
        if not topic or not msgtype:
            raise _CorruptError(f'{where}: connection {conn} without topic or type')
        definition = text.get('message_definition', '')
        scan.connections[conn] = FileConnection(
            local_id=conn, topic=topic, msgtype=msgtype, serialization='ros1', msgdef=definition,
            msgdef_encoding='ros1msg' if definition else '', digest=text.get('md5sum', ''),
            qos='latching' if text.get('latching') == '1' else '',
            callerid=text.get('callerid', ''))
        if definition:
            scan.definitions.append((msgtype, definition, 'ros1msg'))

    def scan(self) -> FileScan:
        """Walk every record and chunk once (connections, counts, damage)."""
        data = self._open()
        scan = FileScan(storage_version='ROS 1 bag V2.0')
        try:
            for _ in self._walk(data, scan, None):
                pass
        except _CorruptError as exc:
            scan.problem = str(exc).removeprefix(f'{self.path}: ')
        return scan.finish()

    def messages(self, local_ids: set[int] | None) -> Iterator[tuple[int, int, bytes]]:
        """Messages in file order; stops silently at damage (reported by :meth:`scan`)."""
        data = self._open()
        try:
            yield from self._walk(data, None, local_ids)
        except _CorruptError:
            return
