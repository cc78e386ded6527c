"""The fetch session cache (KIP-227) against Kafka's FetchManager, FetchSessionCacheShard and the
Java client's FetchSessionHandler."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest

from groupcoord.errors import Errors
from groupcoord.protocol.messages.fetch import EpochEndOffset, PartitionData
from groupcoord.protocol.primitives import ZERO_UUID
from groupcoord.server.fetch_sessions import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INT32_MAX,
    INVALID_SESSION_ID,
    MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS,
    FetchAnswer,
    FetchContext,
    FetchManager,
    FullFetchContext,
    IncrementalFetchContext,
    PartitionRequest,
    SessionErrorContext,
    SessionlessFetchContext,
    TopicKey,
    is_full,
    next_epoch,
)

EVICTION_MS = MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS


@dataclass(frozen=True)
class Epoch:
    epoch: int = -1


@dataclass(frozen=True)
class Result:
    """A partition's answer, with the fields the cache looks at."""

    high_watermark: int = 0
    log_start_offset: int = 0
    error_code: int = Errors.NONE
    records: bytes | None = b""
    preferred_read_replica: int = -1
    diverging_epoch: Epoch = field(default_factory=Epoch)


@dataclass
class Clock:
    now: int = 1_000_000

    def __call__(self) -> int:
        return self.now


def by_name(topic: str, partition: int) -> TopicKey:
    return TopicKey(topic, ZERO_UUID, partition)


TOPIC_IDS = {name: uuid.uuid5(uuid.NAMESPACE_DNS, name) for name in ("a", "b", "c")}


def by_id(topic: str, partition: int) -> TopicKey:
    return TopicKey(topic, TOPIC_IDS[topic], partition)


A0, A1, B0 = by_name("a", 0), by_name("a", 1), by_name("b", 0)


def req(offset: int = 0, max_bytes: int = 1024) -> PartitionRequest:
    return PartitionRequest(fetch_offset=offset, max_bytes=max_bytes)


def manager(slots: int = 1000, shards: int = 1, clock: Clock | None = None) -> FetchManager:
    return FetchManager(slots, clock or Clock(), shards=shards, rng=random.Random(7))


def context(
    fm: FetchManager, session_id: int, epoch: int, partitions: Iterable[TopicKey] = (),
    forgotten: Iterable[TopicKey] = (), *, ids: bool = False, follower: bool = False,
    offset: int = 0,
) -> FetchContext:
    return fm.new_context(session_id, epoch, [(k, req(offset)) for k in partitions], list(forgotten),
                          uses_topic_ids=ids, is_follower=follower)


def respond_all(ctx: FetchContext, results: dict[TopicKey, Result] | None = None) -> FetchAnswer[Result]:
    """Answer every partition the context reads (unchanged, empty ones unless ``results``)."""
    results = results or {}
    return ctx.respond({k: results.get(k, Result()) for k, _ in ctx.partitions_to_read()})


def new_session(fm: FetchManager, partitions: Iterable[TopicKey], *, ids: bool = False,
                follower: bool = False) -> int:
    answer = respond_all(context(fm, 0, 0, partitions, ids=ids, follower=follower))
    assert answer.session_id != INVALID_SESSION_ID
    return answer.session_id


def keys(answer: FetchAnswer[Result]) -> list[TopicKey]:
    return [k for k, _ in answer.partitions]


# FetchMetadata


def test_epochs_follow_fetch_metadata() -> None:
    assert (INVALID_SESSION_ID, INITIAL_EPOCH, FINAL_EPOCH) == (0, 0, -1)
    assert next_epoch(0) == 1 and next_epoch(41) == 42
    assert next_epoch(INT32_MAX) == 1
    assert next_epoch(FINAL_EPOCH) == FINAL_EPOCH and next_epoch(-7) == FINAL_EPOCH
    assert is_full(0) and is_full(-1) and not is_full(1) and not is_full(-2)


def test_the_session_error_codes_are_kafkas() -> None:
    codes = {e.name: int(e) for e in Errors}
    assert codes["FETCH_SESSION_ID_NOT_FOUND"] == 70
    assert codes["INVALID_FETCH_SESSION_EPOCH"] == 71
    assert codes["FETCH_SESSION_TOPIC_ID_ERROR"] == 106


