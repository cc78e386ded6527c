"""Members of consumer-protocol groups (KIP-848, ``group.protocol=consumer``) as processes: the
Java client's ``member`` mode and ``member_process.py`` (confluent-kafka) print the same JSON
lines (``GroupMember.java`` describes them), which :class:`MemberProcess` follows; and the
checks on what they report.

A partition is named ``topic:partition`` throughout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from client_support import ClientProcess
from java_client import java_client
from server_process import wait_for

CONSUMER_PROTOCOL_SETTINGS = {
    # Kafka's defaults are a 45 s session (and a 45 s minimum) and a 5 s heartbeat, which a
    # member also waits for before it learns of a new target assignment.
    "group.consumer.min.session.timeout.ms": "3000",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.heartbeat.interval.ms": "500",
}
"""What the consumer-protocol tests lower, in Kafka's names (the servers take the same names)."""
MEMBER_CLIENTS = ("java", "confluent-kafka")
MEMBER_PROCESS = Path(__file__).with_name("member_process.py")
SETTLE_S = 60.0
"""The bound on every wait for a group to settle."""


def names(topic: str, partitions: int) -> set[str]:
    return {f"{topic}:{p}" for p in range(partitions)}


class MemberProcess(ClientProcess):
    """One member: ``client`` ("java" or "confluent-kafka") in ``group`` with ``subscription``
    (``topics:A,B``, ``pattern:REGEX``, Java only, or ``regex:REGEX``) and the server-side
    ``assignor`` ("-": the server's default)."""

    def __init__(self, client: str, bootstrap: str, group: str, client_id: str, subscription: str,
                 stderr: Path, assignor: str = "-") -> None:
        args = (bootstrap, group, client_id, subscription, assignor)
        command = (java_client("member", *args) if client == "java"
                   else [sys.executable, str(MEMBER_PROCESS), *args])
        self.client_id = client_id
        super().__init__(command, stderr, stdin=True)

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Its JSON lines in order (those of ``kind`` only, if given)."""
        parsed = [json.loads(line) for _, line in list(self.lines) if line.startswith("{")]
        return [e for e in parsed if kind is None or e["event"] == kind]

    def owned(self) -> set[str]:
        """The partitions it owns by its assigned, revoked and lost events so far."""
        owned: set[str] = set()
        for event in self.events():
            if event["event"] == "assigned":
                owned |= set(event["partitions"])
            elif event["event"] in ("revoked", "lost"):
                owned -= set(event["partitions"])
        return owned

    def member_id(self, timeout: float = 30.0) -> str:
        """Its member id, once it has one (the Java client reports an empty one before its
        first heartbeat's answer, and may report its first assignment before its id)."""
        def known() -> str:
            self.alive()
            ids = [e["member_id"] for e in self.events("member") if e["member_id"]]
            return str(ids[-1]) if ids else ""

        return wait_for(known, timeout, f"{self.client_id}'s member id")

    def alive(self) -> None:
        """Fail if it has exited."""
        if self.process.poll() is not None:
            raise AssertionError(f"{self.client_id} exited with {self.process.returncode}: "
                                 f"{self.lines[-5:]} {self.errors()}")

    def commit(self, offsets: Mapping[str, int], timeout: float = 30.0) -> dict[str, int]:
        """Commit ``offsets`` (by partition); the offsets it read back after."""
        before = len(self.events("committed"))
        self.tell("commit " + ",".join(f"{tp}:{o}" for tp, o in offsets.items()))

        def answered() -> list[dict[str, Any]]:
            self.alive()
            return self.events("committed")[before:]

        return dict(wait_for(answered, timeout, f"{self.client_id} to commit")[0]["offsets"])

    def leave(self, timeout: float = 60.0) -> None:
        """Close the consumer (it leaves the group) and wait for it to exit."""
        self.tell("close")
        code = self.wait(timeout)
        assert code == 0 and self.events("closed"), f"{self.client_id} exited {code}: {self.errors()}"

    def first_offsets(self) -> dict[str, int]:
        """The offset of the first record it read from each partition."""
        first: dict[str, int] = {}
        for event in self.events("record"):
            first.setdefault(event["partition"], event["offset"])
        return first


def is_disjoint_cover(owned: Sequence[set[str]], partitions: set[str]) -> bool:
    """Every member owns partitions, none owned twice, together all of them."""
    return (all(owned) and sum(len(o) for o in owned) == len(partitions)
            and set().union(*owned) == partitions)


def wait_shared(members: Sequence[MemberProcess], partitions: set[str], timeout: float = SETTLE_S) -> None:
    """Wait until the members own ``partitions`` disjointly and completely."""
    def shared() -> bool:
        for member in members:
            member.alive()
        return is_disjoint_cover([m.owned() for m in members], partitions)

    try:
        wait_for(shared, timeout, "the members to share the partitions", 0.1)
    except AssertionError as error:
        raise AssertionError(f"{error}: {[sorted(m.owned()) for m in members]}") from None


def ownership_timeline(members: Iterable[MemberProcess]) -> list[tuple[int, str, str, str]]:
    """Every member's assigned, revoked and lost events, one per partition, by time:
    (at_us, event, partition, client id)."""
    timeline = []
    for member in members:
        for event in member.events():
            if event["event"] in ("assigned", "revoked", "lost"):
                timeline += [(event["at_us"], event["event"], tp, member.client_id) for tp in event["partitions"]]
    return sorted(timeline)


def check_handovers(timeline: Sequence[tuple[int, str, str, str]]) -> int:
    """On an :func:`ownership_timeline`, each partition is assigned to a member only once its
    previous owner has revoked (or lost) it; the number of assignments seen."""
    owner: dict[str, str] = {}
    for at, event, tp, member in timeline:
        if event == "assigned":
            assert tp not in owner, f"{tp} assigned to {member} at {at} while {owner[tp]} owned it: {timeline}"
            owner[tp] = member
        else:
            assert owner.get(tp) == member, f"{member} gave up {tp} at {at}, owned by {owner.get(tp)}: {timeline}"
            del owner[tp]
    return sum(1 for _, event, _, _ in timeline if event == "assigned")
