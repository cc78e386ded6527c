"""What the cleaner compares and holds back, by kind of log.

``__consumer_offsets`` is cleaned by the coordinator's replay rules
(:mod:`groupcoord.format.replay_rules`): keys compared as *logical* keys (an offset commit key
of record type 0 is the type-1 key of the same group, topic and partition), and every batch
with a producer id, idempotent or transactional, holds its offset commits pending until its
producer's marker (Kafka 4's coordinator does). Data topics are cleaned by Kafka's own rules:
raw key bytes, and only transactional batches wait for a marker, every record of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from groupcoord.format.replay_rules import (
    is_pending,
    is_pending_record,
    logical_key_bytes,
)
from groupcoord.storage.partition import TOPIC, PartitionLog

__all__ = ["CleanerRules", "DATA_TOPIC_RULES", "OFFSETS_TOPIC_RULES", "rules_of"]


@dataclass(frozen=True)
class CleanerRules:
    key: Callable[[bytes], bytes]
    """The bytes two records' keys are compared by."""
    pending: Callable[[int, bool], bool]
    """Whether a batch (producer id, transactional) waits for its producer's marker."""
    pending_record: Callable[[bytes | None, bytes | None], bool]
    """Whether a record (key, value) of such a batch waits with it."""


OFFSETS_TOPIC_RULES = CleanerRules(
    key=logical_key_bytes,
    pending=lambda producer_id, transactional: is_pending(producer_id),
    pending_record=is_pending_record,
)

DATA_TOPIC_RULES = CleanerRules(
    key=lambda key: key,
    pending=lambda producer_id, transactional: transactional,
    pending_record=lambda key, value: True,
)


def rules_of(log: PartitionLog) -> CleanerRules:
    return OFFSETS_TOPIC_RULES if log.topic == TOPIC else DATA_TOPIC_RULES
