"""ConsumerGroupHeartbeat: joining, staying in and leaving a consumer group (KIP-848).

Kafka's ``GroupMetadataManager.consumerGroupHeartbeat`` and its timers, rule for rule. A
heartbeat is decided on the group as it stands and gives a :class:`CoordinatorResult`: the
records that say what changed and the response. One heartbeat, in order:

1. the group, made by a member's first heartbeat (epoch 0);
2. the member, made or found, and its epoch checked (fencing);
3. its subscription updated from the request (record type 5 if anything changed);
4. the group epoch bumped when the subscribed topics or their metadata changed (type 3);
5. a new target assignment computed by the assignor when the group epoch is ahead of the
   assignment epoch (types 7 and 6; no sooner than ``group.consumer.assignment.interval.ms``
   after the last one);
6. the member reconciled towards its target (:mod:`.current_assignment`; type 8): it gets a
   partition only once its previous owner revoked it;
7. its session deadline restarted, and its rebalance deadline set while it has partitions to
   revoke.

The records are replayed into memory at once (:meth:`ConsumerGroups.replay`, which loading
uses too), so the next heartbeat sees them; the response waits until they are written.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from uuid import UUID

from groupcoord import purgatory as purgatories
from groupcoord.config import Config
from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.consumer import records as rec
from groupcoord.coordinator.consumer.assignors import ASSIGNORS, PartitionAssignorError
from groupcoord.coordinator.consumer.conversions import GroupConversions
from groupcoord.coordinator.consumer.current_assignment import reconcile
from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.consumer.member import ConsumerGroupMember, MemberState, freeze_assignment
from groupcoord.coordinator.consumer.metadata_hash import compute_metadata_hash
from groupcoord.coordinator.consumer.regex import RegexUpdate, regexes_to_refresh, resolve, update_regex
from groupcoord.coordinator.consumer.target_assignment import (
    TopicMetadata,
    compute_target_assignment,
    subscribed_topic_ids,
)
from groupcoord.coordinator.group import ClassicGroup, GroupState
from groupcoord.coordinator.records import CoordinatorRecord, group_metadata_tombstone
from groupcoord.coordinator.shard import GroupCoordinatorShard
from groupcoord.coordinator.write_path import CoordinatorResult, WritePath, group_append_error
from groupcoord.errors import Errors

log = logging.getLogger(__name__)

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
METADATA_REFRESH_INTERVAL_MS = 2**31 - 1
"""Kafka refreshes a group's topic metadata only when topics change (or after a load)."""


