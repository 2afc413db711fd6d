"""The referee's per-decision cost of a request: a seat's view built and encoded, alone.

For each decision of seeded random sessions (``--profile``, four seats, every decision
asked as the match core asks it), the referee reads the seat's view
(``Session.view_fields``, with the legal actions it has already) and encodes it as one
Batch entry (``RequestEncoder.batch_entry``). The loop plays the sessions the same way
with ``--mode play``, which skips those two calls: the difference between the modes is
the cost of a request.

Two ways to read it:

- time: ``--mode both`` times the two modes in turns (``--repeats``, best of each) and
  prints nanoseconds per request (a busy machine inflates these);
- instructions: run each mode under ``valgrind --tool=callgrind`` and divide the
  difference of the two totals by the decisions printed; a count of instructions does
  not depend on the machine's load::

      PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
          .venv/bin/python bench/request.py --mode encode
      PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
          .venv/bin/python bench/request.py --mode play

    .venv/bin/python bench/request.py [--mode both] [--sessions 200] [--profile heather]
"""

from __future__ import annotations

import argparse
import random
import time

from referee.rules import PROFILES, Session
from referee.wire.fastcodec import RequestEncoder

TABLE_SIZE = 4


def run(*, encode: bool, sessions: int, profile: str, seed: int) -> tuple[int, float]:
    """Play ``sessions`` sessions; the decisions asked, and the process CPU seconds it took."""
    rules = PROFILES[profile]
    rng = random.Random(seed)
    decisions = 0
    started = time.process_time()
    for number in range(sessions):
        session = Session(rules, table_size=TABLE_SIZE, seed=seed + number)
        encoder = RequestEncoder(f"bench-{number}")
        while not session.over:
            seat = session.to_act
            assert seat is not None  # noqa: S101 - the session is not over
            legal = session.deal.legal_actions()
            if encode:
                fields = session.view_fields(seat, legal_actions=legal)
                encoder.batch_entry(fields, request_id=decisions + 1, deadline_ms=5000, bank_ms=0)
            decisions += 1
            session.apply(rng.choice(legal))
    return decisions, time.process_time() - started


def main() -> None:
    """Print the decisions played and, with ``--mode both``, the nanoseconds per request."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["encode", "play", "both"], default="both")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--profile", default="heather", choices=sorted(PROFILES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    options = {"sessions": args.sessions, "profile": args.profile, "seed": args.seed}
    if args.mode != "both":
        decisions, _ = run(encode=args.mode == "encode", **options)
        print(f"{args.mode}: {decisions} decisions")
        return
    best = {True: float("inf"), False: float("inf")}
    decisions = 0
    for _ in range(args.repeats):
        for encode in (True, False):
            decisions, seconds = run(encode=encode, **options)
            best[encode] = min(best[encode], seconds)
    per_request = (best[True] - best[False]) / decisions * 1e9
    print(
        f"{decisions} decisions: play {best[False] / decisions * 1e9:.0f} ns/decision, "
        f"play and encode {best[True] / decisions * 1e9:.0f} ns/decision, "
        f"a request {per_request:.0f} ns"
    )


if __name__ == "__main__":
    main()
