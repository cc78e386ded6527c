"""Bad input to the ``groupcoord`` command line: a clear message and an exit status, never a
traceback. Each case runs the command in a subprocess."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from log_faults import corrupt_first_segment, write_commits

from groupcoord.config import Config


def groupcoord(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "groupcoord.cli", *args],
        capture_output=True, text=True, timeout=60,
    )


def test_inspect_of_a_log_with_a_corrupt_segment_says_where(tmp_path: Path) -> None:
    config = Config.from_properties({"offsets.topic.segment.bytes": 1024, "log.cleaner.enable": False})
    asyncio.run(write_commits(tmp_path, "g", 0, 40, config))
    corrupt_first_segment(tmp_path / "__consumer_offsets-0")
    result = groupcoord("inspect", str(tmp_path))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "00000000000000000000.log: corrupt batch at byte 0" in result.stderr


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
