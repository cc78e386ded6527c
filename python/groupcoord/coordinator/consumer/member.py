"""A member of a consumer group (KIP-848), as Kafka's ``ConsumerGroupMember``.

A member is a value: every change makes a new one (:meth:`ConsumerGroupMember.replace`), so
that a handler can compare the member before and after a request and write a record only for
what changed. Its fields are those of the records that persist it: the member metadata
(record type 5) and its current assignment (type 8).

Assignments map a topic id to its partitions, each with the epoch at which the member was
given it (KIP-1251's assignment epochs; an offset commit is checked against them).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from uuid import UUID

Assignment = Mapping[UUID, Mapping[int, int]]
"""Topic id -> partition -> the assignment epoch the member got the partition at."""

EMPTY_ASSIGNMENT: Assignment = MappingProxyType({})

TargetPartitions = Mapping[UUID, frozenset[int]]
"""A target assignment: topic id -> partitions (no epochs: a target is not yet owned)."""


class MemberState(enum.IntEnum):
    """Where a member is in its reconciliation (Kafka's ``MemberState``)."""

    STABLE = 0
    """At its target epoch with nothing left to revoke or to receive."""
    UNREVOKED_PARTITIONS = 1
    """Must revoke partitions before it can move to the target epoch."""
    UNRELEASED_PARTITIONS = 2
    """At the target epoch, waiting for partitions other members still own."""
    UNKNOWN = 127
    """A state byte this coordinator does not know, read from a record."""

    @classmethod
    def from_value(cls, value: int) -> MemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """What a classic-protocol member inside a consumer group (online migration) adds."""

    session_timeout_ms: int
    supported_protocols: tuple[tuple[str, bytes], ...]
    """(name, metadata) per protocol, in the order of the member's JoinGroup."""


@dataclass(frozen=True, slots=True)
class ConsumerGroupMember:
    """One member, with Kafka's ``ConsumerGroupMember.Builder`` defaults."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str = ""
    """The regular expression subscribed to, ``""`` for none."""
    server_assignor: str | None = None
    assigned_partitions: Assignment = dataclasses.field(default_factory=lambda: EMPTY_ASSIGNMENT)
    partitions_pending_revocation: Assignment = dataclasses.field(default_factory=lambda: EMPTY_ASSIGNMENT)
    classic_member_metadata: ClassicMemberMetadata | None = None

    def replace(self, **changes: object) -> ConsumerGroupMember:
        """This member with ``changes`` (field names as keywords)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def update_member_epoch(self, epoch: int, **changes: object) -> ConsumerGroupMember:
        """Move to ``epoch``: the current epoch becomes the previous one (Kafka's
        ``Builder.updateMemberEpoch``)."""
        return self.replace(member_epoch=epoch, previous_member_epoch=self.member_epoch, **changes)

    @property
    def is_static(self) -> bool:
        return self.instance_id is not None

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic_member_metadata is not None

    def is_reconciled_to(self, target_epoch: int) -> bool:
        """Stable at ``target_epoch``: nothing left to revoke or receive."""
        return self.state is MemberState.STABLE and self.member_epoch == target_epoch

    def subscription_metadata(self) -> tuple[object, ...]:
        """The fields record type 5 persists: a change to any of them is written."""
        return (self.instance_id, self.rack_id, self.client_id, self.client_host,
                self.subscribed_topic_names, self.subscribed_topic_regex,
                self.rebalance_timeout_ms, self.server_assignor, self.classic_member_metadata)

    def assignment_metadata(self) -> tuple[object, ...]:
        """The fields record type 8 persists."""
        return (self.member_epoch, self.previous_member_epoch, self.state,
                self.assigned_partitions, self.partitions_pending_revocation)


def freeze_assignment(assignment: Mapping[UUID, Mapping[int, int]]) -> Assignment:
    """A read-only copy without empty topics."""
    return MappingProxyType({
        topic: MappingProxyType(dict(partitions))
        for topic, partitions in assignment.items() if partitions
    })


def with_epoch(partitions: Mapping[UUID, frozenset[int] | set[int]], epoch: int) -> Assignment:
    """``partitions``, each given at ``epoch``."""
    return freeze_assignment({t: dict.fromkeys(ps, epoch) for t, ps in partitions.items()})


def partition_count(assignment: Mapping[UUID, Mapping[int, int]]) -> int:
    return sum(len(ps) for ps in assignment.values())
