"""``groupcoord dump-log``'s lines built in Python from the record objects: the reference the
lines the codec writes (``codec.iter_segment_json``) are held to, byte for byte
(``tests/test_dump_log_json.py``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from groupcoord.format import codec


def _base64(value: Any) -> str:
    """JSON for what the encoder has no form of: bytes, as base64."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} has no JSON form")


def json_line(line: Any) -> str:
    """One output line: a record's or batch's dict as compact JSON, bytes as base64."""
    return json.dumps(line, separators=(",", ":"), default=_base64)


def _decode_consumer_member(member: dict[str, Any]) -> None:
    for field, decode in (
        ("subscription", codec.decode_subscription),
        ("assignment", codec.decode_assignment),
    ):
        try:
            member[f"{field}_decoded"] = decode(member[field]).to_dict() if member[field] else None
        except codec.CorruptRecordError as e:
            member[f"{field}_decoded"] = {"error": str(e)}


def record_json(path: str, record: codec.OffsetsRecord) -> Any:
    """A record's line, as the dict that :func:`json_line` prints."""
    value = record.value.to_dict() if record.value is not None else None
    if isinstance(record.value, codec.GroupMetadataValue) and record.value.protocol_type == "consumer":
        assert value is not None
        for member in value["members"]:
            _decode_consumer_member(member)
    return {
        "file": path,
        "batch_position": record.batch_position,
        "partition": record.partition,
        "offset": record.offset,
        "timestamp": record.timestamp,
        "producer_id": record.producer_id,
        "producer_epoch": record.producer_epoch,
        "is_transactional": record.is_transactional,
        "control": record.control,
        "record_type": record.key.record_type if record.key is not None else None,
        "key": record.key.to_dict() if record.key is not None else None,
        "value": value,
    }


def batch_json(path: str, batch: codec.RecordBatch) -> Any:
    """A batch's line (``--no-decode``), as the dict that :func:`json_line` prints."""
    fields = (
        "position", "size", "base_offset", "last_offset", "magic", "compression",
        "timestamp_type", "base_timestamp", "max_timestamp", "producer_id", "producer_epoch",
        "base_sequence", "partition_leader_epoch", "is_transactional", "is_control", "crc",
        "delete_horizon_ms",
    )
    out: dict[str, Any] = {"file": path}
    out.update({f: getattr(batch, f) for f in fields})
    out["records"] = [
        {"offset": r.offset, "timestamp": r.timestamp, "key": r.key, "value": r.value,
         "headers": r.headers}
        for r in batch.records
    ]
    return out


def reference_lines(path: Path, decode: bool, partition: int | None = None) -> list[str]:
    """The segment's lines as Python built them, up to a corruption (left out)."""
    if decode:
        records = codec.decode_segment(path, partition=partition, stop_at_corruption=True)
        return [json_line(record_json(str(path), r)) for r in records]
    batches = codec.read_segment(path, stop_at_corruption=True)
    return [json_line(batch_json(str(path), b)) for b in batches]
