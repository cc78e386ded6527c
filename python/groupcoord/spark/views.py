"""The compacted view computed by Spark from the history view, in parallel across splits.

Each task reduces its input partition of the history view (consecutive splits, each log
partition's in offset order) to the rows that still matter (``Compactor.reduced``); the reduced
rows are grouped by log partition and compacted there in offset order. The result is the same
as ``.option("view", "compacted")``, which reads each log partition in one task and is faster
when keys recur throughout the log (a split then keeps about every key; see the README).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
from pyspark.sql import DataFrame

from groupcoord.format import codec
from groupcoord.format import columns as C
from groupcoord.format.compaction import Compactor

__all__ = ["compacted"]


def compacted(history: DataFrame, corrupt_column: str | None = None) -> DataFrame:
    """The compacted view of ``history``, a ``consumer_offsets`` history DataFrame as read
    (each of its input partitions consecutive splits, in offset order). Rows of bad batches (a non-null
    ``corrupt_column``: by default the one column the codec's schema does not have, as
    ``columnNameOfCorruptRecord`` named it) are kept as they are."""
    schema = history.schema
    if corrupt_column is None:
        extra = [name for name in schema.names if name not in codec.arrow_schema().names]
        corrupt_column = extra[0] if len(extra) == 1 else "_corrupt_record"
    has_corrupt = corrupt_column in schema.names

    def reduce_split(batches: Iterator[Any]) -> Iterator[Any]:
        compactor = Compactor()
        for batch in batches:
            if has_corrupt:
                bad = pc.is_valid(batch.column(corrupt_column))
                if pc.any(bad).as_py():
                    yield batch.filter(bad)
                    batch = batch.filter(pc.invert(bad))
            compactor.add(batch)
        reduced = compactor.reduced()
        if reduced is not None:
            yield from reduced.to_batches()

    def finish(rows: Any) -> Any:
        if has_corrupt:
            bad_mask = pc.is_valid(rows.column(corrupt_column))
            bad, rows = rows.filter(bad_mask), rows.filter(pc.invert(bad_mask))
        compactor = Compactor()
        compactor.add(rows.sort_by([(C.OFFSET, "ascending")]))
        live = compactor.result()
        live = rows.schema.empty_table() if live is None else live
        return pa.concat_tables([live, bad]) if has_corrupt else live

    return history.mapInArrow(reduce_split, schema).groupBy(C.PARTITION).applyInArrow(finish, schema)
