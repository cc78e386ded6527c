"""Messages that encode and decode themselves: a declared :class:`MessageSchema` plus the
codec :mod:`groupcoord.protocol.codec` derives from it, once per (message, version) and cached
on the class. Request and response bodies subclass :class:`Request` and :class:`Response`."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from groupcoord.protocol.codec import (
    decoder_for,
    encoder_for,
    explain_decode_failure,
    explain_encode_failure,
)
from groupcoord.protocol.errors import ProtocolError
from groupcoord.protocol.schema import MessageSchema


class Message(MessageSchema):
    """A declared message with ``encode`` and ``decode`` at any of its versions."""

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview, version: int) -> Self:
        """Decode ``data``, which must hold exactly one message at ``version``.

        Raises:
            ProtocolError: truncated or malformed bytes, trailing bytes, or an undeclared
                version; it names the message, the field and the byte position.
        """
        if type(data) is not bytes:
            data = bytes(data)
        decode = cls._decoders.get(version)
        if decode is None:
            decode = decoder_for(cls, version)
        try:
            message, end = decode(data, 0)
        except Exception as exc:
            raise explain_decode_failure(cls, version, data, 0, exc) from None
        if end != len(data):
            raise ProtocolError(
                f"{len(data) - end} bytes left over after the message",
                message_name=cls.name,
                api_version=version,
                position=end,
            )
        return message  # type: ignore[no-any-return]

    def encode(self, version: int) -> bytes:
        """The message's bytes at ``version``.

        Raises:
            EncodeError: a value the declaration cannot encode at ``version`` (a None where
                the field is not nullable, an integer out of range, a wrong type).
        """
        out = bytearray()
        self.encode_into(out, version)
        return bytes(out)

    def encode_into(self, out: bytearray, version: int) -> None:
        """Append the message's bytes at ``version`` to ``out``."""
        encode = self._encoders.get(version)
        if encode is None:
            encode = encoder_for(type(self), version)
        try:
            encode(self, out)
        except Exception as exc:
            raise explain_encode_failure(self, version, exc) from exc


class Request(Message):
    """A request body; ``api_key`` identifies the API."""

    api_key: ClassVar[int] = -1

    def __init_subclass__(cls, *, api_key: int = -1, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.api_key = api_key


class Response(Message):
    """A response body; ``api_key`` identifies the API."""

    api_key: ClassVar[int] = -1

    def __init_subclass__(cls, *, api_key: int = -1, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.api_key = api_key


__all__ = ["Message", "Request", "Response"]
