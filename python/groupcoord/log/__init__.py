"""The ``__consumer_offsets`` log as the coordinator sees it: a writer and a reader.

The coordinator never touches files. It appends the records a request produced through a
:class:`PartitionWriter` and answers the request when the append's callback reports it
complete (durable by the flush policy); at load it replays what a :class:`PartitionReader`
yields. Two implementations: :class:`groupcoord.log.memory.InMemoryLog` (tests and
benchmarks, appends complete when told to) and the durable segment log
(``groupcoord.storage``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple, Protocol

from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.format.codec import OffsetsRecord
from groupcoord.format.replay_rules import NO_PRODUCER_ID

__all__ = [
    "Append",
    "AppendCallback",
    "AppendError",
    "BatchAppend",
    "LogDamagedError",
    "NO_SEQUENCE",
    "PartitionReader",
    "PartitionWriter",
    "TopicPartition",
    "encode_append",
    "offsets_taken",
]


class TopicPartition(NamedTuple):
    topic: str
    partition: int


NO_SEQUENCE = -1
"""A batch's base sequence when no producer sequence applies (Kafka's
``RecordBatch.NO_SEQUENCE``)."""


class AppendError(Exception):
    """An append that did not happen, with the Kafka error the log reports.

    ``MESSAGE_TOO_LARGE`` (the batch exceeds ``message.max.bytes``), ``KAFKA_STORAGE_ERROR``
    (the disk failed), ``NOT_LEADER_OR_FOLLOWER`` (the partition is not, or no longer, owned
    here). The coordinator maps it to the error its client sees.
    """

    def __init__(self, error: Errors, message: str = "") -> None:
        super().__init__(message or error.name)
        self.error = error


class LogDamagedError(ValueError):
    """A partition whose log holds damage that the corruption policy neither truncates nor
    skips: it is not loaded until its files change (``groupcoord repair``) or an operator asks
    for it again. ``path`` is the damaged file, ``position`` the byte where the damage starts.
    A ``ValueError``, bad input, as the codec's ``CorruptRecordError`` is."""

    def __init__(self, partition: int, path: Path, position: int, reason: str) -> None:
        super().__init__(f"{path}: damaged at byte {position}: {reason}")
        self.partition = partition
        self.path = path
        self.position = position
        self.reason = reason
        self.fingerprint = files_fingerprint(path.parent)

    def files_changed(self) -> bool:
        """Whether the partition's files (names, sizes, modification times) differ from when
        the damage was found: worth loading again."""
        return files_fingerprint(self.path.parent) != self.fingerprint


def files_fingerprint(directory: Path) -> frozenset[tuple[str, int, int]]:
    """The names, sizes and modification times of the files in ``directory`` (empty when it
    cannot be read): a cheap check that something rewrote them."""
    try:
        with os.scandir(directory) as entries:
            found = set()
            for entry in entries:
                try:
                    status = entry.stat()
                except OSError:
                    continue
                found.add((entry.name, status.st_size, status.st_mtime_ns))
            return frozenset(found)
    except OSError:
        return frozenset()


@dataclass(slots=True)
class Append:
    """One atomic write: its records go out in one batch (possibly merged with other
    appends of the same loop turn into one batch, never split). Not changed once made (not
    frozen: a frozen dataclass takes four times as long to make, and every commit makes one).

    ``records`` are encoded ``(key, value)`` pairs; a ``None`` value is a tombstone.
    ``control`` instead writes a transaction marker (``records`` empty) for
    ``producer_id``/``producer_epoch``. ``timestamp`` is the batch's CreateTime.
    ``base_sequence`` is the batch header's: Kafka 3.9 writes offset commits with 0 and
    everything else (group metadata, tombstones, markers) with none.
    """

    records: Sequence[tuple[bytes, bytes | None]]
    timestamp: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = -1
    base_sequence: int = NO_SEQUENCE
    transactional: bool = False
    control: Literal["commit", "abort"] | None = None
    coordinator_epoch: int = 0

    def __post_init__(self) -> None:
        if self.control is None and not self.records:
            raise ValueError("an append needs at least one record")
        if self.control is not None and (self.records or self.producer_id < 0):
            raise ValueError("a transaction marker carries no records and names its producer id")


@dataclass(slots=True)
class BatchAppend:
    """A record batch a producer sent, validated, written as it is (Produce): the log sets
    its base offset and partition leader epoch in place and, with ``log_append_time_ms``,
    stamps it with that time (``message.timestamp.type=LogAppendTime``)."""

    batch: bytearray
    records: int
    """The offsets it takes: its last offset delta plus one."""
    log_append_time_ms: int | None = None


def offsets_taken(append: Append) -> int:
    """How many offsets ``append`` takes in the log: one per record, one for a marker."""
    return 1 if append.control is not None else len(append.records)


def encode_append(base_offset: int, appends: Sequence[Append], compression: str = "none") -> bytes:
    """The RecordBatch v2 a log writes for ``appends``, offsets from ``base_offset``.

    Several appends share one batch only if none is a marker and all have the same producer
    fields and base sequence (the caller merges consecutive plain appends); each record keeps
    its append's timestamp. ``compression`` is one of :data:`groupcoord.format.codec.COMPRESSIONS`. Both logs
    write exactly these bytes.
    """
    first = appends[0]
    if first.control is not None:
        return codec.write_control_batch(
            base_offset=base_offset, timestamp=first.timestamp, producer_id=first.producer_id,
            producer_epoch=first.producer_epoch, commit=first.control == "commit",
            coordinator_epoch=first.coordinator_epoch,
        )
    records: list[tuple[int, int, bytes | None, bytes | None]] = []
    offset = base_offset
    for append in appends:
        for key, value in append.records:
            records.append((offset, append.timestamp, key, value))
            offset += 1
    return codec.write_records(
        records, base_offset=base_offset, compression=compression,
        producer_id=first.producer_id, producer_epoch=first.producer_epoch,
        base_sequence=first.base_sequence, is_transactional=first.transactional,
    )


AppendCallback = Callable[[int | AppendError], None]
"""Receives the log offset of the append's first record, or the error that failed it."""


class PartitionWriter(Protocol):
    def append(self, partition: int, append: Append, callback: AppendCallback) -> None:
        """Append to ``__consumer_offsets-<partition>``.

        ``callback`` runs exactly once, on the event loop's thread, never inside this call:
        with the first record's offset once the append is complete (durable as far as the
        flush policy promises), or with an :class:`AppendError`. Appends to one partition
        complete in the order they were made.
        """
        ...


class PartitionReader(Protocol):
    def read(self, partition: int) -> Iterator[Sequence[OffsetsRecord]]:
        """The partition's records in offset order, decoded, in chunks.

        Blocking: the loader calls it from a worker thread and replays each chunk on the
        event loop. An empty or missing partition yields nothing.
        """
        ...
