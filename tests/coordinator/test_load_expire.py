"""Partition immigration and emigration, offset expiration, message.max.bytes. After Kafka 4's
GroupMetadataManagerTest and OffsetMetadataManagerTest (onLoaded/onUnloaded, cleanupExpiredOffsets)
and the expiry rules of KIP-211; each checks the records written."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from coordinator_context import (
    DEFAULT_SESSION_TIMEOUT,
    GROUP_ID,
    UNKNOWN,
    Answer,
    Context,
    static_members_join_and_rebalance,
)

from groupcoord.coordinator import (
    GroupState,
    JoinGroupResult,
    OffsetAndMetadata,
    SyncGroupResult,
    TopicPartition,
)
from groupcoord.coordinator.records import CoordinatorRecord
from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.log import Append
from groupcoord.purgatory import IMPLEMENTATIONS

RETENTION_MS = 60_000
TP = TopicPartition("foo", 0)


def _write(ctx: Context, records: list[CoordinatorRecord], partition: int | None = None) -> None:
    partition = ctx.group_partition if partition is None else partition
    done: list[Any] = []
    ctx.log.append(partition, Append([r.encode() for r in records], ctx.time.milliseconds()), done.append)
    ctx.settle()
    assert isinstance(done[0], int)


def _consumer_group_record(generation: int, members: int, session_timeout: int = 4000) -> CoordinatorRecord:
    subscription = codec.encode_subscription(codec.ConsumerProtocolSubscription(["foo"]))
    return CoordinatorRecord(
        codec.GroupMetadataKey(GROUP_ID),
        codec.GroupMetadataValue("consumer", generation, "range", "member-0", 0, [
            codec.MemberMetadata(f"member-{i}", f"group-instance-id-{i}", f"client-{i}", f"host-{i}",
                                 9000, session_timeout, subscription, b"\x02")
            for i in range(members)
        ]),
    )


def _reload(ctx: Context) -> None:
    ctx.coordinator.unload_partition(ctx.group_partition)
    ctx.coordinator.load_partition(ctx.group_partition, ctx.log)


def test_on_loaded_exceed_group_max_size_triggers_rebalance() -> None:
    ctx = Context(IMPLEMENTATIONS["rust"], **{"group.max.size": 1})
    _write(ctx, [_consumer_group_record(1, 2)])
    _reload(ctx)
    group = ctx.group()
    assert group.state is GroupState.PREPARING_REBALANCE
    assert group.size == 2
    assert ctx.take_records() == [("group", GROUP_ID, 1, "member-0", {"member-0": b"\x02", "member-1": b"\x02"})]


def test_on_loaded_schedules_classic_group_member_heartbeats(ctx: Context) -> None:
    _write(ctx, [_consumer_group_record(1, 2, session_timeout=4000)])
    _reload(ctx)
    group = ctx.group()
    assert group.state is GroupState.STABLE and group.size == 2
    assert group.subscribed_topics == {"foo"}
    # Each member must heartbeat within its session timeout, from the load on.
    ctx.sleep(3999)
    assert group.size == 2
    assert ctx.heartbeat(GROUP_ID, "member-0", 1) == Errors.NONE
    ctx.sleep(1)
    # member-1 is gone; the group rebalances without it.
    assert set(group.members) == {"member-0"}
    assert group.state is GroupState.PREPARING_REBALANCE
    assert ctx.take_records()[-1][0] == "group"


def test_classic_group_on_unloaded_empty_and_preparing_rebalance(ctx: Context) -> None:
    assert ctx.commit_offsets("group1", UNKNOWN, -1, {TP: ctx.offset_and_metadata(1)}) == {TP: Errors.NONE}
    empty = ctx.coordinator.manager.get_group("group1")
    assert empty is not None and empty.state is GroupState.EMPTY
    first = ctx.send_join_group(GROUP_ID, UNKNOWN)
    second = ctx.send_join_group(GROUP_ID, UNKNOWN)
    preparing = ctx.group()
    assert not first.done and not second.done
    assert preparing.state is GroupState.PREPARING_REBALANCE and preparing.size == 2

    ctx.coordinator.unload_partition(ctx.group_partition)
    assert empty.state is GroupState.DEAD and preparing.state is GroupState.DEAD
    for answer in (first, second):
        assert answer.result() == JoinGroupResult(answer.result().member_id, Errors.NOT_COORDINATOR)
    # Requests for the partition's groups now get NOT_COORDINATOR; nothing is left in memory.
    assert ctx.heartbeat(GROUP_ID, first.result().member_id, 0) == Errors.NOT_COORDINATOR
    assert ctx.coordinator.manager.get_group(GROUP_ID) is None
    assert ctx.coordinator.manager.offsets.offset("group1", TP) is None
    # Nothing fires later either: the groups' operations went with them.
    ctx.sleep(10 * DEFAULT_SESSION_TIMEOUT)
    assert ctx.take_records() == [("offset", "group1", "foo", 0, 1)]

    # Loading it again brings back what the log holds.
    ctx.coordinator.load_partition(ctx.group_partition, ctx.log)
    error, data = ctx.fetch_offsets("group1", [TP])
    assert error == Errors.NONE and data[TP].offset == 1
    assert ctx.coordinator.manager.get_group(GROUP_ID) is None


def test_classic_group_on_unloaded_completing_rebalance(ctx: Context) -> None:
    result = static_members_join_and_rebalance(ctx)
    leader = ctx.send_join_group(GROUP_ID, result.leader_id, group_instance_id="leader")
    follower = ctx.send_join_group(GROUP_ID, result.follower_id, group_instance_id="follower")
    assert leader.result().error == follower.result().error == Errors.NONE
    ctx.assert_group_state(GroupState.COMPLETING_REBALANCE)
    sync: Answer[SyncGroupResult] = ctx.send_sync_group_follower(GROUP_ID, 2, result.follower_id)
    assert not sync.done
    group = ctx.group()

    ctx.coordinator.unload_partition(ctx.group_partition)
    assert group.state is GroupState.DEAD
    assert sync.result() == SyncGroupResult(Errors.NOT_COORDINATOR)
    assert ctx.take_records() == []
    # Back from the log: generation 1, Stable, its members' sessions running again.
    ctx.coordinator.load_partition(ctx.group_partition, ctx.log)
    reloaded = ctx.group()
    assert (reloaded.state, reloaded.generation_id, set(reloaded.members)) == (
        GroupState.STABLE, 1, {result.leader_id, result.follower_id})


def test_sync_group_as_leader_append_failure_transforms_error(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    ctx.log.fail_next(Errors.KAFKA_STORAGE_ERROR)
    sync = ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b"x"})
    # A storage error answers NOT_COORDINATOR and the group rebalances.
    assert sync.error == Errors.NOT_COORDINATOR
    ctx.assert_group_state(GroupState.PREPARING_REBALANCE)
    assert ctx.take_records() == []


def test_group_metadata_over_message_max_bytes_fails_sync_group() -> None:
    ctx = Context(IMPLEMENTATIONS["rust"], **{"message.max.bytes": 10_000})
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    sync = ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b"x" * 20_000})
    # The log refuses the batch (MESSAGE_TOO_LARGE); the client sees UNKNOWN_SERVER_ERROR.
    assert sync.error == Errors.UNKNOWN_SERVER_ERROR
    ctx.assert_group_state(GroupState.PREPARING_REBALANCE)
    assert ctx.take_records() == []


# --- offset expiration (KIP-211) ------------------------------------------------------------

def _expiring_context(purgatory: Any) -> Context:
    return Context(purgatory, **{"offsets.retention.minutes": 1})


def test_cleanup_expired_offsets_of_empty_group(ctx: Context) -> None:
    ctx = _expiring_context(ctx.purgatory)
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})
    assert ctx.commit_offsets(GROUP_ID, join.member_id, 1, {TP: ctx.offset_and_metadata(5)}) == {TP: Errors.NONE}
    ctx.sleep(RETENTION_MS)
    # Still Stable with a member (whose session ran out meanwhile, emptying the group).
    ctx.assert_group_state(GroupState.EMPTY)
    emptied_at = ctx.group().current_state_timestamp
    assert ctx.coordinator.cleanup_group_metadata() == 0
    # Retention counts from when the group became Empty.
    assert emptied_at is not None
    ctx.sleep(emptied_at + RETENTION_MS - ctx.time.milliseconds() - 1)
    assert ctx.coordinator.cleanup_group_metadata() == 0
    ctx.sleep(1)
    assert ctx.coordinator.cleanup_group_metadata() == 1
    ctx.settle()
    # No offsets left: the group is gone, its metadata tombstoned.
    assert ctx.coordinator.manager.get_group(GROUP_ID) is None
    assert ctx.fetch_offsets(GROUP_ID, [TP])[1][TP].offset == -1
    assert ctx.take_records() == [
        ("group", GROUP_ID, 1, join.member_id, {join.member_id: b""}),
        ("offset", GROUP_ID, "foo", 0, 5),
        ("group", GROUP_ID, 2, None, {}),
        ("offset", GROUP_ID, "foo", 0, None),
        ("group", GROUP_ID, None),
    ]
    from coordinator_context import assert_replay_matches

    assert_replay_matches(ctx)


def test_cleanup_expired_offsets_of_simple_group(ctx: Context) -> None:
    ctx = _expiring_context(ctx.purgatory)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(5)}) == {TP: Errors.NONE}
    ctx.sleep(RETENTION_MS // 2)
    other = TopicPartition("foo", 1)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {other: ctx.offset_and_metadata(6)}) == {other: Errors.NONE}
    ctx.sleep(RETENTION_MS // 2)
    # A simple group's offsets expire by their commit time: the first only.
    assert ctx.coordinator.cleanup_group_metadata() == 1
    ctx.settle()
    assert ctx.coordinator.manager.get_group(GROUP_ID) is not None
    ctx.sleep(RETENTION_MS // 2)
    assert ctx.coordinator.cleanup_group_metadata() == 1
    ctx.settle()
    # Kafka 4 tombstones the metadata of a group that only stored offsets too
    # (ClassicGroup.createGroupTombstoneRecords; 3.9 wrote none for generation 0).
    assert ctx.coordinator.manager.get_group(GROUP_ID) is None
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "foo", 0, 5), ("offset", GROUP_ID, "foo", 1, 6),
        ("offset", GROUP_ID, "foo", 0, None), ("offset", GROUP_ID, "foo", 1, None), ("group", GROUP_ID, None),
    ]


def test_cleanup_expired_offsets_of_stable_group_only_for_unsubscribed_topics(ctx: Context) -> None:
    ctx = _expiring_context(ctx.purgatory)
    subscription = codec.encode_subscription(codec.ConsumerProtocolSubscription(["foo"]))
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, "consumer", [("range", subscription)],
                                  session_timeout=10 * RETENTION_MS)
    ctx.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})
    bar = TopicPartition("bar", 0)
    assert ctx.commit_offsets(GROUP_ID, join.member_id, 1, {TP: ctx.offset_and_metadata(1), bar: ctx.offset_and_metadata(2)}) \
        == {TP: Errors.NONE, bar: Errors.NONE}
    ctx.sleep(RETENTION_MS)
    assert ctx.coordinator.cleanup_group_metadata() == 1
    ctx.settle()
    _, data = ctx.fetch_offsets(GROUP_ID, [TP, bar])
    assert (data[TP].offset, data[bar].offset) == (1, -1)
    ctx.assert_group_state(GroupState.STABLE)
    assert ctx.take_records()[-1] == ("offset", GROUP_ID, "bar", 0, None)


def test_cleanup_expired_offsets_with_explicit_expire_timestamp(ctx: Context) -> None:
    now = ctx.time.milliseconds()
    offset = OffsetAndMetadata(3, "", now, expire_timestamp_ms=now + 1000)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: offset}) == {TP: Errors.NONE}
    ctx.sleep(999)
    assert ctx.coordinator.cleanup_group_metadata() == 0
    ctx.sleep(1)
    # OffsetCommit v2-v4's retention: expires at its own timestamp, not the broker's retention.
    # The simple group left without offsets is tombstoned too, as Kafka 4 does.
    assert ctx.coordinator.cleanup_group_metadata() == 1
    ctx.settle()
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "foo", 0, 3), ("offset", GROUP_ID, "foo", 0, None), ("group", GROUP_ID, None),
    ]


def test_cleanup_expired_offsets_with_pending_transactional_offsets(ctx: Context) -> None:
    ctx = _expiring_context(ctx.purgatory)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(1)}) == {TP: Errors.NONE}
    assert ctx.commit_transactional_offsets(GROUP_ID, 10, 0, {TP: ctx.offset_and_metadata(2)}) == {TP: Errors.NONE}
    ctx.sleep(RETENTION_MS)
    # An offset with a transactional commit pending does not expire; the group stays.
    assert ctx.coordinator.cleanup_group_metadata() == 0
    assert ctx.coordinator.manager.get_group(GROUP_ID) is not None
    assert ctx.take_records() == [("offset", GROUP_ID, "foo", 0, 1), ("offset", GROUP_ID, "foo", 0, 2)]


def test_expiration_runs_every_offsets_retention_check_interval() -> None:
    ctx = Context(IMPLEMENTATIONS["rust"], **{"offsets.retention.minutes": 1,
                                              "offsets.retention.check.interval.ms": 1000})
    ctx.coordinator._schedule_group_metadata_expiration()
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(1)}) == {TP: Errors.NONE}
    ctx.sleep(RETENTION_MS - 1000)
    assert ctx.fetch_offsets(GROUP_ID, [TP])[1][TP].offset == 1
    ctx.sleep(1000)
    # The periodic task (not a call of the test) expired it, and the simple group with it
    # (Kafka 4 tombstones its metadata too).
    assert ctx.fetch_offsets(GROUP_ID, [TP])[1][TP].offset == -1
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "foo", 0, 1), ("offset", GROUP_ID, "foo", 0, None), ("group", GROUP_ID, None),
    ]


def test_a_failing_expiration_run_is_logged_and_the_next_one_still_comes(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Found by fuzzing: an exception in one run ended the periodic task for good."""
    ctx = Context(IMPLEMENTATIONS["rust"], **{"offsets.retention.minutes": 1,
                                              "offsets.retention.check.interval.ms": 1000})
    ctx.coordinator._schedule_group_metadata_expiration()
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(1)}) == {TP: Errors.NONE}
    cleanup = ctx.coordinator.cleanup_group_metadata
    runs: list[int] = []

    def failing_once() -> int:
        runs.append(ctx.time.milliseconds())
        if len(runs) == 1:
            raise RuntimeError("a bug")
        return cleanup()

    monkeypatch.setattr(ctx.coordinator, "cleanup_group_metadata", failing_once)
    ctx.sleep(1000)
    assert len(runs) == 1 and "Expiring offsets and empty groups failed" in caplog.text
    ctx.sleep(RETENTION_MS)
    assert len(runs) == 2 and ctx.fetch_offsets(GROUP_ID, [TP])[1][TP].offset == -1


