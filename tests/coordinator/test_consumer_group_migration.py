"""Online migration between the classic and the consumer group protocol (KIP-848), on the mock
clock, after Kafka's ``GroupMetadataManagerTest``.

Each test is named after the Kafka test whose scenario it follows. The fixture ends every test
by loading the log into a fresh coordinator and comparing the groups it rebuilds with the live
ones.
"""

from __future__ import annotations

import pytest
from consumer_context import FOO, ConsumerContext
from coordinator_context import GROUP_ID, UNKNOWN, Context, assert_replay_matches

from groupcoord.coordinator.group import GroupState
from groupcoord.coordinator.results import MemberIdentity, TopicPartition
from groupcoord.errors import Errors
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
