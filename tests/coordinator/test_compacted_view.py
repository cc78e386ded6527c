"""The ``consumer_offsets`` compacted view (Spark) of a log the coordinator wrote equals what a
fresh coordinator loads from that log: every group's generation, protocol, leader and members,
every committed offset with the log offset of its record, and nothing of aborted or open
transactions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from coordinator_context import (
    GROUP_ID,
    PROTOCOL_TYPE,
    UNKNOWN,
    Context,
    durable_view,
)

from groupcoord.format import codec
from groupcoord.coordinator import GroupState, OffsetAndMetadata, TopicPartition
from groupcoord.errors import Errors


def owned_group(ctx: Context, prefix: str) -> str:
    """A group id that lands in the partition the test coordinator owns."""
    return next(g for g in (f"{prefix}-{i}" for i in range(1000))
                if ctx.coordinator.partition_for(g) == ctx.group_partition)


def write_history(ctx: Context) -> None:
    """A group through two generations with consumer-protocol members, commits and
    re-commits, a committed, an aborted and an open transaction, a deleted offset, and a
    standalone group that commits and is then deleted."""
    subscription = codec.encode_subscription(codec.ConsumerProtocolSubscription(["orders"], version=1))
    first = ctx.dynamic_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, [("range", subscription)])
    assignment = codec.encode_assignment(codec.ConsumerProtocolAssignment([("orders", [0, 1, 2, 3])]))
    assert ctx.sync_group_leader(GROUP_ID, 1, first.member_id, {first.member_id: assignment}).error == Errors.NONE
    orders = [TopicPartition("orders", p) for p in range(4)]
    other = TopicPartition("unsubscribed", 0)
    assert set(ctx.commit_offsets(GROUP_ID, first.member_id, 1,
                                  {tp: ctx.offset_and_metadata(10 + tp.partition, "m") for tp in [*orders, other]})
               .values()) == {Errors.NONE}
    ctx.sleep(100)
    assert ctx.commit_offsets(GROUP_ID, first.member_id, 1, {orders[0]: ctx.offset_and_metadata(99)}) \
        == {orders[0]: Errors.NONE}

    assert ctx.commit_transactional_offsets(GROUP_ID, 1000, 0, {orders[1]: ctx.offset_and_metadata(500)}) \
        == {orders[1]: Errors.NONE}
    assert ctx.complete_transaction(1000, [ctx.group_partition], commit=True) == Errors.NONE
    assert ctx.commit_transactional_offsets(GROUP_ID, 2000, 0, {orders[2]: ctx.offset_and_metadata(900)}) \
        == {orders[2]: Errors.NONE}
    assert ctx.complete_transaction(2000, [ctx.group_partition], commit=False) == Errors.NONE
    assert ctx.commit_transactional_offsets(GROUP_ID, 3000, 0, {orders[3]: ctx.offset_and_metadata(7)}) \
        == {orders[3]: Errors.NONE}
    assert ctx.delete_offsets(GROUP_ID, [other]) == (Errors.NONE, {other: Errors.NONE})

    # A second member: generation 2, the leader splits the partitions.
    second = ctx.send_join_group(GROUP_ID, UNKNOWN, PROTOCOL_TYPE, [("range", subscription)])
    rejoin = ctx.send_join_group(GROUP_ID, first.member_id, PROTOCOL_TYPE, [("range", subscription)])
    ctx.sleep(10)  # both known members rejoined: the rebalance completes, well within the session
    leader, follower = rejoin.result(), second.result()
    assert (leader.error, leader.generation_id, follower.error) == (Errors.NONE, 2, Errors.NONE)
    split = {leader.member_id: codec.encode_assignment(codec.ConsumerProtocolAssignment([("orders", [0, 1])])),
             follower.member_id: codec.encode_assignment(codec.ConsumerProtocolAssignment([("orders", [2, 3])]))}
    assert ctx.sync_group_leader(GROUP_ID, 2, leader.member_id, split).error == Errors.NONE
    assert ctx.sync_group_follower(GROUP_ID, 2, follower.member_id).error == Errors.NONE
    ctx.assert_group_state(GroupState.STABLE)

    standalone, deleted = owned_group(ctx, "standalone"), owned_group(ctx, "deleted")
    for group in (standalone, deleted):
        tp = TopicPartition("audit", 0)
        assert ctx.commit_offsets(group, UNKNOWN, -1, {tp: ctx.offset_and_metadata(3)}) == {tp: Errors.NONE}
    assert ctx.delete_groups([deleted]) == {deleted: Errors.NONE}


def offset_of(row: dict[str, Any]) -> OffsetAndMetadata:
    return OffsetAndMetadata(
        committed_offset=row["committed_offset"], metadata=row["metadata"],
        commit_timestamp_ms=row["commit_timestamp"],
        leader_epoch=None if row["leader_epoch"] == -1 else row["leader_epoch"],
        expire_timestamp_ms=None if row["expire_timestamp"] == -1 else row["expire_timestamp"],
    )


def assert_compacted_is_loaded(rows: list[dict[str, Any]], loaded: dict[str, Any]) -> tuple[Any, Any]:
    """The compacted rows hold exactly the loaded offsets (with their records' log offsets)
    and groups (generation, protocol, leader, members). Returns (offsets, groups) as read."""
    offsets: dict[str, dict[TopicPartition, tuple[OffsetAndMetadata, int]]] = {}
    groups: dict[str, Any] = {}
    for row in rows:
        if row["record_type"] in (0, 1):
            tp = TopicPartition(row["topic"], row["key_partition"])
            offsets.setdefault(row["group"], {})[tp] = (offset_of(row), row["offset"])
        elif row["record_type"] == 2:
            members = sorted((m["member_id"], m["group_instance_id"], m["client_id"], m["client_host"],
                              m["rebalance_timeout"], m["session_timeout"], m["subscription"], m["assignment"])
                             for m in row["members"])
            groups[row["group"]] = (row["protocol_type"] or None, row["generation"], row["protocol"],
                                    row["leader"], members)
    assert offsets == {g: {tp: (c.offset, c.record_offset) for tp, c in committed.items()}
                       for g, committed in loaded["offsets"].items()}
    assert groups == {g: (protocol_type, generation, protocol, leader, members)
                      for g, (_, protocol_type, generation, protocol, leader, members, _) in loaded["groups"].items()}
    return offsets, groups


def compacted_rows(spark: Any, path: Path, split_bytes: int = 512) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in spark.read.format("consumer_offsets").option("view", "compacted")
            .option("maxSplitBytes", split_bytes).load(str(path)).collect()]


def test_compacted_view_equals_what_the_coordinator_loads(ctx: Context, spark: Any, tmp_path: Path) -> None:
    write_history(ctx)
    for partition in ctx.log.partitions():
        directory = tmp_path / f"__consumer_offsets-{partition}"
        directory.mkdir()
        (directory / f"{0:020d}.log").write_bytes(ctx.log.segment_bytes(partition))
    loaded = durable_view(ctx.replayed())
    offsets, groups = assert_compacted_is_loaded(compacted_rows(spark, tmp_path), loaded)
    assert offsets[GROUP_ID][TopicPartition("orders", 0)][0].committed_offset == 99
    assert offsets[GROUP_ID][TopicPartition("orders", 1)][0].committed_offset == 500
    assert sorted(tp.partition for tp in offsets[GROUP_ID] if tp.topic == "orders") == [0, 1, 2, 3]
    assert offsets[GROUP_ID][TopicPartition("orders", 2)][0].committed_offset == 12, "the aborted 900 never shows"
    assert offsets[GROUP_ID][TopicPartition("orders", 3)][0].committed_offset == 13, "nor the open 7"
    assert TopicPartition("unsubscribed", 0) not in offsets[GROUP_ID]
    assert loaded["pending_transactional"], "the open transaction is pending in the coordinator"
    assert groups[GROUP_ID][1] == 2 and len(groups[GROUP_ID][4]) == 2
    assert owned_group(ctx, "deleted") not in groups and owned_group(ctx, "deleted") not in offsets


def test_compacted_view_of_the_durable_log_equals_what_a_restart_loads(spark: Any, tmp_path: Path) -> None:
    """The coordinator on the durable log (real segments with their indexes): what it loads
    after a restart is the compacted view of its directory."""
    from test_durable import _close, _open, _populate

    async def run() -> dict[str, Any]:
        log, runtime = await _open(tmp_path)
        await _populate(runtime)
        await _close(log, runtime)
        log, runtime = await _open(tmp_path)
        loaded = durable_view(runtime.coordinator)
        await _close(log, runtime)
        return loaded

    loaded = asyncio.run(run())
    assert list(tmp_path.glob("__consumer_offsets-*/*.index"))
    offsets, groups = assert_compacted_is_loaded(compacted_rows(spark, tmp_path, 1 << 20), loaded)
    assert {"orders-app", "simple", "txn-app"} <= set(offsets) and "gone" not in offsets
    assert groups["orders-app"][1] == 1
