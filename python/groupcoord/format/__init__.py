"""The ``__consumer_offsets`` log format: what the records are and what they mean.

* :mod:`groupcoord.format.records`: every record, declared once as data (types 0-8 and 16,
  every version, tagged fields) with :class:`~groupcoord.format.records.RecordType`; the Rust
  tables, the record classes' methods and their stub are generated from it
  (``scripts/generate_records.py``);
* :mod:`groupcoord.format.columns`: the Arrow columns of a decoded log, by name;
* :mod:`groupcoord.format.batch_header`: the RecordBatch header's layout and attribute bits;
* :mod:`groupcoord.format.codec`: the Rust codec's facade (batches, records, keys and values;
  into Python objects or Arrow);
* :mod:`groupcoord.format.replay_rules`: which records a load keeps (transactions, pending
  offset commits), the one rule set shared by the coordinator's replay, the cleaner and Spark;
* :mod:`groupcoord.format.compaction`: the compacted view of a log (the latest record of each
  key), as Kafka's log cleaner leaves it.
* :mod:`groupcoord.format.metadata_hash`: KIP-1101's hash of a group's subscribed topics'
  metadata, stored in ``ConsumerGroupMetadataValue.metadata_hash``.

This layer depends on nothing in groupcoord but the native module and
:mod:`groupcoord.versions` (Kafka's version ranges, shared with the wire protocol).
"""
