"""The classic group coordinator: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, offsets, admin.

Kafka's classic ``GroupCoordinator``, rule for rule and error code for error code (the error
matrix of kafka-internals.md §2.11). Single-threaded: every method runs on the event loop's
thread, so there are no locks. Answers come through callbacks; an answer that depends on a
write is given when the log reports the append complete.

Delayed operations: DelayedJoin / InitialDelayedJoin / DelayedSync and the session deadlines
(DelayedHeartbeat), all in one purgatory. Time is injected: every entry point first moves the
purgatory to ``time.monotonic_ms()`` (timers never follow the wall clock);
:meth:`GroupCoordinator.poll` does only that, and :meth:`GroupCoordinator.next_expiration_ms`
tells the event loop when to call it next.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from groupcoord import purgatory as purgatories
from groupcoord.config import Config
from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.delayed import delayed_operation, join_key, member_key, sync_key
from groupcoord.coordinator.group import ClassicGroup, ClassicGroupMember, GroupState
from groupcoord.coordinator.shard import GroupCoordinatorShard, tombstones_result
from groupcoord.coordinator.results import (
    DEAD_GROUP,
    EMPTY_GROUP,
    NO_LEADER,
    UNKNOWN_MEMBER_ID,
    CommitCallback,
    ErrorCallback,
    GroupOverview,
    GroupSummary,
    HeartbeatCallback,
    JoinCallback,
    JoinGroupResult,
    LeaveCallback,
    LeaveGroupResult,
    LeaveMemberResponse,
    MemberIdentity,
    MemberSummary,
    OffsetAndMetadata,
    PartitionOffset,
    SyncCallback,
    SyncGroupResult,
    TopicPartition,
)
from groupcoord.coordinator.write_path import (
    AppendOptions,
    CoordinatorResult,
    WritePath,
    log_append_error,
)
from groupcoord.errors import Errors
from groupcoord.log import PartitionReader, PartitionWriter

log = logging.getLogger(__name__)

T = TypeVar("T")

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
"""How long a new member's parked JoinGroup may wait (KAFKA-7610)."""

EXPIRATION_KEY = ("expire-group-metadata",)

Protocols = list[tuple[str, bytes]]


def _ignore(error: Errors) -> None:
    return None


def _first_of_each_name(protocols: Protocols) -> Protocols:
    """A protocol named twice counts once, at its first (most preferred) place."""
    seen: set[str] = set()
    unique = []
    for name, metadata in protocols:
        if name not in seen:
            seen.add(name)
            unique.append((name, metadata))
    return unique


@dataclass(frozen=True)
class _Join:
    """One JoinGroup, as the internal join steps need it."""

    member_id: str
    group_instance_id: str | None
    require_known_member_id: bool
    support_skipping_assignment: bool
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    callback: JoinCallback
    reason: str


