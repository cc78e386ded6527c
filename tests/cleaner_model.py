"""A randomized model of a ``__consumer_offsets`` partition under the log cleaner: appends of
every kind the cleaner has rules for, cleaning passes with small key maps and a clock jumping
past delete horizons, and passes interrupted at a file operation then recovered by
:meth:`PartitionLog.open`. After every pass (and every recovery) the log must replay to the
state of everything appended (:func:`offsets_workload.replay`); now and then, and at the end,
a coordinator loading it must hold what one loading everything appended holds, pending
transactional offsets included (:func:`loaded`).

``run(seed, directory, flags=...)`` runs one seed; ``python tests/cleaner_model.py N [FIRST]
[exotic]`` runs N seeds and prints the failures (bounded to 15 minutes).
"""

from __future__ import annotations

import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcoord.format import codec
from groupcoord.config import Config
from groupcoord.storage import LogCleaner, PartitionLog, read_directory
from groupcoord.storage.checkpoint import CLEANER_OFFSET_FILE, OffsetCheckpoint
from offsets_workload import replay

NOW = 1_800_000_000_000
RETENTION = 60_000
PARTITION = 5


class Crash(Exception):
    pass


@dataclass
class Flags:
    transactions: bool = True
    idempotent: bool = True
    """Non-transactional batches with a producer id, some ended by a marker later."""
    legacy: bool = True
    compression: bool = True
    group_metadata: bool = True
    type0: bool = True
    crashes: bool = True
    exotic_pending: bool = False
    """Tombstones and group metadata inside batches with a producer id (the coordinator never
    writes them; a foreign log might)."""


def _commit_value(n: int, version: int) -> bytes:
    return codec.encode_value(codec.OffsetCommitValue(n, "", 5, version=version))


