"""The ``consumer_offsets`` data source in a real local Spark (local[2]) on logs written with the
codec: every compression and record type, big segments split across tasks, both views, bad
batches in each mode, and the "who owned partition P at time T" query."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import PySparkException
from pyspark.sql.pandas.types import from_arrow_schema

import groupcoord.spark
from groupcoord.cli import inspect
from groupcoord.format import codec
from groupcoord.format.codec import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey, OffsetCommitValue
from groupcoord.format.compaction import compact
from groupcoord.config import Config
from groupcoord.spark.scan import CORRUPT_RECORD_TYPE
from groupcoord.storage import read_directory

from offsets_logs import LogBuilder, consumer_members, encoded, every_kind, write_log_dir
from replayed_state import compacted_view, coordinator_view, latest_other_records, load
from test_storage_cleaner import NOW, Crash, Fixture, commit, crash_at
from test_storage_cleaner import config as cleaner_config

pytestmark = pytest.mark.timeout(600)


def collect(df: Any) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.orderBy("partition", "offset").collect()]


def strip(rows: list[dict[str, Any]], column: str = "_corrupt_record") -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != column} for r in rows]


@pytest.fixture(scope="module")
def every_kind_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Partition N holds every record kind in compression N, twice (offsets go on), in
    segments of about 3 KB, with indexes."""
    root = tmp_path_factory.mktemp("every-kind")
    partitions = {}
    for i, compression in enumerate(codec.COMPRESSIONS):
        first = every_kind(compression)
        second = every_kind(compression, start_offset=first.next_offset)
        partitions[i] = first.batches + second.batches
    write_log_dir(root, partitions, segment_bytes=3000)
    return root


def test_history_is_every_record_in_the_codec_schema(spark: Any, every_kind_dir: Path) -> None:
    df = spark.read.format("consumer_offsets").load(str(every_kind_dir))
    assert df.schema == from_arrow_schema(codec.arrow_schema().append(pa.field("_corrupt_record", CORRUPT_RECORD_TYPE)))
    rows = collect(df)
    expected = [r for path in sorted(every_kind_dir.glob("*/*.log"))
                for r in codec.decode_segment_arrow(path).to_pylist()]
    expected.sort(key=lambda r: (r["partition"], r["offset"]))
    assert strip(rows) == expected and all(r["_corrupt_record"] is None for r in rows)
    assert len(rows) == 5 * 60 and df.rdd.getNumPartitions() == 1, "its 11 small segments packed in one task"
    kinds = {(r["record_type"], r["control"], r["is_tombstone"]) for r in rows}
    assert {(None, "commit", False), (None, "abort", False), (1, None, True), (2, None, True)} <= kinds
    assert {r["record_type"] for r in rows} == {None, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16}
    assert {r["value_version"] for r in rows if r["record_type"] == 2 and not r["is_tombstone"]} == {0, 1, 2, 3, 4}
    failfast = spark.read.format("consumer_offsets").option("mode", "FAILFAST").load(str(every_kind_dir))
    assert "_corrupt_record" not in failfast.columns and collect(failfast) == expected


def test_compacted_view_is_the_replayed_state_however_segments_are_cut(spark: Any, every_kind_dir: Path) -> None:
    history, loaded, others = {}, {}, {}
    for partition in range(5):
        segments = sorted((every_kind_dir / f"__consumer_offsets-{partition}").glob("*.log"))
        records = [r for path in segments for r in codec.decode_segment(path)]
        loaded[partition] = coordinator_view(load({partition: records}))
        others[partition] = sorted(latest_other_records(records).values())
        history.update({(partition, r["offset"]): r for path in segments
                        for r in codec.decode_segment_arrow(path).to_pylist()})
    for split_bytes in (1 << 30, 700):
        df = (spark.read.format("consumer_offsets").option("view", "compacted")
              .option("maxSplitBytes", split_bytes).load(str(every_kind_dir)))
        rows = strip(collect(df))
        assert len(rows) > 5 * 20 and rows == [history[(r["partition"], r["offset"])] for r in rows]
        for partition in range(5):
            mine = [r for r in rows if r["partition"] == partition]
            assert compacted_view(mine) == loaded[partition]
            assert [r["offset"] for r in mine if r["record_type"] > 2] == others[partition]
        assert df.rdd.getNumPartitions() == 5
        history_df = spark.read.format("consumer_offsets").option("maxSplitBytes", split_bytes).load(str(every_kind_dir))
        assert strip(collect(groupcoord.spark.compacted(history_df))) == rows