def test_cleanup_keeps_a_group_with_a_commit_in_flight(ctx: Context) -> None:
    # Scala's hasOffsets counts pending commits: the group must not die (and be tombstoned)
    # under a commit whose append has not completed.
    ctx = _expiring_context(ctx.purgatory)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(1)}) == {TP: Errors.NONE}
    ctx.sleep(RETENTION_MS)
    other = TopicPartition("foo", 1)
    answer: dict[TopicPartition, Errors] = {}
    ctx.coordinator.handle_commit_offsets(GROUP_ID, UNKNOWN, None, -1, {other: ctx.offset_and_metadata(2)},
                                          answer.update)
    assert ctx.coordinator.cleanup_group_metadata() == 1
    assert ctx.coordinator.manager.get_group(GROUP_ID) is not None
    ctx.settle()
    assert answer == {other: Errors.NONE}
    assert ctx.fetch_offsets(GROUP_ID, [TP, other])[1][other].offset == 2
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "foo", 0, 1), ("offset", GROUP_ID, "foo", 1, 2), ("offset", GROUP_ID, "foo", 0, None),
    ]


def test_cleanup_keeps_a_group_with_a_transactional_commit_in_flight(ctx: Context) -> None:
    # Scala's hasOffsets counts pendingTransactionalOffsetCommits, marked before the append.
    ctx = _expiring_context(ctx.purgatory)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(1)}) == {TP: Errors.NONE}
    ctx.sleep(RETENTION_MS)
    other = TopicPartition("foo", 1)
    answer: dict[TopicPartition, Errors] = {}
    ctx.coordinator.handle_txn_commit_offsets(GROUP_ID, 1000, 0, UNKNOWN, None, -1,
                                              {other: ctx.offset_and_metadata(2)}, answer.update)
    assert ctx.coordinator.cleanup_group_metadata() == 1
    assert ctx.coordinator.manager.get_group(GROUP_ID) is not None
    ctx.settle()
    assert answer == {other: Errors.NONE}
    assert ctx.complete_transaction(1000, [ctx.group_partition], commit=True) == Errors.NONE
    assert ctx.fetch_offsets(GROUP_ID, [other])[1][other].offset == 2


