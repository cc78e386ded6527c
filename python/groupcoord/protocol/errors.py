"""The protocol layer's one exception family.

Every failure to read a request (truncated, a length prefix past the end, a frame too large,
an API key or version we do not declare) raises :class:`ProtocolError`, a ``ValueError``:
nothing else escapes a decoder. The error carries what was readable before
the failure, so a server can still answer (UNSUPPORTED_VERSION) or log and close.
"""

from __future__ import annotations


class ProtocolError(ValueError):
    """Bytes that are not a valid Kafka message.

    Attributes:
        reason: what was wrong, e.g. ``"truncated: needs 4 bytes, 1 left"``.
        message_name: the message or struct being read (``"JoinGroupRequest"``), if known.
        field: the path of the field being read (``"protocols[1].metadata"``), if known.
        position: the byte offset of the failure, counted from the start of the buffer given
            to the decoder (for a frame: the first byte after the length prefix).
        api_key, api_version, correlation_id: from the request header, when it was readable.
    """

    def __init__(
        self,
        reason: str,
        *,
        message_name: str | None = None,
        field: str | None = None,
        position: int | None = None,
        api_key: int | None = None,
        api_version: int | None = None,
        correlation_id: int | None = None,
    ) -> None:
        self.reason = reason
        self.message_name = message_name
        self.field = field
        self.position = position
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id
        super().__init__(reason)

    def __str__(self) -> str:
        where = []
        if self.message_name is not None:
            name = self.message_name
            if self.api_version is not None:
                name += f" v{self.api_version}"
            where.append(name)
        elif self.api_key is not None:
            where.append(f"api key {self.api_key} v{self.api_version}")
        if self.field is not None:
            where.append(f"field {self.field}")
        if self.position is not None:
            where.append(f"at byte {self.position}")
        return f"{', '.join(where)}: {self.reason}" if where else self.reason


class UnsupportedVersionError(ProtocolError):
    """A request whose API key is declared but whose version is not.

    Kafka answers UNSUPPORTED_VERSION to an ApiVersions request at such a version (with the
    v0 body, see ``encode_api_versions_fallback``) and closes the connection for any other API.
    """


class UnknownApiKeyError(ProtocolError):
    """A request whose API key no message declares; Kafka closes the connection."""


class EncodeError(ValueError):
    """A message value that cannot be encoded at the requested version (a None where the field
    is not nullable, an integer out of range, a wrong type): a bug in whoever built it."""

    def __init__(self, reason: str, *, message_name: str, version: int, field: str | None) -> None:
        self.reason = reason
        self.message_name = message_name
        self.version = version
        self.field = field
        where = f"{message_name} v{version}" + (f", field {field}" if field else "")
        super().__init__(f"{where}: {reason}")
