"""LeaveGroup, ListGroups, DescribeGroups, DeleteGroups, OffsetDelete and the initial rebalance
delay. Ported from Kafka's GroupCoordinatorTest, each also checking the records written."""

from __future__ import annotations

import pytest
from coordinator_context import (
    FOLLOWER_INSTANCE_ID,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    LEADER_INSTANCE_ID,
    MEMBER_ID,
    OTHER_GROUP_ID,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN,
    Context,
    static_members_join_and_rebalance,
)

from groupcoord.coordinator import (
    ClassicGroup,
    GroupOverview,
    GroupState,
    JoinGroupResult,
    LeaveGroupResult,
    MemberIdentity,
    TopicPartition,
)
from groupcoord.coordinator.delayed import member_key
from groupcoord.coordinator.results import DEAD_GROUP
from groupcoord.errors import Errors
from groupcoord.format import codec


def _verify_leave(result: LeaveGroupResult, error: Errors = Errors.NONE,
                  member_errors: list[Errors] | None = None) -> None:
    assert result.error == error
    if member_errors:
        assert [m.error for m in result.members] == member_errors


def _stable_single_member(ctx: Context, protocol_type: str = PROTOCOL_TYPE,
                          protocols: list[tuple[str, bytes]] | None = None) -> str:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, protocol_type, protocols or PROTOCOLS)
    assert join.error == Errors.NONE
    assert ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {}).error == Errors.NONE
    return join.member_id


# --- LeaveGroup -----------------------------------------------------------------------------

def test_leave_group_wrong_coordinator(ctx: Context) -> None:
    _verify_leave(ctx.single_leave_group(OTHER_GROUP_ID, UNKNOWN), Errors.NOT_COORDINATOR)
    assert ctx.take_records() == []


def test_leave_group_unknown_group(ctx: Context) -> None:
    _verify_leave(ctx.single_leave_group(GROUP_ID, MEMBER_ID), Errors.NONE, [Errors.UNKNOWN_MEMBER_ID])
    assert ctx.take_records() == []


def test_leave_group_unknown_consumer_existing_group(ctx: Context) -> None:
    assert ctx.dynamic_join_group(GROUP_ID, UNKNOWN).error == Errors.NONE
    _verify_leave(ctx.single_leave_group(GROUP_ID, "consumerId"), Errors.NONE, [Errors.UNKNOWN_MEMBER_ID])
    assert ctx.take_records() == []


def test_single_leave_dead_group(ctx: Context) -> None:
    ctx.coordinator.manager.groups["deadGroupId"] = ClassicGroup("deadGroupId", ctx.time, state=GroupState.DEAD)
    _verify_leave(ctx.single_leave_group("deadGroupId", MEMBER_ID), Errors.COORDINATOR_NOT_AVAILABLE)
    assert ctx.take_records() == []


def test_batch_leave_dead_group(ctx: Context) -> None:
    ctx.coordinator.manager.groups["deadGroupId"] = ClassicGroup("deadGroupId", ctx.time, state=GroupState.DEAD)
    result = ctx.batch_leave_group("deadGroupId", [MemberIdentity(MEMBER_ID), MemberIdentity(MEMBER_ID)])
    _verify_leave(result, Errors.COORDINATOR_NOT_AVAILABLE)
    assert ctx.take_records() == []


def test_valid_leave_group(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    _verify_leave(ctx.single_leave_group(GROUP_ID, join.member_id))
    # The only member left during CompletingRebalance: the group empties (generation 2).
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {})]


def test_leave_group_with_fenced_instance_id(ctx: Context) -> None:
    join = ctx.static_join_group(GROUP_ID, UNKNOWN, LEADER_INSTANCE_ID, PROTOCOL_TYPE, PROTOCOL_SUPERSET)
    assert join.error == Errors.NONE
    _verify_leave(ctx.single_leave_group(GROUP_ID, "some_member", LEADER_INSTANCE_ID),
                  Errors.NONE, [Errors.FENCED_INSTANCE_ID])
    assert ctx.take_records() == []


