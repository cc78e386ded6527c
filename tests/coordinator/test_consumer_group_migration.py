"""Online migration between the classic and the consumer group protocol (KIP-848), on the mock
clock, after Kafka's ``GroupMetadataManagerTest``.

Each test is named after the Kafka test whose scenario it follows. The fixture ends every test
by loading the log into a fresh coordinator and comparing the groups it rebuilds with the live
ones.
"""

from __future__ import annotations

from typing import Any

import pytest
from consumer_context import BAR, FOO, FOO_ID, ConsumerContext, consumer_record_summary, kafka_id
from coordinator_context import (
    DEFAULT_REBALANCE_TIMEOUT,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    UNKNOWN,
    Context,
    assert_replay_matches,
)

from groupcoord.coordinator.consumer.member import MemberState
from groupcoord.coordinator.group import GroupState
from groupcoord.coordinator.results import JoinGroupResult, MemberIdentity, SyncGroupResult, TopicPartition
from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.purgatory import IMPLEMENTATIONS

GROUP = GROUP_ID
TP = TopicPartition(FOO, 0)
EMPTY_CONSUMER_GROUP_TOMBSTONES = [(6, None, "tombstone"), (4, None, "tombstone"), (3, None, "tombstone")]
"""An empty consumer group's tombstones, in Kafka's order: the target assignment's epoch, the
subscription metadata, the group epoch."""


def empty_consumer_group(ctx: ConsumerContext) -> None:
    """A consumer group whose only member joined, committed an offset and left."""
    joined = ctx.heartbeat(GROUP, "m1", 0)
    assert joined.error is Errors.NONE
    committed = ctx.commit_offsets(GROUP, "m1", joined.member_epoch, {TP: ctx.offset_and_metadata(10)})
    assert committed == {TP: Errors.NONE}
    assert ctx.heartbeat(GROUP, "m1", -1).error is Errors.NONE
    assert ctx.consumer_group(GROUP).is_empty
    ctx.take_consumer_records()


def committed_offset(ctx: ConsumerContext) -> int:
    error, offsets = ctx.fetch_offsets(GROUP, [TP])
    assert error is Errors.NONE
    return offsets[TP].offset


def test_classic_group_join_with_empty_consumer_group(consumer_ctx: ConsumerContext) -> None:
    """Kafka's testClassicGroupJoinWithEmptyConsumerGroup: the empty consumer group is
    tombstoned and leaves memory, and the join makes a classic group of the same id."""
    empty_consumer_group(consumer_ctx)
    answer = consumer_ctx.send_join_group(GROUP, UNKNOWN, require_known_member_id=True)
    assert answer.result().error is Errors.MEMBER_ID_REQUIRED
    assert consumer_ctx.take_consumer_records() == [*EMPTY_CONSUMER_GROUP_TOMBSTONES, (2, None, 0)]
    assert consumer_ctx.coordinator.manager.get_consumer_group(GROUP) is None
    assert consumer_ctx.group(GROUP).is_in(GroupState.EMPTY)

    joined = consumer_ctx.dynamic_join_group(GROUP, answer.result().member_id)
    assert (joined.error, joined.generation_id) == (Errors.NONE, 1)
    assert consumer_ctx.sync_group_leader(GROUP, 1, joined.member_id, {joined.member_id: b""}).error is Errors.NONE
    assert committed_offset(consumer_ctx) == 10


def test_classic_join_with_known_member_id_to_empty_consumer_group(consumer_ctx: ConsumerContext) -> None:
    """A join naming a member id finds no classic group once the consumer group is deleted:
    UNKNOWN_MEMBER_ID, and no group is made."""
    empty_consumer_group(consumer_ctx)
    answer = consumer_ctx.send_join_group(GROUP, "someone")
    assert answer.result().error is Errors.UNKNOWN_MEMBER_ID
    assert consumer_ctx.take_consumer_records() == EMPTY_CONSUMER_GROUP_TOMBSTONES
    assert consumer_ctx.coordinator.manager.get_consumer_group(GROUP) is None
    assert consumer_ctx.coordinator.manager.get_group(GROUP) is None
    assert committed_offset(consumer_ctx) == 10


def test_classic_join_with_invalid_session_timeout_keeps_empty_consumer_group(
        consumer_ctx: ConsumerContext) -> None:
    """The session timeout is checked before the join reaches the group: nothing changes."""
    empty_consumer_group(consumer_ctx)
    answer = consumer_ctx.send_join_group(GROUP, UNKNOWN, session_timeout=1)
    assert answer.result().error is Errors.INVALID_SESSION_TIMEOUT
    assert consumer_ctx.take_consumer_records() == []
    assert consumer_ctx.consumer_group(GROUP).is_empty


