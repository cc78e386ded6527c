"""``groupcoord serve`` on a damaged log, as the issue reproduced it: the damaged partition is
refused alone, with its reason, until ``groupcoord repair`` rewrites it. The damage kinds and
the other readers are in ``tests/test_storage_damage.py``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, TopicPartition
from log_faults import write_commits
from server_process import ServerProcess, wait_for

from groupcoord.config import Config
from groupcoord.partitioner import partition_for


@pytest.mark.slow
def test_a_real_server_refuses_the_damaged_partition_alone_until_it_is_repaired(tmp_path: Path) -> None:
    """The issue's reproduction with ``groupcoord serve``: a bit flipped in a rolled segment
    after a clean stop. The server serves every other partition, refuses that one with one
    ERROR line naming the repair command and the metric; ``repair`` on the stopped server
    then makes it load with every valid batch."""
    settings = {"offsets.topic.segment.bytes": "2000", "log.cleaner.enable": "false",
                "offsets.topic.num.partitions": "8"}
    config = Config.from_properties(settings)
    data_dir = tmp_path / "data"
    victim, other = "victim", next(g for g in (f"other-{i}" for i in range(100))
                                   if partition_for(g, 8) != partition_for("victim", 8))
    asyncio.run(write_commits(data_dir, victim, partition_for(victim, 8), 60, config))
    asyncio.run(write_commits(data_dir, other, partition_for(other, 8), 5, config))
    partition_dir = data_dir / f"__consumer_offsets-{partition_for(victim, 8)}"
    rolled = sorted(partition_dir.glob("*.log"))[0]
    flipped = bytearray(rolled.read_bytes())
    flipped[900] ^= 0x40
    rolled.write_bytes(bytes(flipped))

    server = ServerProcess(data_dir, ["t:1"], settings=settings).start()
    try:
        wait_for(lambda: server.metrics().get("groupcoord_partitions_damaged") == 1, 30, "the refusal")
        wait_for(lambda: server.metrics()['groupcoord_partitions{status="owned"}'] == 7, 30, "the others")
        assert server.metrics()['groupcoord_partitions{status="offline"}'] == 1
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
        try:
            assert admin.list_group_offsets(other)[other][TopicPartition("t", 0)].offset == 4
        finally:
            admin.close()
        errors = [line for line in server.log().splitlines() if "ERROR" in line]
        assert len(errors) == 1, errors
        assert f"groupcoord repair DATA_DIR --partition {partition_for(victim, 8)}" in errors[0]
        assert f"{rolled}: damaged at byte" in errors[0]
    finally:
        assert server.stop() == 0
    result = subprocess.run([sys.executable, "-m", "groupcoord.cli", "repair", str(data_dir)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "repaired" in result.stdout, result.stdout + result.stderr
    server.start()
    try:
        wait_for(lambda: server.metrics()['groupcoord_partitions{status="owned"}'] == 8, 30, "every partition")
        assert server.metrics()["groupcoord_partitions_damaged"] == 0
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
        try:
            assert admin.list_group_offsets(victim)[victim][TopicPartition("t", 0)].offset == 59
        finally:
            admin.close()
    finally:
        assert server.stop() == 0
