"""ConsumerGroupHeartbeat (KIP-848) on the mock clock, after Kafka's ``GroupMetadataManagerTest``.

Each test is named after the Kafka test whose scenario it follows. The records are checked in
Kafka's order and record-type numbers (``consumer_record_summary``); the fixture ends every
test by loading the log into a fresh coordinator and comparing the consumer groups it rebuilds
with the live ones.
"""

from __future__ import annotations

import pytest
from consumer_context import BAR, BAR_ID, FOO, FOO_ID, ConsumerContext, kafka_id

from groupcoord.coordinator.consumer.group import ConsumerGroupState
from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupHeartbeat
from groupcoord.coordinator.consumer.member import MemberState
from groupcoord.errors import Errors
from groupcoord.purgatory import IMPLEMENTATIONS

GROUP = "groupId"
FOO_K = kafka_id(FOO_ID)
BAR_K = kafka_id(BAR_ID)


def owned(result, topic_id=FOO_ID) -> set[int]:
    assert result.assignment is not None
    return set(result.assignment.get(topic_id, ()))


def test_member_joins_empty_consumer_group(consumer_ctx: ConsumerContext) -> None:
    result = consumer_ctx.heartbeat(GROUP, "m1", 0, subscribed_topic_names=[FOO, BAR])
    assert result.error is Errors.NONE
    assert (result.member_id, result.member_epoch, result.heartbeat_interval_ms) == ("m1", 2, 5000)
    assert {t: sorted(ps) for t, ps in result.assignment.items()} == {FOO_ID: [0, 1, 2, 3, 4, 5],
                                                                      BAR_ID: [0, 1, 2]}
    everything = {FOO_K: (0, 1, 2, 3, 4, 5), BAR_K: (0, 1, 2)}
    records = consumer_ctx.take_consumer_records()
    # A fresh group starts at epoch 1 (Kafka 4.3): its first member moves it to 2.
    assert [r[:2] for r in records] == [(5, "m1"), (3, None), (7, "m1"), (6, None), (8, "m1")]
    assert records[0][2] == (BAR, FOO)  # sorted, as Kafka writes them
    assert records[1][2] == 2
    assert records[2][2] == everything
    assert records[3][2] == 2
    assert records[4][2] == (2, 0, MemberState.STABLE, everything, {})
    group = consumer_ctx.consumer_group(GROUP)
    assert group.state is ConsumerGroupState.STABLE
    assert (group.group_epoch, group.assignment_epoch) == (2, 2)
    assert group.metadata_hash != 0


def test_new_joining_member_triggers_new_target_assignment(consumer_ctx: ConsumerContext) -> None:
    """A partition moves to the new member only once its owner revoked it."""
    first = consumer_ctx.heartbeat(GROUP, "m1", 0)
    assert owned(first) == set(range(6))
    consumer_ctx.take_consumer_records()

    second = consumer_ctx.heartbeat(GROUP, "m2", 0)
    assert second.member_epoch == 3
    assert owned(second) == set()  # every partition of its target is still owned by m1
    group = consumer_ctx.consumer_group(GROUP)
    assert group.state is ConsumerGroupState.RECONCILING
    assert group.member("m2").state is MemberState.UNRELEASED_PARTITIONS
    target_m1 = set(group.target_of("m1")[FOO_ID])
    target_m2 = set(group.target_of("m2")[FOO_ID])
    assert len(target_m1) == len(target_m2) == 3 and target_m1 | target_m2 == set(range(6))

    # m1 learns it must give up m2's partitions: its epoch stays until it has.
    revoking = consumer_ctx.heartbeat(GROUP, "m1", 2)
    assert revoking.member_epoch == 2 and owned(revoking) == target_m1
    assert group.member("m1").state is MemberState.UNREVOKED_PARTITIONS
    # m2 still gets nothing: the partitions are not released yet.
    waiting = consumer_ctx.heartbeat(GROUP, "m2", 3, topic_partitions={})
    assert waiting.member_epoch == 3 and waiting.assignment is None

    revoked = consumer_ctx.heartbeat(GROUP, "m1", 2, topic_partitions={FOO_ID: sorted(target_m1)})
    assert revoked.member_epoch == 3 and revoked.assignment is None  # its assignment is unchanged
    assert group.member("m1").state is MemberState.STABLE

    received = consumer_ctx.heartbeat(GROUP, "m2", 3, topic_partitions={})
    assert received.member_epoch == 3 and owned(received) == target_m2
    assert group.state is ConsumerGroupState.STABLE