def test_classic_requests_never_make_a_second_group(consumer_ctx: ConsumerContext) -> None:
    """Classic requests naming a consumer group's id are answered as Kafka answers them, and
    none makes a classic group beside it."""
    joined = consumer_ctx.heartbeat(GROUP, "m1", 0)
    epoch = joined.member_epoch
    manager = consumer_ctx.coordinator.manager
    assert consumer_ctx.sync_group_follower(GROUP, epoch, "m1").error is Errors.UNKNOWN_MEMBER_ID
    assert Context.heartbeat(consumer_ctx, GROUP, "m1", epoch) is Errors.UNKNOWN_MEMBER_ID
    left = consumer_ctx.batch_leave_group(GROUP, [MemberIdentity("m2", None)])
    assert [m.error for m in left.members] == [Errors.UNKNOWN_MEMBER_ID]
    offsets = {TP: consumer_ctx.offset_and_metadata(5)}
    assert consumer_ctx.commit_offsets(GROUP, "m2", 1, offsets) == {TP: Errors.UNKNOWN_MEMBER_ID}
    assert consumer_ctx.commit_transactional_offsets(GROUP, 1, 0, offsets, member_id="m2", generation=1) == {
        TP: Errors.UNKNOWN_MEMBER_ID}
    assert manager.get_group(GROUP) is None
    assert not consumer_ctx.consumer_group(GROUP).is_empty


@pytest.mark.parametrize("purgatory", sorted(IMPLEMENTATIONS))
def test_consumer_group_join_throws_exception_if_migration_disabled(purgatory: str) -> None:
    """Kafka's classicGroupJoinToConsumerGroup with group.consumer.migration.policy=disabled: a
    classic join to a non-empty consumer group is refused, and nothing changes."""
    ctx = ConsumerContext(IMPLEMENTATIONS[purgatory], **{"group.consumer.migration.policy": "disabled"})
    ctx.heartbeat(GROUP, "m1", 0)
    ctx.take_consumer_records()
    answer = ctx.send_join_group(GROUP, UNKNOWN)
    assert answer.result().error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert ctx.take_consumer_records() == []
    assert ctx.coordinator.manager.get_group(GROUP) is None
    assert_replay_matches(ctx)


# --- classic members inside a consumer group ------------------------------------------------

def subscription(topics: list[str], owned: list[tuple[str, list[int]]] | None = None) -> bytes:
    return codec.encode_subscription(codec.ConsumerProtocolSubscription(topics, owned_partitions=owned or []))


def assigned(result: SyncGroupResult) -> dict[str, list[int]]:
    assert result.assignment is not None
    return dict(codec.decode_assignment(result.assignment).assigned_partitions)


def classic_join(ctx: ConsumerContext, member_id: str = UNKNOWN, owned: list[tuple[str, list[int]]] | None = None,
                 **kwargs: Any) -> JoinGroupResult:
    """A classic JoinGroup v4+ of a consumer subscribing to ``foo`` (the MEMBER_ID_REQUIRED
    round trip first for a new member)."""
    protocols = kwargs.pop("protocols", [("range", subscription([FOO], owned))])
    result = ctx.send_join_group(GROUP, member_id, protocols=protocols, require_known_member_id=True,
                                 **kwargs).result()
    if result.error is Errors.MEMBER_ID_REQUIRED:
        result = ctx.send_join_group(GROUP, result.member_id, protocols=protocols, require_known_member_id=True,
                                     **kwargs).result()
    return result


def test_consumer_group_join_with_new_dynamic_member(consumer_ctx: ConsumerContext) -> None:
    """Kafka's testConsumerGroupJoinWithNewDynamicMember and the classic member's
    reconciliation: the assignor gives it half of ``foo`` once the consumer member revoked
    it; until then its Heartbeat answers NONE, then REBALANCE_IN_PROGRESS, and its next join
    and SyncGroup carry the partitions."""
    first = consumer_ctx.heartbeat(GROUP, "m1", 0)
    consumer_ctx.take_consumer_records()

    answer = consumer_ctx.send_join_group(GROUP, UNKNOWN, protocols=[("range", subscription([FOO]))],
                                          require_known_member_id=True)
    assert answer.result().error is Errors.MEMBER_ID_REQUIRED
    assert consumer_ctx.take_consumer_records() == []
    member_id = answer.result().member_id
    joined = classic_join(consumer_ctx, member_id)
    assert (joined.error, joined.member_id, joined.generation_id) == (Errors.NONE, member_id, 3)
    assert (joined.protocol_type, joined.protocol_name, joined.leader_id, joined.members) == (
        "consumer", "range", "", [])
    assert [r[:2] for r in consumer_ctx.take_consumer_records()] == [
        (5, member_id), (3, None), (7, "m1"), (7, member_id), (6, None), (8, member_id)]
    member = consumer_ctx.consumer_group(GROUP).member(member_id)
    assert member is not None and member.uses_classic_protocol
    assert member.state is MemberState.UNRELEASED_PARTITIONS

    synced = consumer_ctx.sync_group_follower(GROUP, 3, member_id, protocol_type="consumer", protocol_name="range")
    assert (synced.error, synced.protocol_type, synced.protocol_name) == (Errors.NONE, "consumer", "range")
    assert assigned(synced) == {}
    # Its partitions are still m1's: nothing to rejoin for.
    assert Context.heartbeat(consumer_ctx, GROUP, member_id, 3) is Errors.NONE

    kept = sorted(consumer_ctx.consumer_group(GROUP).target_of("m1")[FOO_ID])
    revoked = consumer_ctx.heartbeat(GROUP, "m1", first.member_epoch, topic_partitions={FOO_ID: kept})
    assert revoked.member_epoch == 3
    assert Context.heartbeat(consumer_ctx, GROUP, member_id, 3) is Errors.REBALANCE_IN_PROGRESS

    rejoined = classic_join(consumer_ctx, member_id)
    assert (rejoined.error, rejoined.generation_id) == (Errors.NONE, 3)
    synced = consumer_ctx.sync_group_follower(GROUP, 3, member_id)
    mine = sorted(set(range(6)) - set(kept))
    assert assigned(synced) == {FOO: mine}
    assert Context.heartbeat(consumer_ctx, GROUP, member_id, 3) is Errors.NONE

    offsets = {TopicPartition(FOO, mine[0]): consumer_ctx.offset_and_metadata(7)}
    assert consumer_ctx.commit_offsets(GROUP, member_id, 3, offsets) == dict.fromkeys(offsets, Errors.NONE)
    assert consumer_ctx.commit_offsets(GROUP, member_id, 4, offsets) == dict.fromkeys(offsets, Errors.ILLEGAL_GENERATION)