def test_leave_group_static_member_with_unknown_member_id(ctx: Context) -> None:
    join = ctx.static_join_group(GROUP_ID, UNKNOWN, LEADER_INSTANCE_ID, PROTOCOL_TYPE, PROTOCOL_SUPERSET)
    assert join.error == Errors.NONE
    # Removal by group instance id alone (the admin call).
    _verify_leave(ctx.single_leave_group(GROUP_ID, UNKNOWN, LEADER_INSTANCE_ID), Errors.NONE, [Errors.NONE])
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {})]


def test_static_members_valid_batch_leave_group(ctx: Context) -> None:
    static_members_join_and_rebalance(ctx)
    result = ctx.batch_leave_group(GROUP_ID, [MemberIdentity(UNKNOWN, LEADER_INSTANCE_ID),
                                              MemberIdentity(UNKNOWN, FOLLOWER_INSTANCE_ID)])
    _verify_leave(result, Errors.NONE, [Errors.NONE, Errors.NONE])
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {})]


def test_static_members_wrong_coordinator_batch_leave_group(ctx: Context) -> None:
    static_members_join_and_rebalance(ctx)
    result = ctx.batch_leave_group("invalid-group", [MemberIdentity(UNKNOWN, LEADER_INSTANCE_ID),
                                                     MemberIdentity(UNKNOWN, FOLLOWER_INSTANCE_ID)])
    assert ctx.coordinator.partition_for("invalid-group") != ctx.group_partition
    _verify_leave(result, Errors.NOT_COORDINATOR)
    assert ctx.take_records() == []


def test_static_members_unknown_group_batch_leave_group(ctx: Context) -> None:
    result = ctx.batch_leave_group(GROUP_ID, [MemberIdentity(UNKNOWN, LEADER_INSTANCE_ID),
                                              MemberIdentity(UNKNOWN, FOLLOWER_INSTANCE_ID)])
    _verify_leave(result, Errors.NONE, [Errors.UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID])
    assert ctx.take_records() == []


def test_static_members_fenced_instance_batch_leave_group(ctx: Context) -> None:
    static_members_join_and_rebalance(ctx)
    result = ctx.batch_leave_group(GROUP_ID, [MemberIdentity(UNKNOWN, LEADER_INSTANCE_ID),
                                              MemberIdentity("invalid-member", FOLLOWER_INSTANCE_ID)])
    _verify_leave(result, Errors.NONE, [Errors.NONE, Errors.FENCED_INSTANCE_ID])
    assert ctx.take_records() == []


def test_static_members_unknown_instance_batch_leave_group(ctx: Context) -> None:
    static_members_join_and_rebalance(ctx)
    result = ctx.batch_leave_group(GROUP_ID, [MemberIdentity(UNKNOWN, "unknown-instance"),
                                              MemberIdentity(UNKNOWN, FOLLOWER_INSTANCE_ID)])
    _verify_leave(result, Errors.NONE, [Errors.UNKNOWN_MEMBER_ID, Errors.NONE])
    assert ctx.take_records() == []


def test_pending_member_batch_leave_group(ctx: Context) -> None:
    first = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert ctx.sync_group_leader(GROUP_ID, first.generation_id, first.member_id, {}).error == Errors.NONE
    ctx.send_join_group(GROUP_ID, first.member_id)
    pending = ctx.send_join_group(GROUP_ID, UNKNOWN, require_known_member_id=True).result()
    assert pending.error == Errors.MEMBER_ID_REQUIRED
    result = ctx.batch_leave_group(GROUP_ID, [MemberIdentity(UNKNOWN, "unknown-instance"),
                                              MemberIdentity(pending.member_id)])
    _verify_leave(result, Errors.NONE, [Errors.UNKNOWN_MEMBER_ID, Errors.NONE])
    assert not ctx.group().pending_members
    # Its departure lets the waiting rebalance complete.
    ctx.assert_group_state(GroupState.COMPLETING_REBALANCE)
    assert ctx.take_records() == [("group", GROUP_ID, 1, first.member_id, {first.member_id: b""})]


