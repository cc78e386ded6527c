"""DescribeConfigs (key 32): a topic's configs, or this broker's settings (read-only).

Every config of a TOPIC resource (or those its configuration_keys name), with its value and
source, its synonyms when include_synonyms asks (v1+), its type (v3+) and documentation when
include_documentation asks (v3+): see :mod:`groupcoord.server.config_resources`. An unknown
topic gets UNKNOWN_TOPIC_OR_PARTITION, an illegal name INVALID_TOPIC_EXCEPTION. A BROKER
resource named by this node's id lists its settings; an empty name (the cluster-wide dynamic
defaults) lists none, as there are none; another id gets INVALID_REQUEST. Other resource
types (broker loggers, client metrics, groups) get INVALID_REQUEST.

Version notes: v1 adds config_source and synonyms, v3 config_type and documentation; v2 only
lets the broker throttle; v4 is the first flexible version.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
)
from groupcoord.server.broker import Broker
from groupcoord.server.config_resources import (
    ConfigEntry,
    ConfigError,
    ResourceType,
    broker_config_entries,
    check_broker_name,
    offsets_topic_overrides,
    topic_config_entries,
)
from groupcoord.server.registry import RequestContext, handler
from groupcoord.server.topics import OFFSETS_TOPIC, topic_name_error


def _error_response(request: DescribeConfigsRequest, version: int, error: Errors) -> DescribeConfigsResponse:
    return DescribeConfigsResponse(results=[
        DescribeConfigsResult(error_code=error, error_message=None, resource_type=r.resource_type,
                              resource_name=r.resource_name)
        for r in request.resources
    ])


def _entries(broker: Broker, resource: DescribeConfigsResource) -> list[ConfigEntry]:
    name = resource.resource_name
    if resource.resource_type == ResourceType.TOPIC:
        if name == OFFSETS_TOPIC:
            return topic_config_entries(broker.config, offsets_topic_overrides(broker.config))
        if topic_name_error(name) is not None:
            raise ConfigError(Errors.INVALID_TOPIC_EXCEPTION, topic_name_error(name) or "")
        topic = broker.topics.get(name)
        if topic is None:
            raise ConfigError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        return topic_config_entries(broker.config, topic.configs)
    if resource.resource_type == ResourceType.BROKER:
        check_broker_name(name, broker.node.node_id)
        return broker_config_entries(broker.config, broker.node.node_id) if name else []
    raise ConfigError(Errors.INVALID_REQUEST, f"Unsupported resource type: {resource.resource_type}")


def _result(entry: ConfigEntry, request: DescribeConfigsRequest) -> DescribeConfigsResourceResult:
    return DescribeConfigsResourceResult(
        name=entry.name, value=entry.value, read_only=entry.read_only, config_source=entry.source,
        is_sensitive=False,
        synonyms=[
            DescribeConfigsSynonym(name=s.name, value=s.value, source=s.source) for s in entry.synonyms
        ] if request.include_synonyms else [],
        config_type=entry.type,
        documentation=entry.doc if request.include_documentation else None,
    )


@handler(DescribeConfigsRequest, versions="1-4", error_response=_error_response)
def describe_configs(broker: Broker, request: DescribeConfigsRequest, ctx: RequestContext) -> None:
    results = []
    for resource in request.resources:
        try:
            entries = _entries(broker, resource)
        except ConfigError as error:
            results.append(DescribeConfigsResult(
                error_code=error.error, error_message=error.message,
                resource_type=resource.resource_type, resource_name=resource.resource_name))
            continue
        keys = resource.configuration_keys
        if keys is not None:
            entries = [e for e in entries if e.name in keys]
        results.append(DescribeConfigsResult(
            error_code=Errors.NONE, error_message=None, resource_type=resource.resource_type,
            resource_name=resource.resource_name, configs=[_result(e, request) for e in entries]))
    ctx.respond(DescribeConfigsResponse(results=results))
