"""PySpark data source for ``__consumer_offsets`` logs (the package's ``spark`` extra: pyspark).

    import groupcoord.spark
    groupcoord.spark.register(spark)
    df = spark.read.format("consumer_offsets").option("view", "compacted").load("/data/kafka-logs")

``groupcoord.spark.compacted(history)`` computes the compacted view from the history view with
several tasks per log partition. ``groupcoord.spark.files`` (finding and splitting segments) and ``groupcoord.spark.scan``
(decoding a split, bad-batch handling) need only pyarrow; pyspark is imported when the data
source itself is (``register`` or ``groupcoord.spark.source``).
"""

from __future__ import annotations

from typing import Any

from groupcoord.spark.files import NAME

__all__ = ["NAME", "compacted", "register"]


def register(spark: Any) -> None:
    """Register the ``consumer_offsets`` data source with the ``SparkSession`` ``spark``."""
    from groupcoord.spark.source import ConsumerOffsetsDataSource

    spark.dataSource.register(ConsumerOffsetsDataSource)


def compacted(history: Any, corrupt_column: str | None = None) -> Any:
    """The compacted view of a ``consumer_offsets`` history DataFrame, reduced by its own
    tasks in parallel and finished per log partition (see :mod:`groupcoord.spark.views`)."""
    from groupcoord.spark.views import compacted as compute

    return compute(history, corrupt_column)
