"""JoinGroup: front door, protocols, group.max.size, KIP-394 pending members, new-member
timeouts. Ported from Kafka's GroupCoordinatorTest, test for test (same names, in
snake_case), each also checking the records written.

Kafka's MockTimer runs a task once the clock is strictly past its expiration; a real timer, and
our purgatory, run it at its expiration. Where a test waits exactly a timeout to stay short of
it, the wait here is one millisecond shorter."""

from __future__ import annotations

from coordinator_context import (
    CLIENT_HOST,
    CLIENT_ID,
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    GROUP_INSTANCE_ID,
    GROUP_MAX_SESSION_TIMEOUT,
    GROUP_MAX_SIZE,
    GROUP_MIN_SESSION_TIMEOUT,
    MEMBER_ID,
    METADATA,
    OTHER_GROUP_ID,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN,
    Context,
)

from groupcoord.config import Config
from groupcoord.coordinator import NEW_MEMBER_JOIN_TIMEOUT_MS, ClassicGroup, ClassicGroupMember, GroupState
from groupcoord.errors import Errors


def test_request_handling_while_loading_in_progress(ctx: Context) -> None:
    other_partition = ctx.coordinator.partition_for(OTHER_GROUP_ID)
    assert other_partition != ctx.group_partition
    assert ctx.coordinator.begin_loading(other_partition)
    assert ctx.coordinator.manager.ownership_error(OTHER_GROUP_ID) == Errors.COORDINATOR_LOAD_IN_PROGRESS

    assert ctx.send_join_group(OTHER_GROUP_ID, MEMBER_ID, require_known_member_id=True).result().error \
        == Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert ctx.send_join_group(OTHER_GROUP_ID, MEMBER_ID, group_instance_id=GROUP_INSTANCE_ID).result().error \
        == Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert ctx.sync_group_follower(OTHER_GROUP_ID, 1, MEMBER_ID).error == Errors.REBALANCE_IN_PROGRESS
    tp = ("foo", 0)
    from groupcoord.coordinator import TopicPartition

    tp = TopicPartition("foo", 0)
    assert ctx.commit_offsets(OTHER_GROUP_ID, MEMBER_ID, 1, {tp: ctx.offset_and_metadata(15)}) \
        == {tp: Errors.COORDINATOR_LOAD_IN_PROGRESS}
    assert ctx.heartbeat(OTHER_GROUP_ID, MEMBER_ID, 1) == Errors.NONE
    assert ctx.coordinator.handle_describe_group(OTHER_GROUP_ID)[0] == Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert ctx.coordinator.handle_list_groups()[0] == Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert ctx.delete_groups([OTHER_GROUP_ID]) == {OTHER_GROUP_ID: Errors.COORDINATOR_LOAD_IN_PROGRESS}
    # Groups of other partitions stay reachable.
    assert ctx.coordinator.handle_describe_group(GROUP_ID)[0] == Errors.NONE

    ctx.coordinator.complete_loading(other_partition)
    assert ctx.coordinator.handle_describe_group(OTHER_GROUP_ID)[0] == Errors.NONE
    assert ctx.take_records() == [] and ctx.take_records(other_partition) == []


def test_offsets_retention_ms_integer_overflow() -> None:
    config = Config.from_properties({"offsets.retention.minutes": 2**31 - 1})
    assert config.offsets_retention_ms == (2**31 - 1) * 60 * 1000


def test_join_group_wrong_coordinator(ctx: Context) -> None:
    assert ctx.dynamic_join_group(OTHER_GROUP_ID, UNKNOWN).error == Errors.NOT_COORDINATOR
    assert ctx.static_join_group(OTHER_GROUP_ID, UNKNOWN, GROUP_INSTANCE_ID).error == Errors.NOT_COORDINATOR
    assert ctx.take_records() == []


