"""Coordinator benchmarks, in process, with the Rust purgatory (``rust``) and the pure-Python
twin (``python``) injected into the same coordinator.

* ``heartbeats-N``: N members (groups of 100, Stable) heartbeat round robin; one round is one
  heartbeat from every member. Each heartbeat moves the member's session deadline in the
  purgatory.
* ``rebalance-M-in-G``: M members in G groups form their first generation, as real clients do:
  JoinGroup (MEMBER_ID_REQUIRED), JoinGroup again, the join completes, the leaders' SyncGroup
  writes the assignment, every follower's SyncGroup answers. One round is the whole rebalance.
* ``load-G``: G groups with an offset each over the default 50 partitions, every partition
  loaded by a fresh coordinator (as at startup) and unloaded.

Appends go to the in-memory log and complete after each request (no disk); time is a mock
clock moved by hand: the initial rebalance delay passes without waiting.
Full scale is the issue's: 10,000 and 100,000 members heartbeating; rebalances of 10, 100 and
1,000 members in one group and of 10,000 members in 100 groups; 100,000 groups loaded.
``GROUP_COORDINATOR_BENCH_SCALE=smoke`` shrinks them. ``benchmark.extra_info`` holds ``ops``
(heartbeats or members per round); ``benches/report_coordinator.py`` prints the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from conftest import scaled

from groupcoord.config import Config
from groupcoord.coordinator import (
    GroupCoordinator,
    GroupState,
    JoinGroupResult,
    MockTime,
    OffsetAndMetadata,
    TopicPartition,
)
from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.log import PartitionReader
from groupcoord.log.memory import InMemoryLog
from groupcoord.purgatory import IMPLEMENTATIONS

IMPL_IDS = ["rust", "python"]
GROUP_SIZE = 100
SUBSCRIPTION = codec.encode_subscription(codec.ConsumerProtocolSubscription(["orders", "payments"]))
PROTOCOLS = [("range", SUBSCRIPTION)]
JOIN: dict[str, Any] = dict(
    group_instance_id=None, require_known_member_id=True, support_skipping_assignment=True,
    client_id="client", client_host="host", rebalance_timeout_ms=30_000, session_timeout_ms=30_000,
    protocol_type="consumer", protocols=PROTOCOLS,
)
SYNC: dict[str, Any] = dict(protocol_type=None, protocol_name=None, group_instance_id=None)


class Bench:
    """A coordinator owning every partition, on a mock clock and an in-memory log."""

    def __init__(self, impl: str, settings: Mapping[str, Any] | None = None,
                 reader: PartitionReader | None = None) -> None:
        """``settings`` override the coordinator's; its partitions load from ``reader`` (by
        default the empty in-memory log it writes to)."""
        self.time = MockTime()
        self.log = InMemoryLog()
        config = Config.from_properties({"offsets.topic.num.partitions": 8, **(settings or {})})
        self.initial_delay_ms = config.group_initial_rebalance_delay_ms
        self.coordinator = GroupCoordinator(config, self.log, self.time, purgatory=IMPLEMENTATIONS[impl])
        self.coordinator.startup(enable_metadata_expiration=False)
        for partition in range(config.offsets_topic_num_partitions):
            self.coordinator.load_partition(partition, reader or self.log)

    def rebalance(self, group_ids: list[str], members_per_group: int) -> list[tuple[str, str, int]]:
        """Form every group's first generation; returns (group, member id, generation) per member."""
        c = self.coordinator
        joined: list[tuple[str, JoinGroupResult]] = []
        pending: list[tuple[str, list[JoinGroupResult]]] = []
        for group_id in group_ids:
            ids: list[JoinGroupResult] = []
            for _ in range(members_per_group):
                c.handle_join_group(group_id, "", **JOIN, callback=ids.append)
            pending.append((group_id, ids))
        answers: list[tuple[str, list[JoinGroupResult]]] = []
        for group_id, ids in pending:
            results: list[JoinGroupResult] = []
            for first in ids:
                assert first.error == Errors.MEMBER_ID_REQUIRED
                c.handle_join_group(group_id, first.member_id, **JOIN, callback=results.append)
            answers.append((group_id, results))
        # The initial rebalance delay passes (once more for the members that joined during it).
        for _ in range(10):
            if all(len(results) == members_per_group for _, results in answers):
                break
            self.time.sleep(self.initial_delay_ms)
            c.poll()
        for group_id, results in answers:
            assert len(results) == members_per_group
            leader = next(r for r in results if r.leader_id == r.member_id)
            synced: list[Any] = []
            assignment = {r.member_id: b"" for r in results}
            c.handle_sync_group(group_id, leader.generation_id, leader.member_id, **SYNC, assignment=assignment,
                                callback=synced.append)
            self.log.complete_pending()
            for r in results:
                if r is not leader:
                    c.handle_sync_group(group_id, r.generation_id, r.member_id, **SYNC, assignment={},
                                        callback=synced.append)
            assert len(synced) == members_per_group
            joined.extend((group_id, r.member_id, r.generation_id) for r in results)
        return joined


