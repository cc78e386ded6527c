"""Per-group report on a ``__consumer_offsets`` log directory.

    spark-submit spark/offsets_report.py PATH --out DIR
    python spark/offsets_report.py PATH --out DIR          # a local Spark, every core

PATH is anything the ``consumer_offsets`` source reads (a Kafka log directory, partition
directories, segment files, a glob). DIR receives:

- ``groups.parquet/`` and ``groups.csv/``: one row per live group (with group metadata or
  committed offsets in the compacted view): its state in the compacted view
  (protocol type, generation, protocol, leader, member count and ids, partitions assigned to
  the members, partitions with a committed offset) and from the history its commits (count,
  first and last commit time, commits per minute over that span) and its stalled partitions.
- ``stalled.parquet/`` and ``stalled.csv/``: one row per stalled partition: a live committed
  offset that has not advanced for ``--stall-minutes`` (default 10) before the group's last
  commit, while the group kept committing. ``since`` is when it reached its value.
- ``commit_activity.png``: commits per time bucket, all groups and the busiest ones;
  ``groups/<group>.png``: the same for each of the ``--plot-groups`` busiest groups, one line
  per topic.
- ``bad_batches.csv/`` when the log has batches that did not decode (the source's
  ``_corrupt_record`` rows).

Times are the commit timestamps in the offset commit values (the record timestamp where a
value has none), in UTC. The tables go through Spark (so DIR may be any path Spark writes);
the plots are drawn on the driver, so DIR must be local to it for them.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

import groupcoord.spark
from groupcoord.format import columns as C
from groupcoord.format.records import OFFSET_COMMIT_TYPES, RecordType

IS_OFFSET_COMMIT = f"{C.RECORD_TYPE} IN ({', '.join(str(int(t)) for t in sorted(OFFSET_COMMIT_TYPES))})"
IS_GROUP_METADATA = f"{C.RECORD_TYPE} = {int(RecordType.GROUP_METADATA)}"


def commit_time() -> Any:
    """The commit timestamp of an offset commit value, else its record's timestamp (ms)."""
    return F.when(F.col(C.COMMIT_TIMESTAMP) >= 0, F.col(C.COMMIT_TIMESTAMP)).otherwise(F.col(C.TIMESTAMP))


def _after(*keys: str) -> Any:
    """The rows after each one (in log order) among those of the same ``keys``, as a window in
    which the nearest of them is the last: frames that grow from the start cost Spark one pass."""
    return Window.partitionBy(*keys).orderBy(F.desc(C.OFFSET)).rowsBetween(Window.unboundedPreceding, -1)


def commits(history: DataFrame) -> DataFrame:
    """Offset commits that took effect: group, topic, partition, offset, time (ms).

    By the replay rules (``groupcoord.format.replay_rules``): a commit in a batch with a producer id
    counts once its producer's next marker in the same log partition is a COMMIT with no
    tombstone of its key in between; an aborted one, one whose transaction is still open at
    the end of the log, or one a tombstone removed before the COMMIT does not."""
    value = f"{IS_OFFSET_COMMIT} AND NOT {C.IS_TOMBSTONE} AND {C.COMMITTED_OFFSET} IS NOT NULL"
    marker = F.when(F.col(C.CONTROL).isNotNull(), F.struct(F.col(C.OFFSET).alias("at"), C.CONTROL))
    transactional = (
        history.where(f"{C.PRODUCER_ID} != -1 AND (({value}) OR {C.CONTROL} IS NOT NULL)")
        .withColumn("marker", F.last(marker, ignorenulls=True).over(_after(C.PARTITION, C.PRODUCER_ID)))
        .where(f"({value}) AND marker.{C.CONTROL} = '{C.COMMIT}'")
        .withColumn("tombstone", F.lit(False))
    )
    tombstones = (history.where(f"{IS_OFFSET_COMMIT} AND {C.IS_TOMBSTONE}")
                  .withColumn("marker", F.lit(None).cast(transactional.schema["marker"].dataType))
                  .withColumn("tombstone", F.lit(True)))
    key = (C.PARTITION, C.GROUP, C.TOPIC, C.KEY_PARTITION)
    committed = (
        transactional.unionByName(tombstones)
        .withColumn("next_tombstone",
                    F.last(F.when(F.col("tombstone"), F.col(C.OFFSET)), ignorenulls=True).over(_after(*key)))
        .where("NOT tombstone AND (next_tombstone IS NULL OR next_tombstone > marker.at)")
        .drop("marker", "tombstone", "next_tombstone")
    )
    effective = history.where(f"{C.PRODUCER_ID} = -1 AND {value}").unionByName(committed)
    return effective.select(C.GROUP, C.TOPIC, F.col(C.KEY_PARTITION).alias("partition"),
                            F.col(C.COMMITTED_OFFSET).alias("offset"), commit_time().alias("time"),
                            F.col(C.OFFSET).alias("log_offset"), F.col(C.PARTITION).alias("log_partition"))


