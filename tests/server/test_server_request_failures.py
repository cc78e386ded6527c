"""A handler that fails unexpectedly: the request is answered UNKNOWN_SERVER_ERROR for
everything it names, as Kafka answers it, and the connection goes on serving."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from protocol_values import sample_message
from test_server_inprocess import CONFIG, run, serving

from groupcoord.errors import Errors
from groupcoord.protocol.schema import Array, Struct
from groupcoord.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from groupcoord.server import registry
from groupcoord.server.app import ServerOptions
from groupcoord.server.broker import Broker
from groupcoord.server.registry import HANDLERS, RequestContext


def error_codes(message: Struct, version: int) -> list[int]:
    """Every error code in ``message`` at ``version``, nested lists included."""
    found = []
    for f in type(message).__fields__:
        if not f.present(version):
            continue
        value = getattr(message, f.name)
        if f.name == "error_code":
            found.append(value)
        elif isinstance(f.type, Array) and isinstance(f.type.element, type):
            for element in value or ():
                found += error_codes(element, version)
        elif isinstance(f.type, type) and value is not None:
            found += error_codes(value, version)
    return found


def fail(broker: Broker, request: Any, ctx: RequestContext) -> None:
    raise RuntimeError("a bug in a handler")


def test_a_failing_handler_answers_unknown_server_error_at_every_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    failing = [h for key, h in HANDLERS.items() if key != ApiVersionsRequest.api_key]
    for h in failing:
        monkeypatch.setitem(registry._handlers, h.api.request.api_key, dataclasses.replace(h, handle=fail))
    served = [(h, v) for h in failing for v in range(h.min_version, h.max_version + 1)]

    async def main() -> None:
        options = ServerOptions(port=0, data_dir=tmp_path, config=CONFIG)
        async with serving(options) as (_, broker, client):
            for h, version in served:
                request = sample_message(h.api.request, version)
                response, after = await client.pipeline([
                    (request, h.api.response, version),
                    (ApiVersionsRequest(), ApiVersionsResponse, 0),
                ])
                codes = error_codes(response, version)
                assert codes and set(codes) == {Errors.UNKNOWN_SERVER_ERROR}, (h.api.name, version)
                assert after.error_code == Errors.NONE
            failed = broker.metrics.failed_requests
            assert failed == {h.api.name: h.max_version - h.min_version + 1 for h in failing}
            assert not broker.metrics.closed_for

    run(main)
    assert "a bug in a handler" in caplog.text


def test_a_request_whose_error_answer_also_fails_closes_the_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    heartbeat = HANDLERS[12]

    def no_answer(request: Any, version: int, error: Errors) -> None:
        raise RuntimeError("no answer either")

    monkeypatch.setitem(registry._handlers, 12,
                        dataclasses.replace(heartbeat, handle=fail, error_response=no_answer))

    async def main() -> None:
        options = ServerOptions(port=0, data_dir=tmp_path, config=CONFIG)
        async with serving(options) as (_, broker, client):
            request = sample_message(heartbeat.api.request, 4)
            with pytest.raises(Exception):
                await client.call(request, heartbeat.api.response, 4)
            assert broker.metrics.closed_for["handler_error"] == 1

    run(main)