@pytest.fixture(params=IMPL_IDS)
def impl(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("members", [scaled(10_000, 200), scaled(100_000, 400)])
def test_heartbeats(benchmark: Any, impl: str, members: int) -> None:
    bench = Bench(impl)
    groups = [f"group-{i}" for i in range(members // GROUP_SIZE)]
    joined = bench.rebalance(groups, GROUP_SIZE)
    handle = bench.coordinator.handle_heartbeat
    errors: list[Errors] = []
    answer = errors.append

    def round_() -> None:
        bench.time.sleep(1)
        for group_id, member_id, generation in joined:
            handle(group_id, member_id, None, generation, answer)

    benchmark.group = f"heartbeats-{members}"
    benchmark.extra_info.update(ops=members)
    benchmark.pedantic(round_, rounds=scaled(5, 1), iterations=1)
    assert set(errors) == {Errors.NONE}
    assert all(g.state is GroupState.STABLE for g in bench.coordinator.manager.current_groups())


@pytest.mark.parametrize(
    ("members", "groups"),
    [(10, 1), (scaled(100, 50), 1), (scaled(1000, 100), 1), (scaled(10_000, 200), scaled(100, 4))],
)
def test_rebalance(benchmark: Any, impl: str, members: int, groups: int) -> None:
    group_ids = [f"group-{i}" for i in range(groups)]
    benches: list[Bench] = []

    def setup() -> tuple[tuple[Bench], dict[str, Any]]:
        bench = Bench(impl)
        benches.append(bench)
        return (bench,), {}

    def rebalance(bench: Bench) -> None:
        bench.rebalance(group_ids, members // groups)

    benchmark.group = f"rebalance-{members}-in-{groups}"
    benchmark.extra_info.update(ops=members)
    benchmark.pedantic(rebalance, setup=setup, rounds=scaled(5, 1), iterations=1)
    for bench in benches:
        assert {g.state for g in bench.coordinator.manager.current_groups()} == {GroupState.STABLE}
        assert sum(g.size for g in bench.coordinator.manager.current_groups()) == members


@pytest.mark.parametrize("groups", [scaled(100_000, 500)])
def test_load_and_unload(benchmark: Any, impl: str, groups: int) -> None:
    """``load-G``: G groups with one committed offset each, spread over the default 50
    partitions, loaded by a fresh coordinator as at startup, then unloaded. One round is every
    partition loaded and unloaded."""
    time, log, config = MockTime(), InMemoryLog(), Config()
    partitions = range(config.offsets_topic_num_partitions)
    writer = GroupCoordinator(config, log, time, purgatory=IMPLEMENTATIONS[impl])
    writer.startup(enable_metadata_expiration=False)
    for partition in partitions:
        writer.load_partition(partition, log)
    answers: list[Any] = []
    for i in range(groups):
        writer.handle_commit_offsets(f"consumer-group-{i:07d}", "", None, -1,
                                     {TopicPartition("orders", 0): OffsetAndMetadata(i, "", 1)}, answers.append)
    log.complete_pending()
    assert [e for answer in answers for e in answer.values()] == [Errors.NONE] * groups

    def load_and_unload() -> int:
        coordinator = GroupCoordinator(config, log, time, purgatory=IMPLEMENTATIONS[impl])
        coordinator.startup(enable_metadata_expiration=False)
        for partition in partitions:
            coordinator.load_partition(partition, log)
        loaded = len(coordinator.manager.current_groups())
        for partition in partitions:
            coordinator.unload_partition(partition)
        return loaded

    benchmark.group = f"load-{groups}"
    benchmark.extra_info.update(ops=groups)
    assert benchmark.pedantic(load_and_unload, rounds=scaled(3, 1), iterations=1) == groups
