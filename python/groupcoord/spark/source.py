"""The ``consumer_offsets`` PySpark data source (needs pyspark 4).

``spark.read.format("consumer_offsets").load(PATH)``: the history view has one input
partition per run of splits (a piece of a big segment cut at batch boundaries, or small
segments packed together up to ``maxSplitBytes``); the
compacted view one per ``__consumer_offsets`` partition, whose splits are folded in offset
order through :class:`groupcoord.format.compaction.Compactor` so that it is exact however the
partition's segments are cut. ``read()`` yields Arrow record batches decoded in Rust.

``.option("kafka.bootstrap.servers", "host:port")`` reads a live cluster instead
(:mod:`groupcoord.spark.cluster`): one input partition per ``__consumer_offsets`` partition, its
offsets fixed when the query is planned, its stored batches fetched over the Kafka protocol
and decoded as a segment's are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, groupby
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from groupcoord.format import codec
from groupcoord.format.compaction import Compactor
from groupcoord.spark.cluster import (
    LivePartition,
    parse_bootstrap,
    plan_partitions,
    scan_partition,
)
from groupcoord.spark.files import NAME, Split, plan
from groupcoord.spark.scan import (
    CHUNK_BYTES,
    CORRUPT_RECORD_TYPE,
    BadBatch,
    Mode,
    bad_batch_rows,
    scan,
    with_corrupt_column,
)

__all__ = ["ConsumerOffsetsDataSource", "Options", "arrow_schema", "pack"]


VIEWS = ("history", "compacted")
MODES: tuple[Mode, ...] = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")
DEFAULT_MAX_SPLIT_BYTES = 128 << 20
OPEN_COST_BYTES = 4 << 20
"""What opening a split costs a task, in bytes read: Spark's ``openCostInBytes`` default."""
BOOTSTRAP_SERVERS = "kafka.bootstrap.servers"
"""The option naming a live cluster, as Spark's own Kafka source names it."""
OPTIONS = ("path", "paths", "view", "mode", "maxSplitBytes", "columnNameOfCorruptRecord", BOOTSTRAP_SERVERS)


@dataclass(frozen=True)
class Options:
    """The source's options, checked: ``path``/``paths`` or ``kafka.bootstrap.servers``,
    ``view``, ``mode``, ``maxSplitBytes`` (files only), ``columnNameOfCorruptRecord``."""

    paths: tuple[str, ...]
    view: str = "history"
    mode: Mode = "PERMISSIVE"
    max_split_bytes: int = DEFAULT_MAX_SPLIT_BYTES
    corrupt_column: str = "_corrupt_record"
    bootstrap: tuple[tuple[str, int], ...] = ()
    """The cluster to read, when the source reads one instead of paths."""

    @classmethod
    def parse(cls, options: Any) -> Options:
        def get(name: str, default: str) -> str:
            value = options.get(name, options.get(name.lower(), default))
            return str(value)

        unknown = sorted(set(map(str.lower, options)) - {o.lower() for o in OPTIONS})
        if unknown:
            raise ValueError(f"consumer_offsets: unknown option {unknown[0]!r}; the options are "
                             f"{', '.join(OPTIONS)}")
        paths: list[str] = []
        if "paths" in options:
            try:
                listed = json.loads(options["paths"])
            except ValueError:
                listed = None
            if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
                raise ValueError("consumer_offsets: option 'paths' is a JSON list of paths, as "
                                 "spark.read.load([PATH, ...]) sets it; give one path as 'path'")
            paths.extend(listed)
        if "path" in options:
            paths.append(options["path"])
        servers = options.get(BOOTSTRAP_SERVERS, options.get(BOOTSTRAP_SERVERS.lower()))
        bootstrap = tuple(parse_bootstrap(str(servers))) if servers is not None else ()
        if bootstrap and paths:
            raise ValueError(f"consumer_offsets: give paths or {BOOTSTRAP_SERVERS}, not both")
        if bootstrap and any(o.lower() == "maxsplitbytes" for o in options):
            raise ValueError(f"consumer_offsets: maxSplitBytes cuts segment files; with {BOOTSTRAP_SERVERS} "
                             "each __consumer_offsets partition is one input partition")
        if not paths and not bootstrap:
            raise ValueError("consumer_offsets: give a path: .load(PATH) or .option('path', PATH), or a "
                             f"cluster: .option('{BOOTSTRAP_SERVERS}', 'host:port')")
        view = get("view", "history").lower()
        if view not in VIEWS:
            raise ValueError(f"consumer_offsets: view must be one of {', '.join(VIEWS)}, not {view!r}")
        mode = get("mode", "PERMISSIVE").upper()
        if mode not in MODES:
            raise ValueError(f"consumer_offsets: mode must be one of {', '.join(MODES)}, not {mode!r}")
        max_split = get("maxSplitBytes", str(DEFAULT_MAX_SPLIT_BYTES))
        if not max_split.isdigit() or int(max_split) <= 0:
            raise ValueError(f"consumer_offsets: maxSplitBytes must be a positive integer, not {max_split!r}")
        corrupt_column = get("columnNameOfCorruptRecord", "_corrupt_record")
        taken = {name.lower(): name for name in codec.arrow_schema().names}.get(corrupt_column.lower())
        if not corrupt_column or taken is not None:
            not_this = "empty" if not corrupt_column else f"that of the column {taken!r}"
            raise ValueError(f"consumer_offsets: columnNameOfCorruptRecord {corrupt_column!r} must be a new "
                             f"column's name, not {not_this}")
        return cls(tuple(paths), view, mode, int(max_split), corrupt_column, bootstrap)


