"""One handler per API key, each in a module named after its key, declaring the versions it
serves (see :mod:`groupcoord.server.registry`). Importing this package registers them all.

Served: the group coordinator's APIs at every version Kafka 4 serves for classic groups and
the older ones the Python clients send; the data plane of one node (Produce, Fetch,
ListOffsets, OffsetForLeaderEpoch, DeleteRecords, through
:mod:`groupcoord.server.replica_manager`); Metadata;
InitProducerId, which gives idempotent producers their ids; topic configs
(DescribeConfigs, AlterConfigs, IncrementalAlterConfigs); topic administration
(CreateTopics, DeleteTopics, CreatePartitions, through :mod:`groupcoord.server.topic_admin`)
and DescribeCluster and DescribeLogDirs; Kafka 4's consumer group protocol (KIP-848:
ConsumerGroupHeartbeat, ConsumerGroupDescribe). Nothing else is advertised.
"""

from groupcoord.server.handlers import (
    api_000_produce,
    api_001_fetch,
    api_002_list_offsets,
    api_003_metadata,
    api_008_offset_commit,
    api_009_offset_fetch,
    api_010_find_coordinator,
    api_011_join_group,
    api_012_heartbeat,
    api_013_leave_group,
    api_014_sync_group,
    api_015_describe_groups,
    api_016_list_groups,
    api_018_api_versions,
    api_019_create_topics,
    api_020_delete_topics,
    api_021_delete_records,
    api_022_init_producer_id,
    api_023_offset_for_leader_epoch,
    api_032_describe_configs,
    api_033_alter_configs,
    api_035_describe_log_dirs,
    api_037_create_partitions,
    api_042_delete_groups,
    api_044_incremental_alter_configs,
    api_047_offset_delete,
    api_060_describe_cluster,
    api_068_consumer_group_heartbeat,
    api_069_consumer_group_describe,
)

__all__ = [
    "api_000_produce",
    "api_001_fetch",
    "api_002_list_offsets",
    "api_003_metadata",
    "api_008_offset_commit",
    "api_009_offset_fetch",
    "api_010_find_coordinator",
    "api_011_join_group",
    "api_012_heartbeat",
    "api_013_leave_group",
    "api_014_sync_group",
    "api_015_describe_groups",
    "api_016_list_groups",
    "api_018_api_versions",
    "api_019_create_topics",
    "api_020_delete_topics",
    "api_021_delete_records",
    "api_022_init_producer_id",
    "api_023_offset_for_leader_epoch",
    "api_032_describe_configs",
    "api_033_alter_configs",
    "api_035_describe_log_dirs",
    "api_037_create_partitions",
    "api_042_delete_groups",
    "api_044_incremental_alter_configs",
    "api_047_offset_delete",
    "api_060_describe_cluster",
    "api_068_consumer_group_heartbeat",
    "api_069_consumer_group_describe",
]
