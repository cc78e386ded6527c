"""OffsetCommit, TxnOffsetCommit and OffsetFetch. Ported from Kafka's GroupCoordinatorTest,
each also checking the records written. Transaction markers, which Kafka's transaction
coordinator writes, are written here by ``GroupCoordinator.complete_transaction``."""

from __future__ import annotations

from uuid import UUID

import pytest
from consumer_context import Topics
from coordinator_context import (
    GROUP_ID,
    LEADER_INSTANCE_ID,
    OTHER_GROUP_ID,
    UNKNOWN,
    Context,
    static_members_join_and_rebalance,
)

from groupcoord.coordinator import GroupState, OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.consumer.assignors import uuid_to_kafka
from groupcoord.errors import Errors

TP = TopicPartition("topic", 0)


def test_commit_offset_from_unknown_group(ctx: Context) -> None:
    assert ctx.commit_offsets(GROUP_ID, "memberId", 1, {TP: ctx.offset_and_metadata(0)}) \
        == {TP: Errors.ILLEGAL_GENERATION}
    assert ctx.take_records() == []


def test_commit_offset_from_unknown_group_v9_answers_group_id_not_found(ctx: Context) -> None:
    # OffsetCommit v9+ (Kafka 4's OffsetMetadataManagerTest.testOffsetCommitWithUnknownGroup).
    answer: dict[TopicPartition, Errors] = {}
    ctx.coordinator.handle_commit_offsets(GROUP_ID, "memberId", None, 1, {TP: ctx.offset_and_metadata(0)},
                                          answer.update, unknown_group_error=Errors.GROUP_ID_NOT_FOUND)
    assert answer == {TP: Errors.GROUP_ID_NOT_FOUND}
    assert ctx.take_records() == []


def test_commit_offset_with_default_generation(ctx: Context) -> None:
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(0)}) == {TP: Errors.NONE}
    # A simple group: Empty, no protocol type.
    group = ctx.group()
    assert group.state is GroupState.EMPTY and group.protocol_type is None
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 0)]


def test_commit_offsets_after_group_is_empty(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    assert ctx.single_leave_group(GROUP_ID, join.member_id).error == Errors.NONE
    # An admin tool resets the offsets of the now empty group.
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(0)}) == {TP: Errors.NONE}
    error, data = ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)
    assert error == Errors.NONE and data[TP].offset == 0
    assert ctx.take_records() == [("group", GROUP_ID, 2, None, {}), ("offset", GROUP_ID, "topic", 0, 0)]


def test_fetch_offsets(ctx: Context) -> None:
    offset = OffsetAndMetadata(97, "some metadata", ctx.time.milliseconds(), leader_epoch=15)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: offset}) == {TP: Errors.NONE}
    error, data = ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)
    assert error == Errors.NONE
    assert (data[TP].offset, data[TP].metadata, data[TP].leader_epoch) == (97, "some metadata", 15)
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 97)]
    value = ctx.log.records(ctx.group_partition)[-1].value
    # Kafka 4.1+ writes OffsetCommitValue v4 (4.0 and 3.9 wrote v3); no topic id for a topic
    # the coordinator does not know.
    assert (value.leader_epoch, value.metadata, value.version, value.topic_id) == (15, "some metadata", 4, None)


