"""The ``groupcoord`` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groupcoord", description="A Kafka-compatible consumer-group coordinator."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    from groupcoord import dump_log

    dump = commands.add_parser(
        "dump-log",
        help="print the records of __consumer_offsets segment files as JSON lines",
        description=dump_log.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dump.add_argument("files", nargs="+", metavar="FILE", help="segment (.log) files")
    dump.add_argument("--no-decode", action="store_true",
                      help="print raw batches (header fields, base64 keys and values)")
    dump.add_argument("--stop-at-corruption", action="store_true",
                      help="report a corrupt tail on stderr but exit 0, as log recovery would")

    serve = commands.add_parser(
        "serve",
        help="serve Kafka clients: groups, offsets and group administration",
        description="Serve the Kafka wire protocol: consumer groups form, rebalance, commit "
                    "and fetch offsets, and are listed, described and deleted, on this node.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=9092, help="port to listen on (9092)")
    serve.add_argument("--data-dir", default="groupcoord-data", type=Path,
                       help="the __consumer_offsets log and the topics (./groupcoord-data)")
    serve.add_argument("--topic", action="append", default=[], metavar="NAME:PARTITIONS",
                       help="a topic to create (or grow); repeatable")
    serve.add_argument("--node-id", type=int, help="node id (node.id, default 0)")
    serve.add_argument("--metrics-port", type=int,
                       help="serve /metrics and /admin/owned-partitions over HTTP on this port")
    serve.add_argument("--config", type=Path, metavar="server.properties",
                       help="Kafka-named settings from a properties file")
    serve.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                       help="a Kafka-named setting, e.g. group.initial.rebalance.delay.ms=0; "
                            "repeatable, applied after --config")
    serve.add_argument("--log-level", default="INFO", help="INFO (default), DEBUG, WARNING...")
    serve.add_argument("--log-format", choices=("text", "json"), default="text",
                       help="text lines (default) or one JSON object per line")
    return parser


def _serve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from groupcoord.config import Config, read_properties
    from groupcoord.server import logs
    from groupcoord.server.app import ServerOptions, run
    from groupcoord.server.topics import parse_topic_spec

    try:
        properties: dict[str, str] = read_properties(args.config) if args.config else {}
        for setting in args.set:
            name, sep, value = setting.partition("=")
            if not sep or not name.strip():
                raise ValueError(f"--set takes NAME=VALUE, not {setting!r}")
            properties[name.strip()] = value.strip()
        if args.node_id is not None:
            properties["node.id"] = str(args.node_id)
        config = Config.from_properties(properties)
        topics = [parse_topic_spec(spec) for spec in args.topic]
    except (OSError, ValueError) as error:
        parser.error(str(error))
    for name in config.extra:
        print(f"groupcoord serve: ignoring unknown setting {name}", file=sys.stderr)
    logs.configure(args.log_level, args.log_format)
    options = ServerOptions(host=args.host, port=args.port, data_dir=args.data_dir,
                            topics=topics, metrics_port=args.metrics_port, config=config)
    return run(options)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version or args.command is None:
        from groupcoord import __version__

        print(f"groupcoord {__version__}")
        return 0
    if args.command == "dump-log":
        from groupcoord import dump_log

        return dump_log.main(args.files, decode=not args.no_decode,
                             stop_at_corruption=args.stop_at_corruption)
    if args.command == "serve":
        return _serve(parser, args)
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
