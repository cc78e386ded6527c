"""Raw wire exchanges with a server under test: frames over a plain socket."""

from __future__ import annotations

import socket
import struct
from typing import TypeVar

from protocol_values import request_frame
from server_process import ServerProcess

from groupcoord.protocol import Request, Response, decode_response
from groupcoord.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse

R = TypeVar("R", bound=Response)

READ_TIMEOUT_S = 10.0


def connect(server: ServerProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=READ_TIMEOUT_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_frame(sock: socket.socket) -> bytes | None:
    """One response frame (after its size), or None if the server closed the connection."""
    prefix = read_exactly(sock, 4)
    if prefix is None:
        return None
    (size,) = struct.unpack(">i", prefix)
    return read_exactly(sock, size)


def read_exactly(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def framed(frame: bytes) -> bytes:
    return struct.pack(">i", len(frame)) + frame


def exchange(sock: socket.socket, request: Request, response_type: type[R], version: int,
             client_id: str = "test", correlation_id: int = 1) -> R:
    """Send ``request`` and read its answer, which must come (the connection stays open)."""
    sock.sendall(framed(request_frame(request, version, correlation_id, client_id)))
    frame = read_frame(sock)
    assert frame is not None, "the server closed the connection instead of answering"
    header, response = decode_response(frame, response_type, version)
    assert header.correlation_id == correlation_id
    assert isinstance(response, response_type)
    return response


def api_versions(sock: socket.socket, version: int = 3, correlation_id: int = 1) -> ApiVersionsResponse:
    request = ApiVersionsRequest(client_software_name="test", client_software_version="1")
    return exchange(sock, request, ApiVersionsResponse, version, correlation_id=correlation_id)


def assert_closed(sock: socket.socket) -> None:
    """The server closes the connection (reads EOF, or a reset) without answering."""
    try:
        assert sock.recv(1) == b""
    except ConnectionResetError:
        pass