def test_heartbeat_during_rebalance_causes_rebalance_in_progress(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    ctx.send_join_group(GROUP_ID, UNKNOWN)
    assert ctx.heartbeat(GROUP_ID, join.member_id, join.generation_id) == Errors.REBALANCE_IN_PROGRESS
    assert ctx.take_records() == []


# --- ListGroups and DescribeGroups ----------------------------------------------------------

def test_list_groups_includes_stable_groups(ctx: Context) -> None:
    _stable_single_member(ctx)
    assert ctx.coordinator.handle_list_groups() == (
        Errors.NONE, [GroupOverview("groupId", "consumer", "Stable", "classic")]
    )
    assert len(ctx.take_records()) == 1


def test_list_groups_includes_rebalancing_groups(ctx: Context) -> None:
    assert ctx.dynamic_join_group(GROUP_ID, UNKNOWN).error == Errors.NONE
    assert ctx.coordinator.handle_list_groups() == (
        Errors.NONE, [GroupOverview("groupId", "consumer", "CompletingRebalance", "classic")]
    )
    assert ctx.take_records() == []


def test_list_groups_with_states(ctx: Context) -> None:
    all_states = {s.value for s in GroupState}
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE

    def count(states: set[str]) -> int:
        error, groups = ctx.coordinator.handle_list_groups(states)
        assert error == Errors.NONE
        return len(groups)

    assert count({"CompletingRebalance"}) == 1
    assert count(all_states - {"CompletingRebalance"}) == 0
    assert ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""}).error \
        == Errors.NONE
    assert count({"Stable"}) == 1
    assert count(all_states - {"Stable"}) == 0
    _verify_leave(ctx.single_leave_group(GROUP_ID, join.member_id))
    assert count({"Empty"}) == 1
    assert count(all_states - {"Empty"}) == 0
    # The filter is case-insensitive.
    assert count({"empty"}) == 1
    assert ctx.take_records() == [
        ("group", GROUP_ID, 1, join.member_id, {join.member_id: b""}), ("group", GROUP_ID, 2, None, {})
    ]


def test_list_groups_with_types(ctx: Context) -> None:
    _stable_single_member(ctx)
    stable = [GroupOverview("groupId", "consumer", "Stable", "classic")]
    assert ctx.coordinator.handle_list_groups((), {"classic"}) == (Errors.NONE, stable)
    assert ctx.coordinator.handle_list_groups((), {"consumer"}) == (Errors.NONE, [])
    assert ctx.coordinator.handle_list_groups((), {"Invalid"}) == (Errors.NONE, [])
    assert ctx.coordinator.handle_list_groups((), ()) == (Errors.NONE, stable)
    assert ctx.coordinator.handle_list_groups((), {"Classic"}) == (Errors.NONE, stable)
    assert len(ctx.take_records()) == 1


def test_describe_group_wrong_coordinator(ctx: Context) -> None:
    assert ctx.coordinator.handle_describe_group(OTHER_GROUP_ID)[0] == Errors.NOT_COORDINATOR
    assert ctx.take_records() == []


def test_describe_group_inactive_group(ctx: Context) -> None:
    assert ctx.coordinator.handle_describe_group(GROUP_ID) == (Errors.NONE, DEAD_GROUP)
    assert ctx.take_records() == []


def test_describe_group_stable_for_dynamic_member(ctx: Context) -> None:
    member_id = _stable_single_member(ctx)
    error, summary = ctx.coordinator.handle_describe_group(GROUP_ID)
    assert error == Errors.NONE
    assert (summary.protocol_type, summary.protocol) == (PROTOCOL_TYPE, "range")
    assert [m.member_id for m in summary.members] == [member_id]
    assert len(ctx.take_records()) == 1


