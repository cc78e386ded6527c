"""The online migration between the protocols, as the heartbeat and the fencing see it.

:class:`GroupConversions` is what :class:`~.heartbeat.ConsumerGroupProtocol` calls to convert
a group; :class:`~.migration.ProtocolMigration` implements it (and uses the heartbeat, hence
this interface between them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.consumer.member import ConsumerGroupMember
from groupcoord.coordinator.group import ClassicGroup
from groupcoord.coordinator.records import CoordinatorRecord


class GroupConversions(Protocol):
    """The online migration a heartbeat or a fencing may trigger (:mod:`.migration`)."""

    def to_consumer_group(self, classic: ClassicGroup, records: list[CoordinatorRecord]) -> ConsumerGroup:
        """The consumer group ``classic`` becomes (not in memory yet), its records appended."""

    def upgraded(self, classic: ClassicGroup) -> None:
        """The heartbeat that converted ``classic`` succeeded: its records were replayed."""

    def maybe_downgrade(self, group: ConsumerGroup,
                        leaving: Sequence[ConsumerGroupMember]) -> list[CoordinatorRecord] | None:
        """The records converting ``group`` to a classic group if only classic members stay
        once ``leaving`` are fenced, already applied to memory; else None."""