def test_commit_writes_the_topic_id_of_a_known_topic_and_a_transaction_none(ctx: Context) -> None:
    """Kafka 4.1+'s OffsetCommitValue v4 carries the committed topic's id (tagged field 0) when
    the topic exists; a TxnOffsetCommit's record carries none (``OffsetAndMetadata.fromRequest``
    without a topic id), nor does v1, written for a commit with an expire timestamp."""
    topic_id = UUID("7b0e4c1c-3f5a-4f1e-9a5e-0d6c3f1a2b01")
    ctx.coordinator.use_topic_metadata(Topics({TP.topic: (topic_id, 1)}))
    other = TopicPartition("unknown", 0)
    now = ctx.time.milliseconds()
    commits = {TP: ctx.offset_and_metadata(1), other: ctx.offset_and_metadata(2)}
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, commits) == {TP: Errors.NONE, other: Errors.NONE}
    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 0, {TP: ctx.offset_and_metadata(3)}) == {TP: Errors.NONE}
    expiring = OffsetAndMetadata(4, "", now, expire_timestamp_ms=now + 1000)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: expiring}) == {TP: Errors.NONE}
    values = [r.value for r in ctx.log.records(ctx.group_partition) if r.control is None]
    assert [(v.offset, v.version, v.topic_id) for v in values] == [
        (1, 4, uuid_to_kafka(topic_id)), (2, 4, None), (3, 4, None), (4, 1, None),
    ]


def test_commit_and_fetch_offsets_with_empty_group(ctx: Context) -> None:
    # The empty group id is served for commits, fetches, describes and deletes.
    group_id = ""
    assert ctx.commit_offsets(group_id, UNKNOWN, -1, {TP: ctx.offset_and_metadata(0)}) == {TP: Errors.NONE}
    error, data = ctx.fetch_offsets(group_id, [TP], require_stable=True)
    assert error == Errors.NONE and data[TP].offset == 0
    error, summary = ctx.coordinator.handle_describe_group(group_id)
    assert error == Errors.NONE and summary.state == "Empty"
    assert ctx.delete_groups([group_id]) == {group_id: Errors.NONE}
    error, data = ctx.fetch_offsets(group_id, [TP], require_stable=True)
    assert error == Errors.NONE and data[TP].offset == -1
    # Kafka 4 tombstones a group only storing offsets too (3.9: its offsets alone).
    assert ctx.take_records() == [
        ("offset", "", "topic", 0, 0), ("offset", "", "topic", 0, None), ("group", "", None),
    ]


def test_commit_with_retention_time_writes_an_expire_timestamp(ctx: Context) -> None:
    # OffsetCommit v2-v4's retention time: OffsetCommitValue v1 with an expire timestamp.
    now = ctx.time.milliseconds()
    offset = OffsetAndMetadata(5, "", now, expire_timestamp_ms=now + 1000)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: offset}) == {TP: Errors.NONE}
    value = ctx.log.records(ctx.group_partition)[-1].value
    assert (value.version, value.expire_timestamp) == (1, now + 1000)
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 5)]


def test_the_metadata_limit_counts_java_string_length_utf16_units(ctx: Context) -> None:
    """Kafka compares ``metadata.length()``: an emoji is two UTF-16 units, é one."""
    now = ctx.time.milliseconds()
    commits = {
        TopicPartition("t", 0): OffsetAndMetadata(1, "\U0001F600" * 2048, now),
        TopicPartition("t", 1): OffsetAndMetadata(1, "\U0001F600" * 2048 + "x", now),
        TopicPartition("t", 2): OffsetAndMetadata(1, "\u00e9" * 4096, now),
        TopicPartition("t", 3): OffsetAndMetadata(1, "\u00e9" * 4097, now),
        TopicPartition("t", 4): OffsetAndMetadata(1, "\U0001F600" * 1024 + "a" * 2048, now),
        TopicPartition("t", 5): OffsetAndMetadata(1, "\U0001F600" * 1024 + "a" * 2049, now),
    }
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, commits) == {
        TopicPartition("t", p): Errors.OFFSET_METADATA_TOO_LARGE if p % 2 else Errors.NONE for p in range(6)
    }


def test_commit_offset_metadata_too_large(ctx: Context) -> None:
    big = OffsetAndMetadata(1, "s" * (4096 + 1), ctx.time.milliseconds())
    other = TopicPartition("topic", 1)
    result = ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: big, other: ctx.offset_and_metadata(2)})
    # The partition with oversized metadata fails alone.
    assert result == {TP: Errors.OFFSET_METADATA_TOO_LARGE, other: Errors.NONE}
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 1, 2)]