def arrow_schema(options: Options) -> Any:
    """The view's Arrow schema: the codec's, plus the corrupt-record column in PERMISSIVE
    mode."""
    schema = codec.arrow_schema()
    if options.mode == "PERMISSIVE":
        schema = schema.append(pa.field(options.corrupt_column, CORRUPT_RECORD_TYPE, True))
    return schema


class ConsumerOffsetsDataSource(DataSource):
    """``__consumer_offsets`` log segments as a DataFrame. See the README for options."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return from_arrow_schema(arrow_schema(Options.parse(self.options)))

    def reader(self, schema: StructType) -> DataSourceReader:
        options = Options.parse(self.options)
        expected = from_arrow_schema(arrow_schema(options))
        if schema != expected:
            raise ValueError("consumer_offsets: the source's schema is fixed (see the README); read "
                             "without .schema(...) and select or cast the columns you need")
        return ConsumerOffsetsReader(options)


class ConsumerOffsetsReader(DataSourceReader):
    def __init__(self, options: Options) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        if self.options.bootstrap:
            return [InputPartition(p) for p in plan_partitions(self.options.bootstrap)]
        splits = plan(self.options.paths, self.options.max_split_bytes)
        if self.options.view == "history":
            return [InputPartition(tuple(run)) for run in pack(splits, self.options.max_split_bytes)]
        return [InputPartition(tuple(group)) for _, group in groupby(splits, lambda s: s.segment.partition)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        mode = self.options.mode
        items: Iterable[Any]
        if isinstance(partition.value, LivePartition):
            items = scan_partition(partition.value, mode, CHUNK_BYTES)
        else:
            splits: tuple[Split, ...] = partition.value or ()  # Spark reads one empty partition when there are none
            items = chain.from_iterable(scan(split, mode, CHUNK_BYTES) for split in splits)
        schema = arrow_schema(self.options)
        if self.options.view == "history":
            return _history(items, mode, schema)
        return _compacted(items, mode, schema)


def pack(splits: Sequence[Split], max_bytes: int) -> list[list[Split]]:
    """Consecutive splits packed into runs of at most ``max_bytes``, each split counting
    :data:`OPEN_COST_BYTES` more, as Spark packs small files (``openCostInBytes``): a log of
    many small segments is read by a few tasks, not one per segment. A run stays in
    (partition, offset) order."""
    runs: list[list[Split]] = []
    size = 0
    for split in splits:
        cost = split.end - split.start + OPEN_COST_BYTES
        if runs and size + cost <= max_bytes:
            runs[-1].append(split)
            size += cost
        else:
            runs.append([split])
            size = cost
    return runs


def _history(items: Iterable[Any], mode: Mode, schema: Any) -> Iterator[Any]:
    """The rows of what a scan found (record batches and :class:`BadBatch`es)."""
    permissive = mode == "PERMISSIVE"
    for item in items:
        if isinstance(item, BadBatch):
            yield bad_batch_rows([item], schema)
        elif permissive:
            yield with_corrupt_column(item, schema)
        else:
            yield item


def _compacted(items: Iterable[Any], mode: Mode, schema: Any) -> Iterator[Any]:
    """What a scan of one log partition found, in offset order, folded to its live keys."""
    compactor = Compactor()
    bad: list[BadBatch] = []
    for item in items:
        if isinstance(item, BadBatch):
            bad.append(item)
        else:
            compactor.add(item)
    live = compactor.result()
    if live is not None:
        for batch in live.to_batches(max_chunksize=1 << 16):
            yield with_corrupt_column(batch, schema) if mode == "PERMISSIVE" else batch
    if bad:
        yield bad_batch_rows(bad, schema)