# The request table


def test_sessionless_request_reads_its_partitions_and_creates_no_session() -> None:
    fm = manager()
    ctx = context(fm, 0, FINAL_EPOCH, [B0, A0])
    assert isinstance(ctx, SessionlessFetchContext) and ctx.error is None
    assert [k for k, _ in ctx.partitions_to_read()] == [B0, A0]
    answer = respond_all(ctx)
    assert (answer.error, answer.session_id, keys(answer)) == (Errors.NONE, 0, [B0, A0])
    assert len(fm.cache) == 0


def test_full_request_creates_a_session_of_its_answers_partitions() -> None:
    fm = manager()
    ctx = context(fm, 0, INITIAL_EPOCH, [B0, A0])
    assert isinstance(ctx, FullFetchContext)
    assert [k for k, _ in ctx.partitions_to_read()] == [B0, A0]
    answer = respond_all(ctx, {A0: Result(high_watermark=5)})
    assert answer.error == Errors.NONE and keys(answer) == [B0, A0]
    assert 0 < answer.session_id <= INT32_MAX
    session = fm.cache.get(answer.session_id)
    assert session is not None and session.epoch == 1
    assert [c.key for c in session.partitions.values()] == [B0, A0]
    assert [c.high_watermark for c in session.partitions.values()] == [0, 5]
    assert fm.cache.total_partitions == 2


def test_the_session_is_created_when_the_answer_is_made() -> None:
    fm = manager()
    ctx = context(fm, 0, 0, [A0])
    assert len(fm.cache) == 0
    respond_all(ctx)
    assert len(fm.cache) == 1


def test_a_partition_named_twice_counts_once_with_its_last_parameters() -> None:
    fm = manager()
    ctx = fm.new_context(0, 0, [(A0, req(1)), (B0, req(2)), (A0, req(3))], [], False, False)
    assert ctx.partitions_to_read() == [(A0, req(3)), (B0, req(2))]


@pytest.mark.parametrize("epoch", [INITIAL_EPOCH, FINAL_EPOCH])
def test_full_request_naming_a_session_closes_it(epoch: int) -> None:
    fm = manager()
    old = new_session(fm, [A0])
    ctx = context(fm, old, epoch, [B0])
    assert fm.cache.get(old) is None
    answer = respond_all(ctx)
    assert keys(answer) == [B0]
    if epoch == FINAL_EPOCH:
        assert isinstance(ctx, SessionlessFetchContext) and answer.session_id == 0
        assert len(fm.cache) == 0
    else:
        assert isinstance(ctx, FullFetchContext) and answer.session_id not in (0, old)
        assert len(fm.cache) == 1


def test_full_request_naming_an_unknown_session_is_answered_as_full() -> None:
    fm = manager()
    answer = respond_all(context(fm, 12345, 0, [A0]))
    assert answer.error == Errors.NONE and answer.session_id != 0


def test_incremental_request_for_an_unknown_session() -> None:
    fm = manager()
    for session_id in (0, 12345, -5, INT32_MAX):
        ctx = context(fm, session_id, 1, [A0])
        assert isinstance(ctx, SessionErrorContext)
        assert ctx.error == Errors.FETCH_SESSION_ID_NOT_FOUND and ctx.partitions_to_read() == []
        answer = respond_all(ctx)
        assert (answer.error, answer.session_id, answer.partitions) == (
            Errors.FETCH_SESSION_ID_NOT_FOUND, 0, [])


@pytest.mark.parametrize("epoch", [2, 7, -2])
def test_incremental_request_with_another_epoch(epoch: int) -> None:
    fm = manager()
    sid = new_session(fm, [A0])
    ctx = context(fm, sid, epoch)
    assert ctx.error == Errors.INVALID_FETCH_SESSION_EPOCH
    assert respond_all(ctx).session_id == 0
    session = fm.cache.get(sid)
    assert session is not None and session.epoch == 1