def test_classic_member_owned_partitions_come_from_its_subscription(consumer_ctx: ConsumerContext) -> None:
    """A cooperative classic member reports what it owns in its subscription: a static member
    rejoining under a new id keeps its partitions."""
    consumer_ctx.heartbeat(GROUP, "m1", 0, subscribed_topic_names=[BAR])
    joined = classic_join(consumer_ctx, group_instance_id="i1")
    assert joined.error is Errors.NONE
    synced = consumer_ctx.sync_group_follower(GROUP, joined.generation_id, joined.member_id,
                                              group_instance_id="i1")
    assert assigned(synced) == {FOO: list(range(6))}
    again = classic_join(consumer_ctx, owned=[(FOO, list(range(6)))], group_instance_id="i1")
    assert again.error is Errors.NONE and again.member_id != joined.member_id
    group = consumer_ctx.consumer_group(GROUP)
    assert sorted(group.members) == sorted(["m1", again.member_id])
    synced = consumer_ctx.sync_group_follower(GROUP, again.generation_id, again.member_id, group_instance_id="i1")
    assert assigned(synced) == {FOO: list(range(6))}
    old = consumer_ctx.sync_group_follower(GROUP, again.generation_id, joined.member_id, group_instance_id="i1")
    assert old.error is Errors.FENCED_INSTANCE_ID


def test_consumer_group_join_throws_exception_if_protocol_is_not_supported(consumer_ctx: ConsumerContext) -> None:
    """Kafka's testConsumerGroupJoinThrowsExceptionIfProtocolIsNotSupported, and a malformed
    subscription."""
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    consumer_ctx.take_consumer_records()
    assert classic_join(consumer_ctx, protocol_type="connect").error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert classic_join(consumer_ctx, protocols=[("range", b"\x00")]).error is Errors.INCONSISTENT_GROUP_PROTOCOL
    joined = classic_join(consumer_ctx)
    assert joined.error is Errors.NONE
    # Every classic member must support a protocol the new one names.
    other = classic_join(consumer_ctx, protocols=[("roundrobin", subscription([FOO]))])
    assert other.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert len(consumer_ctx.consumer_group(GROUP).members) == 2


def test_classic_member_sync_and_heartbeat_errors(consumer_ctx: ConsumerContext) -> None:
    first = consumer_ctx.heartbeat(GROUP, "m1", 0)
    joined = classic_join(consumer_ctx)
    member_id, epoch = joined.member_id, joined.generation_id
    sync = consumer_ctx.sync_group_follower
    assert sync(GROUP, epoch + 1, member_id).error is Errors.ILLEGAL_GENERATION
    assert sync(GROUP, epoch, member_id, protocol_type="connect").error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert sync(GROUP, epoch, member_id, protocol_name="roundrobin").error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert sync(GROUP, first.member_epoch, "m1").error is Errors.UNKNOWN_MEMBER_ID
    assert sync(GROUP, epoch, "nobody").error is Errors.UNKNOWN_MEMBER_ID
    assert Context.heartbeat(consumer_ctx, GROUP, member_id, epoch - 1) is Errors.ILLEGAL_GENERATION
    assert Context.heartbeat(consumer_ctx, GROUP, "m1", first.member_epoch) is Errors.UNKNOWN_MEMBER_ID


