"""``nap play``'s page: click-to-update latency, and the referee's CPU with a person seated and without.

    .venv/bin/python bench/play.py [--sessions 10] [--seed 1]

With a person: :func:`tournaments.web.play.play_at_table` runs here (referee, the person's
seat, the page server) against two random bots, and a scripted page in a process of its
own (this file with ``--client URL``: an aiohttp WebSocket client that answers every
decision at once with a random legal action) plays the person. The client times each
click: from sending its action message to receiving the table's update that shows the
action (the seat's snapshot after the referee told it of its own bid or card), and prints
p50/p99. Without: the same number of sessions of three random bots, through the
tournament runner with its referee in this process. For both, this process's CPU time
(``time.process_time``, so the bots' and the client's processes are not counted) per
decision played. Not a test: figures depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import structlog

from referee.rules import get_profile
from referee.server import TimeLimits, tune_collector
from tournaments.plan.config import TournamentConfig
from tournaments.play.entrants import resolve_all
from tournaments.play.runner import run_tournament_async
from tournaments.store.database import Store
from tournaments.store.logs import decode_log
from tournaments.web.play import TableSpec, play_at_table

REPO = Path(__file__).resolve().parent.parent
LIMITS = TimeLimits(decision_ms=60_000)


async def client(url: str, seed: int) -> dict[str, object]:
    """Play the person from the page's WebSocket; the click-to-update times in ms."""
    rng = random.Random(seed)
    times: list[float] = []
    clicked: float | None = None
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "ws") as socket:
        async for message in socket:
            data = json.loads(message.data)
            if data["type"] == "done":
                break
            if data["type"] != "table":
                continue
            now = time.perf_counter()
            if clicked is not None:
                times.append((now - clicked) * 1000)
                clicked = None
            decision = data["decision"]
            if decision is not None:
                action = rng.choice(decision["actions"])["action"]
                clicked = time.perf_counter()
                await socket.send_str(
                    json.dumps({"type": "act", "request": decision["request"], "action": action})
                )
    return {"clicks": len(times), "times_ms": times}


def decisions_in(db: Path, tournament: int) -> int:
    """The actions of every session the tournament stored (every decision, forced ones included)."""
    with Store.open(db) as store:
        ids = [row.id for row in store.sessions_to_list(tournament, limit=10_000)]
        logs = [decode_log(store.log(session), name=str(session)) for session in ids]
    actions = 0
    for log in logs:
        record: Any = log["record"]
        actions += sum(len(deal["actions"]) for deal in record["deals"])
    return actions


async def with_a_person(folder: Path, *, sessions: int, seed: int) -> tuple[float, int, dict[str, Any]]:
    """CPU seconds here, decisions, and the client's figures, for ``sessions`` played by the scripted page."""
    db = folder / "person.db"
    with Store.open(db) as store:
        bots = resolve_all(["random", "r2=random"], store=store, say=print)
        spec = TableSpec(
            person="scripted",
            bots=bots,
            profile=get_profile("heather"),
            seed=seed,
            sessions=sessions,
            time_limits=LIMITS,
            sandbox="off",
        )
        started: dict[str, float] = {}
        clients: list[subprocess.Popen[str]] = []

        def on_url(url: str) -> None:
            started["cpu"] = time.process_time()
            command = [sys.executable, __file__, "--client", url, "--seed", str(seed)]
            clients.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO))  # noqa: S603 - this file

        played = await play_at_table(spec, store=store, logs_root=folder / "logs", on_url=on_url)
        cpu = time.process_time() - started["cpu"]
        out, _ = clients[0].communicate(timeout=60)
    return cpu, decisions_in(db, played.tournament), json.loads(out)


async def without(folder: Path, *, sessions: int, seed: int) -> tuple[float, int]:
    """CPU seconds here and decisions for as many sessions of three random bots, referee in this process."""
    db = folder / "bots.db"
    with Store.open(db) as store:
        config = TournamentConfig(
            name="three random bots",
            bots=resolve_all(["random", "r2=random", "r3=random"], store=store, say=print),
            table_size=3,
            sessions=sessions,
            seed=seed,
            profile=get_profile("heather"),
            time_limits=LIMITS,
            workers=1,
            sandbox="off",
        )
        before = time.process_time()
        tournament = await run_tournament_async(config, store=store, logs_root=folder / "logs")
        cpu = time.process_time() - before
    return cpu, decisions_in(db, tournament)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--client", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        print(json.dumps(asyncio.run(client(args.client, args.seed))))
        return
    tune_collector()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        cpu, decisions, figures = asyncio.run(with_a_person(folder, sessions=args.sessions, seed=args.seed))
        times: list[float] = figures["times_ms"]
        bots_cpu, bots_decisions = asyncio.run(without(folder, sessions=args.sessions, seed=args.seed))
    print(f"nap play, heather, 3 seats (a scripted page + 2 random bots), {args.sessions} sessions:")
    print(
        f"  click -> table update over 127.0.0.1: {len(times)} clicks, "
        f"p50 {statistics.median(times):.1f} ms, p99 {percentile(times, 0.99):.1f} ms, "
        f"max {max(times):.1f} ms"
    )
    print(
        f"  referee process CPU with the person seated: {cpu:.2f} s for {decisions} decisions, "
        f"{cpu / decisions * 1e6:.0f} us per decision"
    )
    print(
        f"  without (3 random bots, same sessions): {bots_cpu:.2f} s for {bots_decisions} decisions, "
        f"{bots_cpu / bots_decisions * 1e6:.0f} us per decision"
    )


if __name__ == "__main__":
    main()
