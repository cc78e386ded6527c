"""InitProducerId (key 22): a producer id and epoch for an idempotent producer.

As Kafka's ``KafkaApis.handleInitProducerIdRequest`` and
``TransactionCoordinator.handleInitProducerId`` answer it, in their order:

- v3+: a producer_id without a producer_epoch, or the other way round: INVALID_REQUEST;
- no transactional id (null): a fresh id from :class:`~groupcoord.server.producer_ids.ProducerIdManager`
  and epoch 0, whatever id and epoch were sent; COORDINATOR_LOAD_IN_PROGRESS (retriable) in
  the moment the ids of the current block are used up and the next block is not yet saved;
- an empty transactional id: INVALID_REQUEST;
- any other transactional id: NOT_COORDINATOR. groupcoord runs no transaction coordinator:
  it answers as a Kafka broker that does not lead the transactional id's
  ``__transaction_state`` partition (and FindCoordinator for a transaction key answers
  COORDINATOR_NOT_AVAILABLE, as Kafka does while that partition has no leader), so a
  transactional producer retries until its ``max.block.ms`` runs out.

Errors carry producer id -1 and epoch -1, as Kafka's.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


def _error_response(
    request: InitProducerIdRequest, version: int, error: Errors
) -> InitProducerIdResponse:
    return InitProducerIdResponse(
        error_code=error, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)


def _answer(broker: Broker, request: InitProducerIdRequest) -> InitProducerIdResponse:
    if (request.producer_id == NO_PRODUCER_ID) != (request.producer_epoch == NO_PRODUCER_EPOCH):
        return _error_response(request, 0, Errors.INVALID_REQUEST)
    if request.transactional_id is None:
        producer_id = broker.producer_ids.generate()
        if producer_id is None:
            return _error_response(request, 0, Errors.COORDINATOR_LOAD_IN_PROGRESS)
        return InitProducerIdResponse(error_code=Errors.NONE, producer_id=producer_id, producer_epoch=0)
    if request.transactional_id == "":
        return _error_response(request, 0, Errors.INVALID_REQUEST)
    return _error_response(request, 0, Errors.NOT_COORDINATOR)


@handler(InitProducerIdRequest, versions="0-5", error_response=_error_response)
def init_producer_id(broker: Broker, request: InitProducerIdRequest, ctx: RequestContext) -> None:
    ctx.respond(_answer(broker, request))
