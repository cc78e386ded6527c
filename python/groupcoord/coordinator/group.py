"""A classic consumer group: its members, its state machine, its protocol.

Kafka's ``GroupMetadata``/``MemberMetadata`` (``ClassicGroup``/``ClassicGroupMember`` in the
Java coordinator). Pure in-memory state with its invariants; what the coordinator does with it
(rebalances, timers, writes) lives in :mod:`groupcoord.coordinator.classic_protocol`.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.results import (
    UNKNOWN_MEMBER_ID,
    JoinCallback,
    JoinGroupResponseMember,
    JoinGroupResult,
    SyncCallback,
    SyncGroupResult,
)
from groupcoord.errors import Errors
from groupcoord.format import codec

log = logging.getLogger(__name__)

CONSUMER_PROTOCOL_TYPE = "consumer"
MEMBER_ID_DELIMITER = "-"
MAX_MEMBER_ID_BYTES = 32_767
"""A member id travels as a protocol STRING: at most this many UTF-8 bytes."""


class GroupState(Enum):
    """The states of a classic group, with how each request is answered in it.

    The ``transition`` lines say what moves a group out of a state;
    :data:`VALID_PREVIOUS_STATES` is the table :meth:`ClassicGroup.transition_to` enforces.
    """

    EMPTY = "Empty"
    """No members; lingers until its offsets expire. Also the state of groups that only
    store offsets.

    action: JoinGroup from a new member is accepted; SyncGroup, Heartbeat, LeaveGroup and
            OffsetCommit with a member id get UNKNOWN_MEMBER_ID; OffsetCommit with
            generation -1 and OffsetFetch are served.
    transition: a member joins => PreparingRebalance; last offsets expire, DeleteGroups or
            partition emigration => Dead.
    """

    PREPARING_REBALANCE = "PreparingRebalance"
    """Members are (re)joining; JoinGroups are parked until all known members rejoin or
    the rebalance timeout passes.

    action: JoinGroup parked; SyncGroup REBALANCE_IN_PROGRESS; Heartbeat
            REBALANCE_IN_PROGRESS; OffsetCommit from the previous generation accepted.
    transition: every member rejoined or the rebalance timed out => CompletingRebalance
            (Empty if nobody is left); emigration => Dead.
    """

    COMPLETING_REBALANCE = "CompletingRebalance"
    """A new generation exists; waiting for the leader's assignment (Kafka's AwaitingSync).

    action: SyncGroup parked until the leader's assignment is persisted; Heartbeat NONE;
            OffsetCommit REBALANCE_IN_PROGRESS; JoinGroup with changed metadata rebalances.
    transition: leader's assignment persisted => Stable; a member joins, leaves or expires
            => PreparingRebalance; emigration => Dead.
    """

    STABLE = "Stable"
    """Every member has its assignment.

    action: Heartbeat NONE; SyncGroup answers the stored assignment; OffsetCommit accepted;
            JoinGroup from the leader or with changed metadata rebalances, an unchanged
            follower gets the current generation.
    transition: a member joins, leaves or expires => PreparingRebalance; emigration => Dead.
    """

    DEAD = "Dead"
    """Removed (deleted, expired or emigrated); requests get COORDINATOR_NOT_AVAILABLE so that
    clients look the coordinator up again."""


VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(
        {
            GroupState.STABLE,
            GroupState.PREPARING_REBALANCE,
            GroupState.COMPLETING_REBALANCE,
            GroupState.EMPTY,
            GroupState.DEAD,
        }
    ),
}


class IllegalGroupStateError(RuntimeError):
    """A transition the state table forbids, or an operation impossible in this state: a bug."""


def subscribed_topics(subscription: bytes) -> list[str]:
    """The topics of a consumer protocol subscription, read as its version 0 prefix whatever
    version it declares, as Kafka reads them (``ClassicGroup.computeSubscribedTopics``): every
    version starts with v0's fields, and a client that declares a version without sending its
    later fields (kafka-go declares v1 and leaves out the owned partitions) still parses."""
    return codec.decode_subscription(b"\x00\x00" + subscription[2:]).topics


@dataclass(eq=False)
class ClassicGroupMember:
    """One member: its protocols (in preference order) and timeouts, its assignment, and the
    JoinGroup / SyncGroup callbacks parked while it waits."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    supported_protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    awaiting_join_callback: JoinCallback | None = None
    awaiting_sync_callback: SyncCallback | None = None
    is_new: bool = False
    """Joined in the current rebalance: bounded by the new-member join timeout, not
    covered by "awaiting join counts as alive" (KAFKA-7610)."""

    @property
    def is_static_member(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join_callback is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync_callback is not None

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.supported_protocols:
            if name == protocol:
                return metadata
        raise ValueError(f"member {self.member_id} does not support protocol {protocol!r}")

    def has_satisfied_heartbeat(self) -> bool:
        """Whether an expiring session deadline leaves the member alive: a member waiting for
        its JoinGroup or SyncGroup answer is alive, unless it is new (KAFKA-7610)."""
        return not self.is_new and (self.is_awaiting_join or self.is_awaiting_sync)

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return protocols == self.supported_protocols

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.supported_protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")


def _answer(callback: Callable[[Any], None], result: Any, member: ClassicGroupMember, group_id: str) -> None:
    """Answer a parked request; a failing answer is logged, so that it cannot leave the
    group's transition (which answers its members one after the other) half done."""
    try:
        callback(result)
    except Exception:
        log.exception("Answering member %s of group %s failed", member.member_id, group_id)


@dataclass(eq=False)
class ClassicGroup:
    """A group's membership and state. Offsets live apart, in the OffsetMetadataManager."""

    group_id: str
    time: Time
    state: GroupState = GroupState.EMPTY
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    current_state_timestamp: int | None = None
    new_member_added: bool = False
    """Set when a member joins during the initial rebalance, so InitialDelayedJoin waits more."""
    members: dict[str, ClassicGroupMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    """group.instance.id -> member id."""
    pending_members: set[str] = field(default_factory=set)
    """Member ids handed out with MEMBER_ID_REQUIRED whose member has not rejoined yet (KIP-394)."""
    pending_sync_members: set[str] = field(default_factory=set)
    """Members of the new generation that have not sent SyncGroup yet."""
    subscribed_topics: frozenset[str] | None = None
    """For ``consumer`` groups, the union of the members' subscriptions; None if unknown."""
    num_members_awaiting_join: int = 0
    _protocol_votes: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if self.current_state_timestamp is None:
            self.current_state_timestamp = self.time.milliseconds()

    # --- queries ----------------------------------------------------------------------------

    def is_in(self, *states: GroupState) -> bool:
        return self.state in states

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> ClassicGroupMember:
        return self.members[member_id]

    @property
    def size(self) -> int:
        return len(self.members)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    @property
    def is_consumer_group(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS_STATES[GroupState.PREPARING_REBALANCE]

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_members_awaiting_join and not self.pending_members

    def not_yet_rejoined_members(self) -> list[ClassicGroupMember]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def current_static_member_id(self, group_instance_id: str) -> str | None:
        return self.static_members.get(group_instance_id)

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    @property
    def rebalance_timeout_ms(self) -> int:
        """The group's rebalance timeout: the largest of its members'."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """True if subscribed, or if the subscriptions are unknown (to be safe)."""
        return self.subscribed_topics is None or topic in self.subscribed_topics

    def all_members(self) -> Iterator[ClassicGroupMember]:
        return iter(list(self.members.values()))

    # --- validation -------------------------------------------------------------------------

    def validate_member(self, member_id: str, group_instance_id: str | None) -> Errors | None:
        """UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID unless ``member_id`` (of static instance
        ``group_instance_id``, if given) is a current member (Kafka's ``validateMember``)."""
        if group_instance_id is not None:
            current = self.current_static_member_id(group_instance_id)
            if current is None:
                return Errors.UNKNOWN_MEMBER_ID
            if current != member_id:
                log.info("Member %s of static instance %s in group %s is fenced by %s",
                         member_id, group_instance_id, self.group_id, current)
                return Errors.FENCED_INSTANCE_ID
            return None
        if not self.has(member_id):
            return Errors.UNKNOWN_MEMBER_ID
        return None

    def validate_offset_commit(
        self, member_id: str, group_instance_id: str | None, generation_id: int, *, transactional: bool
    ) -> Errors | None:
        """Whether this member may commit offsets to the group (Kafka's
        ``validateOffsetCommit``); None if it may."""
        if self.is_in(GroupState.DEAD):
            return Errors.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and self.is_in(GroupState.EMPTY):
            # An admin client or a consumer without group management: allowed on an
            # empty group, member id and instance id are not checked.
            return None
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
            error = self.validate_member(member_id, group_instance_id)
            if error is not None:
                return error
            if generation_id != self.generation_id:
                return Errors.ILLEGAL_GENERATION
            return None
        if not transactional and not self.is_in(GroupState.EMPTY):
            return Errors.UNKNOWN_MEMBER_ID
        return None

    # --- membership -------------------------------------------------------------------------

    def add(self, member: ClassicGroupMember, callback: JoinCallback | None = None) -> None:
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise IllegalGroupStateError(
                    f"static member with group.instance.id {member.group_instance_id} is "
                    f"already in group {self.group_id}"
                )
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._protocol_votes.update({name for name, _ in member.supported_protocols})
        member.awaiting_join_callback = callback
        if callback is not None:
            self.num_members_awaiting_join += 1
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._withdraw_votes(member)
            if member.is_awaiting_join:
                self.num_members_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def _withdraw_votes(self, member: ClassicGroupMember) -> None:
        """Take back ``member``'s protocol votes, forgetting names no member supports any more
        (a member rejoining with new names each time would otherwise grow the tally)."""
        votes = self._protocol_votes
        for name in {name for name, _ in member.supported_protocols}:
            votes[name] -= 1
            if votes[name] <= 0:
                del votes[name]

    def add_pending_member(self, member_id: str) -> None:
        if self.has(member_id):
            raise IllegalGroupStateError(
                f"cannot add pending member {member_id}: already a member of {self.group_id}"
            )
        self.pending_members.add(member_id)

    def add_pending_sync_member(self, member_id: str) -> None:
        if not self.has(member_id):
            raise IllegalGroupStateError(f"pending sync for {member_id}, not a member")
        self.pending_sync_members.add(member_id)

    def remove_pending_sync_member(self, member_id: str) -> None:
        self.pending_sync_members.discard(member_id)

    def update_member(
        self,
        member: ClassicGroupMember,
        protocols: list[tuple[str, bytes]],
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        callback: JoinCallback | None,
    ) -> None:
        self._withdraw_votes(member)
        member.supported_protocols = protocols
        self._protocol_votes.update({name for name, _ in protocols})
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if callback is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        elif callback is None and member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        member.awaiting_join_callback = callback

    def replace_static_member(
        self, group_instance_id: str, old_member_id: str, new_member_id: str
    ) -> ClassicGroupMember:
        """Give a static member a new member id, fencing whatever the old id was waiting for."""
        member = self.members.pop(old_member_id, None)
        if member is None:
            raise IllegalGroupStateError(f"cannot replace unknown member {old_member_id}")
        self.maybe_invoke_join_callback(
            member, JoinGroupResult(old_member_id, Errors.FENCED_INSTANCE_ID)
        )
        self.maybe_invoke_sync_callback(member, SyncGroupResult(Errors.FENCED_INSTANCE_ID))
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return member

    def maybe_elect_new_joined_leader(self) -> bool:
        """At join completion: keep a leader that rejoined, else pick any member that did.
        False if the group has no leader or nobody rejoined."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].is_awaiting_join:
            return True
        for member in self.members.values():
            if member.is_awaiting_join:
                log.info(
                    "Group %s: leader %s did not rejoin before the rebalance timeout; "
                    "%s is the new leader", self.group_id, self.leader_id, member.member_id,
                )
                self.leader_id = member.member_id
                return True
        return False

    def generate_member_id(self, client_id: str, group_instance_id: str | None) -> str:
        """Kafka's ``<client id or group instance id>-<UUID>``, the prefix cut short when the
        id would not fit a protocol STRING (a client id may itself be that long): every
        answer naming the member must stay encodable."""
        prefix = group_instance_id if group_instance_id is not None else client_id
        suffix = f"{MEMBER_ID_DELIMITER}{uuid.uuid4()}"
        room = MAX_MEMBER_ID_BYTES - len(suffix)
        encoded = prefix.encode()
        if len(encoded) > room:
            prefix = encoded[:room].decode(errors="ignore")
        return prefix + suffix

    # --- callbacks --------------------------------------------------------------------------

    def maybe_invoke_join_callback(self, member: ClassicGroupMember, result: JoinGroupResult) -> None:
        callback = member.awaiting_join_callback
        if callback is None:
            return
        member.awaiting_join_callback = None
        self.num_members_awaiting_join -= 1
        _answer(callback, result, member, self.group_id)

    def maybe_invoke_sync_callback(self, member: ClassicGroupMember, result: SyncGroupResult) -> bool:
        """Answer the member's parked SyncGroup, if any; True if there was one."""
        callback = member.awaiting_sync_callback
        if callback is None:
            return False
        member.awaiting_sync_callback = None
        _answer(callback, result, member, self.group_id)
        return True

    # --- protocol ---------------------------------------------------------------------------

    def supports_protocols(self, member_protocol_type: str, member_protocols: set[str]) -> bool:
        if self.state is GroupState.EMPTY:
            return bool(member_protocol_type) and bool(member_protocols)
        return self.protocol_type == member_protocol_type and any(
            self._protocol_votes[p] == len(self.members) for p in member_protocols
        )

    def select_protocol(self) -> str:
        """The protocol every member supports that most members prefer."""
        if not self.members:
            raise IllegalGroupStateError(f"cannot select a protocol for empty group {self.group_id}")
        candidates = {p for p, n in self._protocol_votes.items() if n == len(self.members)}
        votes = Counter(m.vote(candidates) for m in self.members.values())
        return max(votes.items(), key=lambda item: item[1])[0]

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        """The topics the members subscribe to, for a ``consumer`` group; None when unknown
        (another protocol type, or a subscription that does not parse)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return frozenset()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for member in self.members.values():
                topics.update(subscribed_topics(member.metadata(self.protocol_name)))
        except (codec.CorruptRecordError, ValueError) as e:
            log.warning("Group %s: cannot parse the consumer protocol subscriptions (%s); "
                        "treating the group as subscribed to every topic", self.group_id, e)
            return None
        return frozenset(topics)

    # --- state machine ----------------------------------------------------------------------

    def transition_to(self, target: GroupState) -> None:
        if self.state not in VALID_PREVIOUS_STATES[target]:
            expected = ", ".join(sorted(s.value for s in VALID_PREVIOUS_STATES[target]))
            raise IllegalGroupStateError(
                f"Group {self.group_id} should be in one of [{expected}] states before moving "
                f"to {target.value} state. Instead it is in {self.state.value} state."
            )
        self.state = target
        self.current_state_timestamp = self.time.milliseconds()

    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.EMPTY)
        self.pending_sync_members.clear()

    def current_member_metadata(self) -> list[JoinGroupResponseMember]:
        """The members as the leader's JoinGroup response lists them."""
        if self.state in (GroupState.DEAD, GroupState.PREPARING_REBALANCE) or self.protocol_name is None:
            raise IllegalGroupStateError(
                f"cannot list member metadata of group {self.group_id} in state {self.state.value}"
            )
        return [
            JoinGroupResponseMember(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
            for m in self.members.values()
        ]