@pytest.mark.parametrize("created_with_ids", [False, True])
def test_incremental_request_naming_topics_otherwise_than_its_session(created_with_ids: bool) -> None:
    fm = manager()
    sid = new_session(fm, [by_id("a", 0)] if created_with_ids else [A0], ids=created_with_ids)
    ctx = context(fm, sid, 1, ids=not created_with_ids)
    assert ctx.error == Errors.FETCH_SESSION_TOPIC_ID_ERROR
    assert context(fm, sid, 1, ids=created_with_ids).error is None


def test_incremental_request_adds_updates_and_bumps_the_epoch() -> None:
    clock = Clock()
    fm = manager(clock=clock)
    sid = new_session(fm, [A0, A1])
    clock.now += 10
    ctx = fm.new_context(sid, 1, [(B0, req(4)), (A0, req(9, 77))], [], False, False)
    assert isinstance(ctx, IncrementalFetchContext) and ctx.error is None
    assert ctx.partitions_to_read() == [(A0, req(9, 77)), (A1, req(0)), (B0, req(4))]
    session = fm.cache.get(sid)
    assert session is not None and session.epoch == 2 and session.last_used_ms == clock.now
    assert respond_all(ctx).session_id == sid
    assert context(fm, sid, 2).error is None
    assert context(fm, sid, 2).error == Errors.INVALID_FETCH_SESSION_EPOCH
    assert context(fm, sid, 3).error is None


def test_the_session_epoch_wraps_to_1() -> None:
    fm = manager()
    sid = new_session(fm, [A0])
    session = fm.cache.get(sid)
    assert session is not None
    session.epoch = INT32_MAX
    respond_all(context(fm, sid, INT32_MAX))
    assert session.epoch == 1
    assert context(fm, sid, 1).error is None


def test_an_incremental_request_keeps_every_fetch_parameter() -> None:
    fm = manager()
    sid = new_session(fm, [A0])
    params = PartitionRequest(fetch_offset=8, max_bytes=99, log_start_offset=3,
                              current_leader_epoch=4, last_fetched_epoch=2)
    fm.new_context(sid, 1, [(A0, params)], [], False, False)
    assert context(fm, sid, 2).partitions_to_read() == [(A0, params)]


def test_forgotten_topics_by_name() -> None:
    fm = manager()
    sid = new_session(fm, [A0, A1, B0])
    ctx = context(fm, sid, 1, forgotten=[A1, by_name("c", 0)])
    assert [k for k, _ in ctx.partitions_to_read()] == [A0, B0]


def test_forgotten_topics_by_id() -> None:
    fm = manager()
    a0, a1, b0 = by_id("a", 0), by_id("a", 1), by_id("b", 0)
    sid = new_session(fm, [a0, a1, b0], ids=True)
    # A forgotten partition is matched by its topic id; the name the request resolved
    # (None for an id the broker does not know) does not count.
    ctx = context(fm, sid, 1, forgotten=[a1._replace(topic=None), TopicKey(None, uuid.uuid4(), 0)],
                  ids=True)
    assert [k for k, _ in ctx.partitions_to_read()] == [a0, b0]


def test_a_partition_of_an_unknown_topic_id_gets_its_name_once_known() -> None:
    fm = manager()
    unknown = TopicKey(None, uuid.uuid4(), 0)
    sid = new_session(fm, [unknown], ids=True)
    assert context(fm, sid, 1, ids=True).partitions_to_read()[0][0].topic is None
    ctx = fm.new_context(sid, 2, [], [], True, False, topic_names={unknown.topic_id: "late"})
    assert ctx.partitions_to_read()[0][0] == unknown._replace(topic="late")


def test_an_incremental_request_that_empties_the_session_closes_it() -> None:
    fm = manager()
    sid = new_session(fm, [A0, A1])
    ctx = context(fm, sid, 1, forgotten=[A0, A1])
    assert isinstance(ctx, SessionlessFetchContext) and ctx.partitions_to_read() == []
    assert fm.cache.get(sid) is None
    answer = respond_all(ctx)
    assert (answer.error, answer.session_id, answer.partitions) == (Errors.NONE, 0, [])