def test_a_write_completing_after_unload_leaves_memory_alone(ctx: Context) -> None:
    # Found in review: offsets written before the partition was given up, whose append
    # completes afterwards, must not come back into memory for a partition not owned.
    answer: dict[TopicPartition, Errors] = {}
    ctx.coordinator.handle_commit_offsets(GROUP_ID, UNKNOWN, None, -1, {TP: ctx.offset_and_metadata(9)},
                                          answer.update)
    ctx.coordinator.unload_partition(ctx.group_partition)
    ctx.settle()
    assert answer == {TP: Errors.NONE}  # durable: the answer stands
    assert ctx.coordinator.manager.get_group(GROUP_ID) is None
    assert ctx.coordinator.manager.offsets.offset(GROUP_ID, TP) is None
    # Loaded again, the partition has it, from the log.
    ctx.coordinator.load_partition(ctx.group_partition, ctx.log)
    assert ctx.fetch_offsets(GROUP_ID, [TP])[1][TP].offset == 9
    assert ctx.take_records() == [("offset", GROUP_ID, "foo", 0, 9)]


def _groups_in_the_partition_of(ctx: Context, n: int) -> list[str]:
    names = (f"group-{i}" for i in range(100_000))
    return [g for g in names if ctx.coordinator.partition_for(g) == ctx.group_partition][:n]


