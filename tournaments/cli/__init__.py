"""The ``nap`` command: submit a bot, run a local tournament, inspect per-match logs.

One module per command group; importing them registers their commands on :func:`main`.
"""

from tournaments.cli import bots, logs, match, rules, serve, tournament
from tournaments.cli.app import main

__all__ = ["bots", "logs", "main", "match", "rules", "serve", "tournament"]
