"""Many messages per call into rosbag2 storage: the bag writer's fast path for bulk CDR batches.

``rosbags``' writer takes one message per call (an SQL ``INSERT``, an MCAP record built in a
``BytesIO``). :class:`BulkWriter` is that writer with two storage plugins that also take a whole
time-ordered batch:

* sqlite3: one ``executemany`` in the writer's single transaction; the database is opened as
  rosbag2's own sqlite3 plugin opens it for writing (``journal_mode=MEMORY``,
  ``synchronous=OFF``: the bag is built under a temporary name and renamed when complete, so a
  crash never leaves a half-written bag behind anyway) and may be used from a writer thread (one
  thread at a time).
* mcap: message records assembled with numpy and joined once, 4 MiB chunks (rosbags: 1 MiB),
  message indexes written from arrays.

The files are the same as ``rosbags`` writes (schema, metadata, summary, indexes); the tests read
them back with ``rosbags`` and with the ``mcap`` package.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from io import BytesIO
from itertools import repeat
import sqlite3
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rosbags.rosbag2.storage_mcap import McapWriter, PendingChunk
from rosbags.rosbag2.storage_sqlite3 import Sqlite3Writer
from rosbags.rosbag2.writer import Writer

from rc_sim_description.bags.cdr_bulk import RawBatch

__all__ = ['MCAP_CHUNK_BYTES', 'BulkWriter', 'sorted_rows']

#: Uncompressed MCAP chunk size of bulk writes.
MCAP_CHUNK_BYTES = 4 * 1024 * 1024
_ONE_BY_ONE_CHUNK_BYTES = 1024 * 1024  # messages written one by one: rosbags' chunk size
_MCAP_HEADER = np.dtype([('op', 'u1'), ('length', '<u8'), ('channel', '<u2'),
                         ('sequence', '<u4'), ('log_time', '<u8'), ('publish_time', '<u8')])
_INDEX_ENTRY = np.dtype([('log_time', '<u8'), ('offset', '<u8')])
_INSERT = 'INSERT INTO messages (topic_id, timestamp, data) VALUES(?, ?, ?)'
_INSERT_JSON = ('INSERT INTO messages (topic_id, timestamp, data) SELECT ?, j.value, '
                'substr(?, j.key * ? + 1, ?) FROM json_each(?) AS j')


def _json_ints(values: NDArray[np.int64]) -> str:
    """A JSON array of integers (SQLite's ``json_each`` reads them back as 64-bit integers)."""
    return '[' + ','.join(map(str, values.tolist())) + ']'


def _row_views(rows: NDArray[np.uint8]) -> list[memoryview]:
    """One memoryview per row of a C-contiguous (K, size) uint8 array (no copy)."""
    size = rows.shape[1]
    flat = memoryview(rows.reshape(-1).data)
    return [flat[k:k + size] for k in range(0, rows.shape[0] * size, size)]


def sorted_rows(batches: Sequence[RawBatch], rows: Sequence[NDArray[np.uint8]]
                ) -> tuple[NDArray[np.int64], NDArray[np.int64], list[memoryview]]:
    """Messages of all batches in time order (ties: batch ``order``, then batch position).

    ``rows[j]`` are the bytes to emit for batch j (its rows, possibly with a record header).
    Returns the batch index (M,) and stamp (M,) of each message and its bytes (memoryviews).
    """
    keep = [j for j, b in enumerate(batches) if len(b)]
    if not keep:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), []
    t = np.concatenate([np.asarray(batches[j].t_ns, dtype=np.int64) for j in keep])
    order = np.concatenate([np.full(len(batches[j]), batches[j].order, dtype=np.int64)
                            for j in keep])
    which = np.concatenate([np.full(len(batches[j]), j, dtype=np.int64) for j in keep])
    perm = np.lexsort((which, order, t))  # stable: the rows of one batch keep their order
    views: list[memoryview] = []
    for j in keep:
        views.extend(_row_views(rows[j]))
    return which[perm], t[perm], [views[k] for k in perm.tolist()]


