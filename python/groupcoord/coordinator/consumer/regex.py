"""Subscriptions by regular expression (``SubscribedTopicRegex``), as Kafka 4.3 resolves them.

Kafka's ``GroupMetadataManager.maybeUpdateRegularExpressions`` and
``handleRegularExpressionsResult``. A heartbeat that changes a member's regular expression only
records the change (and tombstones a regular expression no member uses any more); resolving
it against the topics is a separate step, run a moment later, as Kafka runs it on a background
executor: each regular expression still subscribed gets a record (type 16) of the topics it
matches in full, and the group epoch is bumped if any of them changed, which the next heartbeat
turns into a new target assignment. Resolutions run again when topics change, and at most every
10 seconds per group.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

from groupcoord.coordinator.consumer import records as rec
from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.group import ConsumerGroup, ResolvedRegularExpression
from groupcoord.coordinator.consumer.member import ConsumerGroupMember
from groupcoord.coordinator.records import CoordinatorRecord
from groupcoord.errors import Errors
from groupcoord.topic_regex import TopicRegex

REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000
"""A group's regular expressions are resolved at most this often."""


class RegexUpdate(enum.Enum):
    """What a heartbeat did to the group's regular expressions (Kafka's
    ``UpdateRegularExpressionStatus``)."""

    NO_CHANGE = 0
    UPDATED = 1
    """The member's regular expression changed; its resolution will bump the group epoch."""
    UPDATED_AND_RESOLVED = 2
    """The member's regular expression changed to one already resolved (or to none): the
    group epoch is bumped now."""


def compile_regex(regex: str) -> TopicRegex:
    try:
        return TopicRegex(regex)
    except ValueError as invalid:
        raise GroupError(
            Errors.INVALID_REGULAR_EXPRESSION,
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {invalid}.",
        ) from None


def update_regex(group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember,
                 records: list[CoordinatorRecord]) -> tuple[RegexUpdate, bool]:
    """The heartbeat's change to ``member``'s regular expression: its status, and whether a
    new regular expression needs resolving (checked valid here: INVALID_REGULAR_EXPRESSION)."""
    old, new = member.subscribed_topic_regex, updated.subscribed_topic_regex
    if old == new:
        return RegexUpdate.NO_CHANGE, False
    status = RegexUpdate.UPDATED
    needs_resolving = False
    if old and group.subscribed_regexes.get(old, 0) == 1:
        records.append(rec.regular_expression_tombstone(group.group_id, old))
    if new:
        if group.subscribed_regexes.get(new, 0) == 0:
            compile_regex(new)
            needs_resolving = True
        elif new in group.resolved_regexes:
            status = RegexUpdate.UPDATED_AND_RESOLVED
    elif old:
        status = RegexUpdate.UPDATED_AND_RESOLVED
    return status, needs_resolving


def regexes_to_refresh(group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember,
                       needs_resolving: bool, now_ms: int, topics_version: int, refresh_interval_ms: int
                       ) -> list[str] | None:
    """The regular expressions to resolve now, or None (Kafka's refresh conditions: the
    group has some, the last resolution is over 10 s old, and one is unresolved, topics
    changed since, or the refresh interval passed)."""
    if not needs_resolving and not group.subscribed_regexes:
        return None
    last_refresh = min((r.timestamp for r in group.resolved_regexes.values()), default=None)
    if last_refresh is not None and now_ms <= last_refresh + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS:
        return None
    subscribed = {regex: count for regex, count in group.subscribed_regexes.items() if count > 0}
    if member.subscribed_topic_regex:
        subscribed[member.subscribed_topic_regex] = subscribed.get(member.subscribed_topic_regex, 0) - 1
    if updated.subscribed_topic_regex:
        subscribed[updated.subscribed_topic_regex] = subscribed.get(updated.subscribed_topic_regex, 0) + 1
    regexes = sorted(r for r, count in subscribed.items() if count > 0)
    last_version = min((r.version for r in group.resolved_regexes.values()), default=-1)
    refresh = (needs_resolving or len(regexes) != len(group.resolved_regexes)
               or last_version < topics_version
               or last_refresh is None or now_ms > last_refresh + refresh_interval_ms)
    return regexes if refresh and regexes else None


def resolve(group: ConsumerGroup, regexes: Sequence[str], topic_names: Iterable[str], version: int,
            now_ms: int) -> tuple[list[CoordinatorRecord], dict[str, ResolvedRegularExpression]]:
    """A record of each regular expression the group still subscribes to, with the topics it
    matches, and the resolutions that changed."""
    names = list(topic_names)
    records: list[CoordinatorRecord] = []
    changed: dict[str, ResolvedRegularExpression] = {}
    for regex in regexes:
        if group.subscribed_regexes.get(regex, 0) == 0:
            continue
        try:
            matched = frozenset(TopicRegex(regex).matching(names))
        except ValueError:
            matched = frozenset()
        resolved = ResolvedRegularExpression(matched, version, now_ms)
        previous = group.resolved_regexes.get(regex)
        if previous is None or previous.topics != matched:
            changed[regex] = resolved
        records.append(rec.regular_expression_record(group.group_id, regex, matched, version, now_ms))
    return records, changed
