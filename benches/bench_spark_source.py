"""The ``consumer_offsets`` data source in Spark, rows per second, side by side with the same
query over three peers (benches/spark_sources.py): Parquet written by Spark from the same
DataFrame, a Python source yielding pre-decoded Arrow batches (the ceiling of any Python
source), and a pure-Python decoding source.

The query reads every column: ``df.write.format("noop").mode("overwrite").save()``, on
``local[2]``. Full scale is a log directory of at least 1 GiB (four ``__consumer_offsets``
partitions: three in Kafka's default 100 MiB segments, one as a single big segment that the
source splits), generated once into ``$GROUPCOORD_BENCH_DATA`` (default
``/tmp/groupcoord-bench``) and reused; ``GROUPCOORD_BENCH_SCALE=smoke`` uses 2 MiB. Print the
table with ``benches/report_spark.py``.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import SCALE, scaled
from offsets_data import segment

from groupcoord.storage.segment import batch_boundaries

BENCHES = Path(__file__).resolve().parent
PARTITION_BYTES = scaled(272 << 20, 512 << 10)
SEGMENT_BYTES = scaled(100 << 20, 192 << 10)
MAX_SPLIT_BYTES = scaled(128 << 20, 256 << 10)
SOURCES = ["consumer_offsets", "predecoded_arrow", "parquet", "pure_python"]

pytestmark = pytest.mark.timeout(3600)


@dataclass
class Data:
    log_dir: Path
    predecoded: Path
    parquet: Path
    rows: int
    bytes: int


def write_partition(directory: Path, data: bytes, segment_bytes: int) -> None:
    """Kafka's layout: roll a new ``<base offset>.log`` once a segment reaches the size."""
    directory.mkdir(parents=True, exist_ok=True)
    starts, stop = batch_boundaries(data)
    assert stop == len(data)
    cut = 0
    for start in [*starts, len(data)]:
        if start == len(data) or start - cut >= segment_bytes:
            base = int.from_bytes(data[cut:cut + 8], "big")
            (directory / f"{base:020d}.log").write_bytes(data[cut:start])
            cut = start


@pytest.fixture(scope="module")
def spark() -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYTHONPATH"] = os.pathsep.join([str(BENCHES), os.environ.get("PYTHONPATH", "")])
    from pyspark.sql import SparkSession

    import groupcoord.spark
    from spark_sources import PredecodedSource, PurePythonSource

    session = (
        SparkSession.builder.master("local[2]").appName("groupcoord-bench")
        .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    groupcoord.spark.register(session)
    session.dataSource.register(PredecodedSource)
    session.dataSource.register(PurePythonSource)
    yield session
    session.stop()


def prepare(spark: Any, root: Path, partition_bytes: int, segment_bytes: int) -> Data:
    """Write the log directory under ``root`` (once: a ``complete`` file marks it done), its
    pre-decoded Arrow files and its Parquet copy."""
    from spark_sources import write_predecoded

    log_dir = root / "logs"
    if not (root / "complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        for p in range(4):
            # Partition 3 is one big segment: the source cuts it at batch boundaries.
            write_partition(log_dir / f"__consumer_offsets-{p}", segment.__wrapped__(partition_bytes, "none", p + 1),
                            segment_bytes if p < 3 else 1 << 40)
        write_predecoded([str(log_dir)], str(root / "predecoded"), MAX_SPLIT_BYTES)
        df = spark.read.format("consumer_offsets").option("maxSplitBytes", MAX_SPLIT_BYTES).load(str(log_dir))
        df.write.mode("overwrite").parquet(str(root / "parquet"))
        (root / "complete").write_text("")
    size = sum(f.stat().st_size for f in log_dir.rglob("*.log"))
    rows = spark.read.parquet(str(root / "parquet")).count()
    return Data(log_dir, root / "predecoded", root / "parquet", rows, size)


@pytest.fixture(scope="module")
def data(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Data:
    if SCALE == "full":
        root = Path(os.environ.get("GROUPCOORD_BENCH_DATA", "/tmp/groupcoord-bench")) / f"spark-{PARTITION_BYTES}"
    else:
        root = tmp_path_factory.mktemp("spark-bench")
    return prepare(spark, root, PARTITION_BYTES, SEGMENT_BYTES)


def frame(spark: Any, data: Data, source: str) -> Any:
    if source == "consumer_offsets":
        return spark.read.format("consumer_offsets").option("maxSplitBytes", MAX_SPLIT_BYTES).load(str(data.log_dir))
    if source == "predecoded_arrow":
        return spark.read.format("offsets_predecoded").load(str(data.predecoded))
    if source == "parquet":
        return spark.read.parquet(str(data.parquet))
    return spark.read.format("offsets_pure_python").option("maxSplitBytes", MAX_SPLIT_BYTES).load(str(data.log_dir))


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and every process under it (Spark's JVM and
    its Python workers), from /proc: the cost of a query whatever else the machine runs."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, list[int]] = {}
    cpu: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents.setdefault(int(fields[1]), []).append(int(entry))
            cpu[int(entry)] = int(fields[11]) + int(fields[12])
    total, stack = 0, [os.getpid()]
    while stack:
        pid = stack.pop()
        total += cpu.get(pid, 0)
        stack.extend(parents.get(pid, []))
    return total / ticks


@pytest.mark.parametrize("source", SOURCES)
def test_scan_every_column(benchmark: Any, spark: Any, data: Data, source: str) -> None:
    df = frame(spark, data, source)
    benchmark.group = "spark-scan"
    warmup = scaled(1, 0)
    cpu: list[float] = []

    def query() -> None:
        before = cpu_seconds()
        df.write.format("noop").mode("overwrite").save()
        cpu.append(cpu_seconds() - before)

    benchmark.pedantic(query, rounds=scaled(3, 1), iterations=1, warmup_rounds=warmup)
    measured = sorted(cpu[warmup:])
    benchmark.extra_info.update(rows=data.rows, bytes=data.bytes, partitions=df.rdd.getNumPartitions(),
                                cpu_seconds=measured[len(measured) // 2])


def test_every_source_reads_the_same_rows(spark: Any, tmp_path: Path) -> None:
    """The four are one query over one content: the same rows, on a small log directory."""
    small = prepare(spark, tmp_path, 96 << 10, 40 << 10)

    def rows(source: str) -> list[Any]:
        df = frame(spark, small, source).orderBy("partition", "offset")
        return [r.asDict(recursive=True) for r in df.collect()]

    expected = rows("consumer_offsets")
    assert len(expected) == small.rows > 4 * 100
    assert any(r["members"] and r["members"][0]["assigned_partitions"] for r in expected)
    for source in SOURCES[1:]:
        assert rows(source) == expected, source
