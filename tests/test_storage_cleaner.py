"""The log cleaner: Kafka's compaction rules, and that a cleaned log — or one whose cleaning
was interrupted at any step — replays to the same state as the uncleaned one."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from offsets_workload import records_count, replay, workload

from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.format.replay_rules import logical_key_bytes
from groupcoord.storage import LogCleaner, PartitionLog, read_directory
from groupcoord.storage.checkpoint import CLEANER_OFFSET_FILE, OffsetCheckpoint
from groupcoord.storage.segment import walk_batches

NOW = 1_800_000_000_000
RETENTION = 60_000


def config(**overrides: object) -> Config:
    base = {
        "log.cleaner.enable": "false",
        "offsets.topic.segment.bytes": "2000",
        "log.index.interval.bytes": "256",
        "log.cleaner.delete.retention.ms": str(RETENTION),
    }
    return Config().with_overrides({**base, **overrides})


def commit(group: str, partition: int, offset: int, record_type: int = 1) -> tuple[bytes, bytes]:
    key = codec.OffsetCommitKey(group, "t", partition, record_type)
    version = 0 if record_type == 0 else 3
    return codec.encode_key(key), codec.encode_value(codec.OffsetCommitValue(offset, "", 5, version=version))


def tombstone(group: str, partition: int, record_type: int = 1) -> tuple[bytes, None]:
    return codec.encode_key(codec.OffsetCommitKey(group, "t", partition, record_type)), None


class Fixture:
    def __init__(self, tmp_path: Path, cfg: Config) -> None:
        self.directory = tmp_path / "__consumer_offsets-5"
        self.cfg = cfg
        self.log = PartitionLog.open(self.directory, cfg)
        self.checkpoint = OffsetCheckpoint(tmp_path / CLEANER_OFFSET_FILE)
        self.cleaner = LogCleaner(cfg, logs=lambda: [self.log], checkpoint=self.checkpoint, clock_ms=lambda: NOW)

    def append(self, records: list[tuple[bytes, bytes | None]], **kw: Any) -> None:
        batch = codec.write_batch(records, base_offset=self.log.next_offset, timestamp=1000, **kw)
        self.log.append(batch, self.log.next_offset + len(records) - 1, len(records))

    def marker(self, producer_id: int, commit: bool) -> None:
        batch = codec.write_control_batch(
            base_offset=self.log.next_offset, timestamp=1000, producer_id=producer_id, producer_epoch=0, commit=commit
        )
        self.log.append(batch, self.log.next_offset, 1)

    def roll(self) -> None:
        self.log.roll()

    def records(self) -> list[codec.OffsetsRecord]:
        return [r for chunk in self.log.read() for r in chunk]

    def batches(self) -> list[codec.RecordBatch]:
        return [b for s in self.log.segments for b in codec.read_segment(s.path)]


def test_latest_value_per_key_is_kept_and_offsets_are_preserved(tmp_path: Path) -> None:
    f = Fixture(tmp_path, config())
    for round_ in range(30):
        f.append([commit("g", p, round_ * 10 + p) for p in range(5)])
    f.roll()
    f.append([commit("g", 0, 1000)])
    before = f.records()
    result = f.cleaner.clean(f.log, NOW)
    assert result is not None and result.records_removed == 145
    after = f.records()
    assert [r.offset for r in after] == [145, 146, 147, 148, 149, 150]
    assert {r.offset: r.value for r in after} == {r.offset: r.value for r in before if r.offset >= 145}
    assert replay(after) == replay(before)
    assert f.checkpoint.get(5) == f.log.active.base_offset
    batches = f.batches()
    assert [b.last_offset for b in batches if b.records][0] == 149, "a cleaned batch keeps its last offset"
    assert all(b.records or b.last_offset + 1 == s.next_offset for b, s in zip(batches, f.log.segments)), (
        "an empty batch only keeps a cleaned segment's last offset"
    )
    assert f.cleaner.clean(f.log, NOW) is None or replay(f.records()) == replay(before)
    f.log.close()


def test_the_active_segment_is_never_cleaned(tmp_path: Path) -> None:
    f = Fixture(tmp_path, config(**{"offsets.topic.segment.bytes": "1000000"}))
    for i in range(50):
        f.append([commit("g", 0, i)])
    assert f.cleaner.clean(f.log, NOW) is None
    assert len(f.records()) == 50
    f.log.close()


def test_tombstones_get_a_delete_horizon_then_go(tmp_path: Path) -> None:
    f = Fixture(tmp_path, config())
    f.append([commit("g", 0, 1), commit("g", 1, 2)])
    f.append([tombstone("g", 0)])
    f.roll()
    f.append([commit("g", 2, 3)])
    f.cleaner.clean(f.log, NOW)
    tombstone_batch = next(b for b in f.batches() if any(r.value is None for r in b.records))
    raw = f.log.segments[0].path.read_bytes()[tombstone_batch.position:]
    assert raw[22] & 0x40, "the cleaner stamps the delete horizon (attribute bit 6)"
    assert tombstone_batch.base_timestamp == NOW + RETENTION
    assert [r.timestamp for r in tombstone_batch.records] == [1000], "record timestamps survive"
    assert f.log.earliest_delete_horizon_ms == NOW + RETENTION
    state = replay(f.records())
    f.cleaner.clean(f.log, NOW + RETENTION - 1)
    assert any(r.value is None for r in f.records())
    f.cleaner.clean_filthiest()  # the horizon is not due at NOW: nothing to do
    assert any(r.value is None for r in f.records())
    f.cleaner.clock_ms = lambda: NOW + RETENTION
    assert f.cleaner.clean_filthiest(), "a due delete horizon makes the log cleanable"
    assert not any(r.value is None for r in f.records())
    assert replay(f.records()) == state
    f.log.close()


def test_a_type_0_commit_does_not_outlive_its_type_1_tombstone(tmp_path: Path) -> None:
    """Raw-byte keys would keep the old type-0 record once the tombstone is gone."""
    assert logical_key_bytes(commit("g", 0, 1, record_type=0)[0]) == logical_key_bytes(commit("g", 0, 1)[0])
    f = Fixture(tmp_path, config())
    f.append([commit("g", 0, 1, record_type=0), commit("g", 1, 1, record_type=0)])
    f.append([tombstone("g", 0)])
    f.roll()
    f.append([commit("g", 9, 1)])
    state = replay(f.records())
    assert ("offset", "g", "t", 0) not in state
    f.cleaner.clean(f.log, NOW)
    f.cleaner.clean(f.log, NOW + RETENTION)
    records = f.records()
    assert [(r.key, r.value is None) for r in records if r.offset < 3] == [
        (codec.OffsetCommitKey("g", "t", 1, 0), False)
    ]
    assert replay(records) == state
    f.log.close()


def test_transactions_aborted_data_goes_markers_stay_while_their_data_does(tmp_path: Path) -> None:
    f = Fixture(tmp_path, config())
    f.append([commit("g", 0, 1)], producer_id=7, producer_epoch=0, is_transactional=True)    # 0 committed
    f.append([commit("g", 1, 2)], producer_id=8, producer_epoch=0, is_transactional=True)    # 1 aborted
    f.marker(7, commit=True)                                                                   # 2
    f.marker(8, commit=False)                                                                  # 3
    f.append([commit("g", 2, 3)], producer_id=9, producer_epoch=0, is_transactional=True)    # 4 committed later
    f.roll()
    f.append([commit("h", 0, 4)])                                                              # 5
    f.marker(9, commit=True)                                                                   # 6, in the active segment
    state = replay(f.records())
    assert set(state) == {("offset", "g", "t", 0), ("offset", "g", "t", 2), ("offset", "h", "t", 0)}
    f.cleaner.clean(f.log, NOW)
    assert [r.offset for r in f.records()] == [0, 2, 3, 4, 5, 6], "aborted data removed"
    assert replay(f.records()) == state
    f.append([commit("g", 0, 10)])                                                             # supersedes offset 0
    f.roll()
    f.append([commit("h", 1, 5)])
    f.cleaner.clean(f.log, NOW)
    assert [r.offset for r in f.records()] == [2, 3, 4, 5, 6, 7, 8]
    f.cleaner.clean(f.log, NOW + RETENTION)
    assert [r.offset for r in f.records()] == [4, 5, 6, 7, 8], "markers without data go after the horizon"
    assert replay(f.records()) == replay(f.records()) and replay(f.records())[("offset", "g", "t", 0)].offset == 10
    f.log.close()


def test_a_non_transactional_batch_with_a_producer_id_counts_once_its_marker_commits(tmp_path: Path) -> None:
    """Kafka 4's coordinator holds such a batch pending until its producer's marker: until a
    COMMIT it replaces nothing, and its marker stays while it does."""
    f = Fixture(tmp_path, config())
    f.append([commit("g", 0, 1)])                                      # 0 replaced by 1
    f.append([commit("g", 0, 2)], producer_id=7, producer_epoch=0)    # 1 committed at 3
    f.append([commit("g", 1, 3)])                                      # 2
    f.marker(7, commit=True)                                           # 3
    f.append([commit("g", 1, 4)], producer_id=8, producer_epoch=0)    # 4 aborted at 5
    f.marker(8, commit=False)                                          # 5
    f.append([commit("g", 1, 5)], producer_id=9, producer_epoch=0)    # 6 never ended
    f.roll()
    f.append([commit("h", 0, 1)])                                      # 7
    state = replay(f.records())
    assert {k: v.offset for k, v in state.items()} == {
        ("offset", "g", "t", 0): 2, ("offset", "g", "t", 1): 3, ("offset", "h", "t", 0): 1,
    }
    f.cleaner.clean(f.log, NOW)
    f.cleaner.clean(f.log, NOW + RETENTION)
    assert [r.offset for r in f.records()] == [1, 2, 3, 4, 5, 6, 7]
    assert replay(f.records()) == state
    f.log.close()


def test_tombstones_and_group_records_of_a_batch_with_a_producer_id_apply_at_once(tmp_path: Path) -> None:
    """Replay holds only offset commits with a value pending (``replay_rules.pending_mask``): a
    tombstone or a group metadata record applies at once whatever its batch. The cleaner left
    them out of its map until a COMMIT and dropped them with an aborted transaction, so a
    tombstone of an idempotent batch went at its horizon while the value it deleted stayed,
    and an aborted group record took the group back to its older metadata. Neither Kafka nor
    groupcoord writes such batches; a log that holds them still cleans to its own state."""
    def group(generation: int) -> tuple[bytes, bytes]:
        return codec.encode_key(codec.GroupMetadataKey("g")), codec.encode_value(
            codec.GroupMetadataValue("consumer", generation, "range", None, NOW, [])
        )

    f = Fixture(tmp_path, config())
    f.append([commit("g", 0, 1)])                                                     # 0
    f.append([tombstone("g", 0)], producer_id=7, producer_epoch=0)                    # 1 no marker ever
    f.append([group(1)])                                                              # 2
    f.append([group(2), commit("g", 1, 5)], producer_id=8, producer_epoch=0, is_transactional=True)  # 3-4
    f.marker(8, commit=False)                                                         # 5
    f.roll()
    f.append([commit("h", 0, 1)])
    state = replay(f.records())
    assert ("offset", "g", "t", 0) not in state and state[("group", "g")].generation == 2
    assert ("offset", "g", "t", 1) not in state
    for step in range(4):
        f.cleaner.clean(f.log, NOW + step * RETENTION)
        assert replay(f.records()) == state, f"pass {step}"
    assert [r.offset for r in f.records()] == [3, 5, 6], "the tombstone went with its value; the aborted commit went"
    f.log.close()


def test_a_commit_waiting_for_its_marker_stays_pending_in_the_cleaned_log(tmp_path: Path) -> None:
    """An idempotent batch (a producer id, not transactional) is cleaned before its marker
    comes, and the coordinator holds its commit pending until then even once a later record
    replaced it: a stable fetch of the partition is unstable, and the group exists while the
    commit is pending. The cleaner dropped such a commit as replaced, so the cleaned log
    loaded with the group gone (a tombstone after the commit) or the fetch stable (a commit
    after it). Now the commit, and a tombstone after it, stay until the marker; the pass
    after the marker removes them as it would have."""
    from replayed_state import load

    from groupcoord.coordinator.results import TopicPartition

    def loaded(records: list[codec.OffsetsRecord]) -> tuple[list[str], bool, bool, Any]:
        manager = load({5: records}).manager
        # Groups holding offsets, committed or in an open transaction. Kafka 4 also loads a
        # group its commits made once they are all gone (Empty, until the expiration check or
        # the cleaner removes its records): left out, as replayed_state's views leave it out.
        groups = sorted(g.group_id for g in manager.current_groups() if manager.offsets.has_offsets(g.group_id))
        pending = [manager.offsets.has_pending(g, TopicPartition("t", 0)) for g in ("a", "b")]
        return groups, pending[0], pending[1], replay(records)

    f = Fixture(tmp_path, config())
    f.append([commit("a", 0, 1)])                                   # 0 replaced by 1
    f.append([commit("a", 0, 2)], producer_id=7, producer_epoch=0)  # 1 waits for its marker
    f.append([tombstone("a", 0)])                                   # 2 removes it from the pending ones
    f.append([commit("b", 0, 3)], producer_id=8, producer_epoch=0)  # 3 waits for its marker
    f.append([commit("b", 0, 4)])                                   # 4 replaces it in the committed ones
    f.roll()
    f.append([commit("h", 0, 1)])
    state = loaded(f.records())
    assert state[:3] == (["a", "b", "h"], False, True)
    for step in range(3):
        f.cleaner.clean(f.log, NOW + step * RETENTION)
        assert loaded(f.records()) == state, f"pass {step}"
    assert [r.offset for r in f.records()] == [1, 2, 3, 4, 5]
    f.marker(7, commit=True)
    f.marker(8, commit=True)
    f.roll()
    f.append([commit("h", 1, 1)])
    state = loaded(f.records())
    assert state[:3] == (["b", "h"], False, False)
    for step in range(3, 6):
        f.cleaner.clean(f.log, NOW + step * RETENTION)
        assert loaded(f.records()) == state, f"pass {step}"
    assert [r.offset for r in f.records()] == [4, 5, 8], "once ended, replaced commits and the tombstone went"
    f.log.close()


def test_an_open_transaction_bounds_the_cleanable_section(tmp_path: Path) -> None:
    f = Fixture(tmp_path, config())
    f.append([commit("g", 0, 1)])
    f.roll()
    f.append([commit("g", 1, 2)], producer_id=7, producer_epoch=0, is_transactional=True)   # open at the end
    f.append([commit("g", 0, 3)])
    f.roll()
    f.append([commit("g", 0, 4)])
    f.roll()
    f.append([commit("g", 5, 5)])
    f.cleaner.clean(f.log, NOW)
    assert [r.offset for r in f.records()] == [0, 1, 2, 3, 4], "nothing at or after the open transaction"
    f.marker(7, commit=True)
    f.roll()
    f.append([commit("g", 6, 6)])
    f.cleaner.clean(f.log, NOW)
    assert [r.offset for r in f.records()] == [1, 3, 4, 5, 6]
    f.log.close()


def test_a_small_key_map_cleans_in_several_passes_to_the_same_state(tmp_path: Path) -> None:
    f = Fixture(tmp_path, config(**{"log.cleaner.dedupe.buffer.size": "1024"}))  # 38 keys
    assert f.cleaner.map_capacity == 38
    for i in range(400):
        f.append([commit("g", i % 120, i)])
    f.roll()
    f.append([commit("x", 0, 0)])
    state = replay(f.records())
    checkpoints: list[int] = []
    while not checkpoints or checkpoints[-1] < f.log.active.base_offset:
        assert len(checkpoints) < 20
        f.cleaner.clean(f.log, NOW)
        checkpoints.append(f.checkpoint.get(5) or 0)
        assert replay(f.records()) == state
    assert checkpoints == sorted(set(checkpoints)) and len(checkpoints) >= 400 // 38
    assert len(f.records()) == 121
    f.log.close()


def test_a_tombstone_past_a_full_key_map_stays_until_a_pass_maps_it(tmp_path: Path) -> None:
    """Found by a crash-consistency run: a tombstone beyond the last key a full map holds was
    stamped by one pass and dropped by the next, before any pass had removed the older value of
    its key, so the deleted offset came back. Past the map every record is kept (Kafka's
    ``pastLatestOffset``), tombstones included, whatever their horizon."""
    f = Fixture(tmp_path, config(**{"log.cleaner.dedupe.buffer.size": "1024", "offsets.topic.segment.bytes": "1000000"}))
    f.append([commit("victim", 0, 42)])
    f.roll()
    for i in range(100):
        f.append([commit(f"filler-{i}", 0, i)])
    f.append([tombstone("victim", 0)])
    f.roll()
    f.append([commit("filler-0", 0, 1000)])
    state = replay(f.records())
    for step in range(6):
        f.cleaner.clean(f.log, NOW + step * RETENTION)
        assert replay(f.records()) == state, f"pass {step}"
    assert not any(r.key.group == "victim" for r in f.records()), "the tombstone went with the value, in time"
    f.log.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_log_compacted_with_a_small_key_map_replays_to_the_uncompacted_state(tmp_path: Path, seed: int) -> None:
    """Commits and deletions over five times as many keys as one pass maps, in segments of
    about a hundred records (so most passes end inside a segment), the clock past every
    delete horizon at each pass."""
    rng = random.Random(seed)
    f = Fixture(tmp_path, config(**{"log.cleaner.dedupe.buffer.size": "1024", "offsets.topic.segment.bytes": "1000000"}))
    for n in range(1500):
        group, partition = f"g{rng.randrange(10)}", rng.randrange(20)
        f.append([tombstone(group, partition) if rng.random() < 0.2 else commit(group, partition, n)])
        if rng.random() < 0.01:
            f.roll()
    f.roll()
    f.append([commit("x", 0, 0)])
    state = replay(f.records())
    checkpoints = [0]
    while checkpoints[-1] < f.log.active.base_offset:
        assert len(checkpoints) < 200
        f.cleaner.clean(f.log, NOW + len(checkpoints) * RETENTION)
        assert replay(f.records()) == state, f"pass {len(checkpoints)}"
        checkpoints.append(f.checkpoint.get(5) or 0)
    for step in range(3):
        f.cleaner.clean(f.log, NOW + (len(checkpoints) + step) * RETENTION)
        assert replay(f.records()) == state
    assert len(checkpoints) > 10 and not any(r.value is None for r in f.records()), "every tombstone went in time"
    f.log.close()


def test_legacy_batches_are_cleaned_like_the_rest(tmp_path: Path) -> None:
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    f = Fixture(tmp_path, config())
    builder = LegacyRecordBatchBuilder(1, 1, 1 << 20)
    for i, (key, value) in enumerate([commit("g", 0, 1, 0), commit("g", 1, 2, 0), commit("g", 2, 3, 0)]):
        builder.append(i, 1_500_000_000_000, key, value)
    wrapper = bytearray(builder.build())
    wrapper[0:8] = (2).to_bytes(8, "big")
    f.log.append(bytes(wrapper), 2, 3)
    f.append([commit("g", 1, 20)])
    f.roll()
    f.append([commit("g", 7, 1)])
    state = replay(f.records())
    f.cleaner.clean(f.log, NOW)
    records = f.records()
    assert [r.offset for r in records] == [0, 2, 3, 4]
    assert replay(records) == state
    assert f.batches()[0].magic == 2, "a legacy wrapper that lost records is rewritten as v2"
    f.log.close()


def workload_log(tmp_path: Path, seed: int, count: int, cfg: Config) -> Fixture:
    f = Fixture(tmp_path, cfg)
    for append in workload(seed, count):
        if append.control is not None:
            f.marker(append.producer_id, append.control == "commit")
        else:
            f.append(list(append.records), producer_id=append.producer_id, producer_epoch=append.producer_epoch,
                     is_transactional=append.transactional)
        assert records_count(append) > 0
    return f


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_compacted_log_replays_to_the_uncompacted_state(tmp_path: Path, seed: int) -> None:
    f = workload_log(tmp_path, seed, 1500, config())
    state = replay(f.records())
    size = f.log.size
    for step in range(4):
        f.cleaner.clean(f.log, NOW + step * RETENTION)
        assert replay(f.records()) == state, f"pass {step}"
        assert replay(r for chunk in read_directory(f.directory) for r in chunk) == state
    assert f.log.size < size / 3
    f.log.close()
    reopened = PartitionLog.open(f.directory, f.cfg, recovery_point=None)
    assert replay(r for chunk in reopened.read() for r in chunk) == state
    reopened.close()


class Crash(Exception):
    pass


def crash_at(monkeypatch: pytest.MonkeyPatch, name: str, target: Callable[..., Any], n: int) -> list[int]:
    calls = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == n:
            raise Crash(f"{name} #{n}")
        return target(*args, **kwargs)

    monkeypatch.setattr(os, name, wrapper)
    return calls


def steps_to_try(total: int, most: int = 24) -> list[int]:
    """Every step of a short sequence; of a long one the first and last few and a spread."""
    if total <= most:
        return list(range(1, total + 1))
    spread = range(1, total + 1, max(1, total // (most // 2)))
    return sorted({*range(1, 5), *range(total - 7, total + 1), *spread})


@pytest.mark.slow
@pytest.mark.parametrize("operation", ["replace", "unlink", "write", "fsync"])
def test_a_cleaning_interrupted_at_any_step_recovers_to_the_same_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    """Each file operation of a cleaning pass, in turn, is where the process "dies" (every one
    for renames, deletions and fsyncs; a spread of the many writes): the directory is then
    read as the crash left it, reopened (recovery) and read again."""
    original = workload_log(tmp_path / "original", 7, 400, config())
    original.log.close()
    state = replay(r for chunk in read_directory(original.directory) for r in chunk)
    real = getattr(os, operation)

    dry = tmp_path / "dry"
    shutil.copytree(original.directory.parent, dry)
    f = Fixture(dry, config())
    calls = crash_at(monkeypatch, operation, real, 0)
    f.cleaner.clean(f.log, NOW)
    monkeypatch.setattr(os, operation, real)
    f.log.close()
    total = calls[0]
    assert total > 3, f"a cleaning makes several {operation} calls"

    for n in steps_to_try(total):
        case = tmp_path / f"{operation}-{n}"
        shutil.copytree(original.directory.parent, case)
        f = Fixture(case, config())
        crash_at(monkeypatch, operation, real, n)
        try:
            with pytest.raises(Crash):
                f.cleaner.clean(f.log, NOW)
        finally:
            monkeypatch.setattr(os, operation, real)
        assert replay(r for chunk in read_directory(f.directory) for r in chunk) == state, f"{operation} #{n}"
        for segment in f.log.segments:
            segment.close()
        recovered = PartitionLog.open(f.directory, f.cfg, recovery_point=None)
        assert replay(r for chunk in recovered.read() for r in chunk) == state, f"{operation} #{n}"
        assert not [p for p in f.directory.iterdir() if p.suffix in (".cleaned", ".swap", ".deleted")]
        recovered.close()
        shutil.rmtree(case)


def test_every_batch_written_by_the_cleaner_is_whole(tmp_path: Path) -> None:
    f = workload_log(tmp_path, 11, 800, config())
    f.cleaner.clean(f.log, NOW)
    for segment in f.log.segments:
        data = segment.path.read_bytes()
        assert codec.valid_prefix_length(data) == len(data)
        assert sum(b.size for b in walk_batches(data)) == len(data)
    f.log.close()


@pytest.mark.slow
def test_a_cleaning_pass_holds_one_chunk_of_a_segment_not_all_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found in a soak: every pass read the whole segment into a list, so memory grew by the
    # segment size (100 MB by default). Kafka's cleaner reads through fixed I/O buffers.
    import tracemalloc

    from groupcoord.storage import cleaner

    monkeypatch.setattr(cleaner, "_READ_BUFFER", 64 << 10)
    f = Fixture(tmp_path, config(**{"offsets.topic.segment.bytes": str(64 << 20)}))
    while f.log.active.size < 4 << 20:
        f.append([commit("g", p, f.log.next_offset) for p in range(50)])
    f.roll()
    f.append([commit("g", 0, 1)])
    tracemalloc.start()
    try:
        result = f.cleaner.clean(f.log, NOW)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result is not None and result.records_removed > 50_000
    assert peak < 1 << 20, f"a pass over a 4 MB segment peaked at {peak / 1e6:.1f} MB"
    f.log.close()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24))
def test_a_randomized_log_replays_to_the_same_state_after_every_pass_and_crash(tmp_path: Path, seed: int) -> None:
    """The model of :mod:`cleaner_model`: commits, deletions and group metadata over more keys
    than one pass maps (type-0 and type-1 keys, legacy and compressed batches), transactions
    committed and aborted across passes, idempotent batches whose marker comes later or never,
    segments of 40 to 150 records, the clock jumping past delete horizons, passes interrupted
    at a file operation then recovered, restarts; every third seed also puts tombstones and
    group records in batches with a producer id. The log replays to the state of everything
    appended after every pass. ``python tests/cleaner_model.py N`` runs N seeds."""
    from cleaner_model import Flags, run

    model = run(seed, tmp_path, appends=1500, deadline_s=5, flags=Flags(exotic_pending=seed % 3 == 2))
    assert model.passes > 20
