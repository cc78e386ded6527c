"""Every declared API by key: its request and response classes and version ranges.

The server's handler registry and its ApiVersions response derive from this table: a
handler serves a sub-range of what is declared here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.messages.alter_configs import AlterConfigsRequest, AlterConfigsResponse
from groupcoord.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from groupcoord.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)
from groupcoord.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupcoord.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
)
from groupcoord.protocol.messages.create_topics import CreateTopicsRequest, CreateTopicsResponse
from groupcoord.protocol.messages.delete_groups import DeleteGroupsRequest, DeleteGroupsResponse
from groupcoord.protocol.messages.delete_records import DeleteRecordsRequest, DeleteRecordsResponse
from groupcoord.protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicsResponse
from groupcoord.protocol.messages.describe_cluster import (
    DescribeClusterRequest,
    DescribeClusterResponse,
)
from groupcoord.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)
from groupcoord.protocol.messages.describe_groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from groupcoord.protocol.messages.describe_log_dirs import (
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from groupcoord.protocol.messages.fetch import FetchRequest, FetchResponse
from groupcoord.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from groupcoord.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from groupcoord.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from groupcoord.protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from groupcoord.protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse
from groupcoord.protocol.messages.list_groups import ListGroupsRequest, ListGroupsResponse
from groupcoord.protocol.messages.list_offsets import ListOffsetsRequest, ListOffsetsResponse
from groupcoord.protocol.messages.metadata import MetadataRequest, MetadataResponse
from groupcoord.protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitResponse
from groupcoord.protocol.messages.offset_delete import OffsetDeleteRequest, OffsetDeleteResponse
from groupcoord.protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchResponse
from groupcoord.protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from groupcoord.protocol.messages.produce import ProduceRequest, ProduceResponse
from groupcoord.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse
from groupcoord.protocol.schema import VersionRange, in_range


@dataclass(frozen=True)
class Api:
    """One API: its key, name, message classes and declared versions."""

    key: int
    name: str
    request: type[Request]
    response: type[Response]

    @property
    def min_version(self) -> int:
        return self.request.min_version

    @property
    def max_version(self) -> int:
        return self.request.max_version

    @property
    def flexible_versions(self) -> VersionRange:
        return self.request.flexible_versions

    def is_flexible(self, version: int) -> bool:
        return in_range(version, self.request.flexible_versions)


def _api(request: type[Request], response: type[Response]) -> Api:
    same = (request.api_key, request.min_version, request.max_version, request.flexible_versions)
    if same != (
        response.api_key,
        response.min_version,
        response.max_version,
        response.flexible_versions,
    ):
        raise TypeError(f"{request.name} and {response.name} disagree on key or versions")
    return Api(request.api_key, request.name.removesuffix("Request"), request, response)


APIS: Mapping[int, Api] = MappingProxyType(
    {
        api.key: api
        for api in sorted(
            (
                _api(ProduceRequest, ProduceResponse),
                _api(FetchRequest, FetchResponse),
                _api(ListOffsetsRequest, ListOffsetsResponse),
                _api(MetadataRequest, MetadataResponse),
                _api(OffsetCommitRequest, OffsetCommitResponse),
                _api(OffsetFetchRequest, OffsetFetchResponse),
                _api(FindCoordinatorRequest, FindCoordinatorResponse),
                _api(JoinGroupRequest, JoinGroupResponse),
                _api(HeartbeatRequest, HeartbeatResponse),
                _api(LeaveGroupRequest, LeaveGroupResponse),
                _api(SyncGroupRequest, SyncGroupResponse),
                _api(DescribeGroupsRequest, DescribeGroupsResponse),
                _api(DescribeConfigsRequest, DescribeConfigsResponse),
                _api(AlterConfigsRequest, AlterConfigsResponse),
                _api(IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
                _api(ListGroupsRequest, ListGroupsResponse),
                _api(ApiVersionsRequest, ApiVersionsResponse),
                _api(CreateTopicsRequest, CreateTopicsResponse),
                _api(DeleteTopicsRequest, DeleteTopicsResponse),
                _api(DeleteRecordsRequest, DeleteRecordsResponse),
                _api(InitProducerIdRequest, InitProducerIdResponse),
                _api(OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse),
                _api(DescribeLogDirsRequest, DescribeLogDirsResponse),
                _api(CreatePartitionsRequest, CreatePartitionsResponse),
                _api(DeleteGroupsRequest, DeleteGroupsResponse),
                _api(OffsetDeleteRequest, OffsetDeleteResponse),
                _api(DescribeClusterRequest, DescribeClusterResponse),
                _api(ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse),
                _api(ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse),
            ),
            key=lambda api: api.key,
        )
    }
)
"""Declared APIs by key, in key order."""
