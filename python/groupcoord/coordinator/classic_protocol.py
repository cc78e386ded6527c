"""The classic rebalance protocol: JoinGroup, SyncGroup, Heartbeat and LeaveGroup.

Kafka's classic group handling (``GroupMetadataManager.classicGroupJoin``,
``classicGroupSync``, ``classicGroupHeartbeat``, ``classicGroupLeave`` and the timers they
schedule), rule for rule and error code for error code. :class:`ClassicGroupProtocol` is called
by :class:`~groupcoord.coordinator.group_coordinator.GroupCoordinator` once the front door (is
the group served here?) has let a request through; answers come through the request's callback,
parked in the member until the rebalance gets there.

A JoinGroup and its SyncGroup, through the modules:

1. ``GroupCoordinator.handle_join_group`` (front door) -> :meth:`ClassicGroupProtocol.join_group`:
   the member is added (a new member first gets MEMBER_ID_REQUIRED) and the group prepares a
   rebalance: a DelayedJoin (an InitialDelayedJoin for an empty group) is watched in the
   purgatory (:mod:`.delayed`), and the JoinGroup callback is parked in the member.
2. Once every member rejoined (or the rebalance timed out), ``_on_complete_join`` starts the
   next generation (:class:`~groupcoord.coordinator.group.ClassicGroup`), answers every parked
   JoinGroup, and watches a DelayedSync; each member's session deadline is restarted.
3. ``GroupCoordinator.handle_sync_group`` -> :meth:`ClassicGroupProtocol.sync_group`: the
   callback is parked; the leader's SyncGroup carries the assignment, which
   ``_store_leader_assignment`` writes as a GroupMetadata record
   (:meth:`GroupMetadataManager.store_group` builds the result, :mod:`.write_path` appends it).
   Once the append completes, its callback stores the assignment in the members, answers every
   parked SyncGroup and makes the group Stable; if it failed, the members get the error and the
   group rebalances again.

Delayed operations: DelayedJoin / InitialDelayedJoin / DelayedSync and the session deadlines
(DelayedHeartbeat), all in the coordinator's one purgatory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groupcoord import purgatory as purgatories
from groupcoord.config import Config
from groupcoord.coordinator.delayed import delayed_operation, join_key, member_key, sync_key
from groupcoord.coordinator.group import ClassicGroup, ClassicGroupMember, GroupState
from groupcoord.coordinator.results import (
    NO_LEADER,
    UNKNOWN_MEMBER_ID,
    HeartbeatCallback,
    JoinCallback,
    JoinGroupResult,
    LeaveCallback,
    LeaveGroupResult,
    LeaveMemberResponse,
    MemberIdentity,
    SyncCallback,
    SyncGroupResult,
)
from groupcoord.coordinator.shard import GroupCoordinatorShard
from groupcoord.coordinator.write_path import CoordinatorResult, WritePath
from groupcoord.errors import Errors

log = logging.getLogger(__name__)

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
"""How long a new member's parked JoinGroup may wait (KAFKA-7610)."""

Protocols = list[tuple[str, bytes]]


def first_of_each_name(protocols: Protocols) -> Protocols:
    """A protocol named twice counts once, at its first (most preferred) place."""
    seen: set[str] = set()
    unique = []
    for name, metadata in protocols:
        if name not in seen:
            seen.add(name)
            unique.append((name, metadata))
    return unique


@dataclass(frozen=True)
class JoinRequest:
    """One JoinGroup, as the join steps need it (its protocols named once each)."""

    member_id: str
    group_instance_id: str | None
    require_known_member_id: bool
    """JoinGroup v4+ (KIP-394)."""
    support_skipping_assignment: bool
    """JoinGroup v9+."""
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    callback: JoinCallback
    reason: str


