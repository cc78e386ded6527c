"""aiokafka 0.14.0 against ``groupcoord serve``, over real sockets: groups form and
rebalance, offsets round-trip, sessions expire, static members come back, the server
restarts, and the admin client lists and describes groups and lists their offsets (aiokafka
has no cooperative assignor, no delete-groups call and no admin list-offsets; its consumer's
``end_offsets`` stands in for the latter)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import OffsetAndMetadata
from client_support import (
    PARTITIONS,
    SESSION_TIMEOUT_MS,
    TOPIC,
    WAIT_S,
    ConsumerProcess,
    is_disjoint_cover,
)
from server_process import ServerProcess

pytestmark = [pytest.mark.timeout(120), pytest.mark.clients]


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 100))


def make(target: ServerProcess, group: str, *, topics: Sequence[str] = (TOPIC,),
         **config: Any) -> AIOKafkaConsumer:
    settings: dict[str, Any] = {
        "bootstrap_servers": target.bootstrap, "group_id": group, "enable_auto_commit": False,
        "session_timeout_ms": SESSION_TIMEOUT_MS, "heartbeat_interval_ms": 200,
        "fetch_max_wait_ms": 100, **config,
    }
    return AIOKafkaConsumer(*topics, **settings)


async def started(*consumers: AIOKafkaConsumer) -> list[AIOKafkaConsumer]:
    for consumer in consumers:
        await consumer.start()
    return list(consumers)


async def poll_until(consumers: Sequence[AIOKafkaConsumer], condition: Callable[[], bool],
                     what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}: "
                                 f"{[partitions_of(c) for c in consumers]}")
        await asyncio.gather(*(c.getmany(timeout_ms=20) for c in consumers))


def partitions_of(consumer: AIOKafkaConsumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def settled(consumers: Sequence[AIOKafkaConsumer]) -> Callable[[], bool]:
    return lambda: is_disjoint_cover([partitions_of(c) for c in consumers], PARTITIONS)


async def stop(*consumers: AIOKafkaConsumer) -> None:
    for consumer in consumers:
        await consumer.stop()


def test_three_consumers_get_disjoint_assignments_covering_every_partition(server):
    async def test() -> None:
        group = await started(*(make(server, "ak-three") for _ in range(3)))
        try:
            await poll_until(group, settled(group), "three consumers to share six partitions")
            assert sorted(len(partitions_of(c)) for c in group) == [2, 2, 2]
        finally:
            await stop(*group)

    run(test)


def test_commits_and_fetches_round_trip(server):
    async def test() -> None:
        consumer, other = await started(make(server, "ak-commit"), make(server, "ak-commit", topics=()))
        try:
            await poll_until([consumer], settled([consumer]), "the consumer to get every partition")
            offsets = {TopicPartition(TOPIC, p): OffsetAndMetadata(100 + p, f"meta-{p}")
                       for p in range(PARTITIONS)}
            await consumer.commit(offsets)
            for tp, committed in offsets.items():
                assert await consumer.committed(tp) == committed.offset
            assert await other.committed(TopicPartition(TOPIC, 3)) == 103
        finally:
            await stop(consumer, other)

    run(test)


def test_a_consumer_that_closes_triggers_a_rebalance(server):
    async def test() -> None:
        first, second = await started(make(server, "ak-close"), make(server, "ak-close"))
        try:
            await poll_until([first, second], settled([first, second]),
                             "two consumers to share the partitions")
            before = server.rebalances()
            await second.stop()
            await poll_until([first], lambda: partitions_of(first) == set(range(PARTITIONS)),
                             "the remaining consumer to take every partition")
            assert server.rebalances() > before
        finally:
            await stop(first)

    run(test)


def test_a_killed_consumer_is_expired_after_its_session_timeout(server):
    async def test() -> None:
        (survivor,) = await started(make(server, "ak-kill"))
        victim = ConsumerProcess("aiokafka", server.bootstrap, "ak-kill", TOPIC)
        try:
            await poll_until([survivor], victim.current, "the consumer process to get partitions")
            await poll_until(
                [survivor],
                lambda: is_disjoint_cover([partitions_of(survivor), victim.current()], PARTITIONS),
                "the survivor and the process to share the partitions",
            )
            killed_at = victim.kill()
            await poll_until([survivor], lambda: partitions_of(survivor) == set(range(PARTITIONS)),
                             "the survivor to take the killed consumer's partitions")
            assert time.monotonic() - killed_at > SESSION_TIMEOUT_MS / 1000 * 0.6
        finally:
            victim.close()
            await stop(survivor)

    run(test)


def test_a_static_member_restarts_without_a_rebalance(server):
    async def test() -> None:
        static = {"session_timeout_ms": 10_000}
        a, b = await started(make(server, "ak-static", group_instance_id="a", **static),
                             make(server, "ak-static", group_instance_id="b", **static))
        again = make(server, "ak-static", group_instance_id="a", **static)
        try:
            await poll_until([a, b], settled([a, b]), "two static members to share the partitions")
            held_by_a, held_by_b = partitions_of(a), partitions_of(b)
            rebalances = server.rebalances()
            await a.stop()  # a static member sends no LeaveGroup
            await again.start()
            await poll_until([again, b], lambda: partitions_of(again) == held_by_a,
                             "the restarted static member to get its partitions back")
            assert partitions_of(b) == held_by_b
            assert server.rebalances() == rebalances
        finally:
            await stop(b, again)

    run(test)


def test_admin_lists_describes_and_lists_offsets_of_groups(server):
    async def test() -> None:
        (member,) = await started(make(server, "ak-admin"))
        admin = AIOKafkaAdminClient(bootstrap_servers=server.bootstrap)
        await admin.start()
        try:
            await poll_until([member], settled([member]), "the consumer to join")
            await member.commit({TopicPartition(TOPIC, 1): OffsetAndMetadata(7, "")})
            assert ("ak-admin", "consumer") in await admin.list_consumer_groups()
            (described,) = await admin.describe_consumer_groups(["ak-admin"])
            (group,) = described.groups
            assert group[0] == 0 and group[1] == "ak-admin" and group[2] == "Stable"
            assert [m[0] for m in group[5]] == [member._coordinator.member_id]
            offsets = await admin.list_consumer_group_offsets("ak-admin")
            assert offsets == {TopicPartition(TOPIC, 1): OffsetAndMetadata(7, "")}
            ends = await member.end_offsets([TopicPartition(TOPIC, 0)])
            assert ends == {TopicPartition(TOPIC, 0): 0}
        finally:
            await admin.close()
            await stop(member)

    run(test)


def test_a_server_restart_keeps_groups_and_offsets(fresh_server):
    async def test() -> None:
        fresh_server.start()
        (consumer,) = await started(make(fresh_server, "ak-restart", session_timeout_ms=20_000,
                                         retry_backoff_ms=100))
        tp = TopicPartition(TOPIC, 2)
        try:
            await poll_until([consumer], settled([consumer]), "the consumer to join")
            await consumer.commit({tp: OffsetAndMetadata(42, "before restart")})
            member_id = consumer._coordinator.member_id
            assert await asyncio.to_thread(fresh_server.stop) == 0
            await asyncio.to_thread(fresh_server.start, 30.0, fresh_server.port)
            committed: list[int | None] = []

            async def fetched() -> None:
                committed.append(await consumer.committed(tp))

            deadline = time.monotonic() + WAIT_S
            while not committed or committed[-1] != 42:
                assert time.monotonic() < deadline, f"committed after the restart: {committed[-3:]}"
                try:
                    await asyncio.wait_for(fetched(), 5)
                except Exception:  # noqa: BLE001 - the coordinator comes back
                    await asyncio.sleep(0.2)
            admin = AIOKafkaAdminClient(bootstrap_servers=fresh_server.bootstrap)
            await admin.start()
            try:
                (described,) = await admin.describe_consumer_groups(["ak-restart"])
            finally:
                await admin.close()
            (group,) = described.groups
            assert group[2] == "Stable"
            assert [m[0] for m in group[5]] == [member_id]
        finally:
            await stop(consumer)
        assert fresh_server.stop() == 0

    run(test)