def big_segment(tmp_path: Path, with_index: bool) -> Path:
    log = LogBuilder("lz4")
    for i in range(300):
        log.write([encoded(OffsetCommitKey(f"g{i % 5}", "orders", p), OffsetCommitValue(i, "")) for p in range(8)],
                  producer_id=77 if i % 10 == 3 else -1)
        if i % 10 == 6:
            log.marker(77, commit=i % 20 == 6)
    write_log_dir(tmp_path, {4: log.batches}, with_index=with_index)
    return tmp_path


@pytest.mark.parametrize("with_index", [True, False])
def test_big_segment_is_read_by_several_tasks(spark: Any, tmp_path: Path, with_index: bool) -> None:
    root = big_segment(tmp_path, with_index)
    [path] = root.glob("*/*.log")
    whole = codec.decode_segment_arrow(path)
    history = spark.read.format("consumer_offsets").option("maxSplitBytes", 4096).load(str(root))
    assert history.rdd.getNumPartitions() >= path.stat().st_size // 4096 - 1 > 5
    assert strip(collect(history)) == whole.to_pylist()
    compacted = (spark.read.format("consumer_offsets").option("view", "compacted")
                 .option("maxSplitBytes", 4096).load(str(root)))
    assert strip(collect(compacted)) == compact([whole]).to_pylist()
    assert strip(collect(groupcoord.spark.compacted(history))) == compact([whole]).to_pylist()


