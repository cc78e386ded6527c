"""spark/offsets_report.py run as a user runs it (``python spark/offsets_report.py PATH --out
DIR``) on a log written with the codec: its tables and plots."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from offsets_logs import T0, LogBuilder, consumer_members, encoded, write_log_dir

from groupcoord.format import codec
from groupcoord.format.codec import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey, OffsetCommitValue

ROOT = Path(__file__).resolve().parents[1]
MINUTE = 60_000


def report_log(root: Path) -> None:
    """billing: generation 3, two members; commits every 30 s for 20 minutes on orders-0..2,
    where orders-1 stops advancing after 5 minutes. audit: one member, four commits. old: a
    group and its offset, deleted. Partition 1 of the log holds audit (a second log partition)."""
    log = LogBuilder("gzip")
    members = consumer_members("billing", 2, 1)
    log.write([encoded(GroupMetadataKey("billing"), GroupMetadataValue("consumer", 3, "range", members[0].member_id, T0, members)),
               encoded(GroupMetadataKey("old"), GroupMetadataValue("consumer", 1, "range", None, T0, [])),
               encoded(OffsetCommitKey("old", "orders", 0), OffsetCommitValue(5, "", T0))])
    for step in range(41):
        now = T0 + step * 30_000
        log.timestamp = now
        log.write([encoded(OffsetCommitKey("billing", "orders", p),
                           OffsetCommitValue(1000 * p + (min(step, 10) if p == 1 else step), "", now)) for p in range(3)])
    log.write([encoded(GroupMetadataKey("old"), None), encoded(OffsetCommitKey("old", "orders", 0), None)])
    other = LogBuilder("none")
    other.write([encoded(GroupMetadataKey("audit"),
                         GroupMetadataValue("consumer", 4, "range", "audit-member-0", T0, consumer_members("audit", 1, 3)))])
    for step in range(4):
        other.timestamp = T0 + step * MINUTE
        other.write([encoded(OffsetCommitKey("audit", "events", 0), OffsetCommitValue(step, "", other.timestamp))])
    transactions(other)
    write_log_dir(root, {0: log.batches, 1: other.batches}, segment_bytes=2500)
    write_orders(root)


def write_orders(root: Path) -> None:
    """The data topic billing reads, beside the log: orders-p starts with 1000 * p records
    (before T0), then gets one record 1 ms after each of billing's 41 commits, in two
    segments. billing commits 1000 * p + step, so it lags by 1 at every bucket's end, but on
    orders-1 (stuck at 1010 from step 10)."""
    for p in range(3):
        directory = root / f"orders-{p}"
        directory.mkdir()
        first = [codec.write_batch([(None, b"x")] * (1000 * p), base_offset=0, timestamp=T0 - MINUTE)] if p else []
        steps = [codec.write_batch([(None, b"x")], base_offset=1000 * p + k, timestamp=T0 + k * 30_000 + 1)
                 for k in range(41)]
        (directory / "00000000000000000000.log").write_bytes(b"".join(first + steps[:20]))
        (directory / f"{1000 * p + 20:020d}.log").write_bytes(b"".join(steps[20:]))


def orders_end(p: int, t: int) -> int:
    """The end of orders-p at time t: the first offset stamped at or after t."""
    k = next((k for k in range(41) if T0 + k * 30_000 + 1 >= t), 41)
    return 1000 * p + k


def transactions(log: LogBuilder) -> None:
    """txn: a plain commit (events-0) and transactional ones of which only producer 7's takes
    effect: 8's is aborted, 9's still open, and 10's key is tombstoned before its COMMIT."""
    def commit(partition: int, offset: int, producer_id: int = -1) -> None:
        log.write([encoded(OffsetCommitKey("txn", "events", partition), OffsetCommitValue(offset, "", log.timestamp))],
                  producer_id=producer_id)

    commit(0, 1)
    for producer_id, partition in ((7, 1), (8, 2), (9, 3), (10, 4)):
        commit(partition, 10 * partition, producer_id)
    log.write([encoded(OffsetCommitKey("txn", "events", 4), None)])
    log.marker(7, commit=True)
    log.marker(8, commit=False)
    log.marker(10, commit=True)


def read_csv(directory: Path) -> list[dict[str, str]]:
    [part] = directory.glob("part-*.csv")
    with part.open() as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.timeout(300)
