"""The consumer group protocol (KIP-848) in process: reassigning a large group, and steady-state
heartbeats side by side with the classic protocol.

A consumer group of N members subscribed to 4 topics of P partitions each (full scale: 1,000
members, 4 x 1,000 = 4,000 partitions, so that both assignors give every member 4 partitions),
every member stable, is loaded into a fresh coordinator before each round; its members' ids are
random UUIDs, as clients make them, so a new member sorts among the others.

* ``assign-ASSIGNOR-CHANGE``: the one heartbeat that computes the group's new target
  assignment after a membership change, with every member's ``server_assignor`` ASSIGNOR
  (``uniform`` or ``range``). CHANGE ``join``: a new member's first heartbeat, which bumps
  the group epoch and computes at once; ``leave``: a member leaves (not timed), then the next
  member's heartbeat computes.
* ``reconcile-ASSIGNOR-CHANGE``: the same change then the whole reconciliation, timed from
  the join or leave until every member is stable at the new epoch: every member heartbeats
  once, reporting what it owns, then those not yet stable again until none is left.
  ``extra_info["heartbeats"]`` counts the heartbeats (the join or leave included),
  ``extra_info["moved"]`` the partitions that changed owner.
* ``steady``: N stable members heartbeat round robin with nothing to change (no record
  written): ConsumerGroupHeartbeat of the consumer group against Heartbeat of a Stable classic
  group of N members in the same coordinator, on the same Rust purgatory. A pass is one
  heartbeat of every member of one group; the passes of the two protocols alternate, ten each
  a round, and ``extra_info`` holds each protocol's median pass per heartbeat
  (``consumer_ns``, ``classic_ns``).

``group.consumer.assignment.interval.ms`` is 0, so every group epoch bump computes a target
assignment at once. Appends go to the in-memory log and complete after each request; time is a
mock clock. ``GROUPCOORD_BENCH_SCALE=smoke`` shrinks N and P to 20;
``benches/report_consumer_protocol.py`` prints the tables.
"""

from __future__ import annotations

import random
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from time import perf_counter
from typing import Any

import pytest
from bench_coordinator import Bench
from conftest import scaled

from groupcoord.coordinator.consumer.group import ConsumerGroup, ConsumerGroupState
from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupHeartbeat, ConsumerGroupHeartbeatResult
from groupcoord.coordinator.consumer.member import MemberState
from groupcoord.errors import Errors
from groupcoord.format import codec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "coordinator"))
from consumer_context import Topics  # noqa: E402  (the tests' topic metadata)

MEMBERS = scaled(1000, 20)
TOPICS = 4
PARTITIONS = scaled(1000, 20)
"""Partitions per topic."""
GROUP = "consumer-group"
CLASSIC_GROUP = "classic-group"
ASSIGNORS = ["uniform", "range"]
CHANGES = ["join", "leave"]
REBALANCE_TIMEOUT_MS = 300_000
SETUP_ASSIGNMENT_INTERVAL_MS = 15_000
"""While the group forms, one target assignment for all its members (the largest interval
allowed), not one a join."""
PASSES = 10


def topic_metadata() -> Topics:
    return Topics({f"topic-{t}": (uuid.UUID(int=t + 1), PARTITIONS) for t in range(TOPICS)})


@dataclass
class Client:
    """What a consumer knows of itself: its id, its epoch and the partitions it owns."""

    member_id: str
    epoch: int = 0
    owned: dict[uuid.UUID, list[int]] = field(default_factory=dict)

    def copy(self) -> Client:
        return Client(self.member_id, self.epoch, dict(self.owned))


@dataclass(frozen=True)
class Snapshot:
    """A stable group's records, as a :class:`~groupcoord.log.PartitionReader`, and its clients."""

    partition: int
    records: Sequence[codec.OffsetsRecord]
    clients: Sequence[Client]

    def read(self, partition: int) -> Iterator[Sequence[codec.OffsetsRecord]]:
        if partition == self.partition:
            yield self.records