def test_a_duplicate_request_answered_after_the_next_gets_an_epoch_error() -> None:
    fm = manager()
    sid = new_session(fm, [A0])
    first = context(fm, sid, 1)
    assert respond_all(context(fm, sid, 2)).error == Errors.NONE
    answer = respond_all(first)
    assert (answer.error, answer.session_id, answer.partitions) == (
        Errors.INVALID_FETCH_SESSION_EPOCH, sid, [])


# Incremental answers


def incremental(fm: FetchManager, sid: int, epoch: int, results: dict[TopicKey, Result]) -> FetchAnswer[Result]:
    return respond_all(context(fm, sid, epoch), results)


def test_an_incremental_answer_leaves_out_unchanged_partitions() -> None:
    fm = manager()
    sid = new_session(fm, [A0, A1, B0])
    assert keys(incremental(fm, sid, 1, {})) == []
    # The last stable offset is not compared, as in Kafka.
    assert incremental(fm, sid, 2, {A0: Result()}).partitions == []


@pytest.mark.parametrize("change", [
    Result(high_watermark=3),
    Result(log_start_offset=2),
    Result(error_code=Errors.NOT_LEADER_OR_FOLLOWER),
    Result(records=b"batch"),
    Result(preferred_read_replica=2),
    Result(diverging_epoch=Epoch(4)),
])
def test_an_incremental_answer_holds_what_changed(change: Result) -> None:
    fm = manager()
    sid = new_session(fm, [A0, A1])
    answer = incremental(fm, sid, 1, {A1: change})
    assert answer.partitions == [(A1, change)]


def test_a_changed_high_watermark_is_sent_once() -> None:
    fm = manager()
    sid = new_session(fm, [A0, A1])
    assert keys(incremental(fm, sid, 1, {A0: Result(high_watermark=3, log_start_offset=1)})) == [A0]
    assert keys(incremental(fm, sid, 2, {A0: Result(high_watermark=3, log_start_offset=1)})) == []


def test_an_error_is_always_sent_and_resends_the_partition_once_gone() -> None:
    fm = manager()
    sid = new_session(fm, [A0])
    error = Result(error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION)
    assert keys(incremental(fm, sid, 1, {A0: error})) == [A0]
    assert keys(incremental(fm, sid, 2, {A0: error})) == [A0]
    # The error reset the high watermark remembered to -1: the same (0) is new again.
    assert keys(incremental(fm, sid, 3, {})) == [A0]
    assert keys(incremental(fm, sid, 4, {})) == []


def test_partitions_that_return_records_move_to_the_end_of_the_session() -> None:
    fm = manager()
    a2 = by_name("a", 2)
    sid = new_session(fm, [A0, A1, a2, B0])
    answer = incremental(fm, sid, 1, {A0: Result(records=b"x"), A1: Result(high_watermark=9),
                                      a2: Result(records=b"y")})
    # The answer keeps the order read; the session puts those with records last.
    assert keys(answer) == [A0, A1, a2]
    ctx = context(fm, sid, 2)
    assert [k for k, _ in ctx.partitions_to_read()] == [A1, B0, A0, a2]


def test_a_full_answer_holds_every_partition() -> None:
    fm = manager()
    answer = respond_all(context(fm, 0, 0, [A0, A1]))
    assert keys(answer) == [A0, A1]


def test_the_wire_partition_data_is_a_partition_result() -> None:
    fm = manager()
    sid = new_session(fm, [A0])
    ctx = context(fm, sid, 1)
    data = PartitionData(partition_index=0, high_watermark=0, log_start_offset=0, records=b"")
    assert ctx.respond({A0: data}).partitions == []
    ctx = context(fm, sid, 2)
    diverging = PartitionData(partition_index=0, high_watermark=0, log_start_offset=0,
                              diverging_epoch=EpochEndOffset(epoch=1, end_offset=5))
    assert ctx.respond({A0: diverging}).partitions == [(A0, diverging)]


# The cache: slots, shards and eviction


def test_zero_slots_disable_sessions() -> None:
    fm = FetchManager(0, Clock())
    for _ in range(3):
        answer = respond_all(context(fm, 0, 0, [A0]))
        assert (answer.error, answer.session_id, keys(answer)) == (Errors.NONE, 0, [A0])
    assert len(fm.cache) == 0


