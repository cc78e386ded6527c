"""The compacted view (groupcoord.format.compaction) against what the coordinator loads from the same
log, on logs of every record kind and on random logs with transactions, chunked every which
way."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcoord.format import codec
from groupcoord.format.codec import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey, OffsetCommitValue
from groupcoord.format.compaction import Compactor, compact, compacted_state

from offsets_logs import CONSUMER_GROUP_RECORDS, LogBuilder, encoded, every_kind
from replayed_state import compacted_view, coordinator_view, latest_other_records, load_bytes


def live_offsets(table: Any) -> list[tuple[int, int]]:
    return list(zip(table.column("partition").to_pylist(), table.column("offset").to_pylist()))


def check(data: bytes, partition: int, cuts: list[int]) -> Any:
    """Compact ``data`` decoded in chunks cut at batch indexes ``cuts``; compare with what the
    coordinator loads."""
    batches = codec.read_batches(data)
    bounds = sorted({0, len(batches), *[c % (len(batches) + 1) for c in cuts]})
    chunks = [codec.decode_arrow(data[batches[a].position: batches[b - 1].position + batches[b - 1].size],
                                 partition=partition, position=batches[a].position)
              for a, b in zip(bounds, bounds[1:]) if b > a]
    compactor = Compactor(reduce_rows=1)
    for chunk in chunks:
        compactor.add(chunk)
    result = compactor.result()
    # Each chunk reduced on its own ("by another task"), then the reductions compacted in order.
    runs = []
    for chunk in chunks:
        run = Compactor()
        run.add(chunk)
        runs.append(run.reduced())
    assert compact(runs).to_pylist() == result.to_pylist()
    assert compacted_view(result.to_pylist()) == coordinator_view(load_bytes(data, partition))
    other = latest_other_records(codec.decode_records(data, partition=partition))
    assert sorted(o for r, o in zip(result.column("record_type").to_pylist(), live_offsets(result))
                  if r is not None and r > 2) == sorted((partition, o) for o in other.values())
    history = codec.decode_arrow(data, partition=partition).to_pylist()
    by_offset = {row["offset"]: row for row in history}
    assert result.to_pylist() == [by_offset[o] for _, o in live_offsets(result)]
    return result


def test_every_kind_compacts_to_what_replay_holds() -> None:
    for compression in codec.COMPRESSIONS:
        log = every_kind(compression)
        for cuts in ([], [1], [3, 6], list(range(20))):
            result = check(log.data(), 5, cuts)
    state = compacted_state(result)
    assert state.offsets[("g-txn", "orders", 0)][0] == 500
    assert state.offsets[("g-txn", "orders", 1)][0] == 77
    assert ("g-txn", "orders", 2) not in state.offsets and ("g-txn", "orders", 3) not in state.offsets
    assert ("g0", "orders", 1) not in state.offsets
    assert {k: v[0] for k, v in state.offsets.items() if k[0] in ("g0", "legacy")} == {
        ("g0", "orders", 0): 100, ("g0", "orders", 2): 102, ("g0", "orders", 3): 103,
        ("g0", "orders", 4): 104, ("legacy", "orders", 0): 11, ("legacy", "orders", 1): 12,
    }
    assert sorted(state.groups) == ["connect", "g1", "g2", "g3", "g4"]
    assert state.groups["g4"][:2] == ("consumer", 5)
    assert sorted(r["record_type"] for r in state.other) == [3, 4, 5, 6, 7, 8, 9, 16]


def test_key_types_0_and_1_are_one_key_and_partitions_are_separate() -> None:
    log = LogBuilder()
    log.write([encoded(OffsetCommitKey("g", "t", 0, record_type=0), OffsetCommitValue(1, version=0))])
    log.write([encoded(OffsetCommitKey("g", "t", 0, record_type=1), OffsetCommitValue(2))])
    data = log.data()
    table = compact([codec.decode_arrow(data, partition=0), codec.decode_arrow(data, partition=1)])
    assert live_offsets(table) == [(0, 1), (1, 1)]
    assert table.column("committed_offset").to_pylist() == [2, 2]


def test_each_regular_expression_of_a_group_is_a_key_of_its_own() -> None:
    """Type-16 keys are (group, regular expression), as in Kafka: one group's regexes live
    side by side, and a tombstone removes only its own."""
    regex_value = next(bytes.fromhex(v) for k, v in CONSUMER_GROUP_RECORDS if k.record_type == 16)
    log = LogBuilder()
    log.write([(codec.encode_key(codec.ConsumerGroupKey(16, "cg", regular_expression=r)), regex_value)
               for r in ("a.*", "b.*", "c.*")])
    log.write([(codec.encode_key(codec.ConsumerGroupKey(16, "cg", regular_expression="b.*")), None)])
    table = check(log.data(), 0, [1])
    assert sorted(table.column("regular_expression").to_pylist()) == ["a.*", "c.*"]
    assert set(table.column("group").to_pylist()) == {"cg"}


def test_rows_out_of_offset_order_are_refused() -> None:
    log = LogBuilder()
    for i in range(3):
        log.write([encoded(OffsetCommitKey("g", "t", 0), OffsetCommitValue(i))])
    batches = codec.read_batches(data := log.data())
    first, second = (codec.decode_arrow(data[b.position: b.position + b.size], partition=1) for b in batches[:2])
    compactor = Compactor()
    compactor.add(second)
    with pytest.raises(ValueError, match="partition 1 are not in offset order: offset 0 after 1"):
        compactor.add(first)


def test_empty_input_gives_the_codec_schema() -> None:
    table = compact([])
    assert table.num_rows == 0 and table.schema == codec.arrow_schema()


# --- random logs -------------------------------------------------------------------------------

KEYS = [OffsetCommitKey("g", "t", p) for p in range(3)] + [OffsetCommitKey("h", "t", 0, record_type=0),
                                                           GroupMetadataKey("g")]


@st.composite
def random_logs(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    log = LogBuilder(draw(st.sampled_from(codec.COMPRESSIONS)))
    open_producers: set[int] = set()
    for _ in range(draw(st.integers(1, 25))):
        action = draw(st.sampled_from(["plain", "plain", "txn", "marker"]))
        if action == "marker" and open_producers:
            pid = draw(st.sampled_from(sorted(open_producers)))
            log.marker(pid, commit=draw(st.booleans()))
            open_producers.discard(pid)
            continue
        records = []
        for _ in range(draw(st.integers(1, 4))):
            key = draw(st.sampled_from(KEYS))
            tombstone = draw(st.integers(0, 4)) == 0
            if isinstance(key, GroupMetadataKey):
                value: codec.Value = GroupMetadataValue("consumer", draw(st.integers(0, 9)), "range", None)
            else:
                value = OffsetCommitValue(draw(st.integers(0, 999)))
            records.append(encoded(key, None if tombstone else value))
        pid = draw(st.sampled_from([10, 11, 12])) if action == "txn" else -1
        if pid != -1:
            open_producers.add(pid)
        log.write(records, producer_id=pid)
    cuts = draw(st.lists(st.integers(0, 40), max_size=6))
    return log.data(), cuts


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(random_logs())
def test_random_logs_chunked_anywhere_compact_to_replay(case: tuple[bytes, list[int]]) -> None:
    data, cuts = case
    check(data, 2, cuts)


def test_reduce_keeps_memory_to_live_keys() -> None:
    log = LogBuilder()
    for i in range(200):
        log.write([encoded(OffsetCommitKey("g", "t", i % 4), OffsetCommitValue(i))])
    compactor = Compactor(reduce_rows=16)
    data = log.data()
    for batch in codec.read_batches(data):
        compactor.add(codec.decode_arrow(data[batch.position: batch.position + batch.size]))
    assert compactor._settled is not None and compactor._settled.num_rows <= 4
    assert compactor.result().column("committed_offset").to_pylist() == [196, 197, 198, 199]
    assert isinstance(compactor.result(), pa.Table)
