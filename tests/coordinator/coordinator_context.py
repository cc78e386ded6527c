"""The coordinator under test, as Kafka's GroupCoordinatorTest sets it up.

Two ``__consumer_offsets`` partitions, the one of ``GROUP_ID`` owned, the one of
``OTHER_GROUP_ID`` not; group.max.size 4; session and rebalance timeouts 500 ms; initial
rebalance delay 50 ms. Time is a :class:`MockTime` moved only by :meth:`Context.sleep`, which
also expires what falls due; appends complete at the end of each call, as the broker's
(mocked) log answered the original tests.

Every helper answers what the coordinator answered through its callback. Besides, each test
checks the records written (:meth:`Context.take_records` gives them in a compact form), and the
``ctx`` fixture ends every test by replaying the log into a fresh coordinator and comparing
what it loads with the live state (:func:`durable_view`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from groupcoord.config import Config
from groupcoord.coordinator import (
    GroupCoordinator,
    GroupState,
    JoinGroupResult,
    LeaveGroupResult,
    MemberIdentity,
    MockTime,
    OffsetAndMetadata,
    SyncGroupResult,
    TopicPartition,
)
from groupcoord.coordinator.group import ClassicGroup
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.log.memory import InMemoryLog
from groupcoord.purgatory import PurgatoryImplementation

T = TypeVar("T")

CLIENT_ID = "consumer-test"
CLIENT_HOST = "localhost"
GROUP_MIN_SESSION_TIMEOUT = 10
GROUP_MAX_SESSION_TIMEOUT = 10 * 60 * 1000
GROUP_MAX_SIZE = 4
DEFAULT_REBALANCE_TIMEOUT = 500
DEFAULT_SESSION_TIMEOUT = 500
GROUP_INITIAL_REBALANCE_DELAY = 50

GROUP_ID = "groupId"
OTHER_GROUP_ID = "otherGroup"
PROTOCOL_TYPE = "consumer"
PROTOCOL_NAME = "range"
MEMBER_ID = "memberId"
GROUP_INSTANCE_ID = "groupInstanceId"
LEADER_INSTANCE_ID = "leader"
FOLLOWER_INSTANCE_ID = "follower"
INVALID_MEMBER_ID = "invalidMember"
METADATA = b""
PROTOCOLS = [(PROTOCOL_NAME, METADATA)]
PROTOCOL_SUPERSET = [(PROTOCOL_NAME, METADATA), ("roundrobin", METADATA)]
UNKNOWN = ""


class Answer(Generic[T]):
    """A callback that keeps what it was called with (a promise, in Kafka's tests)."""

    def __init__(self) -> None:
        self._done = False
        self._value: Any = None

    def __call__(self, value: T) -> None:
        assert not self._done, f"answered twice: {self._value!r} then {value!r}"
        self._done = True
        self._value = value

    @property
    def done(self) -> bool:
        return self._done

    def result(self) -> T:
        assert self._done, "the coordinator has not answered"
        value: T = self._value
        return value


def record_summary(record: codec.OffsetsRecord) -> tuple[Any, ...]:
    """A record in a compact, comparable form.

    ``("offset", group, topic, partition, committed offset or None)``,
    ``("group", group, generation, leader, {member: assignment})`` or ``("group", group, None)``,
    ``("marker", producer id, "commit" | "abort")``.
    """
    if record.control is not None:
        return ("marker", record.producer_id, record.control)
    key, value = record.key, record.value
    if isinstance(key, codec.OffsetCommitKey):
        offset = value.offset if isinstance(value, codec.OffsetCommitValue) else None
        return ("offset", key.group, key.topic, key.partition, offset)
    assert isinstance(key, codec.GroupMetadataKey), key
    if value is None:
        return ("group", key.group, None)
    assert isinstance(value, codec.GroupMetadataValue)
    return ("group", key.group, value.generation, value.leader,
            {m.member_id: m.assignment for m in value.members})


class Context:
    def __init__(self, purgatory: PurgatoryImplementation, **overrides: Any) -> None:
        self.time = MockTime()
        properties: dict[str, Any] = {
            "group.min.session.timeout.ms": GROUP_MIN_SESSION_TIMEOUT,
            "group.max.session.timeout.ms": GROUP_MAX_SESSION_TIMEOUT,
            "group.max.size": GROUP_MAX_SIZE,
            "group.initial.rebalance.delay.ms": GROUP_INITIAL_REBALANCE_DELAY,
            "offsets.topic.num.partitions": 2,
        }
        properties.update(overrides)
        self.config = Config.from_properties(properties)
        self.log = InMemoryLog(max_batch_bytes=self.config.message_max_bytes,
                               compression=self.config.offsets_topic_compression_codec)
        self.purgatory = purgatory
        self.coordinator = GroupCoordinator(self.config, self.log, self.time, purgatory=purgatory)
        self.coordinator.startup(enable_metadata_expiration=False)
        self.group_partition = self.coordinator.partition_for(GROUP_ID)
        self.coordinator.load_partition(self.group_partition, self.log)
        self._records_seen: dict[int, int] = {}
        self.replay_check = True
        """Off for the few tests that force a state the log cannot express (a group made
        Dead or Empty by hand, say)."""

    # --- plumbing ---------------------------------------------------------------------------

    def settle(self) -> None:
        """Complete the appends made so far (the log's turn of the loop)."""
        self.log.complete_pending()

    def sleep(self, ms: int) -> None:
        """Kafka's ``timer.advanceClock(ms)``: time moves, what is due expires."""
        self.time.sleep(ms)
        self.coordinator.poll()
        self.settle()

    def group(self, group_id: str = GROUP_ID) -> ClassicGroup:
        group = self.coordinator.manager.get_group(group_id)
        assert group is not None, f"no group {group_id}"
        return group

    def assert_group_state(self, state: GroupState, group_id: str = GROUP_ID) -> None:
        assert self.group(group_id).state is state

    def take_new_records(self, partition: int | None = None) -> list[codec.OffsetsRecord]:
        """The records written to ``partition`` (the group's by default) since the last call
        of this or of a summarizing variant."""
        partition = self.group_partition if partition is None else partition
        records = self.log.records(partition)
        seen = self._records_seen.get(partition, 0)
        self._records_seen[partition] = len(records)
        return list(records[seen:])

    def take_records(self, partition: int | None = None) -> list[tuple[Any, ...]]:
        """The records written since the last call, summarized (:func:`record_summary`)."""
        return [record_summary(r) for r in self.take_new_records(partition)]

    def offset_and_metadata(self, offset: int, metadata: str = "") -> OffsetAndMetadata:
        return OffsetAndMetadata(offset, metadata, self.time.milliseconds())

    # --- JoinGroup --------------------------------------------------------------------------

    def send_join_group(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str = PROTOCOL_TYPE,
        protocols: Sequence[tuple[str, bytes]] = PROTOCOLS,
        group_instance_id: str | None = None,
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
        require_known_member_id: bool = False,
        support_skipping_assignment: bool = True,
        fail_append: Errors | None = None,
    ) -> Answer[JoinGroupResult]:
        answer: Answer[JoinGroupResult] = Answer()
        if fail_append is not None:
            self.log.fail_next(fail_append)
        self.coordinator.handle_join_group(
            group_id, member_id, group_instance_id=group_instance_id,
            require_known_member_id=require_known_member_id,
            support_skipping_assignment=support_skipping_assignment, client_id="clientId",
            client_host="clientHost", rebalance_timeout_ms=rebalance_timeout,
            session_timeout_ms=session_timeout, protocol_type=protocol_type,
            protocols=list(protocols), callback=answer,
        )
        self.settle()
        return answer

    def dynamic_join_group(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str = PROTOCOL_TYPE,
        protocols: Sequence[tuple[str, bytes]] = PROTOCOLS,
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
    ) -> JoinGroupResult:
        """JoinGroup v4+: the MEMBER_ID_REQUIRED round trip, then the join itself."""
        answer = self.send_join_group(group_id, member_id, protocol_type, protocols, None,
                                      session_timeout, rebalance_timeout, require_known_member_id=True)
        if member_id == UNKNOWN:
            result = answer.result()
            if result.error != Errors.MEMBER_ID_REQUIRED:
                return result
            answer = self.send_join_group(group_id, result.member_id, protocol_type, protocols,
                                          None, session_timeout, rebalance_timeout,
                                          require_known_member_id=True)
        self.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
        return answer.result()

    def static_join_group(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str,
        protocol_type: str = PROTOCOL_TYPE,
        protocols: Sequence[tuple[str, bytes]] = PROTOCOLS,
        clock_advance: int = GROUP_INITIAL_REBALANCE_DELAY + 1,
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
        support_skipping_assignment: bool = True,
        fail_append: Errors | None = None,
    ) -> JoinGroupResult:
        answer = self.send_join_group(group_id, member_id, protocol_type, protocols,
                                      group_instance_id, session_timeout, rebalance_timeout,
                                      support_skipping_assignment=support_skipping_assignment,
                                      fail_append=fail_append)
        self.sleep(clock_advance)
        return answer.result()

    # --- SyncGroup --------------------------------------------------------------------------

    def send_sync_group_leader(
        self,
        group_id: str,
        generation: int,
        leader_id: str,
        assignment: Mapping[str, bytes],
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        group_instance_id: str | None = None,
    ) -> Answer[SyncGroupResult]:
        answer: Answer[SyncGroupResult] = Answer()
        self.coordinator.handle_sync_group(group_id, generation, leader_id, protocol_type=protocol_type,
                                           protocol_name=protocol_name, group_instance_id=group_instance_id,
                                           assignment=assignment, callback=answer)
        self.settle()
        return answer

    def send_sync_group_follower(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        group_instance_id: str | None = None,
    ) -> Answer[SyncGroupResult]:
        return self.send_sync_group_leader(group_id, generation, member_id, {}, protocol_type,
                                           protocol_name, group_instance_id)

    def sync_group_leader(self, group_id: str, generation: int, leader_id: str,
                          assignment: Mapping[str, bytes], **kwargs: Any) -> SyncGroupResult:
        return self.send_sync_group_leader(group_id, generation, leader_id, assignment, **kwargs).result()

    def sync_group_follower(self, group_id: str, generation: int, member_id: str,
                            **kwargs: Any) -> SyncGroupResult:
        return self.send_sync_group_follower(group_id, generation, member_id, **kwargs).result()

    # --- others -----------------------------------------------------------------------------

    def heartbeat(self, group_id: str, member_id: str, generation: int,
                  group_instance_id: str | None = None) -> Errors:
        answer: Answer[Errors] = Answer()
        self.coordinator.handle_heartbeat(group_id, member_id, group_instance_id, generation, answer)
        return answer.result()

    def commit_offsets(
        self,
        group_id: str,
        member_id: str,
        generation: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        group_instance_id: str | None = None,
        fail_append: Errors | None = None,
    ) -> dict[TopicPartition, Errors]:
        answer: Answer[dict[TopicPartition, Errors]] = Answer()
        if fail_append is not None:
            self.log.fail_next(fail_append)
        self.coordinator.handle_commit_offsets(group_id, member_id, group_instance_id,
                                               generation, offsets, answer)
        self.settle()
        return answer.result()

    def commit_transactional_offsets(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        member_id: str = UNKNOWN,
        group_instance_id: str | None = None,
        generation: int = -1,
    ) -> dict[TopicPartition, Errors]:
        answer: Answer[dict[TopicPartition, Errors]] = Answer()
        self.coordinator.handle_txn_commit_offsets(group_id, producer_id, producer_epoch,
                                                   member_id, group_instance_id, generation,
                                                   offsets, answer)
        self.settle()
        return answer.result()

    def complete_transaction(self, producer_id: int, partitions: Sequence[int], commit: bool) -> Errors:
        answer: Answer[Errors] = Answer()
        self.coordinator.complete_transaction(producer_id, 0, partitions, commit, answer)
        self.settle()
        return answer.result()

    def fetch_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition] | None = None,
        require_stable: bool = False,
    ) -> tuple[Errors, dict[TopicPartition, Any]]:
        return self.coordinator.handle_fetch_offsets(group_id, require_stable, partitions)

    def single_leave_group(self, group_id: str, member_id: str,
                           group_instance_id: str | None = None) -> LeaveGroupResult:
        return self.batch_leave_group(group_id, [MemberIdentity(member_id, group_instance_id)])

    def batch_leave_group(self, group_id: str, members: Sequence[MemberIdentity]) -> LeaveGroupResult:
        answer: Answer[LeaveGroupResult] = Answer()
        self.coordinator.handle_leave_group(group_id, members, answer)
        self.settle()
        return answer.result()

    def delete_groups(self, group_ids: Sequence[str]) -> dict[str, Errors]:
        answer: Answer[dict[str, Errors]] = Answer()
        self.coordinator.handle_delete_groups(group_ids, answer)
        self.settle()
        return answer.result()

    def delete_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition]
    ) -> tuple[Errors, dict[TopicPartition, Errors]]:
        answer: Answer[tuple[Errors, dict[TopicPartition, Errors]]] = Answer()
        self.coordinator.handle_delete_offsets(group_id, partitions, lambda e, p: answer((e, p)))
        self.settle()
        return answer.result()

    # --- replay check -----------------------------------------------------------------------

    def replayed(self) -> GroupCoordinator:
        """A fresh coordinator that loaded every partition from the log written so far."""
        fresh = GroupCoordinator(self.config, InMemoryLog(), self.time, purgatory=self.purgatory)
        fresh.startup(enable_metadata_expiration=False)
        for partition in sorted(self.coordinator.manager.owned_partitions):
            fresh.load_partition(partition, self.log)
        return fresh


