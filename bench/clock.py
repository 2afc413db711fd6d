"""Results that do not depend on the machine's load: the CPU decision clock and the bots' containment.

    .venv/bin/python bench/clock.py [--sessions 60] [--busy 6]
    .venv/bin/python bench/clock.py --hostile [--sessions 30] [--decision-ms 50]
    .venv/bin/python bench/clock.py --resume-trials 6 [--busy 10] [--sessions 60] [--decision-ms 1000]

By default it plays a seeded ``nap tournament run`` of the built-in bots (random, peel
and pimc, three seats) quietly, then again beside ``--busy`` CPU-bound processes, and
prints for each run its time, the machine's load, the late faults and each bot's CPU per
decision, and whether the two standings.md are byte for byte the same; then the same for
random, peel and random-2 on a 50 ms clock, which the wall clock let the load outrun.

``--hostile`` plays a bot that answers what the referee would play for it beside random
and peel, three times: calm, spinning four busy threads, and with four busy children;
it prints its opponents' faults and chips in each (the same, when the spinning slows
nobody) and the CPU it was charged.

``--resume-trials N`` runs the same tournament of the built-in bots N times beside
``--busy`` busy processes, each time killed with SIGKILL once a share of its sessions are
stored, then resumed (``nap tournament resume``), and compares every session with an
uninterrupted run's: its result, its record and every choice made.

Not a test: figures depend on the machine (tests/test_load_determinism.py and
tests/test_containment.py check the same things).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tournaments.store.database import Store
from tournaments.store.logs import decode_log

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

REPO = Path(__file__).resolve().parent.parent
CONTAINED = REPO / "tests" / "bots_contained"
NAP = [sys.executable, "-m", "tournaments.cli"]


@contextlib.contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` CPU-bound processes for as long as the body runs."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
        for process in spinning:
            process.wait()


def built_in(sessions: int, seed: int) -> list[str]:
    return [
        "--bot",
        "random",
        "--bot",
        "peel",
        "--bot",
        "pimc",
        "-k",
        "3",
        "-n",
        str(sessions),
        "--seed",
        str(seed),
    ]


def where(folder: Path) -> list[str]:
    return ["--db", str(folder / "nap.db"), "--out", str(folder / "out")]


def run(folder: Path, args: Sequence[str]) -> tuple[float, float]:
    """``nap tournament run ARGS`` in ``folder``; its seconds and the load average at its end."""
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    command = [*NAP, "tournament", "run", *args, *where(folder)]
    done = subprocess.run(command, capture_output=True, check=False)  # noqa: S603 - our own argv
    if done.returncode != 0:
        sys.exit(f"nap tournament run failed (exit {done.returncode}): {done.stderr.decode()[-2000:]}")
    return time.perf_counter() - started, os.getloadavg()[0]


def facts(folder: Path) -> dict[str, Any]:
    """What a run's standings.json says of its bots and load."""
    data: dict[str, Any] = json.loads((folder / "out" / "t1" / "standings.json").read_text())
    return data