@dataclass(frozen=True)
class ConsumerGroupHeartbeat:
    """A ConsumerGroupHeartbeat request, in the coordinator's terms (None: unchanged)."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: Sequence[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: Mapping[UUID, Sequence[int]] | None = None
    client_id: str = ""
    client_host: str = ""

    @property
    def is_full(self) -> bool:
        """Carries everything a join does (a client resending its state after an error)."""
        return (self.rebalance_timeout_ms != -1
                and (self.subscribed_topic_names is not None or self.subscribed_topic_regex is not None)
                and self.topic_partitions is not None)


@dataclass(frozen=True)
class ConsumerGroupHeartbeatResult:
    error: Errors = Errors.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Mapping[UUID, Sequence[int]] | None = field(default=None)


def heartbeat_append_error(result: ConsumerGroupHeartbeatResult, error: Errors) -> ConsumerGroupHeartbeatResult:
    return ConsumerGroupHeartbeatResult(group_append_error(Errors.NONE, error))


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("consumer-session", group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("consumer-rebalance", group_id, member_id)


def join_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """A classic member's deadline to rejoin once told to (Kafka's ``join-<g>-<m>``)."""
    return ("consumer-join", group_id, member_id)


def sync_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """A classic member's deadline to SyncGroup after its join (Kafka's ``sync-<g>-<m>``)."""
    return ("consumer-sync", group_id, member_id)


def regex_key(group_id: str) -> tuple[str, str]:
    return ("consumer-regex", group_id)


class ConsumerGroupProtocol:
    """Heartbeats, leaves and the member timers of consumer groups."""

    def __init__(self, config: Config, time: Time, shard: GroupCoordinatorShard, writes: WritePath,
                 purgatory: purgatories.AnyPurgatory, topics: TopicMetadata) -> None:
        self._config = config
        self._time = time
        self._shard = shard
        self._groups = shard.consumer_groups
        self._writes = writes
        self._purgatory = purgatory
        self.topics = topics
        self._topics_version = topics.version
        self._resolving: set[str] = set()
        """Groups whose regular expressions are about to be resolved."""
        self.assignor_names = config.consumer_group_assignors()
        self._join_timers: set[tuple[str, str, str]] = set()
        """The classic members' join deadlines scheduled (Kafka schedules them if absent)."""
        self.conversions: GroupConversions | None = None

    # --- the heartbeat ----------------------------------------------------------------------

    def heartbeat(self, request: ConsumerGroupHeartbeat) -> CoordinatorResult[ConsumerGroupHeartbeatResult]:
        if self.topics.version != self._topics_version:
            # Topics changed: every group checks its subscribed topics on its next heartbeat
            # (Kafka's onMetadataUpdate asks the groups subscribed to a changed topic).
            self._topics_version = self.topics.version
            for group in self._groups.groups.values():
                group.metadata_refresh_deadline = (0, 0)
        upgraded: list[ClassicGroup] = []
        try:
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                # The leave's records are already applied to memory.
                return _result(*self._leave(request))
            records, response = self._heartbeat(request, upgraded)
        except GroupError as refused:
            return CoordinatorResult((), ConsumerGroupHeartbeatResult(refused.error, refused.message))
        result = self._written(request.group_id, records, response)
        if upgraded and self.conversions is not None:
            self.conversions.upgraded(upgraded[0])
        return result

    def _written(self, group_id: str, records: list[CoordinatorRecord],
                 response: ConsumerGroupHeartbeatResult) -> CoordinatorResult[ConsumerGroupHeartbeatResult]:
        self._shard.replay_now(records)
        return _result(records, response)

    def _heartbeat(self, request: ConsumerGroupHeartbeat,
                   upgraded: list[ClassicGroup]) -> tuple[list[CoordinatorRecord], ConsumerGroupHeartbeatResult]:
        now = self._time.milliseconds()
        records: list[CoordinatorRecord] = []
        group = self._group(request.group_id, request.member_epoch == 0, records, upgraded)
        self.check_group_size(group, request.member_id, request.instance_id)
        member_id = request.member_id or str(uuid.uuid4())
        member, replaced_id = self._member(group, request, member_id, records)
        updated = _updated_member(member, request)
        reconciled = self.update_member(group, member, updated, replaced_id, request.topic_partitions, now, records)
        if reconciled.assignment_metadata() != member.assignment_metadata() or replaced_id is not None:
            if reconciled.state is MemberState.UNREVOKED_PARTITIONS:
                self._schedule_rebalance_timeout(group.group_id, reconciled)
            else:
                self._purgatory.complete_deadline(rebalance_key(group.group_id, member_id))
        self.schedule_session_timeout(group.group_id, member_id)

        assignment = None
        if (request.member_epoch == 0 or request.is_full
                or reconciled.assigned_partitions != member.assigned_partitions):
            assignment = {t: sorted(ps) for t, ps in reconciled.assigned_partitions.items()}
        return records, ConsumerGroupHeartbeatResult(
            member_id=reconciled.member_id, member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self._config.group_consumer_heartbeat_interval_ms,
            assignment=assignment,
        )

    def update_member(self, group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember,
                      replaced_id: str | None, owned: Mapping[UUID, Sequence[int]] | None, now: int,
                      records: list[CoordinatorRecord]) -> ConsumerGroupMember:
        """Steps 3 to 6 of a join or heartbeat, for a member of either protocol: ``member`` as
        the group knows it (or new), ``updated`` with the request's subscription, ``owned`` the
        partitions the member reports. Appends the records; returns the reconciled member."""
        subscription_changed = updated.subscribed_topic_names != member.subscribed_topic_names
        if updated.subscription_metadata() != member.subscription_metadata() or replaced_id is not None:
            records.append(rec.member_subscription_record(group.group_id, updated))
        regex_update, needs_resolving = update_regex(group, member, updated, records)
        self._maybe_schedule_regex_resolution(group, member, updated, needs_resolving, now)
        bump = subscription_changed or regex_update is RegexUpdate.UPDATED_AND_RESOLVED

        group_epoch = group.group_epoch
        if bump or group.has_metadata_expired(now):
            old = group.member(replaced_id or member.member_id)
            names = group.subscribed_topic_names_after(removed=[old] if old else [], added=[updated])
            metadata_hash = compute_metadata_hash(names, self.topics)
            if metadata_hash != group.metadata_hash:
                bump = True
            if bump:
                group_epoch += 1
                records.append(rec.group_epoch_record(group.group_id, group_epoch, metadata_hash))
                log.info("[GroupId %s] Bumped group epoch to %d with metadata hash %d",
                         group.group_id, group_epoch, metadata_hash)
            group.metadata_refresh_deadline = (now + METADATA_REFRESH_INTERVAL_MS, group_epoch)
            if group.has_subscription_metadata_record:
                records.append(rec.subscription_metadata_tombstone(group.group_id))

        target_epoch, target = self._target(group, group_epoch, updated, replaced_id, now, records)

        reconciled = updated
        if subscription_changed or not updated.is_reconciled_to(target_epoch):
            reconciled = reconcile(
                updated,
                target_epoch=target_epoch,
                target_assignment=target,
                current_partition_epoch=group.current_partition_epoch,
                owned_topic_partitions=owned,
                subscribed_topic_ids=subscribed_topic_ids(group, updated, self.topics),
                has_subscription_changed=subscription_changed,
            )
        if reconciled.assignment_metadata() != member.assignment_metadata() or replaced_id is not None:
            records.append(rec.current_assignment_record(group.group_id, reconciled))
        return reconciled

    def _group(self, group_id: str, create: bool, records: list[CoordinatorRecord],
               upgraded: list[ClassicGroup]) -> ConsumerGroup:
        """Kafka's ``getOrMaybeCreateConsumerGroup``: a classic group converted is added to
        ``upgraded``."""
        group = self._groups.get(group_id)
        if group is not None:
            return group
        classic = self._shard.get_group(group_id)
        if classic is None and not create:
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        if classic is not None:
            if create and not classic.is_in(GroupState.EMPTY) and self.conversions is not None:
                upgraded.append(classic)
                return self.conversions.to_consumer_group(classic, records)
            if not (create and classic.is_in(GroupState.EMPTY)):
                raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
            # An empty classic group (or one that only stores offsets) gives way: its metadata is
            # tombstoned, its offsets stay.
            records.append(group_metadata_tombstone(group_id))
        return ConsumerGroup(group_id)

    def check_group_size(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> None:
        """Kafka's ``throwIfConsumerGroupIsFull``: a new member of a full group is refused."""
        if group.static_member(instance_id) is not None:
            return
        max_size = self._config.group_consumer_max_size
        if len(group.members) >= max_size and (not member_id or member_id not in group.members):
            raise GroupError(Errors.GROUP_MAX_SIZE_REACHED,
                             f"The consumer group has reached its maximum capacity of {max_size} members.")

    def _member(self, group: ConsumerGroup, request: ConsumerGroupHeartbeat, member_id: str,
                records: list[CoordinatorRecord]) -> tuple[ConsumerGroupMember, str | None]:
        """The member the heartbeat is from, and the member id a static member replaces."""
        epoch = request.member_epoch
        if request.instance_id is None:
            member = group.member(member_id)
            if member is None:
                if epoch != 0:
                    raise GroupError(Errors.UNKNOWN_MEMBER_ID,
                                     f"Member {member_id} is not a member of group {group.group_id}.")
                member = ConsumerGroupMember(member_id)
            _check_member_epoch(member, request)
            return member, None
        existing = group.static_member(request.instance_id)
        if epoch == 0:
            if existing is None:
                return ConsumerGroupMember(member_id, instance_id=request.instance_id), None
            if existing.member_id == member_id:
                return existing, None
            if not existing.uses_classic_protocol and existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise GroupError(
                    Errors.UNRELEASED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {request.instance_id} cannot join the "
                    f"group because the instance id is owned by {existing.member_id} member.")
            records.extend(self.replace_static_member(group, existing, member_id))
            return existing.replace(member_id=member_id, member_epoch=0, previous_member_epoch=0), existing.member_id
        if existing is None:
            raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown.")
        if existing.member_id != member_id:
            raise GroupError(
                Errors.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {request.instance_id} was fenced by member "
                f"{existing.member_id}.")
        _check_member_epoch(existing, request)
        return existing, None

    def replace_static_member(self, group: ConsumerGroup, old: ConsumerGroupMember,
                               new_member_id: str) -> list[CoordinatorRecord]:
        """The previous id of a static member leaves; its timers go with it."""
        group_id = group.group_id
        self._cancel_timers(group_id, old.member_id)
        return [rec.current_assignment_tombstone(group_id, old.member_id),
                rec.target_assignment_tombstone(group_id, old.member_id),
                rec.member_subscription_tombstone(group_id, old.member_id)]

    def _target(self, group: ConsumerGroup, group_epoch: int, member: ConsumerGroupMember,
                replaced_id: str | None, now: int,
                records: list[CoordinatorRecord]) -> tuple[int, Mapping[UUID, frozenset[int]]]:
        """The member's target and its epoch: a new one computed if the group epoch is ahead and
        the assignment interval has passed, else the current one."""
        if group.assignment_epoch >= group_epoch or not self._can_compute_assignment(group, now):
            previous = group.target_of(member.member_id)
            if not previous and replaced_id is not None:
                previous = group.target_of(replaced_id)
            return group.assignment_epoch, previous
        name = group.preferred_server_assignor(group.member(member.member_id), member) or self.assignor_names[0]
        assignor = ASSIGNORS[name]
        try:
            computed = compute_target_assignment(group, group_epoch, assignor, self.topics, member,
                                                 replaced_id, now)
        except PartitionAssignorError as failure:
            log.error("[GroupId %s] Failed to compute a new target assignment for epoch %d: %s",
                      group.group_id, group_epoch, failure)
            raise GroupError(Errors.UNKNOWN_SERVER_ERROR) from failure
        records.extend(computed.records)
        return group_epoch, computed.targets.get(member.member_id, {})

    # --- regular expressions ----------------------------------------------------------------

    def _maybe_schedule_regex_resolution(self, group: ConsumerGroup, member: ConsumerGroupMember,
                                         updated: ConsumerGroupMember, needs_resolving: bool, now: int) -> None:
        """Resolve the group's regular expressions a moment from now if they need it (Kafka
        hands them to a background executor; the heartbeat does not wait for them)."""
        if group.group_id in self._resolving:
            return
        regexes = regexes_to_refresh(group, member, updated, needs_resolving, now, self.topics.version,
                                     self._config.group_consumer_regex_refresh_interval_ms)
        if regexes is None:
            return
        self._resolving.add(group.group_id)
        group_id = group.group_id

        def resolve_now(key: object) -> None:
            self._resolving.discard(group_id)
            self._resolve_regexes(group_id, regexes)

        self._purgatory.watch_deadline(regex_key(group_id), 1, resolve_now)

    def _resolve_regexes(self, group_id: str, regexes: Sequence[str]) -> None:
        """Kafka's ``handleRegularExpressionsResult``: the resolutions written, and the group
        epoch bumped if any changed or the subscribed topics' hash did."""
        group = self._groups.get(group_id)
        if group is None or not self._shard.is_group_local(group_id):
            return
        now = self._time.milliseconds()
        records, changed = resolve(group, regexes, self.topics.topic_names(), self.topics.version, now)
        names = {name for name, count in group.subscribed_topic_names.items() if count > 0}
        for regex, count in group.subscribed_regexes.items():
            resolved = changed.get(regex) or group.resolved_regexes.get(regex)
            if count > 0 and resolved is not None:
                names |= resolved.topics
        metadata_hash = compute_metadata_hash(names, self.topics)
        if changed or metadata_hash != group.metadata_hash:
            epoch = group.group_epoch + 1
            records.append(rec.group_epoch_record(group_id, epoch, metadata_hash))
            log.info("[GroupId %s] Bumped group epoch to %d with metadata hash %d", group_id, epoch, metadata_hash)
            group.metadata_refresh_deadline = (now + METADATA_REFRESH_INTERVAL_MS, epoch)
        if records:
            result = self._written(group_id, records, ConsumerGroupHeartbeatResult())
            self._writes.schedule_write(self._shard.partition_for(group_id), result, _ignore)

    def _can_compute_assignment(self, group: ConsumerGroup, now: int) -> bool:
        interval = self._config.group_consumer_assignment_interval_ms
        return group.assignment_timestamp == 0 or interval == 0 or now >= group.assignment_timestamp + interval

    # --- leaving and fencing ----------------------------------------------------------------

    def _leave(self, request: ConsumerGroupHeartbeat) -> tuple[list[CoordinatorRecord], ConsumerGroupHeartbeatResult]:
        group = self._groups.get(request.group_id)
        if group is None:
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Group {request.group_id} not found.")
        if request.instance_id is None:
            member = group.member(request.member_id)
            if member is None:
                raise GroupError(Errors.UNKNOWN_MEMBER_ID,
                                 f"Member {request.member_id} is not a member of group {group.group_id}.")
            log.info("[GroupId %s] Member %s left the consumer group.", group.group_id, member.member_id)
            return self.fence_members(group, [member]), ConsumerGroupHeartbeatResult(
                member_id=request.member_id, member_epoch=request.member_epoch)
        member = group.static_member(request.instance_id)
        if member is None:
            raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown.")
        if member.member_id != request.member_id:
            raise GroupError(
                Errors.FENCED_INSTANCE_ID,
                f"Static member {request.member_id} with instance id {request.instance_id} was fenced by "
                f"member {member.member_id}.")
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # A temporary leave: the member keeps its partitions for its next id, at epoch 0.
            left = member.replace(
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                partitions_pending_revocation=freeze_assignment({}),
                assigned_partitions=freeze_assignment(
                    {t: dict.fromkeys(ps, 0) for t, ps in member.assigned_partitions.items()}),
            )
            log.info("[GroupId %s] Static member %s with instance id %s temporarily left the consumer group.",
                     group.group_id, member.member_id, request.instance_id)
            records = [rec.current_assignment_record(group.group_id, left)]
            self._shard.replay_now(records)
            return records, ConsumerGroupHeartbeatResult(
                member_id=member.member_id, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
        return self.fence_members(group, [member]), ConsumerGroupHeartbeatResult(
            member_id=request.member_id, member_epoch=request.member_epoch)

    def fence_members(self, group: ConsumerGroup, members: Sequence[ConsumerGroupMember]) -> list[CoordinatorRecord]:
        """Remove ``members`` and bump the group epoch (Kafka's ``consumerGroupFenceMembers``):
        their timers are cancelled and the records returned are already applied to memory.
        If only classic members remain, the group is converted to a classic group instead."""
        if self.conversions is not None:
            converted = self.conversions.maybe_downgrade(group, members)
            if converted is not None:
                return converted
        group_id = group.group_id
        records: list[CoordinatorRecord] = []
        for member in members:
            records += [rec.current_assignment_tombstone(group_id, member.member_id),
                        rec.target_assignment_tombstone(group_id, member.member_id),
                        rec.member_subscription_tombstone(group_id, member.member_id)]
            self._cancel_timers(group_id, member.member_id)
        leaving = Counter(m.subscribed_topic_regex for m in members if m.subscribed_topic_regex)
        records += [rec.regular_expression_tombstone(group_id, regex) for regex, count in leaving.items()
                    if group.subscribed_regexes.get(regex, 0) <= count]
        names = group.subscribed_topic_names_after(removed=members)
        records.append(rec.group_epoch_record(group_id, group.group_epoch + 1,
                                              compute_metadata_hash(names, self.topics)))
        self._shard.replay_now(records)
        return records

    # --- timers -----------------------------------------------------------------------------

    def schedule_session_timeout(self, group_id: str, member_id: str, timeout_ms: int | None = None) -> None:
        """The member's session restarts: ``timeout_ms`` (a classic member's own), or
        group.consumer.session.timeout.ms."""
        self._purgatory.watch_deadline(
            session_key(group_id, member_id),
            self._config.group_consumer_session_timeout_ms if timeout_ms is None else timeout_ms,
            self._on_session_timeout,
        )

    def schedule_loaded_member_timeouts(self, group: ConsumerGroup) -> None:
        """A loaded group's members: their sessions run again (Kafka's ``onLoaded``)."""
        for member in group.members.values():
            classic = member.classic_member_metadata
            self.schedule_session_timeout(group.group_id, member.member_id,
                                          classic.session_timeout_ms if classic is not None else None)
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                self._schedule_rebalance_timeout(group.group_id, member)

    def _schedule_rebalance_timeout(self, group_id: str, member: ConsumerGroupMember) -> None:
        epoch = member.member_epoch
        member_id = member.member_id

        def expired(key: object) -> None:
            group = self._groups.get(group_id)
            current = group.member(member_id) if group is not None else None
            if group is None or current is None or current.member_epoch != epoch:
                return
            log.info("[GroupId %s] Member %s fenced from the group because it failed to revoke "
                     "partitions within %dms.", group_id, member_id, member.rebalance_timeout_ms)
            self.write_fencing(group, current)

        self._purgatory.watch_deadline(rebalance_key(group_id, member_id), member.rebalance_timeout_ms, expired)

    def _on_session_timeout(self, key: object) -> None:
        assert isinstance(key, tuple)
        group_id, member_id = str(key[1]), str(key[2])
        group = self._groups.get(group_id)
        member = group.member(member_id) if group is not None else None
        if group is None or member is None:
            return
        log.info("[GroupId %s] Member %s fenced from the group because the member session expired.",
                 group_id, member_id)
        self.write_fencing(group, member)

    def write_fencing(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        """Fence ``member`` from a timer: its records written (no one waits for them)."""
        if not self._shard.is_group_local(group.group_id):
            return
        result = _result(self.fence_members(group, [member]), ConsumerGroupHeartbeatResult())
        self._writes.schedule_write(self._shard.partition_for(group.group_id), result, _ignore)

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        for key in (session_key, rebalance_key, join_key, sync_key):
            self._purgatory.complete_deadline(key(group_id, member_id))
        self._join_timers.discard(join_key(group_id, member_id))

    def schedule_join_timeout_if_absent(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        """A classic member told to rejoin is fenced unless it rejoins within ``timeout_ms``."""
        key = join_key(group_id, member_id)
        if key not in self._join_timers:
            self._join_timers.add(key)
            self._purgatory.watch_deadline(key, timeout_ms, self._on_classic_timeout)

    def cancel_join_timeout(self, group_id: str, member_id: str) -> None:
        self._join_timers.discard(join_key(group_id, member_id))
        self._purgatory.complete_deadline(join_key(group_id, member_id))

    def schedule_sync_timeout(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        """A classic member that joined is fenced unless its SyncGroup comes within ``timeout_ms``."""
        self._purgatory.watch_deadline(sync_key(group_id, member_id), timeout_ms, self._on_classic_timeout)

    def cancel_sync_timeout(self, group_id: str, member_id: str) -> None:
        self._purgatory.complete_deadline(sync_key(group_id, member_id))

    def _on_classic_timeout(self, key: object) -> None:
        assert isinstance(key, tuple)
        self._join_timers.discard(key)
        kind, group_id, member_id = str(key[0]), str(key[1]), str(key[2])
        group = self._groups.get(group_id)
        member = group.member(member_id) if group is not None else None
        if group is None or member is None:
            return
        log.info("[GroupId %s] Member %s fenced from the group because %s.", group_id, member_id,
                 "the classic member failed to join within the rebalance timeout" if kind == "consumer-join"
                 else "the member failed to sync within timeout")
        self.write_fencing(group, member)

    def cancel_group_timers(self, group: ConsumerGroup) -> None:
        for member_id in group.members:
            self._cancel_timers(group.group_id, member_id)
        self._purgatory.complete_deadline(regex_key(group.group_id))
        self._resolving.discard(group.group_id)


def _ignore(result: object) -> None:
    return None


def _result(records: list[CoordinatorRecord],
            response: ConsumerGroupHeartbeatResult) -> CoordinatorResult[ConsumerGroupHeartbeatResult]:
    """The write of records already applied to memory."""
    return CoordinatorResult(records, response, error_response=heartbeat_append_error, replay_records=False)


def _updated_member(member: ConsumerGroupMember, request: ConsumerGroupHeartbeat) -> ConsumerGroupMember:
    """``member`` with the request's fields that are set (None, or -1, leave a field as it is),
    its client's id and host, and no classic metadata; ``member`` itself when that changes
    nothing (the steady heartbeat: copying the member would be most of its cost)."""
    changes: dict[str, object] = {}
    for name, value in (("instance_id", request.instance_id), ("rack_id", request.rack_id),
                        ("server_assignor", request.server_assignor),
                        ("subscribed_topic_regex", request.subscribed_topic_regex),
                        ("client_id", request.client_id), ("client_host", request.client_host)):
        if value is not None and value != getattr(member, name):
            changes[name] = value
    if request.rebalance_timeout_ms != -1 and request.rebalance_timeout_ms != member.rebalance_timeout_ms:
        changes["rebalance_timeout_ms"] = request.rebalance_timeout_ms
    if request.subscribed_topic_names is not None:
        names = frozenset(request.subscribed_topic_names)
        if names != member.subscribed_topic_names:
            changes["subscribed_topic_names"] = names
    if member.classic_member_metadata is not None:
        changes["classic_member_metadata"] = None
    return member.replace(**changes) if changes else member


def _check_member_epoch(member: ConsumerGroupMember, request: ConsumerGroupHeartbeat) -> None:
    """Kafka's ``throwIfConsumerGroupMemberEpochIsInvalid``."""
    received = request.member_epoch
    if received == 0:
        return
    if received > member.member_epoch:
        raise GroupError(
            Errors.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a greater member epoch ({received}) than the one known by the "
            f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.")
    if received < member.member_epoch:
        owned = request.topic_partitions
        if (received != member.previous_member_epoch or owned is None
                or not _is_subset(owned, member.assigned_partitions)):
            raise GroupError(
                Errors.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a smaller member epoch ({received}) than the one known by "
                f"the group coordinator ({member.member_epoch}). The member must abandon all its partitions "
                f"and rejoin.")


def _is_subset(owned: Mapping[UUID, Sequence[int]], assigned: Mapping[UUID, Mapping[int, int]]) -> bool:
    return all(p in assigned.get(t, {}) for t, ps in owned.items() for p in ps)