def test_a_group_loads_while_its_offsets_or_its_group_metadata_last(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    """As Kafka 4's loader: a group comes from its last group metadata record, or from offset
    commits not followed by a group tombstone. One made by commits whose offsets were all
    deleted loads Empty (Kafka 3.9 did not load it); one tombstoned since is gone."""
    deleted, kept, described, joined, expired = _groups_in_the_partition_of(ctx, 5)
    commit = codec.OffsetCommitValue(10, "", 1)
    empty_group = codec.GroupMetadataValue("consumer", 4, None, None, 0, [])
    _write(ctx, [
        CoordinatorRecord(codec.OffsetCommitKey(deleted, "foo", 0), commit),
        CoordinatorRecord(codec.OffsetCommitKey(kept, "foo", 0), commit),
        CoordinatorRecord(codec.OffsetCommitKey(kept, "foo", 1), commit),
        CoordinatorRecord(codec.GroupMetadataKey(described), empty_group),
        CoordinatorRecord(codec.OffsetCommitKey(joined, "foo", 0), commit),
        CoordinatorRecord(codec.GroupMetadataKey(joined), empty_group),
        CoordinatorRecord(codec.OffsetCommitKey(expired, "foo", 0), commit),
        CoordinatorRecord(codec.OffsetCommitKey(deleted, "foo", 0), None),
        CoordinatorRecord(codec.OffsetCommitKey(kept, "foo", 0), None),
        CoordinatorRecord(codec.OffsetCommitKey(joined, "foo", 0), None),
        CoordinatorRecord(codec.OffsetCommitKey(expired, "foo", 0), None),
        CoordinatorRecord(codec.GroupMetadataKey(expired), None),
    ])
    _reload(ctx)
    assert sorted(ctx.coordinator.manager.groups) == sorted([deleted, kept, described, joined])
    assert ctx.coordinator.manager.groups[deleted].state is GroupState.EMPTY
    assert ctx.coordinator.manager.offsets.num_offsets(kept) == 1
    assert ctx.coordinator.manager.groups[described].generation_id == 4
    assert "Skipped" not in caplog.text


def test_a_group_whose_only_commits_were_aborted_loads_empty(ctx: Context) -> None:
    """Kafka 4's ``OffsetMetadataManager.replay`` makes a simple group for any offset commit,
    a transactional one included, and the abort marker leaves it: the group loads Empty,
    without offsets, until the expiration check tombstones it (Kafka 3.9 did not load it)."""
    ctx = _expiring_context(ctx.purgatory)
    producer_id = 1000
    assert ctx.commit_transactional_offsets(GROUP_ID, producer_id, 0, {TP: ctx.offset_and_metadata(7)}) \
        == {TP: Errors.NONE}
    assert ctx.complete_transaction(producer_id, [ctx.group_partition], commit=False) == Errors.NONE
    _reload(ctx)
    assert ctx.group().state is GroupState.EMPTY and ctx.group().protocol_type is None
    assert ctx.coordinator.manager.offsets.num_offsets(GROUP_ID) == 0
    assert ctx.coordinator.handle_describe_group(GROUP_ID)[1].state == "Empty"
    assert ctx.coordinator.cleanup_group_metadata() == 0
    ctx.settle()
    assert ctx.coordinator.manager.get_group(GROUP_ID) is None
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "foo", 0, 7), ("marker", producer_id, "abort"), ("group", GROUP_ID, None),
    ]
    _reload(ctx)
    assert ctx.coordinator.manager.get_group(GROUP_ID) is None