class ClassicGroupProtocol:
    """The members, rebalances and sessions of the classic groups of the owned partitions."""

    def __init__(
        self,
        config: Config,
        shard: GroupCoordinatorShard,
        writes: WritePath,
        purgatory_implementation: purgatories.PurgatoryImplementation,
        purgatory: purgatories.AnyPurgatory,
    ) -> None:
        self._config = config
        self._shard = shard
        self._groups = shard.group_manager
        self._writes = writes
        self._purgatory_implementation = purgatory_implementation
        self._purgatory = purgatory
        self.completed_rebalances = 0

    def _write(
        self, group: ClassicGroup, result: CoordinatorResult[Errors], callback: Callable[[Errors], None]
    ) -> None:
        """Write ``result`` (the group's metadata) to the group's partition; ``callback`` then
        gets NONE or the error its members should see."""
        self._writes.schedule_write(self._shard.partition_for(group.group_id), result, callback)

    # --- JoinGroup --------------------------------------------------------------------------

    def join_group(self, group_id: str, join: JoinRequest) -> None:
        """JoinGroup for a group served here; ``join.callback`` may run now or when the
        rebalance completes."""
        member_id, callback = join.member_id, join.callback
        if not self.is_session_timeout_valid(join.session_timeout_ms):
            callback(JoinGroupResult(member_id, Errors.INVALID_SESSION_TIMEOUT))
            return
        is_unknown_member = member_id == UNKNOWN_MEMBER_ID
        group = (
            self._groups.get_or_create_group(group_id)
            if is_unknown_member
            else self._groups.get_group(group_id)
        )
        if group is None:
            callback(JoinGroupResult(member_id, Errors.UNKNOWN_MEMBER_ID))
            return
        if not self._accept_joining_member(group, member_id):
            group.remove(member_id)
            callback(JoinGroupResult(UNKNOWN_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED))
        elif group.is_in(GroupState.DEAD):
            # Removed meanwhile (deleted, expired, emigrated): the client looks the
            # coordinator up again.
            callback(JoinGroupResult(member_id, Errors.COORDINATOR_NOT_AVAILABLE))
        elif not group.supports_protocols(join.protocol_type, {name for name, _ in join.protocols}):
            callback(JoinGroupResult(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
        elif is_unknown_member:
            self._new_member_join(group, join)
        else:
            self._current_member_join(group, join)
        if group.is_in(GroupState.PREPARING_REBALANCE):
            self._purgatory.check_and_complete(join_key(group.group_id))

    def is_session_timeout_valid(self, session_timeout_ms: int) -> bool:
        """Within group.min.session.timeout.ms and group.max.session.timeout.ms (Kafka checks
        it before the join reaches the group)."""
        config = self._config
        return config.group_min_session_timeout_ms <= session_timeout_ms <= config.group_max_session_timeout_ms

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        """group.max.size: an existing member is always accepted; new ones up to the limit. In
        PreparingRebalance the members awaiting join are counted, so that the last rejoining
        members of a group over the (lowered) limit are the ones turned away."""
        max_size = self._config.group_max_size
        if group.is_in(GroupState.EMPTY, GroupState.DEAD):
            return True
        if group.is_in(GroupState.PREPARING_REBALANCE):
            return (
                group.has(member_id) and group.get(member_id).is_awaiting_join
            ) or group.num_members_awaiting_join < max_size
        return group.has(member_id) or group.size < max_size

    def _new_member_join(self, group: ClassicGroup, join: JoinRequest) -> None:
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
            self._purgatory.watch_deadline(
                member_key(group.group_id, new_member_id), join.session_timeout_ms,
                self.on_session_deadline,
            )
            join.callback(JoinGroupResult(new_member_id, Errors.MEMBER_ID_REQUIRED))
        else:
            self._add_member_and_rebalance(group, new_member_id, join)

    def _current_member_join(self, group: ClassicGroup, join: JoinRequest) -> None:
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

    def _add_member_and_rebalance(self, group: ClassicGroup, member_id: str, join: JoinRequest) -> None:
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
        self.schedule_session_deadline(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(
            group, f"adding new member {member_id} with group instance id "
                   f"{join.group_instance_id}; client reason: {join.reason}",
        )

    def _update_member_and_rebalance(
        self, group: ClassicGroup, member: ClassicGroupMember, join: JoinRequest, reason: str
    ) -> None:
        group.update_member(member, join.protocols, join.rebalance_timeout_ms,
                            join.session_timeout_ms, join.callback)
        self._maybe_prepare_rebalance(group, f"{reason}; client reason: {join.reason}")

    def _update_static_member_and_rebalance(
        self, group: ClassicGroup, old_member_id: str, new_member_id: str, join: JoinRequest
    ) -> None:
        group_instance_id = join.group_instance_id
        assert group_instance_id is not None
        current_leader = group.leader_id
        member = group.replace_static_member(group_instance_id, old_member_id, new_member_id)
        # The old id's deadline finds no member when it expires; the new id gets its own.
        self.schedule_session_deadline(group, member)
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
                        self.schedule_session_deadline(group, old)
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

                self._write(group, self._groups.store_group(group, assignment), stored)
            else:
                self._maybe_prepare_rebalance(
                    group, f"static member {new_member_id} of instance {group_instance_id} "
                           f"changed the selected protocol; client reason: {join.reason}",
                )
        elif group.is_in(GroupState.COMPLETING_REBALANCE):
            # The old member id may already be in the leader's assignment: start over.
            self.prepare_rebalance(
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
            self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        delay = self._config.group_initial_rebalance_delay_ms
        if group.is_in(GroupState.EMPTY):
            operation = self._initial_delayed_join(
                group, delay, max(group.rebalance_timeout_ms - delay, 0)
            )
        else:
            operation = self._delayed_join(group, group.rebalance_timeout_ms)
        group.transition_to(GroupState.PREPARING_REBALANCE)
        log.info("Preparing to rebalance group %s with old generation %d (%s-%d) (reason: %s)",
                 group.group_id, group.generation_id, "__consumer_offsets",
                 self._shard.partition_for(group.group_id), reason)
        self._purgatory.try_complete_else_watch(operation, [join_key(group.group_id)])

    def _delayed_join(self, group: ClassicGroup, timeout_ms: int) -> Any:
        """Kafka's DelayedJoin: completes once every known member rejoined, or on timeout."""

        def try_complete(force_complete: Callable[[], bool]) -> bool:
            return group.has_all_members_joined() and force_complete()

        return delayed_operation(
            self._purgatory_implementation, timeout_ms,
            try_complete=try_complete, on_complete=lambda: self._on_complete_join(group),
        )

    def _initial_delayed_join(self, group: ClassicGroup, delay_ms: int, remaining_ms: int) -> Any:
        """Kafka's InitialDelayedJoin: the first rebalance of an empty group waits
        group.initial.rebalance.delay.ms, again each time a member joins meanwhile, up to
        the rebalance timeout. It completes only by expiring."""
        configured = self._config.group_initial_rebalance_delay_ms

        def on_complete() -> None:
            if group.new_member_added and remaining_ms != 0:
                group.new_member_added = False
                self._purgatory.try_complete_else_watch(
                    self._initial_delayed_join(
                        group, min(configured, remaining_ms), max(remaining_ms - delay_ms, 0)
                    ),
                    [join_key(group.group_id)],
                )
            else:
                self._on_complete_join(group)

        return delayed_operation(self._purgatory_implementation, delay_ms, on_complete=on_complete)

    def _on_complete_join(self, group: ClassicGroup) -> None:
        for member in group.not_yet_rejoined_members():
            if not member.is_static_member:
                log.info("Group %s removes dynamic member %s, which did not rejoin",
                         group.group_id, member.member_id)
                group.remove(member.member_id)
                self._purgatory.complete_deadline(member_key(group.group_id, member.member_id))
        if group.is_in(GroupState.DEAD):
            log.info("Group %s is dead, skipping rebalance stage", group.group_id)
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Nobody rejoined: wait another rebalance timeout for sessions to expire the
            # members that are gone.
            log.error("Group %s could not complete rebalance because no members rejoined",
                      group.group_id)
            self._purgatory.try_complete_else_watch(
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

            self._write(group, self._groups.store_group(group, {}), stored)
            return
        log.info("Stabilized group %s generation %d with %d members",
                 group.group_id, group.generation_id, group.size)
        for member in group.all_members():
            group.maybe_invoke_join_callback(
                member, self._generation_result(group, member.member_id, leader_gets_members=True)
            )
            self.schedule_session_deadline(group, member)
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
                self._purgatory.complete_deadline(member_key(group.group_id, member_id))
            self.prepare_rebalance(
                group, f"removing {missing} on pending sync request expiration"
            )

        operation = delayed_operation(
            self._purgatory_implementation, group.rebalance_timeout_ms,
            try_complete=try_complete, on_expiration=on_expiration,
        )
        self._purgatory.try_complete_else_watch(operation, [sync_key(group.group_id)])

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        self._purgatory.check_and_complete(sync_key(group.group_id))

    def _remove_sync_expiration(self, group: ClassicGroup) -> None:
        group.pending_sync_members.clear()
        self._purgatory.check_and_complete(sync_key(group.group_id))

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
            self._purgatory.check_and_complete(join_key(group.group_id))

    def _remove_pending_member_and_update_group(self, group: ClassicGroup, member_id: str) -> None:
        group.remove(member_id)
        if group.is_in(GroupState.PREPARING_REBALANCE):
            self._purgatory.check_and_complete(join_key(group.group_id))

    # --- sessions ---------------------------------------------------------------------------

    def schedule_session_deadline(
        self, group: ClassicGroup, member: ClassicGroupMember, timeout_ms: int | None = None
    ) -> None:
        """Kafka's completeAndScheduleNextHeartbeatExpiration: the member is alive now; it
        must show it again within its session timeout (or ``timeout_ms``)."""
        self._purgatory.watch_deadline(
            member_key(group.group_id, member.member_id),
            member.session_timeout_ms if timeout_ms is None else timeout_ms,
            self.on_session_deadline,
        )

    def on_session_deadline(self, key: Any) -> None:
        _, group_id, member_id = key
        group = self._groups.get_group(group_id)
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

    def sync_group(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
        assignment: Mapping[str, bytes],
        callback: SyncCallback,
    ) -> None:
        """SyncGroup for a group served here; ``callback`` may run now or once the leader's
        assignment is written."""
        group = self._groups.get_group(group_id)
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
            self.schedule_session_deadline(group, member)

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

        self._write(group, self._groups.store_group(group, full), stored)

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
                self.schedule_session_deadline(group, member)

    # --- Heartbeat --------------------------------------------------------------------------

    def heartbeat(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        callback: HeartbeatCallback,
    ) -> None:
        group = self._groups.get_group(group_id)
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
            self.schedule_session_deadline(group, group.get(member_id))
            callback(
                Errors.REBALANCE_IN_PROGRESS
                if group.is_in(GroupState.PREPARING_REBALANCE)
                else Errors.NONE
            )

    # --- LeaveGroup -------------------------------------------------------------------------

    def leave_group(
        self, group_id: str, leaving_members: Sequence[MemberIdentity], callback: LeaveCallback
    ) -> None:
        group = self._groups.get_group(group_id)
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
            self._purgatory.complete_deadline(member_key(group.group_id, leaving.member_id))
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
        self._purgatory.complete_deadline(member_key(group.group_id, member_id))
        log.info("Member %s left group %s; client reason: %s", member_id, group.group_id, reason)
