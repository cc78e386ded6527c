"""The command-line tools: ``groupcoord serve`` (:mod:`groupcoord.server`), ``groupcoord
inspect`` (:mod:`groupcoord.cli.inspect`: what loading a log directory yields) and
``groupcoord dump-log`` (:mod:`groupcoord.cli.dump_log`: one JSON object per record)."""

from groupcoord.cli.main import main

__all__ = ["main"]