def stalled_partitions(history: DataFrame, compacted: DataFrame, stall_ms: int) -> DataFrame:
    """Live committed offsets that stopped advancing ``stall_ms`` before the group's last commit."""
    live = (compacted.where(IS_OFFSET_COMMIT)
            .select(C.GROUP, C.TOPIC, F.col(C.KEY_PARTITION).alias("partition"),
                    F.col(C.COMMITTED_OFFSET).alias("offset")))
    all_commits = commits(history)
    reached = (all_commits.join(live, ["group", "topic", "partition", "offset"])
               .groupBy("group", "topic", "partition", "offset").agg(F.min("time").alias("since")))
    last = all_commits.groupBy("group").agg(F.max("time").alias("group_last_commit"))
    return (reached.join(last, "group")
            .where(F.col("group_last_commit") - F.col("since") >= stall_ms)
            .select("group", "topic", "partition", F.col("offset").alias("committed_offset"),
                    F.timestamp_millis("since").alias("since"),
                    ((F.col("group_last_commit") - F.col("since")) / 60000.0).alias("stalled_minutes")))


def group_summaries(history: DataFrame, compacted: DataFrame, stalled: DataFrame) -> DataFrame:
    metadata = (compacted.where(IS_GROUP_METADATA)
                .select(C.GROUP, C.PROTOCOL_TYPE, C.GENERATION, C.PROTOCOL, C.LEADER,
                        F.size(C.MEMBERS).alias("members"),
                        F.transform(C.MEMBERS, lambda m: m[C.MEMBER_ID]).alias("member_ids"),
                        F.aggregate(F.transform(C.MEMBERS, lambda m: F.coalesce(F.aggregate(
                            m[C.ASSIGNED_PARTITIONS], F.lit(0), lambda acc, a: acc + F.size(a["partitions"])), F.lit(0))),
                            F.lit(0), lambda acc, n: acc + n).alias("assigned_partitions")))
    committed = (compacted.where(IS_OFFSET_COMMIT).groupBy(C.GROUP)
                 .agg(F.count("*").alias("committed_partitions")))
    activity = (commits(history).groupBy("group")
                .agg(F.count("*").alias("commits"), F.min("time").alias("first"), F.max("time").alias("last")))
    activity = activity.select(
        "group", "commits", F.timestamp_millis("first").alias("first_commit_time"),
        F.timestamp_millis("last").alias("last_commit_time"),
        F.when(F.col("last") > F.col("first"), F.col("commits") / ((F.col("last") - F.col("first")) / 60000.0))
        .alias("commits_per_minute"))
    stalls = (stalled.groupBy("group")
              .agg(F.sort_array(F.collect_list(F.concat_ws("-", "topic", "partition"))).alias("stalled_partitions")))
    live = metadata.join(committed, "group", "full")  # a deleted group has neither
    return (live.join(activity, "group", "left").join(stalls, "group", "left")
            .fillna({"committed_partitions": 0, "commits": 0})
            .withColumn("stalled_partitions", F.coalesce("stalled_partitions", F.array().cast("array<string>")))
            .orderBy(F.desc("commits"), "group"))


def write_table(df: DataFrame, out: str, name: str) -> None:
    df.coalesce(1).write.mode("overwrite").parquet(os.path.join(out, f"{name}.parquet"))
    flat = df.select([F.array_join(c.name, ";").alias(c.name) if c.dataType.typeName() == "array" else F.col(c.name)
                      for c in df.schema.fields])
    flat.coalesce(1).write.mode("overwrite").option("header", True).csv(os.path.join(out, f"{name}.csv"))


def bucket_ms(first: int, last: int, buckets: int = 60) -> int:
    """A round bucket width giving about ``buckets`` buckets over [first, last]."""
    for width in (1_000, 5_000, 10_000, 60_000, 300_000, 600_000, 1_800_000, 3_600_000, 21_600_000, 86_400_000):
        if (last - first) / width <= buckets:
            return width
    return 604_800_000


