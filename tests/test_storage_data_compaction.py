"""Compaction of a keyed data topic by the one cleaner, with Kafka's rules for data: keys
compared as raw bytes, tombstones kept ``delete.retention.ms`` (the topic's), nothing younger
than ``min.compaction.lag.ms`` compacted, aborted transactions dropped, and idempotent batches
cleaned at once (only ``__consumer_offsets`` holds them until a marker)."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from pathlib import Path
from typing import Any

import data_compaction_crash_child as crash_child
from crash_support import Child
from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.storage import LogCleaner, LogManager, PartitionLog
from groupcoord.storage.checkpoint import CLEANER_OFFSET_FILE, OffsetCheckpoint
from groupcoord.storage.topic_config import topic_log_config

NOW = 1_800_000_000_000
HOUR = 3_600_000


class Keyed:
    """A compacted data partition, its cleaner and a clock."""

    def __init__(self, tmp_path: Path, **changes: Any) -> None:
        config = Config().with_overrides({"log.cleaner.enable": "false"})
        base = topic_log_config(config, {})
        fields: dict[str, Any] = {
            "compact": True, "delete": False, "segment_bytes": 400, "index_interval_bytes": 100,
            "delete_retention_ms": HOUR, "min_cleanable_ratio": 0.0,
        }
        self.settings = dataclasses.replace(base, **{**fields, **changes})
        self.log = PartitionLog.open(tmp_path / "keyed-0", config, settings=self.settings)
        self.now = NOW
        self.checkpoint = OffsetCheckpoint(tmp_path / CLEANER_OFFSET_FILE)
        self.cleaner = LogCleaner(config, logs=lambda: [self.log], checkpoint=self.checkpoint,
                                  clock_ms=lambda: self.now)

    def append(self, records: list[tuple[bytes, bytes | None]], timestamp: int = NOW - 10 * HOUR,
               **batch: Any) -> None:
        base = self.log.next_offset
        data = codec.write_records(
            [(base + i, timestamp, key, value) for i, (key, value) in enumerate(records)],
            base_offset=base, timestamp=timestamp, **batch,
        )
        self.log.append(data, base + len(records) - 1, len(records))

    def marker(self, producer_id: int, commit: bool) -> None:
        data = codec.write_control_batch(base_offset=self.log.next_offset, timestamp=NOW - 10 * HOUR,
                                         producer_id=producer_id, producer_epoch=0, commit=commit)
        self.log.append(data, self.log.next_offset, 1)

    def latest(self) -> dict[bytes, bytes | None]:
        """Each key's last value in the log as it stands."""
        found: dict[bytes, bytes | None] = {}
        for record in self.records():
            assert record.key is not None
            found[record.key] = record.value
        return found

    def records(self) -> list[codec.Record]:
        return [
            r for s in self.log.segments for b in codec.read_segment(s.path) if not b.is_control
            for r in b.records
        ]

    def clean(self) -> None:
        self.log.roll()
        self.cleaner.clean(self.log, self.now)


def test_the_latest_value_per_raw_key_stays_and_tombstones_go_after_delete_retention(tmp_path: Path) -> None:
    k = Keyed(tmp_path)
    # Two keys __consumer_offsets would take for one (record types 0 and 1 of the same commit):
    # distinct keys in a data topic.
    type0, type1 = b"\x00\x00same", b"\x00\x01same"
    for round_ in range(10):
        k.append([(b"a", b"a%d" % round_), (b"b", b"b%d" % round_), (type0, b"t0"), (type1, b"t1")])
    k.append([(b"b", None)])
    expected = {b"a": b"a9", b"b": None, type0: b"t0", type1: b"t1"}
    k.clean()
    assert k.latest() == expected
    assert sorted(r.offset for r in k.records()) == [36, 38, 39, 40]
    # The tombstone stays delete.retention.ms (the topic's), then goes.
    k.now += HOUR - 1
    k.cleaner.clean(k.log, k.now)
    assert b"b" in k.latest()
    k.now += 2
    k.cleaner.clean(k.log, k.now)
    del expected[b"b"]
    assert k.latest() == expected


