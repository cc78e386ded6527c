"""groupcoord: a Kafka-compatible consumer-group coordinator with a Rust core."""

from groupcoord._native import __version__

__all__ = ["__version__"]