def test_commit_offsets_append_failure(ctx: Context) -> None:
    result = ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(3)},
                                fail_append=Errors.MESSAGE_TOO_LARGE)
    # Kafka's maybeConvertOffsetCommitError: the "too large" family becomes INVALID_COMMIT_OFFSET_SIZE.
    assert result == {TP: Errors.INVALID_COMMIT_OFFSET_SIZE}
    assert ctx.fetch_offsets(GROUP_ID, [TP])[1][TP].offset == -1
    assert ctx.take_records() == []


def test_basic_fetch_txn_offsets(ctx: Context) -> None:
    producer_id = 1000
    assert ctx.commit_transactional_offsets(GROUP_ID, producer_id, 2, {TP: ctx.offset_and_metadata(0)}) \
        == {TP: Errors.NONE}
    error, data = ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)
    # Not materialized yet.
    assert error == Errors.NONE and data[TP].offset == -1
    assert ctx.complete_transaction(producer_id, [ctx.group_partition], commit=True) == Errors.NONE
    error, data = ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)
    assert error == Errors.NONE and data[TP].offset == 0
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 0), ("marker", producer_id, "commit")]
    assert ctx.log.records(ctx.group_partition)[0].is_transactional


def test_fetch_txn_offsets_with_abort(ctx: Context) -> None:
    producer_id = 1000
    assert ctx.commit_transactional_offsets(GROUP_ID, producer_id, 2, {TP: ctx.offset_and_metadata(0)}) \
        == {TP: Errors.NONE}
    assert ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)[1][TP].offset == -1
    assert ctx.complete_transaction(producer_id, [ctx.group_partition], commit=False) == Errors.NONE
    assert ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)[1][TP].offset == -1
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 0), ("marker", producer_id, "abort")]


def test_fetch_pending_txn_offsets_with_abort(ctx: Context) -> None:
    producer_id = 1000
    assert ctx.commit_transactional_offsets(GROUP_ID, producer_id, 2, {TP: ctx.offset_and_metadata(0)}) \
        == {TP: Errors.NONE}
    missing = TopicPartition("non-exist-topic", 0)
    error, data = ctx.fetch_offsets(GROUP_ID, [TP, missing], require_stable=True)
    assert error == Errors.NONE
    assert (data[TP].offset, data[TP].error) == (-1, Errors.UNSTABLE_OFFSET_COMMIT)
    assert (data[missing].offset, data[missing].error) == (-1, Errors.NONE)
    assert ctx.complete_transaction(producer_id, [ctx.group_partition], commit=False) == Errors.NONE
    error, data = ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)
    assert (data[TP].offset, data[TP].error) == (-1, Errors.NONE)
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 0), ("marker", producer_id, "abort")]


def test_fetch_pending_txn_offsets_with_commit(ctx: Context) -> None:
    producer_id = 1000
    tp = TopicPartition("offset", 0)
    assert ctx.commit_transactional_offsets(GROUP_ID, producer_id, 2, {tp: ctx.offset_and_metadata(25)}) \
        == {tp: Errors.NONE}
    error, data = ctx.fetch_offsets(GROUP_ID, [tp], require_stable=True)
    assert (data[tp].offset, data[tp].error) == (-1, Errors.UNSTABLE_OFFSET_COMMIT)
    assert ctx.complete_transaction(producer_id, [ctx.group_partition], commit=True) == Errors.NONE
    error, data = ctx.fetch_offsets(GROUP_ID, [tp], require_stable=True)
    assert (data[tp].offset, data[tp].error) == (25, Errors.NONE)
    assert ctx.take_records() == [("offset", GROUP_ID, "offset", 0, 25), ("marker", producer_id, "commit")]