def test_small_segments_are_packed_into_few_tasks(spark: Any, tmp_path: Path) -> None:
    logs = {}
    for partition in range(3):
        log = LogBuilder("none")
        for i in range(60):
            log.write([encoded(OffsetCommitKey(f"g{i % 4}", "orders", p), OffsetCommitValue(i, "")) for p in range(3)])
        logs[partition] = log.batches
    segments = write_log_dir(tmp_path, logs, segment_bytes=600)
    assert len(segments) == 60
    history = spark.read.format("consumer_offsets").load(str(tmp_path))
    assert history.rdd.getNumPartitions() == 2, "each small segment counts 4 MiB: 31 fit in 128 MiB"
    rows = strip(collect(history))
    assert rows == [r for s in segments for r in codec.decode_segment_arrow(s).to_pylist()]
    tasks = spark.read.format("consumer_offsets").option("maxSplitBytes", (4 << 20) * 10).load(str(tmp_path))
    assert tasks.rdd.getNumPartitions() == -(-len(segments) // 9) and strip(collect(tasks)) == rows
    compacted = spark.read.format("consumer_offsets").option("view", "compacted").load(str(tmp_path))
    assert collect(groupcoord.spark.compacted(tasks)) == collect(compacted), "runs that span log partitions"


def damaged(tmp_path: Path) -> tuple[Path, list[codec.RecordBatch]]:
    log = every_kind("snappy")
    [path] = write_log_dir(tmp_path, {6: log.batches})
    batches = codec.read_segment(path)
    data = bytearray(path.read_bytes())
    data[batches[2].position + 30] ^= 0x55
    path.write_bytes(bytes(data))
    return path, batches


def test_modes_for_a_corrupt_batch(spark: Any, tmp_path: Path) -> None:
    path, batches = damaged(tmp_path)
    bad = batches[2]
    reader = spark.read.format("consumer_offsets")
    rows = collect(reader.load(str(path)))
    [report] = [r for r in rows if r["_corrupt_record"] is not None]
    assert report["_corrupt_record"] == {"file": str(path), "position": bad.position, "length": bad.size,
                                         "reason": report["_corrupt_record"]["reason"]}
    assert "CRC" in report["_corrupt_record"]["reason"]
    assert (report["partition"], report["offset"], report["batch_position"]) == (6, bad.base_offset, bad.position)
    good = [r for r in rows if r["_corrupt_record"] is None]
    assert len(good) == 30 - len(bad.records)
    assert bad.base_offset not in {r["offset"] for r in good}
    dropped = collect(reader.option("mode", "DROPMALFORMED").load(str(path)))
    assert dropped == strip(good)
    compacted = collect(reader.option("mode", "PERMISSIVE").option("view", "compacted").load(str(path)))
    assert [r["_corrupt_record"]["position"] for r in compacted if r["_corrupt_record"]] == [bad.position]
    history = spark.read.format("consumer_offsets").load(str(path))
    assert collect(groupcoord.spark.compacted(history)) == compacted
    renamed = spark.read.format("consumer_offsets").option("columnNameOfCorruptRecord", "bad").load(str(path))
    assert renamed.columns[-1] == "bad" and renamed.where("bad IS NOT NULL").count() == 1
    assert strip(collect(groupcoord.spark.compacted(renamed)), "bad") == strip(compacted), \
        "the renamed column is found in the history's schema"
    with pytest.raises(PySparkException, match=f"{path} at byte {bad.position}"):
        reader.option("mode", "FAILFAST").option("view", "history").load(str(path)).collect()


def test_bad_options_and_paths_are_clear_errors(spark: Any, tmp_path: Path) -> None:
    for option, value, message in (("view", "latest", "view must be one of"), ("mode", "lenient", "mode must be"),
                                   ("maxSplitBytes", "-1", "maxSplitBytes must be"),
                                   ("columnNameOfCorruptRecord", "Group",
                                    "columnNameOfCorruptRecord 'Group' must be a new column's name, not that of "
                                    "the column 'group'")):
        with pytest.raises(PySparkException, match=message):
            spark.read.format("consumer_offsets").option(option, value).load(str(tmp_path)).collect()
    with pytest.raises(PySparkException, match="path does not exist"):
        spark.read.format("consumer_offsets").load(str(tmp_path / "missing")).collect()
    with pytest.raises(PySparkException, match="no __consumer_offsets segments under"):
        spark.read.format("consumer_offsets").load(str(tmp_path)).collect()
    (tmp_path / "__consumer_offsets-0").mkdir()
    assert spark.read.format("consumer_offsets").load(str(tmp_path)).count() == 0, "an empty partition"
    with pytest.raises(PySparkException, match="unknown option 'veiw'; the options are path, paths, view"):
        spark.read.format("consumer_offsets").option("veiw", "compacted").load(str(tmp_path)).collect()
    with pytest.raises(PySparkException, match="option 'paths' is a JSON list of paths"):
        spark.read.format("consumer_offsets").option("paths", str(tmp_path)).load().collect()
    with pytest.raises(PySparkException, match="the source's schema is fixed"):
        spark.read.format("consumer_offsets").schema("partition int, offset long").load(str(tmp_path)).collect()


def test_paths_as_uris_brace_globs_and_files_that_are_not_segments(spark: Any, tmp_path: Path) -> None:
    log = LogBuilder("none")
    for partition in range(3):
        log.write([encoded(OffsetCommitKey("g", "t", partition), OffsetCommitValue(partition))])
    [segment] = write_log_dir(tmp_path, {0: log.batches})
    write_log_dir(tmp_path, {1: log.batches[:1], 2: log.batches[:2]})
    read = spark.read.format("consumer_offsets")
    assert read.load(f"file://{tmp_path}").count() == 6
    assert read.load(f"file:{tmp_path}/__consumer_offsets-0").count() == 3
    assert read.load(str(tmp_path / "__consumer_offsets-{0,2}")).count() == 5
    assert read.load(str(tmp_path / "__consumer_offsets-{1,{0,2}}/*.log")).count() == 6
    swap = segment.with_name(segment.name + ".swap")
    shutil.copy(segment, swap)
    assert read.load(str(swap)).count() == 3, "a cleaning's .log.swap named on its own is a segment"
    for not_a_segment, message in ((segment.with_suffix(".index"), "is not a log segment"),
                                   (tmp_path.parent, "no __consumer_offsets segments under")):
        with pytest.raises(PySparkException, match=message):
            read.load(str(not_a_segment)).collect()
    with pytest.raises(PySparkException, match="only local paths and file: URIs"):
        read.load("hdfs://namenode/kafka-logs").collect()


OWNER_QUERY = """
WITH latest AS (
  SELECT *, row_number() OVER (PARTITION BY `group` ORDER BY offset DESC) AS rn
  FROM offsets WHERE record_type = 2 AND timestamp <= {at})
SELECT `group`, generation, m.member_id, m.client_host
FROM latest
  LATERAL VIEW explode(members) AS m
  LATERAL VIEW explode(m.assigned_partitions) AS a
WHERE rn = 1 AND a.topic = '{topic}' AND array_contains(a.partitions, {partition})
"""


def test_which_member_owned_partition_p_at_time_t(spark: Any, tmp_path: Path) -> None:
    log = LogBuilder("zstd")
    stamps = []
    for generation, size in enumerate((2, 3, 1), start=1):  # three rebalances of group "billing"
        stamps.append(log.timestamp)
        members = consumer_members(f"gen{generation}", size, 3)
        log.write([encoded(GroupMetadataKey("billing"),
                           GroupMetadataValue("consumer", generation, "range", members[0].member_id, log.timestamp, members))])
        log.write([encoded(OffsetCommitKey("billing", "orders", 2), OffsetCommitValue(generation * 10))])
    stamps.append(log.timestamp)
    log.write([encoded(GroupMetadataKey("billing"), None)])
    write_log_dir(tmp_path, {0: log.batches})
    spark.read.format("consumer_offsets").load(str(tmp_path)).createOrReplaceTempView("offsets")

    def owners(at: int, partition: int) -> list[tuple[str, int, str]]:
        q = OWNER_QUERY.format(at=at, topic="orders", partition=partition)
        return sorted((r["group"], r["generation"], r["member_id"]) for r in spark.sql(q).collect())

    # Member m of a group of n owns partitions m and m + n of "orders" (consumer_members).
    assert owners(stamps[0] - 1, 2) == []
    assert owners(stamps[0], 2) == [("billing", 1, "gen1-member-0")]
    assert owners(stamps[1] + 500, 2) == [("billing", 2, "gen2-member-2")]
    assert owners(stamps[1] + 500, 4) == [("billing", 2, "gen2-member-1")]
    assert owners(stamps[2], 1) == [("billing", 3, "gen3-member-0")]
    assert owners(stamps[2], 2) == []
    assert owners(stamps[3], 1) == [], "the group was deleted"


def test_a_directory_caught_mid_cleaning(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cleaning that crashed after committing its swap file and renaming the replaced
    segment ``.deleted``: Spark reads what recovery would (the swap file in its place), as
    ``read_directory`` and ``groupcoord inspect`` do, not the ``.log`` files alone."""
    original = Fixture(tmp_path / "original", cleaner_config())
    for i in range(80):
        original.append([commit(f"g{i % 3}", i, i), commit("busy", 0, i)])
    original.roll()
    original.append([commit("busy", 0, 1000)])
    original.log.close()
    shutil.copytree(tmp_path / "original", tmp_path / "crashed")
    f = Fixture(tmp_path / "crashed", cleaner_config())
    crash_at(monkeypatch, "replace", os.replace, 4)  # the 4th rename: the replaced segment's .log
    with pytest.raises(Crash):
        f.cleaner.clean(f.log, NOW)
    monkeypatch.undo()
    for segment in f.log.segments:
        segment.close()
    names = {p.name for p in f.directory.iterdir()}
    assert {"00000000000000000000.log.swap", "00000000000000000000.log.deleted"} <= names
    stored = [r.offset for chunk in read_directory(f.directory) for r in chunk]
    assert stored[0] == 0
    reader = spark.read.format("consumer_offsets").option("maxSplitBytes", 1000)
    assert [r["offset"] for r in collect(reader.load(str(f.directory)))] == stored
    compacted = strip(collect(reader.option("view", "compacted").load(str(tmp_path / "crashed"))))
    loaded = coordinator_view(inspect.load(tmp_path / "original", Config()))
    assert compacted_view(compacted) == loaded and len(loaded[0]) == 81