class BulkSqlite3Writer(Sqlite3Writer):
    """rosbags' sqlite3 storage opened as rosbag2 opens it for writing, with :meth:`write_many`.

    The ``timestamp`` index is built once at the end (faster than growing it row by row).
    """

    INDEX = 'CREATE INDEX timestamp_idx ON messages (timestamp ASC);'

    def __init__(self, path: Any, compression: Any) -> None:
        from rosbags.rosbag2.enums import CompressionMode
        from rosbags.rosbag2.errors import WriterError

        if compression == CompressionMode.STORAGE:
            raise WriterError('SQLITE3 writer does not support storage-side compression.')
        self.path = path / f'{path.name}.db3'
        # check_same_thread=False: a writer thread may take over (one thread at a time)
        self.conn = sqlite3.connect(f'file:{self.path}', uri=True, check_same_thread=False)
        self.conn.execute('PRAGMA page_size=65536')
        self.conn.execute('PRAGMA journal_mode=MEMORY')
        self.conn.execute('PRAGMA synchronous=OFF')
        self.conn.executescript(self.SQLITE_SCHEMA.replace(self.INDEX, ''))
        self.cursor = self.conn.cursor()
        self._json = True

    def write_many(self, ids: Sequence[int], batches: Sequence[RawBatch]) -> None:
        """Insert the batches (connection ``ids[j]`` for batch j), batch after batch.

        Readers order by ``timestamp`` (then row id): batches given in ``order`` keep the tie
        order at equal stamps.
        """
        for cid, batch in sorted(zip(ids, batches), key=lambda item: item[1].order):
            if not len(batch):
                continue
            rows = np.ascontiguousarray(batch.rows, dtype=np.uint8)
            stamps = np.asarray(batch.t_ns, dtype=np.int64)
            if self._json:
                try:  # the rows of a batch cut out of one blob inside SQLite (no Python per row)
                    self.cursor.execute(_INSERT_JSON, (cid, rows.tobytes(), rows.shape[1],
                                                       rows.shape[1], _json_ints(stamps)))
                    continue
                except sqlite3.OperationalError:  # an SQLite without its JSON functions
                    self._json = False
            self.cursor.executemany(_INSERT, zip(repeat(cid), stamps.tolist(), _row_views(rows)))

    def close(self, version: int, metadata: str) -> None:
        """Build the timestamp index, then close as rosbags does."""
        self.cursor.execute(self.INDEX)
        super().close(version, metadata)


