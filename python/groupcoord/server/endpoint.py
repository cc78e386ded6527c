"""The HTTP endpoint on ``--metrics-port``: Prometheus metrics and the ownership admin call.

- ``GET /metrics``: the metrics in Prometheus' text format (:mod:`groupcoord.server.metrics`).
- ``GET /health/ready``: 200 once every owned ``__consumer_offsets`` partition is loaded and
  none is offline, 503 while one is loading or offline; the body says which
  (:class:`~groupcoord.server.readiness.Readiness`), e.g. ``{"ready": false, "loading": [3],
  "offline": {"12": "loading it failed: ..."}}``. For a Kubernetes readiness probe.
- ``GET /health/live``: 200 whenever the server answers HTTP (a liveness probe).
- ``GET /admin/owned-partitions``: ``{"owned": [...], "loading": [...], "offline": [...]}``,
  the ``__consumer_offsets`` partitions this node serves, those it is loading, and those it
  gave up after a failure of their log and will load again after a backoff.
- ``PUT /admin/owned-partitions`` with a JSON list of partitions: own exactly those from now
  on. Partitions gained are loaded in the background (their groups answer
  COORDINATOR_LOAD_IN_PROGRESS meanwhile), partitions given up are unloaded (their members
  waiting for a JoinGroup or SyncGroup answer get NOT_COORDINATOR, FindCoordinator stops
  naming this node). Answers the new state, or 400 with ``{"error": ...}``.

A deliberately small HTTP/1.1 server on asyncio streams: one request per connection, bodies
up to :data:`MAX_BODY_BYTES`, lines up to asyncio's 64 KiB (a longer one closes the
connection unanswered), reading the request bounded by :data:`READ_TIMEOUT_S` (what
the request then does is not: an ownership change always runs to its end).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from groupcoord.server.broker import Broker
    from groupcoord.server.readiness import Readiness

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 65_536
READ_TIMEOUT_S = 10.0
OWNED_PARTITIONS_PATH = "/admin/owned-partitions"
READY_PATH = "/health/ready"
LIVE_PATH = "/health/live"
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            413: "Payload Too Large", 503: "Service Unavailable"}


class HttpEndpoint:
    def __init__(self, broker: Broker, readiness: Readiness) -> None:
        self.broker = broker
        self.readiness = readiness
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen; returns the bound port (``port`` 0 picks a free one)."""
        self._server = await asyncio.start_server(self._serve, host, port)
        bound: int = self._server.sockets[0].getsockname()[1]
        return bound

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(_read_request(reader), READ_TIMEOUT_S)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ValueError, ConnectionError):
            writer.close()
            return
        status, content_type, body = await self._handle(request)
        head = (
            f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        try:
            writer.write(head.encode() + body)
            await writer.drain()
            writer.close()
            await writer.wait_closed()
        except ConnectionError:
            pass

    async def _handle(self, request: _Request | None) -> tuple[int, str, bytes]:
        if request is None:
            return _json(413, {"error": f"bodies are limited to {MAX_BODY_BYTES} bytes"})
        method, path, body = request
        if path == "/metrics":
            if method != "GET":
                return _json(405, {"error": "GET only"})
            text = self.broker.metrics.render(self.broker)
            return 200, "text/plain; version=0.0.4; charset=utf-8", text.encode()
        if path in (READY_PATH, LIVE_PATH):
            if method != "GET":
                return _json(405, {"error": "GET only"})
            if path == LIVE_PATH:
                return _json(200, {"live": True})
            state = self.readiness.state()
            return _json(200 if state["ready"] else 503, state)
        if path == OWNED_PARTITIONS_PATH:
            if method == "GET":
                return _json(200, self._ownership())
            if method == "PUT":
                return await self._set_owned_partitions(body)
            return _json(405, {"error": "GET or PUT"})
        return _json(404, {"error": f"no {path}; try /metrics, {READY_PATH}, {LIVE_PATH} "
                                    f"or {OWNED_PARTITIONS_PATH}"})

    def _ownership(self) -> dict[str, list[int]]:
        runtime = self.broker.runtime
        return {
            "owned": sorted(runtime.owned_partitions()),
            "loading": sorted(runtime.loading_partitions()),
            "offline": sorted(runtime.offline_partitions()),
        }

    async def _set_owned_partitions(self, body: bytes) -> tuple[int, str, bytes]:
        try:
            partitions = json.loads(body)
        except (ValueError, RecursionError):
            return _json(400, {"error": "the body must be a JSON list of partition numbers"})
        if not isinstance(partitions, list) or not all(
            type(p) is int for p in partitions
        ):
            return _json(400, {"error": "the body must be a JSON list of partition numbers"})
        started = time.monotonic()
        try:
            await self.broker.runtime.set_owned_partitions(partitions)
        except ValueError as error:
            return _json(400, {"error": str(error)})
        log.info("Owned __consumer_offsets partitions set to %s", sorted(set(partitions)))
        self.readiness.log_when_loaded(started, "the ownership change")
        return _json(200, self._ownership())


class _Request(NamedTuple):
    method: str
    path: str
    body: bytes


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    """The request line, headers and body (None: the body is over the limit)."""
    request_line = (await reader.readuntil(b"\r\n")).decode("latin-1").split()
    if len(request_line) != 3:
        raise ValueError("not an HTTP request")
    method, target, _ = request_line
    length = 0
    while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    if not 0 <= length <= MAX_BODY_BYTES:
        return None
    return _Request(method, target.split("?", 1)[0], await reader.readexactly(length))


def _json(status: int, value: object) -> tuple[int, str, bytes]:
    return status, "application/json", json.dumps(value).encode()
