"""A bot that picks a legal action uniformly at random, from a seeded generator.

Each (table, seat) draws from its own generator seeded with ``"{seed}/{table}/{seat}"``,
so the bot's choices are a function of ``--seed`` and the requests it gets, whatever
the order in which its tables' requests interleave.
"""

from __future__ import annotations

import argparse
import random
from functools import partial
from typing import TYPE_CHECKING

from clients.sdk import Bot, parse_options, run

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules import Action, SeatView

NAME = "random"
VERSION = "1.0"


class RandomBot(Bot):
    """Uniform over ``view.legal_actions``."""

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed
        self._rng: random.Random | None = None

    def decide(self, view: SeatView) -> Action:
        """A legal action drawn uniformly."""
        rng = self._rng
        if rng is None:
            rng = self._rng = random.Random(f"{self.seed}/{self.table}/{self.seat}")
        return rng.choice(view.legal_actions)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the referee with random bots (``--seed`` fixes their choices)."""
    parser = argparse.ArgumentParser(
        prog=f"python -m clients.bots.{NAME}_bot", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the choices (default: 0)")
    options, args = parse_options(argv, name=NAME, version=VERSION, parser=parser)
    run(partial(RandomBot, seed=args.seed), name=NAME, version=VERSION, options=options)


if __name__ == "__main__":
    main()
