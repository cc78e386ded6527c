"""Incremental fetch sessions (KIP-227): Kafka's ``FetchManager`` and its session cache.

A client that fetches the same partitions again and again may ask the broker to remember them
in a fetch session; its next requests then name only the partitions whose fetch parameters
changed (and those to forget), and the answers hold only the partitions with something new.
A request carries a session id and an epoch (Kafka's ``FetchMetadata``):

===================  =====================================================================
(0, -1)              sessionless: read the request's partitions, answer session id 0
                     (librdkafka always fetches so)
(0, 0)               full: read the request's partitions and create a session holding them;
                     the answer gives its id (0 when the cache has no slot for it)
(id, 0) / (id, -1)   close session ``id``, then as (0, 0) / (0, -1)
(id, epoch > 0)      incremental: update session ``id`` with the partitions sent and forgotten
                     and read every partition of the session; FETCH_SESSION_ID_NOT_FOUND for
                     an unknown id, INVALID_FETCH_SESSION_EPOCH for an epoch other than the
                     session's next one, FETCH_SESSION_TOPIC_ID_ERROR when the request names
                     topics otherwise (by name before v13, by id from v13) than the session
                     did; a session left with no partition is closed and the request answered
                     as a sessionless one (session id 0)
===================  =====================================================================

A handler asks :meth:`FetchManager.new_context` for a :class:`FetchContext`, reads the
partitions of :meth:`FetchContext.partitions_to_read` from the log, and turns the results into
its answer with :meth:`FetchContext.respond`, which creates or updates the session as Kafka's
``updateAndGenerateResponseData`` does: an incremental answer leaves out each partition with no
records, the same high watermark and log start offset as last sent, no error, no preferred read
replica and no diverging epoch (the last stable offset is not compared, as in Kafka's
``CachedPartition.maybeUpdateResponseData``), and moves the partitions that returned records to
the end of the session's order, so that the next reads start with those that did not.

The cache is Kafka's: ``max.incremental.fetch.session.cache.slots`` split over
:data:`NUM_FETCH_SESSION_CACHE_SHARDS` shards (``slots // 8`` sessions each, so fewer than 8
slots disable sessions), a new session placed in the shards in turn, each shard owning its
range of session ids, and a full shard evicting by Kafka's ``FetchSessionCacheShard.tryEvict``
rules. The shards are kept because they show: they bound how many sessions exist and which
session a new one may evict. Time is injected (``clock_ms``), so that the cache is tested without
waiting. Like every handler's state it is used from the event loop only, so it takes no locks;
an answer made later than its request (a parked Fetch) is still checked against the session's
epoch, as Kafka checks it, in case another request of the session came in between.

One difference from Kafka: a session id no shard owns (negative, or from ``8 * ((2**31 - 1) //
8)`` = 2147483640 up) is an unknown session here, where Kafka fails the request with an
exception.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Mapping, Sized
from dataclasses import dataclass
from typing import Generic, NamedTuple, Protocol, TypeVar
from uuid import UUID

from groupcoord.errors import Errors
from groupcoord.protocol.primitives import ZERO_UUID

INT32_MAX = 2**31 - 1

INVALID_SESSION_ID = 0
"""The session id of a request or answer with no session."""
INITIAL_EPOCH = 0
"""The epoch of a full request that asks for a new session."""
FINAL_EPOCH = -1
"""The epoch of a full request that asks for no session."""

MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS = 120_000
"""How long a session stays unused, or exists, before a new one may evict it (Kafka's
``KafkaBroker.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS``)."""
NUM_FETCH_SESSION_CACHE_SHARDS = 8
"""Kafka's ``NumFetchSessionCacheShards``."""