def test_join_group_should_receive_error_if_group_over_max_size(ctx: Context) -> None:
    rebalance_timeout = GROUP_INITIAL_REBALANCE_DELAY * 2
    answers = []
    for i in range(1, GROUP_MAX_SIZE + 1):
        answers.append(ctx.send_join_group(GROUP_ID, UNKNOWN, rebalance_timeout=rebalance_timeout))
        if i != 1:
            ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY - 1)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    assert [a.result().error for a in answers] == [Errors.NONE] * GROUP_MAX_SIZE

    error = ctx.send_join_group(GROUP_ID, UNKNOWN, rebalance_timeout=rebalance_timeout)
    assert error.result().error == Errors.GROUP_MAX_SIZE_REACHED
    assert ctx.take_records() == []


def test_dynamic_members_join_group_with_max_size_and_required_known_member(ctx: Context) -> None:
    members = GROUP_MAX_SIZE + 1
    first = [ctx.send_join_group(GROUP_ID, UNKNOWN, require_known_member_id=True) for _ in range(members)]
    member_ids = [a.result().member_id for a in first]
    assert all(a.result().error == Errors.MEMBER_ID_REQUIRED for a in first)

    second = [ctx.send_join_group(GROUP_ID, m, require_known_member_id=True) for m in member_ids]
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    errors = [a.result().error for a in second]
    assert errors.count(Errors.NONE) == GROUP_MAX_SIZE
    assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == members - GROUP_MAX_SIZE

    # While completing the rebalance, accepted members may rejoin, the others may not.
    rejoin = [ctx.send_join_group(GROUP_ID, m, require_known_member_id=True) for m in member_ids]
    assert [a.result().error for a in rejoin] == errors
    assert ctx.take_records() == []


def test_dynamic_members_join_group_with_max_size(ctx: Context) -> None:
    members = GROUP_MAX_SIZE + 1
    answers = [ctx.send_join_group(GROUP_ID, UNKNOWN) for _ in range(members)]
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    results = [a.result() for a in answers]
    errors = [r.error for r in results]
    assert errors.count(Errors.NONE) == GROUP_MAX_SIZE
    assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == members - GROUP_MAX_SIZE

    rejoin = [ctx.send_join_group(GROUP_ID, r.member_id) for r in results]
    assert [a.result().error for a in rejoin] == errors
    assert ctx.take_records() == []


def test_static_members_join_group_with_max_size(ctx: Context) -> None:
    instance_ids = [f"instance-id-{i}" for i in range(1, GROUP_MAX_SIZE + 2)]
    answers = [ctx.send_join_group(GROUP_ID, UNKNOWN, group_instance_id=i) for i in instance_ids]
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    results = [a.result() for a in answers]
    errors = [r.error for r in results]
    assert errors.count(Errors.NONE) == GROUP_MAX_SIZE
    assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == 1

    rejoin = [
        ctx.send_join_group(GROUP_ID, r.member_id, group_instance_id=i)
        for i, r in zip(instance_ids, results, strict=True)
    ]
    assert [a.result().error for a in rejoin] == errors
    assert ctx.take_records() == []


def test_dynamic_members_can_re_join_group_with_max_size_while_rebalancing(ctx: Context) -> None:
    members = GROUP_MAX_SIZE + 1
    first = [ctx.send_join_group(GROUP_ID, UNKNOWN, require_known_member_id=True) for _ in range(members)]
    member_ids = [a.result().member_id for a in first]
    for m in member_ids:
        ctx.send_join_group(GROUP_ID, m, require_known_member_id=True)
    # Members rejoin while the group is rebalancing.
    rejoin = [ctx.send_join_group(GROUP_ID, m, require_known_member_id=True) for m in member_ids]
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    errors = [a.result().error for a in rejoin]
    assert errors.count(Errors.NONE) == GROUP_MAX_SIZE
    assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == members - GROUP_MAX_SIZE
    assert ctx.take_records() == []