def test_leaving_member_bumps_group_epoch(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    consumer_ctx.heartbeat(GROUP, "m2", 0)
    consumer_ctx.take_consumer_records()
    left = consumer_ctx.heartbeat(GROUP, "m2", -1)
    assert (left.error, left.member_id, left.member_epoch) == (Errors.NONE, "m2", -1)
    assert consumer_ctx.take_consumer_records() == [
        (8, "m2", "tombstone"), (7, "m2", "tombstone"), (5, "m2", "tombstone"), (3, None, 4)]
    group = consumer_ctx.consumer_group(GROUP)
    assert set(group.members) == {"m1"}
    # The next heartbeat computes the target without m2: m1, which never got to revoke half
    # of its partitions, keeps them all and moves to epoch 4; its assignment is unchanged, so
    # the response carries none.
    back = consumer_ctx.heartbeat(GROUP, "m1", 2, topic_partitions={FOO_ID: list(range(6))})
    assert (back.member_epoch, back.assignment) == (4, None)
    assert set(group.member("m1").assigned_partitions[FOO_ID]) == set(range(6))


def test_last_member_leaving_leaves_an_empty_group(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    consumer_ctx.heartbeat(GROUP, "m1", -1)
    group = consumer_ctx.consumer_group(GROUP)
    assert group.state is ConsumerGroupState.EMPTY and group.group_epoch == 3


def test_session_timeout(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    consumer_ctx.take_consumer_records()
    consumer_ctx.sleep(44_000)
    consumer_ctx.heartbeat(GROUP, "m1", 2)  # a heartbeat restarts the session
    consumer_ctx.sleep(44_000)
    assert "m1" in consumer_ctx.consumer_group(GROUP).members
    consumer_ctx.sleep(1_001)
    assert consumer_ctx.take_consumer_records() == [
        (8, "m1", "tombstone"), (7, "m1", "tombstone"), (5, "m1", "tombstone"), (3, None, 3)]
    assert consumer_ctx.consumer_group(GROUP).state is ConsumerGroupState.EMPTY
    fenced = consumer_ctx.heartbeat(GROUP, "m1", 2)
    assert fenced.error is Errors.UNKNOWN_MEMBER_ID


def test_rebalance_timeout(consumer_ctx: ConsumerContext) -> None:
    """A member that does not revoke within its rebalance timeout is fenced."""
    consumer_ctx.heartbeat(GROUP, "m1", 0, rebalance_timeout_ms=10_000)
    consumer_ctx.heartbeat(GROUP, "m2", 0)
    consumer_ctx.heartbeat(GROUP, "m1", 2)  # now revoking
    assert consumer_ctx.consumer_group(GROUP).member("m1").state is MemberState.UNREVOKED_PARTITIONS
    consumer_ctx.sleep(5_000)
    consumer_ctx.heartbeat(GROUP, "m2", 3, topic_partitions={})
    consumer_ctx.sleep(5_001)
    group = consumer_ctx.consumer_group(GROUP)
    assert set(group.members) == {"m2"}
    assert consumer_ctx.heartbeat(GROUP, "m1", 2).error is Errors.UNKNOWN_MEMBER_ID


def test_rebalance_timeout_is_cancelled_once_revoked(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0, rebalance_timeout_ms=10_000)
    consumer_ctx.heartbeat(GROUP, "m2", 0)
    revoking = consumer_ctx.heartbeat(GROUP, "m1", 2)
    consumer_ctx.heartbeat(GROUP, "m1", 2, topic_partitions={FOO_ID: sorted(owned(revoking))})
    consumer_ctx.sleep(10_001)
    assert set(consumer_ctx.consumer_group(GROUP).members) == {"m1", "m2"}


@pytest.mark.parametrize("epoch, message", [
    (5, "The consumer group member has a greater member epoch (5) than the one known by the group "
        "coordinator (2). The member must abandon all its partitions and rejoin."),
    (1, "The consumer group member has a smaller member epoch (1) than the one known by the group "
        "coordinator (2). The member must abandon all its partitions and rejoin."),
])
def test_consumer_group_member_epoch_validation(consumer_ctx: ConsumerContext, epoch: int, message: str) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    result = consumer_ctx.heartbeat(GROUP, "m1", epoch)
    assert (result.error, result.message) == (Errors.FENCED_MEMBER_EPOCH, message)
    assert (result.member_id, result.member_epoch, result.assignment) == (None, 0, None)


def test_previous_epoch_with_owned_partitions_is_accepted(consumer_ctx: ConsumerContext) -> None:
    """The member missed the response that moved it to epoch 3 (Kafka: the lost response)."""
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    consumer_ctx.heartbeat(GROUP, "m1", 2, subscribed_topic_names=[FOO, BAR])
    group = consumer_ctx.consumer_group(GROUP)
    assert group.member("m1").member_epoch == 3
    retry = consumer_ctx.heartbeat(GROUP, "m1", 2, topic_partitions={FOO_ID: [0, 1]})
    assert retry.error is Errors.NONE and retry.member_epoch == 3


def test_unknown_group_and_member(consumer_ctx: ConsumerContext) -> None:
    missing = consumer_ctx.heartbeat("nope", "m1", 1)
    assert (missing.error, missing.message) == (Errors.GROUP_ID_NOT_FOUND, "Consumer group nope not found.")
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    unknown = consumer_ctx.heartbeat(GROUP, "m9", 2)
    assert (unknown.error, unknown.message) == (
        Errors.UNKNOWN_MEMBER_ID, f"Member m9 is not a member of group {GROUP}.")
    leave = consumer_ctx.heartbeat("nope", "m1", -1)
    assert (leave.error, leave.message) == (Errors.GROUP_ID_NOT_FOUND, "Group nope not found.")


@pytest.mark.parametrize("fields, version, error, message", [
    (dict(member_id="", member_epoch=1), 1, Errors.INVALID_REQUEST, "MemberId can't be empty."),
    (dict(member_id="  ", member_epoch=0), 1, Errors.INVALID_REQUEST, "MemberId can't be empty."),
    (dict(group_id=" "), 1, Errors.INVALID_REQUEST, "GroupId can't be empty."),
    (dict(instance_id=" "), 1, Errors.INVALID_REQUEST, "InstanceId can't be empty."),
    (dict(rack_id=""), 1, Errors.INVALID_REQUEST, "RackId can't be empty."),
    (dict(rebalance_timeout_ms=-1), 1, Errors.INVALID_REQUEST,
     "RebalanceTimeoutMs must be provided in first request."),
    (dict(topic_partitions=None), 1, Errors.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."),
    (dict(topic_partitions={FOO_ID: [0]}), 1, Errors.INVALID_REQUEST,
     "TopicPartitions must be empty when (re-)joining."),
    (dict(subscribed_topic_names=None), 1, Errors.INVALID_REQUEST,
     "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."),
    (dict(member_epoch=-2), 1, Errors.INVALID_REQUEST, "InstanceId can't be null."),
    (dict(member_epoch=-3), 1, Errors.INVALID_REQUEST, "MemberEpoch is invalid."),
    (dict(server_assignor="sticky"), 1, Errors.UNSUPPORTED_ASSIGNOR,
     "ServerAssignor sticky is not supported. Supported assignors: uniform, range."),
])
def test_consumer_group_heartbeat_request_validation(
    consumer_ctx: ConsumerContext, fields: dict, version: int, error: Errors, message: str
) -> None:
    request = dict(group_id=GROUP, member_id="m1", member_epoch=0, rebalance_timeout_ms=5000,
                   subscribed_topic_names=[FOO], topic_partitions={})
    request.update(fields)
    result = consumer_ctx.send_heartbeat(ConsumerGroupHeartbeat(**request), api_version=version).result()
    assert (result.error, result.message) == (error, message)
    assert consumer_ctx.take_consumer_records() == []


def test_version_0_join_gets_a_member_id(consumer_ctx: ConsumerContext) -> None:
    request = ConsumerGroupHeartbeat(GROUP, "", 0, rebalance_timeout_ms=5000, subscribed_topic_names=[FOO],
                                     topic_partitions={})
    result = consumer_ctx.send_heartbeat(request, api_version=0).result()
    assert result.error is Errors.NONE and len(result.member_id) == 36  # a UUID, as Kafka's v0
    assert result.member_id in consumer_ctx.consumer_group(GROUP).members


def test_subscription_to_a_missing_topic_gets_nothing_until_it_exists(consumer_ctx: ConsumerContext) -> None:
    joined = consumer_ctx.heartbeat(GROUP, "m1", 0, subscribed_topic_names=["later"])
    assert joined.member_epoch == 2 and joined.assignment == {}
    assert consumer_ctx.consumer_group(GROUP).metadata_hash == 0
    consumer_ctx.topics.set("later", 2)
    later_id = consumer_ctx.topics.topic_id("later")
    result = consumer_ctx.heartbeat(GROUP, "m1", 2, topic_partitions={})
    assert result.member_epoch == 3 and owned(result, later_id) == {0, 1}


def test_partitions_added_to_a_subscribed_topic_bump_the_group_epoch(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    before = consumer_ctx.consumer_group(GROUP).metadata_hash
    consumer_ctx.topics.set(FOO, 8)
    result = consumer_ctx.heartbeat(GROUP, "m1", 2, topic_partitions={FOO_ID: list(range(6))})
    assert result.member_epoch == 3 and owned(result) == set(range(8))
    assert consumer_ctx.consumer_group(GROUP).metadata_hash != before


def test_unrelated_topic_change_does_not_bump(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    consumer_ctx.take_consumer_records()
    consumer_ctx.topics.set("other", 4)
    result = consumer_ctx.heartbeat(GROUP, "m1", 2)
    assert result.member_epoch == 2
    assert consumer_ctx.take_consumer_records() == []


@pytest.mark.parametrize("purgatory", sorted(IMPLEMENTATIONS))
def test_consumer_group_assignment_interval(purgatory: str) -> None:
    """Kafka 4.3 (KIP-1263): a target assignment is computed no sooner than the interval after
    the last one, on the first heartbeat of any member after it: no timer."""
    ctx = ConsumerContext(IMPLEMENTATIONS[purgatory], **{"group.consumer.assignment.interval.ms": 1000})
    ctx.heartbeat(GROUP, "m1", 0)
    second = ctx.heartbeat(GROUP, "m2", 0)
    group = ctx.consumer_group(GROUP)
    assert (group.group_epoch, group.assignment_epoch) == (3, 2)
    assert group.state is ConsumerGroupState.ASSIGNING
    assert second.member_epoch == 2 and owned(second) == set()
    ctx.sleep(999)
    assert ctx.heartbeat(GROUP, "m1", 2).member_epoch == 2
    ctx.sleep(1)
    revoking = ctx.heartbeat(GROUP, "m1", 2)
    assert group.assignment_epoch == 3 and len(owned(revoking)) == 3


def test_static_member_temporary_leave_and_rejoin(consumer_ctx: ConsumerContext) -> None:
    joined = consumer_ctx.heartbeat(GROUP, "m1", 0, instance_id="i1")
    assert owned(joined) == set(range(6))
    consumer_ctx.take_consumer_records()
    left = consumer_ctx.heartbeat(GROUP, "m1", -2, instance_id="i1")
    assert (left.member_id, left.member_epoch) == ("m1", -2)
    records = consumer_ctx.take_consumer_records()
    assert len(records) == 1 and records[0][:2] == (8, "m1")
    assert records[0][2][0] == -2
    # Another id may not take the instance before it is released... it is released: -2.
    rejoined = consumer_ctx.heartbeat(GROUP, "m1b", 0, instance_id="i1")
    assert rejoined.error is Errors.NONE
    assert owned(rejoined) == set(range(6))
    group = consumer_ctx.consumer_group(GROUP)
    assert set(group.members) == {"m1b"} and group.static_members == {"i1": "m1b"}
    # No group epoch bump: the subscription did not change.
    assert group.group_epoch == 2


def test_static_member_id_taken_while_owned(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0, instance_id="i1")
    result = consumer_ctx.heartbeat(GROUP, "m2", 0, instance_id="i1")
    assert (result.error, result.message) == (
        Errors.UNRELEASED_INSTANCE_ID,
        "Static member m2 with instance id i1 cannot join the group because the instance id is owned by m1 member.")
    fenced = consumer_ctx.heartbeat(GROUP, "m2", 2, instance_id="i1")
    assert fenced.error is Errors.FENCED_INSTANCE_ID
    unknown = consumer_ctx.heartbeat(GROUP, "m2", 2, instance_id="i9")
    assert (unknown.error, unknown.message) == (Errors.UNKNOWN_MEMBER_ID, "Instance id i9 is unknown.")


@pytest.mark.parametrize("purgatory", sorted(IMPLEMENTATIONS))
def test_group_max_size(purgatory: str) -> None:
    ctx = ConsumerContext(IMPLEMENTATIONS[purgatory], **{"group.consumer.max.size": 1})
    ctx.heartbeat(GROUP, "m1", 0)
    full = ctx.heartbeat(GROUP, "m2", 0)
    assert (full.error, full.message) == (
        Errors.GROUP_MAX_SIZE_REACHED, "The consumer group has reached its maximum capacity of 1 members.")


def test_a_simple_group_gives_way_and_keeps_its_offsets(consumer_ctx: ConsumerContext) -> None:
    from groupcoord.coordinator import TopicPartition
    tp = TopicPartition(FOO, 0)
    assert consumer_ctx.commit_offsets(GROUP, "", -1, {tp: consumer_ctx.offset_and_metadata(42)}) == {
        tp: Errors.NONE}
    consumer_ctx.heartbeat(GROUP, "m1", 0)
    assert consumer_ctx.coordinator.manager.get_group(GROUP) is None
    assert consumer_ctx.fetch_offsets(GROUP, [tp])[1][tp].offset == 42


def test_a_non_empty_classic_group_is_upgraded_only_by_a_join(consumer_ctx: ConsumerContext) -> None:
    """Kafka 4 converts a non-empty classic group that a joining heartbeat (epoch 0) names to a
    consumer group (KIP-848's online upgrade, tested in test_consumer_group_migration); this
    group's member sent no consumer protocol subscription, so it cannot be, and a heartbeat of
    another epoch never converts a group."""
    consumer_ctx.dynamic_join_group(GROUP, "")
    result = consumer_ctx.heartbeat(GROUP, "m1", 0)
    assert (result.error, result.message) == (
        Errors.GROUP_ID_NOT_FOUND,
        f"Cannot upgrade classic group {GROUP} to consumer group because the embedded consumer protocol is "
        "malformed.")
    result = consumer_ctx.heartbeat(GROUP, "m1", 1)
    assert (result.error, result.message) == (Errors.GROUP_ID_NOT_FOUND, f"Group {GROUP} is not a consumer group.")
    assert consumer_ctx.coordinator.manager.get_consumer_group(GROUP) is None


# --- subscriptions by regular expression ------------------------------------------------------


def test_consumer_group_member_joins_with_a_regular_expression(consumer_ctx: ConsumerContext) -> None:
    """The heartbeat records the subscription; the resolution, a moment later, writes the
    matched topics and bumps the group epoch; the next heartbeat gets the partitions."""
    joined = consumer_ctx.heartbeat(GROUP, "m1", 0, subscribed_topic_names=None, subscribed_topic_regex="fo.*")
    assert joined.error is Errors.NONE
    assert joined.member_epoch == 1 and joined.assignment == {}
    consumer_ctx.take_consumer_records()
    consumer_ctx.sleep(1)
    assert consumer_ctx.take_consumer_records() == [(16, None, (FOO,)), (3, None, 2)]
    result = consumer_ctx.heartbeat(GROUP, "m1", 1, topic_partitions={})
    assert result.member_epoch == 2 and owned(result) == set(range(6))


def test_consumer_group_regex_picks_up_a_created_topic(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0, subscribed_topic_names=None, subscribed_topic_regex="ba.*")
    consumer_ctx.sleep(1)
    first = consumer_ctx.heartbeat(GROUP, "m1", 1, topic_partitions={})
    assert first.member_epoch == 2 and owned(first, BAR_ID) == {0, 1, 2}
    consumer_ctx.topics.set("baz", 2)
    baz_id = consumer_ctx.topics.topic_id("baz")
    # Within 10 s of the last resolution, nothing is resolved again.
    consumer_ctx.heartbeat(GROUP, "m1", 2, topic_partitions={BAR_ID: [0, 1, 2]})
    consumer_ctx.sleep(5_000)
    assert consumer_ctx.consumer_group(GROUP).resolved_regexes["ba.*"].topics == {BAR}
    consumer_ctx.sleep(5_001)
    consumer_ctx.heartbeat(GROUP, "m1", 2, topic_partitions={BAR_ID: [0, 1, 2]})
    consumer_ctx.sleep(1)
    assert consumer_ctx.consumer_group(GROUP).resolved_regexes["ba.*"].topics == {BAR, "baz"}
    later = consumer_ctx.heartbeat(GROUP, "m1", 2, topic_partitions={BAR_ID: [0, 1, 2]})
    assert later.member_epoch == 3 and owned(later, baz_id) == {0, 1}


def test_consumer_group_regex_is_full_match(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.topics.set("foo-extra", 1)
    consumer_ctx.heartbeat(GROUP, "m1", 0, subscribed_topic_names=None, subscribed_topic_regex="foo")
    consumer_ctx.sleep(1)
    assert consumer_ctx.consumer_group(GROUP).resolved_regexes["foo"].topics == {FOO}


def test_invalid_regular_expression(consumer_ctx: ConsumerContext) -> None:
    result = consumer_ctx.heartbeat(GROUP, "m1", 0, subscribed_topic_names=None, subscribed_topic_regex="[foo")
    assert result.error is Errors.INVALID_REGULAR_EXPRESSION
    assert result.message.startswith("SubscribedTopicRegex `[foo` is not a valid regular expression: ")
    assert consumer_ctx.take_consumer_records() == []


def test_last_subscriber_of_a_regex_leaving_tombstones_it(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0, subscribed_topic_names=None, subscribed_topic_regex="fo.*")
    consumer_ctx.sleep(1)
    consumer_ctx.take_consumer_records()
    consumer_ctx.heartbeat(GROUP, "m1", -1)
    assert consumer_ctx.take_consumer_records() == [
        (8, "m1", "tombstone"), (7, "m1", "tombstone"), (5, "m1", "tombstone"), (16, None, "tombstone"),
        (3, None, 3)]
    assert consumer_ctx.consumer_group(GROUP).resolved_regexes == {}


def test_switching_from_a_regex_to_names_bumps_at_once(consumer_ctx: ConsumerContext) -> None:
    consumer_ctx.heartbeat(GROUP, "m1", 0, subscribed_topic_names=None, subscribed_topic_regex="fo.*")
    consumer_ctx.sleep(1)
    consumer_ctx.heartbeat(GROUP, "m1", 1, topic_partitions={})
    consumer_ctx.take_consumer_records()
    result = consumer_ctx.heartbeat(GROUP, "m1", 2, subscribed_topic_regex="", subscribed_topic_names=[BAR],
                                    topic_partitions={FOO_ID: list(range(6))})
    records = consumer_ctx.take_consumer_records()
    assert [r[:2] for r in records][:3] == [(5, "m1"), (16, None), (3, None)]
    assert result.member_epoch == 2  # it must revoke foo first
