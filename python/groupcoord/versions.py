"""Kafka's version ranges, as its JSON schemas of messages and records write them
(``"3+"``, ``"2-4"``, ``"1"``, ``"none"``): the vocabulary the wire messages'
declarations (:mod:`groupcoord.protocol.schema`) and the log records'
(:mod:`groupcoord.format.records`) share. It depends on nothing.
"""

from __future__ import annotations

__all__ = ["MAX_VERSION", "NO_VERSIONS", "VersionRange", "in_range", "parse_versions"]

VersionRange = tuple[int, int]
"""Inclusive (lowest, highest); empty when lowest > highest."""

NO_VERSIONS: VersionRange = (0, -1)
MAX_VERSION = 0x7FFF


def parse_versions(spec: str) -> VersionRange:
    """Kafka's version range syntax: ``"3+"``, ``"2-4"``, ``"1"`` or ``"none"``."""
    spec = spec.strip()
    if spec == "none":
        return NO_VERSIONS
    if spec.endswith("+"):
        return int(spec[:-1]), MAX_VERSION
    low, _, high = spec.partition("-")
    return (int(low), int(high)) if high else (int(low), int(low))


def in_range(version: int, versions: VersionRange) -> bool:
    return versions[0] <= version <= versions[1]