class Model:
    def __init__(self, directory: Path, rng: random.Random, flags: Flags, map_bytes: int) -> None:
        self.root = directory
        self.directory = directory / f"__consumer_offsets-{PARTITION}"
        self.rng = rng
        self.flags = flags
        self.cfg = Config().with_overrides({
            "log.cleaner.enable": "false",
            "offsets.topic.segment.bytes": str(rng.choice((100_000_000, 6_000, 15_000))),
            "log.index.interval.bytes": "256",
            "log.cleaner.delete.retention.ms": str(RETENTION),
            "log.cleaner.dedupe.buffer.size": str(map_bytes),
        })
        self.log = PartitionLog.open(self.directory, self.cfg)
        self.now = NOW
        self.checkpoint = OffsetCheckpoint(directory / CLEANER_OFFSET_FILE)
        self.cleaner = self._cleaner()
        self.written: list[codec.OffsetsRecord] = []
        self.in_active = 0
        self.segment_records = rng.choice((40, 100, 150))
        self.open_txn: dict[int, bool] = {}  # producer id -> transactional
        self.next_pid = 1000
        self.n = 0
        self.groups = rng.choice((4, 8, 12))
        self.partitions = rng.choice((3, 8, 12))
        self.hot = rng.choice((0.0, 0.5, 0.9))
        """How much of the traffic goes to a few groups (the rest spreads over every key)."""
        self.passes = 0
        self.crashes = 0

    def _cleaner(self) -> LogCleaner:
        return LogCleaner(self.cfg, logs=lambda: [self.log], checkpoint=self.checkpoint, clock_ms=lambda: self.now)

    # --- appends ----------------------------------------------------------------------------

    def _append_bytes(self, batch: bytes, count: int) -> None:
        records = codec.decode_records(batch, partition=PARTITION)
        assert len(records) == count
        active = self.log.active
        self.log.append(batch, self.log.next_offset + count - 1, count)
        self.written.extend(records)
        if self.log.active is not active:
            self.in_active = 0
        self.in_active += count

    def _key(self, type0: bool = False) -> bytes:
        if self.rng.random() < self.hot:
            group = f"g{min(int(self.rng.expovariate(0.4)), self.groups - 1)}"
        else:
            group = f"g{self.rng.randrange(self.groups)}"
        key = codec.OffsetCommitKey(group, "t", self.rng.randrange(self.partitions), 0 if type0 else 1)
        return codec.encode_key(key)

    def _group_key(self) -> bytes:
        return codec.encode_key(codec.GroupMetadataKey(f"g{self.rng.randrange(self.groups)}"))

    def _group_value(self) -> bytes:
        return codec.encode_value(codec.GroupMetadataValue("consumer", self.n, "range", None, NOW + self.n, []))

    def _record(self, allow_tombstone: bool = True, allow_group: bool = True) -> tuple[bytes, bytes | None]:
        self.n += 1
        roll = self.rng.random()
        if allow_group and self.flags.group_metadata and roll < 0.12:
            return self._group_key(), (None if allow_tombstone and self.rng.random() < 0.3 else self._group_value())
        type0 = self.flags.type0 and self.rng.random() < 0.15
        key = self._key(type0)
        if allow_tombstone and self.rng.random() < 0.2:
            return key, None
        return key, _commit_value(self.n, 1 if type0 else 3)

    def _records(self, count: int, **kw: bool) -> list[tuple[bytes, bytes | None]]:
        out: list[tuple[bytes, bytes | None]] = []
        for _ in range(count):
            out.append(self._record(**kw))
        return out

    def append_plain(self) -> None:
        records = self._records(self.rng.randint(1, 4))
        compression = "none"
        if self.flags.compression and self.rng.random() < 0.2:
            compression = self.rng.choice(("gzip", "lz4", "zstd", "snappy"))
        self._append_bytes(
            codec.write_batch(records, base_offset=self.log.next_offset, timestamp=1000, compression=compression),
            len(records),
        )

    def append_legacy(self) -> None:
        from kafka.record.legacy_records import LegacyRecordBatchBuilder

        magic = self.rng.choice((0, 1))
        compression = self.rng.choice((0, 1)) if self.flags.compression else 0
        records = self._records(self.rng.randint(1, 4))
        base = self.log.next_offset
        builder = LegacyRecordBatchBuilder(magic, compression, 1 << 20)
        for i, (key, value) in enumerate(records):
            builder.append(i if compression and magic == 1 else base + i, 1_500_000_000_000 if magic else None, key, value)
        data = bytearray(builder.build())
        if compression:
            data[0:8] = (base + len(records) - 1).to_bytes(8, "big")
        self._append_bytes(bytes(data), len(records))

    def append_pending(self, pid: int) -> None:
        exotic = self.flags.exotic_pending
        records = self._records(self.rng.randint(1, 3), allow_tombstone=exotic, allow_group=exotic)
        self._append_bytes(
            codec.write_batch(
                records, base_offset=self.log.next_offset, timestamp=1000, producer_id=pid, producer_epoch=0,
                is_transactional=self.open_txn[pid],
            ),
            len(records),
        )

    def append_marker(self, pid: int, commit: bool) -> None:
        batch = codec.write_control_batch(
            base_offset=self.log.next_offset, timestamp=1000, producer_id=pid, producer_epoch=0, commit=commit
        )
        self._append_bytes(batch, 1)

    def step(self) -> None:
        roll = self.rng.random()
        f = self.flags
        if roll < 0.10 and (f.transactions or f.idempotent) and len(self.open_txn) < 3:
            pid = self.next_pid
            self.next_pid += 1
            transactional = f.transactions and not (f.idempotent and self.rng.random() < 0.4)
            self.open_txn[pid] = transactional
            self.append_pending(pid)
        elif roll < 0.22 and self.open_txn:
            self.append_pending(self.rng.choice(sorted(self.open_txn)))
        elif roll < 0.28 and self.open_txn:
            pid = self.rng.choice(sorted(self.open_txn))
            transactional = self.open_txn.pop(pid)
            if transactional or self.rng.random() < 0.8:
                self.append_marker(pid, self.rng.random() < 0.6)
        elif roll < 0.33 and f.legacy:
            self.append_legacy()
        else:
            self.append_plain()
        if self.in_active >= self.segment_records and self.log.active.size > 0:
            self.log.roll()
            self.in_active = 0

    # --- checking ---------------------------------------------------------------------------

    def expected(self) -> Any:
        return replay(self.written)

    def check(self, what: str, coordinator: bool = False) -> None:
        records = [r for chunk in self.log.read() for r in chunk]
        actual = replay(records)
        expected = self.expected()
        if actual != expected:
            raise AssertionError(f"{what}: {describe(expected, actual)}")
        if coordinator:
            expected_view, actual_view = loaded(self.written), loaded(records)
            if actual_view != expected_view:
                raise AssertionError(f"{what}, loaded by the coordinator: {expected_view} != {actual_view}")

    # --- cleaning ---------------------------------------------------------------------------

    def advance_clock(self) -> None:
        self.now += self.rng.choice((0, 1, RETENTION // 2, RETENTION, 3 * RETENTION))

    def clean(self) -> None:
        self.advance_clock()
        self.passes += 1
        self.cleaner.clean(self.log, self.now)
        self.check(f"pass {self.passes} at now+{self.now - NOW}", coordinator=self.passes % 16 == 0)

    def crash_clean(self) -> None:
        self.advance_clock()
        self.passes += 1
        operation = self.rng.choice(("replace", "unlink", "write", "fsync"))
        n = self.rng.randint(1, self.rng.choice((4, 12, 40)))
        real = getattr(os, operation)
        calls = [0]

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            if calls[0] == n:
                raise Crash(f"{operation} #{n}")
            return real(*args, **kwargs)

        setattr(os, operation, wrapper)
        try:
            self.cleaner.clean(self.log, self.now)
            crashed = False
        except Crash:
            crashed = True
        finally:
            setattr(os, operation, real)
        what = f"pass {self.passes} crashed at {operation} #{n}" if crashed else f"pass {self.passes}"
        if not crashed:
            self.check(what)
            return
        self.crashes += 1
        actual = replay(r for chunk in read_directory(self.directory) for r in chunk)
        if actual != self.expected():
            raise AssertionError(f"{what}, directory as left: {describe(self.expected(), actual)}")
        for segment in self.log.segments:
            segment.close()
        self.log = PartitionLog.open(self.directory, self.cfg, recovery_point=None)
        self.checkpoint = OffsetCheckpoint(self.root / CLEANER_OFFSET_FILE)
        self.cleaner = self._cleaner()
        self.in_active = sum(1 for chunk in self.log.read(self.log.active.base_offset) for _ in chunk)
        self.check(what + ", recovered")

    def reopen(self) -> None:
        """A restart: the log closed and opened again, a new cleaner on the same checkpoint."""
        self.log.close()
        self.log = PartitionLog.open(self.directory, self.cfg, recovery_point=None)
        self.checkpoint = OffsetCheckpoint(self.root / CLEANER_OFFSET_FILE)
        self.cleaner = self._cleaner()
        self.in_active = sum(1 for chunk in self.log.read(self.log.active.base_offset) for _ in chunk)
        self.check("reopened")

    def close(self) -> None:
        self.log.close()


def loaded(records: list[codec.OffsetsRecord]) -> Any:
    """What a coordinator loading ``records`` holds: its offsets and groups
    (:func:`replayed_state.coordinator_view`), the groups it lists, and the offsets still
    pending in open transactions."""
    from replayed_state import coordinator_view, load

    coordinator = load({PARTITION: records})
    manager = coordinator.manager
    pending = {
        (transaction, group, tp): committed
        for transaction, groups in manager.offsets.pending_transactional().items()
        for group, offsets in groups.items()
        for tp, committed in offsets.items()
    }
    listed = sorted(g.group_id for g in manager.current_groups())
    return coordinator_view(coordinator), listed, pending


def describe(expected: Any, actual: Any) -> str:
    missing = {k: v for k, v in expected.items() if k not in actual}
    extra = {k: v for k, v in actual.items() if k not in expected}
    differ = {k: (expected[k], actual[k]) for k in expected if k in actual and expected[k] != actual[k]}
    return f"missing {missing} extra {extra} differ {differ}"


def run(seed: int, directory: Path, *, appends: int = 1500, flags: Flags | None = None,
        deadline_s: float = 60.0) -> Model:
    rng = random.Random(seed)
    flags = flags or Flags()
    model = Model(directory, rng, flags, rng.choice((1024, 1024, 2048, 4096)))
    started = time.monotonic()
    try:
        for i in range(appends):
            model.step()
            if rng.random() < 0.005:
                model.reopen()
            if rng.random() < 0.04:
                if flags.crashes and rng.random() < 0.3:
                    model.crash_clean()
                else:
                    model.clean()
            if time.monotonic() - started > deadline_s:
                break
        # close every transaction, then clean until nothing is dirty, past every horizon
        for pid in sorted(model.open_txn):
            model.append_marker(pid, rng.random() < 0.5)
        model.open_txn.clear()
        if model.log.active.size > 0:
            model.log.roll()
            model.in_active = 0
        model.append_plain()
        for _ in range(60):
            model.clean()
            if (model.checkpoint.get(PARTITION) or 0) >= model.log.active.base_offset:
                break
        for _ in range(3):
            model.now += 2 * RETENTION
            model.clean()
        model.check("the end", coordinator=True)
    finally:
        model.close()
    return model


if __name__ == "__main__":
    import tempfile

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    exotic = "exotic" in sys.argv[3:]
    failures = 0
    t0 = time.monotonic()
    for seed in range(first, first + count):
        with tempfile.TemporaryDirectory() as tmp:
            try:
                run(seed, Path(tmp), flags=Flags(exotic_pending=exotic))
            except AssertionError as e:
                failures += 1
                print(f"seed {seed}: {str(e)[:600]}", flush=True)
        if time.monotonic() - t0 > 900:
            print("time bound reached at seed", seed)
            break
    print(f"{failures} failures in {time.monotonic() - t0:.1f}s")
