"""Idempotent producers' state (Kafka's ProducerStateManager): the checks of a client's batch,
the loop-side validator with batches in flight, Kafka's snapshot files, rebuilding the state
at open, and expiry; then a model test against a plain reference of the rules."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord._native import write_batch
from groupcoord.errors import Errors
from groupcoord.storage.producer_append import BatchOutcome, ProducerAppendValidator, Verdict
from groupcoord.storage.producer_state import (
    INT32_MAX,
    NUM_BATCHES_TO_RETAIN,
    AppendOrigin,
    BatchMetadata,
    ProducerAppendInfo,
    ProducerBatch,
    ProducerStateEntry,
    ProducerStateManager,
    read_snapshot,
    rebuild_producer_state,
    segment_batches,
    snapshot_bytes,
)
from groupcoord.storage.segment import LogSegment

NONE = Errors.NONE
OUT_OF_ORDER = Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
FENCED = Errors.INVALID_PRODUCER_EPOCH


def batch(pid: int = 7, epoch: int = 0, seq: int = 0, count: int = 1, ts: int = 1000,
          base: int = 0) -> ProducerBatch:
    return ProducerBatch(base, base + count - 1, pid, epoch, seq, count - 1, ts)


class Partition:
    """A partition whose log is a counter: the validator in front, the manager behind, and
    the writer's side done by hand (:meth:`write`)."""

    def __init__(self, directory: Path, **kwargs: object) -> None:
        self.state = ProducerStateManager(directory, fsync=False, **kwargs)  # type: ignore[arg-type]
        self.validator = ProducerAppendValidator(self.state)
        self.log_end = 0
        self.in_flight: list[tuple[Verdict, list[ProducerBatch]]] = []
        self.written_at: dict[int, int] = {}
        """Base offsets by ``id`` of the accepted append."""

    def send(self, *batches: ProducerBatch) -> Verdict:
        verdict = self.validator.validate(batches)
        if verdict.accepted is not None:
            self.in_flight.append((verdict, list(batches)))
        return verdict

    def write(self) -> int:
        """Write the oldest append in flight, as the writer thread would, and tell the
        validator: its base offset."""
        verdict, batches = self.in_flight.pop(0)
        base = self.log_end
        for b in batches:
            placed = b._replace(base_offset=self.log_end, last_offset=self.log_end + b.last_offset_delta)
            self.state.update(placed)
            self.log_end = placed.last_offset + 1
        assert verdict.accepted is not None
        self.validator.written(verdict.accepted, base)
        self.written_at[id(verdict.accepted)] = base
        return base

    def produce(self, *batches: ProducerBatch) -> tuple[Errors, int | None]:
        """Send and write at once: (error, base offset), a duplicate's being the original's."""
        verdict = self.send(*batches)
        if verdict.error != NONE:
            return verdict.error, None
        if verdict.duplicate is not None:
            assert verdict.duplicate.done()
            return NONE, verdict.duplicate.base_offset
        return NONE, self.write()


@pytest.fixture
def partition(tmp_path: Path) -> Partition:
    return Partition(tmp_path)


# --- the rules --------------------------------------------------------------------------------


def test_an_unknown_producer_starts_at_any_sequence(partition: Partition) -> None:
    assert partition.produce(batch(pid=1, seq=0)) == (NONE, 0)
    assert partition.produce(batch(pid=2, seq=42, count=3)) == (NONE, 1)
    entry = partition.state.last_entry(2)
    assert entry is not None and (entry.producer_epoch, entry.first_seq, entry.last_seq) == (0, 42, 44)


def test_the_next_sequence_is_accepted_and_a_gap_or_a_step_back_refused(partition: Partition) -> None:
    assert partition.produce(batch(seq=0, count=2)) == (NONE, 0)
    assert partition.produce(batch(seq=2)) == (NONE, 2)
    assert partition.produce(batch(seq=4)) == (OUT_OF_ORDER, None)
    assert partition.produce(batch(seq=1, count=2)) == (OUT_OF_ORDER, None)
    assert partition.produce(batch(seq=3, count=5)) == (NONE, 3)


