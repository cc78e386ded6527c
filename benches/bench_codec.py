"""Codec benchmarks: decoding a realistic segment with the Rust codec (``rust``) and with
kafka-python's record parser plus pure-Python key/value decoding (``python``), per
compression, side by side; and the ceilings of the Rust decode on the same segments:
CRC-32C alone and decompression alone (each batch's records into one reused buffer).

Full scale decodes 100 MB of records per round; ``GROUPCOORD_BENCH_SCALE=smoke`` 256 KB.
``extra_info`` holds the segment's bytes and records, from which the report computes MB/s
and records/s of the median round.
"""

from __future__ import annotations

from typing import Any

import pycodec
import pytest
from conftest import scaled
from offsets_data import segment

from groupcoord import _native
from groupcoord.format import codec

COMPRESSIONS = ["none", "gzip", "snappy", "lz4", "zstd"]
SIZE = scaled(100 << 20, 256 << 10)
# A Rust round (a tenth of a second to a second and a half) is short enough for one stall of
# this machine to move it by a third, so its median is taken over more rounds than the
# baseline's, whose rounds last seconds.
RUST_ROUNDS = scaled(7, 1)
PYTHON_ROUNDS = scaled(3, 1)


def _rounds(impl: str) -> int:
    return RUST_ROUNDS if impl == "rust" else PYTHON_ROUNDS


def _peers() -> str:
    """The baseline's versions, and whether kafka-python found its C CRC-32C."""
    import importlib.metadata as md

    from kafka.record import util

    names = ("kafka-python", "crc32c", "python-snappy", "lz4", "zstandard")
    versions = ", ".join(f"{n} {md.version(n)}" for n in names)
    return f"{versions}; kafka-python C crc32c: {util.crc32c_c is not None}"


@pytest.fixture(scope="module", autouse=True)
def _print_peer_versions() -> None:
    from kafka.record import util

    print(f"\ncodec benchmark peers: {_peers()}")
    assert util.crc32c_c is not None, "the baseline must run with the crc32c C accelerator"


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("impl", ["rust", "python"])
def test_decode_objects(benchmark: Any, impl: str, compression: str) -> None:
    data = segment(SIZE, compression)
    expected = len(codec.decode_records(data))

    def rust() -> int:
        return len(codec.decode_records(data))

    def python() -> int:
        return len(list(pycodec.decode_records(data)))

    benchmark.group = f"decode-objects-{compression}"
    result = benchmark.pedantic(rust if impl == "rust" else python, rounds=_rounds(impl), iterations=1)
    assert result == expected
    benchmark.extra_info.update(bytes=len(data), records=expected, peers=_peers())


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("impl", ["rust", "python"])
def test_iterate_objects(benchmark: Any, impl: str, compression: str) -> None:
    """The same decode record by record, each record dropped before the next: few objects
    alive at once, on both sides."""
    data = segment(SIZE, compression)
    expected = len(codec.decode_records(data))

    def rust() -> int:
        return sum(1 for _ in codec.iter_records(data))

    def python() -> int:
        return sum(1 for _ in pycodec.decode_records(data))

    benchmark.group = f"decode-iterated-{compression}"
    result = benchmark.pedantic(rust if impl == "rust" else python, rounds=_rounds(impl), iterations=1)
    assert result == expected
    benchmark.extra_info.update(bytes=len(data), records=expected, peers=_peers())


def _python_arrow(data: bytes) -> Any:
    """The baseline into Arrow: kafka-python + pycodec, rows flattened, pyarrow infers."""
    import pyarrow as pa

    rows = []
    for r in pycodec.decode_records(data):
        row = {"partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"]}
        for prefix in ("key", "value"):
            if r[prefix] is not None:
                row.update({f"{prefix}_{k}": v for k, v in r[prefix].items()})
        rows.append(row)
    return pa.RecordBatch.from_pylist(rows)


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("impl", ["rust", "python"])
def test_decode_arrow(benchmark: Any, impl: str, compression: str) -> None:
    """Two warm-up rounds on both sides: a process's first decodes into Arrow meet fresh
    memory (hundreds of megabytes of column buffers faulted in and zeroed, the second thread's
    on the second decode), which the rounds after them reuse."""
    data = segment(SIZE, compression)
    expected = len(codec.decode_records(data))

    def rust() -> int:
        return int(codec.decode_arrow(data).num_rows)

    def python() -> int:
        return int(_python_arrow(data).num_rows)

    benchmark.group = f"decode-arrow-{compression}"
    result = benchmark.pedantic(rust if impl == "rust" else python, rounds=_rounds(impl), iterations=1,
                                warmup_rounds=scaled(2, 0))
    assert result == expected
    benchmark.extra_info.update(bytes=len(data), records=expected, peers=_peers())


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_crc32c_ceiling(benchmark: Any, compression: str) -> None:
    """CRC-32C of every batch over the same segment, nothing else: what checking costs."""
    data = segment(SIZE, compression)
    benchmark.group = f"ceiling-{compression}"
    batches = benchmark.pedantic(lambda: _native.checksum_batches(data), rounds=RUST_ROUNDS, iterations=1)
    assert batches == len(codec.read_batches(data))
    benchmark.extra_info.update(bytes=len(data), records=len(codec.decode_records(data)), ceiling="crc32c")


@pytest.mark.parametrize("compression", [c for c in COMPRESSIONS if c != "none"])
def test_decompress_ceiling(benchmark: Any, compression: str) -> None:
    """Decompression alone: each batch's records into one reused buffer, no parsing."""
    data = segment(SIZE, compression)
    benchmark.group = f"ceiling-{compression}"
    decompressed = benchmark.pedantic(lambda: _native.decompress_batches(data), rounds=RUST_ROUNDS, iterations=1)
    assert decompressed > len(data)
    benchmark.extra_info.update(bytes=len(data), records=len(codec.decode_records(data)),
                                decompressed_bytes=decompressed, ceiling="decompress")


def test_pycodec_matches_rust() -> None:
    data = segment(scaled(2 << 20, 64 << 10), "none")
    rust = codec.decode_records(data)
    python = list(pycodec.decode_records(data))
    assert len(rust) == len(python)
    for r, p in zip(rust, python):
        assert r.offset == p["offset"] and r.timestamp == p["timestamp"]
        assert r.key is not None and r.key.to_dict() == p["key"]
        assert (r.value.to_dict() if r.value is not None else None) == p["value"]
