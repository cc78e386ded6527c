"""Capture ``kip848_vectors.py`` from a real Kafka broker: run by hand, not by pytest.

    PYTHONPATH=python python tests/capture_kip848_vectors.py > tests/kip848_vectors.py

It starts a single-node Kafka 4.3.1 broker (``data_servers.serve("kafka", ...)``, Maven
Central's jars, the consumer-protocol test settings), runs consumer-protocol groups of the Java
client (``group.protocol=consumer``, the coordinator's default assignor) and reads what the
coordinator wrote from the broker's ``__consumer_offsets-N/*.log`` files with groupcoord's
codec (``codec.iter_segment``): each group's ConsumerGroupMetadataValue ``metadata_hash``
(KIP-1101) with the ids Kafka gave the topics (the admin client's DescribeTopics), and the
records a group's coordinator wrote when its first member joined, a second one joined, and
one left. It prints the module's source on stdout.
"""

from __future__ import annotations

import base64
import pprint
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "server"))

from data_servers import serve
from data_support import Processes
from group_members import CONSUMER_PROTOCOL_SETTINGS, MemberProcess, names, wait_shared

from groupcoord.format import codec

TOPICS = {"orders": 6, "payments": 3}
HASHED = {"hash-orders": ["orders"], "hash-orders-payments": ["orders", "payments"],
          "hash-payments": ["payments"]}
"""The groups whose metadata hash is captured: group id -> subscribed topics."""
SEQUENCE_GROUP = "sequence"
QUIET_S = 3.0
"""A group's records have settled once none came for this long (six heartbeat intervals)."""
SETTLE_LIMIT_S = 60.0
"""The longest a capture waits for a group's records to settle."""


def topic_ids(bootstrap: str) -> dict[str, str]:
    """Each topic's id as Kafka prints a Uuid (URL-safe base64 without padding; librdkafka's
    str() uses the standard alphabet), by the admin client's DescribeTopics."""
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    described = admin.describe_topics(TopicCollection(list(TOPICS)), request_timeout=30)
    ids = {}
    for topic, future in described.items():
        uuid = future.result(60).topic_id
        bits = [uuid.get_most_significant_bits(), uuid.get_least_significant_bits()]
        raw = b"".join(b.to_bytes(8, "big", signed=True) for b in bits)
        ids[topic] = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return ids


def group_records(logs: Path, group: str) -> list[codec.OffsetsRecord]:
    """The consumer-group records (types 3 to 8, 16) of ``group``, in log order. A batch being
    written as this reads ends the read (it comes next time)."""
    found = []
    for directory in sorted(logs.glob("__consumer_offsets-*")):
        for segment in sorted(directory.glob("*.log")):
            for record in codec.iter_segment(segment, stop_at_corruption=True):
                if isinstance(record.key, codec.ConsumerGroupKey) and record.key.group_id == group:
                    found.append(record)
    return found


def settled(logs: Path, group: str) -> list[codec.OffsetsRecord]:
    """The group's records once no new one has come for :data:`QUIET_S`."""
    seen, since = -1, time.monotonic()
    deadline = since + SETTLE_LIMIT_S
    while time.monotonic() < deadline:
        records = group_records(logs, group)
        if len(records) != seen:
            seen, since = len(records), time.monotonic()
        elif time.monotonic() - since > QUIET_S:
            return records
        time.sleep(0.2)
    raise TimeoutError(f"the records of group {group} kept coming for {SETTLE_LIMIT_S} s")


def describe(record: codec.OffsetsRecord, roles: dict[str, str], names_by_id: dict[str, str]) -> dict[str, Any]:
    """A record's type, the role of its member ("A", "B"; None for a group-wide record), and
    the value fields that do not depend on the clock or on random ids."""
    key = record.key
    assert isinstance(key, codec.ConsumerGroupKey)
    described: dict[str, Any] = {"type": key.record_type,
                                 "member": None if key.member_id is None else roles[key.member_id]}
    value = record.value
    if value is None:
        described["value"] = None
        return described
    assert isinstance(value, codec.ConsumerGroupValue)
    fields = value.fields

    def by_name(assigned: list[dict[str, Any]]) -> dict[str, list[int]]:
        return {names_by_id[t["topic_id"]]: sorted(t["partitions"]) for t in assigned}

    salient: Callable[[], dict[str, Any]] = {
        3: lambda: {"epoch": fields["epoch"], "metadata_hash": fields["metadata_hash"]},
        4: lambda: {"topics": {t["topic_name"]: t["num_partitions"] for t in fields["topics"]}},
        5: lambda: {k: fields[k] for k in ("client_id", "subscribed_topic_names", "subscribed_topic_regex",
                                           "server_assignor", "rebalance_timeout_ms")},
        6: lambda: {"assignment_epoch": fields["assignment_epoch"]},
        7: lambda: {"partitions": by_name(fields["topic_partitions"])},
        8: lambda: {"member_epoch": fields["member_epoch"], "previous_member_epoch": fields["previous_member_epoch"],
                    "state": fields["state"], "assigned": by_name(fields["assigned_partitions"]),
                    "pending_revocation": by_name(fields["partitions_pending_revocation"])},
        16: lambda: {"topics": fields["topics"], "version": fields["version"]},
    }[key.record_type]
    described["value"] = {"schema": value.schema, **salient()}
    return described