def test_last_joining_members_are_kicked_out_when_re_joining_group_with_max_size(ctx: Context) -> None:
    members = GROUP_MAX_SIZE + 2
    group = ClassicGroup(GROUP_ID, ctx.time, state=GroupState.STABLE)
    member_ids = [group.generate_member_id(CLIENT_ID, None) for _ in range(members)]
    for m in member_ids:
        group.add(ClassicGroupMember(m, None, CLIENT_ID, CLIENT_HOST, DEFAULT_REBALANCE_TIMEOUT,
                                     GROUP_MAX_SESSION_TIMEOUT, PROTOCOL_TYPE, list(PROTOCOLS)))
    ctx.coordinator.manager.groups[GROUP_ID] = group
    ctx.coordinator.classic.prepare_rebalance(group, "")

    answers = [ctx.send_join_group(GROUP_ID, m, session_timeout=GROUP_MAX_SESSION_TIMEOUT) for m in member_ids]
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    errors = [a.result().error for a in answers]
    assert set(errors[:GROUP_MAX_SIZE]) == {Errors.NONE}
    assert set(errors[GROUP_MAX_SIZE:]) == {Errors.GROUP_MAX_SIZE_REACHED}
    for m in member_ids[GROUP_MAX_SIZE:]:
        assert not group.has(m)
    # The wait also outlasted the sync phase: nobody synced, so every member was removed and
    # the group became Empty in generation 2, which is written.
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {})]


def test_join_group_session_timeout_too_small(ctx: Context) -> None:
    result = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, session_timeout=GROUP_MIN_SESSION_TIMEOUT - 1)
    assert result.error == Errors.INVALID_SESSION_TIMEOUT
    assert ctx.take_records() == []


def test_join_group_session_timeout_too_large(ctx: Context) -> None:
    result = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, session_timeout=GROUP_MAX_SESSION_TIMEOUT + 1)
    assert result.error == Errors.INVALID_SESSION_TIMEOUT
    assert ctx.take_records() == []


def test_join_group_unknown_consumer_new_group(ctx: Context) -> None:
    assert ctx.dynamic_join_group(GROUP_ID, MEMBER_ID).error == Errors.UNKNOWN_MEMBER_ID
    assert ctx.static_join_group(GROUP_ID, MEMBER_ID, GROUP_INSTANCE_ID).error == Errors.UNKNOWN_MEMBER_ID
    assert ctx.take_records() == []


def test_invalid_group_id(ctx: Context) -> None:
    assert ctx.dynamic_join_group("", UNKNOWN).error == Errors.INVALID_GROUP_ID
    assert ctx.take_records() == []


def test_valid_join_group(ctx: Context) -> None:
    result = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert result.error == Errors.NONE
    assert result.generation_id == 1 and result.leader_id == result.member_id
    assert [m.member_id for m in result.members] == [result.member_id]
    # Nothing is written until the leader's SyncGroup.
    assert ctx.take_records() == []


def test_join_group_inconsistent_protocol_type(ctx: Context) -> None:
    assert ctx.dynamic_join_group(GROUP_ID, UNKNOWN).error == Errors.NONE
    other = ctx.send_join_group(GROUP_ID, UNKNOWN, "connect", PROTOCOLS)
    assert other.result().error == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert ctx.take_records() == []


def test_join_group_with_empty_protocol_type(ctx: Context) -> None:
    assert ctx.dynamic_join_group(GROUP_ID, UNKNOWN, "", PROTOCOLS).error == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert ctx.static_join_group(GROUP_ID, UNKNOWN, GROUP_INSTANCE_ID, "", PROTOCOLS).error \
        == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert ctx.take_records() == []


def test_join_group_with_empty_group_protocol(ctx: Context) -> None:
    assert ctx.dynamic_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, []).error == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert ctx.take_records() == []


def test_new_member_timeout_completion(ctx: Context) -> None:
    session_timeout = NEW_MEMBER_JOIN_TIMEOUT_MS + 5000
    answer = ctx.send_join_group(GROUP_ID, UNKNOWN, session_timeout=session_timeout)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    join = answer.result()
    group = ctx.group()
    assert join.error == Errors.NONE
    assert sum(m.is_new for m in group.members.values()) == 0

    sync = ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})
    assert sync.error == Errors.NONE
    assert group.size == 1
    assert ctx.take_records() == [("group", GROUP_ID, 1, join.member_id, {join.member_id: b""})]

    ctx.sleep(NEW_MEMBER_JOIN_TIMEOUT_MS + 100)
    # The new-member timeout no longer applies: the member is still there.
    assert group.size == 1
    ctx.sleep(session_timeout + 100)
    assert group.size == 0
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {})]