def test_a_deleted_consumer_group_is_gone_after_loading(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    """A Kafka 4 log: a KIP-848 group committed offsets and was deleted (tombstones for its
    records and offsets). Its records are replayed, not skipped: the group is made, then
    deleted, and neither it nor a simple group of its id is left."""
    (cg,) = _groups_in_the_partition_of(ctx, 1)
    metadata = ("0000" "0000000a" "00", "0000" "00000005" "00")
    records: list[tuple[bytes, bytes | None]] = [
        (codec.encode_key(codec.ConsumerGroupKey(3, cg)), bytes.fromhex(metadata[0])),
        (codec.encode_key(codec.ConsumerGroupKey(6, cg)), bytes.fromhex(metadata[1])),
        (codec.encode_key(codec.OffsetCommitKey(cg, "foo", 0)), codec.encode_value(codec.OffsetCommitValue(7, "", 1))),
        (codec.encode_key(codec.OffsetCommitKey(cg, "foo", 0)), None),
        (codec.encode_key(codec.ConsumerGroupKey(6, cg)), None),
        (codec.encode_key(codec.ConsumerGroupKey(3, cg)), None),
    ]
    done: list[Any] = []
    ctx.log.append(ctx.group_partition, Append(records, ctx.time.milliseconds()), done.append)
    ctx.settle()
    assert isinstance(done[0], int)
    with caplog.at_level(logging.WARNING, logger="groupcoord.coordinator"):
        _reload(ctx)
    assert cg not in ctx.coordinator.manager.groups
    assert ctx.coordinator.manager.get_consumer_group(cg) is None
    assert [r.getMessage() for r in caplog.records] == []