class GroupCoordinator:
    """Kafka's classic group coordinator over an injected log, clock and purgatory."""

    def __init__(
        self,
        config: Config,
        log_writer: PartitionWriter,
        time: Time,
        *,
        purgatory: purgatories.PurgatoryImplementation = purgatories.DEFAULT,
    ) -> None:
        self.config = config
        self.time = time
        self.purgatory_implementation = purgatory
        self.manager = GroupCoordinatorShard(config, time)
        self.writes = WritePath(log_writer, time, self.manager)
        # One purgatory for session deadlines and rebalance operations alike: an operation
        # scheduled from another's callback must count its delay from the same clock.
        self.purgatory: purgatories.AnyPurgatory = purgatory.purgatory(
            "GroupCoordinator", start_ms=time.monotonic_ms()
        )
        self.is_active = False
        self.completed_rebalances = 0

    # --- lifecycle and time -----------------------------------------------------------------

    def startup(self, *, enable_metadata_expiration: bool = True) -> None:
        self.is_active = True
        if enable_metadata_expiration:
            self._schedule_group_metadata_expiration()

    def shutdown(self) -> None:
        self.is_active = False
        self.purgatory.shutdown()

    def poll(self) -> int:
        """Expire what is due at ``time.monotonic_ms()``; returns how many operations expired."""
        return int(self.purgatory.advance_clock(self.time.monotonic_ms()))

    def next_expiration_ms(self) -> int | None:
        """When :meth:`poll` next has something to do (on ``time.monotonic_ms()``), or None."""
        expiration: int | None = self.purgatory.next_expiration_ms()
        return expiration

    def partition_for(self, group_id: str) -> int:
        return self.manager.partition_for(group_id)

    def _write(self, group_id: str, result: CoordinatorResult[T], callback: Callable[[T], None]) -> None:
        """Write ``result`` to the group's partition (see :mod:`.write_path`)."""
        self.writes.schedule_write(self.manager.partition_for(group_id), result, callback)

    # --- front door -------------------------------------------------------------------------

    def _validate_group_status(self, group_id: str | None, *, allow_empty: bool = False) -> Errors | None:
        """INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS or
        NOT_COORDINATOR, in Kafka's order; None if the group is served here."""
        if group_id is None or (not allow_empty and group_id == ""):
            return Errors.INVALID_GROUP_ID
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        return self.manager.ownership_error(group_id)

    # --- JoinGroup --------------------------------------------------------------------------

    def handle_join_group(
        self,
        group_id: str,
        member_id: str,
        *,
        group_instance_id: str | None,
        require_known_member_id: bool,
        support_skipping_assignment: bool,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Protocols,
        callback: JoinCallback,
        reason: str | None = None,
    ) -> None:
        """``require_known_member_id``: JoinGroup v4+ (KIP-394); ``support_skipping_assignment``:
        v9+. ``callback`` may run now or when the rebalance completes."""
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            callback(JoinGroupResult(member_id, error))
            return
        config = self.config
        if not config.group_min_session_timeout_ms <= session_timeout_ms <= config.group_max_session_timeout_ms:
            callback(JoinGroupResult(member_id, Errors.INVALID_SESSION_TIMEOUT))
            return
        is_unknown_member = member_id == UNKNOWN_MEMBER_ID
        group = (
            self.manager.group_manager.get_or_create_group(group_id)
            if is_unknown_member
            else self.manager.get_group(group_id)
        )
        if group is None:
            callback(JoinGroupResult(member_id, Errors.UNKNOWN_MEMBER_ID))
            return
        protocols = _first_of_each_name(protocols)
        join = _Join(member_id, group_instance_id, require_known_member_id,
                     support_skipping_assignment, client_id, client_host, rebalance_timeout_ms,
                     session_timeout_ms, protocol_type, protocols, callback, reason or "not provided")
        if not self._accept_joining_member(group, member_id):
            group.remove(member_id)
            callback(JoinGroupResult(UNKNOWN_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED))
        elif group.is_in(GroupState.DEAD):
            # Removed meanwhile (deleted, expired, emigrated): the client looks the
            # coordinator up again.
            callback(JoinGroupResult(member_id, Errors.COORDINATOR_NOT_AVAILABLE))
        elif not group.supports_protocols(protocol_type, {name for name, _ in protocols}):
            callback(JoinGroupResult(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
        elif is_unknown_member:
            self._new_member_join(group, join)
        else:
            self._current_member_join(group, join)
        if group.is_in(GroupState.PREPARING_REBALANCE):
            self.purgatory.check_and_complete(join_key(group.group_id))

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        """group.max.size: an existing member is always accepted; new ones up to the limit. In
        PreparingRebalance the members awaiting join are counted, so that the last rejoining
        members of a group over the (lowered) limit are the ones turned away."""
        max_size = self.config.group_max_size
        if group.is_in(GroupState.EMPTY, GroupState.DEAD):
            return True
        if group.is_in(GroupState.PREPARING_REBALANCE):
            return (
                group.has(member_id) and group.get(member_id).is_awaiting_join
            ) or group.num_members_awaiting_join < max_size
        return group.has(member_id) or group.size < max_size

    def _new_member_join(self, group: ClassicGroup, join: _Join) -> None:
        new_member_id = group.generate_member_id(join.client_id, join.group_instance_id)
        if join.group_instance_id is not None:
            old_member_id = group.current_static_member_id(join.group_instance_id)
            if old_member_id is not None:
                log.info("Static member %s of group %s rejoins with an unknown member id; "
                         "replacing %s with %s", join.group_instance_id, group.group_id,
                         old_member_id, new_member_id)
                self._update_static_member_and_rebalance(group, old_member_id, new_member_id, join)
            else:
                self._add_member_and_rebalance(group, new_member_id, join)
        elif join.require_known_member_id:
            # KIP-394: hand out the id and make the member come back with it, so that a member
            # whose JoinGroup times out does not leave a defunct member behind.
            group.add_pending_member(new_member_id)
            self.purgatory.watch_deadline(
                member_key(group.group_id, new_member_id), join.session_timeout_ms,
                self._on_session_deadline,
            )
            join.callback(JoinGroupResult(new_member_id, Errors.MEMBER_ID_REQUIRED))
        else:
            self._add_member_and_rebalance(group, new_member_id, join)

    def _current_member_join(self, group: ClassicGroup, join: _Join) -> None:
        member_id, callback = join.member_id, join.callback
        if group.is_pending_member(member_id):
            if join.group_instance_id is not None:
                # A static member is never pending. Kafka throws IllegalStateException here,
                # which its request handling logs and answers as UNKNOWN_SERVER_ERROR.
                log.error("JoinGroup with group.instance.id %s for pending member %s of group %s: "
                          "a static member is never pending; answering UNKNOWN_SERVER_ERROR",
                          join.group_instance_id, member_id, group.group_id)
                callback(JoinGroupResult(member_id, Errors.UNKNOWN_SERVER_ERROR))
                return
            self._add_member_and_rebalance(group, member_id, join)
            return
        error = group.validate_member(member_id, join.group_instance_id)
        if error is not None:
            callback(JoinGroupResult(member_id, error))
            return
        member = group.get(member_id)
        if group.is_in(GroupState.PREPARING_REBALANCE):
            self._update_member_and_rebalance(
                group, member, join, f"member {member_id} joining during PreparingRebalance"
            )
        elif group.is_in(GroupState.COMPLETING_REBALANCE):
            if member.matches(join.protocols):
                # The member lost its JoinGroup response: give the current generation again.
                callback(self._generation_result(group, member_id, leader_gets_members=True))
            else:
                self._update_member_and_rebalance(
                    group, member, join, f"member {member_id} changed its metadata"
                )
        elif group.is_in(GroupState.STABLE):
            if group.is_leader(member_id) or not member.matches(join.protocols):
                # A leader's JoinGroup always rebalances: it is how the leader reacts to
                # changes (such as topic metadata) that do not change member metadata.
                self._update_member_and_rebalance(
                    group, member, join, f"member {member_id} rejoining a Stable group"
                )
            else:
                callback(self._generation_result(group, member_id))
        else:
            log.warning("Member %s rejoins group %s in unexpected state %s",
                        member_id, group.group_id, group.state.value)
            callback(JoinGroupResult(member_id, Errors.UNKNOWN_MEMBER_ID))

    @staticmethod
    def _generation_result(
        group: ClassicGroup,
        member_id: str,
        *,
        error: Errors = Errors.NONE,
        leader_id: str | None = None,
        leader_gets_members: bool = False,
        skip_assignment: bool = False,
    ) -> JoinGroupResult:
        """A JoinGroup answer in the group's current generation. ``leader_id`` is the leader it
        names (the group's unless given); with ``leader_gets_members`` the leader's answer
        carries every member's metadata."""
        return JoinGroupResult(
            member_id=member_id,
            error=error,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader_id=leader_id if leader_id is not None else group.leader_id or NO_LEADER,
            skip_assignment=skip_assignment,
            members=(
                group.current_member_metadata()
                if leader_gets_members and group.is_leader(member_id)
                else []
            ),
        )

    def _add_member_and_rebalance(self, group: ClassicGroup, member_id: str, join: _Join) -> None:
        member = ClassicGroupMember(
            member_id, join.group_instance_id, join.client_id, join.client_host,
            join.rebalance_timeout_ms, join.session_timeout_ms, join.protocol_type,
            join.protocols, is_new=True,
        )
        if group.is_in(GroupState.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member, join.callback)
        # A new member cannot heartbeat while its JoinGroup is parked, and a client that
        # times out and retries would leave defunct members behind: bound the wait.
        self._schedule_session_deadline(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(
            group, f"adding new member {member_id} with group instance id "
                   f"{join.group_instance_id}; client reason: {join.reason}",
        )

    def _update_member_and_rebalance(
        self, group: ClassicGroup, member: ClassicGroupMember, join: _Join, reason: str
    ) -> None:
        group.update_member(member, join.protocols, join.rebalance_timeout_ms,
                            join.session_timeout_ms, join.callback)
        self._maybe_prepare_rebalance(group, f"{reason}; client reason: {join.reason}")

    def _update_static_member_and_rebalance(
        self, group: ClassicGroup, old_member_id: str, new_member_id: str, join: _Join
    ) -> None:
        group_instance_id = join.group_instance_id
        assert group_instance_id is not None
        current_leader = group.leader_id
        member = group.replace_static_member(group_instance_id, old_member_id, new_member_id)
        # The old id's deadline finds no member when it expires; the new id gets its own.
        self._schedule_session_deadline(group, member)
        old_protocols = member.supported_protocols
        old_rebalance_timeout_ms = member.rebalance_timeout_ms
        old_session_timeout_ms = member.session_timeout_ms
        group.update_member(member, join.protocols, join.rebalance_timeout_ms,
                            join.session_timeout_ms, join.callback)

        if group.is_in(GroupState.STABLE):
            if group.protocol_name == group.select_protocol():
                # The selected protocol does not change: persist the new member id and answer
                # with the current generation, no rebalance.
                assignment = {m.member_id: m.assignment for m in group.members.values()}
                generation = group.generation_id

                def stored(error: Errors) -> None:
                    if group.is_in(GroupState.DEAD):
                        group.maybe_invoke_join_callback(
                            member, JoinGroupResult(new_member_id, Errors.NOT_COORDINATOR)
                        )
                        return
                    if not (
                        group.is_in(GroupState.STABLE)
                        and group.generation_id == generation
                        and group.current_static_member_id(group_instance_id) == new_member_id
                    ):
                        # A rebalance began while the write was in flight: its completion
                        # answers the member, under the new member id.
                        return
                    if error != Errors.NONE:
                        log.warning("Failed to persist group %s after replacing static member "
                                    "%s: %s; reverting", group.group_id, group_instance_id, error.name)
                        group.maybe_invoke_join_callback(member, self._generation_result(
                            group, UNKNOWN_MEMBER_ID, error=error, leader_id=current_leader or NO_LEADER,
                        ))
                        group.update_member(member, old_protocols, old_rebalance_timeout_ms,
                                            old_session_timeout_ms, None)
                        old = group.replace_static_member(group_instance_id, new_member_id, old_member_id)
                        self._schedule_session_deadline(group, old)
                    elif join.support_skipping_assignment:
                        # JoinGroup v9+: the static leader learns it leads but skips running
                        # the assignor, whose output a Stable group would ignore.
                        group.maybe_invoke_join_callback(member, self._generation_result(
                            group, new_member_id, leader_gets_members=True,
                            skip_assignment=group.is_leader(new_member_id),
                        ))
                    else:
                        # Before v9: answer with the old leader id, so the rejoining static
                        # leader does not think it leads and run a useless assignment.
                        group.maybe_invoke_join_callback(member, self._generation_result(
                            group, new_member_id, leader_id=current_leader or NO_LEADER,
                        ))

                self._write(group.group_id, self.manager.group_manager.store_group(group, assignment), stored)
            else:
                self._maybe_prepare_rebalance(
                    group, f"static member {new_member_id} of instance {group_instance_id} "
                           f"changed the selected protocol; client reason: {join.reason}",
                )
        elif group.is_in(GroupState.COMPLETING_REBALANCE):
            # The old member id may already be in the leader's assignment: start over.
            self._prepare_rebalance(
                group, f"updating static member {new_member_id} of instance "
                       f"{group_instance_id}; client reason: {join.reason}",
            )
        elif group.is_in(GroupState.EMPTY, GroupState.DEAD):
            raise RuntimeError(
                f"group {group.group_id} in state {group.state.value} when static member "
                f"{group_instance_id} rejoined"
            )

    # --- rebalance --------------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        delay = self.config.group_initial_rebalance_delay_ms
        if group.is_in(GroupState.EMPTY):
            operation = self._initial_delayed_join(
                group, delay, max(group.rebalance_timeout_ms - delay, 0)
            )
        else:
            operation = self._delayed_join(group, group.rebalance_timeout_ms)
        group.transition_to(GroupState.PREPARING_REBALANCE)
        log.info("Preparing to rebalance group %s with old generation %d (%s-%d) (reason: %s)",
                 group.group_id, group.generation_id, "__consumer_offsets",
                 self.partition_for(group.group_id), reason)
        self.purgatory.try_complete_else_watch(operation, [join_key(group.group_id)])

    def _delayed_join(self, group: ClassicGroup, timeout_ms: int) -> Any:
        """Kafka's DelayedJoin: completes once every known member rejoined, or on timeout."""

        def try_complete(force_complete: Callable[[], bool]) -> bool:
            return group.has_all_members_joined() and force_complete()

        return delayed_operation(
            self.purgatory_implementation, timeout_ms,
            try_complete=try_complete, on_complete=lambda: self._on_complete_join(group),
        )

    def _initial_delayed_join(self, group: ClassicGroup, delay_ms: int, remaining_ms: int) -> Any:
        """Kafka's InitialDelayedJoin: the first rebalance of an empty group waits
        group.initial.rebalance.delay.ms, again each time a member joins meanwhile, up to
        the rebalance timeout. It completes only by expiring."""
        configured = self.config.group_initial_rebalance_delay_ms

        def on_complete() -> None:
            if group.new_member_added and remaining_ms != 0:
                group.new_member_added = False
                self.purgatory.try_complete_else_watch(
                    self._initial_delayed_join(
                        group, min(configured, remaining_ms), max(remaining_ms - delay_ms, 0)
                    ),
                    [join_key(group.group_id)],
                )
            else:
                self._on_complete_join(group)

        return delayed_operation(self.purgatory_implementation, delay_ms, on_complete=on_complete)

    def _on_complete_join(self, group: ClassicGroup) -> None:
        for member in group.not_yet_rejoined_members():
            if not member.is_static_member:
                log.info("Group %s removes dynamic member %s, which did not rejoin",
                         group.group_id, member.member_id)
                group.remove(member.member_id)
                self.purgatory.complete_deadline(member_key(group.group_id, member.member_id))
        if group.is_in(GroupState.DEAD):
            log.info("Group %s is dead, skipping rebalance stage", group.group_id)
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Nobody rejoined: wait another rebalance timeout for sessions to expire the
            # members that are gone.
            log.error("Group %s could not complete rebalance because no members rejoined",
                      group.group_id)
            self.purgatory.try_complete_else_watch(
                self._delayed_join(group, group.rebalance_timeout_ms), [join_key(group.group_id)]
            )
            return
        group.init_next_generation()
        if group.is_in(GroupState.EMPTY):
            log.info("Group %s with generation %d is now empty", group.group_id, group.generation_id)

            def stored(error: Errors) -> None:
                if error != Errors.NONE:
                    # Safe to ignore: the previous generation written to the log has no
                    # active members either once they time out.
                    log.warning("Failed to write empty metadata for group %s: %s",
                                group.group_id, error.name)

            self._write(group.group_id, self.manager.group_manager.store_group(group, {}), stored)
            return
        log.info("Stabilized group %s generation %d with %d members",
                 group.group_id, group.generation_id, group.size)
        for member in group.all_members():
            group.maybe_invoke_join_callback(
                member, self._generation_result(group, member.member_id, leader_gets_members=True)
            )
            self._schedule_session_deadline(group, member)
            member.is_new = False
            group.add_pending_sync_member(member.member_id)
        self._schedule_pending_sync(group)

    def _schedule_pending_sync(self, group: ClassicGroup) -> None:
        generation = group.generation_id

        def try_complete(force_complete: Callable[[], bool]) -> bool:
            if generation != group.generation_id or group.is_in(
                GroupState.DEAD, GroupState.EMPTY, GroupState.PREPARING_REBALANCE
            ):
                return force_complete()
            return group.has_received_sync_from_all_members() and force_complete()

        def on_expiration() -> None:
            if generation != group.generation_id or not group.is_in(
                GroupState.COMPLETING_REBALANCE, GroupState.STABLE
            ):
                log.error("Unexpected sync expiration for group %s generation %d",
                          group.group_id, generation)
                return
            if group.has_received_sync_from_all_members():
                return
            missing = sorted(group.pending_sync_members)
            for member_id in missing:
                group.remove(member_id)
                self.purgatory.complete_deadline(member_key(group.group_id, member_id))
            self._prepare_rebalance(
                group, f"removing {missing} on pending sync request expiration"
            )

        operation = delayed_operation(
            self.purgatory_implementation, group.rebalance_timeout_ms,
            try_complete=try_complete, on_expiration=on_expiration,
        )
        self.purgatory.try_complete_else_watch(operation, [sync_key(group.group_id)])

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        self.purgatory.check_and_complete(sync_key(group.group_id))

    def _remove_sync_expiration(self, group: ClassicGroup) -> None:
        group.pending_sync_members.clear()
        self.purgatory.check_and_complete(sync_key(group.group_id))

    def _remove_member_and_update_group(
        self, group: ClassicGroup, member: ClassicGroupMember, reason: str
    ) -> None:
        # A new member may time out while its JoinGroup is parked: answer it first, with
        # UNKNOWN_MEMBER_ID, so that a live client joins again.
        group.maybe_invoke_join_callback(member, JoinGroupResult(UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.is_in(GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, reason)
        elif group.is_in(GroupState.PREPARING_REBALANCE):
            self.purgatory.check_and_complete(join_key(group.group_id))

    def _remove_pending_member_and_update_group(self, group: ClassicGroup, member_id: str) -> None:
        group.remove(member_id)
        if group.is_in(GroupState.PREPARING_REBALANCE):
            self.purgatory.check_and_complete(join_key(group.group_id))

    # --- sessions ---------------------------------------------------------------------------

    def _schedule_session_deadline(
        self, group: ClassicGroup, member: ClassicGroupMember, timeout_ms: int | None = None
    ) -> None:
        """Kafka's completeAndScheduleNextHeartbeatExpiration: the member is alive now; it
        must show it again within its session timeout (or ``timeout_ms``)."""
        self.purgatory.watch_deadline(
            member_key(group.group_id, member.member_id),
            member.session_timeout_ms if timeout_ms is None else timeout_ms,
            self._on_session_deadline,
        )

    def _on_session_deadline(self, key: Any) -> None:
        _, group_id, member_id = key
        group = self.manager.get_group(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            return
        if group.is_pending_member(member_id):
            log.info("Pending member %s of group %s removed after its session timeout",
                     member_id, group_id)
            self._remove_pending_member_and_update_group(group, member_id)
        elif group.has(member_id):
            member = group.get(member_id)
            if not member.has_satisfied_heartbeat():
                log.info("Member %s of group %s has failed, removing it", member_id, group_id)
                self._remove_member_and_update_group(
                    group, member, f"removing member {member_id} on heartbeat expiration"
                )

    # --- SyncGroup --------------------------------------------------------------------------

    def handle_sync_group(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        *,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
        assignment: Mapping[str, bytes],
        callback: SyncCallback,
    ) -> None:
        self.poll()
        error = self._validate_group_status(group_id)
        if error == Errors.COORDINATOR_LOAD_IN_PROGRESS:
            # The rebalance's state was lost with the load: have the member rejoin, without
            # a coordinator lookup (older clients don't expect COORDINATOR_LOAD_IN_PROGRESS).
            callback(SyncGroupResult(Errors.REBALANCE_IN_PROGRESS))
            return
        if error is not None:
            callback(SyncGroupResult(error))
            return
        group = self.manager.get_group(group_id)
        if group is None:
            callback(SyncGroupResult(Errors.UNKNOWN_MEMBER_ID))
            return
        error = self._validate_sync_group(
            group, generation, member_id, protocol_type, protocol_name, group_instance_id
        )
        if error is not None:
            callback(SyncGroupResult(error))
        elif group.is_in(GroupState.EMPTY):
            callback(SyncGroupResult(Errors.UNKNOWN_MEMBER_ID))
        elif group.is_in(GroupState.PREPARING_REBALANCE):
            callback(SyncGroupResult(Errors.REBALANCE_IN_PROGRESS))
        elif group.is_in(GroupState.COMPLETING_REBALANCE):
            group.get(member_id).awaiting_sync_callback = callback
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                self._store_leader_assignment(group, member_id, generation, assignment)
        elif group.is_in(GroupState.STABLE):
            self._remove_pending_sync_member(group, member_id)
            member = group.get(member_id)
            callback(SyncGroupResult(Errors.NONE, group.protocol_type, group.protocol_name, member.assignment))
            self._schedule_session_deadline(group, member)

    def _validate_sync_group(
        self,
        group: ClassicGroup,
        generation: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
    ) -> Errors | None:
        if group.is_in(GroupState.DEAD):
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = group.validate_member(member_id, group_instance_id)
        if error is not None:
            return error
        if generation != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        if protocol_type is not None and protocol_type != group.protocol_type:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and protocol_name != group.protocol_name:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _store_leader_assignment(
        self, group: ClassicGroup, leader_id: str, generation: int, assignment: Mapping[str, bytes]
    ) -> None:
        log.info("Assignment received from leader %s for group %s generation %d",
                 leader_id, group.group_id, group.generation_id)
        full = {m: assignment.get(m, b"") for m in group.members}
        missing = [m for m in group.members if m not in assignment]
        if missing:
            log.warning("Setting empty assignments for members %s of group %s generation %d",
                        missing, group.group_id, group.generation_id)

        def stored(error: Errors) -> None:
            # Members may have joined or left while the append was in flight.
            if not (group.is_in(GroupState.COMPLETING_REBALANCE) and generation == group.generation_id):
                return
            if error != Errors.NONE:
                self._reset_and_propagate_assignment_error(group, error)
                self._maybe_prepare_rebalance(
                    group, f"error {error.name} storing the assignment of member {leader_id}"
                )
            else:
                for member in group.members.values():
                    member.assignment = full[member.member_id]
                self._propagate_assignment(group, Errors.NONE)
                group.transition_to(GroupState.STABLE)
                self.completed_rebalances += 1

        self._write(group.group_id, self.manager.group_manager.store_group(group, full), stored)

    def _reset_and_propagate_assignment_error(self, group: ClassicGroup, error: Errors) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: ClassicGroup, error: Errors) -> None:
        ok = error == Errors.NONE
        for member in group.all_members():
            result = SyncGroupResult(
                error,
                group.protocol_type if ok else None,
                group.protocol_name if ok else None,
                member.assignment,
            )
            if group.maybe_invoke_sync_callback(member, result):
                # A session that ran out while the member waited for its assignment was
                # ignored; restart it now.
                self._schedule_session_deadline(group, member)

    # --- Heartbeat --------------------------------------------------------------------------

    def handle_heartbeat(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        callback: HeartbeatCallback,
    ) -> None:
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            # While loading, answer blindly: the group is coming back.
            callback(Errors.NONE if error == Errors.COORDINATOR_LOAD_IN_PROGRESS else error)
            return
        group = self.manager.get_group(group_id)
        if group is None:
            callback(Errors.UNKNOWN_MEMBER_ID)
            return
        if group.is_in(GroupState.DEAD):
            callback(Errors.COORDINATOR_NOT_AVAILABLE)
            return
        error = group.validate_member(member_id, group_instance_id)
        if error is None and generation_id != group.generation_id:
            error = Errors.ILLEGAL_GENERATION
        if error is not None:
            callback(error)
        elif group.is_in(GroupState.EMPTY):
            callback(Errors.UNKNOWN_MEMBER_ID)
        else:
            self._schedule_session_deadline(group, group.get(member_id))
            callback(
                Errors.REBALANCE_IN_PROGRESS
                if group.is_in(GroupState.PREPARING_REBALANCE)
                else Errors.NONE
            )

    # --- LeaveGroup -------------------------------------------------------------------------

    def handle_leave_group(
        self, group_id: str, leaving_members: Sequence[MemberIdentity], callback: LeaveCallback
    ) -> None:
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            callback(LeaveGroupResult(error))
            return
        group = self.manager.get_group(group_id)
        if group is None:
            callback(LeaveGroupResult(Errors.NONE, [
                LeaveMemberResponse(m.member_id, m.group_instance_id, Errors.UNKNOWN_MEMBER_ID)
                for m in leaving_members
            ]))
            return
        if group.is_in(GroupState.DEAD):
            callback(LeaveGroupResult(Errors.COORDINATOR_NOT_AVAILABLE))
            return
        responses = [
            LeaveMemberResponse(m.member_id, m.group_instance_id, self._leave(group, m))
            for m in leaving_members
        ]
        callback(LeaveGroupResult(Errors.NONE, responses))

    def _leave(self, group: ClassicGroup, leaving: MemberIdentity) -> Errors:
        reason = leaving.reason or "not provided"
        if leaving.member_id == UNKNOWN_MEMBER_ID:
            # Admin removal of a static member by its group instance id.
            current = (
                group.current_static_member_id(leaving.group_instance_id)
                if leaving.group_instance_id is not None
                else None
            )
            if current is None:
                return Errors.UNKNOWN_MEMBER_ID
            self._remove_current_member(group, current, reason)
            return Errors.NONE
        if group.is_pending_member(leaving.member_id):
            self._remove_pending_member_and_update_group(group, leaving.member_id)
            self.purgatory.complete_deadline(member_key(group.group_id, leaving.member_id))
            log.info("Pending member %s left group %s", leaving.member_id, group.group_id)
            return Errors.NONE
        error = group.validate_member(leaving.member_id, leaving.group_instance_id)
        if error is not None:
            return error
        self._remove_current_member(group, leaving.member_id, reason)
        return Errors.NONE

    def _remove_current_member(self, group: ClassicGroup, member_id: str, reason: str) -> None:
        member = group.get(member_id)
        self._remove_member_and_update_group(
            group, member, f"removing member {member_id} on LeaveGroup; client reason: {reason}"
        )
        self.purgatory.complete_deadline(member_key(group.group_id, member_id))
        log.info("Member %s left group %s; client reason: %s", member_id, group.group_id, reason)

    # --- offsets ----------------------------------------------------------------------------

    def handle_commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
        *,
        unknown_group_error: Errors = Errors.ILLEGAL_GENERATION,
    ) -> None:
        """``unknown_group_error``: what a commit with a generation gets for a group that does
        not exist (OffsetCommit v9+ answers GROUP_ID_NOT_FOUND)."""
        self.poll()
        error = self._validate_group_status(group_id, allow_empty=True)
        if error is not None:
            callback({tp: error for tp in offsets})
            return
        group = self.manager.get_group(group_id)
        if group is None:
            if generation_id >= 0:
                callback({tp: unknown_group_error for tp in offsets})
                return
            # The group does not use Kafka's group management: a simple group.
            log.info("Creating simple consumer group %s via manual offset commit", group_id)
            group = self.manager.group_manager.get_or_create_group(group_id)
        error = group.validate_offset_commit(member_id, group_instance_id, generation_id, transactional=False)
        if error is not None:
            callback({tp: error for tp in offsets})
        elif group.is_in(GroupState.EMPTY):
            self._write(group_id, self.manager.offsets.commit_offsets(group_id, offsets), callback)
        elif group.is_in(GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            # The previous generation may still commit during PreparingRebalance; a commit
            # also shows the member is alive (KAFKA-3470).
            self._schedule_session_deadline(group, group.get(member_id))
            self._write(group_id, self.manager.offsets.commit_offsets(group_id, offsets), callback)
        elif group.is_in(GroupState.COMPLETING_REBALANCE):
            callback({tp: Errors.REBALANCE_IN_PROGRESS for tp in offsets})

    def handle_txn_commit_offsets(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        """TxnOffsetCommit: the offsets stay pending until the producer's transaction marker
        (:meth:`complete_transaction`) commits or aborts them."""
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            callback({tp: error for tp in offsets})
            return
        group = self.manager.group_manager.get_or_create_group(group_id)
        error = group.validate_offset_commit(member_id, group_instance_id, generation_id, transactional=True)
        if error is not None:
            callback({tp: error for tp in offsets})
            return
        options = AppendOptions(producer_id, producer_epoch, base_sequence=0)
        self._write(group_id, self.manager.offsets.commit_offsets(group_id, offsets, options), callback)

    def complete_transaction(
        self, producer_id: int, producer_epoch: int, partitions: Iterable[int], commit: bool,
        callback: ErrorCallback,
    ) -> None:
        """Write the transaction marker of ``producer_id`` to each of ``partitions`` (what
        Kafka's transaction coordinator does with WriteTxnMarkers); the pending offsets are
        materialized (COMMIT) or dropped (ABORT) as each marker is written."""
        targets = sorted(set(partitions))
        outstanding = len(targets)
        errors: list[Errors] = []

        def written(error: Errors) -> None:
            nonlocal outstanding
            if error is not Errors.NONE:
                errors.append(error)
            outstanding -= 1
            if outstanding == 0:
                callback(errors[0] if errors else Errors.NONE)

        if not targets:
            callback(Errors.NONE)
            return
        marker = CoordinatorResult(
            (), Errors.NONE, error_response=log_append_error,
            append_options=AppendOptions(producer_id, producer_epoch,
                                         control="commit" if commit else "abort"),
        )
        for partition in targets:
            # Once written, the marker ends the producer's transaction in that partition: its
            # offsets are materialized (COMMIT) or dropped (ABORT).
            self.writes.schedule_write(partition, marker, written)

    def handle_fetch_offsets(
        self,
        group_id: str,
        require_stable: bool,
        partitions: Sequence[TopicPartition] | None = None,
    ) -> tuple[Errors, dict[TopicPartition, PartitionOffset]]:
        """Offsets regardless of the group's state: the group may only store offsets here."""
        self.poll()
        error = self._validate_group_status(group_id, allow_empty=True)
        if error is not None:
            return error, {}
        return Errors.NONE, self.manager.get_offsets(group_id, require_stable, partitions)

    # --- admin ------------------------------------------------------------------------------

    def handle_list_groups(
        self, states: Iterable[str] = (), group_types: Iterable[str] = ()
    ) -> tuple[Errors, list[GroupOverview]]:
        """Groups of the owned partitions, filtered by state and type (case-insensitive); every
        classic group is of type "classic". COORDINATOR_LOAD_IN_PROGRESS comes with the groups
        of the partitions already loaded."""
        self.poll()
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE, []
        error = Errors.COORDINATOR_LOAD_IN_PROGRESS if self.manager.is_loading else Errors.NONE
        wanted_states = {s.lower() for s in states}
        wanted_types = {t.lower() for t in group_types}
        if wanted_types and "classic" not in wanted_types:
            return error, []
        return error, [
            GroupOverview(g.group_id, g.protocol_type or "", g.state.value)
            for g in self.manager.current_groups()
            if (not wanted_states or g.state.value.lower() in wanted_states)
            and self.manager.is_group_local(g.group_id)  # not the half-replayed groups of a load
        ]

    def handle_describe_group(self, group_id: str) -> tuple[Errors, GroupSummary]:
        self.poll()
        error = self._validate_group_status(group_id, allow_empty=True)
        if error is not None:
            return error, EMPTY_GROUP
        group = self.manager.get_group(group_id)
        if group is None:
            return Errors.NONE, DEAD_GROUP
        return Errors.NONE, self._summary(group)

    @staticmethod
    def _summary(group: ClassicGroup) -> GroupSummary:
        """Kafka 4's describe: a Stable group's protocol and its members' metadata and
        assignments; in other states no protocol or metadata, but each member's assignment
        from the last generation (``describeNoMetadata``; Kafka 3 left it out too), which
        admin tools show as the partitions a member owns while it rebalances."""
        if group.is_in(GroupState.STABLE) and group.protocol_name is not None:
            protocol = group.protocol_name
            members = [
                MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                              m.metadata(protocol), m.assignment)
                for m in group.members.values()
            ]
            return GroupSummary(group.state.value, group.protocol_type or "", protocol, members)
        members = [
            MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host, b"",
                          m.assignment)
            for m in group.members.values()
        ]
        return GroupSummary(group.state.value, group.protocol_type or "", "", members)

    def handle_delete_groups(
        self, group_ids: Iterable[str], callback: Callable[[dict[str, Errors]], None]
    ) -> None:
        """Delete empty groups: their offsets and metadata are tombstoned; each group's answer
        waits for its tombstones to be written."""
        self.poll()
        results: dict[str, Errors] = {}
        eligible: list[ClassicGroup] = []
        for group_id in dict.fromkeys(group_ids):
            error = self._validate_group_status(group_id, allow_empty=True)
            group = self.manager.get_group(group_id) if error is None else None
            if error is not None:
                results[group_id] = error
            elif group is None or group.is_in(GroupState.DEAD):
                results[group_id] = (
                    Errors.GROUP_ID_NOT_FOUND if self.manager.group_not_exists(group_id)
                    else Errors.NOT_COORDINATOR
                )
            elif group.is_in(GroupState.EMPTY):
                group.transition_to(GroupState.DEAD)
                eligible.append(group)
            else:
                results[group_id] = Errors.NON_EMPTY_GROUP
        if not eligible:
            callback(results)
            return
        outstanding = len(eligible)

        def deleted(group_id: str, error: Errors) -> None:
            nonlocal outstanding
            results[group_id] = error
            outstanding -= 1
            if outstanding == 0:
                callback(results)

        for group in eligible:
            offsets = list(self.manager.offsets.offsets(group.group_id))
            records = self.manager.offsets.tombstones(group.group_id, offsets)
            self.manager.group_manager.delete_group(group, records)
            self._write(group.group_id, tombstones_result(group.group_id, records),
                        partial(deleted, group.group_id))
            log.info("Deleting group %s (%d offsets)", group.group_id, len(offsets))

    def handle_delete_offsets(
        self,
        group_id: str,
        partitions: Sequence[TopicPartition],
        callback: Callable[[Errors, dict[TopicPartition, Errors]], None],
    ) -> None:
        """OffsetDelete: partitions of topics a non-empty consumer group is subscribed to get
        GROUP_SUBSCRIBED_TO_TOPIC; the others' offsets are tombstoned."""
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            callback(error, {})
            return
        group = self.manager.get_group(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            callback(
                Errors.GROUP_ID_NOT_FOUND if self.manager.group_not_exists(group_id)
                else Errors.NOT_COORDINATOR,
                {},
            )
            return
        partition_errors: dict[TopicPartition, Errors] = {}
        if group.is_in(GroupState.EMPTY):
            eligible = list(partitions)
        elif group.is_consumer_group:
            eligible = []
            for tp in partitions:
                if group.is_subscribed_to_topic(tp.topic):
                    partition_errors[tp] = Errors.GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    eligible.append(tp)
        else:
            callback(Errors.NON_EMPTY_GROUP, {})
            return
        if not eligible:
            callback(Errors.NONE, partition_errors)
            return
        stored = [tp for tp in eligible if self.manager.offsets.offset(group_id, tp) is not None]

        def deleted(error: Errors) -> None:
            if error != Errors.NONE:
                callback(error, {})
                return
            partition_errors.update({tp: Errors.NONE for tp in eligible})
            callback(Errors.NONE, partition_errors)

        # As Kafka's: an Empty group left without offsets is removed (Dead, its metadata
        # tombstoned) at once, not at the next expiration check.
        self._write(group_id, self.manager.cleanup_group(group, stored), deleted)

    def handle_deleted_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        """Topics were deleted: forget every group's offsets of their partitions."""
        self.poll()
        gone = set(partitions)
        self._cleanup_group_metadata(
            self.manager.current_groups(),
            lambda g: [tp for tp in self.manager.offsets.offsets(g.group_id) if tp in gone],
        )

    # --- offset expiration ------------------------------------------------------------------

    def _schedule_group_metadata_expiration(self) -> None:
        self.purgatory.watch_deadline(
            EXPIRATION_KEY, self.config.offsets_retention_check_interval_ms,
            self._on_group_metadata_expiration,
        )

    def _on_group_metadata_expiration(self, key: Any) -> None:
        if not self.is_active:
            return
        try:
            self.cleanup_group_metadata()
        except Exception:
            # As Kafka's scheduler runs a periodic task: a failure is logged, the next run
            # still comes.
            log.exception("Expiring offsets and empty groups failed")
        finally:
            self._schedule_group_metadata_expiration()

    def cleanup_group_metadata(self) -> int:
        """Expire offsets by offsets.retention.minutes (KIP-211) and remove empty groups left
        without offsets; returns how many offsets expired."""
        now = self.time.milliseconds()
        retention_ms = self.config.offsets_retention_ms
        removed = self._cleanup_group_metadata(
            self.manager.current_groups(),
            lambda g: self.manager.offsets.expired_offsets(g, now, retention_ms),
        )
        self.manager.offsets.offsets_expired += removed
        if removed:
            log.info("Removed %d expired offsets", removed)
        return removed

    def _cleanup_group_metadata(
        self,
        groups: Iterable[ClassicGroup],
        selector: Callable[[ClassicGroup], list[TopicPartition]],
    ) -> int:
        return sum(
            self._cleanup_group(group, selector(group))
            for group in groups
            if self.manager.is_group_local(group.group_id)
        )

    def _cleanup_group(self, group: ClassicGroup, removed_offsets: list[TopicPartition]) -> int:
        """Write the cleanup of ``group`` (see :meth:`GroupCoordinatorShard.cleanup_group`);
        returns how many offsets it removes."""
        self._write(group.group_id, self.manager.cleanup_group(group, removed_offsets), _ignore)
        return len(removed_offsets)

    # --- partition immigration and emigration -----------------------------------------------

    def load_partition(self, partition: int, reader: PartitionReader) -> None:
        """Become the owner of ``partition``: replay its log, then serve its groups
        (synchronous; the server loads in the background with :meth:`begin_loading`,
        :meth:`replay_records` and :meth:`complete_loading`)."""
        if not self.begin_loading(partition):
            return
        for chunk in reader.read(partition):
            self.replay_records(chunk)
        self.complete_loading(partition)

    def begin_loading(self, partition: int) -> bool:
        log.info("Loading __consumer_offsets-%d", partition)
        return self.manager.begin_loading(partition)

    def replay_records(self, records: Iterable[Any]) -> None:
        for record in records:
            self.manager.replay_log_record(record)

    def complete_loading(self, partition: int) -> None:
        self.poll()
        for group in self.manager.complete_loading(partition):
            self._on_group_loaded(group)

    def _on_group_loaded(self, group: ClassicGroup) -> None:
        log.info("Loaded group %s with generation %d", group.group_id, group.generation_id)
        if group.size > self.config.group_max_size:
            self._prepare_rebalance(
                group, f"freshly-loaded group is over capacity ({self.config.group_max_size}): "
                       "rebalancing to let consumers commit offsets",
            )
        for member in group.all_members():
            self._schedule_session_deadline(group, member)

    def unload_partition(self, partition: int) -> None:
        """Stop owning ``partition``: its groups become Dead and leave memory; members
        waiting for JoinGroup or SyncGroup get NOT_COORDINATOR."""
        self.poll()
        groups, offsets = self.manager.remove_groups_for_partition(partition, self._on_group_unloaded)
        log.info("Unloaded __consumer_offsets-%d: %d groups, %d offsets", partition, groups, offsets)

    def _on_group_unloaded(self, group: ClassicGroup) -> None:
        group.transition_to(GroupState.DEAD)
        for member in group.all_members():
            # Parked JoinGroups (a rebalance, or a static member's replacement being written)
            # and SyncGroups alike.
            group.maybe_invoke_join_callback(member, JoinGroupResult(member.member_id, Errors.NOT_COORDINATOR))
            group.maybe_invoke_sync_callback(member, SyncGroupResult(Errors.NOT_COORDINATOR))
            self.purgatory.complete_deadline(member_key(group.group_id, member.member_id))
        for member_id in list(group.pending_members):
            self.purgatory.complete_deadline(member_key(group.group_id, member_id))
        self.purgatory.cancel_for_key(join_key(group.group_id))
        self.purgatory.cancel_for_key(sync_key(group.group_id))


__all__ = ["NEW_MEMBER_JOIN_TIMEOUT_MS", "GroupCoordinator"]
