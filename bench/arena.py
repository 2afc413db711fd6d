"""nap arena serve under a class's load: blocks a minute, submission to rating, and whose CPU it is.

    python bench/arena.py                      # 8 Python bots submitted, then 120 s of ladder
    python bench/arena.py --bots 8 --window 300 --workers 2

Starts ``nap arena serve`` on a fresh database (the sandbox on where bubblewrap is, as an
arena runs it), adds one person per bot and submits their bots over HTTP, as ``nap bot
submit --arena`` does: half of them ``nap bot new``'s bot, half a bot that plays peel's
policy, each with a line of its own so that every pack is a version of its own. It prints:

- for each submission, the seconds from its upload to its provisional rating (queued,
  built, checked, placed by its placement blocks against the anchors), and then, once all
  are on the ladder, the same for one more bot submitted to the busy arena: the time a
  participant waits (the goal is 120 s for a Python bot);
- complete blocks a minute over ``--window`` seconds of the full ladder (the anchors and
  every bot);
- the CPU seconds over that window of the arena's own process (pages, API, ladder,
  admission, the one writer of the store), of its workers (the referees), and of the bots,
  read from /proc.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tournaments.arena.client import ArenaClient, Connection
from tournaments.plan.manifest import scaffold
from tournaments.plan.versions import pack

_STARTED = re.compile(r"^arena (?:created|started): (http://\S+) ")
_TOKEN = re.compile(r"^admin token \(shown once, keep it\): (nap_\S+)$")
_TICK = os.sysconf("SC_CLK_TCK")
PEEL = '''"""A bot that plays peel's policy (the built-in bot's), as a participant's might."""

from clients.bots.peel import PeelBot
from clients.sdk import run

# {tag}
if __name__ == "__main__":
    run(PeelBot, name="peel-policy")
'''


def _start(db: Path, args: argparse.Namespace) -> tuple[subprocess.Popen[str], str, str]:
    command = [sys.executable, "-m", "tournaments.cli", "arena", "serve", "--db", str(db), "--port", "0"]
    if args.workers:
        command += ["--workers", str(args.workers)]
    process = subprocess.Popen(  # noqa: S603 - nap itself
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    assert process.stdout is not None  # noqa: S101 - asked for
    url = token = ""
    for line in process.stdout:
        if found := _STARTED.match(line):
            url = found.group(1).rstrip("/")
        if found := _TOKEN.match(line.strip()):
            token = found.group(1)
        if line.startswith("stop it with"):
            break
    threading.Thread(target=lambda: [None for _ in process.stdout or ()], daemon=True).start()
    return process, url, token


def _bot(folder: Path, number: int) -> bytes:
    made = scaffold(folder, f"bot{number}")
    if number % 2:
        (made / "bot.py").write_text(PEEL.format(tag=f"participant {number}"), encoding="utf-8")
    else:
        with (made / "bot.py").open("a", encoding="utf-8") as handle:
            handle.write(f"# participant {number}\n")
    return pack(made)


def _placed(client: ArenaClient, number: int, *, since: float, patience_s: float = 1800.0) -> float:
    """Seconds from ``since`` until submission ``number`` is placed; raises if it is refused."""
    while time.monotonic() - since < patience_s:
        submission = client.submission(number)
        if submission.status in {"placed", "retired"}:
            return time.monotonic() - since
        if submission.status == "refused":
            msg = f"submission {number} was refused: {submission.reason}"
            raise SystemExit(msg)
        time.sleep(0.5)
    msg = f"submission {number} not placed within {patience_s:g} s"
    raise SystemExit(msg)


def _tree_cpu(root: int) -> dict[str, float]:
    """CPU seconds of ``root`` (the arena), its workers and every other process under it (the bots)."""
    stats: dict[int, tuple[int, float, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK, command)
    ours, grew = {root}, True
    while grew:
        found = {pid for pid, (ppid, _, _) in stats.items() if ppid in ours} - ours
        grew = bool(found)
        ours |= found
    kinds = {"arena": 0.0, "referees": 0.0, "bots": 0.0}
    for pid in ours & stats.keys():
        _, cpu, command = stats[pid]
        kind = "arena" if pid == root else "referees" if "executors.workers" in command else "bots"
        kinds[kind] += cpu
    return kinds


def _blocks(client: ArenaClient) -> int:
    return int(client.leaderboard()["blocks"])


def main() -> None:
    """Run the benchmark; see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8, help="Python bots submitted (default 8)")
    parser.add_argument("--window", type=float, default=120.0, help="seconds of the full ladder measured")
    parser.add_argument("--workers", type=int, default=None, help="the arena's --workers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nap-bench-arena-") as scratch:
        root = Path(scratch)
        process, url, token = _start(root / "arena.db", args)
        try:
            admin = ArenaClient(Connection(url=url, token=token, token_source="the bench"))  # noqa: S106 - where
            print(f"arena at {url}, {os.cpu_count()} cores")
            started = time.monotonic()
            waits = []
            for number in range(1, args.bots + 1):
                person = ArenaClient(
                    Connection(url=url, token=admin.add_person(f"p{number}"), token_source="the bench")  # noqa: S106
                )
                waits.append((person, person.submit(_bot(root / "made", number)).id, time.monotonic()))
            for person, number, since in waits:
                took = _placed(person, number, since=since)
                print(
                    f"  submission {number}: placed {took:6.1f} s after its upload (all {args.bots} at once)"
                )
            print(f"all {args.bots} placed {time.monotonic() - started:.1f} s after the first upload")
            last = ArenaClient(Connection(url=url, token=admin.add_person("late"), token_source="the bench"))  # noqa: S106
            since = time.monotonic()
            number = last.submit(_bot(root / "made", args.bots + 1)).id
            took = _placed(last, number, since=since)
            print(f"one more submitted to the busy arena: placed {took:.1f} s after its upload (goal: 120 s)")
            cpu_before, blocks_before, at = _tree_cpu(process.pid), _blocks(admin), time.monotonic()
            time.sleep(args.window)
            cpu_after, blocks_after, elapsed = _tree_cpu(process.pid), _blocks(admin), time.monotonic() - at
            blocks = blocks_after - blocks_before
            print(
                f"full ladder ({args.bots + 1} bots and 3 anchors): {blocks} blocks in {elapsed:.0f} s, "
                f"{blocks * 60 / elapsed:.1f} blocks a minute"
            )
            spent = {kind: cpu_after[kind] - cpu_before.get(kind, 0.0) for kind in cpu_after}
            total = sum(spent.values()) or 1.0
            print(
                "CPU over that window: "
                + ", ".join(
                    f"{kind} {seconds:.1f} s ({seconds / total:.0%})" for kind, seconds in spent.items()
                )
            )
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(60)


if __name__ == "__main__":
    main()