def test_an_older_epoch_is_fenced_before_anything_else(partition: Partition) -> None:
    partition.produce(batch(epoch=3, seq=0))
    assert partition.produce(batch(epoch=2, seq=1)) == (FENCED, None)
    assert partition.produce(batch(epoch=2, seq=0)) == (FENCED, None), "not a duplicate: another epoch"


def test_a_new_epoch_must_start_at_zero_and_clears_the_batches(partition: Partition) -> None:
    partition.produce(batch(epoch=0, seq=0))
    partition.produce(batch(epoch=0, seq=1))
    assert partition.produce(batch(epoch=1, seq=2)) == (OUT_OF_ORDER, None)
    assert partition.produce(batch(epoch=1, seq=0)) == (NONE, 2)
    entry = partition.state.last_entry(7)
    assert entry is not None and entry.producer_epoch == 1 and len(entry.batches) == 1
    assert partition.produce(batch(epoch=0, seq=1)) == (FENCED, None)


def test_a_duplicate_is_answered_with_the_original_offset_and_timestamp(partition: Partition) -> None:
    partition.produce(batch(seq=0, count=3, ts=111))
    partition.produce(batch(seq=3, ts=222))
    verdict = partition.send(batch(seq=0, count=3, ts=999))
    assert verdict.error == NONE and verdict.accepted is None
    assert verdict.duplicate is not None and verdict.duplicate.done()
    d = verdict.duplicate
    assert (d.base_offset, d.last_offset, d.timestamp) == (0, 2, 111)
    assert partition.log_end == 4, "a duplicate is not appended"


def test_only_the_exact_sequence_range_is_a_duplicate(partition: Partition) -> None:
    partition.produce(batch(seq=0, count=3))
    assert partition.produce(batch(seq=0, count=2)) == (OUT_OF_ORDER, None)
    assert partition.produce(batch(seq=1, count=2)) == (OUT_OF_ORDER, None)


def test_sequences_wrap_past_int_max_to_zero(partition: Partition) -> None:
    assert partition.produce(batch(seq=INT32_MAX - 1, count=2)) == (NONE, 0)
    assert partition.produce(batch(seq=0)) == (NONE, 2)
    # A batch spanning the wrap: its last sequence is 1, its first INT_MAX.
    p2 = batch(pid=8, seq=INT32_MAX, count=3)
    assert p2.last_sequence == 1
    assert partition.produce(p2) == (NONE, 3)
    assert partition.produce(batch(pid=8, seq=2)) == (NONE, 6)
    assert partition.produce(batch(pid=8, seq=INT32_MAX, count=3)) == (NONE, 3), "a duplicate"
    entry = partition.state.last_entry(8)
    assert entry is not None and entry.batches[0].first_seq == INT32_MAX


def test_only_the_last_five_batches_are_retained(partition: Partition) -> None:
    for seq in range(7):
        partition.produce(batch(seq=seq))
    assert partition.produce(batch(seq=2)) == (NONE, 2), "five batches back: a duplicate"
    assert partition.produce(batch(seq=1)) == (OUT_OF_ORDER, None), "six back: forgotten"
    entry = partition.state.last_entry(7)
    assert entry is not None and [b.last_seq for b in entry.batches] == [2, 3, 4, 5, 6]
    assert len(entry.batches) == NUM_BATCHES_TO_RETAIN


def test_batches_without_a_producer_id_skip_every_check(partition: Partition) -> None:
    anonymous = ProducerBatch(0, 0, -1, -1, -1, 0, 5)
    for _ in range(3):
        assert partition.produce(anonymous)[0] == NONE
    assert partition.state.active_producers() == {}
    assert partition.state.map_end_offset == 3


