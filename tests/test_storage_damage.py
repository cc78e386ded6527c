"""The corruption policy on real files: each kind of damage, in a rolled and in the active
segment, after a clean and after an unclean shutdown, checked across loading as ``serve`` does
(the runtime on the durable log), ``inspect``, and ``repair``; and a randomized test that
damages random bytes of random segments.

The invariants: the damaged partition is refused (with its file, byte and reason) unless its
damage is a torn tail, which is truncated; the other partition serves throughout; ``inspect``
refuses the same partitions and reads the same records; no batch outside the damaged bytes is
lost or reordered; and a repaired directory loads with every valid batch.
"""

from __future__ import annotations

import asyncio
import io
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from log_faults import write_commits

from groupcoord.cli import inspect, repair
from groupcoord.config import Config
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.format import codec
from groupcoord.log import LogDamagedError
from groupcoord.storage import LogManager, read_directory
from groupcoord.storage.checkpoint import RECOVERY_POINT_FILE, OffsetCheckpoint, recovery_state
from groupcoord.storage.damage import CLEAN_SHUTDOWN_FILE

CONFIG = Config.from_properties({
    "offsets.topic.segment.bytes": 2000,
    "offsets.topic.num.partitions": 4,
    "log.cleaner.enable": False,
    "group.initial.rebalance.delay.ms": 0,
})
DAMAGED, HEALTHY = 0, 1
KINDS = ["bit flip", "zeroed range", "truncated middle", "garbage appended", "segment missing", "index disagrees"]

Record = tuple[int, Any, Any]


@dataclass
class Batch:
    segment: str
    start: int
    end: int
    records: list[Record]


def build(data_dir: Path, clean: bool) -> list[Batch]:
    """Partition DAMAGED over five segments of 2000 bytes, HEALTHY in one; the batches of
    DAMAGED. Unclean: no clean-shutdown marker, and the recovery point at the active
    segment's base (as a crash since the last roll leaves it)."""
    asyncio.run(write_commits(data_dir, "g", DAMAGED, 90, CONFIG))
    asyncio.run(write_commits(data_dir, "h", HEALTHY, 5, CONFIG))
    batches = []
    for path in segments(data_dir):
        for batch in codec.read_segment(path):
            records = [(r.offset, r.key, r.value) for r in codec.decode_records(
                path.read_bytes()[batch.position : batch.position + batch.size], partition=DAMAGED)]
            batches.append(Batch(path.name, batch.position, batch.position + batch.size, records))
    if not clean:
        (data_dir / CLEAN_SHUTDOWN_FILE).unlink()
        OffsetCheckpoint(data_dir / RECOVERY_POINT_FILE).update(DAMAGED, int(segments(data_dir)[-1].name[:20]))
    return batches


def segments(data_dir: Path) -> list[Path]:
    return sorted((data_dir / f"__consumer_offsets-{DAMAGED}").glob("*.log"))


def damage(data_dir: Path, kind: str, active: bool, rng: random.Random | None = None) -> dict[str, list[tuple[int, int]]]:
    """Damage a rolled (the second) or the active segment of DAMAGED; returns the damaged byte
    range of each segment touched, in its original coordinates."""
    files = segments(data_dir)
    path = files[-1] if active else files[1]
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    if kind == "bit flip":
        data[middle] ^= 0x40
        touched = (middle, middle + 1)
    elif kind == "zeroed range":
        data[middle : middle + 100] = bytes(100)
        touched = (middle, middle + 100)
    elif kind == "truncated middle":
        del data[middle : middle + 50]
        touched = (middle, middle + 50)
    elif kind == "garbage appended":
        data += (rng or random.Random(1)).randbytes(100)
        touched = (len(data), len(data))  # no batch lies there
    elif kind == "segment missing":
        path.unlink()
        return {path.name: [(0, len(data))]}
    elif kind == "index disagrees":
        path.with_suffix(".index").write_bytes(b"\x00\x00\x00\x05\x00\x00\x00\x07" * 3)
        return {}
    path.write_bytes(bytes(data))
    return {path.name: [touched]}