def test_commits_whose_append_is_in_flight_are_unstable_transactional_or_not(ctx: Context) -> None:
    # Found in review: Kafka marks a TxnOffsetCommit pending before its append
    # (GroupMetadata.prepareTxnOffsetCommit), so a stable fetch in that window must not
    # answer the offset committed before it.
    plain, transactional = TopicPartition("topic", 1), TopicPartition("topic", 2)
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {plain: ctx.offset_and_metadata(10),
                                                      transactional: ctx.offset_and_metadata(10)}) \
        == {plain: Errors.NONE, transactional: Errors.NONE}
    answers: dict[TopicPartition, Errors] = {}
    ctx.coordinator.handle_commit_offsets(GROUP_ID, UNKNOWN, None, -1, {plain: ctx.offset_and_metadata(20)},
                                          answers.update)
    ctx.coordinator.handle_txn_commit_offsets(GROUP_ID, 1000, 0, UNKNOWN, None, -1,
                                              {transactional: ctx.offset_and_metadata(20)}, answers.update)
    assert answers == {}
    error, data = ctx.fetch_offsets(GROUP_ID, [plain, transactional], require_stable=True)
    assert error == Errors.NONE
    assert [data[tp].error for tp in (plain, transactional)] == [Errors.UNSTABLE_OFFSET_COMMIT] * 2
    assert [data[tp].offset for tp in (plain, transactional)] == [-1, -1]
    error, data = ctx.fetch_offsets(GROUP_ID, [plain, transactional], require_stable=False)
    assert [data[tp].offset for tp in (plain, transactional)] == [10, 10]

    ctx.settle()
    assert answers == {plain: Errors.NONE, transactional: Errors.NONE}
    error, data = ctx.fetch_offsets(GROUP_ID, [plain, transactional], require_stable=True)
    assert (data[plain].offset, data[plain].error) == (20, Errors.NONE)
    assert data[transactional].error == Errors.UNSTABLE_OFFSET_COMMIT  # its transaction is open
    assert ctx.complete_transaction(1000, [ctx.group_partition], commit=True) == Errors.NONE
    assert ctx.fetch_offsets(GROUP_ID, [transactional], require_stable=True)[1][transactional].offset == 20


def test_fetch_txn_offsets_ignore_spurious_commit(ctx: Context) -> None:
    producer_id = 1000
    assert ctx.commit_transactional_offsets(GROUP_ID, producer_id, 2, {TP: ctx.offset_and_metadata(0)}) \
        == {TP: Errors.NONE}
    assert ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)[1][TP].offset == -1
    assert ctx.complete_transaction(producer_id, [ctx.group_partition], commit=False) == Errors.NONE
    assert ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)[1][TP].offset == -1
    # A commit marker after the abort materializes nothing.
    assert ctx.complete_transaction(producer_id, [ctx.group_partition], commit=True) == Errors.NONE
    assert ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)[1][TP].offset == -1
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "topic", 0, 0), ("marker", producer_id, "abort"), ("marker", producer_id, "commit")
    ]


def test_fetch_txn_offsets_one_producer_multiple_groups(ctx: Context) -> None:
    # One producer, two groups on different partitions of __consumer_offsets; a marker for one
    # partition materializes only that partition's group's offsets.
    tps = [TopicPartition("topic1", 0), TopicPartition("topic2", 0)]
    offsets = [ctx.offset_and_metadata(10), ctx.offset_and_metadata(15)]
    producer_id = 1000
    partitions = [ctx.coordinator.partition_for(GROUP_ID), ctx.coordinator.partition_for(OTHER_GROUP_ID)]
    assert partitions[0] != partitions[1]
    ctx.coordinator.load_partition(partitions[1], ctx.log)

    assert ctx.commit_transactional_offsets(GROUP_ID, producer_id, 3, {tps[0]: offsets[0]})[tps[0]] == Errors.NONE
    assert ctx.commit_transactional_offsets(OTHER_GROUP_ID, producer_id, 3, {tps[1]: offsets[1]})[tps[1]] \
        == Errors.NONE

    assert ctx.complete_transaction(producer_id, [partitions[0]], commit=True) == Errors.NONE
    first = ctx.fetch_offsets(GROUP_ID, tps, require_stable=True)
    second = ctx.fetch_offsets(OTHER_GROUP_ID, tps, require_stable=True)
    assert first[0] == second[0] == Errors.NONE
    assert [first[1][tp].offset for tp in tps] == [10, -1]
    assert [second[1][tp].offset for tp in tps] == [-1, -1]

    assert ctx.complete_transaction(producer_id, [partitions[1]], commit=True) == Errors.NONE
    first = ctx.fetch_offsets(GROUP_ID, tps, require_stable=True)
    second = ctx.fetch_offsets(OTHER_GROUP_ID, tps, require_stable=True)
    assert [first[1][tp].offset for tp in tps] == [10, -1]
    assert [second[1][tp].offset for tp in tps] == [-1, 15]
    assert ctx.take_records(partitions[0]) == [("offset", GROUP_ID, "topic1", 0, 10), ("marker", producer_id, "commit")]
    assert ctx.take_records(partitions[1]) == [
        ("offset", OTHER_GROUP_ID, "topic2", 0, 15), ("marker", producer_id, "commit")
    ]


