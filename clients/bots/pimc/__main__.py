"""Serve the referee with PIMC bots: ``python -m clients.bots.pimc --address HOST:PORT --token T``."""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import TYPE_CHECKING

from clients.bots.pimc.bot import CAUTION, NAME, VERSION, PimcBot
from clients.bots.pimc.budget import Budget
from clients.sdk import parse_options, run
from referee.rules import get_profile

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and play until the referee has no more tables for this bot."""
    parser = argparse.ArgumentParser(
        prog="python -m clients.bots.pimc", description="Perfect-Information Monte Carlo Nap bot"
    )
    defaults = Budget()
    parser.add_argument(
        "--samples",
        type=int,
        default=defaults.samples,
        metavar="N",
        help=f"deals sampled per decision: the budget (default: {defaults.samples})",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=defaults.seconds,
        metavar="S",
        help="safety cap on the seconds of one decision, far above what the samples take; "
        f"0 for none (default: {defaults.seconds})",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        default=defaults.nodes,
        metavar="N",
        help=f"most trick boundaries one sample's solve may visit (default: {defaults.nodes})",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampling (default: 0)")
    parser.add_argument(
        "--caution",
        type=float,
        default=CAUTION,
        help=f"taken off each contract's chance when bidding (default: {CAUTION})",
    )
    parser.add_argument(
        "--batch-seconds",
        type=float,
        default=defaults.batch_seconds,
        metavar="S",
        help="safety cap on the seconds of the decisions of one batch of requests, 0 for none "
        f"(default: {defaults.batch_seconds})",
    )
    parser.add_argument(
        "--profile",
        default=None,
        help="rules profile or house-rules .toml, when the referee's is not built in",
    )
    given = list(sys.argv[1:] if argv is None else argv)
    if not any(arg == "--max-batch" or arg.startswith("--max-batch=") for arg in given):
        given = ["--max-batch", str(defaults.batch_size), *given]  # the SDK's option, this bot's default
    options, args = parse_options(given, name=NAME, version=VERSION, parser=parser)
    if args.samples < 1 or args.nodes < 1:
        parser.error("--samples and --nodes must be at least 1")
    budget = Budget(
        samples=args.samples,
        nodes=args.nodes,
        seconds=args.seconds or None,
        batch_seconds=args.batch_seconds or None,
        batch_size=options.max_batch,
    )
    profile = get_profile(args.profile) if args.profile else None
    run(
        partial(PimcBot, budget=budget, seed=args.seed, profile=profile, caution=args.caution),
        name=NAME,
        version=VERSION,
        options=options,
    )


if __name__ == "__main__":
    main()
