"""The replay rules (groupcoord.replay_rules) as the coordinator and the compacted view apply
them: the same state from the same log."""

from __future__ import annotations

from groupcoord import codec
from groupcoord.codec import ConsumerGroupKey, GroupMetadataKey, OffsetCommitKey, OffsetCommitValue, OpaqueKey
from groupcoord.compaction import compact
from groupcoord.replay_rules import logical_key, logical_key_bytes

from offsets_logs import LogBuilder, encoded
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