def test_append_info_follows_kafkas_origins() -> None:
    entry = ProducerStateEntry(7, 2, batches=deque([BatchMetadata(4, 10, 0, 1)]))
    assert ProducerAppendInfo(7, entry, AppendOrigin.CLIENT).check(1, 5) == FENCED
    assert ProducerAppendInfo(7, entry, AppendOrigin.COORDINATOR).check(2, 99) == NONE
    assert ProducerAppendInfo(7, entry, AppendOrigin.COORDINATOR).check(1, 5) == FENCED
    assert ProducerAppendInfo(7, entry, AppendOrigin.REPLICATION).check(1, 99) == NONE
    # A known producer whose batches are gone (a snapshot entry without one) restarts at 0.
    empty = ProducerStateEntry(7, 2)
    assert ProducerAppendInfo(7, empty, AppendOrigin.CLIENT).check(2, 5) == OUT_OF_ORDER
    assert ProducerAppendInfo(7, empty, AppendOrigin.CLIENT).check(2, 0) == NONE


def test_recovery_applies_without_checks(partition: Partition) -> None:
    partition.state.update(batch(epoch=5, seq=10, base=0))
    partition.state.update(batch(epoch=3, seq=99, base=1))  # as the log says, however odd
    entry = partition.state.last_entry(7)
    assert entry is not None and (entry.producer_epoch, entry.last_seq) == (3, 99)
    assert partition.state.map_end_offset == 2


def test_one_append_of_several_batches_is_checked_in_order(partition: Partition) -> None:
    assert partition.produce(batch(seq=0), batch(seq=1, count=2)) == (NONE, 0)
    assert partition.log_end == 3
    # A refused batch refuses the whole append: nothing changes.
    assert partition.produce(batch(seq=3), batch(seq=9)) == (OUT_OF_ORDER, None)
    assert partition.produce(batch(seq=3)) == (NONE, 3)
    # The first duplicate makes the whole append that duplicate.
    assert partition.produce(batch(seq=1, count=2), batch(seq=4)) == (NONE, 1)


# --- in flight --------------------------------------------------------------------------------


def test_batches_in_flight_are_checked_as_the_log_will_hold_them(partition: Partition) -> None:
    first = partition.send(batch(seq=10))  # an unknown producer: any sequence
    assert first.accepted is not None
    assert partition.send(batch(seq=12)).error == OUT_OF_ORDER, "known once the first is accepted"
    assert partition.send(batch(seq=11)).accepted is not None
    assert partition.send(batch(epoch=1, seq=3)).error == OUT_OF_ORDER
    assert partition.validator.in_flight() == 2
    assert partition.state.last_entry(7) is None, "nothing written yet"
    assert partition.write() == 0
    assert partition.write() == 1
    assert partition.validator.in_flight() == 0
    assert partition.produce(batch(seq=12)) == (NONE, 2)


def test_a_retry_of_a_batch_in_flight_waits_for_its_offset(partition: Partition) -> None:
    partition.produce(batch(seq=0))
    partition.send(batch(seq=1, count=2, ts=50))
    partition.send(batch(seq=3, ts=60))
    retry = partition.send(batch(seq=3, ts=70))
    assert retry.accepted is None and retry.duplicate is not None
    answers: list[BatchOutcome] = []
    retry.duplicate.add_done_callback(answers.append)
    assert not retry.duplicate.done() and answers == []
    partition.write()
    assert answers == []
    partition.write()
    assert [(a.base_offset, a.last_offset, a.timestamp) for a in answers] == [(3, 3, 60)]
    late: list[BatchOutcome] = []
    retry.duplicate.add_done_callback(late.append)
    assert late == answers
    # Written, a retry is answered from the durable state.
    again = partition.send(batch(seq=1, count=2))
    assert again.duplicate is not None and again.duplicate.base_offset == 1