def test_fetch_txn_offsets_multiple_producers_one_group(ctx: Context) -> None:
    tps = [TopicPartition("topic1", 0), TopicPartition("topic2", 0)]
    offsets = [ctx.offset_and_metadata(10), ctx.offset_and_metadata(15)]
    producers = [1000, 1005]
    assert ctx.commit_transactional_offsets(GROUP_ID, producers[0], 3, {tps[0]: offsets[0]})[tps[0]] == Errors.NONE
    assert ctx.commit_transactional_offsets(GROUP_ID, producers[1], 4, {tps[1]: offsets[1]})[tps[1]] == Errors.NONE

    assert ctx.complete_transaction(producers[0], [ctx.group_partition], commit=True) == Errors.NONE
    error, data = ctx.fetch_offsets(GROUP_ID, tps, require_stable=True)
    # tps[1] is still in producer 1005's open transaction.
    assert error == Errors.NONE
    assert (data[tps[0]].offset, data[tps[1]].offset) == (10, -1)
    assert data[tps[1]].error == Errors.UNSTABLE_OFFSET_COMMIT

    assert ctx.complete_transaction(producers[1], [ctx.group_partition], commit=True) == Errors.NONE
    error, data = ctx.fetch_offsets(GROUP_ID, tps, require_stable=True)
    assert (data[tps[0]].offset, data[tps[1]].offset) == (10, 15)
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "topic1", 0, 10), ("offset", GROUP_ID, "topic2", 0, 15),
        ("marker", producers[0], "commit"), ("marker", producers[1], "commit"),
    ]


def test_newer_regular_commit_wins_over_committed_transaction(ctx: Context) -> None:
    # A regular commit written after the transactional one and before its marker is kept:
    # materialization only replaces older offsets (Kafka 4's OffsetMetadataManager).
    assert ctx.commit_transactional_offsets(GROUP_ID, 7, 0, {TP: ctx.offset_and_metadata(1)}) == {TP: Errors.NONE}
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(2)}) == {TP: Errors.NONE}
    assert ctx.complete_transaction(7, [ctx.group_partition], commit=True) == Errors.NONE
    assert ctx.fetch_offsets(GROUP_ID, [TP])[1][TP].offset == 2
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "topic", 0, 1), ("offset", GROUP_ID, "topic", 0, 2), ("marker", 7, "commit")
    ]


def test_fetch_offset_for_unknown_partition(ctx: Context) -> None:
    error, data = ctx.fetch_offsets(GROUP_ID, [TP], require_stable=True)
    assert error == Errors.NONE and data[TP].offset == -1
    assert ctx.take_records() == []


def test_fetch_offset_not_coordinator_for_group(ctx: Context) -> None:
    error, data = ctx.fetch_offsets(OTHER_GROUP_ID, [TP], require_stable=True)
    assert error == Errors.NOT_COORDINATOR and data == {}
    assert ctx.take_records() == []


