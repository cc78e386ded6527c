"""The peers of the ``consumer_offsets`` source in the Spark benchmark: two Python data
sources over the same splits and schema.

- ``offsets_predecoded``: yields Arrow record batches decoded beforehand and stored as Arrow
  IPC files (memory-mapped, zero-copy): what any Python source costs Spark with no decoding
  at all, the ceiling of a Python source.
- ``offsets_pure_python``: decodes with kafka-python's record parser and
  ``benches/pycodec.py`` (pure-Python keys, values and consumer protocol), rows to Arrow with
  ``pyarrow.RecordBatch.from_pylist``.

This module must be importable by Spark's Python workers (the benchmark puts ``benches/``
on their ``PYTHONPATH``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pycodec
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from groupcoord.spark.files import Split, plan
from groupcoord.spark.scan import scan, with_corrupt_column
from groupcoord.spark.source import Options, arrow_schema

SCHEMA = arrow_schema(Options(paths=("-",)))
"""The ``consumer_offsets`` history schema in its default (PERMISSIVE) mode."""


def write_predecoded(paths: Sequence[str], out_dir: str, max_split_bytes: int) -> None:
    """Decode every split under ``paths`` into ``out_dir/NNNNN.arrow`` (Arrow IPC files)."""
    os.makedirs(out_dir, exist_ok=True)
    for i, split in enumerate(plan(paths, max_split_bytes)):
        with pa.OSFile(os.path.join(out_dir, f"{i:05d}.arrow"), "wb") as sink:
            with pa.ipc.new_file(sink, SCHEMA) as writer:
                for batch in scan(split, "FAILFAST"):
                    writer.write_batch(with_corrupt_column(batch, SCHEMA))


class PredecodedReader(DataSourceReader):
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def partitions(self) -> Sequence[InputPartition]:
        return [InputPartition(os.path.join(self.directory, n)) for n in sorted(os.listdir(self.directory))]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        with pa.memory_map(partition.value) as source:
            reader = pa.ipc.open_file(source)
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i)


class PredecodedSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "offsets_predecoded"

    def schema(self) -> StructType:
        return from_arrow_schema(SCHEMA)

    def reader(self, schema: StructType) -> DataSourceReader:
        return PredecodedReader(self.options["path"])


def _members(value: dict[str, Any]) -> list[dict[str, Any]]:
    consumer = value["protocol_type"] == "consumer"
    members = []
    for m in value["members"]:
        member = dict(m)
        member["subscribed_topics"] = member["assigned_partitions"] = None
        if consumer:
            try:
                member["subscribed_topics"] = pycodec.decode_subscription(m["subscription"])["topics"]
            except Exception:
                pass
            try:
                member["assigned_partitions"] = [
                    {"topic": t, "partitions": p}
                    for t, p in pycodec.decode_assignment(m["assignment"])["assigned_partitions"]
                ]
            except Exception:
                pass
        members.append(member)
    return members


def python_rows(data: bytes, partition: int, position: int) -> list[dict[str, Any]]:
    """Rows of the history schema for a log buffer, decoded in pure Python."""
    from kafka.record.memory_records import MemoryRecords

    rows = []
    records = MemoryRecords(data)
    batch_position = position
    while (batch := records.next_batch()) is not None:
        size = len(batch._buffer)  # before iterating: a compressed batch swaps in its records
        base = {"partition": partition, "batch_position": batch_position,
                "producer_id": batch.producer_id, "producer_epoch": batch.producer_epoch,
                "is_transactional": batch.is_transactional}
        for record in batch:
            row = dict(base, offset=record.offset, timestamp=record.timestamp, is_tombstone=False)
            if batch.is_control_batch:
                row["control"] = "commit" if record.key[3] == 1 else "abort"
                rows.append(row)
                continue
            key = pycodec.decode_key(record.key)
            value = pycodec.decode_value(key, record.value)
            row["record_type"] = key["record_type"]
            row["group"] = key.get("group")
            row["topic"] = key.get("topic")
            row["key_partition"] = key.get("partition")
            if value is None:
                row["is_tombstone"] = True
            else:
                row["value_version"] = value["version"]
                if key["record_type"] in (0, 1):
                    row.update(committed_offset=value["offset"], leader_epoch=value["leader_epoch"],
                               metadata=value["metadata"], commit_timestamp=value["commit_timestamp"],
                               expire_timestamp=value["expire_timestamp"])
                elif key["record_type"] == 2:
                    row.update(protocol_type=value["protocol_type"], generation=value["generation"],
                               protocol=value["protocol"], leader=value["leader"],
                               current_state_timestamp=value["current_state_timestamp"],
                               members=_members(value))
            rows.append(row)
        batch_position += size
    return rows


class PurePythonReader(DataSourceReader):
    def __init__(self, path: str, max_split_bytes: int) -> None:
        self.path = path
        self.max_split_bytes = max_split_bytes

    def partitions(self) -> Sequence[InputPartition]:
        return [InputPartition(split) for split in plan([self.path], self.max_split_bytes)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        split: Split = partition.value
        with open(split.segment.path, "rb") as f:
            f.seek(split.start)
            data = f.read(split.end - split.start)
        rows = python_rows(data, split.segment.partition, split.start)
        for i in range(0, len(rows), 8192):
            yield pa.RecordBatch.from_pylist(rows[i:i + 8192], schema=SCHEMA)


class PurePythonSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "offsets_pure_python"

    def schema(self) -> StructType:
        return from_arrow_schema(SCHEMA)

    def reader(self, schema: StructType) -> DataSourceReader:
        return PurePythonReader(self.options["path"], int(self.options.get("maxSplitBytes", 128 << 20)))
