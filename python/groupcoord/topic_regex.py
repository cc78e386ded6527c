"""KIP-848's ``SubscribedTopicRegex``: a consumer subscribes to every topic, internal ones
included, whose whole name a regular expression matches.

Kafka's group coordinator compiles the expression with RE2J (``Pattern.compile``; one that does
not compile is answered INVALID_REGULAR_EXPRESSION, the ``ValueError``'s message here being
Kafka's) and keeps each topic for which ``pattern.matcher(topic).matches()``.
:class:`TopicRegex` is the Rust core's: RE2J's syntax read into the ``regex`` crate, which
matches in linear time like RE2J, anchored at both ends. Where the two engines differ (size
limits, Unicode versions): ``docs/compatibility.md``.
"""

from __future__ import annotations

from groupcoord._native import TopicRegex

__all__ = ["TopicRegex"]