def test_a_failed_log_drops_every_batch_in_flight(partition: Partition) -> None:
    partition.produce(batch(seq=0))
    partition.send(batch(seq=1))
    retry = partition.send(batch(seq=1))
    assert retry.duplicate is not None
    errors: list[Errors | None] = []
    retry.duplicate.add_done_callback(lambda o: errors.append(o.error))
    partition.validator.failed(Errors.KAFKA_STORAGE_ERROR)
    assert errors == [Errors.KAFKA_STORAGE_ERROR]
    assert partition.validator.in_flight() == 0
    # Checked against the durable state again: the dropped batch was never written.
    assert partition.send(batch(seq=2)).error == OUT_OF_ORDER
    assert partition.send(batch(seq=1)).accepted is not None


def test_in_flight_window_is_five_batches(partition: Partition) -> None:
    for seq in range(6):
        partition.send(batch(seq=seq))
    assert partition.send(batch(seq=1)).duplicate is not None
    assert partition.send(batch(seq=0)).error == OUT_OF_ORDER
    for _ in range(6):
        partition.write()
    assert partition.send(batch(seq=1)).duplicate is not None


# --- snapshots --------------------------------------------------------------------------------


def kafka_snapshot(entries: list[tuple[int, int, int, int, int, int, int, int]]) -> bytes:
    """A snapshot as Kafka's ProducerStateManager.writeSnapshot lays it out (ProducerSnapshot
    v1): int16 version 1, uint32 CRC-32C of what follows, then the entries as an int32-counted
    array of {int64 ProducerId, int16 Epoch, int32 LastSequence, int64 LastOffset,
    int32 OffsetDelta, int64 Timestamp, int32 CoordinatorEpoch, int64 CurrentTxnFirstOffset}."""
    body = len(entries).to_bytes(4, "big", signed=True)
    for pid, epoch, last_seq, last_offset, delta, ts, coordinator_epoch, txn in entries:
        body += pid.to_bytes(8, "big", signed=True) + epoch.to_bytes(2, "big", signed=True)
        body += last_seq.to_bytes(4, "big", signed=True) + last_offset.to_bytes(8, "big", signed=True)
        body += delta.to_bytes(4, "big", signed=True) + ts.to_bytes(8, "big", signed=True)
        body += coordinator_epoch.to_bytes(4, "big", signed=True) + txn.to_bytes(8, "big", signed=True)
    return (1).to_bytes(2, "big") + crc32c.crc32c(body).to_bytes(4, "big") + body


def test_a_snapshot_is_byte_for_byte_kafkas(tmp_path: Path) -> None:
    partition = Partition(tmp_path)
    partition.produce(batch(pid=5, epoch=2, seq=0, count=3, ts=1700))
    partition.produce(batch(pid=5, epoch=2, seq=3, count=2, ts=1800))
    partition.produce(batch(pid=9, epoch=0, seq=INT32_MAX, count=1, ts=1900))
    path = partition.state.take_snapshot()
    assert path == tmp_path / "00000000000000000006.snapshot"
    expected = kafka_snapshot([
        (5, 2, 4, 4, 1, 1800, -1, -1),
        (9, 0, INT32_MAX, 5, 0, 1900, -1, -1),
    ])
    assert path.read_bytes() == expected
    assert partition.state.take_snapshot() is None, "nothing applied since"
    entries = read_snapshot(expected)
    assert [(e.producer_id, e.producer_epoch, e.last_seq, e.last_data_offset, e.first_seq,
             e.last_timestamp) for e in entries] == [(5, 2, 4, 4, 3, 1800), (9, 0, INT32_MAX, 5, INT32_MAX, 1900)]
    assert snapshot_bytes(entries) == expected


def test_a_snapshot_written_by_kafka_loads(tmp_path: Path) -> None:
    # An entry without a batch (last offset -1, as Kafka writes one after a marker) and one
    # in a transaction are read as Kafka reads them.
    (tmp_path / "00000000000000000100.snapshot").write_bytes(kafka_snapshot([
        (11, 4, 9, 90, 2, 5000, -1, -1),
        (12, 1, -1, -1, 0, 5000, 3, -1),
        (13, 0, 4, 95, 0, 5000, 0, 93),
    ]))
    state = ProducerStateManager(tmp_path)
    state.truncate_and_reload(0, 100, now_ms=6000)
    assert state.map_end_offset == 100
    entries = state.active_producers()
    assert entries[11].batches[0] == BatchMetadata(9, 90, 2, 5000) and entries[11].first_seq == 7
    assert entries[12].is_empty and entries[12].coordinator_epoch == 3
    assert entries[13].current_txn_first_offset == 93


