"""Run (or resume) a small tournament of the example bots, for the kill-and-resume test.

python tests/bots_runner/killable.py DB LOGS SEED SESSIONS [--resume ID]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from referee.match import TimeLimits
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import example_bot
from tournaments.play.runner import resume_tournament, run_tournament
from tournaments.store.database import Store

ENTRANTS = (("random", "random"), ("peel", "peel"), ("random", "random-2"), ("peel", "peel-2"))


def config(seed: int, sessions: int, *, concurrency: int = 2) -> TournamentConfig:
    bots = tuple(example_bot(kind, name=name) for kind, name in ENTRANTS)
    return TournamentConfig(
        name="killable",
        bots=bots,
        table_size=4,
        sessions=sessions,
        seed=seed,
        concurrency=concurrency,
        time_limits=TimeLimits(decision_ms=120_000),  # no late answer, however busy the machine
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("db", type=Path)
    parser.add_argument("logs", type=Path)
    parser.add_argument("seed", type=int)
    parser.add_argument("sessions", type=int)
    parser.add_argument("--resume", type=int)
    args = parser.parse_args()
    with Store.open(args.db) as store:
        if args.resume is None:
            run_tournament(config(args.seed, args.sessions), store=store, logs_root=args.logs)
        else:
            resume_tournament(args.resume, store=store, logs_root=args.logs)


if __name__ == "__main__":
    main()
