"""The server's metrics, rendered in Prometheus' text exposition format (version 0.0.4).

Counted as requests are served: requests and their latency by API (a histogram), connections,
connections closed for bad input. Read from the coordinator when scraped: groups by state,
members, completed rebalances, committed and expired offsets, purgatory sizes, owned and
loading ``__consumer_offsets`` partitions; and from the log cleaner: its passes, the records
it removed and the bytes it freed. Written by hand rather than with ``prometheus_client``: a
handful of series, no dependency, no second thread serving them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sized
from typing import Protocol

from groupcoord.coordinator import GroupState
from groupcoord.coordinator.group_coordinator import GroupCoordinator
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.storage.cleaner import LogCleaner

LATENCY_BUCKETS_S = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0, 30.0,
)
GROUP_STATES = tuple(state.value for state in GroupState)


class Histogram:
    """Counts per bucket (upper bounds in seconds), a count and a sum."""

    __slots__ = ("buckets", "count", "sum")

    def __init__(self) -> None:
        self.buckets = [0] * (len(LATENCY_BUCKETS_S) + 1)
        self.count = 0
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.buckets[bisect_left(LATENCY_BUCKETS_S, seconds)] += 1
        self.count += 1
        self.sum += seconds

    def cumulative(self) -> Iterable[tuple[str, int]]:
        total = 0
        for bound, count in zip((*map(repr, LATENCY_BUCKETS_S), "+Inf"), self.buckets):
            total += count
            yield bound, total


class Observed(Protocol):
    """What the metrics read when scraped: the broker's parts."""

    @property
    def coordinator(self) -> GroupCoordinator: ...

    @property
    def runtime(self) -> CoordinatorRuntime: ...

    @property
    def cleaner(self) -> LogCleaner | None: ...

    @property
    def fetches(self) -> Sized: ...


class Metrics:
    def __init__(self) -> None:
        self.requests: dict[str, Histogram] = {}
        self.connections_opened = 0
        self.connections_open = 0
        self.closed_for: Counter[str] = Counter()
        """Connections closed by the server, by reason (bad frame, unsupported version...)."""
        self.failed_requests: Counter[str] = Counter()
        """Requests whose handler failed unexpectedly (answered UNKNOWN_SERVER_ERROR), by API."""

    def observe_request(self, api: str, seconds: float) -> None:
        histogram = self.requests.get(api)
        if histogram is None:
            histogram = self.requests[api] = Histogram()
        histogram.observe(seconds)

    def render(self, broker: Observed) -> str:
        out: list[str] = []

        def family(name: str, kind: str, help_text: str) -> None:
            out.append(f"# HELP groupcoord_{name} {help_text}")
            out.append(f"# TYPE groupcoord_{name} {kind}")

        coordinator = broker.coordinator
        groups = coordinator.manager.current_groups()
        states = Counter(g.state.value for g in groups)
        family("groups", "gauge", "Classic groups by state.")
        for state in GROUP_STATES:
            out.append(f'groupcoord_groups{{state="{state}"}} {states[state]}')
        family("members", "gauge", "Members of all groups.")
        out.append(f"groupcoord_members {sum(g.size for g in groups)}")
        family("rebalances_total", "counter", "Rebalances completed (leader assignments stored).")
        out.append(f"groupcoord_rebalances_total {coordinator.completed_rebalances}")
        family("offset_commits_total", "counter", "Offsets committed (records appended).")
        out.append(f"groupcoord_offset_commits_total {coordinator.manager.offset_commits}")
        family("offsets_expired_total", "counter",
               "Committed offsets removed by offset retention (Kafka's offset-expiration-count).")
        out.append(f"groupcoord_offsets_expired_total {coordinator.manager.offsets_expired}")
        cleaner = broker.cleaner
        if cleaner is not None:
            family("log_cleaner_passes_total", "counter", "Cleaning passes over a partition's log.")
            out.append(f"groupcoord_log_cleaner_passes_total {cleaner.passes}")
            family("log_cleaner_records_removed_total", "counter",
                   "Records the log cleaner removed (superseded, tombstones past their horizon).")
            out.append(f"groupcoord_log_cleaner_records_removed_total {cleaner.records_removed}")
            family("log_cleaner_bytes_reclaimed_total", "counter",
                   "Bytes of segments the log cleaner's passes freed.")
            out.append(f"groupcoord_log_cleaner_bytes_reclaimed_total {cleaner.bytes_reclaimed}")
        family("purgatory_delayed", "gauge", "Delayed operations pending, by purgatory.")
        out.append(f'groupcoord_purgatory_delayed{{purgatory="coordinator"}} '
                   f"{coordinator.purgatory.num_delayed()}")
        out.append(f'groupcoord_purgatory_delayed{{purgatory="fetch"}} {len(broker.fetches)}')
        family("purgatory_watched", "gauge", "Operations in watcher lists, by purgatory.")
        out.append(f'groupcoord_purgatory_watched{{purgatory="coordinator"}} '
                   f"{coordinator.purgatory.watched()}")
        family("partitions", "gauge", "__consumer_offsets partitions by status on this node.")
        out.append(f'groupcoord_partitions{{status="owned"}} '
                   f"{len(coordinator.manager.owned_partitions)}")
        out.append(f'groupcoord_partitions{{status="loading"}} '
                   f"{len(coordinator.manager.loading_partitions)}")
        out.append(f'groupcoord_partitions{{status="offline"}} '
                   f"{len(broker.runtime.offline_partitions())}")
        family("partitions_damaged", "gauge",
               "Offline __consumer_offsets partitions refused for damage in their log "
               "(see the ERROR log line; groupcoord repair).")
        out.append(f"groupcoord_partitions_damaged {len(broker.runtime.damaged_partitions())}")
        family("connections", "gauge", "Client connections open.")
        out.append(f"groupcoord_connections {self.connections_open}")
        family("connections_opened_total", "counter", "Client connections accepted.")
        out.append(f"groupcoord_connections_opened_total {self.connections_opened}")
        family("connections_closed_total", "counter",
               "Connections the server closed, by reason.")
        for reason, count in sorted(self.closed_for.items()):
            out.append(f'groupcoord_connections_closed_total{{reason="{reason}"}} {count}')
        family("requests_total", "counter", "Requests answered, by API.")
        for api, histogram in sorted(self.requests.items()):
            out.append(f'groupcoord_requests_total{{api="{api}"}} {histogram.count}')
        family("request_failures_total", "counter",
               "Requests whose handling failed unexpectedly, answered UNKNOWN_SERVER_ERROR, by API.")
        for api, count in sorted(self.failed_requests.items()):
            out.append(f'groupcoord_request_failures_total{{api="{api}"}} {count}')
        family("request_duration_seconds", "histogram",
               "Time from a request's arrival to its answer, by API.")
        for api, histogram in sorted(self.requests.items()):
            for bound, count in histogram.cumulative():
                out.append(
                    f'groupcoord_request_duration_seconds_bucket{{api="{api}",le="{bound}"}} {count}'
                )
            out.append(f'groupcoord_request_duration_seconds_sum{{api="{api}"}} {histogram.sum}')
            out.append(f'groupcoord_request_duration_seconds_count{{api="{api}"}} {histogram.count}')
        return "\n".join(out) + "\n"
