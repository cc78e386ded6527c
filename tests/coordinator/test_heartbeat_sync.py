"""Heartbeat, sessions, SyncGroup, KIP-394 pending members and the sync phase's timeout
(DelayedSync). Ported from Kafka's GroupCoordinatorTest, each also checking the records
written.

Kafka's MockTimer runs a task once the clock is strictly past its expiration; a real timer, and
our purgatory, run it at its expiration. Where an original heartbeats exactly one session
timeout after the last one, the wait here is one millisecond shorter."""

from __future__ import annotations

from coordinator_context import (
    CLIENT_HOST,
    CLIENT_ID,
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    GROUP_INSTANCE_ID,
    LEADER_INSTANCE_ID,
    MEMBER_ID,
    OTHER_GROUP_ID,
    PROTOCOL_NAME,
    PROTOCOL_TYPE,
    UNKNOWN,
    Context,
)

from groupcoord.coordinator import ClassicGroup, ClassicGroupMember, GroupState, JoinGroupResult, TopicPartition
from groupcoord.errors import Errors


def _join_and_sync_one(ctx: Context, **kwargs: int) -> JoinGroupResult:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, **kwargs)
    assert join.error == Errors.NONE
    sync = ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})
    assert sync.error == Errors.NONE
    assert ctx.take_records() == [("group", GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})]
    return join


# --- Heartbeat ------------------------------------------------------------------------------

def test_heartbeat_wrong_coordinator(ctx: Context) -> None:
    assert ctx.heartbeat(OTHER_GROUP_ID, MEMBER_ID, -1) == Errors.NOT_COORDINATOR
    assert ctx.take_records() == []


def test_heartbeat_unknown_group(ctx: Context) -> None:
    assert ctx.heartbeat(GROUP_ID, MEMBER_ID, -1) == Errors.UNKNOWN_MEMBER_ID
    assert ctx.take_records() == []


def test_heartbeat_dead_group(ctx: Context) -> None:
    ctx.coordinator.manager.groups["deadGroupId"] = ClassicGroup("deadGroupId", ctx.time, state=GroupState.DEAD)
    assert ctx.heartbeat("deadGroupId", MEMBER_ID, 1) == Errors.COORDINATOR_NOT_AVAILABLE
    assert ctx.take_records() == []


def test_heartbeat_empty_group(ctx: Context) -> None:
    group = ClassicGroup(GROUP_ID, ctx.time)
    group.add(ClassicGroupMember(MEMBER_ID, GROUP_INSTANCE_ID, CLIENT_ID, CLIENT_HOST,
                                 DEFAULT_REBALANCE_TIMEOUT, DEFAULT_SESSION_TIMEOUT, PROTOCOL_TYPE,
                                 [("range", b""), ("roundrobin", b"")]))
    ctx.coordinator.manager.groups[GROUP_ID] = group
    assert ctx.heartbeat(GROUP_ID, MEMBER_ID, 0) == Errors.UNKNOWN_MEMBER_ID
    assert ctx.take_records() == []
    ctx.replay_check = False  # a group built by hand, never written


def test_heartbeat_unknown_consumer_existing_group(ctx: Context) -> None:
    _join_and_sync_one(ctx)
    assert ctx.heartbeat(GROUP_ID, "memberId", 1) == Errors.UNKNOWN_MEMBER_ID
    assert ctx.take_records() == []


def test_heartbeat_rebalance_in_progress(ctx: Context) -> None:
    # (Named after the original; the group is in CompletingRebalance, where heartbeats are fine.)
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    assert ctx.heartbeat(GROUP_ID, join.member_id, 1) == Errors.NONE
    assert ctx.take_records() == []


def test_heartbeat_illegal_generation(ctx: Context) -> None:
    join = _join_and_sync_one(ctx)
    assert ctx.heartbeat(GROUP_ID, join.member_id, 2) == Errors.ILLEGAL_GENERATION
    assert ctx.take_records() == []


def test_valid_heartbeat(ctx: Context) -> None:
    join = _join_and_sync_one(ctx)
    assert ctx.heartbeat(GROUP_ID, join.member_id, 1) == Errors.NONE
    assert ctx.take_records() == []


