"""The PartitionWriter / PartitionReader contract (groupcoord.log), one suite over both
implementations: the in-memory log the coordinator's tests use and the durable log on disk.

What the coordinator relies on: offsets assigned per partition in append order, the callback
run exactly once on the loop's thread and never inside ``append``, appends to one partition
completing in order, ``MESSAGE_TOO_LARGE`` for an append over message.max.bytes (and for that
append only), and ``read`` giving back every record decoded, in offset order.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from groupcoord.format import codec
from groupcoord.config import Config
from groupcoord.errors import Errors
from groupcoord.log import Append, AppendError
from groupcoord.log.memory import InMemoryLog
from groupcoord.storage import LogManager

MAX_BATCH = 10_000
PARTITIONS = (0, 1, 7)


def offset_record(group: str, partition: int, offset: int) -> tuple[bytes, bytes | None]:
    return (
        codec.encode_key(codec.OffsetCommitKey(group, "topic", partition)),
        codec.encode_value(codec.OffsetCommitValue(offset, "", 1000 + offset)),
    )


class Harness:
    """Drives one implementation: append, let the appends complete, read back."""

    def __init__(
        self, writer: Any, settle: Callable[[], Awaitable[None]], log_bytes: Callable[[int], bytes]
    ) -> None:
        self.writer = writer
        self._settle = settle
        self.log_bytes = log_bytes
        """The partition's batches as its segment files hold them."""
        self.results: list[tuple[int, int, int | AppendError]] = []
        self.threads: set[int] = set()
        self._made = 0
        self.inside_append = False

    def append(self, partition: int, append: Append) -> int:
        """Append; returns the append's number (results name it)."""
        number = self._made
        self._made += 1

        def callback(result: int | AppendError) -> None:
            assert not self.inside_append, "callback ran inside append"
            self.threads.add(threading.get_ident())
            self.results.append((number, partition, result))

        self.inside_append = True
        try:
            self.writer.append(partition, append, callback)
        finally:
            self.inside_append = False
        return number

    async def settle(self) -> None:
        await self._settle()
        assert len(self.results) == self._made, "every callback runs exactly once"

    def result(self, number: int) -> int | AppendError:
        (found,) = [r for n, _, r in self.results if n == number]
        return found

    def read(self, partition: int) -> list[codec.OffsetsRecord]:
        return [r for chunk in self.writer.read(partition) for r in chunk]


@asynccontextmanager
async def memory_harness(tmp_path: Path) -> AsyncIterator[Harness]:
    log = InMemoryLog(max_batch_bytes=MAX_BATCH)

    async def settle() -> None:
        log.complete_pending()

    yield Harness(log, settle, log.segment_bytes)


@asynccontextmanager
async def durable_harness(tmp_path: Path) -> AsyncIterator[Harness]:
    manager = LogManager(tmp_path / "data", Config(message_max_bytes=MAX_BATCH))
    await manager.start()
    for p in PARTITIONS:
        await manager.open_partition(p)
    harness: Harness

    async def settle() -> None:
        for _ in range(1000):
            if len(harness.results) >= harness._made:
                return
            await asyncio.sleep(0.005)

    def log_bytes(partition: int) -> bytes:
        return b"".join(s.path.read_bytes() for s in manager.partition_log(partition).segments)

    harness = Harness(manager, settle, log_bytes)
    try:
        yield harness
    finally:
        await manager.close()


HARNESSES = {"memory": memory_harness, "durable": durable_harness}


@pytest.fixture(params=sorted(HARNESSES))
def make_harness(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Any]:
    factory = HARNESSES[request.param]
    return lambda: factory(tmp_path)


def run(make_harness: Callable[[], Any], body: Callable[[Harness], Awaitable[None]]) -> None:
    async def main() -> None:
        async with make_harness() as harness:
            await body(harness)

    asyncio.run(main())


def test_offsets_are_assigned_per_partition_in_append_order(make_harness: Callable[[], Any]) -> None:
    async def body(h: Harness) -> None:
        a = h.append(0, Append([offset_record("g", 0, 1)], 10))
        b = h.append(0, Append([offset_record("g", 1, 2), offset_record("g", 2, 3)], 11))
        c = h.append(1, Append([offset_record("h", 0, 4)], 12))
        d = h.append(0, Append([offset_record("g", 0, 5)], 13))
        assert h.results == [], "no callback inside append or before the loop turns"
        await h.settle()
        assert [h.result(n) for n in (a, b, c, d)] == [0, 1, 0, 3]
        assert [r.offset for r in h.read(0)] == [0, 1, 2, 3]
        e = h.append(0, Append([offset_record("g", 0, 6)], 14))
        await h.settle()
        assert h.result(e) == 4

    run(make_harness, body)


def test_callbacks_run_once_on_the_loop_thread_in_append_order(make_harness: Callable[[], Any]) -> None:
    async def body(h: Harness) -> None:
        numbers = []
        for i in range(300):
            numbers.append(h.append(PARTITIONS[i % 3], Append([offset_record("g", i, i)], i)))
            if i % 50 == 49:
                await asyncio.sleep(0)
        await h.settle()
        assert h.threads == {threading.get_ident()}
        for p in PARTITIONS:
            order = [n for n, partition, _ in h.results if partition == p]
            assert order == sorted(order)
            offsets = [r for n, partition, r in h.results if partition == p]
            assert offsets == list(range(100))

    run(make_harness, body)