NO_PREFERRED_READ_REPLICA = -1
INVALID_HIGH_WATERMARK = -1


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (Kafka's ``FetchMetadata.nextEpoch``): after FINAL_EPOCH comes
    FINAL_EPOCH, after ``2**31 - 1`` comes 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == INT32_MAX else epoch + 1


def is_full(epoch: int) -> bool:
    """A request with this epoch names every partition it wants (``FetchMetadata.isFull``)."""
    return epoch in (INITIAL_EPOCH, FINAL_EPOCH)


class TopicKey(NamedTuple):
    """A partition as a request names it (Kafka's ``TopicIdPartition``): by name before v13
    (``topic_id`` is the zero UUID), by id from v13 (``topic`` is None when the id is unknown)."""

    topic: str | None
    topic_id: UUID
    partition: int


def _identity(key: TopicKey) -> tuple[str | UUID | None, int]:
    """What makes two keys the same partition (``CachedPartition.equals``): the topic id when
    there is one, else the name."""
    return (key.topic_id if key.topic_id != ZERO_UUID else key.topic, key.partition)


@dataclass(frozen=True)
class PartitionRequest:
    """A partition's fetch parameters (Kafka's ``FetchRequest.PartitionData``); -1 stands for an
    absent epoch or log start offset."""

    fetch_offset: int
    max_bytes: int
    log_start_offset: int = -1
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1


class EpochEndOffset(Protocol):
    @property
    def epoch(self) -> int: ...


class PartitionResult(Protocol):
    """What :meth:`FetchContext.respond` looks at in a partition's answer; the wire's
    ``PartitionData`` has these fields, so a handler passes its answers as they are."""

    @property
    def error_code(self) -> int: ...

    @property
    def high_watermark(self) -> int: ...

    @property
    def log_start_offset(self) -> int: ...

    @property
    def preferred_read_replica(self) -> int: ...

    @property
    def diverging_epoch(self) -> EpochEndOffset: ...

    @property
    def records(self) -> Sized | None: ...


R = TypeVar("R", bound=PartitionResult)


@dataclass(frozen=True)
class FetchAnswer(Generic[R]):
    """The top-level error, the session id and the partitions of a Fetch answer, in order."""

    error: Errors
    session_id: int
    partitions: list[tuple[TopicKey, R]]


def _records_size(result: PartitionResult) -> int:
    return 0 if result.records is None else len(result.records)


@dataclass(slots=True)
class CachedPartition:
    """A partition of a session: the request's last parameters and the high watermark and log
    start offset last sent for it."""

    key: TopicKey
    request: PartitionRequest
    high_watermark: int = INVALID_HIGH_WATERMARK
    local_log_start_offset: int = -1

    def maybe_update_response_data(self, result: PartitionResult, update: bool) -> bool:
        """Whether ``result`` must be sent (Kafka's ``maybeUpdateResponseData``); with ``update``
        it is remembered as sent."""
        must_respond = _records_size(result) > 0
        if self.high_watermark != result.high_watermark:
            must_respond = True
            if update:
                self.high_watermark = result.high_watermark
        if self.local_log_start_offset != result.log_start_offset:
            must_respond = True
            if update:
                self.local_log_start_offset = result.log_start_offset
        if result.preferred_read_replica != NO_PREFERRED_READ_REPLICA:
            must_respond = True
        if result.error_code != Errors.NONE:
            # Forget the high watermark, so the partition is sent again once the error is gone.
            if update:
                self.high_watermark = INVALID_HIGH_WATERMARK
            must_respond = True
        if result.diverging_epoch.epoch >= 0:
            must_respond = True
        return must_respond


@dataclass(eq=False)
class FetchSession:
    """A session (Kafka's ``FetchSession``): its partitions in order, and what the cache keeps
    to choose one to evict. ``privileged`` sessions are those of followers."""

    id: int
    privileged: bool
    uses_topic_ids: bool
    creation_ms: int
    last_used_ms: int
    epoch: int
    partitions: dict[tuple[str | UUID | None, int], CachedPartition]
    cached_size: int = -1
    """The size at the last touch, what eviction compares (-1: not in the cache yet)."""
    evictable_by_privileged: bool = False
    evictable_by_all: bool = False

    def evictable_key(self) -> tuple[bool, int, int]:
        """Kafka's ``EvictableKey``: the least valuable session sorts first."""
        return (self.privileged, self.cached_size, self.id)

    def update(self, fetch_data: Mapping[TopicKey, PartitionRequest], to_forget: Iterable[TopicKey]) -> None:
        """Add or update the partitions sent, then drop those forgotten (``FetchSession.update``);
        an updated partition keeps its place."""
        for key, request in fetch_data.items():
            cached = self.partitions.get(_identity(key))
            if cached is None:
                self.partitions[_identity(key)] = CachedPartition(key, request)
            else:
                cached.request = request
        for key in to_forget:
            self.partitions.pop(_identity(key), None)


class FetchSessionCacheShard:
    """A shard of the cache (Kafka's ``FetchSessionCacheShard``): at most ``max_entries``
    sessions with ids in ``[max(1, shard_num * session_id_range), (shard_num + 1) *
    session_id_range)``."""

    def __init__(
        self, max_entries: int, eviction_ms: int, session_id_range: int, shard_num: int,
        rng: random.Random,
    ) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.session_id_range = session_id_range
        self.shard_num = shard_num
        self._rng = rng
        self.sessions: dict[int, FetchSession] = {}
        self.evictions = 0

    def get(self, session_id: int) -> FetchSession | None:
        return self.sessions.get(session_id)

    def new_session_id(self) -> int:
        low = max(1, self.shard_num * self.session_id_range)
        high = (self.shard_num + 1) * self.session_id_range
        while True:
            session_id = self._rng.randrange(low, high)
            if session_id not in self.sessions:
                return session_id

    def maybe_create_session(
        self, now_ms: int, privileged: bool, size: int, uses_topic_ids: bool,
        create_partitions: Callable[[], dict[tuple[str | UUID | None, int], CachedPartition]],
    ) -> int:
        """Create a session if there is room or a session can be evicted for it; its id, or
        INVALID_SESSION_ID."""
        if len(self.sessions) >= self.max_entries and not self._try_evict(privileged, size, now_ms):
            return INVALID_SESSION_ID
        session = FetchSession(
            id=self.new_session_id(), privileged=privileged, uses_topic_ids=uses_topic_ids,
            creation_ms=now_ms, last_used_ms=now_ms, epoch=next_epoch(INITIAL_EPOCH),
            partitions=create_partitions(),
        )
        self.sessions[session.id] = session
        self.touch(session, now_ms)
        return session.id

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        """Evict the least recently used session if it is stale, else the least valuable
        evictable one if the new session is worth more (``tryEvict``): a new session may evict
        one that is not privileged when it is privileged, one idle longer than ``eviction_ms``,
        or one older than that with fewer partitions."""
        if not self.sessions:
            return False
        stale = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stale.last_used_ms > self.eviction_ms:
            self._evict(stale)
            return True
        candidates = [
            s for s in self.sessions.values()
            if (s.evictable_by_privileged if privileged else s.evictable_by_all)
        ]
        if not candidates:
            return False
        least = min(candidates, key=FetchSession.evictable_key)
        # The new session's key has id 0, below every session's: it must be worth strictly more.
        if (privileged, size, INVALID_SESSION_ID) < least.evictable_key():
            return False
        self._evict(least)
        return True

    def _evict(self, session: FetchSession) -> None:
        self.remove(session.id)
        self.evictions += 1

    def remove(self, session_id: int) -> FetchSession | None:
        return self.sessions.pop(session_id, None)

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """Mark ``session`` used at ``now_ms`` and record its size and which new sessions may
        evict it, as of now (``FetchSessionCacheShard.touch``)."""
        session.last_used_ms = now_ms
        session.cached_size = len(session.partitions)
        old = now_ms - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = not session.privileged or old
        session.evictable_by_all = old


class FetchSessionCache:
    """The sessions of a broker, in :data:`NUM_FETCH_SESSION_CACHE_SHARDS` shards of
    ``max_slots // shards`` sessions (Kafka's ``FetchSessionCache``)."""

    def __init__(
        self, max_slots: int, *, shards: int = NUM_FETCH_SESSION_CACHE_SHARDS,
        eviction_ms: int = MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS,
        rng: random.Random | None = None,
    ) -> None:
        rng = rng if rng is not None else random.Random()
        session_id_range = INT32_MAX // shards
        self.shards = [
            FetchSessionCacheShard(max_slots // shards, eviction_ms, session_id_range, n, rng)
            for n in range(shards)
        ]
        self._next_shard = itertools.cycle(self.shards)

    def shard_of(self, session_id: int) -> FetchSessionCacheShard | None:
        """The shard owning ``session_id``, or None for an id no shard owns."""
        index = session_id // self.shards[0].session_id_range
        return self.shards[index] if 0 <= index < len(self.shards) else None

    def next_shard(self) -> FetchSessionCacheShard:
        """The shard a new session goes to: each in turn."""
        return next(self._next_shard)

    def get(self, session_id: int) -> FetchSession | None:
        shard = self.shard_of(session_id)
        return None if shard is None else shard.get(session_id)

    def remove(self, session_id: int) -> FetchSession | None:
        shard = self.shard_of(session_id)
        return None if shard is None else shard.remove(session_id)

    def __len__(self) -> int:
        return sum(len(shard.sessions) for shard in self.shards)

    @property
    def total_partitions(self) -> int:
        return sum(s.cached_size for shard in self.shards for s in shard.sessions.values())

    @property
    def evictions(self) -> int:
        return sum(shard.evictions for shard in self.shards)


class FetchContext:
    """What a Fetch reads and how its answer is made, by the kind of request (Kafka's
    ``FetchContext``)."""

    error: Errors | None = None
    """The session error that answers the whole request, or None."""

    def partitions_to_read(self) -> list[tuple[TopicKey, PartitionRequest]]:
        """The partitions to read from the log, in the order the answer lists them."""
        raise NotImplementedError

    def respond(self, results: Mapping[TopicKey, R]) -> FetchAnswer[R]:
        """The answer to ``results`` (each partition read, in order): its session id and the
        partitions it holds. Creates or updates the session."""
        raise NotImplementedError


class SessionErrorContext(FetchContext):
    """A request whose session cannot be used: answered with the error alone."""

    def __init__(self, error: Errors) -> None:
        self.error = self._error = error

    def partitions_to_read(self) -> list[tuple[TopicKey, PartitionRequest]]:
        return []

    def respond(self, results: Mapping[TopicKey, R]) -> FetchAnswer[R]:
        return FetchAnswer(self._error, INVALID_SESSION_ID, [])


class SessionlessFetchContext(FetchContext):
    """A request that wants no session: every partition read is answered."""

    def __init__(self, fetch_data: Mapping[TopicKey, PartitionRequest]) -> None:
        self.fetch_data = fetch_data

    def partitions_to_read(self) -> list[tuple[TopicKey, PartitionRequest]]:
        return list(self.fetch_data.items())

    def respond(self, results: Mapping[TopicKey, R]) -> FetchAnswer[R]:
        return FetchAnswer(Errors.NONE, INVALID_SESSION_ID, list(results.items()))


class FullFetchContext(FetchContext):
    """A full request that asks for a session: every partition read is answered, and the
    answer creates a session holding them if the cache makes room."""

    def __init__(
        self, clock_ms: Callable[[], int], cache: FetchSessionCache,
        fetch_data: Mapping[TopicKey, PartitionRequest], uses_topic_ids: bool, is_follower: bool,
    ) -> None:
        self._clock_ms = clock_ms
        self._cache = cache
        self.fetch_data = fetch_data
        self.uses_topic_ids = uses_topic_ids
        self.is_follower = is_follower

    def partitions_to_read(self) -> list[tuple[TopicKey, PartitionRequest]]:
        return list(self.fetch_data.items())

    def respond(self, results: Mapping[TopicKey, R]) -> FetchAnswer[R]:
        def create_partitions() -> dict[tuple[str | UUID | None, int], CachedPartition]:
            partitions = {}
            for key, result in results.items():
                request = self.fetch_data.get(key)
                if request is not None:
                    partitions[_identity(key)] = CachedPartition(
                        key, request, result.high_watermark, result.log_start_offset
                    )
            return partitions

        session_id = self._cache.next_shard().maybe_create_session(
            self._clock_ms(), self.is_follower, len(results), self.uses_topic_ids,
            create_partitions,
        )
        return FetchAnswer(Errors.NONE, session_id, list(results.items()))


class IncrementalFetchContext(FetchContext):
    """An incremental request: every partition of the session is read; the answer holds those
    with something new."""

    def __init__(self, request_epoch: int, session: FetchSession, topic_names: Mapping[UUID, str]) -> None:
        self.request_epoch = request_epoch
        self.session = session
        self.topic_names = topic_names

    def partitions_to_read(self) -> list[tuple[TopicKey, PartitionRequest]]:
        read = []
        for cached in self.session.partitions.values():
            # A topic id unknown when it was added may have been created since.
            if self.session.uses_topic_ids and cached.key.topic is None:
                cached.key = cached.key._replace(topic=self.topic_names.get(cached.key.topic_id))
            read.append((cached.key, cached.request))
        return read

    def respond(self, results: Mapping[TopicKey, R]) -> FetchAnswer[R]:
        session = self.session
        if session.epoch != next_epoch(self.request_epoch):
            # Another request of the session came between this one and its answer.
            return FetchAnswer(Errors.INVALID_FETCH_SESSION_EPOCH, session.id, [])
        answered = []
        for key, result in results.items():
            cached = session.partitions.get(_identity(key))
            if cached is None or not cached.maybe_update_response_data(result, update=True):
                continue
            answered.append((key, result))
            if _records_size(result) > 0:
                # Move it behind the others, so they are read first next time.
                session.partitions[_identity(key)] = session.partitions.pop(_identity(key))
        return FetchAnswer(Errors.NONE, session.id, answered)


class FetchManager:
    """Turns a Fetch request's session id and epoch into its :class:`FetchContext` (Kafka's
    ``FetchManager.newContext``), over a cache of ``max_slots`` sessions
    (``max.incremental.fetch.session.cache.slots``; 0 disables sessions)."""

    def __init__(
        self, max_slots: int, clock_ms: Callable[[], int], *,
        shards: int = NUM_FETCH_SESSION_CACHE_SHARDS,
        eviction_ms: int = MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS,
        rng: random.Random | None = None,
    ) -> None:
        self.cache = FetchSessionCache(max_slots, shards=shards, eviction_ms=eviction_ms, rng=rng)
        self.clock_ms = clock_ms

    def topic_deleted(self, name: str, topic_id: UUID) -> None:
        """A topic was deleted: every session drops what it knew of its partitions. Those of
        sessions that name topics by id no longer resolve to the name (they answer
        UNKNOWN_TOPIC_ID from now on, as the id is unknown, even once a topic of the same
        name is created again, which has another id); in sessions that name topics by name
        they answer UNKNOWN_TOPIC_OR_PARTITION while no topic has the name. Either way the
        next answer includes them."""
        for shard in self.cache.shards:
            for session in shard.sessions.values():
                for cached in session.partitions.values():
                    if session.uses_topic_ids:
                        if cached.key.topic_id != topic_id:
                            continue
                        cached.key = cached.key._replace(topic=None)
                    elif cached.key.topic != name:
                        continue
                    cached.high_watermark = INVALID_HIGH_WATERMARK
                    cached.local_log_start_offset = -1

    def new_context(
        self, session_id: int, epoch: int, partitions: Iterable[tuple[TopicKey, PartitionRequest]],
        forgotten: Iterable[TopicKey], uses_topic_ids: bool, is_follower: bool,
        topic_names: Mapping[UUID, str] | None = None,
    ) -> FetchContext:
        """The context of a request: ``partitions`` and ``forgotten`` as the request names them
        (a partition named twice counts once, with its last parameters), ``uses_topic_ids`` for
        version 13 and later, ``is_follower`` for a replica's fetch, ``topic_names`` to name the
        session's partitions whose topic id was unknown when they were added."""
        fetch_data = dict(partitions)
        if is_full(epoch):
            if session_id != INVALID_SESSION_ID:
                self.cache.remove(session_id)
            if epoch == FINAL_EPOCH:
                return SessionlessFetchContext(fetch_data)
            return FullFetchContext(self.clock_ms, self.cache, fetch_data, uses_topic_ids, is_follower)
        shard = self.cache.shard_of(session_id)
        session = None if shard is None else shard.get(session_id)
        if shard is None or session is None:
            return SessionErrorContext(Errors.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return SessionErrorContext(Errors.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return SessionErrorContext(Errors.FETCH_SESSION_TOPIC_ID_ERROR)
        session.update(fetch_data, forgotten)
        if not session.partitions:
            shard.remove(session.id)
            return SessionlessFetchContext(fetch_data)
        shard.touch(session, self.clock_ms())
        session.epoch = next_epoch(session.epoch)
        return IncrementalFetchContext(epoch, session, topic_names or {})
