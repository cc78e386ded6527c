"""kafka-python 3.0.12 against ``groupcoord serve``, over real sockets: groups form and
rebalance, offsets round-trip, sessions expire, static members come back, the server
restarts, and the admin client lists, describes, lists offsets of and deletes groups."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

import pytest
from client_support import (
    OTHER_TOPIC,
    PARTITIONS,
    SESSION_TIMEOUT_MS,
    TOPIC,
    WAIT_S,
    ConsumerProcess,
    is_disjoint_cover,
)
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, OffsetSpec
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.structs import OffsetAndMetadata
from server_process import ServerProcess, wait_for

T = TypeVar("T")

pytestmark = [pytest.mark.timeout(120), pytest.mark.clients]


class Polled:
    """A KafkaConsumer polled continuously by a thread of its own, as applications run it.

    kafka-python 3.0.12 must be polled without pauses while it joins: a JoinGroup/SyncGroup
    round trip that completes between two ``poll()`` calls is dropped and the member joins
    again, which restarts the rebalance (so consumers polled in turns from one thread
    rebalance forever). Calls on the consumer run on its thread (:meth:`call`).
    """

    def __init__(self, consumer: KafkaConsumer) -> None:
        self.consumer = consumer
        self.partitions: set[int] = set()
        self._calls: queue.Queue[tuple[Callable[[KafkaConsumer], Any], Future[Any]]] = queue.Queue()
        self._stop = threading.Event()
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._poll()
        except BaseException as error:  # reported by close() and call()
            self.failure = error

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.consumer.poll(timeout_ms=100)
            self.partitions = {tp.partition for tp in self.consumer.assignment()}
            while not self._calls.empty():
                call, future = self._calls.get()
                try:
                    future.set_result(call(self.consumer))
                except Exception as error:  # handed to the caller
                    future.set_exception(error)

    def call(self, function: Callable[[KafkaConsumer], T]) -> T:
        if self.failure is not None:
            raise AssertionError("the consumer's poll thread failed") from self.failure
        future: Future[T] = Future()
        self._calls.put((function, future))
        return future.result(WAIT_S)

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(WAIT_S)
        self.consumer.close(autocommit=False)
        if self.failure is not None:
            raise AssertionError("the consumer's poll thread failed") from self.failure


def config_for(group: str, target: ServerProcess, **config: Any) -> dict[str, Any]:
    return {
        "bootstrap_servers": target.bootstrap, "group_id": group, "enable_auto_commit": False,
        "session_timeout_ms": SESSION_TIMEOUT_MS, "heartbeat_interval_ms": 200,
        "fetch_max_wait_ms": 100, **config,
    }


@pytest.fixture
def consumers(server: ServerProcess) -> Iterator[Callable[..., Polled]]:
    """Make polled consumers of ``server``; those still open are closed at the end."""
    made: list[Polled] = []

    def make(group: str, *, topics: Sequence[str] = (TOPIC,), target: ServerProcess = server,
             listener: ConsumerRebalanceListener | None = None, **config: Any) -> Polled:
        consumer = KafkaConsumer(**config_for(group, target, **config))
        if topics:
            consumer.subscribe(list(topics), listener=listener)
        polled = Polled(consumer)
        made.append(polled)
        return polled

    yield make
    for polled in made:
        polled.close()


def wait_until(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    wait_for(condition, timeout, what)


def settled(consumers: Sequence[Polled]) -> Callable[[], bool]:
    return lambda: is_disjoint_cover([c.partitions for c in consumers], PARTITIONS)


def test_three_consumers_get_disjoint_assignments_covering_every_partition(consumers):
    group = [consumers("kp-three") for _ in range(3)]
    wait_until(settled(group), "three consumers to share six partitions")
    assert sorted(len(c.partitions) for c in group) == [2, 2, 2]


def test_commits_and_fetches_round_trip(consumers):
    consumer = consumers("kp-commit")
    wait_until(settled([consumer]), "the consumer to get every partition")
    offsets = {TopicPartition(TOPIC, p): OffsetAndMetadata(100 + p, f"meta-{p}", -1)
               for p in range(PARTITIONS)}
    consumer.call(lambda c: c.commit(offsets))
    for tp, committed in offsets.items():
        assert consumer.call(lambda c: c.committed(tp)) == committed.offset
        assert consumer.call(lambda c: c.committed(tp, metadata=True)).metadata == committed.metadata
    # Another consumer of the group reads the same offsets (OffsetFetch on its own connection).
    other = consumers("kp-commit", topics=())
    assert other.call(lambda c: c.committed(TopicPartition(TOPIC, 3))) == 103


def test_a_consumer_that_closes_triggers_a_rebalance(consumers, server):
    first, second = consumers("kp-close"), consumers("kp-close")
    wait_until(settled([first, second]), "two consumers to share the partitions")
    before = server.rebalances()
    second.close()
    wait_until(lambda: first.partitions == set(range(PARTITIONS)),
               "the remaining consumer to take every partition")
    assert server.rebalances() > before


def test_a_killed_consumer_is_expired_after_its_session_timeout(consumers, server):
    survivor = consumers("kp-kill")
    victim = ConsumerProcess("kafka-python", server.bootstrap, "kp-kill", TOPIC)
    try:
        wait_until(victim.current, "the consumer process to get partitions")
        wait_until(lambda: is_disjoint_cover([survivor.partitions, victim.current()], PARTITIONS),
                   "the survivor and the process to share the partitions")
        killed_at = victim.kill()
        wait_until(lambda: survivor.partitions == set(range(PARTITIONS)),
                   "the survivor to take the killed consumer's partitions")
        waited = time.monotonic() - killed_at
    finally:
        victim.close()
    # No LeaveGroup came: only the session's expiry moved the partitions.
    assert waited > SESSION_TIMEOUT_MS / 1000 * 0.6


class Recorder(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.revoked: list[set[int]] = []

    def on_partitions_revoked(self, revoked):
        self.revoked.append({tp.partition for tp in revoked})

    def on_partitions_assigned(self, assigned):
        pass


def test_cooperative_sticky_moves_only_the_partitions_that_change_owner(consumers, server):
    strategy = {"partition_assignment_strategy": [CooperativeStickyAssignor]}
    recorder = Recorder()
    first = consumers("kp-coop", listener=recorder, **strategy)
    wait_until(lambda: first.partitions == set(range(PARTITIONS)),
               "the first consumer to own every partition")
    second = consumers("kp-coop", **strategy)
    wait_until(settled([first, second]), "two cooperative consumers to settle")
    # Incremental: the first consumer gave up only what moved to the second, never all.
    moved = set(range(PARTITIONS)) - first.partitions
    assert moved == second.partitions
    assert all(revoked <= moved for revoked in recorder.revoked)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        assert admin.describe_groups(["kp-coop"])["kp-coop"]["protocol_data"] == "cooperative-sticky"
    finally:
        admin.close()


def test_a_static_member_restarts_without_a_rebalance(consumers, server):
    static = {"session_timeout_ms": 10_000}
    a = consumers("kp-static", group_instance_id="a", **static)
    b = consumers("kp-static", group_instance_id="b", **static)
    wait_until(settled([a, b]), "two static members to share the partitions")
    held_by_a, held_by_b = a.partitions, b.partitions
    rebalances = server.rebalances()
    a.close()  # a static member sends no LeaveGroup
    again = consumers("kp-static", group_instance_id="a", **static)
    wait_until(lambda: again.partitions == held_by_a,
               "the restarted static member to get its partitions back")
    assert b.partitions == held_by_b
    assert server.rebalances() == rebalances


def test_admin_lists_describes_lists_offsets_of_and_deletes_groups(consumers, server):
    member = consumers("kp-admin")
    wait_until(settled([member]), "the consumer to join")
    member.call(lambda c: c.commit({TopicPartition(TOPIC, 1): OffsetAndMetadata(7, "", -1)}))
    member_id = member.call(lambda c: c._coordinator._generation.member_id)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        listed = {g["group_id"]: g for g in admin.list_groups()}
        assert listed["kp-admin"]["group_state"] == "Stable"
        assert listed["kp-admin"]["protocol_type"] == "consumer"
        stable = {g["group_id"] for g in admin.list_groups(states_filter=["Stable"])}
        empty = {g["group_id"] for g in admin.list_groups(states_filter=["Empty"])}
        assert "kp-admin" in stable and "kp-admin" not in empty
        described = admin.describe_groups(["kp-admin"])["kp-admin"]
        assert described["group_state"] == "Stable"
        assert [m["member_id"] for m in described["members"]] == [member_id]
        offsets = admin.list_group_offsets({"kp-admin": None})["kp-admin"]
        assert offsets == {TopicPartition(TOPIC, 1): OffsetAndMetadata(7, "", -1)}
        ends = admin.list_partition_offsets({TopicPartition(TOPIC, 0): OffsetSpec.LATEST})
        assert ends[TopicPartition(TOPIC, 0)].offset == 0
        # A group with a member is not deleted; once empty it is, offsets and all.
        assert admin.delete_groups(["kp-admin"])["kp-admin"] == "NonEmptyGroupError"
        member.close()
        assert admin.delete_groups(["kp-admin"]) == {"kp-admin": "OK"}
        assert "kp-admin" not in {g["group_id"] for g in admin.list_groups()}
        assert admin.list_group_offsets({"kp-admin": None})["kp-admin"] == {}
    finally:
        admin.close()


def test_admin_deletes_offsets_of_an_empty_group(server):
    consumer = KafkaConsumer(**config_for("kp-offset-delete", server))
    try:
        consumer.commit({TopicPartition(OTHER_TOPIC, 0): OffsetAndMetadata(3, "", -1),
                         TopicPartition(OTHER_TOPIC, 1): OffsetAndMetadata(4, "", -1)})
    finally:
        consumer.close(autocommit=False)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        result = admin.delete_group_offsets("kp-offset-delete", [TopicPartition(OTHER_TOPIC, 0)])
        assert result[TopicPartition(OTHER_TOPIC, 0)].errno == 0
        remaining = admin.list_group_offsets({"kp-offset-delete": None})["kp-offset-delete"]
        assert list(remaining) == [TopicPartition(OTHER_TOPIC, 1)]
    finally:
        admin.close()


def test_a_server_restart_keeps_groups_and_offsets(fresh_server):
    fresh_server.start()
    consumer = Polled(KafkaConsumer(TOPIC, **config_for(
        "kp-restart", fresh_server, session_timeout_ms=20_000, reconnect_backoff_max_ms=200)))
    try:
        wait_until(settled([consumer]), "the consumer to join")
        tp = TopicPartition(TOPIC, 2)
        consumer.call(lambda c: c.commit({tp: OffsetAndMetadata(42, "before restart", -1)}))
        member_id = consumer.call(lambda c: c._coordinator._generation.member_id)
        assert fresh_server.stop() == 0
        fresh_server.start(port=fresh_server.port)
        wait_until(lambda: consumer.call(lambda c: c.committed(tp)) == 42,
                   "the committed offset after the restart")
        admin = KafkaAdminClient(bootstrap_servers=fresh_server.bootstrap)
        try:
            described = admin.describe_groups(["kp-restart"])["kp-restart"]
        finally:
            admin.close()
        # The group came back from the log with its member, which kept heartbeating.
        assert described["group_state"] == "Stable"
        assert [m["member_id"] for m in described["members"]] == [member_id]
        assert consumer.partitions == set(range(PARTITIONS))
    finally:
        consumer.close()
    assert fresh_server.stop() == 0