def test_describe_group_stable_for_static_member(ctx: Context) -> None:
    join = ctx.static_join_group(GROUP_ID, UNKNOWN, LEADER_INSTANCE_ID)
    assert join.error == Errors.NONE
    assert ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""}).error \
        == Errors.NONE
    error, summary = ctx.coordinator.handle_describe_group(GROUP_ID)
    assert error == Errors.NONE
    assert (summary.protocol_type, summary.protocol) == (PROTOCOL_TYPE, "range")
    assert [m.member_id for m in summary.members] == [join.member_id]
    assert [m.group_instance_id for m in summary.members] == [LEADER_INSTANCE_ID]
    assert ctx.take_records() == [("group", GROUP_ID, 1, join.member_id, {join.member_id: b""})]


def test_describe_group_rebalancing(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    error, summary = ctx.coordinator.handle_describe_group(GROUP_ID)
    assert error == Errors.NONE
    assert (summary.protocol_type, summary.protocol, summary.state) == (PROTOCOL_TYPE, "", "CompletingRebalance")
    assert join.member_id in [m.member_id for m in summary.members]
    assert all(m.metadata == b"" and m.assignment == b"" for m in summary.members)
    assert ctx.take_records() == []


def test_describe_group_rebalancing_shows_the_last_generations_assignments(ctx: Context) -> None:
    # Kafka 4's describeNoMetadata keeps a member's assignment while the group rebalances
    # (found by running kafka-consumer-groups --describe against a 4.1 broker and against us).
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id,
                                 {join.member_id: b"owns-all"}).error == Errors.NONE
    newcomer = ctx.send_join_group(GROUP_ID, UNKNOWN)
    assert not newcomer.done
    error, summary = ctx.coordinator.handle_describe_group(GROUP_ID)
    assert (error, summary.state, summary.protocol) == (Errors.NONE, "PreparingRebalance", "")
    described = {m.member_id: (m.metadata, m.assignment) for m in summary.members}
    assert len(described) == 2 and described.pop(join.member_id) == (b"", b"owns-all")
    assert list(described.values()) == [(b"", b"")]  # the newcomer has none yet
    rejoin = ctx.send_join_group(GROUP_ID, join.member_id)
    ctx.sleep(1)
    assert rejoin.done and rejoin.result().error == Errors.NONE
    error, summary = ctx.coordinator.handle_describe_group(GROUP_ID)
    assert summary.state == "CompletingRebalance"
    assert {m.member_id: m.assignment for m in summary.members}[join.member_id] == b"owns-all"


# --- DeleteGroups and OffsetDelete ----------------------------------------------------------

def test_delete_non_empty_group(ctx: Context) -> None:
    ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert ctx.delete_groups([GROUP_ID]) == {GROUP_ID: Errors.NON_EMPTY_GROUP}
    assert ctx.take_records() == []


def test_delete_group_with_invalid_group_id(ctx: Context) -> None:
    answer: dict[str, Errors] = {}
    ctx.coordinator.handle_delete_groups([None], answer.update)  # type: ignore[list-item]
    assert answer == {None: Errors.INVALID_GROUP_ID}
    assert ctx.take_records() == []


def test_delete_group_with_wrong_coordinator(ctx: Context) -> None:
    assert ctx.delete_groups([OTHER_GROUP_ID]) == {OTHER_GROUP_ID: Errors.NOT_COORDINATOR}
    assert ctx.take_records() == []


def test_delete_empty_group(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    _verify_leave(ctx.single_leave_group(GROUP_ID, join.member_id))
    assert ctx.delete_groups([GROUP_ID]) == {GROUP_ID: Errors.NONE}
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {}), ("group", GROUP_ID, None)]