class BulkMcapWriter(McapWriter):
    """rosbags' MCAP storage with :meth:`write_many`: records assembled with numpy, written to
    the file without intermediate copies, chunks of :data:`MCAP_CHUNK_BYTES`, message indexes
    written from arrays. The pending chunk is a list of byte blocks; schema and channel records
    that rosbags writes into its chunk buffer are moved into that list as they come."""

    def __init__(self, path: Any, compression: Any) -> None:
        super().__init__(path, compression)
        self._parts: list[Any] = []
        self._size = 0
        self._index: dict[int, list[NDArray[Any]]] = {}

    def _drain(self) -> None:
        data = self.chunk.bio.getvalue()
        if data:
            self._parts.append(data)
            self._size += len(data)
            self.chunk.bio = BytesIO()

    def add_msgtype(self, connection: Any) -> None:
        super().add_msgtype(connection)
        self._drain()

    def add_connection(self, connection: Any, offered_qos_profiles: str) -> None:
        super().add_connection(connection, offered_qos_profiles)
        self._drain()

    def write(self, connection: Any, timestamp: int, data: bytes | memoryview) -> None:
        """One message (rosbags' per-message path)."""
        head = np.zeros(1, dtype=_MCAP_HEADER)
        head['op'] = 0x05
        head['length'] = _MCAP_HEADER.itemsize - 9 + len(data)
        head['channel'] = connection.id
        head['log_time'] = timestamp
        head['publish_time'] = timestamp
        record = head.tobytes() + bytes(data)
        self._append([record], np.array([connection.id]), np.array([timestamp], dtype=np.int64),
                     np.array([len(record)], dtype=np.int64), _ONE_BY_ONE_CHUNK_BYTES)

    def write_many(self, ids: Sequence[int], batches: Sequence[RawBatch]) -> None:
        """Append the batches' messages, merged in time order, in chunks of about 4 MiB."""
        records = []
        for cid, batch in zip(ids, batches):  # record = 31-byte header + CDR payload
            rows = np.asarray(batch.rows, dtype=np.uint8)
            rec = np.empty((len(batch), _MCAP_HEADER.itemsize + rows.shape[1]), dtype=np.uint8)
            head = np.zeros(len(batch), dtype=_MCAP_HEADER)
            head['op'] = 0x05
            head['length'] = rec.shape[1] - 9
            head['channel'] = cid
            head['log_time'] = batch.t_ns
            head['publish_time'] = batch.t_ns
            rec[:, :_MCAP_HEADER.itemsize] = head.view(np.uint8).reshape(len(batch), -1)
            rec[:, _MCAP_HEADER.itemsize:] = rows
            records.append(rec)
        which, t_ns, views = sorted_rows(batches, records)
        conn = np.asarray(ids, dtype=np.int64)[which]
        sizes = np.asarray([r.shape[1] for r in records], dtype=np.int64)[which]
        ends = np.cumsum(sizes)
        lo = 0
        while lo < len(views):
            room = max(MCAP_CHUNK_BYTES - self._size, 1)
            base = ends[lo] - sizes[lo]
            hi = lo + max(1, int(np.searchsorted(ends[lo:] - base, room, side='right')))
            self._append(views[lo:hi], conn[lo:hi], t_ns[lo:hi], sizes[lo:hi], MCAP_CHUNK_BYTES)
            lo = hi

    def _append(self, parts: list[Any], conn: NDArray[np.int64], t_ns: NDArray[np.int64],
                sizes: NDArray[np.int64], chunk_bytes: int) -> None:
        self._drain()
        offsets = self._size + np.cumsum(sizes) - sizes
        chunk = self.chunk
        chunk.message_start_time = min(chunk.message_start_time, int(t_ns.min()))
        chunk.message_end_time = max(chunk.message_end_time, int(t_ns.max()))
        self.message_start_time = min(self.message_start_time, int(t_ns.min()))
        self.message_end_time = max(self.message_end_time, int(t_ns.max()))
        for cid in np.unique(conn).tolist():
            sel = conn == cid
            entries = np.empty(int(sel.sum()), dtype=_INDEX_ENTRY)
            entries['log_time'] = t_ns[sel]
            entries['offset'] = offsets[sel]
            self._index.setdefault(cid, []).append(entries)
            self.channel_stats[cid] += len(entries)
        self._parts.extend(parts)
        self._size += int(sizes.sum())
        if self._size >= chunk_bytes:
            self.close_chunk()

    def close_chunk(self) -> None:
        """Write the pending chunk (records straight from the blocks), its message indexes and
        keep its chunk index for the summary, as rosbags does."""
        self._drain()
        if not self._parts:
            return
        chunk = self.chunk
        size = self._size
        data = b''.join(self._parts)
        if self.compression:
            data = self.compressor(data)
        stored = len(data)
        compression = self.compression.encode()
        head = b''.join([
            np.uint8(0x06).tobytes(),
            np.uint64(8 + 8 + 8 + 4 + 4 + len(compression) + 8 + stored).tobytes(),
            np.array([chunk.message_start_time, chunk.message_end_time, size],
                     dtype='<u8').tobytes(),
            np.uint32(0).tobytes(),  # CRC of the uncompressed data: not computed (0), as rosbags
            np.uint32(len(compression)).tobytes(), compression, np.uint64(stored).tobytes()])
        chunk_start = self.bio.tell()
        self.bio.write(head)
        self.bio.write(data)
        chunk_end = self.bio.tell()
        offsets: list[tuple[int, int]] = []
        for cid in sorted(self._index):
            entries = np.concatenate(self._index[cid])
            entries = entries[np.argsort(entries['log_time'], kind='stable')]
            offsets.append((cid, self.bio.tell()))
            self.bio.write(b''.join([np.uint8(0x07).tobytes(),
                                     np.uint64(2 + 4 + entries.nbytes).tobytes(),
                                     np.uint16(cid).tobytes(), np.uint32(entries.nbytes).tobytes(),
                                     entries.tobytes()]))
        rec = BytesIO()
        rec.write(np.array([chunk.message_start_time, chunk.message_end_time, chunk_start,
                            chunk_end - chunk_start], dtype='<u8').tobytes())
        rec.write(np.uint32(len(offsets) * 10).tobytes())
        for cid, offset in offsets:
            rec.write(np.uint16(cid).tobytes())
            rec.write(np.uint64(offset).tobytes())
        rec.write(np.uint64(self.bio.tell() - chunk_end).tobytes())
        rec.write(np.uint32(len(compression)).tobytes() + compression)
        rec.write(np.array([stored, size], dtype='<u8').tobytes())
        self.chunks.append(rec)
        self._parts, self._size, self._index = [], 0, {}
        self.chunk = PendingChunk(2**63 - 1, 0, BytesIO(), defaultdict(list))

    def close(self, version: int, metadata: str) -> None:
        """Write the last chunk, then the summary as rosbags does."""
        self.close_chunk()
        super().close(version, metadata)


class BulkWriter(Writer):
    """rosbags' rosbag2 :class:`Writer` whose storage also takes batches (:meth:`write_many`)."""

    STORAGE_PLUGINS = {**Writer.STORAGE_PLUGINS}

    def write_many(self, connections: Sequence[Any], batches: Sequence[RawBatch]) -> None:
        """Write the batches (one connection each), merged in time order."""
        if self.storage is None:
            raise ValueError('bag was not opened')
        pairs = [(c.id, b) for c, b in zip(connections, batches) if len(b)]
        if not pairs:
            return
        ids = [cid for cid, _ in pairs]
        batches = [b for _, b in pairs]
        self.storage.write_many(ids, batches)  # type: ignore[attr-defined]
        for cid, batch in zip(ids, batches):
            self.counts[cid] += len(batch)
            self.min_timestamp = min(self.min_timestamp, int(np.min(batch.t_ns)))
            self.max_timestamp = max(self.max_timestamp, int(np.max(batch.t_ns)))


def _plugins() -> None:
    from rosbags.rosbag2 import StoragePlugin

    BulkWriter.STORAGE_PLUGINS = {StoragePlugin.SQLITE3: BulkSqlite3Writer,
                                  StoragePlugin.MCAP: BulkMcapWriter}


_plugins()