def test_a_corrupt_snapshot_is_deleted_and_the_older_one_used(tmp_path: Path) -> None:
    good = kafka_snapshot([(1, 0, 4, 9, 0, 100, -1, -1)])
    (tmp_path / "00000000000000000010.snapshot").write_bytes(good)
    damaged = bytearray(kafka_snapshot([(1, 0, 8, 19, 0, 200, -1, -1)]))
    damaged[-1] ^= 1
    (tmp_path / "00000000000000000020.snapshot").write_bytes(bytes(damaged))
    (tmp_path / "00000000000000000030.snapshot").write_bytes(good[:9])  # cut short
    state = ProducerStateManager(tmp_path)
    state.truncate_and_reload(0, 30, now_ms=0)
    assert state.map_end_offset == 10
    entry = state.last_entry(1)
    assert entry is not None and entry.last_seq == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00000000000000000010.snapshot"]


def test_reload_drops_snapshots_outside_the_log(tmp_path: Path) -> None:
    for offset in (5, 10, 20, 40):
        (tmp_path / f"{offset:020d}.snapshot").write_bytes(kafka_snapshot([]))
    (tmp_path / "00000000000000000050.snapshot.tmp").write_bytes(b"half")
    state = ProducerStateManager(tmp_path)
    state.truncate_and_reload(10, 30, now_ms=0)
    assert state.snapshot_offsets() == [20] and state.map_end_offset == 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00000000000000000020.snapshot"]


def test_an_unknown_version_is_corrupt(tmp_path: Path) -> None:
    data = bytearray(kafka_snapshot([]))
    data[1] = 2
    with pytest.raises(ValueError, match="version"):
        read_snapshot(bytes(data))


def test_snapshots_are_taken_at_rolls_and_deleted_with_segments(tmp_path: Path) -> None:
    partition = Partition(tmp_path)
    partition.produce(batch(seq=0, count=4))
    assert partition.state.take_snapshot(4) is not None
    partition.produce(batch(seq=4))
    assert partition.state.take_snapshot(5) is not None
    assert partition.state.snapshot_offsets() == [4, 5]
    partition.state.delete_snapshots_before(5)
    assert partition.state.snapshot_offsets() == [5]
    assert not (tmp_path / "00000000000000000004.snapshot").exists()


# --- rebuilding at open -----------------------------------------------------------------------


def write_segment(directory: Path, base: int, batches: list[bytes]) -> LogSegment:
    segment = LogSegment.create(directory, base, 4096)
    for data in batches:
        info = ProducerBatch.read(data)
        assert info is not None
        segment.append(data, info.last_offset)
    return segment


def produced(offset: int, pid: int, epoch: int, seq: int, count: int = 1, ts: int = 1000) -> bytes:
    records = [(None, b"v%d" % i) for i in range(count)]
    return write_batch(records, base_offset=offset, timestamp=ts, producer_id=pid,
                       producer_epoch=epoch, base_sequence=seq)