def test_read_gives_back_every_record_decoded(make_harness: Callable[[], Any]) -> None:
    async def body(h: Harness) -> None:
        group_key = codec.GroupMetadataKey("g")
        group_value = codec.GroupMetadataValue("consumer", 3, "range", "m", 99, [])
        h.append(7, Append([offset_record("g", 0, 42)], 100))
        h.append(7, Append([(codec.encode_key(group_key), codec.encode_value(group_value))], 101))
        h.append(7, Append([(offset_record("g", 0, 0)[0], None)], 102))
        h.append(7, Append([offset_record("g", 1, 43)], 103, producer_id=9, producer_epoch=2, transactional=True))
        h.append(7, Append([], 104, producer_id=9, producer_epoch=2, control="commit", coordinator_epoch=5))
        await h.settle()
        records = h.read(7)
        assert [r.offset for r in records] == [0, 1, 2, 3, 4]
        assert {r.partition for r in records} == {7}
        assert records[0].value == codec.OffsetCommitValue(42, "", 1042)
        assert (records[1].key, records[1].value) == (group_key, group_value)
        assert records[2].key == codec.OffsetCommitKey("g", "topic", 0) and records[2].value is None
        assert (records[3].is_transactional, records[3].producer_id, records[3].producer_epoch) == (True, 9, 2)
        assert records[4].control == "commit" and records[4].producer_id == 9
        assert [r.timestamp for r in records] == [100, 101, 102, 103, 104]
        assert h.read(1) == []
        assert h.read(33) == []

    run(make_harness, body)


def test_an_append_over_message_max_bytes_fails_alone(make_harness: Callable[[], Any]) -> None:
    async def body(h: Harness) -> None:
        big_value = codec.encode_value(codec.OffsetCommitValue(7, "m" * 3000, 1))
        big = [(offset_record("g", p, 0)[0], big_value) for p in range(4)]
        ok1 = h.append(0, Append([offset_record("g", 0, 1)], 1))
        too_large = h.append(0, Append(big, 2))
        ok2 = h.append(0, Append([offset_record("g", 0, 2)], 3))
        nearly = h.append(0, Append(big[:3], 4))
        await h.settle()
        error = h.result(too_large)
        assert isinstance(error, AppendError) and error.error == Errors.MESSAGE_TOO_LARGE
        assert [h.result(n) for n in (ok1, ok2, nearly)] == [0, 1, 2]
        assert [r.offset for r in h.read(0)] == [0, 1, 2, 3, 4]

    run(make_harness, body)


def test_many_appends_in_one_turn_all_complete_with_contiguous_offsets(make_harness: Callable[[], Any]) -> None:
    async def body(h: Harness) -> None:
        numbers = [h.append(1, Append([offset_record("g", i % 40, i)], i)) for i in range(2000)]
        await h.settle()
        assert [h.result(n) for n in numbers] == list(range(2000))
        records = h.read(1)
        assert len(records) == 2000
        assert all(r.value == codec.OffsetCommitValue(i, "", 1000 + i) for i, r in enumerate(records))

    run(make_harness, body)


def test_an_append_without_records_is_refused_at_construction() -> None:
    with pytest.raises(ValueError):
        Append([], 1)
    with pytest.raises(ValueError):
        Append([offset_record("g", 0, 1)], 1, producer_id=3, control="commit")


def test_both_logs_write_identical_bytes(tmp_path: Path) -> None:
    """One append per turn (the durable log merges a turn's plain appends; the in-memory log
    never does): every kind of append becomes the same batch in both logs."""
    appends = [
        Append([offset_record("g", 0, 1)], 10),
        Append([offset_record("g", 1, 2), (offset_record("g", 2, 3)[0], None)], 11),
        Append([offset_record("g", 3, 4)], 12, producer_id=9, producer_epoch=2, transactional=True),
        Append([], 13, producer_id=9, producer_epoch=2, control="abort", coordinator_epoch=4),
        Append([offset_record("g", 0, 5)], 14),
    ]

    async def written(factory: Callable[[Path], Any], directory: Path) -> bytes:
        async with factory(directory) as h:
            for append in appends:
                h.append(7, append)
                await h.settle()
            return bytes(h.log_bytes(7))

    async def main() -> None:
        memory = await written(memory_harness, tmp_path / "memory")
        durable = await written(durable_harness, tmp_path / "durable")
        assert len(codec.read_batches(memory)) == len(appends)
        assert memory == durable

    asyncio.run(main())


def test_the_durable_log_merges_a_turns_appends_only_with_the_same_base_sequence(tmp_path: Path) -> None:
    """Offset commits (base sequence 0) and group metadata or tombstones (none) never share a
    batch: each batch keeps the header Kafka gives its kind of write."""
    appends = [
        Append([offset_record("g", 0, 1)], 10, base_sequence=0),
        Append([offset_record("g", 1, 2)], 10, base_sequence=0),
        Append([(offset_record("g", 2, 3)[0], None)], 10),
        Append([offset_record("g", 3, 4)], 10, base_sequence=0),
    ]

    async def main() -> None:
        async with durable_harness(tmp_path) as h:
            for append in appends:
                h.append(7, append)
            await h.settle()
            batches = codec.read_batches(bytes(h.log_bytes(7)))
        assert [(len(b.records), b.base_sequence) for b in batches] == [(2, 0), (1, -1), (1, 0)]

    asyncio.run(main())