def capture(directory: Path) -> dict[str, Any]:
    with serve("kafka", directory, TOPICS, CONSUMER_PROTOCOL_SETTINGS) as server:
        logs = directory / "kafka" / "logs"
        processes = Processes(directory)
        try:
            def member(group: str, client_id: str, topics: list[str]) -> MemberProcess:
                return processes.member("java", server.bootstrap, group, client_id, "topics:" + ",".join(topics))

            ids = topic_ids(server.bootstrap)
            names_by_id = {i: t for t, i in ids.items()}
            hashes = []
            for group, topics in HASHED.items():
                hashed = member(group, f"{group}-member", topics)
                wait_shared([hashed], set().union(*(names(t, TOPICS[t]) for t in topics)))
                metadata = [r for r in settled(logs, group) if r.key.record_type == 3 and r.value is not None]
                hashes.append({"group": group,
                               "topics": [{"topic_id": ids[t], "topic_name": t, "partitions": TOPICS[t],
                                           "racks": []} for t in sorted(topics)],
                               "metadata_hash": metadata[-1].value.fields["metadata_hash"]})
                hashed.leave()

            everything = names("orders", TOPICS["orders"])
            phases: dict[str, list[dict[str, Any]]] = {}
            roles: dict[str, str] = {}
            written = 0

            def phase(name: str) -> None:
                nonlocal written
                records = settled(logs, SEQUENCE_GROUP)
                phases[name] = [describe(r, roles, names_by_id) for r in records[written:]]
                written = len(records)

            first = member(SEQUENCE_GROUP, "member-a", ["orders"])
            wait_shared([first], everything)
            roles[first.member_id()] = "A"
            phase("first member joins")
            second = member(SEQUENCE_GROUP, "member-b", ["orders"])
            roles[second.member_id()] = "B"
            wait_shared([first, second], everything)
            phase("second member joins")
            second.leave()
            wait_shared([first], everything)
            phase("a member leaves")
            first.leave()
            return {"hashes": hashes, "phases": phases}
        finally:
            processes.close()


SOURCE = '''"""KIP-848 test vectors captured from Apache Kafka {version}: run
``PYTHONPATH=python python tests/capture_kip848_vectors.py > tests/kip848_vectors.py`` to
capture them again (topic ids and member ids are new every time).

A single-node KRaft broker (broker and controller in one process, no ``broker.rack``: no
partition has racks), with ``group.consumer.heartbeat.interval.ms=500`` and a 6 s session;
consumer-protocol members of the Java client (kafka-clients {client}, ``group.protocol=consumer``,
no ``group.remote.assignor``: the coordinator's default, ``uniform``), subscribed by topic name.
The records were read from the broker's ``__consumer_offsets`` log files with
``groupcoord.format.codec.iter_segment``.

:data:`METADATA_HASHES`: KIP-1101's ``metadata_hash`` of ConsumerGroupMetadataValue (record type
3) for a group subscribed to ``topics``: each topic's id (as Kafka prints a Uuid), name,
partition count and racks.

:data:`SEQUENCES`: the records the coordinator wrote for one group over ``orders`` (6
partitions), in log order, when its first member (A) joined, a second member (B) joined, and
B left (closed its consumer). ``type`` is the record type (3 ConsumerGroupMetadata, 4
ConsumerGroupPartitionMetadata, 5 ConsumerGroupMemberMetadata, 6
ConsumerGroupTargetAssignmentMetadata, 7 ConsumerGroupTargetAssignmentMember, 8
ConsumerGroupCurrentMemberAssignment, 16 ConsumerGroupRegularExpression); ``member`` the role of
the key's member id (None for a group-wide record); ``value`` None for a tombstone, else the
value's schema and its fields that depend on neither the clock nor random ids (partitions by
topic name; ``state`` is ConsumerGroupCurrentMemberAssignmentValue's MemberState: 0 stable, 1
unrevoked partitions, 2 unreleased partitions, 127 unknown). Repeated captures gave the same
sequences but for the order of the two type-7 records of the second join: the coordinator
writes the target assignment in the order of its map of members, whose ids are random. The
first member's join writes group epoch 2, not 1.
"""

KAFKA_VERSION = {version!r}

METADATA_HASHES = {hashes}

SEQUENCES = {phases}
'''


def jar_version(directory: Path, artifact: str) -> str:
    """The version of the ``artifact`` jar in ``directory`` (as Maven names its copies)."""
    return next(directory.glob(f"{artifact}-*.jar")).stem.removeprefix(f"{artifact}-")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="kip848-vectors-") as directory:
        captured = capture(Path(directory))
    root = Path(__file__).resolve().parents[1]
    print(SOURCE.format(version=jar_version(root / "benches" / "kafka" / "lib", "kafka_2.13"),
                        client=jar_version(root / "tests" / "server" / "java" / "lib", "kafka-clients"),
                        hashes=pprint.pformat(captured["hashes"], width=100, sort_dicts=False),
                        phases=pprint.pformat(captured["phases"], width=100, sort_dicts=False)), end="")


if __name__ == "__main__":
    main()