def test_fetch_all_offsets(ctx: Context) -> None:
    tp1, tp2, tp3 = TopicPartition("topic", 0), TopicPartition("topic", 1), TopicPartition("other-topic", 0)
    assert ctx.fetch_offsets(GROUP_ID, None, require_stable=True) == (Errors.NONE, {})
    offsets = {tp1: ctx.offset_and_metadata(15), tp2: ctx.offset_and_metadata(16), tp3: ctx.offset_and_metadata(17)}
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, offsets) == dict.fromkeys(offsets, Errors.NONE)
    error, data = ctx.fetch_offsets(GROUP_ID, None, require_stable=True)
    assert error == Errors.NONE
    assert len(data) == 3 and all(d.error == Errors.NONE for d in data.values())
    assert {tp: d.offset for tp, d in data.items()} == {tp1: 15, tp2: 16, tp3: 17}
    assert ctx.take_records() == [
        ("offset", GROUP_ID, "topic", 0, 15), ("offset", GROUP_ID, "topic", 1, 16),
        ("offset", GROUP_ID, "other-topic", 0, 17),
    ]


def test_commit_offset_in_completing_rebalance(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    assert ctx.commit_offsets(GROUP_ID, join.member_id, join.generation_id, {TP: ctx.offset_and_metadata(0)}) \
        == {TP: Errors.REBALANCE_IN_PROGRESS}
    assert ctx.take_records() == []


def test_commit_offset_in_completing_rebalance_from_unknown_member_id(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, join.generation_id, {TP: ctx.offset_and_metadata(0)}) \
        == {TP: Errors.UNKNOWN_MEMBER_ID}
    assert ctx.take_records() == []


def test_commit_offset_in_completing_rebalance_from_illegal_generation(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    assert ctx.commit_offsets(GROUP_ID, join.member_id, join.generation_id + 1,
                              {TP: ctx.offset_and_metadata(0)}) == {TP: Errors.ILLEGAL_GENERATION}
    assert ctx.take_records() == []


def test_manual_commit_offset_should_not_validate_member_id_and_instance_id(ctx: Context) -> None:
    assert ctx.commit_offsets(GROUP_ID, UNKNOWN, -1, {TP: ctx.offset_and_metadata(0)},
                              group_instance_id="instance-id") == {TP: Errors.NONE}
    assert ctx.commit_offsets(GROUP_ID, "unknown", -1, {TP: ctx.offset_and_metadata(0)}) == {TP: Errors.NONE}
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 0)] * 2


def test_offset_commit_dead_group(ctx: Context) -> None:
    from groupcoord.coordinator import ClassicGroup

    ctx.coordinator.manager.groups["deadGroupId"] = ClassicGroup("deadGroupId", ctx.time, state=GroupState.DEAD)
    assert ctx.commit_offsets("deadGroupId", "memberId", 1, {TP: ctx.offset_and_metadata(0)}) \
        == {TP: Errors.COORDINATOR_NOT_AVAILABLE}
    assert ctx.take_records() == []


def test_txn_commit_offset_with_fenced_instance_id(ctx: Context) -> None:
    result = static_members_join_and_rebalance(ctx)
    offset = {TP: ctx.offset_and_metadata(0)}
    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 2, offset, member_id=UNKNOWN,
                                            group_instance_id=LEADER_INSTANCE_ID) == {TP: Errors.FENCED_INSTANCE_ID}
    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 2, offset, member_id="invalid-member",
                                            group_instance_id=LEADER_INSTANCE_ID) == {TP: Errors.FENCED_INSTANCE_ID}
    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 2, offset, result.leader_id, LEADER_INSTANCE_ID,
                                            result.generation) == {TP: Errors.NONE}
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 0)]


def test_txn_commit_offset_with_invalid_member_id(ctx: Context) -> None:
    assert ctx.dynamic_join_group(GROUP_ID, UNKNOWN).error == Errors.NONE
    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 2, {TP: ctx.offset_and_metadata(0)},
                                            "invalid-member") == {TP: Errors.UNKNOWN_MEMBER_ID}
    assert ctx.take_records() == []


