"""The replay rules (groupcoord.format.replay_rules) as the coordinator and the compacted view apply
them: the same state from the same log."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcoord.cli import inspect
from groupcoord.format import codec
from groupcoord.format.codec import (
    ConsumerGroupKey,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    OpaqueKey,
)
from groupcoord.format.compaction import compact
from groupcoord.config import Config
from groupcoord.partitioner import partition_for
from groupcoord.format.replay_rules import logical_key, logical_key_bytes
from groupcoord.spark.files import plan
from groupcoord.spark.scan import BadBatch, scan
from groupcoord.storage import LogCleaner, PartitionLog
from groupcoord.storage.checkpoint import CLEANER_OFFSET_FILE, OffsetCheckpoint

from offsets_logs import T0, LogBuilder, consumer_members, encoded
from replayed_state import compacted_view, coordinator_view, load

KEYS = [
    OffsetCommitKey("g", "t", 0, record_type=0), OffsetCommitKey("g", "t", 0), OffsetCommitKey("g", "t", 1),
    OffsetCommitKey("h", "t", 0), GroupMetadataKey("g"), GroupMetadataKey("h"),
    ConsumerGroupKey(5, "g", member_id="m1"), ConsumerGroupKey(5, "g", member_id="m2"), ConsumerGroupKey(3, "g"),
    ConsumerGroupKey(16, "g", regular_expression="a.*"), ConsumerGroupKey(16, "g", regular_expression="b.*"),
    OpaqueKey(9, b"\x00\x01g"), OpaqueKey(9, b"\x00\x01h"),
]


def test_logical_keys_of_decoded_keys_and_of_raw_bytes_agree() -> None:
    assert logical_key(KEYS[0]) == logical_key(KEYS[1]) == ("offset", "g", "t", 0)
    assert len({logical_key(k) for k in KEYS}) == len(KEYS) - 1
    raw = [codec.encode_key(k) for k in KEYS]
    assert len({logical_key_bytes(k) for k in raw}) == len(KEYS) - 1
    for a, key_a in zip(raw, KEYS):
        for b, key_b in zip(raw, KEYS):
            assert (logical_key_bytes(a) == logical_key_bytes(b)) == (logical_key(key_a) == logical_key(key_b))
            assert logical_key(codec.decode_key(a)) == logical_key(key_a)


def views(partitions: dict[int, LogBuilder]) -> tuple[object, object]:
    """(what the coordinator loads, the compacted view) of the partitions' logs."""
    coordinator = load({p: codec.decode_records(log.data(), partition=p) for p, log in partitions.items()})
    table = compact([codec.decode_arrow(log.data(), partition=p) for p, log in partitions.items()])
    return coordinator_view(coordinator), compacted_view(table.to_pylist())


def commit(offset: int, group: str = "g", partition: int = 0) -> tuple[bytes, bytes | None]:
    return encoded(OffsetCommitKey(group, "t", partition), OffsetCommitValue(offset, "", 7))


def test_an_idempotent_batch_with_a_producer_id_waits_for_its_marker() -> None:
    """Kafka 4's coordinator looks at the producer id, not the transactional flag: a
    non-transactional batch with a producer id is pending until that producer's marker."""
    log = LogBuilder()
    log.write([commit(1)])
    log.write([commit(2), commit(3, partition=1)], producer_id=7, transactional=False)
    coordinator, compacted = views({0: log})
    assert coordinator == compacted
    assert {k: v[1] for k, v in coordinator[0].items()} == {("g", "t", 0): 1}
    log.marker(7, commit=True)
    coordinator, compacted = views({0: log})
    assert coordinator == compacted
    assert {k: v[1] for k, v in coordinator[0].items()} == {("g", "t", 0): 2, ("g", "t", 1): 3}


def test_a_marker_ends_what_its_producer_wrote_to_its_own_partition() -> None:
    """Producer 7's transaction spans log partitions 0 and 1; partition 0's COMMIT and
    partition 1's ABORT each end only their own partition's part."""
    first, second = LogBuilder(), LogBuilder()
    first.write([commit(10, "a")], producer_id=7)
    second.write([commit(20, "b")], producer_id=7)
    first.marker(7, commit=True)
    coordinator, compacted = views({0: first, 1: second})
    assert coordinator == compacted
    assert {k: v[1] for k, v in coordinator[0].items()} == {("a", "t", 0): 10}
    second.marker(7, commit=False)
    second.write([commit(21, "b")], producer_id=7)
    first.marker(7, commit=False)
    coordinator, compacted = views({0: first, 1: second})
    assert coordinator == compacted
    assert {k: v[1] for k, v in coordinator[0].items()} == {("a", "t", 0): 10}


# --- one random log, three readers -----------------------------------------------------------

