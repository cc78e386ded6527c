"""``groupcoord dump-log``: one JSON object per record of ``__consumer_offsets`` segments.

Like Kafka's ``kafka-dump-log --offsets-decoder``, from our codec. Each line holds:

- ``file``, ``batch_position`` (byte position of the record's batch in the file),
  ``partition`` (the N of a ``__consumer_offsets-N`` directory, else -1), ``offset``,
  ``timestamp``, ``producer_id``, ``producer_epoch``, ``is_transactional``;
- ``control``: ``"commit"`` / ``"abort"`` for a transaction marker, Kafka's name of any
  other control type (``"leader_change"``, ...) or ``"unknown"``, else ``null``;
- ``record_type``: 0/1 offset commit, 2 group metadata, 3 to 8 and 16 the new coordinator's
  consumer-group records (their schemas' fields, snake_case), others passed through opaque;
- ``key`` and ``value``: the decoded key and value (``value`` is ``null`` for a tombstone),
  bytes as base64 strings. When a group's protocol type is ``consumer``, each member also
  carries ``subscription_decoded`` and ``assignment_decoded`` (topics, owned and assigned
  partitions). A value or member holding tagged fields that Kafka's schema does not declare
  lists them as ``unknown_tagged_fields`` (``tag`` and base64 ``data``); the brokers checked
  (Kafka 0.10.2 to 4.1) write none.

With ``--no-decode`` each line is a batch instead: its header fields and its records' raw
keys and values (base64).

A directory argument stands for its segments in (partition, base offset) order: a partition
directory's, or those of every ``__consumer_offsets-N`` directory of a broker's log directory,
as log recovery would arrange them (a cleaning's committed ``.log.swap`` in place of the
segments it replaces).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO, cast

from groupcoord.format import codec
from groupcoord.storage.partition import directory_segments, partition_of_directory
from groupcoord.storage.segment import CLEANED_SUFFIX, DELETED_SUFFIX, SWAP_SUFFIX

KAFKA_SIDE_FILES = {
    ".index": "offset index",
    ".timeindex": "time index",
    ".txnindex": "transaction index",
    ".snapshot": "producer state snapshot",
    "leader-epoch-checkpoint": "leader epoch checkpoint",
    "partition.metadata": "partition metadata file",
}
"""Files a broker keeps beside its segments, by suffix or by name (``partition_dir/*``
passes them too)."""

TRANSIENT_SUFFIXES = (DELETED_SUFFIX, CLEANED_SUFFIX, SWAP_SUFFIX)
"""What a broker appends to a file it is about to delete or is replacing in a cleaning
(``00000000000000000000.index.deleted``): the file is still what its name says before."""


def kafka_side_file(path: Path) -> str | None:
    """What a broker's file beside the segments is, or None for anything else (a segment
    included, whatever transient suffix it has)."""
    name = path.name
    while name.endswith(TRANSIENT_SUFFIXES):
        name = name[:name.rindex(".")]
    return KAFKA_SIDE_FILES.get(name) or KAFKA_SIDE_FILES.get(Path(name).suffix)


def _writer(out: TextIO) -> Callable[[bytes], object]:
    """How lines (ASCII bytes) reach ``out``: straight to its binary buffer when it has one."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        return lambda lines: out.write(lines.decode("ascii"))
    out.flush()
    return cast(Callable[[bytes], object], buffer.write)


OTHER_TOPIC_HINT = " (the file is not in a __consumer_offsets-N directory: is it another topic's?)"
NO_SEGMENTS = "no segments (NNNNNNNNNNNNNNNNNNNN.log) in it or in __consumer_offsets-N directories under it"


def _expand_directories(paths: list[Path], err: TextIO) -> Iterator[Path | None]:
    """Each path, a directory replaced by its segments; None (after naming it on ``err``)
    for a directory that has none."""
    for path in paths:
        if not path.is_dir():
            yield path
            continue
        segments = directory_segments(path)
        if not segments:
            print(f"groupcoord dump-log: {path}: {NO_SEGMENTS}", file=err)
            yield None
        yield from segments


def dump(paths: list[Path], *, decode: bool, stop_at_corruption: bool, out: TextIO, err: TextIO) -> int:
    """Prints every file's lines; returns the exit status: 1 if a file was missing, or
    corrupt (after printing the records before the corruption) unless
    ``stop_at_corruption``."""
    status = 0
    write = _writer(out)
    for path in _expand_directories(paths, err):
        if path is None:
            status = 1
            continue
        if side_file := kafka_side_file(path):
            print(f"groupcoord dump-log: {path}: a Kafka {side_file}, not a log segment: "
                  "dump-log reads the .log files", file=err)
            status = 1
            continue
        try:
            # The codec writes the lines, streaming: a chunk of whole lines at a time.
            lines = codec.iter_segment_json(path, decode=decode)
        except OSError as e:
            print(f"groupcoord dump-log: {path}: {e.strerror or e}", file=err)
            status = 1
            continue
        try:
            for chunk in lines:
                write(chunk)
        except codec.CorruptRecordError as e:
            out.flush()
            hint = "" if partition_of_directory(path.parent) >= 0 else OTHER_TOPIC_HINT
            print(f"groupcoord dump-log: {path}: {str(e).splitlines()[0]}{hint}", file=err)
            if not stop_at_corruption:
                status = 1
    out.flush()
    return status


def main(paths: list[str], *, decode: bool = True, stop_at_corruption: bool = False) -> int:
    return dump([Path(p) for p in paths], decode=decode, stop_at_corruption=stop_at_corruption,
                out=sys.stdout, err=sys.stderr)