def surviving(batches: list[Batch], damaged: dict[str, list[tuple[int, int]]]) -> list[Record]:
    """The records of every batch outside the damaged bytes, in log order."""
    def hit(batch: Batch) -> bool:
        return any(start < batch.end and batch.start < end for start, end in damaged.get(batch.segment, []))
    return [r for b in batches if not hit(b) for r in b.records]


def refused_expected(kind: str, active: bool, clean: bool) -> bool:
    if kind == "index disagrees":
        return False
    # Garbage after the last batch of the active segment, after a crash: a torn tail.
    return not (kind == "garbage appended" and active and not clean)


def records_of(chunks: Any) -> list[Record]:
    return [(r.offset, r.key, r.value) for chunk in chunks for r in chunk]


def inspect_directory(data_dir: Path) -> tuple[set[int], list[Record]]:
    """What ``inspect`` refuses, and the records it reads of DAMAGED otherwise."""
    refused: dict[int, LogDamagedError] = {}
    inspect.load(data_dir, CONFIG, damaged=refused)
    if DAMAGED in refused:
        return set(refused), []
    directory = data_dir / f"__consumer_offsets-{DAMAGED}"
    return set(refused), records_of(read_directory(directory, state=recovery_state(data_dir, DAMAGED)))


def serve(data_dir: Path) -> tuple[set[int], str | None, list[Record]]:
    """Load both partitions as the server does: the offline ones, the reason for DAMAGED, and
    its records when it loaded."""
    async def main() -> tuple[set[int], str | None, list[Record]]:
        manager = LogManager(data_dir, CONFIG)
        await manager.start()
        runtime = CoordinatorRuntime(CONFIG, manager, damaged_poll_s=60.0)
        try:
            await runtime.start([DAMAGED, HEALTHY])
            await runtime.wait_loaded()
            assert HEALTHY in runtime.owned_partitions(), "the other partition serves"
            offline = runtime.offline_partitions()
            reason = runtime.offline_reason(DAMAGED)
            records = [] if offline else records_of(await asyncio.to_thread(lambda: list(manager.read(DAMAGED))))
            return offline, reason, records
        finally:
            await runtime.close()
            await manager.close()

    return asyncio.run(asyncio.wait_for(main(), 60))


def repair_directory(data_dir: Path, *, dry_run: bool = False) -> tuple[int, str]:
    out = io.StringIO()
    status = repair.main(str(data_dir), CONFIG, dry_run=dry_run, out=out)
    return status, out.getvalue()


def check(data_dir: Path, batches: list[Batch], damaged: dict[str, list[tuple[int, int]]], refused: bool | None) -> None:
    """``refused``: whether the policy must refuse DAMAGED (None: either, as inspect says)."""
    expected = surviving(batches, damaged)
    in_order = [r for b in batches for r in b.records]
    original = set(in_order)
    damaged_records = len(original) - len(expected)

    def agrees(records: list[Record]) -> None:
        # A damaged batch may still load (a flip in a field no check covers): only what lies
        # outside the damage must all be there, in log order.
        kept = [r for r in records if r in original]
        assert set(expected) <= set(kept), "a batch outside the damaged bytes was lost"
        assert kept == [r for r in in_order if r in set(kept)], "records reordered"
        assert len(records) - len(kept) <= damaged_records

    inspected_refused, inspected = inspect_directory(data_dir)
    if refused is None:
        refused = DAMAGED in inspected_refused
    assert inspected_refused == ({DAMAGED} if refused else set())
    offline, reason, served = serve(data_dir)
    assert offline == ({DAMAGED} if refused else set()), "serve and inspect refuse the same"
    if refused:
        assert reason is not None and "__consumer_offsets-0" in reason and "byte" in reason
        before = {p: p.read_bytes() for p in segments(data_dir)}
        status, report = repair_directory(data_dir, dry_run=True)
        assert status == 3 and "damaged ranges" in report
        assert {p: p.read_bytes() for p in segments(data_dir)} == before, "--dry-run changes nothing"
        status, report = repair_directory(data_dir)
        assert status == 0 and "repaired" in report, report
        assert any((data_dir).glob("repair-backup-*/__consumer_offsets-0/*.log")), "originals kept"
        offline, reason, served = serve(data_dir)
        assert offline == set() and reason is None
        assert inspect_directory(data_dir) == (set(), served)
        assert repair_directory(data_dir)[0] == 0
    else:
        assert inspected == served
    agrees(served)


