"""Bad input to the ``groupcoord`` command line: a clear message and an exit status, never a
traceback. Each case runs the command in a subprocess."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from log_faults import corrupt_first_segment, write_commits

from groupcoord.config import Config
from groupcoord.partitioner import partition_for
from groupcoord.server.topics import TopicRegistry


def groupcoord(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "groupcoord.cli", *args],
        capture_output=True, text=True, timeout=60,
    )


def test_inspect_of_a_log_with_a_corrupt_segment_says_where(tmp_path: Path) -> None:
    """The damaged partition is left out as the server refuses it (status 3), the others
    printed."""
    config = Config.from_properties({"offsets.topic.segment.bytes": 1024, "log.cleaner.enable": False})
    asyncio.run(write_commits(tmp_path, "g", 0, 40, config))
    asyncio.run(write_commits(tmp_path, "h", 1, 3, config))
    corrupt_first_segment(tmp_path / "__consumer_offsets-0")
    result = groupcoord("inspect", "--json", str(tmp_path))
    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    assert "00000000000000000000.log: damaged at byte 0" in result.stderr
    assert f"groupcoord repair {tmp_path} --partition 0" in result.stderr
    data = json.loads(result.stdout)
    assert [(o["group"], o["offset"]) for o in data["offsets"]] == [("h", 2)]
    [damaged] = data["damaged_partitions"]
    assert (damaged["partition"], damaged["position"]) == (0, 0) and "CRC" in damaged["reason"]


def test_inspect_of_one_partition_directory_reads_that_partition(tmp_path: Path) -> None:
    config = Config.from_properties({"log.cleaner.enable": False})
    asyncio.run(write_commits(tmp_path, "g", 0, 3, config))
    asyncio.run(write_commits(tmp_path, "h", 1, 5, config))
    result = groupcoord("inspect", "--json", str(tmp_path / "__consumer_offsets-1"))
    assert result.returncode == 0, result.stderr
    assert [(o["group"], o["offset"]) for o in json.loads(result.stdout)["offsets"]] == [("h", 4)]
    loose = tmp_path / "copied"
    loose.mkdir()
    for segment in (tmp_path / "__consumer_offsets-1").glob("*.log"):
        (loose / segment.name).write_bytes(segment.read_bytes())
    result = groupcoord("inspect", str(loose))
    assert result.returncode == 1
    assert result.stderr == (f"groupcoord inspect: {loose} holds segments but is not named __consumer_offsets-N, "
                             "so their partition is unknown: give its log directory, or name it by partition\n")


def test_inspect_hashes_groups_by_the_partition_count_our_metadata_file_keeps(tmp_path: Path) -> None:
    # serve keeps __consumer_offsets' count in metadata.json; inspect used to need --set too.
    TopicRegistry(tmp_path).settle_offsets_topic_partitions(3, [])
    config = Config.from_properties({"log.cleaner.enable": False})
    for group in "abc":
        asyncio.run(write_commits(tmp_path, group, partition_for(group, 3), 2, config))
    for where in (tmp_path, tmp_path / "__consumer_offsets-2"):
        result = groupcoord("inspect", "--json", str(where))
        assert (result.returncode, result.stderr) == (0, "")
        groups = json.loads(result.stdout)["groups"]
        assert {(g["group"], g["partition"]) for g in groups} <= {("a", 1), ("b", 2), ("c", 0)}
        assert groups
    result = groupcoord("inspect", "--json", str(tmp_path), "--set", "offsets.topic.num.partitions=7")
    assert result.returncode == 0
    assert result.stderr == ("groupcoord inspect: warning: offsets.topic.num.partitions=7 is ignored: "
                             f"{tmp_path / 'metadata.json'} keeps 3, the count __consumer_offsets "
                             "was created with\n")
    assert [(g["group"], g["partition"]) for g in json.loads(result.stdout)["groups"]] == [
        ("a", 1), ("b", 2), ("c", 0)]


def test_inspect_output_that_cannot_be_written_ends_without_a_traceback(tmp_path: Path) -> None:
    config = Config.from_properties({"log.cleaner.enable": False})
    asyncio.run(write_commits(tmp_path, "g", 0, 3, config))
    command = [sys.executable, "-m", "groupcoord.cli", "inspect", str(tmp_path), "--set", "offsets.topic.num.partitions=1"]
    with open("/dev/full", "w") as full:
        result = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == "groupcoord inspect: cannot write the output: No space left on device\n"
    # `inspect DIR | head`, the reader gone before the tables are written: nothing to tell.
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        stderr = process.stderr.read()
        assert process.wait(timeout=60) in (0, 1)
    assert stderr == ""


@pytest.mark.parametrize("command", ["inspect", "serve"])
def test_a_config_file_that_cannot_be_read_is_a_usage_error(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "missing.properties"
    arguments = [str(tmp_path)] if command == "inspect" else ["--port", "0", "--data-dir", str(tmp_path)]
    result = groupcoord(command, *arguments, "--config", str(missing))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"cannot read --config {missing}: No such file or directory" in result.stderr


def test_an_unknown_log_level_is_a_usage_error(tmp_path: Path) -> None:
    result = groupcoord("serve", "--port", "0", "--data-dir", str(tmp_path), "--log-level", "bogus")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "--log-level: invalid choice: 'BOGUS'" in result.stderr


def test_usage_errors_show_the_commands_usage_and_unknown_settings_are_named(tmp_path: Path) -> None:
    result = groupcoord("inspect", str(tmp_path), "--set", "offsets.topic.num.partitions=abc")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: groupcoord inspect ")
    assert "groupcoord inspect: error: offsets.topic.num.partitions must be int, not 'abc'" in result.stderr
    result = groupcoord("serve", "--port", "0", "--data-dir", str(tmp_path), "--topic", "orders")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: groupcoord serve ")
    (tmp_path / "__consumer_offsets-0").mkdir()
    result = groupcoord("inspect", str(tmp_path), "--set", "bogus.setting=1")
    assert (result.returncode, result.stderr) == (0, "groupcoord inspect: ignoring unknown setting bogus.setting\n")


def test_inspect_of_a_directory_without_partitions_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "server.log").write_text("a broker's own log, not a segment\n")
    result = groupcoord("inspect", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr == (f"groupcoord inspect: {tmp_path} has no __consumer_offsets-N directories: "
                             "give a broker's log directory, ours, or one such partition directory\n")