def durable_view(coordinator: GroupCoordinator) -> dict[str, Any]:
    """What of a coordinator's state the log must reproduce.

    Groups in Stable or Empty with everything their metadata records hold (the state
    timestamp only for Empty groups, where offset expiry counts from it; a Stable group is
    stamped when its assignment is persisted, a moment after the record); groups
    mid-rebalance are left out (their last record is the previous generation); a trivial
    group (Empty, generation 0, no protocol, no offsets) is the same as no group. Committed
    offsets with their values, and the offsets of open transactions.
    """
    manager = coordinator.manager
    groups: dict[str, Any] = {}
    for group in manager.current_groups():
        if group.state is GroupState.EMPTY and group.generation_id == 0 and group.protocol_type is None:
            continue
        if group.state not in (GroupState.STABLE, GroupState.EMPTY):
            continue
        members = sorted(
            (m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
             m.session_timeout_ms, m.metadata(group.protocol_name or ""), m.assignment)
            for m in group.members.values()
        )
        groups[group.group_id] = (
            group.state, group.protocol_type, group.generation_id, group.protocol_name,
            group.leader_id, members,
            group.current_state_timestamp if group.state is GroupState.EMPTY else None,
        )
    offsets = {
        g: manager.offsets.committed(g) for g in sorted(manager.offsets.group_ids())
        if manager.offsets.committed(g)
    }
    consumer_groups = {
        g.group_id: (g.group_epoch, g.metadata_hash, g.assignment_epoch, g.assignment_timestamp,
                     dict(g.members), {m: dict(t) for m, t in g.target_assignment.items()},
                     dict(g.resolved_regexes))
        for g in manager.consumer_groups.groups.values()
    }
    return {
        "groups": groups,
        "consumer_groups": consumer_groups,
        "offsets": offsets,
        "pending_transactional": manager.offsets.pending_transactional(),
    }