class ConsumerBench(Bench):
    """A coordinator serving consumer groups over :func:`topic_metadata`, with a client model
    that takes what each heartbeat answers."""

    def __init__(self, reader: Snapshot | None = None, assignment_interval_ms: int = 0) -> None:
        super().__init__("rust", {"group.consumer.assignment.interval.ms": assignment_interval_ms}, reader)
        self.topics = topic_metadata()
        self.coordinator.use_topic_metadata(self.topics)
        self.heartbeats = 0
        self._answers: list[ConsumerGroupHeartbeatResult] = []

    @property
    def group(self) -> ConsumerGroup:
        group = self.coordinator.manager.get_consumer_group(GROUP)
        assert group is not None
        return group

    def heartbeat(self, client: Client, **fields: Any) -> None:
        request = ConsumerGroupHeartbeat(GROUP, client.member_id, client.epoch, client_id="client",
                                         client_host="/127.0.0.1", **fields)
        self.coordinator.handle_consumer_group_heartbeat(request, 1, self._answers.append)
        self.log.complete_pending()
        answer = self._answers.pop()
        assert answer.error is Errors.NONE, answer
        self.heartbeats += 1
        client.epoch = answer.member_epoch
        if answer.assignment is not None:
            client.owned = {t: list(ps) for t, ps in answer.assignment.items()}

    def join(self, client: Client, assignor: str) -> None:
        self.heartbeat(client, rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
                       subscribed_topic_names=sorted(self.topics.topic_names()),
                       server_assignor=assignor, topic_partitions={})

    def leave(self, client: Client) -> None:
        client.epoch = -1
        self.heartbeat(client)

    def reconcile(self, clients: Sequence[Client]) -> None:
        """Every member heartbeats, reporting what it owns, then those not yet stable at the
        group's epoch again, until every member is."""
        pending = list(clients)
        for _ in range(10):
            for client in pending:
                self.heartbeat(client, topic_partitions=client.owned)
            group = self.group
            pending = [c for c in clients if not _is_stable(group, c.member_id)]
            if not pending:
                return
        raise AssertionError(f"{len(pending)} members still reconciling")


def _is_stable(group: ConsumerGroup, member_id: str) -> bool:
    member = group.member(member_id)
    assert member is not None
    return member.state is MemberState.STABLE and member.member_epoch == group.group_epoch


def member_ids(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count)]


_snapshots: dict[str, Snapshot] = {}


def stable_group(assignor: str) -> Snapshot:
    """A stable group of MEMBERS members with ``assignor``, made once per assignor: every member
    joins, then one target assignment and the reconciliation of all."""
    if assignor not in _snapshots:
        bench = ConsumerBench(assignment_interval_ms=SETUP_ASSIGNMENT_INTERVAL_MS)
        clients = [Client(m) for m in member_ids(MEMBERS, seed=1)]
        for client in clients:
            bench.join(client, assignor)
        bench.time.sleep(SETUP_ASSIGNMENT_INTERVAL_MS)
        bench.reconcile(clients)
        assert bench.group.state is ConsumerGroupState.STABLE
        partition = bench.coordinator.partition_for(GROUP)
        _snapshots[assignor] = Snapshot(partition, bench.log.records(partition), clients)
    return _snapshots[assignor]


def loaded(snapshot: Snapshot) -> tuple[ConsumerBench, list[Client]]:
    """A fresh coordinator that loaded the group, and a copy of its clients."""
    bench = ConsumerBench(snapshot)
    assert bench.group.state is ConsumerGroupState.STABLE
    return bench, [c.copy() for c in snapshot.clients]


NEWCOMER = member_ids(1, seed=2)[0]