def plot_activity(history: DataFrame, out: str, top: int) -> list[str]:
    """Commit activity PNGs; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    all_commits = commits(history)
    span = all_commits.agg(F.min("time").alias("first"), F.max("time").alias("last")).first()
    if span is None or span["first"] is None:
        return []
    width = bucket_ms(span["first"], span["last"])
    bucketed = all_commits.withColumn("bucket", F.floor(F.col("time") / width) * width)
    busiest = [r["group"] for r in all_commits.groupBy("group").count().orderBy(F.desc("count"), "group").limit(top).collect()]
    per_group: Any = (bucketed.where(F.col("group").isin(busiest)).groupBy("group", "topic", "bucket").count().toPandas())
    total: Any = bucketed.groupBy("bucket").count().toPandas()
    label = f"commits per {width // 1000:,} s"
    first_bucket = span["first"] // width * width
    buckets = list(range(first_bucket, span["last"] // width * width + width, width))

    def filled(series: Any) -> Any:
        """Counts per bucket over the whole span, zero where there were no commits."""
        return series.groupby(level=0).sum().reindex(buckets, fill_value=0)

    def draw(ax: Any, series: Any, **style: Any) -> None:
        ax.step(_times(series.index), series.values, where="post", **style)

    paths = []
    fig, ax = plt.subplots(figsize=(11, 5))
    draw(ax, filled(total.set_index("bucket")["count"]), color="black", linewidth=2, label="all groups")
    for group in busiest[:8]:
        draw(ax, filled(per_group[per_group["group"] == group].set_index("bucket")["count"]), linewidth=1, label=group)
    _finish(fig, ax, f"Commit activity (all groups; the {min(len(busiest), 8)} busiest drawn alone)", label)
    paths.append(os.path.join(out, "commit_activity.png"))
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    os.makedirs(os.path.join(out, "groups"), exist_ok=True)
    for group in busiest:
        rows = per_group[per_group["group"] == group]
        fig, ax = plt.subplots(figsize=(9, 4))
        for topic, series in rows.groupby("topic"):
            draw(ax, filled(series.set_index("bucket")["count"]), linewidth=1, label=topic)
        _finish(fig, ax, f"Commit activity of group {group}, per topic", label)
        paths.append(os.path.join(out, "groups", re.sub(r"[^A-Za-z0-9._-]", "_", group) + ".png"))
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths


def _times(ms: Any) -> Any:
    import pandas as pd  # type: ignore[import-untyped]

    return pd.to_datetime(ms, unit="ms", utc=True)


def _finish(fig: Any, ax: Any, title: str, ylabel: str) -> None:
    ax.set_title(title)
    ax.set_xlabel("time (UTC)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize="small", ncols=2)
    fig.autofmt_xdate()
    fig.tight_layout()


def run(spark: SparkSession, path: str | list[str], out: str, stall_minutes: float = 10.0, plot_groups: int = 10) -> dict[str, Any]:
    """Write the report for ``path`` into ``out``; returns what was written (for callers and tests)."""
    groupcoord.spark.register(spark)
    os.makedirs(out, exist_ok=True)
    reader = spark.read.format("consumer_offsets")
    history = reader.load(path).cache()
    compacted = reader.option("view", "compacted").load(path).where("_corrupt_record IS NULL").cache()
    bad = history.where("_corrupt_record IS NOT NULL").select("_corrupt_record.*")
    bad_count = bad.count()
    if bad_count:
        bad.coalesce(1).write.mode("overwrite").option("header", True).csv(os.path.join(out, "bad_batches.csv"))
    history = history.where("_corrupt_record IS NULL")
    stalled = stalled_partitions(history, compacted, int(stall_minutes * 60_000)).cache()
    groups = group_summaries(history, compacted, stalled)
    write_table(groups, out, "groups")
    write_table(stalled.orderBy("group", "topic", "partition"), out, "stalled")
    plots = plot_activity(history, out, plot_groups)
    return {"groups": groups.count(), "stalled": stalled.count(), "bad_batches": bad_count, "plots": plots}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="+", help="log directory, partition directories, segments or globs")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--stall-minutes", type=float, default=10.0,
                        help="a live offset unchanged this long before its group's last commit is stalled")
    parser.add_argument("--plot-groups", type=int, default=10, help="how many of the busiest groups to plot")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("groupcoord offsets report")
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # plain python: no spark-submit gave a master
        builder = (builder.master("local[*]").config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "16"))
    spark = builder.getOrCreate()
    try:
        result = run(spark, args.path, args.out, args.stall_minutes, args.plot_groups)
    finally:
        spark.stop()
    print(f"{result['groups']} groups, {result['stalled']} stalled partitions, {result['bad_batches']} bad batches; "
          f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