def faults(folder: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(folder / "nap.db") as conn:
        return list(conn.execute("SELECT bot, kind, detail FROM faults ORDER BY id"))


def describe(name: str, folder: Path, seconds: float, load: float) -> None:
    data = facts(folder)
    late = data["tournament"]["load"]["late_faults"]
    cpu = ", ".join(
        f"{line['bot']} {line['cpu_ms_per_decision']:.1f}"
        for line in data["bots"]
        if line.get("cpu_ms_per_decision")  # none from a Nap Arena before the CPU clock
    )
    print(
        f"  {name}: {seconds:.0f} s, load {load:.1f} at its end; late faults {sum(late.values())} "
        f"{late or ''}; faults {len(faults(folder))}; CPU per decision (ms): {cpu or 'not recorded'}"
    )


def determinism(args: argparse.Namespace, root: Path) -> None:
    tight = ["--bot", "random", "--bot", "peel", "--bot", "random-2=random", "-k", "3"]
    tight += ["-n", str(args.sessions), "--seed", str(args.seed), "--decision-ms", "50"]
    for name, tournament in (
        ("built-in bots (random, peel, pimc)", built_in(args.sessions, args.seed)),
        ("random, peel and random-2 on a 50 ms clock", tight),
    ):
        print(
            f"{name}, {args.sessions} sessions, seed {args.seed}: "
            f"quiet, then beside {args.busy} busy processes"
        )
        folder = root / name.split()[0]
        seconds, load = run(folder / "quiet", tournament)
        describe("quiet", folder / "quiet", seconds, load)
        with busy(args.busy):
            seconds, load = run(folder / "busy", tournament)
        describe("busy ", folder / "busy", seconds, load)
        same = (folder / "quiet" / "out" / "t1" / "standings.md").read_bytes() == (
            folder / "busy" / "out" / "t1" / "standings.md"
        ).read_bytes()
        print(f"  standings.md byte for byte the same: {'yes' if same else 'NO'}")


def hostile(args: argparse.Namespace, root: Path) -> None:
    print(
        "a bot answering the referee's own moves beside random and peel, "
        f"{args.sessions} sessions, seed {args.seed}, {args.decision_ms} ms a decision"
    )
    chips: dict[str, dict[str, list[int]]] = {}
    for mode in ("none", "threads", "children"):
        folder = root / mode
        bot = folder / "spinner"
        bot.mkdir(parents=True)
        count = "0" if mode == "none" else "4"
        (bot / "nap-bot.toml").write_text(
            f'name = "spinner"\nversion = "1"\n'
            f'command = ["{{python}}", "{CONTAINED / "spinner_bot.py"}", "{mode}", "{count}"]\n'
        )
        seconds, load = run(
            folder,
            [
                "--bot",
                str(bot),
                "--bot",
                "random",
                "--bot",
                "peel",
                "-k",
                "3",
                "-n",
                str(args.sessions),
                "--seed",
                str(args.seed),
                "--decision-ms",
                str(args.decision_ms),
            ],
        )
        data = facts(folder)
        lines = {line["bot"]: line for line in data["bots"]}
        found = faults(folder)
        with sqlite3.connect(folder / "nap.db") as conn:
            chips[mode] = {
                bot: [
                    row[0]
                    for row in conn.execute(
                        "SELECT r.chips FROM seat_results r JOIN sessions s ON s.id = r.session_id"
                        " WHERE r.bot = ? ORDER BY s.block_idx, s.rotation",
                        (bot,),
                    )
                ]
                for bot in ("random", "peel")
            }
        tally = {bot: sum(1 for fault in found if fault[0] == bot) for bot in ("spinner", "random", "peel")}
        cpu = {bot: lines[bot].get("cpu_ms_per_decision") for bot in ("spinner", "random", "peel")}
        print(
            f"  {mode:<8}: {seconds:.0f} s, load {load:.1f}; faults: "
            + ", ".join(f"{bot} {n}" for bot, n in tally.items())
            + "; CPU per decision (ms): "
            + ", ".join(f"{bot} {'not recorded' if ms is None else f'{ms:.1f}'}" for bot, ms in cpu.items())
        )
    for mode in ("threads", "children"):
        same = chips[mode] == chips["none"]
        print(f"  opponents' chips with {mode} as without: {'the same' if same else 'DIFFERENT'}")


def sessions_of(db: Path) -> dict[tuple[int, int], tuple[Any, ...]]:
    """Each session by (block, rotation): its result (the CPU aside), record and choices."""
    with Store.open(db) as store:
        results = {(r.block, r.rotation): r for r in store.session_results(1)}
        played = {}
        for row in store.find_sessions(tournament=1):
            log: dict[str, Any] = decode_log(store.log(row.id), name="log")
            choices = [[(d["action"], d["seat"], d.get("fault")) for d in deal] for deal in log["decisions"]]
            played[row.block, row.rotation] = (results[row.block, row.rotation], log["record"], choices)
    return played


def stored(db: Path) -> int:
    if not db.exists():
        return 0
    with contextlib.suppress(sqlite3.Error), sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])
    return 0


def resume_trials(args: argparse.Namespace, root: Path) -> None:
    tournament = [*built_in(args.sessions, args.seed), "--decision-ms", str(args.decision_ms)]
    print(
        f"kill -9 and resume, {args.resume_trials} trials beside {args.busy} busy processes: "
        f"built-in bots, {args.sessions} sessions, seed {args.seed}, {args.decision_ms} ms a decision"
    )
    rng = random.Random(args.seed)
    with busy(args.busy):
        seconds, load = run(root / "straight", tournament)
        straight = sessions_of(root / "straight" / "nap.db")
        print(f"  uninterrupted: {seconds:.0f} s, load {load:.1f}, {len(faults(root / 'straight'))} faults")
        for trial in range(1, args.resume_trials + 1):
            folder = root / f"trial-{trial}"
            folder.mkdir()
            db = folder / "nap.db"
            kill_at = rng.randint(args.sessions // 6, args.sessions * 5 // 6)
            process = subprocess.Popen(  # noqa: S603
                [*NAP, "tournament", "run", *tournament, *where(folder)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            while process.poll() is None and stored(db) < kill_at:
                time.sleep(0.05)
            killed_at = stored(db)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            command = [*NAP, "tournament", "resume", "1", *where(folder)]
            done = subprocess.run(command, capture_output=True, check=False)  # noqa: S603 - our own argv
            resumed = sessions_of(db)
            differ = [key for key, played in straight.items() if resumed.get(key) != played]
            print(
                f"  trial {trial}: killed at {killed_at} of {args.sessions} sessions, "
                f"resumed (exit {done.returncode}), load {os.getloadavg()[0]:.1f}: {len(resumed)} sessions, "
                f"{len(differ)} differ from the uninterrupted run, {len(faults(folder))} faults"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", "-n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--busy", type=int, default=6, help="CPU-bound processes beside the loaded runs")
    parser.add_argument(
        "--decision-ms", type=int, default=1000, help="with --hostile or --resume-trials: the decision clock"
    )
    parser.add_argument(
        "--hostile", action="store_true", help="a bot that keeps cores busy, beside random and peel"
    )
    parser.add_argument(
        "--resume-trials", type=int, default=0, metavar="N", help="kill -9 and resume N times"
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="nap-clock-"))
    try:
        if args.hostile:
            hostile(args, root)
        elif args.resume_trials:
            resume_trials(args, root)
        else:
            determinism(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
