"""``python -m tournaments.cli``: the same as the ``nap`` command."""

from tournaments.cli import main

main()
