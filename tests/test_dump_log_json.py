"""``groupcoord dump-log``'s lines, written by the codec (``codec.iter_segment_json``), held
byte for byte to the lines Python builds from the record objects and prints with
``json.dumps`` (``dump_log_reference``): every record kind, in every compression, decoded
and as batches, up to a corruption; and records drawn from the declaration."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from codec_vectors import SEGMENT
from dump_log_reference import reference_lines
from groupcoord.format import codec
from groupcoord.format.codec import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from offsets_logs import T0, LogBuilder, encoded, every_kind
from test_codec_iteration import _log_of_many_chunks
from test_record_declarations_property import drawn_records, key_object, value_object

# Every character class Python's encoder treats apart: quotes and backslashes, the short
# escapes, other control characters, DEL, Latin-1, the BMP, and beyond it (surrogate pairs).
AWKWARD = 'q"b\\s/\b\f\n\r\t\x00\x1f\x7f é\u2028\uffff😀𝄞'


def written_lines(path: Path, decode: bool, **kw: Any) -> list[str]:
    chunks = list(codec.iter_segment_json(path, decode=decode, **kw))
    text = b"".join(chunks).decode("ascii")
    assert text == "" or text.endswith("\n")
    return text.splitlines()


def check_same(path: Path, partition: int | None = None) -> int:
    """Both modes give the reference's lines; returns how many records there were."""
    records = written_lines(path, True, **({} if partition is None else {"partition": partition}))
    assert records == reference_lines(path, True, partition)
    assert written_lines(path, False) == reference_lines(path, False)
    return len(records)


def segment(tmp_path: Path, data: bytes, name: str = "00000000000000000000.log",
            directory: str = "__consumer_offsets-12") -> Path:
    (tmp_path / directory).mkdir(exist_ok=True)
    path = tmp_path / directory / name
    path.write_bytes(data)
    return path


def awkward_log(compression: str = "none") -> bytes:
    """Non-ASCII and control characters in every string, unknown tagged fields, members whose
    consumer-protocol bytes are empty or do not decode, other protocol types, control records
    of other kinds, headers."""
    sub = codec.encode_subscription(ConsumerProtocolSubscription(
        [AWKWARD, "t"], AWKWARD.encode(), [(AWKWARD, [0, -1])], 3, AWKWARD, 3))
    asg = codec.encode_assignment(ConsumerProtocolAssignment([(AWKWARD, [2**31 - 1])], b"\xff", 3))
    members = [
        MemberMetadata(AWKWARD, AWKWARD, AWKWARD, AWKWARD, 1, 2, sub, asg, ((7, b"x"), (9, b""))),
        MemberMetadata("empty", None, "c", "h", 3, 4, b"", b""),
        MemberMetadata("garbage", None, "c", "h", 3, 4, b"\x00\x01\x00\x00\x00\x09", b"\x00"),
        MemberMetadata("negative", None, "c", "h", 3, 4, b"\xff\xff", b"\x80\x00"),
    ]
    log = LogBuilder(compression)
    log.write([
        encoded(GroupMetadataKey(AWKWARD),
                GroupMetadataValue("consumer", 7, AWKWARD, None, T0, members, 4, ((3, b"\x00"),))),
        encoded(GroupMetadataKey("other"), GroupMetadataValue(AWKWARD, 1, None, AWKWARD, -1, members[1:], 3)),
        encoded(GroupMetadataKey("empty"), GroupMetadataValue("consumer", 0, None, None, -1, [], 4)),
        encoded(OffsetCommitKey(AWKWARD, AWKWARD, -5),
                OffsetCommitValue(-(2**63), AWKWARD, 2**63 - 1, -1, -1, 4, ((1, b"\x01\x02"),),
                                  topic_id="AAECAwQFBgcICQoL-_8ODw")),
        encoded(OffsetCommitKey(AWKWARD, "t", 0), None),
        (codec.encode_key(GroupMetadataKey("short")), None),
        (bytes.fromhex("7fff") + AWKWARD.encode(), b"\x00"),
    ])
    log.marker(5, commit=True)
    log.batches.append(codec.write_records(
        [(log.next_offset, T0, b"\x00\x00\x00\x02", b""), (log.next_offset + 1, T0, b"\x00\x00\x7f\x7f", None),
         (log.next_offset + 2, T0, None, None)],
        base_offset=log.next_offset, is_control=True, producer_id=5, producer_epoch=0,
        is_transactional=True))
    log.next_offset += 3
    headers = [(AWKWARD, AWKWARD.encode()), ("none", None), ("", b"")]
    log.batches.append(codec.write_records(
        [(log.next_offset, T0, codec.encode_key(GroupMetadataKey("h")), None, headers)],
        base_offset=log.next_offset, compression=compression, delete_horizon_ms=T0 + 1))
    return log.data()