CONFIG = Config().with_overrides({
    "offsets.topic.num.partitions": "2", "offsets.topic.segment.bytes": "700", "log.index.interval.bytes": "200",
    "log.cleaner.enable": "false", "log.cleaner.min.cleanable.ratio": "0", "log.cleaner.delete.retention.ms": "1000",
})
GROUPS = {p: [g for g in "abcdefgh" if partition_for(g, 2) == p][:2] for p in (0, 1)}
NOW = 1_800_000_000_000
Batch = tuple[int, list[tuple[bytes, bytes | None]], int, bool, str | None]
"""(log partition, records, producer id, transactional, marker: "commit", "abort" or None)."""


@st.composite
def random_logs(draw: st.DrawFn) -> list[Batch]:
    """Two log partitions' batches: offset commits under key types 0 and 1, tombstones, group
    metadata, transactional commits of producers 10 and 11 (in both partitions) ended by
    COMMIT or ABORT markers per partition or left open, and idempotent non-transactional
    batches with a producer id (10, 11 or 12, which never writes a marker)."""
    batches: list[Batch] = []
    for _ in range(draw(st.integers(1, 40))):
        partition = draw(st.integers(0, 1))
        action = draw(st.sampled_from(["plain", "plain", "group", "txn", "idempotent", "marker"]))
        if action == "marker":
            batches.append((partition, [], draw(st.sampled_from([10, 11])), True,
                            draw(st.sampled_from(["commit", "abort"]))))
            continue
        if action == "group":
            group = draw(st.sampled_from(GROUPS[partition]))
            value = GroupMetadataValue("consumer", draw(st.integers(1, 9)), "range", None, T0,
                                       consumer_members(group, draw(st.integers(0, 2)), 3))
            tombstone = draw(st.integers(0, 3)) == 0
            batches.append((partition, [encoded(GroupMetadataKey(group), None if tombstone else value)], -1, False, None))
            continue
        records = []
        for _ in range(draw(st.integers(1, 3))):
            key = OffsetCommitKey(draw(st.sampled_from(GROUPS[partition])), "t", draw(st.integers(0, 2)),
                                  record_type=draw(st.sampled_from([0, 1, 1])))
            value = OffsetCommitValue(draw(st.integers(0, 999)), "", T0, version=0 if key.record_type == 0 else 3)
            # The coordinator writes tombstones in plain batches only.
            tombstone = action == "plain" and draw(st.integers(0, 4)) == 0
            records.append(encoded(key, None if tombstone else value))
        if action == "plain":
            batches.append((partition, records, -1, False, None))
        elif action == "txn":
            batches.append((partition, records, draw(st.sampled_from([10, 11])), True, None))
        else:
            batches.append((partition, records, draw(st.sampled_from([10, 11, 12])), False, None))
    return batches


def write_logs(root: Path, batches: list[Batch]) -> None:
    logs = {p: PartitionLog.open(root / f"__consumer_offsets-{p}", CONFIG) for p in (0, 1)}
    for partition, records, producer_id, transactional, marker in batches:
        log = logs[partition]
        if marker is not None:
            data = codec.write_control_batch(base_offset=log.next_offset, timestamp=T0, producer_id=producer_id,
                                             producer_epoch=0, commit=marker == "commit")
            log.append(data, log.next_offset, 1)
        else:
            data = codec.write_batch(records, base_offset=log.next_offset, timestamp=T0, producer_id=producer_id,
                                     producer_epoch=-1 if producer_id == -1 else 0, is_transactional=transactional)
            log.append(data, log.next_offset + len(records) - 1, len(records))
    for log in logs.values():
        log.close()


def clean(root: Path) -> None:
    """Two passes of the cleaner over every partition (the second past the tombstones' and
    markers' delete horizon), the active segment rolled first so that all of it is cleanable."""
    checkpoint = OffsetCheckpoint(root / CLEANER_OFFSET_FILE)
    for directory in sorted(root.glob("__consumer_offsets-*")):
        log = PartitionLog.open(directory, CONFIG)
        log.roll()
        cleaner = LogCleaner(CONFIG, logs=lambda: [log], checkpoint=checkpoint)
        cleaner.clean(log, NOW)
        cleaner.clean(log, NOW + CONFIG.log_cleaner_delete_retention_ms)
        log.close()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_logs())
def test_coordinator_compacted_view_and_cleaned_log_agree(batches: list[Batch]) -> None:
    """The same log read three ways gives one state: loaded by the coordinator, as the compacted
    view (through the Spark source's file layer), and cleaned by the log cleaner then loaded."""
    with tempfile.TemporaryDirectory() as tmp:
        root, cleaned = Path(tmp) / "original", Path(tmp) / "cleaned"
        write_logs(root, batches)
        shutil.copytree(root, cleaned)
        clean(cleaned)
        loaded = coordinator_view(inspect.load(root, CONFIG))
        items = [item for split in plan([str(root)], 1 << 20) for item in scan(split)]
        assert not [item for item in items if isinstance(item, BadBatch)]
        assert compacted_view(compact(items).to_pylist()) == loaded
        assert coordinator_view(inspect.load(cleaned, CONFIG)) == loaded