def test_rebuild_loads_the_snapshot_then_replays_the_tail(tmp_path: Path) -> None:
    first = write_segment(tmp_path, 0, [produced(0, 1, 0, 0, 2), produced(2, 2, 0, 0)])
    second = write_segment(tmp_path, 3, [
        produced(3, 1, 0, 2), write_batch([(None, b"x")], base_offset=4, timestamp=1000),
        produced(5, 2, 1, 0, 3, ts=2000),
    ])
    # The snapshot at 3 says producer 1 ended at sequence 1; the log after it is replayed.
    (tmp_path / "00000000000000000003.snapshot").write_bytes(
        kafka_snapshot([(1, 0, 1, 1, 1, 1000, -1, -1), (2, 0, 0, 2, 0, 1000, -1, -1)]))
    state = rebuild_producer_state(tmp_path, [first, second], 0, 8, now_ms=2000, fsync=False)
    assert state.map_end_offset == 8
    producers = state.active_producers()
    assert [b.last_seq for b in producers[1].batches] == [1, 2]
    assert (producers[2].producer_epoch, producers[2].last_seq, producers[2].last_data_offset) == (1, 2, 7)
    assert state.snapshot_offsets() == [3, 8], "a snapshot at the log end after a replay"
    # Opened again: the snapshot at the end is enough.
    again = rebuild_producer_state(tmp_path, [first, second], 0, 8, now_ms=2000, fsync=False)
    assert again.last_entry(2) == state.last_entry(2)
    assert [b.last_seq for b in again.active_producers()[1].batches] == [2], "snapshots keep the last batch"
    for s in (first, second):
        s.close()


def test_rebuild_without_a_snapshot_replays_the_whole_log(tmp_path: Path) -> None:
    segment = write_segment(tmp_path, 0, [produced(i, 1, 0, i) for i in range(7)])
    state = rebuild_producer_state(tmp_path, [segment], 0, 7, now_ms=0, fsync=False)
    assert [b.last_seq for b in state.active_producers()[1].batches] == [2, 3, 4, 5, 6]
    assert [b.base_offset for b in segment_batches(segment, 4)] == [4, 5, 6]
    validator = ProducerAppendValidator(state)
    assert validator.validate([batch(pid=1, seq=7)]).accepted is not None
    segment.close()


def test_rebuild_of_a_log_truncated_below_its_snapshot(tmp_path: Path) -> None:
    segment = write_segment(tmp_path, 0, [produced(0, 1, 0, 0)])
    (tmp_path / "00000000000000000005.snapshot").write_bytes(kafka_snapshot([(1, 0, 4, 4, 0, 1000, -1, -1)]))
    state = rebuild_producer_state(tmp_path, [segment], 0, 1, now_ms=0, fsync=False)
    entry = state.last_entry(1)
    assert entry is not None and entry.last_seq == 0
    assert state.snapshot_offsets() == [1]
    segment.close()


# --- expiry -----------------------------------------------------------------------------------


def test_idle_producers_expire(tmp_path: Path) -> None:
    partition = Partition(tmp_path, producer_id_expiration_ms=1000)
    partition.produce(batch(pid=1, seq=0, ts=100))
    partition.produce(batch(pid=2, seq=0, ts=600))
    assert partition.state.remove_expired(1099) == []
    assert partition.state.remove_expired(1100) == [1]
    assert set(partition.state.active_producers()) == {2}
    assert partition.produce(batch(pid=1, seq=50)) == (NONE, 2), "forgotten: any sequence"


def test_expired_producers_are_not_loaded_from_a_snapshot(tmp_path: Path) -> None:
    (tmp_path / "00000000000000000009.snapshot").write_bytes(kafka_snapshot([
        (1, 0, 4, 4, 0, 100, -1, -1), (2, 0, 4, 8, 0, 90_000_000, -1, -1)]))
    state = ProducerStateManager(tmp_path)
    state.truncate_and_reload(0, 9, now_ms=86_400_100)
    assert set(state.active_producers()) == {2}


# --- the model --------------------------------------------------------------------------------


@dataclass
class ModelProducer:
    epoch: int
    batches: list[tuple[int, int, int, int]] = field(default_factory=list)
    """(first seq, last seq, base offset, timestamp), the last five."""


