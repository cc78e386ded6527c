"""``__consumer_offsets`` logs written with the codec for the compaction and Spark tests.

:func:`every_kind` builds one partition's batches holding every record type the codec
knows (offset commits v0-v4 under key types 0 and 1, group metadata v0-v4 with consumer
members, tombstones, committed, aborted and open transactions, consumer-group types 3-8 and
16, an opaque type, legacy magic 0 and 1 messages) in one compression. :func:`write_log_dir`
lays batches out as Kafka does: ``__consumer_offsets-N/<20-digit base>.log`` segments with a
sparse ``.index`` beside each.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

from groupcoord.format import codec
from groupcoord.format.codec import (
    ConsumerGroupKey,
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
)

T0 = 1_700_000_000_000

# Version-0 values of the new coordinator's records, encoded by their declared schemas.
UUID = bytes(range(16)).hex()
CONSUMER_GROUP_RECORDS: list[tuple[ConsumerGroupKey, str]] = [
    (ConsumerGroupKey(3, "cg"), "0000" "0000000a" "00"),
    (ConsumerGroupKey(4, "cg"), "0000" "01" "00"),
    (ConsumerGroupKey(5, "cg", member_id="m1"),
     "0000" "00" "00" "036331" "036831" "02" "0274" "00" "000493e0" "00" "00"),
    (ConsumerGroupKey(6, "cg"), "0000" "00000005" "00"),
    (ConsumerGroupKey(7, "cg", member_id="m1"), "0000" "02" + UUID + "03" "00000000" "00000001" "00" "00"),
    (ConsumerGroupKey(8, "cg", member_id="m1"),
     "0000" "00000005" "00000004" "02" "02" + UUID + "03" "00000000" "00000001" "01" "00"
     "09" "03" "00000005" "00000005" "01" "00"),
    (ConsumerGroupKey(16, "cg", regular_expression="t.*"),
     "0000" "02" "0274" "0000000000000001" "000000000000000a" "00"),
]
OPAQUE_RECORD = (bytes.fromhex("0009000567726f7570"), bytes.fromhex("00000000000a00"))


def encoded(key: codec.Key, value: codec.Value | None) -> tuple[bytes, bytes | None]:
    return codec.encode_key(key), None if value is None else codec.encode_value(value)


def consumer_members(group: str, n: int, version: int) -> list[MemberMetadata]:
    """``n`` consumer-protocol members of ``group``, each owning partitions m and m + n of
    topics "orders" and "payments"; subscription and assignment at ``version`` (0 to 3)."""
    members = []
    for m in range(n):
        topics = ["orders", "payments"]
        sub = ConsumerProtocolSubscription(topics, None, [("orders", [m])] if version else [],
                                           m if version >= 2 else -1, None, version)
        asg = ConsumerProtocolAssignment([(t, [m, m + n]) for t in topics], None, version)
        members.append(MemberMetadata(
            f"{group}-member-{m}", f"instance-{m}" if version >= 3 else None, f"client-{m}",
            f"/10.0.0.{m}", 300_000, 45_000,
            codec.encode_subscription(sub), codec.encode_assignment(asg),
        ))
    return members


def legacy_message(offset: int, key: bytes, value: bytes | None, magic: int, timestamp: int) -> bytes:
    """One uncompressed magic 0 or 1 message as Kafka before 0.11 stored it (CRC-32)."""
    body = struct.pack(">bb", magic, 0)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    body += struct.pack(">i", len(key)) + key
    body += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


class LogBuilder:
    """Appends batches to one partition's log, assigning offsets as a broker would."""

    def __init__(self, compression: str = "none", start_offset: int = 0) -> None:
        self.compression = compression
        self.next_offset = start_offset
        self.batches: list[bytes] = []
        self.timestamp = T0

    def write(self, records: Sequence[tuple[bytes, bytes | None]], *, producer_id: int = -1,
              compression: str | None = None, transactional: bool | None = None) -> int:
        """Append one batch; returns its base offset. A producer id makes it transactional
        unless ``transactional`` is False (an idempotent producer's batch)."""
        base = self.next_offset
        self.batches.append(codec.write_batch(
            records, base_offset=base, timestamp=self.timestamp,
            compression=compression or self.compression, producer_id=producer_id,
            producer_epoch=0 if producer_id != -1 else -1,
            is_transactional=producer_id != -1 if transactional is None else transactional,
        ))
        self.next_offset += len(records)
        self.timestamp += 1000
        return base

    def marker(self, producer_id: int, commit: bool) -> int:
        base = self.next_offset
        self.batches.append(codec.write_control_batch(
            base_offset=base, timestamp=self.timestamp, producer_id=producer_id, producer_epoch=0,
            commit=commit,
        ))
        self.next_offset += 1
        self.timestamp += 1000
        return base

    def legacy(self, key: bytes, value: bytes | None, magic: int) -> int:
        base = self.next_offset
        self.batches.append(legacy_message(base, key, value, magic, self.timestamp))
        self.next_offset += 1
        self.timestamp += 1000
        return base

    def data(self) -> bytes:
        return b"".join(self.batches)


