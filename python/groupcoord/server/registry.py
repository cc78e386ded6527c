"""The handler registry: one handler per API key, each declaring the versions it serves.

A handler module registers itself with the :func:`handler` decorator, naming the answer
its request gets when handling it fails unexpectedly (Kafka's ``getErrorResponse``)::

    def heartbeat_error(request: HeartbeatRequest, version: int, error: Errors) -> Response:
        return HeartbeatResponse(error_code=error)

    @handler(HeartbeatRequest, versions="0-4", error_response=heartbeat_error)
    def heartbeat(broker: Broker, request: HeartbeatRequest, ctx: RequestContext) -> None:
        ...
        ctx.respond(HeartbeatResponse(error_code=error))

The served range must lie within the versions the message declares
(:data:`groupcoord.protocol.APIS`). The ApiVersions answer (:func:`api_versions_table`) and the
connection's version check are both derived from this registry, so an API is advertised
exactly when, and at exactly the versions at which, a handler serves it.

A handler answers through ``ctx.respond``, exactly once: at once, or later from a callback
(a rebalance completing, an append written, a Fetch's wait running out).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from groupcoord.errors import Errors
from groupcoord.protocol import APIS, Api, Request, Response
from groupcoord.protocol.messages.api_versions import ApiVersion
from groupcoord.protocol.schema import parse_versions

if TYPE_CHECKING:
    from groupcoord.server.broker import Broker

R = TypeVar("R", bound=Request)

log = logging.getLogger("groupcoord.server")

_answering: set[asyncio.Future[None]] = set()
"""Answers being worked out off the request path (held so the tasks are not collected)."""


class CloseConnection:
    """The answer that closes the connection instead (Produce with acks=0 that failed)."""


CLOSE_CONNECTION = CloseConnection()


class RequestContext:
    """The request being served on a connection: what a handler knows about it besides its
    body, and how it answers. Made by the connection for each request."""

    __slots__ = ("api_name", "api_version", "correlation_id", "client_id", "client_host",
                 "started", "disconnect_callback", "_answer")

    def __init__(
        self,
        api_name: str,
        api_version: int,
        correlation_id: int,
        client_id: str,
        client_host: str,
        started: float,
        answer: Callable[[RequestContext, Response | CloseConnection | None], None],
    ) -> None:
        self.api_name = api_name
        self.api_version = api_version
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.client_host = client_host
        """As Kafka shows it in DescribeGroups: ``/`` and the client's IP address."""
        self.started = started
        """``time.perf_counter()`` when the request arrived."""
        self.disconnect_callback: Callable[[], None] | None = None
        self._answer = answer

    def respond(self, response: Response | None) -> None:
        """Answer the request; None sends nothing (Produce with acks=0 expects no answer)."""
        self._answer(self, response)

    def respond_later(self, answer: Awaitable[Response], failed: Callable[[Errors], Response]) -> None:
        """Answer with what ``answer`` gives once done (a change saved durably, off the event
        loop); if it raises, with ``failed(UNKNOWN_SERVER_ERROR)``, logged."""

        async def run() -> None:
            try:
                response = await answer
            except Exception:
                log.exception("%s v%d failed; answering UNKNOWN_SERVER_ERROR", self.api_name, self.api_version)
                response = failed(Errors.UNKNOWN_SERVER_ERROR)
            self.respond(response)

        task = asyncio.ensure_future(run())
        _answering.add(task)
        task.add_done_callback(_answering.discard)

    def close_connection(self) -> None:
        """Answer by closing the connection (Kafka's ``closeConnection``: a failed Produce
        with acks=0, whose client then refreshes its metadata)."""
        self._answer(self, CLOSE_CONNECTION)

    def on_disconnect(self, cancel: Callable[[], None]) -> None:
        """Register what to call if the client disconnects before the answer: for a request
        that only waits, so that it stops waiting."""
        self.disconnect_callback = cancel


HandlerFunction = Callable[["Broker", Any, RequestContext], None]
ErrorResponse = Callable[[Any, int, Errors], "Response | None"]
"""The answer to a request (at a version) that failed with an error as a whole: every group,
topic or partition it names gets the error. None: no answer (Produce with acks=0)."""

UNEXPECTED_ERROR_MESSAGE = "The server experienced an unexpected error when processing the request."
"""Kafka's message for UNKNOWN_SERVER_ERROR, in answers that carry one."""


@dataclass(frozen=True)
class Handler:
    api: Api
    min_version: int
    max_version: int
    handle: HandlerFunction
    error_response: ErrorResponse

    def serves(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


_handlers: dict[int, Handler] = {}
HANDLERS: Mapping[int, Handler] = MappingProxyType(_handlers)
"""Registered handlers by API key (filled when ``groupcoord.server.handlers`` is imported)."""


def handler(
    request: type[R], *, versions: str, error_response: Callable[[R, int, Errors], Response | None]
) -> Callable[[Callable[[Broker, R, RequestContext], None]], Callable[[Broker, R, RequestContext], None]]:
    """Register the decorated function as the handler of ``request``'s API at ``versions``
    (Kafka's syntax: ``"0-9"``), and ``error_response`` as its answer when it fails."""
    api = APIS[request.api_key]
    low, high = parse_versions(versions)
    if not api.min_version <= low <= high <= api.max_version:
        raise ValueError(
            f"{api.name} handler versions {versions} outside the declared "
            f"{api.min_version}-{api.max_version}"
        )
    if request.api_key in _handlers:
        raise ValueError(f"a second handler for {api.name}")

    def register(
        function: Callable[[Broker, R, RequestContext], None],
    ) -> Callable[[Broker, R, RequestContext], None]:
        _handlers[request.api_key] = Handler(api, low, high, function, error_response)
        api_versions_table.cache_clear()
        return function

    return register


@cache
def api_versions_table() -> list[ApiVersion]:
    """The API table every ApiVersions answer (and its v0 fallback) carries."""
    return [
        ApiVersion(api_key=key, min_version=h.min_version, max_version=h.max_version)
        for key, h in sorted(_handlers.items())
    ]