def mid_rebalance_groups(coordinator: GroupCoordinator) -> set[str]:
    return {
        g.group_id for g in coordinator.manager.current_groups()
        if g.state in (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE)
    }


def assert_replay_matches(ctx: Context) -> None:
    ctx.settle()
    if not ctx.replay_check:
        return
    live = durable_view(ctx.coordinator)
    replayed_coordinator = ctx.replayed()
    replayed = durable_view(replayed_coordinator)
    # A group mid-rebalance is loaded as its last persisted generation: leave it out.
    for group_id in mid_rebalance_groups(ctx.coordinator):
        replayed["groups"].pop(group_id, None)
    assert replayed == live


class RebalanceResult:
    def __init__(self, generation: int, leader_id: str, leader_assignment: bytes,
                 follower_id: str, follower_assignment: bytes) -> None:
        self.generation = generation
        self.leader_id = leader_id
        self.leader_assignment = leader_assignment
        self.follower_id = follower_id
        self.follower_assignment = follower_assignment


def static_members_join_and_rebalance(
    ctx: Context,
    leader_instance_id: str = LEADER_INSTANCE_ID,
    follower_instance_id: str = FOLLOWER_INSTANCE_ID,
    session_timeout: int = DEFAULT_SESSION_TIMEOUT,
    rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
) -> RebalanceResult:
    """Two static members form generation 1 of GROUP_ID and sync; the leader's assignment is
    written (checked here and taken from :meth:`Context.take_records`)."""
    leader = ctx.send_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                                 leader_instance_id, session_timeout, rebalance_timeout)
    follower = ctx.send_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                                   follower_instance_id, session_timeout, rebalance_timeout)
    # The first wait completes the initial delayed join, which the second member extends;
    # the second completes the extension.
    ctx.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    ctx.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    leader_join, follower_join = leader.result(), follower.result()
    assert leader_join.error == Errors.NONE and leader_join.generation_id == 1
    assert follower_join.error == Errors.NONE and follower_join.generation_id == 1

    leader_id = leader_join.member_id
    leader_sync = ctx.sync_group_leader(GROUP_ID, 1, leader_id, {leader_id: b""})
    assert leader_sync.error == Errors.NONE
    ctx.assert_group_state(GroupState.STABLE)
    follower_id = follower_join.member_id
    follower_sync = ctx.sync_group_follower(GROUP_ID, 1, follower_id)
    assert follower_sync.error == Errors.NONE
    ctx.assert_group_state(GroupState.STABLE)
    assert ctx.take_records() == [("group", GROUP_ID, 1, leader_id, {leader_id: b"", follower_id: b""})]
    return RebalanceResult(1, leader_id, leader_sync.assignment, follower_id, follower_sync.assignment)


def check_join_group_result(
    ctx: Context,
    result: JoinGroupResult,
    error: Errors,
    generation: int,
    group_instance_ids: set[str],
    state: GroupState,
    protocol_type: str | None,
    leader_id: str = UNKNOWN,
    member_id: str = UNKNOWN,
    skip_assignment: bool = False,
) -> None:
    assert result.error == error
    assert result.generation_id == generation
    assert len(result.members) == len(group_instance_ids)
    assert {m.group_instance_id for m in result.members} == group_instance_ids
    ctx.assert_group_state(state)
    assert result.protocol_type == protocol_type
    assert result.skip_assignment == skip_assignment
    if leader_id != UNKNOWN:
        assert result.leader_id == leader_id
    if member_id != UNKNOWN:
        assert result.member_id == member_id


async def call_handler(runtime: CoordinatorRuntime, handler: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a coordinator handler as the server does (then re-arm the runtime's timer) and
    await what its ``callback`` is given, for at most 10 s."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    handler(*args, callback=future.set_result, **kwargs)
    runtime.after_request()
    return await asyncio.wait_for(future, 10)