def test_report_tables_and_plots(tmp_path: Path) -> None:
    report_log(tmp_path / "logs")
    out = tmp_path / "report"
    done = subprocess.run([sys.executable, str(ROOT / "spark" / "offsets_report.py"), str(tmp_path / "logs"),
                           "--out", str(out)], capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "3 groups, 1 stalled partitions, 0 bad batches" in done.stdout
    lag_rows = read_lag(out)
    assert f"{len(lag_rows)} lag rows" in done.stdout

    groups = {r["group"]: r for r in pq.read_table(out / "groups.parquet").to_pylist()}
    assert sorted(groups) == ["audit", "billing", "txn"]
    assert (groups["txn"]["commits"], groups["txn"]["committed_partitions"]) == (2, 2), \
        "aborted, open and tombstoned transactional commits are not commits"
    billing = groups["billing"]
    assert (billing["protocol_type"], billing["generation"], billing["members"]) == ("consumer", 3, 2)
    assert billing["member_ids"] == ["billing-member-0", "billing-member-1"]
    assert billing["assigned_partitions"] == 8  # two members x two topics x partitions m and m + 2
    assert billing["committed_partitions"] == 3 and billing["commits"] == 123
    assert billing["commits_per_minute"] == pytest.approx(123 / 20)
    assert billing["last_commit_time"].timestamp() * 1000 == T0 + 20 * MINUTE
    assert billing["stalled_partitions"] == ["orders-1"]
    assert groups["audit"]["stalled_partitions"] == [] and groups["audit"]["commits"] == 4
    assert billing["lag"] == 1 + 31 + 1, "the log ends now: 41, 1041, 2041"
    assert groups["audit"]["lag"] is None, "events has no directory: its lag is unknown"

    [stalled] = pq.read_table(out / "stalled.parquet").to_pylist()
    assert (stalled["group"], stalled["topic"], stalled["partition"], stalled["committed_offset"]) == ("billing", "orders", 1, 1010)
    assert stalled["since"].timestamp() * 1000 == T0 + 5 * MINUTE and stalled["stalled_minutes"] == 15.0

    rows = {r["group"]: r for r in read_csv(out / "groups.csv")}
    assert rows["billing"]["member_ids"] == "billing-member-0;billing-member-1"
    assert rows["billing"]["stalled_partitions"] == "orders-1" and rows["audit"]["generation"] == "4"
    assert read_csv(out / "stalled.csv")[0]["topic"] == "orders"

    plots = [out / "commit_activity.png", out / "groups" / "billing.png", out / "groups" / "audit.png", out / "lag.png"]
    for plot in plots:
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000


def read_lag(out: Path) -> list[dict[str, object]]:
    """lag.parquet, checked against the definition: at each bucket's end (buckets of a minute
    over billing's 20 minutes), the last offset committed by then against orders' end then."""
    rows = pq.read_table(out / "lag.parquet").to_pylist()
    width = MINUTE
    ends = range(T0 // width * width + width, (T0 + 20 * MINUTE) // width * width + 2 * width, width)
    # old committed orders-0 at 5 at T0 and was deleted at T0 + 20 minutes (the last bucket);
    # audit and txn commit to events, which has no directory here: their lag is unknown.
    expected = []
    for p in range(3):
        for end in ends:
            step = max(s for s in range(41) if T0 + s * 30_000 < end)
            committed = 1000 * p + (min(step, 10) if p == 1 else step)
            expected.append(("billing", "orders", p, end, committed, orders_end(p, end),
                             max(0, orders_end(p, end) - committed)))
    expected += [("old", "orders", 0, end, 5, orders_end(0, end), max(0, orders_end(0, end) - 5)) for end in ends[:-1]]
    got = [(r["group"], r["topic"], r["partition"], int(r["time"].timestamp() * 1000), r["committed_offset"],
            r["log_end_offset"], r["lag"]) for r in rows]
    assert got == expected
    assert [r[-1] for r in got if r[:3] == ("billing", "orders", 1)][-1] == 1041 - 1010, "orders-1 stuck at 1010"
    assert read_csv(out / "lag.csv")[0]["group"] == "billing"
    assert {r["group"] for r in rows} == {"billing", "old"}
    return rows
