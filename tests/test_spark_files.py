"""Finding segments, cutting them at batch boundaries, and reading splits with bad batches:
the data source's parts that need no Spark."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from groupcoord.format import codec
from groupcoord.format.codec import OffsetCommitKey, OffsetCommitValue
from groupcoord.spark.files import find_segments, plan, plan_splits
from groupcoord.format.compaction import compact
from groupcoord.spark.scan import BadBatch, CorruptSegmentError, scan
from groupcoord.storage import read_directory

from offsets_logs import LogBuilder, encoded, every_kind, write_log_dir
from replayed_state import compacted_view
from test_storage_cleaner import NOW, Crash, Fixture, crash_at, workload_log
from test_storage_cleaner import config as cleaner_config


def commits(n: int, per_batch: int = 20, compression: str = "none") -> LogBuilder:
    log = LogBuilder(compression)
    for i in range(n):
        log.write([encoded(OffsetCommitKey(f"group-{i % 7}", "orders", p), OffsetCommitValue(i * 100 + p, "x" * 30))
                   for p in range(per_batch)])
    return log


def rows(items: list[object]) -> list[dict[str, object]]:
    return [r for b in items if not isinstance(b, BadBatch) for r in b.to_pylist()]  # type: ignore[attr-defined]


def test_import_without_pyspark() -> None:
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "import groupcoord, groupcoord.format.compaction, groupcoord.spark, groupcoord.spark.files, groupcoord.spark.scan\n"
            "try:\n    import groupcoord.spark.source\nexcept ImportError: print('source needs pyspark')")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "source needs pyspark"


def test_every_path_form(tmp_path: Path) -> None:
    paths = write_log_dir(tmp_path / "kafka", {0: every_kind().batches, 7: commits(30).batches}, segment_bytes=4000)
    everything = find_segments([str(tmp_path / "kafka")])
    assert [s.path for s in everything] == [str(p) for p in paths] and len(paths) > 2
    assert {s.partition for s in everything} == {0, 7}
    assert everything[1].base_offset == int(paths[1].stem) > 0
    assert find_segments([str(tmp_path / "kafka" / "__consumer_offsets-7")]) == everything[-len(
        [p for p in paths if p.parent.name.endswith("-7")]):]
    assert find_segments([str(paths[0])]) == everything[:1]
    assert find_segments([str(tmp_path / "kafka" / "__consumer_offsets-*" / "0000*.log")]) == everything
    assert find_segments([str(paths[0]), str(tmp_path / "kafka")]) == everything
    with pytest.raises(FileNotFoundError, match="nowhere"):
        find_segments([str(tmp_path / "nowhere")])


def test_copies_of_one_partition_from_two_brokers_are_refused(tmp_path: Path) -> None:
    """``__consumer_offsets`` is replicated: each broker's log directory holds the same
    partitions, and reading two would give every record twice."""
    for broker in ("broker-1", "broker-2"):
        write_log_dir(tmp_path / broker, {0: commits(3).batches, 5: commits(3).batches})
    with pytest.raises(ValueError, match=(
            f"partition 0 is in two directories, {tmp_path / 'broker-1' / '__consumer_offsets-0'} and "
            f"{tmp_path / 'broker-2' / '__consumer_offsets-0'} .*read one copy of each partition")):
        find_segments([str(tmp_path / "broker-*")])
    one_each = [str(tmp_path / "broker-1" / "__consumer_offsets-0"), str(tmp_path / "broker-2" / "__consumer_offsets-5")]
    assert [s.partition for s in find_segments(one_each)] == [0, 5]


def test_big_segment_splits_at_boundaries_with_or_without_index(tmp_path: Path) -> None:
    log = commits(400)
    [path] = write_log_dir(tmp_path, {3: log.batches})
    [segment] = find_segments([str(path)])
    boundaries = {b.position for b in codec.read_segment(path)}
    with_index = plan_splits(segment, 10_000)
    path.with_suffix(".index").unlink()
    walked = plan_splits(segment, 10_000)
    path.with_suffix(".index").write_bytes(bytes(range(256)) * 4)  # an index that lies
    lying = plan_splits(segment, 10_000)
    for splits in (with_index, walked, lying):
        assert len(splits) > 5
        assert splits[0].start == 0 and splits[-1].end == segment.size
        assert all(a.end == b.start for a, b in zip(splits, splits[1:]))
        assert all(s.start in boundaries and s.end - s.start >= 10_000 for s in splits[:-1])
        assert rows([b for s in splits for b in scan(s)]) == codec.decode_arrow(path.read_bytes(), partition=3).to_pylist()
    assert walked == lying


def damaged_log(tmp_path: Path) -> tuple[Path, list[codec.RecordBatch]]:
    """A segment of every kind of batch, in gzip, with the 4th batch's CRC broken and the
    8th batch's header overwritten (its length, and the magic)."""
    log = every_kind("gzip")
    [path] = write_log_dir(tmp_path, {2: log.batches}, with_index=False)
    batches = codec.read_segment(path)
    data = bytearray(path.read_bytes())
    data[batches[3].position + 40] ^= 0xFF
    data[batches[7].position + 8: batches[7].position + 17] = b"\xff" * 9
    path.write_bytes(bytes(data))
    return path, batches


