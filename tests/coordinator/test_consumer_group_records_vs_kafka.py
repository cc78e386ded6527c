"""The records a consumer group's life writes, against those a Kafka 4.3.1 broker wrote.

``tests/kip848_vectors.py`` holds what Kafka wrote to ``__consumer_offsets`` for one group over
``orders`` (6 partitions) as Java consumers joined and left it. The same heartbeats, in the
order the broker saw them, must make groupcoord write the same records: types, order, epochs,
member states, assignments and the metadata hash (the topic id is the captured one, so the hash
is comparable too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from consumer_context import ConsumerContext
from kip848_vectors import METADATA_HASHES, SEQUENCES

from groupcoord.coordinator.consumer.assignors.java_order import uuid_from_kafka
from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupHeartbeat
from groupcoord.errors import Errors
from groupcoord.format import codec

GROUP = "groupId"
ORDERS = next(c["topics"][0] for c in METADATA_HASHES if c["group"] == "hash-orders")
ORDERS_ID = uuid_from_kafka(ORDERS["topic_id"])
ROLES = {"member-a": "A", "member-b": "B"}


def heartbeat(ctx: ConsumerContext, member: str, epoch: int, owned: Sequence[int] | None = None,
              **fields: Any) -> None:
    if epoch == 0:
        fields.update(rebalance_timeout_ms=300000, subscribed_topic_names=["orders"], topic_partitions={})
    elif owned is not None:
        fields["topic_partitions"] = {ORDERS_ID: list(owned)}
    request = ConsumerGroupHeartbeat(GROUP, member, epoch, client_id=member, client_host="/127.0.0.1", **fields)
    assert ctx.send_heartbeat(request).result().error is Errors.NONE


def as_captured(record: codec.OffsetsRecord) -> dict[str, Any]:
    """A record in the capture's shape (``tests/capture_kip848_vectors.py``)."""
    key, value = record.key, record.value
    assert isinstance(key, codec.ConsumerGroupKey)
    member = ROLES.get(key.member_id or "")
    if value is None:
        return {"type": key.record_type, "member": member, "value": None}
    assert isinstance(value, codec.ConsumerGroupValue)
    f = value.fields

    def named(topics: Sequence[dict[str, Any]]) -> dict[str, list[int]]:
        assert all(uuid_from_kafka(t["topic_id"]) == ORDERS_ID for t in topics)
        return {"orders": list(t["partitions"]) for t in topics}

    fields: dict[str, Any] = {
        "ConsumerGroupMemberMetadataValue": lambda: {
            "client_id": f["client_id"], "subscribed_topic_names": f["subscribed_topic_names"],
            "subscribed_topic_regex": f["subscribed_topic_regex"], "server_assignor": f["server_assignor"],
            "rebalance_timeout_ms": f["rebalance_timeout_ms"]},
        "ConsumerGroupMetadataValue": lambda: {"epoch": f["epoch"], "metadata_hash": f["metadata_hash"]},
        "ConsumerGroupTargetAssignmentMemberValue": lambda: {"partitions": named(f["topic_partitions"])},
        "ConsumerGroupTargetAssignmentMetadataValue": lambda: {"assignment_epoch": f["assignment_epoch"]},
        "ConsumerGroupCurrentMemberAssignmentValue": lambda: {
            "member_epoch": f["member_epoch"], "previous_member_epoch": f["previous_member_epoch"],
            "state": f["state"], "assigned": named(f["assigned_partitions"]),
            "pending_revocation": named(f["partitions_pending_revocation"])},
    }[value.schema]()
    return {"type": key.record_type, "member": member, "value": {"schema": value.schema, **fields}}


def written(ctx: ConsumerContext) -> list[dict[str, Any]]:
    return [as_captured(r) for r in ctx.take_new_records()]


def same_up_to_target_order(ours: list[dict[str, Any]], kafka: list[dict[str, Any]]) -> bool:
    """Kafka writes a computation's target records (type 7) in its member map's order, which
    follows random member ids: consecutive type-7 records compare as a set."""
    def runs(records: list[dict[str, Any]]) -> list[Any]:
        out: list[Any] = []
        for r in records:
            if r["type"] == 7 and out and isinstance(out[-1], list):
                out[-1].append(r)
            else:
                out.append([r] if r["type"] == 7 else r)
        return [sorted(x, key=lambda r: r["member"]) if isinstance(x, list) else x for x in out]
    return runs(ours) == runs(kafka)


def test_a_group_s_life_writes_what_kafka_4_3_1_wrote(consumer_ctx: ConsumerContext) -> None:
    ctx = consumer_ctx
    ctx.topics.set("orders", ORDERS["partitions"], ORDERS_ID)
    assert isinstance(ORDERS_ID, UUID)

    heartbeat(ctx, "member-a", 0)
    assert written(ctx) == SEQUENCES["first member joins"]

    heartbeat(ctx, "member-b", 0)
    heartbeat(ctx, "member-b", 3, owned=[])
    heartbeat(ctx, "member-a", 2, owned=range(6))
    heartbeat(ctx, "member-a", 2, owned=[0, 1, 2])
    heartbeat(ctx, "member-b", 3, owned=[])
    ours = written(ctx)
    assert same_up_to_target_order(ours, SEQUENCES["second member joins"]), ours

    heartbeat(ctx, "member-b", -1)
    heartbeat(ctx, "member-a", 3, owned=[0, 1, 2])
    assert written(ctx) == SEQUENCES["a member leaves"]
