"""A realistic ``__consumer_offsets`` segment for the codec benchmarks, seeded.

Kafka's batching for the coordinator: one batch per write, 1 to 50 records per batch; 90 % of
the records are offset commits (by default), 10 % group metadata of 3 to 30 consumer-protocol
members.
"""

from __future__ import annotations

import random
from functools import cache

from groupcoord.format import codec


@cache
def segment(target_bytes: int, compression: str = "none", seed: int = 1, commit_share: float = 0.9) -> bytes:
    """About ``target_bytes`` of batches; ``commit_share`` of the records are offset commits,
    the rest group metadata."""
    rng = random.Random(seed)
    groups = [f"service-{i}-consumers" for i in range(200)]
    topics = [f"events.{name}.v{v}" for name in ("orders", "payments", "clicks", "audit") for v in (1, 2)]
    chunks: list[bytes] = []
    size = 0
    offset = 0
    now = 1_700_000_000_000
    while size < target_bytes:
        records = []
        group = rng.choice(groups)
        for _ in range(rng.randint(1, 50)):
            if rng.random() < commit_share:
                key = codec.OffsetCommitKey(group, rng.choice(topics), rng.randrange(64))
                value = codec.OffsetCommitValue(rng.randrange(10**9), "", now, rng.randrange(30))
            else:
                n = rng.randint(3, 30)
                members = []
                for m in range(n):
                    member_topics = sorted(rng.sample(topics, 2))
                    sub = codec.ConsumerProtocolSubscription(member_topics, None, [], -1, None, 1)
                    asg = codec.ConsumerProtocolAssignment([(t, [m, m + n]) for t in member_topics], None, 0)
                    members.append(codec.MemberMetadata(
                        f"consumer-{m}-{rng.getrandbits(64):016x}", None, f"consumer-{m}",
                        f"/10.0.{m}.1", 300_000, 45_000,
                        codec.encode_subscription(sub), codec.encode_assignment(asg),
                    ))
                key = codec.GroupMetadataKey(group)
                value = codec.GroupMetadataValue("consumer", rng.randrange(100), "range",
                                                 members[0].member_id, now, members)
            records.append((codec.encode_key(key), codec.encode_value(value)))
        batch = codec.write_batch(records, base_offset=offset, timestamp=now, compression=compression)
        offset += len(records)
        now += rng.randrange(5)
        chunks.append(batch)
        size += len(batch)
    return b"".join(chunks)
