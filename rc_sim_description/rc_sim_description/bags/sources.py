"""What every storage reader gives the :class:`~rc_sim_description.bags.reader.Bag`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

__all__ = ['FileConnection', 'FileScan', 'Source']


@dataclass(frozen=True)
class FileConnection:
    """A connection (topic + type) as one storage file declares it, with a file-local id."""

    local_id: int
    topic: str
    msgtype: str             # as written in the file (ROS 1 names are normalised later)
    serialization: str       # 'cdr' or 'ros1'
    msgdef: str = ''         # message definition text ('' when the file has none)
    msgdef_encoding: str = ''  # 'ros2msg', 'ros2idl', 'ros1msg' or ''
    digest: str = ''         # RIHS01 hash (ROS 2) or md5sum (ROS 1)
    qos: str = ''            # offered_qos_profiles as YAML text ('' unknown)
    callerid: str = ''       # ROS 1 publisher


@dataclass
class FileScan:
    """One pass over a storage file: its connections and per-connection message counts."""

    connections: dict[int, FileConnection] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    first_ns: dict[int, int] = field(default_factory=dict)
    last_ns: dict[int, int] = field(default_factory=dict)
    dangling: dict[int, int] = field(default_factory=dict)  # unknown connection id -> messages
    problem: str = ''        # corruption that stopped the pass ('' when the file is whole)
    definitions: list[tuple[str, str, str]] = field(default_factory=list)  # (type, text, enc)
    storage_version: str = ''  # e.g. 'sqlite3 schema 4', 'mcap libmcap 1.1.0', 'ROS 1 V2.0'

    def add(self, local_id: int, t_ns: int) -> None:
        """Count one message (its connection may be declared later in the file)."""
        self.counts[local_id] = self.counts.get(local_id, 0) + 1
        if t_ns < self.first_ns.get(local_id, t_ns + 1):
            self.first_ns[local_id] = t_ns
        if t_ns > self.last_ns.get(local_id, t_ns - 1):
            self.last_ns[local_id] = t_ns


    def finish(self) -> FileScan:
        """Move the counts of undeclared connection ids to :attr:`dangling`."""
        for local_id in [i for i in self.counts if i not in self.connections]:
            self.dangling[local_id] = self.counts.pop(local_id)
            self.first_ns.pop(local_id, None)
            self.last_ns.pop(local_id, None)
        return self


class Source(Protocol):
    """A storage file reader (sqlite3, mcap or ROS 1)."""

    path: Path

    def scan(self) -> FileScan:
        """Walk the whole file once; corruption is reported in ``FileScan.problem``."""

    def messages(self, local_ids: set[int] | None) -> Iterator[tuple[int, int, bytes]]:
        """``(local_id, log time [ns], raw bytes)`` in storage order; stops at the corruption
        that :meth:`scan` reported (the caller decides whether that is an error)."""