def test_txn_commit_offset_with_known_member_id(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert join.error == Errors.NONE
    # Transactional commits are not refused in CompletingRebalance.
    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 2, {TP: ctx.offset_and_metadata(0)},
                                            join.member_id, generation=join.generation_id) == {TP: Errors.NONE}
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 0)]


def test_txn_commit_offset_with_illegal_generation(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 2, {TP: ctx.offset_and_metadata(0)},
                                            join.member_id, generation=join.generation_id + 5) \
        == {TP: Errors.ILLEGAL_GENERATION}
    assert ctx.take_records() == []


def test_txn_commit_offset_with_legal_generation(ctx: Context) -> None:
    join = ctx.dynamic_join_group(GROUP_ID, UNKNOWN)
    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 2, {TP: ctx.offset_and_metadata(0)},
                                            join.member_id, generation=join.generation_id) == {TP: Errors.NONE}
    assert ctx.take_records() == [("offset", GROUP_ID, "topic", 0, 0)]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (Errors.INVALID_PRODUCER_ID_MAPPING, Errors.INVALID_PRODUCER_ID_MAPPING),
        (Errors.INVALID_TXN_STATE, Errors.INVALID_TXN_STATE),
        (Errors.NETWORK_EXCEPTION, Errors.COORDINATOR_LOAD_IN_PROGRESS),
        (Errors.NOT_ENOUGH_REPLICAS, Errors.COORDINATOR_NOT_AVAILABLE),
        (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_COORDINATOR),
        (Errors.KAFKA_STORAGE_ERROR, Errors.NOT_COORDINATOR),
    ],
)
def test_verification_errors_for_txn_offset_commits(ctx: Context, error: Errors, expected: Errors) -> None:
    # The original fails the transaction verification; without a transaction coordinator the
    # same errors come from the append, mapped by the same table.
    tp1, tp2 = TopicPartition("topic-1", 0), TopicPartition("topic-2", 0)
    answer: dict[TopicPartition, Errors] = {}
    ctx.log.fail_next(error)
    ctx.coordinator.handle_txn_commit_offsets(GROUP_ID, 1000, 2, UNKNOWN, None, -1,
                                              {tp1: ctx.offset_and_metadata(0), tp2: ctx.offset_and_metadata(0)},
                                              answer.update)
    ctx.settle()
    assert answer == {tp1: expected, tp2: expected}
    assert ctx.take_records() == []


def test_txn_offset_metadata_too_large(ctx: Context) -> None:
    offsets = {TopicPartition("foo", 0): OffsetAndMetadata(37, "s" * (4096 + 1), 0)}
    assert ctx.commit_transactional_offsets(GROUP_ID, 100, 3, offsets) \
        == {TopicPartition("foo", 0): Errors.OFFSET_METADATA_TOO_LARGE}
    assert ctx.take_records() == []


def test_on_partitions_deleted(ctx: Context) -> None:
    # Kafka 4's OffsetMetadataManagerTest.testOnPartitionsDeleted: a deleted topic's offsets
    # are tombstoned in every group; the rest stay.
    kept, gone = TopicPartition("kept", 0), TopicPartition("gone", 0)
    for group in ("group1", "groupId2"):
        assert ctx.commit_offsets(group, UNKNOWN, -1, {kept: ctx.offset_and_metadata(1), gone: ctx.offset_and_metadata(2)}) \
            == {kept: Errors.NONE, gone: Errors.NONE}
    ctx.coordinator.handle_deleted_partitions([gone])
    ctx.settle()
    for group in ("group1", "groupId2"):
        _, data = ctx.fetch_offsets(group, [kept, gone])
        assert (data[kept].offset, data[gone].offset) == (1, -1)
    assert ctx.take_records()[-2:] == [("offset", "group1", "gone", 0, None), ("offset", "groupId2", "gone", 0, None)]
