"""The coordinator on the durable log: restart, `groupcoord inspect`, real crashes, compaction.

* Restart: groups and offsets formed through the coordinator, the process's coordinator and
  log closed, a new pair opened on the same directory: the same groups and offsets.
* Crash: a process running the coordinator on the durable log (small segments, a busy
  cleaner) commits thousands of offsets and is killed with SIGKILL, again and again on the
  same directory, at random moments and at the N-th rename, deletion, fsync, write or (torn)
  append write; after each kill every acknowledged commit is there and what the coordinator
  loads equals a replay of the surviving log. ``GROUPCOORD_CRASH_ITERATIONS`` (default 8) sets
  the number of kills; the soak by hand: ``GROUPCOORD_CRASH_ITERATIONS=200``.
* Compaction: a cleaned copy of a coordinator-written log loads to the same state.

Real time where the runtime's timer runs (short timeouts, bounded waits); real files, real
processes.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from coordinator_context import call_handler, durable_view

from groupcoord.cli import inspect
from groupcoord.format import codec
from groupcoord.config import Config
from groupcoord.coordinator import GroupState, JoinGroupResult, OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.errors import Errors
from groupcoord.storage import LogManager, PartitionLog, read_directory
from groupcoord.storage.checkpoint import CLEANER_OFFSET_FILE, OffsetCheckpoint
from groupcoord.storage.cleaner import LogCleaner

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from crash_support import Child  # noqa: E402
from offsets_workload import replay  # noqa: E402
from test_storage_log import broker_directory  # noqa: E402

SUBSCRIPTION = codec.encode_subscription(codec.ConsumerProtocolSubscription(["orders"]))
ASSIGNMENT = codec.encode_assignment(codec.ConsumerProtocolAssignment([("orders", [0, 1])]))
CONFIG = Config.from_properties({
    "offsets.topic.num.partitions": 3,
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 50,
    "log.cleaner.enable": False,
})


async def _open(data_dir: Path, config: Config = CONFIG) -> tuple[LogManager, CoordinatorRuntime]:
    log = LogManager(data_dir, config)
    await log.start()
    runtime = CoordinatorRuntime(config, log)
    await runtime.start(range(config.offsets_topic_num_partitions))
    await asyncio.wait_for(runtime.wait_loaded(), 30)
    return log, runtime


async def _close(log: LogManager, runtime: CoordinatorRuntime) -> None:
    await runtime.close()
    await log.close()


async def _populate(runtime: CoordinatorRuntime) -> str:
    """A Stable consumer group with a static member and its assignment, committed offsets,
    a simple group, a committed and an open transaction, a deleted group."""
    c = runtime.coordinator
    join: JoinGroupResult = await call_handler(
        runtime, c.handle_join_group, "orders-app", "", group_instance_id="host-1", require_known_member_id=True,
        support_skipping_assignment=True, client_id="client-1", client_host="10.0.0.1",
        rebalance_timeout_ms=30_000, session_timeout_ms=30_000, protocol_type="consumer",
        protocols=[("range", SUBSCRIPTION)])
    assert join.error == Errors.NONE
    sync = await call_handler(runtime, c.handle_sync_group, "orders-app", join.generation_id, join.member_id,
                              protocol_type="consumer", protocol_name="range", group_instance_id="host-1",
                              assignment={join.member_id: ASSIGNMENT})
    assert sync.error == Errors.NONE
    tps = [TopicPartition("orders", p) for p in range(2)]
    result = await call_handler(runtime, c.handle_commit_offsets, "orders-app", join.member_id, "host-1",
                                join.generation_id, {tp: OffsetAndMetadata(100 + tp.partition, "m", 5) for tp in tps})
    assert set(result.values()) == {Errors.NONE}
    for i in range(3):
        await call_handler(runtime, c.handle_commit_offsets, "simple", "", None, -1,
                           {TopicPartition("audit", 0): OffsetAndMetadata(i, "", 5)})
    for producer, commit in ((7, True), (8, None)):
        await call_handler(runtime, c.handle_txn_commit_offsets, "txn-app", producer, 0, "", None, -1,
                           {TopicPartition("payments", producer): OffsetAndMetadata(producer * 10, "", 5)})
        if commit is not None:
            await call_handler(runtime, c.complete_transaction, producer, 0, [c.partition_for("txn-app")], commit)
    await call_handler(runtime, c.handle_commit_offsets, "gone", "", None, -1,
                       {TopicPartition("x", 0): OffsetAndMetadata(1, "", 5)})
    assert await call_handler(runtime, c.handle_delete_groups, ["gone"]) == {"gone": Errors.NONE}
    return join.member_id


def test_restart_keeps_groups_and_offsets(tmp_path: Path) -> None:
    async def main() -> None:
        log, runtime = await _open(tmp_path)
        member_id = await _populate(runtime)
        before = durable_view(runtime.coordinator)
        await _close(log, runtime)

        log, runtime = await _open(tmp_path)
        c = runtime.coordinator
        assert durable_view(c) == before
        group = c.manager.get_group("orders-app")
        assert group is not None and group.state is GroupState.STABLE
        assert group.get(member_id).assignment == ASSIGNMENT
        assert c.manager.get_group("gone") is None
        assert c.handle_fetch_offsets("txn-app", True, [TopicPartition("payments", 7), TopicPartition("payments", 8)])[1] \
            == {TopicPartition("payments", 7): c.handle_fetch_offsets("txn-app", False, [TopicPartition("payments", 7)])[1][
                TopicPartition("payments", 7)],
                TopicPartition("payments", 8): c.manager.get_offsets("txn-app", True, [TopicPartition("payments", 8)])[
                    TopicPartition("payments", 8)]}
        assert c.handle_fetch_offsets("txn-app", True, [TopicPartition("payments", 8)])[1][
            TopicPartition("payments", 8)].error == Errors.UNSTABLE_OFFSET_COMMIT
        # The loaded member's session runs again: it can heartbeat, and without it, it expires.
        assert await call_handler(runtime, c.handle_heartbeat, "orders-app", member_id, "host-1", 1) == Errors.NONE
        await _close(log, runtime)

    asyncio.run(main())


def test_inspect_prints_what_loading_yields(tmp_path: Path) -> None:
    async def main() -> None:
        log, runtime = await _open(tmp_path)
        await _populate(runtime)
        await _close(log, runtime)

    asyncio.run(main())
    expected = inspect.snapshot(inspect.load(tmp_path, CONFIG))
    files = {p: p.read_bytes() for p in tmp_path.rglob("*.log")}
    cli = [sys.executable, "-m", "groupcoord.cli", "inspect", str(tmp_path), "--set", "offsets.topic.num.partitions=3"]
    printed = json.loads(subprocess.run(cli + ["--json"], check=True, capture_output=True, text=True, timeout=60).stdout)
    assert printed == json.loads(json.dumps(expected))
    groups = {g["group"]: g for g in printed["groups"]}
    assert groups["orders-app"]["state"] == "Stable"
    assert groups["orders-app"]["members"][0]["assignment"] == {"orders": [0, 1]}
    assert "gone" not in groups
    assert {(o["group"], o["topic"], o["partition"], o["offset"]) for o in printed["offsets"]} == {
        ("orders-app", "orders", 0, 100), ("orders-app", "orders", 1, 101), ("simple", "audit", 0, 2),
        ("txn-app", "payments", 7, 70),
    }
    assert printed["open_transactions"] == [
        {"producer_id": 8, "group": "txn-app", "topic": "payments", "partition": 8, "offset": 80}
    ]
    table = subprocess.run(cli, check=True, capture_output=True, text=True, timeout=60).stdout
    assert "GROUPS (3)" in table and "orders-app" in table and "orders:0,1" in table
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.log")} == files, "inspecting changes nothing"
    # A wrong partition count is an error, not a silent misreading.
    wrong = subprocess.run([sys.executable, "-m", "groupcoord.cli", "inspect", str(tmp_path),
                            "--set", "offsets.topic.num.partitions=2"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 1 and "offsets.topic.num.partitions" in wrong.stderr
    # A count above the cluster's (the default 50 on a copy of 3 partitions) still reads, but
    # the groups' partitions are not theirs: a warning says so.
    default = subprocess.run([sys.executable, "-m", "groupcoord.cli", "inspect", str(tmp_path)],
                             capture_output=True, text=True, timeout=60)
    assert default.returncode == 0, default.stderr
    assert "warning: 3 groups are not where offsets.topic.num.partitions=50 puts them" in default.stderr
    assert "warning" not in subprocess.run(cli, capture_output=True, text=True, timeout=60).stderr


def test_inspect_reads_a_broker_directory(tmp_path: Path) -> None:
    broker_directory(tmp_path / "kafka-logs")
    data = inspect.snapshot(inspect.load(tmp_path / "kafka-logs", Config()))
    assert {(o["group"], o["topic"], o["partition"], o["offset"]) for o in data["offsets"]} == {
        ("kafkesc-devcluster-group-id", "t01", 0, 200), ("old", "topic", 0, 12), ("old", "topic", 1, 21),
        ("old", "topic", 3, 14), ("new", "topic", 0, 20),
    }
    assert {g["group"]: g["state"] for g in data["groups"]} == {
        "kafkesc-devcluster-group-id": "Empty", "old": "Empty", "new": "Empty"}


def test_inspect_shows_a_progress_bar_on_long_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broker_directory(tmp_path / "kafka-logs")
    monkeypatch.setattr(inspect, "PROGRESS_AFTER_S", 0.0)
    stream = io.StringIO()
    inspect.load(tmp_path / "kafka-logs", Config(), progress_stream=stream)
    assert "loading __consumer_offsets-31 [" in stream.getvalue()
    assert stream.getvalue().rstrip().split("\r")[-1].startswith("loaded ")


# --- compaction ---------------------------------------------------------------------------

def test_a_compacted_log_loads_to_the_same_state(tmp_path: Path) -> None:
    config = CONFIG.with_overrides({"offsets.topic.segment.bytes": "4096", "log.index.interval.bytes": "512"})

    async def main() -> None:
        log, runtime = await _open(tmp_path / "data", config)
        await _populate(runtime)
        c = runtime.coordinator
        rng = random.Random(5)
        for i in range(1500):
            group = f"app-{rng.randrange(6)}"
            await call_handler(runtime, c.handle_commit_offsets, group, "", None, -1,
                               {TopicPartition("t", rng.randrange(4)): OffsetAndMetadata(i, "", 5)})
            if i % 400 == 399:
                victim = f"app-{rng.randrange(6)}"
                assert await call_handler(runtime, c.handle_delete_groups, [victim]) in (
                    {victim: Errors.NONE}, {victim: Errors.GROUP_ID_NOT_FOUND})
        await _close(log, runtime)

    asyncio.run(main())
    shutil.copytree(tmp_path / "data", tmp_path / "cleaned")
    for directory in sorted((tmp_path / "cleaned").glob("__consumer_offsets-*")):
        partition_log = PartitionLog.open(directory, config)
        partition_log.roll()
        cleaner = LogCleaner(config.with_overrides({"log.cleaner.min.cleanable.ratio": "0"}),
                             logs=lambda: [partition_log],
                             checkpoint=OffsetCheckpoint(tmp_path / "cleaned" / CLEANER_OFFSET_FILE),
                             clock_ms=lambda: 10**13)
        # (A partition with an open transaction is cleaned only below it: maybe not at all.)
        cleaner.clean(partition_log)
        partition_log.close()
    size = sum(p.stat().st_size for p in (tmp_path / "data").rglob("*.log"))
    cleaned_size = sum(p.stat().st_size for p in (tmp_path / "cleaned").rglob("*.log"))
    assert cleaned_size < size / 2
    original = inspect.load(tmp_path / "data", config)
    cleaned = inspect.load(tmp_path / "cleaned", config)
    assert durable_view(cleaned) == durable_view(original)


# --- crashes ------------------------------------------------------------------------------

CHILD = TESTS / "coordinator_crash_child.py"
ITERATIONS = int(os.environ.get("GROUPCOORD_CRASH_ITERATIONS", "8"))
COUNT = 200_000
KILL_POINTS = ("pwrite", "replace", "unlink", "fsync")


def test_every_acknowledged_commit_survives_sigkill(tmp_path: Path) -> None:
    from coordinator_crash_child import CONFIG as CHILD_CONFIG

    rng = random.Random(11)
    acknowledged: dict[tuple[str, str, int], int] = {}
    for run in range(ITERATIONS):
        kill_point = None if run % 2 == 0 else (KILL_POINTS[run // 2 % len(KILL_POINTS)], rng.randint(5, 60))
        child = Child(CHILD, [str(tmp_path), str(run), str(COUNT)], kill_point)
        child.kill_after(rng.uniform(0.3, 2.0), 10.0)
        for group, topic, partition, offset in child.acknowledged_lines():
            key = (group, topic, int(partition))
            acknowledged[key] = max(acknowledged.get(key, -1), int(offset))

        loaded = inspect.load(tmp_path, CHILD_CONFIG)
        offsets = {
            (g, tp.topic, tp.partition): c.offset.committed_offset
            for g in loaded.manager.offsets.group_ids()
            for tp, c in loaded.manager.offsets.committed(g).items()
        }
        # Every acknowledged commit is there (or a later one of the same partition).
        for key, offset in acknowledged.items():
            assert offsets.get(key, -1) >= offset, (run, kill_point, key)
        # What the coordinator loads is what the surviving log replays to.
        survivors = [
            r for d in sorted(tmp_path.glob("__consumer_offsets-*")) for chunk in read_directory(d) for r in chunk
        ]
        oracle = {k[1:]: v.offset for k, v in replay(survivors).items() if k[0] == "offset"}
        assert offsets == oracle
    assert sum(1 for _ in tmp_path.rglob("*.log")) > 3, "the runs rolled segments"
