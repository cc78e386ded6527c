"""The refusal of a consumer-group request, inside the consumer-group modules.

Kafka's consumer-group code throws an ``ApiException`` wherever it refuses a request and its
service turns it into the response's error code and message. Here :class:`GroupError` plays
that part inside :mod:`groupcoord.coordinator.consumer` alone: the handler catches it and
answers with its code and message, so no exception crosses the coordinator's API.
"""

from __future__ import annotations

from groupcoord.errors import Errors


class GroupError(Exception):
    """A request refused with ``error`` and Kafka's ``message`` (None: the error's default)."""

    def __init__(self, error: Errors, message: str | None = None) -> None:
        super().__init__(message or error.name)
        self.error = error
        self.message = message