def stable_group_with_a_commit(ctx: Context) -> tuple[JoinGroupResult, TopicPartition]:
    """A one-member Stable group that committed offset 0 of topic-0."""
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""}).error \
        == Errors.NONE
    tp = TopicPartition("topic", 0)
    assert ctx.commit_offsets(GROUP_ID, join.member_id, join.generation_id, {tp: ctx.offset_and_metadata(0)}) \
        == {tp: Errors.NONE}
    return join, tp


def test_delete_empty_group_with_stored_offsets(ctx: Context) -> None:
    join, tp = stable_group_with_a_commit(ctx)
    error, summary = ctx.coordinator.handle_describe_group(GROUP_ID)
    assert summary.state == "Stable" and summary.members[0].member_id == join.member_id
    _verify_leave(ctx.single_leave_group(GROUP_ID, join.member_id))
    assert ctx.delete_groups([GROUP_ID]) == {GROUP_ID: Errors.NONE}
    assert ctx.coordinator.handle_describe_group(GROUP_ID)[1].state == "Dead"
    # The offsets and the group are tombstoned.
    assert ctx.take_records() == [
        ("group", GROUP_ID, 1, join.member_id, {join.member_id: b""}),
        ("offset", GROUP_ID, "topic", 0, 0),
        ("group", GROUP_ID, 2, None, {}),
        ("offset", GROUP_ID, "topic", 0, None),
        ("group", GROUP_ID, None),
    ]


def test_delete_offset_of_non_existing_group(ctx: Context) -> None:
    assert ctx.delete_offsets(GROUP_ID, [TopicPartition("foo", 0)]) == (Errors.GROUP_ID_NOT_FOUND, {})
    assert ctx.take_records() == []


def test_delete_offset_of_non_empty_non_consumer_group(ctx: Context) -> None:
    ctx.dynamic_join_group(GROUP_ID, UNKNOWN, "My Protocol", PROTOCOLS)
    assert ctx.delete_offsets(GROUP_ID, [TopicPartition("foo", 0)]) == (Errors.NON_EMPTY_GROUP, {})
    assert ctx.take_records() == []


def _commit_two_and_leave(ctx: Context, protocol_type: str) -> tuple[TopicPartition, TopicPartition, str]:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, protocol_type, PROTOCOLS)
    assert join.error == Errors.NONE
    assert ctx.sync_group_leader(GROUP_ID, join.generation_id, join.leader_id, {}).error == Errors.NONE
    foo, bar = TopicPartition("foo", 0), TopicPartition("bar", 0)
    offset = ctx.offset_and_metadata(37)
    assert ctx.commit_offsets(GROUP_ID, join.member_id, join.generation_id, {foo: offset, bar: offset}) \
        == {foo: Errors.NONE, bar: Errors.NONE}
    _verify_leave(ctx.single_leave_group(GROUP_ID, join.member_id))
    ctx.assert_group_state(GroupState.EMPTY)
    return foo, bar, join.member_id


def test_delete_offset_of_empty_non_consumer_group(ctx: Context) -> None:
    foo, bar, member = _commit_two_and_leave(ctx, "My Protocol")
    assert ctx.delete_offsets(GROUP_ID, [foo]) == (Errors.NONE, {foo: Errors.NONE})
    offsets = ctx.coordinator.manager.get_offsets(GROUP_ID, True, [foo, bar])
    assert (offsets[foo].offset, offsets[bar].offset) == (-1, 37)
    assert ctx.take_records() == [
        ("group", GROUP_ID, 1, member, {member: b""}),
        ("offset", GROUP_ID, "foo", 0, 37), ("offset", GROUP_ID, "bar", 0, 37),
        ("group", GROUP_ID, 2, None, {}),
        ("offset", GROUP_ID, "foo", 0, None),
    ]


