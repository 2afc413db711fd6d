"""Benchmark of the store at scale: writes, and the read commands at 10k, 100k and 1M sessions.

Fills one tournament in a fresh database with sessions through the real write path
(``Store.record_session``, one transaction per session with its log), up to
``--sessions`` or until ``--budget`` seconds of filling have passed. The sessions are
real ones repeated: one block of each set of four of six random bots is played in
process first (60 sessions), and session N of the fill is one of them, moved to its block
(results, declarations and log as played), a fault added to one in 50.
At each checkpoint (10,000, 100,000, 1,000,000 and the last) it prints:

* the write rate and the store's milliseconds per session over the last stretch;
* the database's bytes per session and its file count (one file, plus SQLite's WAL);
* the read commands, each run as a user runs it (``python -m tournaments.cli ...``, a new
  process, so Python's start-up and imports are in) and timed in process:
  ``nap standings``, ``nap log list --bot X --fault late`` (first page), ``nap log list``
  (first page), ``nap log show`` of a session, ``nap tournament status``;
* the runner's memory (peak RSS of this process) so far.

When it stops short of 1,000,000 sessions it extrapolates the write time and size to a
million, and says how much each read grew with the sessions.

    python bench/store.py [--sessions 1000000] [--budget 900] [--folder /tmp] [--keep]
    python bench/store.py --reads /tmp/nap-store-bench-.../nap.db     the reads again, on a kept database
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from referee.match import Fault, FaultKind, TimeLimits
from referee.rules import DEFAULT_PROFILE
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import example_bot
from tournaments.play.blocks import BlockRun, FinishedSession, play_block_in_process
from tournaments.stats.standings import standings_of
from tournaments.store.database import Store
from tournaments.store.logs import encode_log

if TYPE_CHECKING:
    from collections.abc import Callable

    from tournaments.results import SessionResult

SEATS = 4
BOTS = tuple(example_bot("random", name=f"bot-{i}") for i in range(1, 7))
BOT_SETS = tuple(itertools.combinations([bot.name for bot in BOTS], SEATS))
CHECKPOINTS = (10_000, 100_000, 1_000_000)
FAULTY = 0.02
"""The share of sessions given a fault (two in three of them ``late``)."""


def played_sessions(seed: int) -> dict[tuple[str, ...], list[FinishedSession]]:
    """One block of each set of four bots, played for real in process: the sessions the fill repeats."""
    factories = {bot.name: bot.make_bot() for bot in BOTS}
    played = {}
    for index, bots in enumerate(BOT_SETS):
        spec = BlockRun(
            tournament=1,
            index=index,
            board_seed=seed + index,
            bots=bots,
            profile=DEFAULT_PROFILE,
            time_limits=TimeLimits(),
            rotations=tuple(range(SEATS)),
        )
        played[bots] = play_block_in_process(spec, factories)
    return played


Played = dict[tuple[str, ...], list[FinishedSession]]


def session(played: Played, tournament: int, number: int, rng: random.Random) -> tuple[SessionResult, bytes]:
    """Session ``number`` of the fill: a played one moved to its block, now and then with a fault; its log."""
    block, rotation = divmod(number, SEATS)
    finished = played[BOT_SETS[block % len(BOT_SETS)]][rotation]
    result = dataclasses.replace(finished.result, tournament=tournament, block=block, board_seed=block)
    if rng.random() < FAULTY:
        seat = rng.randrange(SEATS)
        kind = rng.choice((FaultKind.LATE, FaultKind.LATE, FaultKind.ILLEGAL))
        fault = Fault(
            kind=kind,
            bot=result.bots[seat],
            table=None,
            seat=seat,
            deal=2,
            decision=5,
            elapsed_ms=1500.0,
            detail="bench",
        )
        seats = tuple(dataclasses.replace(s, faults=1) if s.seat == seat else s for s in result.seats)
        result = dataclasses.replace(result, seats=seats, faults=(fault,))
    payload = {**finished.log, "board_seed": block, "faults": [f.to_json() for f in result.faults]}
    return result, encode_log(payload, tournament=tournament, block=block, rotation=rotation)


def nap(db: Path, *args: str) -> float:
    """Seconds ``python -m tournaments.cli <args> --db <db>`` takes, start-up included; it must succeed."""
    start = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - this interpreter, our own module
        [sys.executable, "-m", "tournaments.cli", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        msg = f"nap {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()}"
        raise SystemExit(msg)
    return elapsed


def timed(call: Callable[[], object]) -> float:
    """Seconds ``call()`` takes."""
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


READS = ("standings", "list --fault", "list", "show", "status")


def reads(db: Path, store: Store, tournament: int, sessions: int) -> dict[str, float]:
    """Each read command's seconds, as a user runs it, and two of them in process (``* in process``)."""
    return {
        "standings": nap(db, "standings", str(tournament), "--json"),
        "list --fault": nap(db, "log", "list", "--bot", "bot-3", "--fault", "late", "--limit", "20"),
        "list": nap(db, "log", "list", "--limit", "50"),
        "show": nap(db, "log", "show", str(sessions // 2)),
        "status": nap(db, "tournament", "status", str(tournament)),
        "standings in process": timed(lambda: standings_of(store.tally([tournament]))),
        "list --fault in process": timed(
            lambda: store.find_sessions(bot="bot-3", fault_kind="late", limit=21)
        ),
    }


HEADER = (
    f"{'sessions':>9}  {'writes/s':>8} {'ms each':>7}  {'B/session':>9} {'files':>5}  "
    + "  ".join(f"{name:>12}" for name in READS)
    + "   in process: standings, list --fault   peak RSS"
)


def line(  # noqa: PLR0913 - the figures of one checkpoint
    sessions: int, *, rate: float, ms: float, size: int, files: int, times: dict[str, float]
) -> str:
    """One checkpoint of the table under :data:`HEADER`."""
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (
        f"{sessions:>9,}  {rate:8.0f} {ms:7.2f}  {size / sessions:9,.0f} {files:>5}  "
        + "  ".join(f"{times[name]:10.2f} s" for name in READS)
        + f"   {times['standings in process'] * 1e3:9.1f} ms {times['list --fault in process'] * 1e3:9.1f} ms"
        + f"   {peak_mib:5.0f} MiB"
    )


def fill(
    store: Store, tournament: int, played: Played, args: argparse.Namespace
) -> list[tuple[int, dict[str, float]]]:
    """Record sessions up to each checkpoint (or the budget) and time the reads there; the figures."""
    rng = random.Random(args.seed)
    db = store.path
    history: list[tuple[int, dict[str, float]]] = []
    written, writing = 0, 0.0
    for mark in sorted({*(c for c in CHECKPOINTS if c < args.sessions), args.sessions}):
        began, before, spent = time.perf_counter(), written, 0.0
        while written < mark and writing + spent < args.budget:
            result, log = session(played, tournament, written, rng)
            start = time.perf_counter()
            store.record_session(result, log=log)
            spent += time.perf_counter() - start
            written += 1
        writing += spent
        rate = (written - before) / (time.perf_counter() - began)
        size = sum(p.stat().st_size for p in db.parent.iterdir() if p.name.startswith(db.name))
        times = reads(db, store, tournament, written)
        files = sum(1 for _ in db.parent.iterdir())
        ms = spent / max(1, written - before) * 1e3
        print(line(written, rate=rate, ms=ms, size=size, files=files, times=times), flush=True)
        history.append((written, times | {"size": size, "writing": writing}))
        if writing >= args.budget:
            break
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1_000_000)
    parser.add_argument("--budget", type=float, default=900.0, help="seconds of writes at most")
    parser.add_argument("--folder", type=Path, default=None, help="where the database goes (default: temp)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the database (in --folder) for --reads")
    parser.add_argument(
        "--reads", type=Path, default=None, metavar="DB", help="only time the reads on a kept database"
    )
    args = parser.parse_args()
    if args.reads is not None:
        with Store.open(args.reads, check=False) as store:
            sessions = store.tally([1]).sessions
            print(HEADER)
            size = sum(
                p.stat().st_size for p in args.reads.parent.iterdir() if p.name.startswith(args.reads.name)
            )
            times = reads(args.reads, store, 1, sessions)
            print(
                line(
                    sessions,
                    rate=0,
                    ms=0,
                    size=size,
                    files=len(list(args.reads.parent.iterdir())),
                    times=times,
                )
            )
        return
    played = played_sessions(args.seed)
    blocks = -(-args.sessions // SEATS)
    folder = Path(tempfile.mkdtemp(prefix="nap-store-bench-", dir=args.folder))
    try:
        db = folder / "nap.db"
        print(f"store benchmark: up to {args.sessions:,} sessions (budget {args.budget:.0f} s) in {db}")
        print(HEADER)
        with Store.open(db) as store:
            config = TournamentConfig(
                name="bench", bots=BOTS, table_size=SEATS, sessions=args.sessions, seed=args.seed
            )
            tournament = store.create_tournament(
                name="bench",
                config=config.to_json(),
                seed=args.seed,
                blocks=[(index, index, BOT_SETS[index % len(BOT_SETS)]) for index in range(blocks)],
            )
            history = fill(store, tournament, played, args)
    finally:
        if args.keep:
            print(f"kept {db} (python bench/store.py --reads {db})")
        else:
            shutil.rmtree(folder)
    written, last = history[-1]
    print(f"filled {written:,} sessions: {last['writing']:.0f} s in record_session")
    if written < 1_000_000:
        print(
            f"extrapolated to 1,000,000 sessions: {last['writing'] / written * 1e6 / 60:.0f} min of writes, "
            f"{last['size'] / written * 1e6 / 2**30:.1f} GiB of database"
        )
    first_count, first = history[0]
    for name in READS:
        print(
            f"  {name}: {first[name]:.2f} s at {first_count:,} sessions, {last[name]:.2f} s at {written:,} "
            f"(x{last[name] / first[name]:.2f})"
        )


if __name__ == "__main__":
    main()