def test_new_member_join_expiration(ctx: Context) -> None:
    session_timeout = NEW_MEMBER_JOIN_TIMEOUT_MS + 5000
    rebalance_timeout = NEW_MEMBER_JOIN_TIMEOUT_MS * 2
    first = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, session_timeout=session_timeout,
                                   rebalance_timeout=rebalance_timeout)
    assert first.error == Errors.NONE and first.leader_id == first.member_id
    group = ctx.group()
    assert sum(m.is_new for m in group.members.values()) == 0

    answer = ctx.send_join_group(GROUP_ID, UNKNOWN, session_timeout=session_timeout,
                                 rebalance_timeout=rebalance_timeout)
    assert not answer.done
    assert group.size == 2
    new_member = next(m for m in group.members.values() if m.is_new)
    assert new_member.member_id != first.member_id

    ctx.sleep(NEW_MEMBER_JOIN_TIMEOUT_MS + 1)
    assert answer.done
    assert answer.result().error == Errors.UNKNOWN_MEMBER_ID
    assert list(group.members) == [first.member_id]
    assert not any(m.is_new for m in group.members.values())
    assert ctx.take_records() == []


def _first_member_stable(ctx: Context) -> tuple[str, int]:
    first = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert first.error == Errors.NONE and first.leader_id == first.member_id
    sync = ctx.sync_group_leader(GROUP_ID, first.generation_id, first.member_id, {first.member_id: b""})
    assert sync.error == Errors.NONE
    assert ctx.take_records() == [("group", GROUP_ID, 1, first.member_id, {first.member_id: b""})]
    return first.member_id, first.generation_id


def _verify_session_expiration(ctx: Context) -> None:
    ctx.sleep(DEFAULT_SESSION_TIMEOUT + 1)
    group = ctx.group()
    assert group.state is GroupState.EMPTY
    assert not group.members


def test_new_member_failure_after_join_group_completion(ctx: Context) -> None:
    first_member, _ = _first_member_stable(ctx)
    other = ctx.send_join_group(GROUP_ID, UNKNOWN)
    join = ctx.send_join_group(GROUP_ID, first_member)
    assert join.result().error == Errors.NONE
    assert other.result().error == Errors.NONE
    _verify_session_expiration(ctx)
    # Both members expired: the empty generation 3 is written.
    assert ctx.take_records() == [("group", GROUP_ID, 3, None, {})]


def test_new_member_failure_after_sync_group_completion(ctx: Context) -> None:
    first_member, _ = _first_member_stable(ctx)
    other = ctx.send_join_group(GROUP_ID, UNKNOWN)
    join = ctx.send_join_group(GROUP_ID, first_member).result()
    other_join = other.result()
    assert join.error == Errors.NONE and other_join.error == Errors.NONE
    second_generation, second_member = join.generation_id, other_join.member_id

    ctx.send_sync_group_follower(GROUP_ID, second_generation, second_member)
    sync = ctx.sync_group_leader(GROUP_ID, second_generation, first_member,
                                 {first_member: b"", second_member: b""})
    assert sync.error == Errors.NONE
    assert ctx.take_records() == [
        ("group", GROUP_ID, 2, first_member, {first_member: b"", second_member: b""})
    ]
    _verify_session_expiration(ctx)
    assert ctx.take_records() == [("group", GROUP_ID, 3, None, {})]


def test_join_group_inconsistent_group_protocol(ctx: Context) -> None:
    answer = ctx.send_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, [("range", METADATA)])
    other = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, [("roundrobin", METADATA)])
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    assert answer.result().error == Errors.NONE
    assert other.error == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert ctx.take_records() == []


def test_join_group_unknown_consumer_existing_group(ctx: Context) -> None:
    assert ctx.dynamic_join_group(GROUP_ID, UNKNOWN).error == Errors.NONE
    assert ctx.send_join_group(GROUP_ID, "memberId").result().error == Errors.UNKNOWN_MEMBER_ID
    assert ctx.take_records() == []