def test_classic_member_fenced_when_it_does_not_sync(consumer_ctx: ConsumerContext) -> None:
    """Kafka's sync timeout: a classic member that joined and sends no SyncGroup within its
    rebalance timeout is fenced."""
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    joined = classic_join(consumer_ctx)
    consumer_ctx.take_consumer_records()
    consumer_ctx.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    assert consumer_ctx.consumer_group(GROUP).member(joined.member_id) is None
    assert [r[:2] for r in consumer_ctx.take_consumer_records()][:3] == [
        (8, joined.member_id), (7, joined.member_id), (5, joined.member_id)]


def test_classic_member_fenced_when_it_does_not_rejoin(consumer_ctx: ConsumerContext) -> None:
    """Kafka's join timeout: a classic member told to rejoin is fenced unless it rejoins within
    its rebalance timeout; its session alone would keep it."""
    first = consumer_ctx.heartbeat(GROUP, "m1", 0)
    joined = classic_join(consumer_ctx)
    member_id = joined.member_id
    consumer_ctx.sync_group_follower(GROUP, joined.generation_id, member_id)
    kept = sorted(consumer_ctx.consumer_group(GROUP).target_of("m1")[FOO_ID])
    consumer_ctx.heartbeat(GROUP, "m1", first.member_epoch, topic_partitions={FOO_ID: kept})
    for _ in range(4):
        assert Context.heartbeat(consumer_ctx, GROUP, member_id, joined.generation_id) is Errors.REBALANCE_IN_PROGRESS
        consumer_ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 3)
    assert consumer_ctx.consumer_group(GROUP).member(member_id) is None


def test_classic_member_leaves_consumer_group(consumer_ctx: ConsumerContext) -> None:
    """Kafka's classicGroupLeaveToConsumerGroup: the valid members are fenced together, each
    identity answered on its own."""
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    joined = classic_join(consumer_ctx)
    static = classic_join(consumer_ctx, group_instance_id="i1")
    consumer_ctx.take_consumer_records()
    left = consumer_ctx.batch_leave_group(GROUP, [
        MemberIdentity(joined.member_id), MemberIdentity("nobody"), MemberIdentity("", "i1"),
        MemberIdentity("wrong", "i2")])
    assert [m.error for m in left.members] == [Errors.NONE, Errors.UNKNOWN_MEMBER_ID, Errors.NONE,
                                               Errors.UNKNOWN_MEMBER_ID]
    assert list(consumer_ctx.consumer_group(GROUP).members) == ["m1"]
    records = consumer_ctx.take_consumer_records()
    assert [r[:2] for r in records if r[0] != 3] == [
        (8, joined.member_id), (7, joined.member_id), (5, joined.member_id),
        (8, static.member_id), (7, static.member_id), (5, static.member_id)]
    assert records[-1][0] == 3


# --- upgrade: a consumer-protocol member joins a classic group ------------------------------

CLASSIC_TIMEOUT = 60_000
"""The classic members' session and rebalance timeouts: long enough to outlive the tests' waits."""


def assignment(partitions: list[int], user_data: bytes | None = None) -> bytes:
    return codec.encode_assignment(codec.ConsumerProtocolAssignment([(FOO, partitions)], user_data))


def classic_group_joins(ctx: ConsumerContext, count: int, protocol_type: str = "consumer",
                        protocols: list[tuple[str, bytes]] | None = None) -> list[JoinGroupResult]:
    """``count`` classic members join the classic group GROUP and form a generation (Kafka's
    JoinGroup v4+, the MEMBER_ID_REQUIRED round trip first)."""
    kwargs: dict[str, Any] = {
        "protocol_type": protocol_type, "protocols": protocols or [("range", subscription([FOO]))],
        "session_timeout": CLASSIC_TIMEOUT, "rebalance_timeout": CLASSIC_TIMEOUT,
        "require_known_member_id": True}
    answers = []
    for _ in range(count):
        member_id = ctx.send_join_group(GROUP, UNKNOWN, **kwargs).result().member_id
        answers.append(ctx.send_join_group(GROUP, member_id, **kwargs))
    while not all(a.done for a in answers):
        ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    return [a.result() for a in answers]


def stable_classic_group(ctx: ConsumerContext, user_data: bytes | None = None) -> tuple[str, str]:
    """A classic group of two members at generation 1, the leader given foo-0..2 and the
    follower foo-3..5; the leader committed offset 10 of foo-0. Returns (leader, follower)."""
    leader, follower = classic_group_joins(ctx, 2)
    assert leader.leader_id == leader.member_id and leader.generation_id == 1
    synced = ctx.sync_group_leader(GROUP, 1, leader.member_id, {
        leader.member_id: assignment([0, 1, 2], user_data), follower.member_id: assignment([3, 4, 5], user_data)})
    assert synced.error is Errors.NONE
    assert ctx.sync_group_follower(GROUP, 1, follower.member_id).error is Errors.NONE
    committed = ctx.commit_offsets(GROUP, leader.member_id, 1, {TP: ctx.offset_and_metadata(10)})
    assert committed == {TP: Errors.NONE}
    ctx.take_consumer_records()
    return leader.member_id, follower.member_id


