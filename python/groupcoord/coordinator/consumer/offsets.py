"""Who may commit and fetch a consumer group's offsets (KIP-848 and KIP-1251).

Kafka 4.3's ``ConsumerGroup.validateOffsetCommit`` and ``validateOffsetFetch``: a member commits
with its member epoch, and an older epoch is accepted for a partition the member was given at
that epoch or before (so a member finishing its work on a partition it is revoking can still
commit it). A refusal fails the whole request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from uuid import UUID

from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.results import TopicPartition
from groupcoord.errors import Errors


def validate_offset_commit(
    group: ConsumerGroup,
    member_id: str,
    instance_id: str | None,
    member_epoch: int,
    partitions: Iterable[TopicPartition],
    *,
    transactional: bool,
    api_version: int,
    topic_id: Callable[[str], UUID | None],
) -> None:
    """Raise :class:`GroupError` if the commit is refused."""
    if member_epoch < 0 and not group.members:
        return  # an admin, or a consumer assigning partitions itself
    if transactional and member_epoch == -1 and member_id == "" and instance_id is None:
        return
    member = group.member(member_id)
    if member is None:
        raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
    classic = member.uses_classic_protocol
    if not transactional and not classic and api_version < 9:
        raise GroupError(Errors.UNSUPPORTED_VERSION,
                         "OffsetCommit version 9 or above must be used by members using the consumer "
                         "group protocol")
    if member_epoch == member.member_epoch:
        return
    stale = Errors.ILLEGAL_GENERATION if classic or transactional else Errors.STALE_MEMBER_EPOCH
    received = "generation id" if classic else "member epoch"
    if member_epoch > member.member_epoch:
        raise GroupError(stale, f"Received {received} {member_epoch} is newer than current member epoch "
                                f"{member.member_epoch}.")
    for tp in partitions:
        tid = topic_id(tp.topic)
        epochs = (member.assigned_partitions.get(tid) if tid is not None else None) or {}
        assignment_epoch = epochs.get(tp.partition)
        if assignment_epoch is None and tid is not None:
            assignment_epoch = member.partitions_pending_revocation.get(tid, {}).get(tp.partition)
        if assignment_epoch is None:
            raise GroupError(stale, f"Partition {tp.topic}-{tp.partition} is not assigned or pending "
                                    "revocation for member.")
        if member_epoch < assignment_epoch:
            raise GroupError(stale, f"Received {received} {member_epoch} is older than assignment epoch "
                                    f"{assignment_epoch} for partition {tp.topic}-{tp.partition}.")


def validate_offset_fetch(group: ConsumerGroup, member_id: str | None, member_epoch: int) -> None:
    """Raise :class:`GroupError` if a member's OffsetFetch (v9+) is refused."""
    if member_id is None and member_epoch < 0:
        return
    member = group.member(member_id or "")
    if member is None:
        raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
    if member_epoch != member.member_epoch:
        stale = Errors.ILLEGAL_GENERATION if member.uses_classic_protocol else Errors.STALE_MEMBER_EPOCH
        raise GroupError(stale, f"The received member epoch {member_epoch} does not match the expected member "
                                f"epoch {member.member_epoch}.")