def test_join_group_unknown_consumer_new_dead_group(ctx: Context) -> None:
    ctx.coordinator.manager.groups["deadGroupId"] = ClassicGroup("deadGroupId", ctx.time, state=GroupState.DEAD)
    assert ctx.dynamic_join_group("deadGroupId", UNKNOWN).error == Errors.COORDINATOR_NOT_AVAILABLE
    assert ctx.take_records() == []


def test_sync_dead_group(ctx: Context) -> None:
    ctx.coordinator.manager.groups["deadGroupId"] = ClassicGroup("deadGroupId", ctx.time, state=GroupState.DEAD)
    assert ctx.sync_group_follower("deadGroupId", 1, "memberId").error == Errors.COORDINATOR_NOT_AVAILABLE
    assert ctx.take_records() == []


def test_join_group_second_join_inconsistent_protocol(ctx: Context) -> None:
    result = ctx.send_join_group(GROUP_ID, UNKNOWN, require_known_member_id=True).result()
    assert result.error == Errors.MEMBER_ID_REQUIRED
    member_id = result.member_id
    # An inconsistent protocol is refused...
    result = ctx.send_join_group(GROUP_ID, member_id, PROTOCOL_TYPE, [], require_known_member_id=True).result()
    assert result.error == Errors.INCONSISTENT_GROUP_PROTOCOL
    # ...a consistent one accepted.
    answer = ctx.send_join_group(GROUP_ID, member_id, require_known_member_id=True)
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    assert answer.result().error == Errors.NONE
    assert ctx.take_records() == []


def test_generation_id_increments_on_rebalance(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE and join.generation_id == 1
    sync = ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})
    assert sync.error == Errors.NONE
    rejoin = ctx.send_join_group(GROUP_ID, join.member_id).result()
    assert rejoin.error == Errors.NONE and rejoin.generation_id == 2
    assert ctx.take_records() == [("group", GROUP_ID, 1, join.member_id, {join.member_id: b""})]


def test_a_protocol_named_twice_counts_once(ctx: Context) -> None:
    # Not in Kafka's suite: one member listing a protocol twice must not outvote the others
    # (found in review: it once wedged the group's rebalance).
    first = ctx.send_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, [("y", b"")])
    second = ctx.send_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, [("y", b"1"), ("x", b""), ("x", b""), ("y", b"2")])
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    b = second.result()
    assert first.result().error == b.error == Errors.NONE and b.protocol_name == "y"
    assert ctx.group().get(b.member_id).supported_protocols == [("y", b"1"), ("x", b"")]
    # "x" is not supported by every member, however often it is named.
    rejoin = ctx.send_join_group(GROUP_ID, b.member_id, PROTOCOL_TYPE, [("x", b""), ("x", b"")])
    assert rejoin.result().error == Errors.INCONSISTENT_GROUP_PROTOCOL
    leader = first.result().member_id
    assert ctx.sync_group_leader(GROUP_ID, 1, leader, {}).error == Errors.NONE
    assert ctx.take_records() == [("group", GROUP_ID, 1, leader, {leader: b"", b.member_id: b""})]


def test_protocol_votes_forget_names_no_member_supports(ctx: Context) -> None:
    """Found by fuzzing: a member rejoining with new protocol names each time grew the tally
    (and each protocol vote's scan) without bound."""
    group = ClassicGroup(GROUP_ID, ctx.time, state=GroupState.STABLE)
    a, b = (ClassicGroupMember(m, None, CLIENT_ID, CLIENT_HOST, DEFAULT_REBALANCE_TIMEOUT, GROUP_MAX_SESSION_TIMEOUT,
                               PROTOCOL_TYPE, [("range", b""), ("shared", b"")]) for m in ("a", "b"))
    group.add(a)
    group.add(b)
    for i in range(100):
        group.update_member(a, [("range", b""), (f"fresh-{i}", b"")], DEFAULT_REBALANCE_TIMEOUT,
                            GROUP_MAX_SESSION_TIMEOUT, None)
    assert dict(group._protocol_votes) == {"range": 2, "shared": 1, "fresh-99": 1}
    assert group.select_protocol() == "range"
    group.remove("b")
    assert dict(group._protocol_votes) == {"range": 1, "fresh-99": 1}