def test_delete_offset_of_consumer_group_with_unparsable_protocol(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert ctx.sync_group_leader(GROUP_ID, join.generation_id, join.leader_id, {}).error == Errors.NONE
    tp = TopicPartition("foo", 0)
    assert ctx.commit_offsets(GROUP_ID, join.member_id, join.generation_id, {tp: ctx.offset_and_metadata(37)}) \
        == {tp: Errors.NONE}
    # Subscriptions that cannot be parsed count as subscribed to everything.
    assert ctx.delete_offsets(GROUP_ID, [tp]) == (Errors.NONE, {tp: Errors.GROUP_SUBSCRIBED_TO_TOPIC})
    assert ctx.take_records() == [
        ("group", GROUP_ID, 1, join.member_id, {join.member_id: b""}), ("offset", GROUP_ID, "foo", 0, 37)
    ]


def test_delete_offset_of_dead_consumer_group(ctx: Context) -> None:
    group = ClassicGroup(GROUP_ID, ctx.time, state=GroupState.DEAD, protocol_type=PROTOCOL_TYPE)
    ctx.coordinator.manager.groups[GROUP_ID] = group
    assert ctx.delete_offsets(GROUP_ID, [TopicPartition("foo", 0)]) == (Errors.GROUP_ID_NOT_FOUND, {})
    assert ctx.take_records() == []


def test_delete_offset_of_empty_consumer_group(ctx: Context) -> None:
    foo, bar, member = _commit_two_and_leave(ctx, PROTOCOL_TYPE)
    assert ctx.delete_offsets(GROUP_ID, [foo]) == (Errors.NONE, {foo: Errors.NONE})
    offsets = ctx.coordinator.manager.get_offsets(GROUP_ID, True, [foo, bar])
    assert (offsets[foo].offset, offsets[bar].offset) == (-1, 37)
    assert ctx.take_records()[-1] == ("offset", GROUP_ID, "foo", 0, None)


def test_deleting_the_last_offsets_of_an_empty_group_leaves_it_empty_until_the_expiration_check(
    ctx: Context,
) -> None:
    """As Kafka 4's OffsetMetadataManager.deleteOffsets: only the offsets are tombstoned and
    the group stays Empty (``kafka-consumer-groups --describe --state`` still shows it); the
    next expiration check (cleanupGroupMetadata) removes it and tombstones its metadata.
    Kafka 3.9's handleDeleteOffsets removed it at once."""
    foo, bar, member = _commit_two_and_leave(ctx, PROTOCOL_TYPE)
    group = ctx.group(GROUP_ID)
    assert ctx.delete_offsets(GROUP_ID, [foo, bar]) == (Errors.NONE, {foo: Errors.NONE, bar: Errors.NONE})
    assert group.state is GroupState.EMPTY
    assert ctx.coordinator.manager.get_group(GROUP_ID) is group
    assert ctx.take_records()[-2:] == [("offset", GROUP_ID, "foo", 0, None), ("offset", GROUP_ID, "bar", 0, None)]
    assert ctx.delete_offsets(GROUP_ID, [foo]) == (Errors.NONE, {foo: Errors.NONE})
    assert ctx.take_records() == [], "nothing left to tombstone"
    assert ctx.coordinator.cleanup_group_metadata() == 0
    ctx.settle()
    assert group.state is GroupState.DEAD
    assert ctx.coordinator.manager.get_group(GROUP_ID) is None
    assert ctx.take_records() == [("group", GROUP_ID, None)]
    assert ctx.delete_offsets(GROUP_ID, [foo]) == (Errors.GROUP_ID_NOT_FOUND, {})


def test_deleting_the_offsets_of_a_simple_group_leaves_it_to_the_expiration_check(ctx: Context) -> None:
    """A group that only stored offsets (generation 0) stays, Empty, until the expiration
    check, which removes it with a metadata tombstone, as Kafka 4's
    ``ClassicGroup.createGroupTombstoneRecords`` writes for every classic group (3.9 wrote
    none for generation 0)."""
    foo = TopicPartition("foo", 0)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {foo: ctx.offset_and_metadata(5)}) == {foo: Errors.NONE}
    assert ctx.delete_offsets(GROUP_ID, [foo]) == (Errors.NONE, {foo: Errors.NONE})
    assert ctx.group(GROUP_ID).state is GroupState.EMPTY
    assert ctx.take_records() == [("offset", GROUP_ID, "foo", 0, 5), ("offset", GROUP_ID, "foo", 0, None)]
    ctx.coordinator.cleanup_group_metadata()
    ctx.settle()
    assert ctx.coordinator.manager.get_group(GROUP_ID) is None
    assert ctx.take_records() == [("group", GROUP_ID, None)]