def test_consumer_group_heartbeat_with_stable_classic_group(consumer_ctx: ConsumerContext) -> None:
    """Kafka's testConsumerGroupHeartbeatWithStableClassicGroup: the classic group is
    tombstoned and becomes a consumer group at its generation, its members classic members
    keeping their assignments; the joining member bumps the epoch and a new target is computed
    at once. The classic members rejoin through the consumer group; the offsets stay."""
    leader, follower = stable_classic_group(consumer_ctx)
    joined = consumer_ctx.heartbeat(GROUP, "m1", 0)
    assert (joined.error, joined.member_epoch, joined.assignment) == (Errors.NONE, 2, {})

    records = consumer_ctx.take_consumer_records()
    foo = kafka_id(FOO_ID)
    assert records[:9] == [
        (2, None, "tombstone"),
        (5, leader, (FOO,)), (5, follower, (FOO,)),
        (3, None, 1),
        (7, leader, {foo: (0, 1, 2)}), (7, follower, {foo: (3, 4, 5)}),
        (6, None, 1),
        (8, leader, (1, 1, 0, {foo: (0, 1, 2)}, {})), (8, follower, (1, 1, 0, {foo: (3, 4, 5)}, {})),
    ]
    assert [r[:2] for r in records[9:]] == [
        (5, "m1"), (3, None), (7, leader), (7, follower), (7, "m1"), (6, None), (8, "m1")]
    assert records[10][2] == 2 and records[14][2] == 2

    manager = consumer_ctx.coordinator.manager
    assert manager.get_group(GROUP) is None
    group = consumer_ctx.consumer_group(GROUP)
    assert (group.group_epoch, group.assignment_epoch) == (2, 2)
    member = group.member(leader)
    assert member is not None and member.uses_classic_protocol
    assert member.classic_member_metadata is not None
    assert member.classic_member_metadata.session_timeout_ms == CLASSIC_TIMEOUT
    assert group.member("m1") is not None and not group.member("m1").uses_classic_protocol  # type: ignore[union-attr]
    assert committed_offset(consumer_ctx) == 10

    # The classic members are behind the new target: they rejoin, and revoke.
    assert Context.heartbeat(consumer_ctx, GROUP, leader, 1) is Errors.REBALANCE_IN_PROGRESS
    rejoined = classic_join(consumer_ctx, leader, session_timeout=CLASSIC_TIMEOUT)
    assert (rejoined.error, rejoined.generation_id) == (Errors.NONE, 2)
    synced = consumer_ctx.sync_group_follower(GROUP, 2, leader)
    assert set(assigned(synced)[FOO]) <= {0, 1, 2}
    assert consumer_ctx.commit_offsets(GROUP, leader, 2, {TP: consumer_ctx.offset_and_metadata(11)}) == {
        TP: Errors.NONE}
    assert committed_offset(consumer_ctx) == 11