def test_slots_are_split_over_eight_shards_as_in_kafka() -> None:
    clock = Clock()
    # Fewer than 8 slots leave every shard without room.
    assert respond_all(context(FetchManager(7, clock), 0, 0, [A0])).session_id == 0
    fm = FetchManager(20, clock, rng=random.Random(1))
    ids = [respond_all(context(fm, 0, 0, [A0])).session_id for _ in range(20)]
    # 2 sessions in each of the 8 shards, taken in turn; each id in its shard's range.
    assert all(ids[:16]) and ids[16:] == [0, 0, 0, 0]
    shard_range = INT32_MAX // 8
    assert [i // shard_range for i in ids[:8]] == list(range(8))
    assert all(fm.cache.shard_of(i) is fm.cache.shards[n % 8] for n, i in enumerate(ids[:16]))


def test_session_ids_are_positive_and_distinct() -> None:
    fm = FetchManager(800, Clock(), rng=random.Random(3))
    ids = [new_session(fm, [A0]) for _ in range(800)]
    assert len(set(ids)) == 800 and min(ids) > 0 and max(ids) < 8 * (INT32_MAX // 8)


def full_shard(clock: Clock, slots: int, privileged: bool = False, size: int = 1) -> tuple[FetchManager, list[int]]:
    fm = manager(slots, clock=clock)
    parts = [by_name("a", p) for p in range(size)]
    return fm, [new_session(fm, parts, follower=privileged) for _ in range(slots)]


def try_new(fm: FetchManager, size: int = 1, privileged: bool = False) -> int:
    return respond_all(context(fm, 0, 0, [by_name("b", p) for p in range(size)],
                              follower=privileged)).session_id


def test_a_full_cache_refuses_a_new_session_until_one_is_idle_for_two_minutes() -> None:
    clock = Clock()
    fm, ids = full_shard(clock, 2)
    clock.now += EVICTION_MS
    respond_all(context(fm, ids[1], 1))  # ids[1] used, ids[0] idle for exactly 120 s
    assert try_new(fm) == 0
    clock.now += 1
    new = try_new(fm)
    assert new != 0 and fm.cache.get(ids[0]) is None and fm.cache.get(ids[1]) is not None
    assert fm.cache.evictions == 1
    # The client of the evicted session learns it on its next incremental request.
    assert context(fm, ids[0], 1).error == Errors.FETCH_SESSION_ID_NOT_FOUND


def test_the_least_recently_used_stale_session_is_evicted_first() -> None:
    clock = Clock()
    fm, ids = full_shard(clock, 3)
    clock.now += 1
    respond_all(context(fm, ids[0], 1))
    clock.now += EVICTION_MS + 5
    assert try_new(fm) != 0
    # ids[1] and ids[2] were last used together: the lower id goes (Kafka's LastUsedKey).
    gone, kept = sorted(ids[1:])
    assert fm.cache.get(gone) is None and fm.cache.get(ids[0]) and fm.cache.get(kept)


def test_a_privileged_session_evicts_a_recent_consumer_session() -> None:
    clock = Clock()
    fm, ids = full_shard(clock, 2, size=5)
    # A consumer's session may not evict a recent one, however big.
    assert try_new(fm, size=50) == 0
    # A follower's may, even a small one: the smallest consumer session (lowest id on a tie).
    assert try_new(fm, size=1, privileged=True) != 0
    assert fm.cache.get(min(ids)) is None and fm.cache.get(max(ids)) is not None


def test_recent_privileged_sessions_are_never_evicted() -> None:
    clock = Clock()
    fm, _ = full_shard(clock, 2, privileged=True)
    assert try_new(fm, size=50, privileged=True) == 0
    assert try_new(fm, size=50) == 0


def test_a_bigger_session_evicts_an_older_smaller_one() -> None:
    clock = Clock()
    fm, ids = full_shard(clock, 2, size=3)
    # Older than two minutes, but used recently: evictable, not stale.
    clock.now += EVICTION_MS + 1
    for sid in ids:
        respond_all(context(fm, sid, 1))
    assert try_new(fm, size=3) == 0  # not bigger: equal sizes keep the old session
    assert try_new(fm, size=2) == 0
    assert try_new(fm, size=4) != 0
    assert len([s for s in ids if fm.cache.get(s)]) == 1


def test_an_old_privileged_session_yields_only_to_a_bigger_privileged_one() -> None:
    clock = Clock()
    fm, ids = full_shard(clock, 1, privileged=True, size=2)
    clock.now += EVICTION_MS + 1
    respond_all(context(fm, ids[0], 1))
    assert try_new(fm, size=10) == 0  # a consumer never outranks a follower
    assert try_new(fm, size=2, privileged=True) == 0
    assert try_new(fm, size=3, privileged=True) != 0
    assert fm.cache.get(ids[0]) is None


def test_eviction_compares_the_size_at_the_last_use() -> None:
    clock = Clock()
    fm, ids = full_shard(clock, 1, size=1)
    clock.now += EVICTION_MS + 1
    # Grow the session to 5 partitions; it is touched with its new size.
    fm.new_context(ids[0], 1, [(by_name("a", p), req()) for p in range(5)], [], False, False)
    assert try_new(fm, size=5) == 0
    assert try_new(fm, size=6) != 0


def test_evictability_is_decided_at_the_last_use() -> None:
    # A session becomes evictable by consumers only once it is used after two minutes.
    clock = Clock()
    fm, ids = full_shard(clock, 1, size=1)
    clock.now += EVICTION_MS  # not stale (not more than 120 s), and not yet touched as old
    assert try_new(fm, size=9) == 0
    respond_all(context(fm, ids[0], 1))
    assert try_new(fm, size=9) == 0  # touched at exactly 120 s of age: still not old
    clock.now += 1
    respond_all(context(fm, ids[0], 2))
    assert try_new(fm, size=9) != 0


# The Java client's FetchSessionHandler, driving the cache


@dataclass
class JavaFetchSessionHandler:
    """Kafka's client-side FetchSessionHandler: what it sends and how it reads the answers."""

    session_id: int = INVALID_SESSION_ID
    epoch: int = INITIAL_EPOCH
    session: dict[TopicKey, PartitionRequest] = field(default_factory=dict)

    def build(self, wanted: dict[TopicKey, PartitionRequest]) -> tuple[
            list[tuple[TopicKey, PartitionRequest]], list[TopicKey]]:
        """The partitions to send and to forget (FetchSessionHandler.Builder.build)."""
        if is_full(self.epoch):
            self.session = dict(wanted)
            return list(wanted.items()), []
        to_send = {k: v for k, v in wanted.items() if self.session.get(k) != v}
        to_forget = [k for k in self.session if k not in wanted]
        for k in to_forget:
            del self.session[k]
        self.session.update(to_send)
        return list(to_send.items()), to_forget

    def handle_response(self, answer: FetchAnswer[Result]) -> bool:
        if answer.error != Errors.NONE:
            if answer.error == Errors.FETCH_SESSION_ID_NOT_FOUND:
                self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
            else:
                self.epoch = INITIAL_EPOCH  # nextCloseExistingAttemptNew
            return False
        answered = set(keys(answer))
        if is_full(self.epoch):
            assert answered == set(self.session), "a full answer holds every partition"
            if answer.session_id == INVALID_SESSION_ID:
                self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
            else:
                self.session_id, self.epoch = answer.session_id, next_epoch(INITIAL_EPOCH)
        else:
            assert answered <= set(self.session), "an incremental answer stays in the session"
            if answer.session_id == INVALID_SESSION_ID:
                self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
            else:
                self.epoch = next_epoch(self.epoch)
        return True


@dataclass
class Consumer:
    """A consumer polling some partitions through a Java fetch session handler, remembering
    the high watermark and position of each from the answers."""

    handler: JavaFetchSessionHandler = field(default_factory=JavaFetchSessionHandler)
    assigned: list[TopicKey] = field(default_factory=list)
    position: dict[TopicKey, int] = field(default_factory=dict)
    high_watermark: dict[TopicKey, int] = field(default_factory=dict)

    def wanted(self) -> dict[TopicKey, PartitionRequest]:
        return {k: req(self.position.get(k, 0)) for k in self.assigned}


def poll(fm: FetchManager, consumer: Consumer, log_end: dict[TopicKey, int], rng: random.Random) -> bool:
    """One fetch of ``consumer``; checks the broker reads exactly the partitions the client
    means to fetch, and that the client's view of every high watermark stays right."""
    wanted = consumer.wanted()
    handler = consumer.handler
    full = is_full(handler.epoch)
    to_send, to_forget = handler.build(wanted)
    ctx = fm.new_context(handler.session_id, handler.epoch, to_send, to_forget, False, False)
    read = ctx.partitions_to_read()
    if ctx.error is None:
        assert dict(read) == wanted, "the broker reads what the client wants, at its offsets"
        if full:
            assert [k for k, _ in read] == list(wanted)
    results = {}
    for key, params in read:
        end = log_end[key]
        # Each read returns at most 3 records, so data stays behind for the next polls.
        count = min(end - params.fetch_offset, rng.choice([1, 3]))
        results[key] = Result(high_watermark=end, records=b"r" * count)
    answer = ctx.respond(results)
    if not handler.handle_response(answer):
        return False
    for key, result in answer.partitions:
        consumer.high_watermark[key] = result.high_watermark
        consumer.position[key] = consumer.position.get(key, 0) + len(result.records or b"")
    for key in consumer.assigned:
        assert consumer.high_watermark[key] == log_end[key], "a changed high watermark was left out"
    return True


@pytest.mark.parametrize("seed", range(12))
def test_java_clients_driving_the_cache_read_what_they_mean_to(seed: int) -> None:
    rng = random.Random(seed)
    clock = Clock()
    fm = FetchManager(2, clock, shards=1, rng=rng)
    universe = [by_name(t, p) for t in "abc" for p in range(3)]
    log_end = {k: 0 for k in universe}
    consumers = [Consumer(assigned=rng.sample(universe, 4)) for _ in range(3)]
    kinds: dict[tuple[bool, int], int] = {}
    for _ in range(400):
        for key in rng.sample(universe, 3):
            log_end[key] += rng.randrange(0, 4)
        consumer = rng.choice(consumers)
        if rng.random() < 0.1:
            # A rebalance: the consumer drops some partitions and takes others.
            consumer.assigned = rng.sample(universe, rng.randrange(1, 6))
        if rng.random() < 0.05:
            clock.now += EVICTION_MS + 1  # the other consumers' sessions go stale
        clock.now += rng.randrange(0, 50)
        sent = (consumer.handler.session_id != 0, consumer.handler.epoch)
        ok = poll(fm, consumer, log_end, rng)
        kinds[sent[0], min(sent[1], 1)] = kinds.get((sent[0], min(sent[1], 1)), 0) + 1
        assert ok or consumer.handler.epoch == INITIAL_EPOCH
    # The walk went through full requests, incremental ones and recreated sessions.
    assert kinds.get((False, 0), 0) > 3 and kinds.get((True, 1), 0) > 100
    assert fm.cache.evictions > 0


def test_a_java_client_starts_a_session_and_recreates_it_once_evicted() -> None:
    clock = Clock()
    fm = FetchManager(1, clock, shards=1, rng=random.Random(0))
    log_end = {A0: 5, A1: 0}
    rng = random.Random(0)
    consumer = Consumer(assigned=[A0, A1])
    handler = consumer.handler
    assert (handler.session_id, handler.epoch) == (0, 0)
    assert poll(fm, consumer, log_end, rng)
    sid = handler.session_id
    assert sid != 0 and handler.epoch == 1
    assert poll(fm, consumer, log_end, rng) and (handler.session_id, handler.epoch) == (sid, 2)
    clock.now += EVICTION_MS + 1
    other = Consumer(assigned=[B0])
    assert poll(fm, other, {B0: 0}, rng) and other.handler.session_id != 0  # evicts ours
    assert not poll(fm, consumer, log_end, rng)
    assert (handler.session_id, handler.epoch) == (0, 0)
    # The recreated session cannot evict the other's recent one: sessionless until then.
    assert poll(fm, consumer, log_end, rng) and handler.session_id == 0
    assert consumer.position[A0] > 0