KAFKA_GO_SUBSCRIPTION = bytes.fromhex("0001" "00000001" "0003" + b"bar".hex() + "ffffffff")
"""kafka-go 0.4's subscription: it declares version 1 but leaves out v1's owned partitions."""


@pytest.mark.parametrize("client", ["java", "kafka-go"])
def test_delete_offset_of_stable_consumer_group(ctx: Context, client: str) -> None:
    # Kafka reads a subscription's topics as its v0 prefix, whatever version it declares.
    subscription = (
        codec.encode_subscription(codec.ConsumerProtocolSubscription(["bar"])) if client == "java"
        else KAFKA_GO_SUBSCRIPTION
    )
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, [("protocol", subscription)])
    assert join.error == Errors.NONE
    assert ctx.sync_group_leader(GROUP_ID, join.generation_id, join.leader_id, {}).error == Errors.NONE
    foo, bar = TopicPartition("foo", 0), TopicPartition("bar", 0)
    offset = ctx.offset_and_metadata(37)
    assert ctx.commit_offsets(GROUP_ID, join.member_id, join.generation_id, {foo: offset, bar: offset}) \
        == {foo: Errors.NONE, bar: Errors.NONE}
    ctx.assert_group_state(GroupState.STABLE)
    assert ctx.delete_offsets(GROUP_ID, [foo, bar]) == (
        Errors.NONE, {foo: Errors.NONE, bar: Errors.GROUP_SUBSCRIBED_TO_TOPIC}
    )
    offsets = ctx.coordinator.manager.get_offsets(GROUP_ID, True, [foo, bar])
    assert (offsets[foo].offset, offsets[bar].offset) == (-1, 37)
    assert ctx.take_records()[-1] == ("offset", GROUP_ID, "foo", 0, None)


# --- initial rebalance delay ----------------------------------------------------------------

def test_should_delay_initial_rebalance_by_group_initial_rebalance_delay_on_empty_group(ctx: Context) -> None:
    first = ctx.send_join_group(GROUP_ID, UNKNOWN)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY // 2)
    assert not first.done
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY // 2 + 1)
    assert first.result().error == Errors.NONE
    assert ctx.take_records() == []


def test_should_reset_rebalance_delay_when_new_member_joins_group_in_initial_rebalance(ctx: Context) -> None:
    rebalance_timeout = GROUP_INITIAL_REBALANCE_DELAY * 3
    first = ctx.send_join_group(GROUP_ID, UNKNOWN, rebalance_timeout=rebalance_timeout)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY - 1)
    second = ctx.send_join_group(GROUP_ID, UNKNOWN, rebalance_timeout=rebalance_timeout)
    ctx.sleep(2)
    # Past the first delay: not complete, the second member extended it.
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY // 2 + 1)
    assert not first.done and not second.done
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY // 2)
    assert first.result().error == Errors.NONE
    assert second.result().error == Errors.NONE
    assert ctx.take_records() == []


