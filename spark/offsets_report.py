"""Per-group report on a ``__consumer_offsets`` log directory, or a live cluster's.

    spark-submit spark/offsets_report.py PATH --out DIR
    python spark/offsets_report.py PATH --out DIR          # a local Spark, every core
    python spark/offsets_report.py --bootstrap-servers HOST:PORT --out DIR

PATH is anything the ``consumer_offsets`` source reads (a Kafka log directory, partition
directories, segment files, a glob); ``--bootstrap-servers`` reads the cluster's
``__consumer_offsets`` over the Kafka protocol instead. DIR receives:

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
- ``lag.parquet/`` and ``lag.csv/``, where the log end offsets of the committed partitions are
  known: consumer lag over time, one row per group, partition and time bucket from the group's
  first commit of it on, until a tombstone deletes it (the bucket's end ``time``, the offset committed by then, the
  partition's log end offset then, and ``lag``, their difference, at least 0); ``lag.png``,
  the total lag of the busiest groups; and in ``groups``, ``lag``: the group's lag now (its
  live committed offsets against the log end offsets now). The log end offsets come from the
  cluster (``--bootstrap-servers``: ListOffsets, latest and by timestamp) or from a data
  directory holding the topics' ``NAME-N`` directories (``--data-dir``; by default PATH when
  it is one directory), as :mod:`groupcoord.spark.log_ends` reads them.

Times are the commit timestamps in the offset commit values (the record timestamp where a
value has none), in UTC. The tables go through Spark (so DIR may be any path Spark writes);
the plots are drawn on the driver, so DIR must be local to it for them.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

import groupcoord.spark
from groupcoord.format import columns as C
from groupcoord.format.records import OFFSET_COMMIT_TYPES, RecordType
from groupcoord.spark import log_ends

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


LogEndsSource = Callable[[list[tuple[str, int]], list[int]], dict[tuple[str, int], log_ends.LogEnds]]
"""Given partitions and times, their log ends (:mod:`groupcoord.spark.log_ends`)."""


def lag_over_time(spark: SparkSession, history: DataFrame, ends: LogEndsSource) -> tuple[DataFrame, DataFrame] | None:
    """Consumer lag per group, partition and time bucket, and each partition's log end now;
    None when no committed partition's log end is known."""
    all_commits = commits(history)
    span = all_commits.agg(F.min("time").alias("first"), F.max("time").alias("last")).first()
    if span is None or span["first"] is None:
        return None
    width = bucket_ms(span["first"], span["last"])
    times = list(range(span["first"] // width * width + width, span["last"] // width * width + 2 * width, width))
    partitions = [(r["topic"], r["partition"]) for r in all_commits.select("topic", "partition").distinct().collect()]
    found = ends(partitions, times)
    if not found:
        return None
    ends_at = spark.createDataFrame(
        [(topic, partition, t, end) for (topic, partition), e in found.items() for t, end in zip(times, e.at)],
        "topic string, partition int, time long, log_end_offset long")
    ends_now = spark.createDataFrame([(topic, partition, e.now) for (topic, partition), e in found.items()],
                                     "topic string, partition int, log_end_offset long")
    # A tombstone (the offset or its group deleted) ends the partition's lag until its next commit.
    deleted = (history.where(f"{IS_OFFSET_COMMIT} AND {C.IS_TOMBSTONE}")
               .select(C.GROUP, C.TOPIC, F.col(C.KEY_PARTITION).alias("partition"),
                       F.lit(None).cast("long").alias("offset"), F.col(C.TIMESTAMP).alias("time"),
                       F.col(C.OFFSET).alias("log_offset"), F.col(C.PARTITION).alias("log_partition")))
    by_bucket = (all_commits.unionByName(deleted)
                 .withColumn("time", F.floor(F.col("time") / width) * width + width)
                 .groupBy("group", "topic", "partition", "time")
                 .agg(F.max_by(F.struct(F.col("offset").alias("committed_offset")), "log_offset").alias("last")))
    buckets = spark.createDataFrame([(t,) for t in times], "time long")
    filled = (all_commits.select("group", "topic", "partition").distinct().crossJoin(buckets)
              .join(by_bucket, ["group", "topic", "partition", "time"], "left")
              .withColumn("last", F.last("last", ignorenulls=True).over(
                  Window.partitionBy("group", "topic", "partition").orderBy("time")
                  .rowsBetween(Window.unboundedPreceding, 0)))
              .select("group", "topic", "partition", "time", "last.committed_offset")
              .where("committed_offset IS NOT NULL"))
    lag = (filled.join(ends_at, ["topic", "partition", "time"])
           .select("group", "topic", "partition", F.timestamp_millis("time").alias("time"), "committed_offset",
                   "log_end_offset", F.greatest(F.col("log_end_offset") - F.col("committed_offset"), F.lit(0))
                   .alias("lag")))
    return lag, ends_now


def current_lag(compacted: DataFrame, ends_now: DataFrame) -> DataFrame:
    """Per group, its lag now: its live committed offsets against the log ends now."""
    live = (compacted.where(IS_OFFSET_COMMIT)
            .select(C.GROUP, C.TOPIC, F.col(C.KEY_PARTITION).alias("partition"), C.COMMITTED_OFFSET))
    return (live.join(ends_now, ["topic", "partition"])
            .groupBy("group").agg(F.sum(F.greatest(F.col("log_end_offset") - F.col(C.COMMITTED_OFFSET), F.lit(0)))
                                  .alias("lag")))


def plot_lag(lag: DataFrame, out: str, top: int) -> str:
    """``lag.png``: the total lag over time of the ``top`` groups with the most lag at their end."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    totals: Any = lag.groupBy("group", "time").agg(F.sum("lag").alias("lag")).toPandas()
    last = totals.sort_values("time").groupby("group")["lag"].last().sort_values(ascending=False)
    fig, ax = plt.subplots(figsize=(11, 5))
    for group in list(last.index[:top]):
        series = totals[totals["group"] == group].sort_values("time")
        ax.step(series["time"], series["lag"], where="post", linewidth=1, label=group)
    _finish(fig, ax, f"Consumer lag (the {min(len(last), top)} groups with the most at the end)", "lag (records)")
    path = os.path.join(out, "lag.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


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


def run(spark: SparkSession, path: str | list[str] | None, out: str, stall_minutes: float = 10.0,
        plot_groups: int = 10, bootstrap_servers: str | None = None, data_dir: str | None = None) -> dict[str, Any]:
    """Write the report for ``path`` (or the cluster at ``bootstrap_servers``) into ``out``;
    returns what was written (for callers and tests). Lag is reported where the log end
    offsets are known: from the cluster, else from ``data_dir`` (by default ``path`` when it
    is one directory)."""
    groupcoord.spark.register(spark)
    os.makedirs(out, exist_ok=True)

    def read(view: str) -> DataFrame:
        reader = spark.read.format("consumer_offsets").option("view", view)
        if bootstrap_servers is not None:
            return reader.option("kafka.bootstrap.servers", bootstrap_servers).load()
        return reader.load(path)

    history = read("history").cache()
    compacted = read("compacted").where("_corrupt_record IS NULL").cache()
    bad = history.where("_corrupt_record IS NOT NULL").select("_corrupt_record.*")
    bad_count = bad.count()
    if bad_count:
        bad.coalesce(1).write.mode("overwrite").option("header", True).csv(os.path.join(out, "bad_batches.csv"))
    history = history.where("_corrupt_record IS NULL")
    stalled = stalled_partitions(history, compacted, int(stall_minutes * 60_000)).cache()
    groups = group_summaries(history, compacted, stalled)
    ends = _log_ends_source(path, bootstrap_servers, data_dir)
    lagging = lag_over_time(spark, history, ends) if ends is not None else None
    lag_rows = 0
    if lagging is None:
        groups = groups.withColumn("lag", F.lit(None).cast("long"))
    else:
        lag, ends_now = lagging
        lag = lag.orderBy("group", "topic", "partition", "time").cache()
        groups = groups.join(current_lag(compacted, ends_now), "group", "left").orderBy(F.desc("commits"), "group")
        write_table(lag, out, "lag")
        lag_rows = lag.count()
    write_table(groups, out, "groups")
    write_table(stalled.orderBy("group", "topic", "partition"), out, "stalled")
    plots = plot_activity(history, out, plot_groups)
    if lagging is not None and lag_rows:
        plots.append(plot_lag(lag, out, plot_groups))
    return {"groups": groups.count(), "stalled": stalled.count(), "bad_batches": bad_count, "plots": plots,
            "lag_rows": lag_rows if lagging is not None else None}


def _log_ends_source(path: str | list[str] | None, bootstrap_servers: str | None,
                     data_dir: str | None) -> LogEndsSource | None:
    """Where the log end offsets come from: the cluster, else a data directory (``data_dir``,
    or ``path`` when it is one directory), else nowhere."""
    if bootstrap_servers is not None:
        return lambda partitions, times: log_ends.from_cluster(bootstrap_servers, partitions, times)
    if data_dir is None:
        single = path[0] if isinstance(path, list) and len(path) == 1 else path
        data_dir = single if isinstance(single, str) and os.path.isdir(single) else None
    if data_dir is None:
        return None
    directory = data_dir
    return lambda partitions, times: log_ends.from_directory(directory, partitions, times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="*", help="log directory, partition directories, segments or globs")
    parser.add_argument("--bootstrap-servers", help="read a live cluster's __consumer_offsets (and log end offsets)")
    parser.add_argument("--data-dir", help="a log directory holding the topics' NAME-N directories, for lag "
                                           "(default: PATH when it is one directory)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--stall-minutes", type=float, default=10.0,
                        help="a live offset unchanged this long before its group's last commit is stalled")
    parser.add_argument("--plot-groups", type=int, default=10, help="how many of the busiest groups to plot")
    args = parser.parse_args(argv)
    if bool(args.path) == bool(args.bootstrap_servers):
        parser.error("give PATH or --bootstrap-servers (one of them)")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("groupcoord offsets report")
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # plain python: no spark-submit gave a master
        builder = (builder.master("local[*]").config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "16"))
    spark = builder.getOrCreate()
    try:
        result = run(spark, args.path or None, args.out, args.stall_minutes, args.plot_groups,
                     args.bootstrap_servers, args.data_dir)
    finally:
        spark.stop()
    lag = ("lag unknown (no log end offsets)" if result["lag_rows"] is None
           else f"{result['lag_rows']} lag rows")
    print(f"{result['groups']} groups, {result['stalled']} stalled partitions, {result['bad_batches']} bad batches, "
          f"{lag}; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