def change(bench: ConsumerBench, clients: list[Client], kind: str, assignor: str) -> None:
    """The membership change: a new member joins (its heartbeat computes the new target), or
    the member in the middle leaves (the next heartbeat computes)."""
    if kind == "join":
        newcomer = Client(NEWCOMER)
        clients.append(newcomer)
        bench.join(newcomer, assignor)
    else:
        bench.leave(clients.pop(len(clients) // 2))


def owners(clients: Sequence[Client]) -> dict[tuple[uuid.UUID, int], str]:
    return {(t, p): c.member_id for c in clients for t, ps in c.owned.items() for p in ps}


@pytest.mark.parametrize("kind", CHANGES)
@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_assign(benchmark: Any, assignor: str, kind: str) -> None:
    snapshot = stable_group(assignor)
    benches: list[ConsumerBench] = []

    def setup() -> tuple[tuple[ConsumerBench, list[Client]], dict[str, Any]]:
        bench, clients = loaded(snapshot)
        benches.append(bench)
        if kind == "leave":
            change(bench, clients, kind, assignor)
        return (bench, clients), {}

    def assign(bench: ConsumerBench, clients: list[Client]) -> None:
        if kind == "join":
            change(bench, clients, kind, assignor)
        else:
            bench.heartbeat(clients[0])

    benchmark.group = f"assign-{assignor}-{kind}"
    benchmark.extra_info.update(members=MEMBERS, partitions=TOPICS * PARTITIONS)
    benchmark.pedantic(assign, setup=setup, rounds=scaled(5, 1), iterations=1)
    for bench in benches:
        group = bench.group
        assert group.assignment_epoch == group.group_epoch
        assert group.state is ConsumerGroupState.RECONCILING


@pytest.mark.parametrize("kind", CHANGES)
@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_reconcile(benchmark: Any, assignor: str, kind: str) -> None:
    snapshot = stable_group(assignor)
    runs: list[tuple[ConsumerBench, list[Client]]] = []

    def setup() -> tuple[tuple[ConsumerBench, list[Client]], dict[str, Any]]:
        runs.append(loaded(snapshot))
        return runs[-1], {}

    def reassign(bench: ConsumerBench, clients: list[Client]) -> None:
        change(bench, clients, kind, assignor)
        bench.reconcile(clients)

    benchmark.group = f"reconcile-{assignor}-{kind}"
    benchmark.pedantic(reassign, setup=setup, rounds=scaled(5, 1), iterations=1)
    before = owners(snapshot.clients)
    moved = {len(before.items() - owners(clients).items()) for _, clients in runs}
    heartbeats = {bench.heartbeats for bench, _ in runs}
    assert len(moved) == len(heartbeats) == 1, (moved, heartbeats)
    for bench, clients in runs:
        assert bench.group.state is ConsumerGroupState.STABLE
        assert len(owners(clients)) == TOPICS * PARTITIONS
    benchmark.extra_info.update(members=MEMBERS, partitions=TOPICS * PARTITIONS,
                                heartbeats=heartbeats.pop(), moved=moved.pop())


def test_steady_heartbeats(benchmark: Any) -> None:
    """Both protocols in one coordinator, one pass over the members each in turn, so that both
    see the same load of a shared machine; a round is PASSES passes of each."""
    bench, clients = loaded(stable_group("uniform"))
    classic = bench.rebalance([CLASSIC_GROUP], MEMBERS)
    coordinator = bench.coordinator
    errors: list[Errors] = []
    results: list[ConsumerGroupHeartbeatResult] = []
    requests = [ConsumerGroupHeartbeat(GROUP, c.member_id, c.epoch, client_id="client", client_host="/127.0.0.1")
                for c in clients]
    seconds: dict[str, list[float]] = {"consumer": [], "classic": []}

    def consumer_pass() -> None:
        handle, answered = coordinator.handle_consumer_group_heartbeat, results.append
        started = perf_counter()
        for request in requests:
            handle(request, 1, answered)
        seconds["consumer"].append(perf_counter() - started)

    def classic_pass() -> None:
        handle, answered = coordinator.handle_heartbeat, errors.append
        started = perf_counter()
        for group_id, member_id, generation in classic:
            handle(group_id, member_id, None, generation, answered)
        seconds["classic"].append(perf_counter() - started)

    def round_() -> None:
        for _ in range(PASSES):
            bench.time.sleep(1)
            consumer_pass()
            classic_pass()

    consumer_pass()  # after a load, the first heartbeats refresh the group's topic metadata
    bench.log.complete_pending()
    results.clear()
    seconds["consumer"].clear()
    written = len(bench.log.records(coordinator.partition_for(GROUP)))
    benchmark.group = "steady"
    benchmark.pedantic(round_, rounds=scaled(10, 1), iterations=1)
    assert bench.log.pending == 0  # answered at once: nothing to write
    assert len(bench.log.records(coordinator.partition_for(GROUP))) == written
    assert len(results) == len(errors) == len(seconds["consumer"]) * MEMBERS
    assert {r.error for r in results} == {Errors.NONE} and set(errors) == {Errors.NONE}
    assert bench.group.state is ConsumerGroupState.STABLE
    benchmark.extra_info.update(
        members=MEMBERS, passes=len(seconds["consumer"]),
        **{f"{protocol}_ns": round(median(s) / MEMBERS * 1e9) for protocol, s in seconds.items()})
