"""InitProducerId (key 22), versions 0-5, flexible from 2.

A producer's first request: an idempotent producer gets a producer id and epoch to stamp its
batches with; a transactional one names its transactional id.

Version notes: v1 is v0 (quota throttling after the answer); v3 adds producer_id and
producer_epoch, with which a producer asks for a new epoch after INVALID_PRODUCER_EPOCH; v4 and
v5 only widen the errors a broker may return (PRODUCER_FENCED, TRANSACTION_ABORTABLE). Kafka's
v6 (two-phase commit, KIP-939) is unstable and not declared.
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import INT16, INT32, INT64, STRING, field


class InitProducerIdRequest(Request, api_key=22, versions="0-5", flexible="2+"):
    transactional_id: str | None = field(STRING, nullable="0+")
    transaction_timeout_ms: int = field(INT32)
    producer_id: int = field(INT64, versions="3+", default=-1)
    producer_epoch: int = field(INT16, versions="3+", default=-1)


class InitProducerIdResponse(Response, api_key=22, versions="0-5", flexible="2+"):
    throttle_time_ms: int = field(INT32)
    error_code: int = field(INT16)
    producer_id: int = field(INT64, default=-1)
    producer_epoch: int = field(INT16)