@pytest.mark.parametrize("compression", codec.COMPRESSIONS)
def test_every_record_kind_in_every_compression(tmp_path: Path, compression: str) -> None:
    path = segment(tmp_path, every_kind(compression).data() + awkward_log(compression) + SEGMENT)
    assert check_same(path) > 40


def test_a_long_log_read_ahead_on_a_second_thread(tmp_path: Path) -> None:
    """Several mebibytes: lines given a chunk at a time, each chunk whole lines."""
    path = segment(tmp_path, _log_of_many_chunks())
    chunks = list(codec.iter_segment_json(path))
    assert len(chunks) > 2 and all(chunk.endswith(b"\n") for chunk in chunks)
    check_same(path)


@pytest.mark.parametrize("decode", [True, False])
def test_lines_up_to_a_corruption(tmp_path: Path, decode: bool) -> None:
    log = bytearray(_log_of_many_chunks())
    corrupt_at = codec.valid_prefix_length(log[: len(log) // 2])
    log[corrupt_at + 30] ^= 0xFF
    path = segment(tmp_path, bytes(log))
    written: list[bytes] = []
    with pytest.raises(codec.CorruptRecordError) as raised:
        written.extend(codec.iter_segment_json(path, decode=decode))
    reader = codec.iter_segment if decode else codec.iter_segment_batches
    with pytest.raises(codec.CorruptRecordError) as expected:
        list(reader(path))  # type: ignore[operator]
    assert str(raised.value) == str(expected.value)
    assert raised.value.__notes__ == expected.value.__notes__
    assert b"".join(written).decode().splitlines() == reference_lines(path, decode)
    tolerant = list(codec.iter_segment_json(path, decode=decode, stop_at_corruption=True))
    assert b"".join(tolerant) == b"".join(written)


def test_a_record_that_does_not_decode_ends_the_lines_before_its_batch(tmp_path: Path) -> None:
    good = codec.write_batch([encoded(GroupMetadataKey("g"), None)], base_offset=0, timestamp=1)
    bad = codec.write_batch([encoded(GroupMetadataKey("g"), None), (b"\x00\x02\x00\x09g", None)],
                            base_offset=1, timestamp=1)
    path = segment(tmp_path, good + bad)
    lines: list[bytes] = []
    with pytest.raises(codec.CorruptRecordError, match="record at offset 2"):
        lines.extend(codec.iter_segment_json(path))
    assert b"".join(lines).decode().splitlines() == reference_lines(path, True)[:1]
    assert len(b"".join(codec.iter_segment_json(path, decode=False)).splitlines()) == 2


def test_file_names_as_python_prints_them(tmp_path: Path) -> None:
    """The ``file`` member is ``str(path)`` through Python's encoder: escapes, non-ASCII, and
    the lone surrogates of a name that is not UTF-8."""
    names = [f"{AWKWARD.replace('/', '').replace(chr(0), '')}.log"]
    if os.uname().sysname == "Linux":
        names.append(os.fsdecode(b"\xff\xfe-latin1.log"))
    for name in names:
        path = segment(tmp_path, SEGMENT, name=name)
        [line, *_] = written_lines(path, True)
        assert line.startswith('{"file":' + json.dumps(str(path)) + ",")
        check_same(path)


def test_the_partition_is_the_directorys_or_given(tmp_path: Path) -> None:
    path = segment(tmp_path, SEGMENT, directory="orders-3")
    assert json.loads(written_lines(path, True)[0])["partition"] == -1
    assert json.loads(written_lines(path, True, partition=9)[0])["partition"] == 9
    check_same(path, partition=9)


def test_an_empty_segment_has_no_lines(tmp_path: Path) -> None:
    path = segment(tmp_path, b"")
    assert list(codec.iter_segment_json(path)) == list(codec.iter_segment_json(path, decode=False)) == []


def test_a_missing_file_raises_at_once(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as raised:
        codec.iter_segment_json(tmp_path / "nope.log")
    assert raised.value.filename == str(tmp_path / "nope.log")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(drawn_records(), min_size=1, max_size=8), st.integers(1, 3),
       st.sampled_from(codec.COMPRESSIONS))
def test_drawn_records_of_every_type(drawn: list[dict[str, Any]], batches: int, compression: str) -> None:
    keys = [key_object(d) for d in drawn]
    values = [value_object(d, k) for d, k in zip(drawn, keys)]
    records = [encoded(k, v) for k, v in zip(keys, values)]
    cut = max(1, len(records) // batches)
    log = b"".join(codec.write_batch(records[i:i + cut], base_offset=i, timestamp=1_000, compression=compression)
                   for i in range(0, len(records), cut))
    with tempfile.TemporaryDirectory() as tmp:
        check_same(segment(Path(tmp), log))
