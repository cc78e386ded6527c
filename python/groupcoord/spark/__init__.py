"""PySpark data source for ``__consumer_offsets`` logs (``pip install groupcoord[spark]``).

    import groupcoord.spark
    groupcoord.spark.register(spark)
    df = spark.read.format("consumer_offsets").option("view", "compacted").load("/data/kafka-logs")

``groupcoord.spark.files`` (finding and splitting segments) and ``groupcoord.spark.scan``
(decoding a split, bad-batch handling) need only pyarrow; pyspark is imported when the data
source itself is (``register`` or ``groupcoord.spark.source``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["NAME", "register"]

NAME = "consumer_offsets"


def register(spark: Any) -> None:
    """Register the ``consumer_offsets`` data source with the ``SparkSession`` ``spark``."""
    from groupcoord.spark.source import ConsumerOffsetsDataSource

    spark.dataSource.register(ConsumerOffsetsDataSource)
