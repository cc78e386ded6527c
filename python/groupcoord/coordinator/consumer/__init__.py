"""Kafka 4's consumer groups (KIP-848)."""