def test_session_timeout(ctx: Context) -> None:
    join = _join_and_sync_one(ctx)
    ctx.sleep(DEFAULT_SESSION_TIMEOUT + 100)
    assert ctx.heartbeat(GROUP_ID, join.member_id, 1) == Errors.UNKNOWN_MEMBER_ID
    # The last member left: the group is Empty in generation 2.
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {})]


def test_heartbeat_maintains_session(ctx: Context) -> None:
    session_timeout = 1000
    join = _join_and_sync_one(ctx, rebalance_timeout=session_timeout, session_timeout=session_timeout)
    ctx.sleep(session_timeout // 2)
    assert ctx.heartbeat(GROUP_ID, join.member_id, 1) == Errors.NONE
    ctx.sleep(session_timeout // 2 + 100)
    assert ctx.heartbeat(GROUP_ID, join.member_id, 1) == Errors.NONE
    assert ctx.take_records() == []


def test_commit_maintains_session(ctx: Context) -> None:
    session_timeout = 1000
    tp = TopicPartition("topic", 0)
    join = _join_and_sync_one(ctx, rebalance_timeout=session_timeout, session_timeout=session_timeout)
    ctx.sleep(session_timeout // 2)
    offsets = {tp: ctx.offset_and_metadata(0)}
    assert ctx.commit_offsets(GROUP_ID, join.member_id, join.generation_id, offsets) == {tp: Errors.NONE}
    ctx.sleep(session_timeout // 2 + 100)
    assert ctx.heartbeat(GROUP_ID, join.member_id, 1) == Errors.NONE
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 0)]


def test_session_timeout_during_rebalance(ctx: Context) -> None:
    first = _join_and_sync_one(ctx, rebalance_timeout=2000, session_timeout=1000)
    assert first.leader_id == first.member_id
    # A new member triggers a rebalance.
    other = ctx.send_join_group(GROUP_ID, UNKNOWN)
    ctx.sleep(500)
    assert ctx.heartbeat(GROUP_ID, first.member_id, first.generation_id) == Errors.REBALANCE_IN_PROGRESS
    # The first member's session runs out: it leaves the group...
    ctx.sleep(1100)
    assert ctx.heartbeat(GROUP_ID, first.member_id, first.generation_id) == Errors.UNKNOWN_MEMBER_ID
    # ...and the rebalance completes with the new member alone.
    assert other.result().error == Errors.NONE
    assert ctx.take_records() == []


def test_rebalance_completes_before_member_joins(ctx: Context) -> None:
    first = ctx.static_join_group(GROUP_ID, UNKNOWN, LEADER_INSTANCE_ID, rebalance_timeout=1200,
                                  session_timeout=1000)
    assert first.leader_id == first.member_id and first.error == Errors.NONE
    assert ctx.sync_group_leader(GROUP_ID, first.generation_id, first.member_id,
                                 {first.member_id: b""}).error == Errors.NONE
    other_session = DEFAULT_SESSION_TIMEOUT
    other = ctx.send_join_group(GROUP_ID, UNKNOWN)
    # Heartbeats keep the first member alive while the rebalance goes on.
    for _ in range(2):
        ctx.sleep(other_session)
        assert ctx.heartbeat(GROUP_ID, first.member_id, first.generation_id) == Errors.REBALANCE_IN_PROGRESS
    # The rebalance times out without the first (static) member.
    ctx.sleep(other_session)
    other_join = other.result()
    other_id, other_generation = other_join.member_id, other_join.generation_id
    assert ctx.sync_group_leader(GROUP_ID, other_generation, other_id, {other_id: b""}).error == Errors.NONE
    # The static member that did not rejoin stays until its session ends.
    assert other_join.error == Errors.NONE
    assert ctx.heartbeat(GROUP_ID, first.member_id, first.generation_id) == Errors.ILLEGAL_GENERATION
    for expected in (Errors.NONE, Errors.NONE, Errors.REBALANCE_IN_PROGRESS):
        ctx.sleep(other_session - 1)
        assert ctx.heartbeat(GROUP_ID, other_id, other_generation) == expected
    rejoin = ctx.send_join_group(GROUP_ID, other_id).result()
    assert rejoin.error == Errors.NONE
    assert ctx.sync_group_leader(GROUP_ID, rejoin.generation_id, other_id, {other_id: b""}).error == Errors.NONE
    # The new member keeps heartbeating: no further rebalance.
    for _ in range(20):
        ctx.sleep(other_session - 1)
        assert ctx.heartbeat(GROUP_ID, other_id, rejoin.generation_id) == Errors.NONE
    assert ctx.take_records() == [
        ("group", GROUP_ID, 1, first.member_id, {first.member_id: b""}),
        ("group", GROUP_ID, 2, other_id, {other_id: b"", first.member_id: b""}),
        ("group", GROUP_ID, 3, other_id, {other_id: b""}),
    ]


# --- SyncGroup ------------------------------------------------------------------------------

def test_sync_group_empty_assignment(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    sync = ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {})
    assert sync.error == Errors.NONE
    assert sync.assignment == b""
    assert ctx.heartbeat(GROUP_ID, join.member_id, 1) == Errors.NONE
    assert ctx.take_records() == [("group", GROUP_ID, 1, join.member_id, {join.member_id: b""})]


def test_sync_group_not_coordinator(ctx: Context) -> None:
    assert ctx.sync_group_follower(OTHER_GROUP_ID, 1, MEMBER_ID).error == Errors.NOT_COORDINATOR
    assert ctx.take_records() == []


def test_sync_group_from_unknown_group(ctx: Context) -> None:
    assert ctx.sync_group_follower(GROUP_ID, 1, MEMBER_ID).error == Errors.UNKNOWN_MEMBER_ID
    assert ctx.take_records() == []


def test_sync_group_from_unknown_member(ctx: Context) -> None:
    join = _join_and_sync_one(ctx)
    assert ctx.sync_group_follower(GROUP_ID, join.generation_id, "blah").error == Errors.UNKNOWN_MEMBER_ID
    assert ctx.take_records() == []


def test_sync_group_from_illegal_generation(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    sync = ctx.sync_group_leader(GROUP_ID, join.generation_id + 1, join.member_id, {join.member_id: b""})
    assert sync.error == Errors.ILLEGAL_GENERATION
    assert ctx.take_records() == []


def test_join_group_from_unchanged_follower_does_not_rebalance(ctx: Context) -> None:
    first = _join_and_sync_one(ctx)
    other = ctx.send_join_group(GROUP_ID, UNKNOWN)
    rejoin = ctx.send_join_group(GROUP_ID, first.member_id)
    join, other_join = rejoin.result(), other.result()
    assert join.error == Errors.NONE and other_join.error == Errors.NONE
    assert join.generation_id == other_join.generation_id
    assert join.leader_id == other_join.leader_id == first.member_id
    # Unchanged protocol metadata: no rebalance.
    follower = ctx.send_join_group(GROUP_ID, other_join.member_id).result()
    assert follower.error == Errors.NONE
    assert follower.generation_id == join.generation_id
    assert ctx.take_records() == []


def test_join_group_from_unchanged_leader_should_rebalance(ctx: Context) -> None:
    first = _join_and_sync_one(ctx)
    # The leader's JoinGroup rebalances: it may carry new assignments for metadata changes.
    second = ctx.send_join_group(GROUP_ID, first.member_id).result()
    assert second.error == Errors.NONE
    assert second.generation_id != first.generation_id
    assert ctx.take_records() == []


def test_second_member_partially_join_and_timeout(ctx: Context) -> None:
    first = _join_and_sync_one(ctx)
    ctx.sleep(100)
    group = ctx.group()
    assert set(group.members) == {first.member_id}
    assert not group.static_members
    assert not group.pending_members
    assert group.state is GroupState.STABLE

    second = ctx.send_join_group(GROUP_ID, UNKNOWN, require_known_member_id=True).result()
    assert second.error == Errors.MEMBER_ID_REQUIRED
    assert len(group.pending_members) == 1
    assert group.state is GroupState.STABLE

    ctx.sleep(300)
    assert ctx.heartbeat(GROUP_ID, first.member_id, 1) == Errors.NONE
    # The pending member's session ends: it is dropped; the group stays Stable.
    ctx.sleep(300)
    assert set(group.members) == {first.member_id}
    assert not group.pending_members
    assert group.state is GroupState.STABLE
    assert ctx.take_records() == []


def _setup_group_with_pending_member(ctx: Context) -> JoinGroupResult:
    """Two members in PreparingRebalance, a third pending (MEMBER_ID_REQUIRED, session 100 ms)."""
    first = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    ctx.assert_group_state(GroupState.COMPLETING_REBALANCE)
    assert ctx.sync_group_leader(GROUP_ID, first.generation_id, first.member_id,
                                 {first.member_id: b""}).error == Errors.NONE
    ctx.assert_group_state(GroupState.STABLE)

    second = ctx.send_join_group(GROUP_ID, UNKNOWN)
    first_rejoin = ctx.send_join_group(GROUP_ID, first.member_id).result()
    second_join = second.result()
    ctx.assert_group_state(GroupState.COMPLETING_REBALANCE)
    assert ctx.sync_group_leader(GROUP_ID, first_rejoin.generation_id, first.member_id,
                                 {first.member_id: b""}).error == Errors.NONE
    ctx.assert_group_state(GroupState.STABLE)

    ctx.send_join_group(GROUP_ID, first_rejoin.member_id)
    ctx.assert_group_state(GroupState.PREPARING_REBALANCE)
    pending = ctx.send_join_group(GROUP_ID, UNKNOWN, session_timeout=100,
                                  require_known_member_id=True).result()
    assert len(ctx.group().pending_members) == 1
    ctx.send_join_group(GROUP_ID, second_join.member_id)
    ctx.assert_group_state(GroupState.PREPARING_REBALANCE)
    assert len(ctx.group().pending_members) == 1
    assert ctx.take_records() == [
        ("group", GROUP_ID, 1, first.member_id, {first.member_id: b""}),
        ("group", GROUP_ID, 2, first.member_id, {first.member_id: b"", second_join.member_id: b""}),
    ]
    return pending


def test_join_group_completion_when_pending_member_joins(ctx: Context) -> None:
    pending = _setup_group_with_pending_member(ctx)
    assert ctx.send_join_group(GROUP_ID, pending.member_id).result().error == Errors.NONE
    ctx.assert_group_state(GroupState.COMPLETING_REBALANCE)
    assert ctx.group().size == 3
    assert not ctx.group().pending_members
    assert ctx.take_records() == []


def test_a_pending_member_rejoining_with_an_instance_id_gets_unknown_server_error(ctx: Context) -> None:
    """Kafka's IllegalStateException, answered as its request handling answers one: the
    member stays pending, the group as it was, and the connection open."""
    pending = _setup_group_with_pending_member(ctx)
    answer = ctx.send_join_group(GROUP_ID, pending.member_id, group_instance_id="instance").result()
    assert (answer.member_id, answer.error) == (pending.member_id, Errors.UNKNOWN_SERVER_ERROR)
    assert ctx.group().pending_members == {pending.member_id}
    ctx.assert_group_state(GroupState.PREPARING_REBALANCE)
    assert ctx.take_records() == []


def test_join_group_completion_when_pending_member_times_out(ctx: Context) -> None:
    _setup_group_with_pending_member(ctx)
    # Past the pending member's session (100 ms), short of the others' (500 ms).
    ctx.sleep(120)
    ctx.assert_group_state(GroupState.COMPLETING_REBALANCE)
    assert ctx.group().size == 2
    assert not ctx.group().pending_members
    assert ctx.take_records() == []


def test_pending_members_leaves_group(ctx: Context) -> None:
    pending = _setup_group_with_pending_member(ctx)
    assert ctx.single_leave_group(GROUP_ID, pending.member_id).error == Errors.NONE
    ctx.assert_group_state(GroupState.COMPLETING_REBALANCE)
    group = ctx.group()
    assert group.size == 2
    assert not group.static_members
    assert not group.pending_members
    assert ctx.take_records() == []


# --- the sync phase's timeout (DelayedSync) -------------------------------------------------

def _join_with_n_members(ctx: Context, members: int) -> list[JoinGroupResult]:
    first = [ctx.send_join_group(GROUP_ID, UNKNOWN, require_known_member_id=True) for _ in range(members)]
    second = [ctx.send_join_group(GROUP_ID, a.result().member_id, require_known_member_id=True) for a in first]
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    results = [a.result() for a in second]
    assert {r.error for r in results} == {Errors.NONE}
    return results


def _heartbeat_all(ctx: Context, results: list[JoinGroupResult], expected: Errors) -> None:
    for r in results:
        assert ctx.heartbeat(GROUP_ID, r.member_id, r.generation_id) == expected


def test_rebalance_times_out_when_sync_request_is_not_received(ctx: Context) -> None:
    results = _join_with_n_members(ctx, 3)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    # Heartbeats do not hold off the sync timeout.
    _heartbeat_all(ctx, results, Errors.NONE)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
    # Nobody synced: every member was removed.
    _heartbeat_all(ctx, results, Errors.UNKNOWN_MEMBER_ID)
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {})]


def test_rebalance_times_out_when_sync_request_is_not_received_from_followers(ctx: Context) -> None:
    results = _join_with_n_members(ctx, 3)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    _heartbeat_all(ctx, results, Errors.NONE)
    leader = results[0]
    assignment = {r.member_id: b"" for r in results}
    sync = ctx.send_sync_group_leader(GROUP_ID, leader.generation_id, leader.member_id, assignment,
                                      PROTOCOL_TYPE, PROTOCOL_NAME)
    assert sync.result().error == Errors.NONE
    _heartbeat_all(ctx, results[:1], Errors.NONE)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
    # The followers that never synced were removed: the leader is asked to rejoin.
    _heartbeat_all(ctx, results[:1], Errors.REBALANCE_IN_PROGRESS)
    _heartbeat_all(ctx, results[1:], Errors.UNKNOWN_MEMBER_ID)
    assert ctx.take_records() == [("group", GROUP_ID, 1, leader.member_id, assignment)]


def test_rebalance_times_out_when_sync_request_is_not_received_from_leaders(ctx: Context) -> None:
    results = _join_with_n_members(ctx, 3)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    _heartbeat_all(ctx, results, Errors.NONE)
    followers = [
        ctx.send_sync_group_follower(GROUP_ID, r.generation_id, r.member_id, PROTOCOL_TYPE, PROTOCOL_NAME)
        for r in results[1:]
    ]
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
    assert {f.result().error for f in followers} == {Errors.REBALANCE_IN_PROGRESS}
    # The leader never synced: removed.
    _heartbeat_all(ctx, results[:1], Errors.UNKNOWN_MEMBER_ID)
    _heartbeat_all(ctx, results[1:], Errors.REBALANCE_IN_PROGRESS)
    assert ctx.take_records() == []


def test_rebalance_does_not_time_out_when_all_sync_are_received(ctx: Context) -> None:
    results = _join_with_n_members(ctx, 3)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    _heartbeat_all(ctx, results, Errors.NONE)
    leader = results[0]
    assignment = {r.member_id: b"" for r in results}
    sync = ctx.send_sync_group_leader(GROUP_ID, leader.generation_id, leader.member_id, assignment,
                                      PROTOCOL_TYPE, PROTOCOL_NAME)
    assert sync.result().error == Errors.NONE
    followers = [
        ctx.send_sync_group_follower(GROUP_ID, r.generation_id, r.member_id, PROTOCOL_TYPE, PROTOCOL_NAME)
        for r in results[1:]
    ]
    assert {f.result().error for f in followers} == {Errors.NONE}
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
    _heartbeat_all(ctx, results, Errors.NONE)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    _heartbeat_all(ctx, results, Errors.NONE)
    assert ctx.take_records() == [("group", GROUP_ID, 1, leader.member_id, assignment)]


def test_sessions_follow_a_monotonic_clock_not_the_wall_clock(ctx: Context) -> None:
    # Timers are measured on the monotonic clock (Kafka's hiResClockMs): NTP stepping the
    # wall clock an hour forward expires nobody, stepping it back delays nothing.
    join = _join_and_sync_one(ctx)
    ctx.time.step_wall_clock(3_600_000)
    ctx.coordinator.poll()
    assert ctx.heartbeat(GROUP_ID, join.member_id, 1) == Errors.NONE
    ctx.time.step_wall_clock(-7_200_000)
    ctx.sleep(DEFAULT_SESSION_TIMEOUT)
    assert ctx.group().size == 0
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {})]
