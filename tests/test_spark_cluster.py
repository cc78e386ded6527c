"""Reading a live partition (``groupcoord.spark.cluster``) from Fetch answers made up here, without
a broker or Spark: answers cut mid-batch, a range cleaned away, a header that makes no sense,
and the batch positions of a read across several answers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from offsets_logs import encoded

from groupcoord.format import codec
from groupcoord.format.codec import OffsetCommitKey, OffsetCommitValue
from groupcoord.spark import cluster
from groupcoord.spark.cluster import ClusterError, LivePartition, fetch_batches, parse_bootstrap, scan_partition
from groupcoord.spark.scan import BadBatch


def batch(offset: int) -> bytes:
    return codec.write_batch([encoded(OffsetCommitKey("g", "t", 0), OffsetCommitValue(offset))],
                             base_offset=offset, timestamp=1_700_000_000_000 + offset)


class FakeConnection:
    def __init__(self, host: str, port: int) -> None:
        pass

    def __enter__(self) -> FakeConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> dict[int, bytes]:
    """What a Fetch at each offset answers (the records of partition 3)."""
    found: dict[int, bytes] = {}
    monkeypatch.setattr(cluster, "Connection", FakeConnection)

    def fetch(connection: Any, partition: LivePartition, offset: int) -> bytes:
        return found[offset]

    monkeypatch.setattr(cluster, "_fetch", fetch)
    return found


def read(start: int, end: int) -> Iterator[bytes]:
    return fetch_batches(LivePartition(3, "broker", 9092, start, end))


def test_an_answer_cut_mid_batch_is_asked_for_again_and_the_range_ends_at_its_end(answers: dict[int, bytes]) -> None:
    b0, b1, b2, b3 = batch(0), batch(1), batch(2), batch(3)
    answers[0] = b0 + b1 + b2[:20]
    answers[2] = b2 + b3
    assert list(read(0, 3)) == [b0 + b1, b2], "offset 3 is past the planned end"
    assert list(read(0, 0)) == []


def test_a_range_cleaned_away_ends_the_read(answers: dict[int, bytes]) -> None:
    answers[5] = batch(9)
    assert list(read(5, 8)) == []
    answers[6] = b""
    with pytest.raises(ClusterError, match="nothing at offset 6, before the end 8"):
        list(read(6, 8))


def test_a_header_that_makes_no_sense_ends_the_read_as_a_bad_region(answers: dict[int, bytes]) -> None:
    good = batch(0)
    answers[0] = good + b"\xff" * 70
    answers[1] = b"\xff" * 70
    assert list(read(0, 5)) == [good, b"\xff" * 70]
    items = list(scan_partition(LivePartition(3, "broker", 9092, 0, 5)))
    assert [r["offset"] for r in items[0].to_pylist()] == [0]
    [bad] = items[1:]
    assert isinstance(bad, BadBatch)
    assert (bad.file, bad.partition, bad.position, bad.length) == (
        "kafka://broker:9092/__consumer_offsets-3", 3, len(good), 70)


def test_batch_positions_run_on_across_answers(answers: dict[int, bytes]) -> None:
    batches = [batch(i) for i in range(4)]
    answers[0] = batches[0] + batches[1]
    answers[2] = batches[2] + batches[3]
    rows = [r for item in scan_partition(LivePartition(3, "broker", 9092, 0, 4)) for r in item.to_pylist()]
    positions = [sum(map(len, batches[:i])) for i in range(4)]
    assert [(r["partition"], r["offset"], r["batch_position"], r["committed_offset"]) for r in rows] == [
        (3, i, positions[i], i) for i in range(4)]


def test_bootstrap_servers_are_host_port_pairs() -> None:
    assert parse_bootstrap("a:1, b:2,[::1]:3") == [("a", 1), ("b", 2), ("::1", 3)]
    for bad in ("a", "a:", ":1", "a:b"):
        with pytest.raises(ValueError, match="takes host:port"):
            parse_bootstrap(bad)
