"""The ``nap`` command: submit a bot, run a local tournament, inspect per-match logs.

One module per command group (arena, bots, logs, match, rules, serve, tournament), each imported
when its command runs (:data:`tournaments.cli.app.COMMANDS`); shared options and error
handling in :mod:`tournaments.cli.app`, what several commands print and publish in
:mod:`tournaments.cli.reports`.
"""

from tournaments.cli.app import main

__all__ = ["main"]