# Every kind in a rolled and in the active segment, except a missing active segment: the
# active segment is the last, so none follows it to be missing between.
CASES = [(kind, active) for kind in KINDS for active in (False, True)
         if not (kind == "segment missing" and active)]


@pytest.mark.parametrize("clean", [True, False], ids=["clean", "unclean"])
@pytest.mark.parametrize(("kind", "active"), CASES,
                         ids=[f"{kind}-{'active' if active else 'rolled'}" for kind, active in CASES])
def test_each_kind_of_damage(tmp_path: Path, kind: str, active: bool, clean: bool) -> None:
    batches = build(tmp_path, clean)
    damaged = damage(tmp_path, kind, active)
    check(tmp_path, batches, damaged, refused_expected(kind, active, clean))


def test_the_skip_setting_loads_every_valid_batch_and_keeps_the_original(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    batches = build(tmp_path, clean=True)
    damaged = damage(tmp_path, "zeroed range", active=False)
    original = segments(tmp_path)[1].read_bytes()
    skipping = CONFIG.with_overrides({"log.recovery.skip.damaged.batches.enable": "true"})
    refused: dict[int, LogDamagedError] = {}
    inspect.load(tmp_path, skipping, damaged=refused)
    assert refused == {}

    async def main() -> list[Record]:
        manager = LogManager(tmp_path, skipping)
        await manager.start()
        await manager.open_partition(DAMAGED)
        records = records_of(await asyncio.to_thread(lambda: list(manager.read(DAMAGED))))
        await manager.close()
        return records

    with caplog.at_level("ERROR", logger="groupcoord.storage"):
        records = asyncio.run(main())
    assert records == surviving(batches, damaged)
    [backup] = tmp_path.glob("repair-backup-*/__consumer_offsets-0/*.log")
    assert backup.read_bytes() == original
    assert "skipping damaged bytes" in caplog.text and "missing" in caplog.text


def test_a_missing_segment_in_the_cleaned_section_is_no_damage(tmp_path: Path) -> None:
    """Below the cleaner checkpoint segments may have been compacted, so an offset gap between
    two of them is normal there (Kafka's cleaner leaves them)."""
    batches = build(tmp_path, clean=True)
    damaged = damage(tmp_path, "segment missing", active=False)
    OffsetCheckpoint(tmp_path / "cleaner-offset-checkpoint").update(DAMAGED, 60)
    check(tmp_path, batches, damaged, refused=False)
    # Repairing other damage leaves such a gap alone: the segment before it is not rewritten.
    before_gap = segments(tmp_path)[0]
    intact = before_gap.read_bytes()
    damaged[segments(tmp_path)[-1].name] = damage(tmp_path, "bit flip", active=True)[segments(tmp_path)[-1].name]
    check(tmp_path, batches, damaged, refused=True)
    assert before_gap.read_bytes() == intact
    assert not list(tmp_path.glob(f"repair-backup-*/*/{before_gap.name}"))


@pytest.mark.parametrize("seed", range(20))
def test_random_damage(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    clean = rng.random() < 0.5
    batches = build(tmp_path, clean)
    files = segments(tmp_path)
    path = rng.choice(files)
    data = bytearray(path.read_bytes())
    how = rng.choice(["flips", "zeroes", "cut", "garbage"])
    if how == "flips":
        positions = [rng.randrange(len(data)) for _ in range(rng.randint(1, 4))]
        for p in positions:
            data[p] ^= 1 << rng.randrange(8)
        touched = [(p, p + 1) for p in positions]
    elif how == "zeroes":
        start = rng.randrange(len(data))
        end = min(len(data), start + rng.randint(1, 300))
        data[start:end] = bytes(end - start)
        touched = [(start, end)]
    elif how == "cut":
        start = rng.randrange(len(data))
        end = min(len(data), start + rng.randint(1, 300))
        del data[start:end]
        touched = [(start, end)]
    else:
        data += rng.randbytes(rng.randint(1, 300))
        touched = []
    path.write_bytes(bytes(data))
    check(tmp_path, batches, {path.name: touched}, refused=None)


def test_repair_refuses_a_directory_a_live_server_holds(tmp_path: Path) -> None:
    build(tmp_path, clean=True)
    damage(tmp_path, "bit flip", active=False)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from groupcoord.storage.lock import DataDirLock; "
         f"DataDirLock({str(tmp_path)!r}).acquire(); print('locked', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        before = {p: p.read_bytes() for p in segments(tmp_path)}
        result = subprocess.run([sys.executable, "-m", "groupcoord.cli", "repair", str(tmp_path)],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 1 and "is in use" in result.stderr and "Traceback" not in result.stderr
        assert {p: p.read_bytes() for p in segments(tmp_path)} == before
    finally:
        holder.communicate("", timeout=30)
    assert repair_directory(tmp_path)[0] == 0


@pytest.mark.parametrize("active", [False, True], ids=["rolled", "active"])
def test_the_spark_source_reads_the_same_valid_batches(spark: Any, tmp_path: Path, active: bool) -> None:
    """PERMISSIVE (the default): every batch outside the damaged bytes is a row, in order, the
    damage reported in ``_corrupt_record``; what repair keeps is what Spark read."""
    for kind in KINDS:
        if kind == "segment missing" and active:
            continue
        data_dir = tmp_path / kind.replace(" ", "-")
        batches = build(data_dir, clean=True)
        damaged = damage(data_dir, kind, active)
        expected = surviving(batches, damaged)
        original = {r[0]: r for b in batches for r in b.records}
        rows = [r.asDict(recursive=True) for r in spark.read.format("consumer_offsets")
                .load(str(data_dir / f"__consumer_offsets-{DAMAGED}")).orderBy("offset").collect()]
        good = [r["offset"] for r in rows if r["_corrupt_record"] is None]
        assert {r[0] for r in expected} <= set(good), kind
        # A flip in a base offset (no CRC covers it) can leave a batch readable at a wrong
        # offset: only the damaged batches may differ.
        assert len(set(good) - set(original)) <= len(original) - len(expected), kind
        if refused_expected(kind, active, clean=True):
            assert repair_directory(data_dir)[0] == 0
            repaired = [r for r in records_of(read_directory(data_dir / f"__consumer_offsets-{DAMAGED}"))]
            assert [r[0] for r in repaired if r[0] in original] == [o for o in good if o in original], kind


def test_the_cleaner_gives_up_a_log_damaged_since_it_was_opened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Damage found by a cleaning pass (the file changed under the open log) is not retried
    every pass: one ERROR line naming the repair command, and that log is left alone."""
    from groupcoord.storage import LogCleaner, PartitionLog

    build(tmp_path, clean=True)
    directory = tmp_path / f"__consumer_offsets-{DAMAGED}"
    log = PartitionLog.open(directory, CONFIG)
    damage(tmp_path, "bit flip", active=False)
    cleaner = LogCleaner(CONFIG.with_overrides({"log.cleaner.min.cleanable.ratio": "0.01"}), logs=lambda: [log],
                         checkpoint=OffsetCheckpoint(tmp_path / "cleaner-offset-checkpoint"))
    with caplog.at_level("ERROR", logger="groupcoord.storage"):
        assert not cleaner.clean_filthiest()
        assert not cleaner.clean_filthiest()
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "groupcoord repair DATA_DIR --partition 0" in errors[0].getMessage()
    log.close()
