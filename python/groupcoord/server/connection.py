"""One client connection: Kafka framing, one request at a time, answers in order.

Bytes arrive in :meth:`KafkaConnection.data_received`; each frame (int32 size, then that many
bytes) is decoded and handed to its handler. As Kafka does, a connection has at most one
request in flight: the next frame is read only once the current one is answered, so answers
leave in request order. A handler that answers at once (Heartbeat) costs no extra loop turn;
one that answers later (JoinGroup, a parked Fetch, anything written to the log) leaves the
rest of the buffer waiting, and reading pauses if more than :data:`READ_AHEAD_BYTES` pile up.
Answers are written to the socket by the network thread (:mod:`groupcoord.server.network`),
off the event loop; a connection whose answers pile up unwritten is not served until the
client has read them.

Bad input never reaches a handler and never stops the server; as in Kafka:

- a size prefix above ``socket.request.max.bytes`` or negative: the connection is closed;
- an unknown API key, or a version no handler serves: closed, except an ApiVersions request
  at a version we do not serve, which gets the v0 fallback answer (error 35 and our
  ApiVersions range) once its header parses as Kafka parses it (flexible from v3 on);
- a frame that does not decode (truncated, garbage): closed;
- a request that decodes but that Kafka refuses as invalid (a handler raises
  :class:`~groupcoord.protocol.ProtocolError`, Kafka's InvalidRequestException): closed;
- a handler that raises anything else (a bug): logged with its traceback and answered
  UNKNOWN_SERVER_ERROR for everything the request names (the handler's declared error
  answer, Kafka's ``getErrorResponse``); the connection stays open;
- no complete request for ``connections.max.idle.ms``: closed.

One event loop serves every connection, so a request that takes long to handle (a
DescribeGroups naming millions of groups) delays the others. The timers' clock stands still
while a request is served and leaves out the time of one that took
:data:`~groupcoord.coordinator.clock.BLOCKED_REQUEST_MS` or more
(:meth:`~groupcoord.coordinator.clock.SystemTime.begin_request`), so that heartbeats queued
behind it keep their members.

A client that disconnects while its request is parked leaves the request to complete
normally (a JoinGroup still joins); its answer is dropped. A request that only waits (a
parked Fetch) registers a cancellation with ``RequestContext.on_disconnect`` and is dropped
with the connection, so abandoned long polls hold no memory.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from typing import TYPE_CHECKING, cast

from groupcoord.coordinator.clock import BLOCKED_REQUEST_MS
from groupcoord.errors import Errors
from groupcoord.protocol import (
    APIS,
    ProtocolError,
    Request,
    Response,
    UnknownApiKeyError,
    UnsupportedVersionError,
    check_api_versions_header,
    decode_request,
    encode_api_versions_fallback,
    encode_response,
    frame_size,
)
from groupcoord.protocol.headers import API_VERSIONS_KEY
from groupcoord.server.registry import (
    HANDLERS,
    CloseConnection,
    Handler,
    RequestContext,
    api_versions_table,
)

if TYPE_CHECKING:
    from groupcoord._native import Channel
    from groupcoord.server.broker import Broker

log = logging.getLogger(__name__)

READ_AHEAD_BYTES = 65_536
"""Bytes buffered beyond a request in flight before reading pauses."""

_SIZE = struct.Struct(">i")
"""A frame's size prefix (:func:`~groupcoord.protocol.frame_size` explains a bad one)."""