@dataclass
class Model:
    """The rules as the task states them, written plainly, applied at send time: what the
    log answers once every append in flight is written in order."""

    producers: dict[int, ModelProducer] = field(default_factory=dict)
    log_end: int = 0

    def produce(self, pid: int, epoch: int, seq: int, count: int, ts: int) -> tuple[Errors, int | None]:
        last = (seq + count - 1) % (INT32_MAX + 1)
        p = self.producers.get(pid)
        if p is not None:
            if epoch < p.epoch:
                return FENCED, None
            if epoch == p.epoch:
                for first_seq, last_seq, offset, _ in p.batches:
                    if (first_seq, last_seq) == (seq, last):
                        return NONE, offset
            if epoch != p.epoch and seq != 0:
                return OUT_OF_ORDER, None
            if epoch == p.epoch:
                expected = (p.batches[-1][1] + 1) % (INT32_MAX + 1) if p.batches else 0
                if seq != expected:
                    return OUT_OF_ORDER, None
        if p is None or epoch != p.epoch:
            p = self.producers[pid] = ModelProducer(epoch)
        p.batches = (p.batches + [(seq, last, self.log_end, ts)])[-NUM_BATCHES_TO_RETAIN:]
        base, self.log_end = self.log_end, self.log_end + count
        return NONE, base

    def restart(self) -> None:
        """Reopened from a snapshot: each producer keeps its last batch only."""
        for p in self.producers.values():
            p.batches = p.batches[-1:]


SEQUENCE_STARTS = st.sampled_from([0, 1, 2, 3, 4, 5, 6, INT32_MAX - 1, INT32_MAX])

operation = st.one_of(
    st.tuples(st.just("send"), st.integers(1, 2), st.integers(0, 2), SEQUENCE_STARTS, st.integers(1, 3)),
    st.tuples(st.just("next"), st.integers(1, 2), st.integers(0, 2), st.integers(1, 3)),
    st.tuples(st.just("retry"), st.integers(0, 30)),
    st.tuples(st.just("write")),
    st.tuples(st.just("restart")),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=st.lists(operation, max_size=40))
def test_the_validator_agrees_with_the_model(tmp_path_factory: pytest.TempPathFactory,
                                             operations: list[tuple[object, ...]]) -> None:
    directory = tmp_path_factory.mktemp("model")
    partition = Partition(directory)
    model = Model()
    sent: list[tuple[int, int, int, int]] = []
    next_seq: dict[tuple[int, int], int] = {}
    answers: list[tuple[tuple[Errors, int | None], Verdict]] = []
    ts = 0

    def send(pid: int, epoch: int, seq: int, count: int) -> None:
        nonlocal ts
        ts += 1
        sent.append((pid, epoch, seq, count))
        next_seq[(pid, epoch)] = (seq + count) % (INT32_MAX + 1)
        expected = model.produce(pid, epoch, seq, count, ts)
        verdict = partition.send(batch(pid=pid, epoch=epoch, seq=seq, count=count, ts=ts))
        answers.append((expected, verdict))

    for op in operations:
        kind = op[0]
        if kind == "send":
            _, pid, epoch, seq, count = op
            send(pid, epoch, seq, count)  # type: ignore[arg-type]
        elif kind == "next":
            _, pid, epoch, count = op
            send(pid, epoch, next_seq.get((pid, epoch), 0), count)  # type: ignore[arg-type]
        elif kind == "retry" and sent:
            send(*sent[int(op[1]) % len(sent)])  # type: ignore[call-overload]
        elif kind == "write" and partition.in_flight:
            partition.write()
        elif kind == "restart":
            while partition.in_flight:
                partition.write()
            partition.state.take_snapshot()
            partition.state = rebuild_producer_state(directory, [], 0, partition.log_end, now_ms=0, fsync=False)
            partition.validator = ProducerAppendValidator(partition.state)
            model.restart()
    while partition.in_flight:
        partition.write()
    for expected, verdict in answers:
        if verdict.error != NONE:
            assert (verdict.error, None) == expected
        elif verdict.duplicate is not None:
            assert verdict.duplicate.done()
            assert (NONE, verdict.duplicate.base_offset) == expected
        else:
            assert verdict.accepted is not None
            assert (NONE, partition.written_at[id(verdict.accepted)]) == expected
    assert partition.log_end == model.log_end
