"""confluent-kafka 2.16.1 (librdkafka 2.16.0) against ``groupcoord serve``, over real sockets:
groups form and rebalance (eager and cooperative-sticky), offsets round-trip, sessions expire,
static members come back, the server restarts, and the admin client lists, describes, lists
offsets of, alters offsets of and deletes groups."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from client_support import (
    PARTITIONS,
    SESSION_TIMEOUT_MS,
    TOPIC,
    WAIT_S,
    ConsumerProcess,
    is_disjoint_cover,
)
from confluent_kafka import ConsumerGroupTopicPartitions, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from server_process import ServerProcess

pytestmark = [pytest.mark.timeout(120), pytest.mark.clients]


def config_for(group: str, target: ServerProcess, **config: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": target.bootstrap, "group.id": group, "enable.auto.commit": False,
        "session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": 200,
        "fetch.wait.max.ms": 100, "reconnect.backoff.max.ms": 200, **config,
    }


@pytest.fixture
def consumers(server: ServerProcess) -> Iterator[Callable[..., Consumer]]:
    made: list[Consumer] = []

    def make(group: str, *, subscribe: bool = True, **config: Any) -> Consumer:
        consumer = Consumer(config_for(group, server, **config))
        if subscribe:
            consumer.subscribe([TOPIC])
        made.append(consumer)
        return consumer

    yield make
    for consumer in made:
        try:
            consumer.close()
        except RuntimeError:  # already closed by the test
            pass


def poll_until(consumers: Sequence[Consumer], condition: Callable[[], bool], what: str,
               timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}: "
                                 f"{[partitions_of(c) for c in consumers]}")
        for consumer in consumers:
            consumer.poll(0.02)


def partitions_of(consumer: Consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def settled(consumers: Sequence[Consumer]) -> Callable[[], bool]:
    return lambda: is_disjoint_cover([partitions_of(c) for c in consumers], PARTITIONS)


def admin_of(server: ServerProcess) -> AdminClient:
    return AdminClient({"bootstrap.servers": server.bootstrap})


def test_three_consumers_get_disjoint_assignments_covering_every_partition(consumers):
    group = [consumers("ck-three") for _ in range(3)]
    poll_until(group, settled(group), "three consumers to share six partitions")
    assert sorted(len(partitions_of(c)) for c in group) == [2, 2, 2]


def test_commits_and_fetches_round_trip(consumers):
    consumer = consumers("ck-commit")
    poll_until([consumer], settled([consumer]), "the consumer to get every partition")
    offsets = [TopicPartition(TOPIC, p, 100 + p, metadata=f"meta-{p}") for p in range(PARTITIONS)]
    consumer.commit(offsets=offsets, asynchronous=False)
    committed = consumer.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=10)
    assert [(tp.partition, tp.offset, tp.metadata) for tp in committed] == [
        (p, 100 + p, f"meta-{p}") for p in range(PARTITIONS)
    ]
    other = consumers("ck-commit", subscribe=False)
    assert other.committed([TopicPartition(TOPIC, 3)], timeout=10)[0].offset == 103


def test_a_consumer_that_closes_triggers_a_rebalance(consumers, server):
    first, second = consumers("ck-close"), consumers("ck-close")
    poll_until([first, second], settled([first, second]), "two consumers to share the partitions")
    before = server.rebalances()
    second.close()
    poll_until([first], lambda: partitions_of(first) == set(range(PARTITIONS)),
               "the remaining consumer to take every partition")
    assert server.rebalances() > before


def test_a_killed_consumer_is_expired_after_its_session_timeout(consumers, server):
    survivor = consumers("ck-kill")
    victim = ConsumerProcess("confluent-kafka", server.bootstrap, "ck-kill", TOPIC)
    try:
        poll_until([survivor], victim.current, "the consumer process to get partitions")
        poll_until([survivor],
                   lambda: is_disjoint_cover([partitions_of(survivor), victim.current()], PARTITIONS),
                   "the survivor and the process to share the partitions")
        killed_at = victim.kill()
        poll_until([survivor], lambda: partitions_of(survivor) == set(range(PARTITIONS)),
                   "the survivor to take the killed consumer's partitions")
        waited = time.monotonic() - killed_at
    finally:
        victim.close()
    assert waited > SESSION_TIMEOUT_MS / 1000 * 0.6


def test_cooperative_sticky_moves_only_the_partitions_that_change_owner(consumers, server):
    revoked: list[set[int]] = []
    cooperative = {"partition.assignment.strategy": "cooperative-sticky"}
    first = consumers("ck-coop", subscribe=False, **cooperative)
    first.subscribe([TOPIC], on_revoke=lambda c, tps: revoked.append({tp.partition for tp in tps}))
    poll_until([first], lambda: partitions_of(first) == set(range(PARTITIONS)),
               "the first consumer to own every partition")
    second = consumers("ck-coop", **cooperative)
    poll_until([first, second], settled([first, second]), "two cooperative consumers to settle")
    moved = set(range(PARTITIONS)) - partitions_of(first)
    assert moved == partitions_of(second)
    assert revoked and all(r <= moved for r in revoked)
    admin = admin_of(server)  # kept referenced: a collected client never completes its futures
    described = admin.describe_consumer_groups(["ck-coop"])["ck-coop"].result(10)
    assert described.partition_assignor == "cooperative-sticky"


def test_a_static_member_restarts_without_a_rebalance(consumers, server):
    static = {"session.timeout.ms": 10_000}
    a = consumers("ck-static", **{"group.instance.id": "a"}, **static)
    b = consumers("ck-static", **{"group.instance.id": "b"}, **static)
    poll_until([a, b], settled([a, b]), "two static members to share the partitions")
    held_by_a, held_by_b = partitions_of(a), partitions_of(b)
    rebalances = server.rebalances()
    a.close()  # a static member sends no LeaveGroup
    again = consumers("ck-static", **{"group.instance.id": "a"}, **static)
    poll_until([again, b], lambda: partitions_of(again) == held_by_a,
               "the restarted static member to get its partitions back")
    assert partitions_of(b) == held_by_b
    assert server.rebalances() == rebalances


def test_admin_lists_describes_lists_offsets_of_alters_and_deletes_groups(consumers, server):
    member = consumers("ck-admin")
    poll_until([member], settled([member]), "the consumer to join")
    member.commit(offsets=[TopicPartition(TOPIC, 1, 7)], asynchronous=False)
    admin = admin_of(server)
    listed = {g.group_id: g for g in admin.list_consumer_groups().result(10).valid}
    assert listed["ck-admin"].state.name == "STABLE"
    assert not listed["ck-admin"].is_simple_consumer_group
    described = admin.describe_consumer_groups(["ck-admin"])["ck-admin"].result(10)
    assert described.state.name == "STABLE"
    assert [m.member_id for m in described.members] == [member.memberid()]
    assert {tp.partition for tp in described.members[0].assignment.topic_partitions} == set(range(PARTITIONS))
    offsets = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions("ck-admin")])["ck-admin"].result(10)
    assert [(tp.partition, tp.offset) for tp in offsets.topic_partitions] == [(1, 7)]
    ends = admin.list_offsets({TopicPartition(TOPIC, 0): OffsetSpec.latest()})
    assert ends[TopicPartition(TOPIC, 0)].result(10).offset == 0
    # Not while it has a member; once empty: alter its offsets, then delete it.
    with pytest.raises(Exception, match="NON_EMPTY_GROUP"):
        admin.delete_consumer_groups(["ck-admin"])["ck-admin"].result(10)
    member.close()
    altered = admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions("ck-admin", [TopicPartition(TOPIC, 2, 9)])])["ck-admin"].result(10)
    assert [(tp.partition, tp.offset) for tp in altered.topic_partitions] == [(2, 9)]
    admin.delete_consumer_groups(["ck-admin"])["ck-admin"].result(10)
    assert "ck-admin" not in {g.group_id for g in admin.list_consumer_groups().result(10).valid}


def test_a_server_restart_keeps_groups_and_offsets(fresh_server):
    fresh_server.start()
    consumer = Consumer(config_for("ck-restart", fresh_server, **{"session.timeout.ms": 20_000}))
    consumer.subscribe([TOPIC])
    try:
        poll_until([consumer], settled([consumer]), "the consumer to join")
        consumer.commit(offsets=[TopicPartition(TOPIC, 2, 42)], asynchronous=False)
        member_id = consumer.memberid()
        assert fresh_server.stop() == 0
        fresh_server.start(port=fresh_server.port)
        poll_until([consumer], lambda: consumer.committed([TopicPartition(TOPIC, 2)], timeout=5)[0].offset == 42,
                   "the committed offset after the restart")
        admin = admin_of(fresh_server)
        described = admin.describe_consumer_groups(["ck-restart"])["ck-restart"].result(10)
        assert described.state.name == "STABLE"
        assert [m.member_id for m in described.members] == [member_id]
    finally:
        consumer.close()
    assert fresh_server.stop() == 0