class KafkaConnection(asyncio.Protocol):
    def __init__(self, broker: Broker, connections: set[KafkaConnection]) -> None:
        self.broker = broker
        self._connections = connections
        self._max_frame = broker.config.socket_request_max_bytes
        self._idle_s = broker.config.connections_max_idle_ms / 1000
        self._transport: asyncio.Transport | None = None
        self._channel: Channel | None = None
        self._loop = asyncio.get_running_loop()
        self._buffer = bytearray()
        self._in_flight: RequestContext | None = None
        self._answer = self._respond
        self._draining = False
        self._reading_paused = False
        self._writing_paused = False
        self._closed = False
        self._last_active = time.monotonic()
        self._idle_timer: asyncio.TimerHandle | None = None
        self.client_host = "/unknown"

    # --- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport = cast(asyncio.Transport, transport)  # uvloop's too
        peer = transport.get_extra_info("peername")
        if peer:
            self.client_host = f"/{peer[0]}"
        self._channel = self.broker.network.open(transport)
        self._connections.add(self)
        metrics = self.broker.metrics
        metrics.connections_opened += 1
        metrics.connections_open += 1
        self._idle_timer = self._loop.call_later(self._idle_s, self._check_idle)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._transport is None:
            return
        self._closed = True
        self._transport = None
        if self._channel is not None:
            # The client may have half-closed after its last request: it still reads.
            self._channel.close(flush=True)
            self.broker.network.forget(self._channel)
        self._buffer.clear()
        if self._in_flight is not None and self._in_flight.disconnect_callback is not None:
            self._in_flight.disconnect_callback()
        self._connections.discard(self)
        self.broker.metrics.connections_open -= 1
        if self._idle_timer is not None:
            self._idle_timer.cancel()

    def data_received(self, data: bytes) -> None:
        if self._closed:
            return
        self._buffer += data
        self._drain()

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        self._drain()

    def close(self, reason: str | None = None) -> None:
        """Close the connection now, dropping answers the client has not read, as Kafka's
        selector closes a channel: waiting for them to drain would hold the socket for as long
        as a client that stopped reading likes."""
        if self._closed:
            return
        self._closed = True
        if reason is not None:
            self.broker.metrics.closed_for[reason] += 1
        if self._channel is not None:
            self._channel.close()
            self.broker.network.forget(self._channel)
        if self._transport is not None:
            self._transport.abort()

    # --- requests ---------------------------------------------------------------------------

    def _drain(self) -> None:
        """Serve the complete frames buffered, one at a time, while answers come at once."""
        if self._draining:
            return
        self._draining = True
        try:
            while self._in_flight is None and not self._writing_paused and not self._closed:
                frame = self._next_frame()
                if frame is None:
                    break
                self._serve(frame)
        finally:
            self._draining = False
        self._pace_reading()

    def _next_frame(self) -> bytes | None:
        buffer = self._buffer
        if len(buffer) < 4:
            return None
        (size,) = _SIZE.unpack_from(buffer)
        if not 0 <= size <= self._max_frame:
            try:
                frame_size(bytes(buffer[:4]), self._max_frame)
            except ProtocolError as error:  # always: the size is out of bounds
                self._reject("frame_size", error)
            return None
        end = 4 + size
        if len(buffer) < end:
            return None
        frame = bytes(buffer[4:end])
        del buffer[:end]
        self._last_active = time.monotonic()
        return frame

    def _serve(self, frame: bytes) -> None:
        clock = self.broker.time
        clock.begin_request()
        try:
            self._serve_frame(frame)
        finally:
            took_ms = clock.end_request()
            if took_ms >= BLOCKED_REQUEST_MS:
                log.warning("A request of %d bytes from %s kept the event loop for %d ms; sessions "
                            "and other timers are extended by as much", len(frame), self.client_host,
                            took_ms)

    def _serve_frame(self, frame: bytes) -> None:
        started = time.perf_counter()
        try:
            header, request = decode_request(frame)
        except UnknownApiKeyError as error:
            self._reject("unknown_api_key", error)
            return
        except UnsupportedVersionError as error:
            if error.api_key == API_VERSIONS_KEY and error.api_version is not None:
                try:
                    check_api_versions_header(frame, error.api_version)
                except ProtocolError as header_error:
                    self._reject("malformed_request", header_error)
                    return
                self._fallback(error.correlation_id, error.api_version)
            else:
                self._reject("unsupported_version", error)
            return
        except ProtocolError as error:
            self._reject("malformed_request", error)
            return
        api_key, version = header.request_api_key, header.request_api_version
        handler = HANDLERS.get(api_key)
        if handler is None or not handler.serves(version):
            if api_key == API_VERSIONS_KEY:
                self._fallback(header.correlation_id, version)
            else:
                name = handler.api.name if handler else APIS[api_key].name
                self._reject("unsupported_version", ProtocolError(f"{name} v{version} is not served"))
            return
        in_flight = RequestContext(handler.api.name, version, header.correlation_id,
                                   header.client_id or "", self.client_host, started, self._answer)
        self._in_flight = in_flight
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s v%d #%d from %s: %r", handler.api.name, version, header.correlation_id,
                      self.client_host, request)
        try:
            handler.handle(self.broker, request, in_flight)
        except ProtocolError as error:
            self._in_flight = None
            self._reject("invalid_request", error)
        except Exception:
            log.exception("%s v%d from %s failed; answering UNKNOWN_SERVER_ERROR",
                          handler.api.name, version, self.client_host)
            self.broker.metrics.failed_requests[handler.api.name] += 1
            if self._in_flight is in_flight:
                self._answer_failure(in_flight, handler, request)
        finally:
            self.broker.after_request()

    def _answer_failure(self, in_flight: RequestContext, handler: Handler, request: Request) -> None:
        """Answer UNKNOWN_SERVER_ERROR for everything the request names, as Kafka answers a
        request whose handling threw; close the connection if even that fails."""
        try:
            response = handler.error_response(request, in_flight.api_version,
                                              Errors.UNKNOWN_SERVER_ERROR)
        except Exception:
            log.exception("%s v%d: no error answer either; closing the connection",
                          handler.api.name, in_flight.api_version)
            self._in_flight = None
            self.close("handler_error")
            return
        self._respond(in_flight, response)

    def _respond(self, in_flight: RequestContext, response: Response | CloseConnection | None) -> None:
        if self._in_flight is not in_flight:
            if not self._closed:
                log.error("%s answered twice; second answer dropped", in_flight.api_name)
            return
        self._in_flight = None
        if isinstance(response, CloseConnection):
            self.close("failed_without_answer")
            return
        self.broker.metrics.observe_request(
            in_flight.api_name, time.perf_counter() - in_flight.started
        )
        if self._closed or self._transport is None:
            return
        if response is None:
            self._resume_soon()
            return
        try:
            data = encode_response(in_flight.correlation_id, response, in_flight.api_version)
        except ValueError:
            log.exception("%s v%d answer could not be encoded; closing the connection",
                          in_flight.api_name, in_flight.api_version)
            self.close("encode_error")
            return
        self._write(data)
        self._last_active = time.monotonic()
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s v%d #%d answered: %r", in_flight.api_name, in_flight.api_version,
                      in_flight.correlation_id, response)
        self._resume_soon()

    def _write(self, data: bytes | bytearray) -> None:
        """Send ``data`` after the answers before it: through the network thread, which has
        this connection wait while too much of it is still to be written."""
        channel = self._channel
        if channel is None:
            assert self._transport is not None
            self._transport.write(data)
        elif not self.broker.network.send(channel, data, self):
            self.pause_writing()

    def _resume_soon(self) -> None:
        if self._draining:
            return
        if len(self._buffer) >= 4:
            # Answered later, from a callback (perhaps the coordinator's, mid-way through
            # answering a whole group): serve the next request in a turn of its own.
            self._loop.call_soon(self._drain)
        else:
            # Nothing buffered (as usual: clients wait for the answer): the next request is
            # served when it arrives.
            self._pace_reading()

    def _fallback(self, correlation_id: int | None, version: int | None) -> None:
        """ApiVersions at a version we do not serve: Kafka's v0 answer with error 35."""
        if self._transport is None or correlation_id is None:
            return
        log.debug("ApiVersions v%s from %s: answering with the v0 fallback", version,
                  self.client_host)
        own = [entry for entry in api_versions_table() if entry.api_key == API_VERSIONS_KEY]
        self._write(encode_api_versions_fallback(correlation_id, own))

    def _reject(self, reason: str, error: ProtocolError) -> None:
        log.info("Closing the connection from %s: %s", self.client_host, error)
        self.close(reason)

    # --- flow control and idleness ----------------------------------------------------------

    def _pace_reading(self) -> None:
        if self._transport is None:
            return
        waiting = self._in_flight is not None or self._writing_paused
        if waiting and len(self._buffer) >= READ_AHEAD_BYTES:
            if not self._reading_paused:
                self._reading_paused = True
                self._transport.pause_reading()
        elif self._reading_paused:
            self._reading_paused = False
            self._transport.resume_reading()

    def _check_idle(self) -> None:
        if self._closed:
            return
        idle_for = time.monotonic() - self._last_active
        if self._in_flight is None and idle_for >= self._idle_s:
            log.info("Closing the connection from %s: idle for %.0f s", self.client_host, idle_for)
            self.close("idle")
            return
        self._idle_timer = self._loop.call_later(max(self._idle_s - idle_for, 1.0), self._check_idle)