def test_nothing_younger_than_min_compaction_lag_is_compacted(tmp_path: Path) -> None:
    k = Keyed(tmp_path, min_compaction_lag_ms=HOUR)
    for round_ in range(5):
        k.append([(b"a", b"old%d" % round_)], timestamp=NOW - 2 * HOUR)
    k.log.roll()
    for round_ in range(5):
        k.append([(b"a", b"young%d" % round_)], timestamp=NOW - HOUR // 2)
    k.clean()
    # The old segment is compacted within itself; the young one is left whole.
    assert [r.value for r in k.records()] == [b"old4"] + [b"young%d" % i for i in range(5)]
    k.now += HOUR
    k.clean()
    assert [r.value for r in k.records()] == [b"young4"]


def test_aborted_transactions_go_and_idempotent_batches_are_cleaned_at_once(tmp_path: Path) -> None:
    k = Keyed(tmp_path)
    k.append([(b"a", b"committed")], producer_id=7, producer_epoch=0, is_transactional=True)
    k.marker(7, commit=True)
    k.append([(b"a", b"aborted"), (b"b", b"aborted")], producer_id=8, producer_epoch=0,
             is_transactional=True)
    k.marker(8, commit=False)
    # An idempotent producer's batches wait for no marker in a data topic.
    k.append([(b"c", b"first")], producer_id=9, producer_epoch=0)
    k.append([(b"c", b"second")], producer_id=9, producer_epoch=0, base_sequence=1)
    k.clean()
    assert k.latest() == {b"a": b"committed", b"c": b"second"}
    assert [r.value for r in k.records()] == [b"committed", b"second"]


def test_an_active_producers_last_batch_stays_empty_for_its_sequence(tmp_path: Path) -> None:
    k = Keyed(tmp_path)
    k.append([(b"a", b"from producer 9")], producer_id=9, producer_epoch=3, base_sequence=41)
    k.append([(b"a", b"without a producer")])
    k.clean()
    assert [r.value for r in k.records()] == [b"without a producer"]
    batches = [b for s in k.log.segments for b in codec.read_segment(s.path)]
    kept = [(b.producer_id, b.producer_epoch, b.base_sequence, b.base_offset, len(b.records)) for b in batches]
    assert kept == [(9, 3, 41, 0, 0), (-1, -1, 0, 1, 1)]


# --- SIGKILL mid-cleaning -------------------------------------------------------------------

CHILD = Path(__file__).with_name("data_compaction_crash_child.py")
CRASH_COUNT = 30_000
CRASH_ITERATIONS = 6


def recover(data_dir: Path) -> tuple[list[codec.Record], int]:
    """Open the partition as a restarted server would (cleaner off); its records and end."""

    async def main() -> tuple[list[codec.Record], int]:
        manager = LogManager(data_dir, crash_child.CONFIG.with_overrides({"log.cleaner.enable": "false"}))
        await manager.start()
        log = await manager.open_log(crash_child.TP, crash_child.SETTINGS)
        records = [r for s in log.segments for b in codec.read_segment(s.path) for r in b.records]
        end = log.next_offset
        await manager.close()
        return records, end

    return asyncio.run(main())


def test_a_compacted_topic_keeps_the_latest_value_per_key_across_sigkill_mid_cleaning(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    rng = random.Random(34)
    plan = [None if i % 3 == 0 else rng.randint(1, 6) for i in range(CRASH_ITERATIONS)]
    triggered = 0
    for kill_point in plan:
        process = Child(CHILD, [str(data_dir), str(CRASH_COUNT)], None if kill_point is None else ("swap", kill_point))
        triggered += "KILLPOINT" in process.kill_after(rng.uniform(0.3, 1.5) if kill_point is None else 6.0, 10.0)
        acked = {int(n): int(o) for n, o in process.acknowledged_lines()}
        records, end = recover(data_dir)
        assert all(offset == number and offset < end for number, offset in acked.items())
        offsets = [r.offset for r in records]
        assert offsets == sorted(set(offsets)) and offsets[-1] == end - 1
        expected: dict[bytes, bytes | None] = {}
        for i in range(end):
            key, value = crash_child.record(i)
            expected[key] = value
        latest: dict[bytes, bytes | None] = {}
        for r in records:
            assert (r.key, r.value) == crash_child.record(r.offset), f"offset {r.offset} holds another record"
            assert r.key is not None
            latest[r.key] = r.value
        for key, value in expected.items():
            # A tombstone may be gone once delete.retention.ms passed; the older values with it.
            assert latest.get(key) == value or (value is None and key not in latest), key
        if end > CRASH_COUNT - 3_000:
            break
    assert triggered >= 1, "the cleaner was killed mid-swap"
    assert (OffsetCheckpoint(data_dir / CLEANER_OFFSET_FILE).get(0, "keyed") or 0) > 0, "the cleaner ran"
    assert len(records) < end // 2, "the log was compacted"
