"""``groupcoord dump-log`` run as a real command on real segment files."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from groupcoord.format import codec
from groupcoord.cli.dump_log import NO_SEGMENTS

from offsets_logs import every_kind
from codec_vectors import SEGMENT
from test_codec_iteration import _log_of_many_chunks


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "groupcoord.cli", "dump-log", *args],
        capture_output=True, text=True, timeout=60,
    )


def segment_dir(tmp_path: Path, data: bytes, partition: int = 12) -> Path:
    directory = tmp_path / f"__consumer_offsets-{partition}"
    directory.mkdir()
    path = directory / "00000000000000000000.log"
    path.write_bytes(data)
    return path


def consumer_group_batch() -> bytes:
    subscription = codec.encode_subscription(codec.ConsumerProtocolSubscription(["orders"], version=1))
    assignment = codec.encode_assignment(codec.ConsumerProtocolAssignment([("orders", [0, 2])], version=0))
    member = codec.MemberMetadata("m-1", None, "client", "/127.0.0.1", 300000, 45000, subscription, assignment)
    value = codec.GroupMetadataValue("consumer", 4, "range", "m-1", 1000, [member])
    return codec.write_batch(
        [(codec.encode_key(codec.GroupMetadataKey("orders-app")), codec.encode_value(value))],
        base_offset=4, timestamp=99,
    )


def test_one_json_line_per_record(tmp_path: Path) -> None:
    path = segment_dir(tmp_path, SEGMENT + consumer_group_batch())
    result = run(str(path))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["offset"] for line in lines] == [0, 1, 2, 3, 4]
    first = lines[0]
    assert first["partition"] == 12 and first["batch_position"] == 0 and first["file"] == str(path)
    assert first["record_type"] == 1
    assert first["key"] == {"record_type": 1, "group": "kafkesc-devcluster-group-id", "topic": "t01", "partition": 0}
    assert first["value"]["offset"] == 106
    assert lines[1]["value"] is None, "tombstone"
    assert lines[2]["is_transactional"] and lines[2]["producer_id"] == 4000
    assert lines[3]["control"] == "commit" and lines[3]["key"] is None
    member = lines[4]["value"]["members"][0]
    assert member["assignment_decoded"]["assigned_partitions"] == [["orders", [0, 2]]]
    assert member["subscription_decoded"]["topics"] == ["orders"]
    assert base64.b64decode(member["subscription"])[:2] == b"\x00\x01"


def test_every_record_kind_prints_as_json(tmp_path: Path) -> None:
    """Offset commits of every value version, group metadata, the new coordinator's records
    (uuids, nested partition lists), opaque types, transaction markers and legacy messages,
    in every compression: one parsable line per record, bytes as base64."""
    log = b"".join(every_kind(c, start_offset=1000 * i).data() for i, c in enumerate(codec.COMPRESSIONS))
    path = segment_dir(tmp_path, log)
    records = codec.decode_records(log)
    result = run(str(path))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(line["offset"], line["record_type"], line["control"]) for line in lines] == [
        (r.offset, r.key.record_type if r.key is not None else None, r.control) for r in records
    ]
    assert {line["record_type"] for line in lines} >= {0, 1, 2, 3, 4, 5, 6, 7, 8, 16}
    opaque = [line for line in lines if line["record_type"] not in (None, 0, 1, 2, 3, 4, 5, 6, 7, 8, 16)]
    assert opaque and all(base64.b64decode(line["key"]["data"]) for line in opaque)
    raw = run("--no-decode", str(path))
    assert raw.returncode == 0, raw.stderr
    batches = [json.loads(line) for line in raw.stdout.splitlines()]
    assert sum(len(b["records"]) for b in batches) == len(records)


def test_no_decode_prints_batches(tmp_path: Path) -> None:
    path = segment_dir(tmp_path, SEGMENT)
    result = run("--no-decode", str(path))
    assert result.returncode == 0, result.stderr
    batches = [json.loads(line) for line in result.stdout.splitlines()]
    assert [b["position"] for b in batches] == [0, 133, 241, 374]
    assert batches[3]["is_control"] and batches[0]["compression"] == "none"
    assert base64.b64decode(batches[0]["records"][0]["key"])[:2] == b"\x00\x01"
    assert [b["delete_horizon_ms"] for b in batches] == [None] * 4


def test_no_decode_prints_a_cleaned_batch_delete_horizon(tmp_path: Path) -> None:
    """As Kafka's DumpLogSegments prints ``deleteHorizonMs``: the base timestamp of a batch
    the cleaner marked, not a timestamp of its records."""
    cleaned = codec.write_records([(5, 1_000, b"k", None)], base_offset=5, delete_horizon_ms=86_400_000)
    result = run("--no-decode", str(segment_dir(tmp_path, cleaned)))
    [batch] = [json.loads(line) for line in result.stdout.splitlines()]
    assert batch["delete_horizon_ms"] == batch["base_timestamp"] == 86_400_000
    assert batch["records"][0]["timestamp"] == 1_000


def test_truncated_file_prints_what_is_valid_then_fails(tmp_path: Path) -> None:
    path = segment_dir(tmp_path, SEGMENT[:300])
    result = run(str(path))
    assert result.returncode == 1
    assert [json.loads(line)["offset"] for line in result.stdout.splitlines()] == [0, 1]
    assert "byte 241" in result.stderr and str(path) in result.stderr
    tolerant = run("--stop-at-corruption", str(path))
    assert tolerant.returncode == 0 and "byte 241" in tolerant.stderr


@pytest.mark.parametrize("decode", [True, False])
def test_a_long_compressed_segment_streams_up_to_its_corruption(tmp_path: Path, decode: bool) -> None:
    """Records (or with --no-decode, batches) are printed as a long segment (every
    compression, read ahead on a second thread) is decoded; a corrupt batch two thirds in ends
    them, reported with its position."""
    log = bytearray(_log_of_many_chunks())
    corrupt_at = codec.valid_prefix_length(log[: len(log) * 2 // 3])
    log[corrupt_at + 30] ^= 0xFF
    path = segment_dir(tmp_path, bytes(log))
    if decode:
        expected = [r.offset for r in codec.decode_records(bytes(log), stop_at_corruption=True)]
        assert 1000 < len(expected) < 6000
        result = run(str(path))
        printed = [json.loads(line)["offset"] for line in result.stdout.splitlines()]
    else:
        expected = [b.base_offset for b in codec.read_batches(bytes(log), stop_at_corruption=True)]
        assert 50 < len(expected) < 300
        result = run("--no-decode", str(path))
        printed = [json.loads(line)["base_offset"] for line in result.stdout.splitlines()]
    assert result.returncode == 1
    assert printed == expected
    assert f"byte {corrupt_at}" in result.stderr and str(path) in result.stderr


def test_a_reader_that_stops_early_ends_it_quietly(tmp_path: Path) -> None:
    """`dump-log FILE | head -1`: the pipe closes after the first line; no traceback."""
    path = segment_dir(tmp_path, _log_of_many_chunks())
    command = [sys.executable, "-m", "groupcoord.cli", "dump-log", str(path)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None and process.stderr is not None
        first = json.loads(process.stdout.readline())
        process.stdout.close()
        stderr = process.stderr.read()
        assert process.wait(timeout=60) == 1
    assert first["offset"] == 0
    assert stderr == ""


def test_output_that_cannot_be_written_is_named_without_a_traceback(tmp_path: Path) -> None:
    path = segment_dir(tmp_path, _log_of_many_chunks())
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "groupcoord.cli", "dump-log", str(path)],
                                stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == "groupcoord dump-log: cannot write the output: No space left on device\n"


def test_missing_file_and_a_directory_without_segments(tmp_path: Path) -> None:
    empty = tmp_path / "__consumer_offsets-3"
    empty.mkdir()
    (empty / "leader-epoch-checkpoint").write_text("0\n0\n")
    (tmp_path / "server.log").write_text("a broker's own log, not a segment\n")
    result = run(str(tmp_path / "nope.log"), str(empty), str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"groupcoord dump-log: {tmp_path / 'nope.log'}: No such file or directory",
        f"groupcoord dump-log: {empty}: {NO_SEGMENTS}",
        f"groupcoord dump-log: {tmp_path}: {NO_SEGMENTS}",
    ]


def test_a_directory_stands_for_its_segments_in_offset_order(tmp_path: Path) -> None:
    """A partition directory as a broker leaves it (side files skipped, segments by base
    offset), and a broker's log directory (every ``__consumer_offsets-N`` by partition, other
    topics' partitions left out)."""
    first = segment_dir(tmp_path, SEGMENT, partition=12)
    second = first.parent / "00000000000000000004.log"
    second.write_bytes(consumer_group_batch())
    first.with_suffix(".index").write_bytes(bytes(8))
    (first.parent / "leader-epoch-checkpoint").write_text("0\n0\n")
    other = segment_dir(tmp_path, SEGMENT, partition=2)
    (tmp_path / "orders-0").mkdir()
    (tmp_path / "orders-0" / "00000000000000000000.log").write_bytes(SEGMENT)

    result = run(str(first.parent))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(line["file"], line["offset"]) for line in lines] == (
        [(str(first), offset) for offset in range(4)] + [(str(second), 4)])

    result = run(str(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(line["partition"], line["offset"]) for line in lines] == (
        [(2, offset) for offset in range(4)] + [(12, offset) for offset in range(5)])
    assert {line["file"] for line in lines} == {str(other), str(first), str(second)}


def test_every_file_of_a_broker_partition_directory_is_named_or_decoded(tmp_path: Path) -> None:
    """``dump-log DIR/__consumer_offsets-N/*`` on a directory as a broker leaves it."""
    log = segment_dir(tmp_path, SEGMENT)
    side_files = {
        log.with_suffix(".index"): "offset index",
        log.with_suffix(".timeindex"): "time index",
        log.with_suffix(".txnindex"): "transaction index",
        log.parent / "00000000000000000004.snapshot": "producer state snapshot",
        log.parent / "leader-epoch-checkpoint": "leader epoch checkpoint",
        log.parent / "partition.metadata": "partition metadata file",
        log.with_suffix(".index.deleted"): "offset index",
        log.with_suffix(".timeindex.cleaned"): "time index",
        log.with_suffix(".index.swap"): "offset index",
        log.parent / "00000000000000000002.snapshot.deleted": "producer state snapshot",
    }
    (log.parent / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (log.parent / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    for path in side_files:
        if not path.exists():
            path.write_bytes(bytes(12))
    result = run(*sorted(str(p) for p in log.parent.iterdir()))
    assert result.returncode == 1
    assert sorted(result.stderr.splitlines()) == sorted(
        f"groupcoord dump-log: {path}: a Kafka {what}, not a log segment: dump-log reads the .log files"
        for path, what in side_files.items())
    assert [json.loads(line)["offset"] for line in result.stdout.splitlines()] == [0, 1, 2, 3]


def test_a_segment_a_broker_is_deleting_still_prints(tmp_path: Path) -> None:
    """Kafka renames a segment ``.log.deleted`` for ``file.delete.delay.ms`` before deleting
    it, and a cleaning's replacement is ``.log.cleaned`` then ``.log.swap``: still segments."""
    log = segment_dir(tmp_path, SEGMENT)
    for suffix in (".log.deleted", ".log.cleaned", ".log.swap"):
        renamed = log.with_suffix(suffix)
        renamed.write_bytes(log.read_bytes())
        result = run(str(renamed))
        assert result.returncode == 0, result.stderr
        assert [json.loads(line)["offset"] for line in result.stdout.splitlines()] == [0, 1, 2, 3]


def test_a_segment_of_another_topic_brings_a_hint(tmp_path: Path) -> None:
    """A data topic's records do not decode as coordinator records: the error says where
    the file is not."""
    data = codec.write_batch([(b"x", b"an order")], base_offset=0, timestamp=1)
    for directory in ("orders-0", "__consumer_offsets-0"):
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "00000000000000000000.log").write_bytes(data)
    other, ours = (run(str(tmp_path / d / "00000000000000000000.log")) for d in ("orders-0", "__consumer_offsets-0"))
    assert other.returncode == ours.returncode == 1
    assert other.stderr.endswith("its key ends early: int16 at byte 0 needs 2 bytes, 1 left"
                                 " (the file is not in a __consumer_offsets-N directory: is it another topic's?)\n")
    assert ours.stderr.endswith("1 left\n")