def test_should_delay_rebalance_upto_rebalance_timeout(ctx: Context) -> None:
    rebalance_timeout = GROUP_INITIAL_REBALANCE_DELAY * 2
    first = ctx.send_join_group(GROUP_ID, UNKNOWN, rebalance_timeout=rebalance_timeout)
    second = ctx.send_join_group(GROUP_ID, UNKNOWN, rebalance_timeout=rebalance_timeout)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    third = ctx.send_join_group(GROUP_ID, UNKNOWN, rebalance_timeout=rebalance_timeout)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY - 1)
    assert not (first.done or second.done or third.done)
    # The extensions stop at the rebalance timeout.
    ctx.sleep(1)
    assert [a.result().error for a in (first, second, third)] == [Errors.NONE] * 3
    assert ctx.take_records() == []


def test_complete_heartbeat_with_group_dead(ctx: Context) -> None:
    result = static_members_join_and_rebalance(ctx)
    ctx.heartbeat(GROUP_ID, result.leader_id, result.generation)
    group = ctx.group()
    group.transition_to(GroupState.DEAD)
    # A session deadline expiring on a Dead group does nothing.
    ctx.coordinator.classic.on_session_deadline(member_key(GROUP_ID, result.leader_id))
    assert group.has(result.leader_id)
    assert ctx.take_records() == []
    ctx.replay_check = False  # the group was made Dead by hand


def test_complete_heartbeat_with_member_already_removed(ctx: Context) -> None:
    result = static_members_join_and_rebalance(ctx)
    ctx.heartbeat(GROUP_ID, result.leader_id, result.generation)
    group = ctx.group()
    group.remove(result.leader_id)
    # A session deadline expiring for a member already gone does nothing.
    ctx.coordinator.classic.on_session_deadline(member_key(GROUP_ID, result.leader_id))
    ctx.assert_group_state(GroupState.STABLE)
    assert ctx.take_records() == []
    ctx.replay_check = False  # the member was removed by hand


def test_batches_carry_kafka_39s_base_sequences(ctx: Context) -> None:
    """Kafka 3.9 builds offset commit batches, transactional or not, with base sequence 0, and
    writes group metadata, tombstones and markers with none (-1)."""
    join, tp = stable_group_with_a_commit(ctx)
    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 2, {tp: ctx.offset_and_metadata(1)}) == {tp: Errors.NONE}
    assert ctx.complete_transaction(1000, [ctx.group_partition], commit=True) == Errors.NONE
    _verify_leave(ctx.single_leave_group(GROUP_ID, join.member_id))
    assert ctx.delete_groups([GROUP_ID]) == {GROUP_ID: Errors.NONE}
    batches = codec.read_batches(ctx.log.segment_bytes(ctx.group_partition))
    written = [
        ("marker" if b.is_control else "offset" if isinstance(codec.decode_key(b.records[0].key), codec.OffsetCommitKey)
         else "group",
         b.records[0].value is None, b.base_sequence)
        for b in batches
    ]
    assert written == [
        ("group", False, -1),
        ("offset", False, 0),
        ("offset", False, 0),
        ("marker", False, -1),
        ("group", False, -1),
        ("offset", True, -1),  # the group's tombstone after its offsets', in one batch
    ]


def test_deleting_a_group_that_only_stores_offsets_tombstones_its_offsets_and_metadata(ctx: Context) -> None:
    """Kafka 4's ``GroupCoordinatorShard.deleteGroups`` tombstones the offsets, then the group
    (``ClassicGroup.createGroupTombstoneRecords``), a simple group's too, although it never
    wrote metadata (offsets committed with generation -1). Kafka 3.9 tombstoned a group's
    metadata only for a generation above 0."""
    tp = TopicPartition("topic", 0)
    assert ctx.commit_offsets(GROUP_ID, "", -1, {tp: ctx.offset_and_metadata(0)}) == {tp: Errors.NONE}
    assert ctx.delete_groups([GROUP_ID]) == {GROUP_ID: Errors.NONE}
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "topic", 0, 0), ("offset", GROUP_ID, "topic", 0, None), ("group", GROUP_ID, None),
    ]
    assert ctx.coordinator.handle_describe_group(GROUP_ID)[1].state == "Dead"
