"""Fair play: what a cheating bot gains over playing honestly, for each cheater of bench/cheaters/.

For each cheater (``memory``, ``seed``, ``dbreader``; and ``probe``, which plays Peel, as a
sanity line that must gain exactly 0), two tournaments through the real command line:

1. the cheater at a 3-seat table with Peel and PIMC, ``--blocks`` duplicate blocks
   (``nap tournament run --bot bench/cheaters/<kind> --bot peel --bot pimc -k 3 -n <3*blocks>``,
   without ``--seed`` unless given one: the default seed applies, as for a user);
2. the control: the same tournament with the seed the first one stored (``nap tournament
   list --json``), plain Peel entered under the cheater's name (``<kind>=peel``), so the
   schedule, the seats and the deals are the same.

The cheater's gain is, per block, its chips minus the control's on the same block and
rotation, averaged over the block's rotations (chips per session), then the mean and its
95% interval over the blocks (``tournaments.stats.estimates.estimate``). "knew" is the share of the
cheater's decisions made knowing every hand, from its ``cheat: knew N of M decisions``
lines in its bot logs (``<out>/t<N>/bots/<kind>*.log``); for the probe, how many of its
attempts found a channel open. "faults" are the cheater's (a late answer would cost it
chips). ``memory`` and ``dbreader`` cannot know a block's first rotation, which no one has
played yet (so about 2/3 of the sessions at most); ``memory`` also misses the deals passed out in every
earlier rotation (no card is played). ``--extra`` adds arguments to both runs (for
instance ``--extra '--sandbox on'`` once the harness has that option).

    python bench/fairplay.py [--blocks 40] [--cheaters memory,seed,dbreader] [--seed N]
                             [--extra ARGS] [--no-probe] [--keep-memory] [--workdir DIR]

Each cheater's folder is staged in the work folder with the shared modules beside its bot
(a sandboxed bot sees only its folder). Before a ``memory`` run its shared files
(``/tmp/nap-cheat-memory/``) are removed unless ``--keep-memory``: a fresh cheater. (Kept, they hold the
boards of earlier tournaments with the same seed, which today's default seed repeats.)

Measured on 2026-12-01 at the branch ``cheaters`` (before any defence: no sandbox, the
default seed 1, table ids naming the block) on a 2-core machine shared with other work (load
about 5), ``python bench/fairplay.py --workdir /tmp/fp40``: 40 blocks, 120 sessions a run,
15 minutes for the eight runs::

    cheater   gain/session      cheater  control             knew faults blocks        time
    memory    +12.16 ± 1.62       +9.04    -3.12    2093/3364 62%      0     40 109 + 101 s
    seed      +21.09 ± 1.81      +17.98    -3.12   3636/3636 100%      0     40 112 + 106 s
    dbreader  +13.84 ± 1.72      +10.72    -3.12    2388/3415 70%      0     40 179 + 116 s
    probe     +0.00 (all equal)    -3.12    -3.12       42/47 open      0     40   81 + 80 s

(chips a session; "cheater" and "control" are the mean chips of the cheater's seat in each
run.) A run before, same command, gave +11.91 ± 1.62, +20.88 ± 1.91 and +13.93 ± 1.69: PIMC
is seeded but its wall-clock cap can cut a decision short on a loaded machine. A ``dbreader``
playing into a database that already holds a tournament with the same seed (the default
repeats it) knows the first rotations too (checked: every decision of 9 sessions); these
runs use a fresh database each.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tournaments.stats.estimates import Estimate, estimate
from tournaments.store.database import Store

ROOT = Path(__file__).resolve().parent
CHEATERS = ROOT / "cheaters"
NAP = Path(sys.executable).parent / "nap"
OPPONENTS = ("peel", "pimc")
SHARED = ("_perfect.py", "_snoop.py")
"""The modules every cheater's folder gets a copy of (:func:`staged`)."""
TABLE_SIZE = 3
MEMORY_FILES = (Path("/tmp/nap-cheat-memory"),)  # noqa: S108 - the memory cheater's (its folder is staged afresh)
KNEW = re.compile(r"^cheat: knew (\d+) of (\d+) decisions", re.MULTILINE)
PROBED = re.compile(r"^probe: (\d+) of (\d+) attempts open", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Run:
    """One tournament played: its database, output folder, command and how long it took."""

    db: Path
    out: Path
    command: tuple[str, ...]
    seconds: float

    def tournament(self) -> tuple[int, int]:
        """The id and seed of the run's tournament (``nap tournament list --json``)."""
        listed = subprocess.run(  # noqa: S603 - nap's own command, argv built here
            [str(NAP), "tournament", "list", "--json", "--db", str(self.db)],
            capture_output=True,
            text=True,
            check=True,
        )
        last = json.loads(listed.stdout)["tournaments"][-1]
        return int(last["id"]), int(last["seed"])

    def chips(self, bot: str) -> tuple[dict[tuple[int, int], tuple[int, tuple[str, ...]]], int]:
        """``bot``'s chips per (block, rotation), with the seating of that session; and its faults."""
        tournament, _ = self.tournament()
        with Store.open(self.db, check=False) as store:
            results = store.session_results(tournament)
        chips = {
            (result.block, result.rotation): (
                next(seat.chips for seat in result.seats if seat.bot == bot),
                tuple(seat.bot for seat in result.seats),
            )
            for result in results
        }
        return chips, sum(1 for result in results for fault in result.faults if fault.bot == bot)

    def bot_logs(self, bot: str) -> str:
        """Everything ``bot``'s processes wrote (every worker's log)."""
        tournament, _ = self.tournament()
        folder = self.out / f"t{tournament}" / "bots"
        return "".join(
            path.read_text(encoding="utf-8", errors="replace") for path in folder.glob(f"{bot}*.log")
        )


@dataclass(frozen=True, slots=True)
class Outcome:
    """One cheater's figures."""

    name: str
    gain: Estimate
    cheater_mean: float
    control_mean: float
    knew: tuple[int, int]
    faults: int
    blocks: int
    runs: tuple[Run, Run]


def play(command: list[str], *, where: Path, label: str) -> Run:
    """Run one ``nap tournament run`` in ``where`` (its output kept in ``<label>.txt``); exit if it fails."""
    db, out = where / f"{label}.db", where / f"{label}-out"
    argv = (*command, "--db", str(db), "--out", str(out))
    start = time.monotonic()
    with (where / f"{label}.txt").open("w", encoding="utf-8") as output:
        done = subprocess.run(argv, cwd=where, stdout=output, stderr=subprocess.STDOUT, check=False)  # noqa: S603 - nap's own command
    seconds = time.monotonic() - start
    if done.returncode != 0:
        tail = (where / f"{label}.txt").read_text(encoding="utf-8").splitlines()[-5:]
        sys.exit(f"{label}: exit status {done.returncode}\n  " + "\n  ".join(tail))
    return Run(db, out, argv, seconds)


def staged(name: str, where: Path) -> Path:
    """The cheater's folder as it is entered: a copy with the shared modules beside its bot.

    A sandboxed bot sees its own folder only, so what it imports must be in it.
    """
    folder = where / "bots" / name
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(CHEATERS / name, folder, ignore=shutil.ignore_patterns("__pycache__", "memory.jsonl"))
    for shared in SHARED:
        shutil.copy2(CHEATERS / shared, folder / shared)
    return folder


def measure(name: str, *, blocks: int, seed: int | None, extra: list[str], where: Path) -> Outcome:
    """Play the cheater's tournament and its control; compare them block by block."""
    folder = staged(name, where)
    sessions = ["-k", str(TABLE_SIZE), "-n", str(TABLE_SIZE * blocks)]
    others = [part for bot in OPPONENTS for part in ("--bot", bot)]
    seeded = [] if seed is None else ["--seed", str(seed)]
    cheat = play(
        [str(NAP), "tournament", "run", "--bot", str(folder), *others, *sessions, *seeded, *extra],
        where=where,
        label=f"{name}-cheat",
    )
    _, stored = cheat.tournament()
    control = play(
        [
            str(NAP),
            "tournament",
            "run",
            "--bot",
            f"{name}=peel",
            *others,
            *sessions,
            "--seed",
            str(stored),
            *extra,
        ],
        where=where,
        label=f"{name}-control",
    )
    (cheated, faults), (honest, _) = cheat.chips(name), control.chips(name)
    if {key: seating for key, (_, seating) in cheated.items()} != {
        key: seating for key, (_, seating) in honest.items()
    }:
        sys.exit(f"{name}: the control did not seat the bots as the cheater's tournament did")
    per_block: dict[int, list[int]] = {}
    for (block, rotation), (chips, _) in cheated.items():
        per_block.setdefault(block, []).append(chips - honest[block, rotation][0])
    gains = [sum(values) / len(values) for _, values in sorted(per_block.items())]
    logs = cheat.bot_logs(name)
    pattern = PROBED if name == "probe" else KNEW
    counts = [(int(a), int(b)) for a, b in pattern.findall(logs)]
    knew = (sum(a for a, _ in counts), sum(b for _, b in counts))
    if name == "probe" and counts:
        knew = counts[0]  # every process of the probe tries the same channels: one is enough
    return Outcome(
        name=name,
        gain=estimate(gains),
        cheater_mean=sum(chips for chips, _ in cheated.values()) / len(cheated),
        control_mean=sum(chips for chips, _ in honest.values()) / len(honest),
        knew=knew,
        faults=faults,
        blocks=len(gains),
        runs=(cheat, control),
    )


def forget_memory() -> None:
    """Remove what earlier ``memory`` runs left to share: a fresh cheater."""
    for path in MEMORY_FILES:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def show(gain: Estimate) -> str:
    """A gain as ``+12.34 ± 1.23``, or without an interval and why (``+0.00 (all equal)``)."""
    if gain.half_width is None:
        return f"{gain.mean:+.2f} ({'all equal' if gain.sd == 0 else 'one block'})"
    return f"{gain.mean:+.2f} ± {gain.half_width:.2f}"


def report(outcomes: list[Outcome]) -> None:
    """The table of figures, then each cheater's commands."""
    header = (
        f"{'cheater':<9} {'gain/session':<16} {'cheater':>8} {'control':>8} "
        f"{'knew':>16} {'faults':>6} {'blocks':>6} {'time':>11}"
    )
    print(header)
    print("-" * len(header))
    for o in outcomes:
        done, asked = o.knew
        share = f"{done}/{asked} {done / asked:.0%}" if asked else "-"
        if o.name == "probe":
            share = f"{done}/{asked} open" if asked else "-"
        seconds = " + ".join(f"{run.seconds:.0f}" for run in o.runs) + " s"
        print(
            f"{o.name:<9} {show(o.gain):<16} {o.cheater_mean:>+8.2f} {o.control_mean:>+8.2f} "
            f"{share:>16} {o.faults:>6} {o.blocks:>6} {seconds:>11}"
        )
    print()
    for o in outcomes:
        for label, run in zip(("cheater", "control"), o.runs, strict=True):
            print(f"{o.name} {label}: {shlex.join(run.command)}")


def main() -> None:
    """Measure each cheater against its control and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=40, help="duplicate blocks per run (3 sessions each)")
    parser.add_argument(
        "--cheaters", default="memory,seed,dbreader", help="comma-separated folders of bench/cheaters/"
    )
    parser.add_argument("--seed", type=int, default=None, help="tournament seed (default: nap's default)")
    parser.add_argument("--extra", default="", help="more arguments for both runs, one shell-quoted string")
    parser.add_argument("--no-probe", action="store_true", help="leave out the probe's sanity line")
    parser.add_argument(
        "--keep-memory", action="store_true", help="keep the memory cheater's files from before"
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where the runs' databases and logs go")
    args = parser.parse_args()
    names = [name.strip() for name in args.cheaters.split(",") if name.strip()]
    if not args.no_probe and "probe" not in names:
        names.append("probe")
    for name in names:
        if not (CHEATERS / name / "nap-bot.toml").is_file():
            parser.error(f"no cheater {name!r} in {CHEATERS}")
    where = args.workdir or Path(tempfile.mkdtemp(prefix="nap-fairplay-"))
    where.mkdir(parents=True, exist_ok=True)
    print(f"runs in {where} ({args.blocks} blocks, {TABLE_SIZE * args.blocks} sessions a run)", flush=True)
    outcomes = []
    for name in names:
        if name == "memory" and not args.keep_memory:
            forget_memory()
        outcome = measure(
            name, blocks=args.blocks, seed=args.seed, extra=shlex.split(args.extra), where=where
        )
        print(f"{name}: {show(outcome.gain)} chips a session", flush=True)
        outcomes.append(outcome)
    print()
    report(outcomes)


if __name__ == "__main__":
    main()