def test_upgrade_answers_parked_classic_requests(consumer_ctx: ConsumerContext) -> None:
    """Kafka's convertToConsumerGroup: the classic group's parked JoinGroups and SyncGroups are
    answered REBALANCE_IN_PROGRESS, and its rebalance and session timers no longer run: the
    members' sessions run in the consumer group, with their classic session timeouts."""
    leader, follower = classic_group_joins(consumer_ctx, 2)
    consumer_ctx.take_consumer_records()
    parked_sync = consumer_ctx.send_sync_group_follower(GROUP, 1, follower.member_id)
    assert not parked_sync.done
    joined = consumer_ctx.heartbeat(GROUP, "m1", 0)
    assert joined.error is Errors.NONE
    assert parked_sync.result().error is Errors.REBALANCE_IN_PROGRESS
    group = consumer_ctx.consumer_group(GROUP)
    assert sorted(group.members) == sorted([leader.member_id, follower.member_id, "m1"])
    # Never synced: no assignment to keep.
    assert all(not m.assigned_partitions for m in group.members.values() if m.uses_classic_protocol)
    consumer_ctx.take_consumer_records()

    # Only m1 heartbeats: the classic members are fenced once their classic sessions expire,
    # and no classic timer writes the old group back.
    for _ in range(CLASSIC_TIMEOUT // 10_000 + 1):
        consumer_ctx.sleep(10_000)
        assert consumer_ctx.heartbeat(GROUP, "m1", group.member("m1").member_epoch).error is Errors.NONE  # type: ignore[union-attr]
        group = consumer_ctx.consumer_group(GROUP)
    assert list(group.members) == ["m1"]
    assert all(r[0] != 2 for r in consumer_ctx.take_consumer_records())
    assert consumer_ctx.coordinator.manager.get_group(GROUP) is None


def test_upgrade_answers_a_parked_join_group(consumer_ctx: ConsumerContext) -> None:
    """A member joining the Stable classic group parks its JoinGroup in the rebalance it starts:
    the upgrade answers it REBALANCE_IN_PROGRESS, and it is a classic member of the consumer
    group, without an assignment."""
    leader, follower = stable_classic_group(consumer_ctx)
    kwargs: dict[str, Any] = {"protocols": [("range", subscription([FOO]))], "session_timeout": CLASSIC_TIMEOUT,
                              "rebalance_timeout": CLASSIC_TIMEOUT, "require_known_member_id": True}
    new_id = consumer_ctx.send_join_group(GROUP, UNKNOWN, **kwargs).result().member_id
    parked = consumer_ctx.send_join_group(GROUP, new_id, **kwargs)
    assert not parked.done
    assert consumer_ctx.heartbeat(GROUP, "m1", 0).error is Errors.NONE
    assert parked.result().error is Errors.REBALANCE_IN_PROGRESS
    group = consumer_ctx.consumer_group(GROUP)
    member = group.member(new_id)
    assert member is not None and member.uses_classic_protocol and member.member_epoch == 1
    assert committed_offset(consumer_ctx) == 10


@pytest.mark.parametrize("purgatory", sorted(IMPLEMENTATIONS))
@pytest.mark.parametrize("policy", ["disabled", "downgrade"])
def test_upgrade_disabled_by_the_migration_policy(purgatory: str, policy: str) -> None:
    ctx = ConsumerContext(IMPLEMENTATIONS[purgatory], **{"group.consumer.migration.policy": policy})
    stable_classic_group(ctx)
    result = ctx.heartbeat(GROUP, "m1", 0)
    assert (result.error, result.message) == (
        Errors.GROUP_ID_NOT_FOUND,
        f"Cannot upgrade classic group {GROUP} to consumer group because online upgrade is disabled.")
    assert ctx.take_consumer_records() == []
    assert ctx.group(GROUP).is_in(GroupState.STABLE)
    assert_replay_matches(ctx)


def test_consumer_group_heartbeat_with_non_empty_classic_group(consumer_ctx: ConsumerContext) -> None:
    """Kafka's testConsumerGroupHeartbeatWithNonEmptyClassicGroup: a group of another protocol
    type is not upgraded."""
    classic_group_joins(consumer_ctx, 1, protocol_type="connect", protocols=[("v1", b"")])
    result = consumer_ctx.heartbeat(GROUP, "m1", 0)
    assert (result.error, result.message) == (
        Errors.GROUP_ID_NOT_FOUND,
        f"Cannot upgrade classic group {GROUP} to consumer group because the group does not use the consumer "
        "embedded protocol.")
    assert consumer_ctx.coordinator.manager.get_consumer_group(GROUP) is None


@pytest.mark.parametrize("purgatory", sorted(IMPLEMENTATIONS))
def test_upgrade_refused_when_the_group_exceeds_the_consumer_group_maximum_size(purgatory: str) -> None:
    ctx = ConsumerContext(IMPLEMENTATIONS[purgatory], **{"group.consumer.max.size": 1})
    stable_classic_group(ctx)
    result = ctx.heartbeat(GROUP, "m1", 0)
    assert (result.error, result.message) == (
        Errors.GROUP_ID_NOT_FOUND,
        f"Cannot upgrade classic group {GROUP} to consumer group because the group size exceeds the consumer "
        "group maximum size.")
    assert ctx.take_consumer_records() == []
    assert_replay_matches(ctx)


@pytest.mark.parametrize("user_data, upgraded", [(None, True), (b"", True), (b"\x00", False)])
def test_consumer_group_heartbeat_with_custom_assignor_classic_group(
        consumer_ctx: ConsumerContext, user_data: bytes | None, upgraded: bool) -> None:
    """Kafka's testConsumerGroupHeartbeatWithCustomAssignorClassicGroup: an assignment carrying
    user data (a custom assignor's) would be lost: the group is not upgraded."""
    stable_classic_group(consumer_ctx, user_data)
    result = consumer_ctx.heartbeat(GROUP, "m1", 0)
    if upgraded:
        assert result.error is Errors.NONE
        return
    assert (result.error, result.message) == (
        Errors.GROUP_ID_NOT_FOUND,
        f"Cannot upgrade classic group {GROUP} to consumer group because an unsupported custom assignor is in "
        "use. Please refer to the documentation or switch to a default assignor before re-attempting the upgrade.")
    assert consumer_ctx.take_consumer_records() == []
    assert consumer_ctx.group(GROUP).is_in(GroupState.STABLE)


# --- downgrade: the last consumer-protocol member leaves ------------------------------------

def upgraded_group(ctx: ConsumerContext) -> tuple[str, str, int]:
    """The stable classic group upgraded by m1's join. Returns (leader, follower, m1's epoch)."""
    leader, follower = stable_classic_group(ctx)
    joined = ctx.heartbeat(GROUP, "m1", 0)
    assert joined.error is Errors.NONE
    ctx.take_consumer_records()
    return leader, follower, joined.member_epoch


Snapshot = tuple[list[str], dict[str, frozenset[int]]]


def snapshot(ctx: ConsumerContext) -> Snapshot:
    """The consumer group's members and their targets in ``foo``, before it is converted."""
    group = ctx.consumer_group(GROUP)
    return list(group.members), {m: group.target_of(m).get(FOO_ID, frozenset()) for m in group.members}


def assert_downgraded(ctx: ConsumerContext, before: Snapshot, group_epoch: int, members: list[str]) -> None:
    """The consumer group's tombstones, then the classic group's metadata, were written; the
    classic group is rebalancing, its members those given, each with its target assignment."""
    all_members, targets = before
    expected: list[tuple[Any, ...]] = [(8, m, "tombstone") for m in all_members]
    expected += [(7, m, "tombstone") for m in all_members]
    expected.append((6, None, "tombstone"))
    expected += [(5, m, "tombstone") for m in all_members]
    expected += [(4, None, "tombstone"), (3, None, "tombstone"), (2, None, group_epoch)]
    records = ctx.take_new_records()
    assert [consumer_record_summary(r) for r in records] == expected
    value = records[-1].value
    assert isinstance(value, codec.GroupMetadataValue)
    assert (value.protocol_type, value.protocol) == ("consumer", "range")
    assert {m.member_id: set(dict(codec.decode_assignment(m.assignment).assigned_partitions).get(FOO, []))
            for m in value.members} == {m: set(targets[m]) for m in members}

    manager = ctx.coordinator.manager
    assert manager.get_consumer_group(GROUP) is None
    classic = ctx.group(GROUP)
    assert classic.is_in(GroupState.PREPARING_REBALANCE)
    assert (classic.generation_id, classic.protocol_name, sorted(classic.members)) == (
        group_epoch, "range", sorted(members))


def rejoin_classic_group(ctx: ConsumerContext, leader: str, follower: str, generation: int) -> None:
    """The members of the downgraded group rejoin it and sync: the next generation is Stable."""
    kwargs: dict[str, Any] = {"protocols": [("range", subscription([FOO]))], "session_timeout": CLASSIC_TIMEOUT,
                              "rebalance_timeout": CLASSIC_TIMEOUT}
    answers = [ctx.send_join_group(GROUP, leader, **kwargs), ctx.send_join_group(GROUP, follower, **kwargs)]
    joined = [a.result() for a in answers]
    assert [j.generation_id for j in joined] == [generation, generation]
    new_leader = joined[0].leader_id
    assignments = {leader: assignment([0, 1, 2]), follower: assignment([3, 4, 5])}
    assert ctx.sync_group_leader(GROUP, generation, new_leader, assignments).error is Errors.NONE
    other = follower if new_leader == leader else leader
    assert ctx.sync_group_follower(GROUP, generation, other).error is Errors.NONE
    ctx.assert_group_state(GroupState.STABLE)
    assert ctx.commit_offsets(GROUP, leader, generation, {TP: ctx.offset_and_metadata(12)}) == {TP: Errors.NONE}


def test_last_consumer_protocol_member_leaving_consumer_group(consumer_ctx: ConsumerContext) -> None:
    """Kafka's testLastConsumerProtocolMemberLeavingConsumerGroup: the consumer group is
    tombstoned and its classic members form a classic group at the group epoch, each assigned
    its target; it rebalances, its members rejoin, and the offsets stay."""
    leader, follower, epoch = upgraded_group(consumer_ctx)
    before = snapshot(consumer_ctx)
    left = consumer_ctx.heartbeat(GROUP, "m1", -1)
    assert (left.error, left.member_id, left.member_epoch) == (Errors.NONE, "m1", -1)
    assert_downgraded(consumer_ctx, before, epoch, [leader, follower])
    assert committed_offset(consumer_ctx) == 10
    assert Context.heartbeat(consumer_ctx, GROUP, leader, 1) is Errors.ILLEGAL_GENERATION
    assert Context.heartbeat(consumer_ctx, GROUP, leader, epoch) is Errors.REBALANCE_IN_PROGRESS
    rejoin_classic_group(consumer_ctx, leader, follower, epoch + 1)
    assert committed_offset(consumer_ctx) == 12


def test_last_consumer_protocol_member_session_timeout_in_consumer_group(consumer_ctx: ConsumerContext) -> None:
    """Kafka's testLastConsumerProtocolMemberSessionTimeoutInConsumerGroup: m1's session expires
    (the classic members' run longer); the consumer group's timers go with it, and the
    classic group's members keep theirs."""
    leader, follower, epoch = upgraded_group(consumer_ctx)
    before = snapshot(consumer_ctx)
    consumer_ctx.sleep(45_000 + 1)
    assert_downgraded(consumer_ctx, before, epoch, [leader, follower])
    rejoin_classic_group(consumer_ctx, leader, follower, epoch + 1)
    assert committed_offset(consumer_ctx) == 12
    consumer_ctx.take_consumer_records()
    # The consumer group's sessions are gone: only the classic sessions, kept by heartbeats, run.
    for _ in range(7):
        consumer_ctx.sleep(10_000)
        assert Context.heartbeat(consumer_ctx, GROUP, leader, epoch + 1) is Errors.NONE
        assert Context.heartbeat(consumer_ctx, GROUP, follower, epoch + 1) is Errors.NONE
    assert consumer_ctx.take_consumer_records() == []


def test_last_consumer_protocol_member_rebalance_timeout_in_consumer_group(consumer_ctx: ConsumerContext) -> None:
    """Kafka's testLastConsumerProtocolMemberRebalanceTimeoutInConsumerGroup: m1 does not
    revoke the partitions the classic member's join took from it within its rebalance
    timeout; it is fenced and the group, left with its classic member, becomes a classic group."""
    first = consumer_ctx.heartbeat(GROUP, "m1", 0)
    assert owned(first) == set(range(6))
    joined = classic_join(consumer_ctx, session_timeout=CLASSIC_TIMEOUT, rebalance_timeout=CLASSIC_TIMEOUT)
    assert joined.error is Errors.NONE
    assert consumer_ctx.sync_group_follower(GROUP, joined.generation_id, joined.member_id).error is Errors.NONE
    revoking = consumer_ctx.heartbeat(GROUP, "m1", first.member_epoch,
                                      topic_partitions={FOO_ID: list(range(6))})
    assert consumer_ctx.consumer_group(GROUP).member("m1").state is MemberState.UNREVOKED_PARTITIONS  # type: ignore[union-attr]
    epoch = consumer_ctx.consumer_group(GROUP).group_epoch
    consumer_ctx.take_consumer_records()
    before = snapshot(consumer_ctx)
    consumer_ctx.sleep(5000 + 1)
    assert revoking.error is Errors.NONE
    assert_downgraded(consumer_ctx, before, epoch, [joined.member_id])


def owned(result: Any) -> set[int]:
    return set(result.assignment.get(FOO_ID, [])) if result.assignment else set()


def test_classic_member_leaving_last_consumer_protocol_member_by_admin(consumer_ctx: ConsumerContext) -> None:
    """Kafka's testLastConsumerProtocolMemberLeavingConsumerGroupByAdminApi: a LeaveGroup naming
    the static consumer-protocol member by instance id removes it, and the group downgrades."""
    leader, follower = stable_classic_group(consumer_ctx)
    joined = consumer_ctx.heartbeat(GROUP, "m1", 0, instance_id="i1")
    assert joined.error is Errors.NONE
    consumer_ctx.take_consumer_records()
    before = snapshot(consumer_ctx)
    left = consumer_ctx.batch_leave_group(GROUP, [MemberIdentity("", "i1")])
    assert [m.error for m in left.members] == [Errors.NONE]
    assert_downgraded(consumer_ctx, before, joined.member_epoch, [leader, follower])
    assert committed_offset(consumer_ctx) == 10


@pytest.mark.parametrize("purgatory", sorted(IMPLEMENTATIONS))
@pytest.mark.parametrize("overrides", [{"group.consumer.migration.policy": "upgrade"}, {"group.max.size": 2}])
def test_no_downgrade_unless_the_policy_and_the_size_allow(purgatory: str, overrides: dict[str, Any]) -> None:
    """validateOnlineDowngradeWithFencedMembers: a policy without downgrade, or more members
    than group.max.size, keeps the consumer group with its classic members."""
    ctx = ConsumerContext(IMPLEMENTATIONS[purgatory], **overrides)
    leader, follower, _ = upgraded_group(ctx)
    third = classic_join(ctx, session_timeout=CLASSIC_TIMEOUT, rebalance_timeout=CLASSIC_TIMEOUT)
    assert third.error is Errors.NONE
    epoch = ctx.consumer_group(GROUP).group_epoch
    ctx.take_consumer_records()
    assert ctx.heartbeat(GROUP, "m1", -1).error is Errors.NONE
    group = ctx.consumer_group(GROUP)
    assert sorted(group.members) == sorted([leader, follower, third.member_id])
    assert group.group_epoch == epoch + 1
    assert all(r[0] != 2 for r in ctx.take_consumer_records())
    assert ctx.coordinator.manager.get_group(GROUP) is None
    assert_replay_matches(ctx)


def test_a_classic_member_leaving_keeps_the_consumer_group(consumer_ctx: ConsumerContext) -> None:
    """A classic member leaving while a consumer-protocol member stays changes nothing."""
    leader, follower, epoch = upgraded_group(consumer_ctx)
    left = consumer_ctx.batch_leave_group(GROUP, [MemberIdentity(follower)])
    assert [m.error for m in left.members] == [Errors.NONE]
    assert sorted(consumer_ctx.consumer_group(GROUP).members) == sorted([leader, "m1"])
    assert consumer_ctx.coordinator.manager.get_group(GROUP) is None