def every_kind(compression: str = "none", start_offset: int = 0) -> LogBuilder:
    """One partition's log with every record kind. What its compacted view must hold:

    - offsets: (g0, orders, 0..4) from the values v0..v4, except (g0, orders, 1) tombstoned;
      (legacy, orders, 0) and (legacy, orders, 1) from the magic 0 and 1 messages;
      (g-txn, orders, 0) = 500 (committed transaction); (g-txn, orders, 1) = 77 (a plain commit
      written after the transactional one and before its COMMIT wins); nothing of the aborted
      and the open transactions.
    - groups: g1..g4 (v1..v4 values), "connect"; g0 tombstoned.
    - the consumer-group records and the opaque record, once each.
    """
    log = LogBuilder(compression, start_offset)
    log.write([encoded(OffsetCommitKey("g0", "orders", v, record_type=0 if v == 0 else 1),
                       OffsetCommitValue(100 + v, f"meta-{v}", T0 + v, 7 if v >= 3 else -1,
                                         T0 + 86_400_000 if v == 1 else -1, v))
               for v in range(5)])
    log.write([encoded(GroupMetadataKey(f"g{v}"),
                       GroupMetadataValue("consumer", v + 1, "range", f"g{v}-member-0", T0 if v >= 2 else -1,
                                          consumer_members(f"g{v}", 2 + v, min(v, 3)), v))
               for v in range(5)]
              + [encoded(GroupMetadataKey("connect"), GroupMetadataValue("connect", 1, "default", None, T0, []))])
    log.write([encoded(OffsetCommitKey("g0", "orders", 1), None), encoded(GroupMetadataKey("g0"), None)])
    log.write([encoded(OffsetCommitKey("g-txn", "orders", p), OffsetCommitValue(500 + p, "", T0, -1))
               for p in (0, 1)], producer_id=1000)
    log.write([encoded(OffsetCommitKey("g-txn", "orders", 1), OffsetCommitValue(77, "", T0, -1))])
    log.write([encoded(OffsetCommitKey("g-txn", "orders", 2), OffsetCommitValue(900, "", T0, -1))],
              producer_id=2000)
    log.marker(1000, commit=True)
    log.marker(2000, commit=False)
    log.write([encoded(OffsetCommitKey("g-txn", "orders", 3), OffsetCommitValue(1, "", T0, -1))],
              producer_id=3000)
    log.write([(codec.encode_key(k), bytes.fromhex(v)) for k, v in CONSUMER_GROUP_RECORDS] + [OPAQUE_RECORD])
    log.legacy(codec.encode_key(OffsetCommitKey("legacy", "orders", 0, record_type=0)),
               codec.encode_value(OffsetCommitValue(11, "", T0, -1, -1, 0)), magic=0)
    log.legacy(codec.encode_key(OffsetCommitKey("legacy", "orders", 1, record_type=1)),
               codec.encode_value(OffsetCommitValue(12, "", T0, -1, T0 + 1, 1)), magic=1)
    return log


def index_entries(segment: bytes, interval: int = 4096) -> bytes:
    """A sparse offset index of ``segment`` as Kafka writes it: an entry (last offset of a
    batch relative to the segment's base, the batch's position) each time more than
    ``interval`` bytes were appended since the last entry."""
    batches = codec.read_batches(segment)
    if not batches:
        return b""
    base = batches[0].base_offset
    out, since = [], interval
    for batch in batches:
        if since >= interval:
            out.append(struct.pack(">ii", batch.last_offset - base, batch.position))
            since = 0
        since += batch.size
    return b"".join(out)


def write_log_dir(root: Path, partitions: dict[int, Sequence[bytes]], segment_bytes: int = 1 << 30,
                  with_index: bool = True) -> list[Path]:
    """Write each partition's batches into ``root/__consumer_offsets-N/`` segments of about
    ``segment_bytes`` (a segment rolls once it reaches it). Returns the segment paths."""
    paths = []
    for partition, batches in partitions.items():
        directory = root / f"__consumer_offsets-{partition}"
        directory.mkdir(parents=True, exist_ok=True)
        segments: list[list[bytes]] = [[]]
        size = 0
        for batch in batches:
            if size >= segment_bytes:
                segments.append([])
                size = 0
            segments[-1].append(batch)
            size += len(batch)
        for chunks in segments:
            if not chunks:
                continue
            data = b"".join(chunks)
            base = struct.unpack_from(">q", data)[0]
            path = directory / f"{base:020d}.log"
            path.write_bytes(data)
            if with_index:
                path.with_suffix(".index").write_bytes(index_entries(data))
            paths.append(path)
    return paths