def test_permissive_skips_bad_batches_and_says_where(tmp_path: Path) -> None:
    path, batches = damaged_log(tmp_path)
    [split] = plan([str(path)], 1 << 20)
    items = list(scan(split, "PERMISSIVE"))
    bad = [b for b in items if isinstance(b, BadBatch)]
    assert [(b.file, b.position, b.length) for b in bad] == [
        (str(path), batches[3].position, batches[3].size),
        (str(path), batches[7].position, batches[8].position - batches[7].position),
    ]
    assert "CRC-32C" in bad[0].reason and "unknown magic" in bad[1].reason
    assert bad[0].base_offset == batches[3].base_offset and bad[0].partition == 2
    expected = [r for b in batches if b.position not in (batches[3].position, batches[7].position)
                for r in codec.decode_arrow(path.read_bytes()[b.position:b.position + b.size], partition=2,
                                            position=b.position).to_pylist()]
    assert rows(items) == expected
    assert rows(list(scan(split, "DROPMALFORMED"))) == expected
    assert not any(isinstance(b, BadBatch) for b in scan(split, "DROPMALFORMED"))
    with pytest.raises(CorruptSegmentError) as info:
        list(scan(split, "FAILFAST"))
    assert info.value.file == str(path) and info.value.position == batches[3].position
    assert f"{path} at byte {batches[3].position}" in str(info.value)


def test_truncated_tail_and_garbage_without_a_next_batch(tmp_path: Path) -> None:
    log = commits(5)
    [path] = write_log_dir(tmp_path, {0: log.batches}, with_index=False)
    full = path.read_bytes()
    last = codec.read_batches(full)[-1]
    path.write_bytes(full[:-10])
    [split] = plan([str(path)], 1 << 20)
    items = list(scan(split))
    assert isinstance(items[-1], BadBatch) and items[-1].position == last.position
    assert items[-1].length == last.size - 10 and "runs past the end" in items[-1].reason
    assert len(rows(items)) == 4 * 20
    path.write_bytes(b"\x00" * 100)
    [split] = plan([str(path)], 1 << 20)
    [only] = list(scan(split))
    assert isinstance(only, BadBatch) and (only.position, only.length) == (0, 100)


@pytest.mark.parametrize("magic", [0, 1])
def test_a_bad_header_in_a_legacy_log_ends_at_the_next_valid_message(tmp_path: Path, magic: int) -> None:
    """Kafka 0.10's message sets: a broken length field skips its message alone, as a broken
    v2 header skips to the next v2 batch."""
    log = LogBuilder()
    for i in range(100):
        log.legacy(codec.encode_key(OffsetCommitKey("g", "t", i)),
                   codec.encode_value(OffsetCommitValue(i, version=0)), magic)
    [path] = write_log_dir(tmp_path, {0: log.batches}, with_index=False)
    data = bytearray(path.read_bytes())
    broken = codec.read_batches(bytes(data))[50]
    data[broken.position + 8:broken.position + 12] = (3).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    [split] = plan([str(path)], 1 << 20)
    items = list(scan(split))
    [bad] = [b for b in items if isinstance(b, BadBatch)]
    assert (bad.position, bad.length) == (broken.position, broken.size)
    assert "below the minimum" in bad.reason
    assert [r["key_partition"] for r in rows(items)] == [i for i in range(100) if i != 50]


def test_a_segment_gone_since_planning_is_a_clear_error(tmp_path: Path) -> None:
    [path] = write_log_dir(tmp_path, {0: commits(3).batches})
    [split] = plan([str(tmp_path)], 1 << 20)
    path.unlink()
    with pytest.raises(FileNotFoundError, match="is gone since the query was planned.*read a copy"):
        list(scan(split))


def test_chunks_are_whole_batches_of_the_codec_schema(tmp_path: Path) -> None:
    log = commits(200, compression="zstd")
    [path] = write_log_dir(tmp_path, {1: log.batches})
    [split] = plan([str(path)], 1 << 30)
    chunks = list(scan(split, chunk_bytes=2_000))
    assert len(chunks) > 10
    assert all(isinstance(c, pa.RecordBatch) and c.schema == codec.arrow_schema() for c in chunks)
    assert sum(c.num_rows for c in chunks) == 200 * 20


def test_a_directory_caught_mid_cleaning_reads_as_recovery_would_arrange_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cleaning interrupted at each of its renames: once the ``.log.swap`` is committed and
    some of the segments it replaces are renamed ``.deleted``, reading the ``.log`` files alone
    would lose records. The source reads what the storage layer reads (and the same state)."""
    original = workload_log(tmp_path / "original", 7, 400, cleaner_config())
    original.log.close()
    history = [item for split in plan([str(original.directory)], 1 << 20) for item in scan(split)]
    expected = compacted_view(compact(history).to_pylist())
    mid_swap = 0
    for n in range(1, 12):
        case = tmp_path / f"replace-{n}"
        shutil.copytree(original.directory.parent, case)
        f = Fixture(case, cleaner_config())
        crash_at(monkeypatch, "replace", os.replace, n)
        try:
            with pytest.raises(Crash):
                f.cleaner.clean(f.log, NOW)
        finally:
            monkeypatch.undo()
        for segment in f.log.segments:
            segment.close()
        names = [p.name for p in f.directory.iterdir()]
        mid_swap += any(n.endswith(".swap") for n in names) and any(n.endswith(".deleted") for n in names)
        stored = [r.offset for chunk in read_directory(f.directory) for r in chunk]
        for max_bytes in (1 << 20, 1000):
            items = [item for split in plan([str(case)], max_bytes) for item in scan(split)]
            assert [r["offset"] for r in rows(items)] == stored, f"replace #{n}"
        assert {r["partition"] for r in rows(items)} == {5}
        assert compacted_view(compact(items).to_pylist()) == expected, f"replace #{n}"
        shutil.rmtree(case)
    assert mid_swap >= 3, "crashes between the swap's commit and its completion"
