"""Benchmark of the rotation check: how often it flags honest bots, and how often a bot that remembers boards.

Each run is one tournament played in process (:func:`tournaments.play.blocks.play_block_in_process`:
the referee's match core, no gRPC, no store, no bot processes), scheduled as ``nap
tournament run`` schedules one (:func:`tournaments.plan.scheduler.schedule`, every bot in
every seat of each block, seat orders varied), and read by the standings as ``nap
standings`` reads them (:func:`tournaments.stats.standings.compute_standings`). Fields:

- ``mix``: peel, peel-2, random (and random-2 at four seats): honest bots of two strengths;
- ``random``: random clones (honest, and noisy: they draw from seeds per table and seat);
- ``peel``: peel clones (deterministic: their rotation edge is exactly 0 in every block, so
  they are never tested);
- ``mix+memory`` and ``peel+memory``: the same with peel-2 replaced by :class:`BoardMemoryBot`,
  a cheater.

For the honest fields it prints how often any bot was flagged (the false-positive rate,
which should stay under the check's 1%), for the cheater's how often the cheater was
flagged (the power) and how often an honest bot was; each rate with its 95% Wilson
interval. Run ``r`` plays the tournament seed ``seed * 1_000_003 + r``; every run replays
exactly. ``--log FILE`` appends each run to FILE as a JSON line as soon as it ends; the
runs already there (same field, table size, blocks and seed) are read back and not played
again, so a long benchmark stopped half way resumes, and several invocations (fields with
more or fewer tournaments) can share one file.

The cheater, :class:`BoardMemoryBot`, is what one bot process that remembers boards can
do, and no more: it keeps a memory (:data:`MEMORY`, module-level, so shared by all its
instances as by one process's) of every deal it saw played to the end (each seat's cards,
from the cards played: every dealt card is played by the end of a deal), keyed by the
deal's number, the seat and that seat's hand. When a new deal gives it a hand it
remembers at that seat and deal number, it knows every hand: it bids the most valuable
contract the exact solver (:mod:`clients.bots.pimc.solver`) says it makes against any
defence, or passes, and plays the solver's best card for its side. Otherwise (a board's
first play, a deal nobody bid) it plays as Peel. A tournament starts with an empty
memory. Heather and the profiles without exchanges or a widow only.

    python bench/rotation_flag.py [--tournaments 10] [--blocks 40] [--seats 3 4] [--jobs 2]
                                  [--fields mix random peel mix+memory peel+memory] [--seed 0]
                                  [--log FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import multiprocessing
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from clients.bots.peel import PeelBot
from clients.bots.pimc.solver import Position, Solver, mask_of
from clients.bots.random_bot import RandomBot
from clients.bots.table_rules import table_rules
from clients.sdk import PASS, Bid, Card
from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE, CardPlayed, DealSettled, DealStarted, Phase
from referee.rules.deal import deal_order
from tournaments.plan.scheduler import schedule
from tournaments.play.blocks import BlockRun, play_block_in_process
from tournaments.stats.rotation_check import ALPHA, MIN_BLOCKS
from tournaments.stats.standings import compute_standings

if TYPE_CHECKING:
    from collections.abc import Callable

    from clients.sdk.bot import Bot
    from referee.rules import Action, Profile, SeatView

CHEATER = "memory"
"""The cheater's name in the tournaments."""

Hand = frozenset[Card]


@dataclass(slots=True)
class BoardMemory:
    """Every deal a process saw played to the end, and how often it recognised one.

    ``deals`` maps (deal number, seat, that seat's hand) to every seat's hand of that deal.
    ``asked`` counts the deals in which it was asked for a decision, ``known`` those in
    which it knew every hand.
    """

    deals: dict[tuple[int, int, Hand], dict[int, Hand]] = field(default_factory=dict)
    asked: int = 0
    known: int = 0

    def clear(self) -> None:
        """Forget everything: a new process."""
        self.deals.clear()
        self.asked = self.known = 0


MEMORY = BoardMemory()
"""The memory of every :class:`BoardMemoryBot` of this process."""


class BoardMemoryBot(PeelBot):
    """Peel, except on a deal it has seen played before: then it plays with every hand known.

    A cheater, for measuring the rotation check only (see the module notes).
    """

    def __init__(self, *, memory: BoardMemory = MEMORY) -> None:
        super().__init__()
        self.memory = memory
        self._played: dict[int, list[Card]] = {}
        self._deal = -1
        self._looked = -1
        self._known: dict[int, Hand] | None = None

    def on_event(self, event: object) -> None:
        """Note every card played; at the end of a deal played out, remember every hand."""
        if isinstance(event, DealStarted):
            self._deal = event.deal
            self._played = {seat: [] for seat in event.seats}
        elif isinstance(event, CardPlayed):
            self._played.setdefault(event.seat, []).append(event.card)
        elif isinstance(event, DealSettled) and self.rules is not None:
            size = self.rules.hand_size
            hands = {seat: frozenset(cards) for seat, cards in self._played.items()}
            if hands and all(len(hand) == size for hand in hands.values()):
                for seat, hand in hands.items():
                    self.memory.deals[self._deal, seat, hand] = hands

    def decide(self, view: SeatView) -> Action:
        """With every hand known, the solver's bid or card; otherwise Peel's."""
        if self._looked != view.deal_number:
            self._looked = view.deal_number
            self._known = self._recall(view)
            self.memory.asked += 1
            self.memory.known += self._known is not None
        known = self._known
        if known is None or view.phase not in {Phase.BIDDING, Phase.PLAY}:
            return super().decide(view)
        rules = table_rules(view, given=self.rules)
        if view.phase is Phase.BIDDING:
            return _best_bid(view, rules, known)
        return _best_card(view, rules, known)

    def _recall(self, view: SeatView) -> dict[int, Hand] | None:
        """Every hand of this deal, if it was seen before: the hand it was dealt, looked up."""
        mine = [card for trick in view.tricks for seat, card in trick.plays if seat == view.seat]
        mine += [card for seat, card in view.trick if seat == view.seat]
        dealt = frozenset((*view.hand, *mine))
        known = self.memory.deals.get((view.deal_number, view.seat, dealt))
        return known if known is not None and set(known) == set(view.seats_in_play) else None


def _best_bid(view: SeatView, rules: Profile, known: dict[int, Hand]) -> Bid:
    """The legal contract worth the most that the declarer makes against any defence, else pass.

    One solver answers every trick contract (the tricks it takes with its best first lead,
    which chooses trump); a misère has its own.
    """
    order = deal_order(view.dealer, view.seats_in_play, view.table_size)
    hands = {seat: mask_of(hand) for seat, hand in known.items()}
    opponents = len(view.seats_in_play) - 1
    tricks: Solver | None = None
    choice, value = PASS, 0
    for action in view.legal_actions:
        if not isinstance(action, Bid) or action is PASS or not rules.has(action.name):
            continue
        contract = rules.contract(action.name)
        if opponents * contract.win <= value:
            continue
        if contract.misere:
            position = Position.opening(order, hands, declarer=view.seat, target=0, misere=True)
            made = Solver(position).can_make()
        else:
            if tricks is None:
                position = Position.opening(
                    order, hands, declarer=view.seat, target=contract.tricks, misere=False
                )
                tricks = Solver(position)
            made = tricks.reaches(contract.tricks)
        if made:
            choice, value = action, opponents * contract.win
    return choice


def _best_card(view: SeatView, rules: Profile, known: dict[int, Hand]) -> Card:
    """The card after which the solver gives this seat's side the contract's outcome it wants.

    Among those, the one that leaves the declarer the most tricks (for a trick contract's
    declarer; the fewest for its defenders, the other way round in a misère).
    """
    legal = [action for action in view.legal_actions if isinstance(action, Card)]
    if len(legal) == 1:
        return legal[0]
    played = view.played
    others = {seat: hand - played for seat, hand in known.items() if seat != view.seat}
    solver = Solver(Position.from_view(view, rules, others))
    declarer_side = view.declarer == view.seat
    misere = view.contract is not None and rules.contract(view.contract).misere
    good = [card for card in legal if solver.makes_after(card.index) == declarer_side] or legal
    if len(good) == 1:
        return good[0]
    sign = 1 if declarer_side != misere else -1
    return max(good, key=lambda card: (sign * solver.tricks_after(card.index), -card.rank, -card.suit))


FIELDS: dict[str, tuple[str, ...]] = {
    "mix": ("peel", "peel-2", "random", "random-2"),
    "random": ("random", "random-2", "random-3", "random-4"),
    "peel": ("peel", "peel-2", "peel-3", "peel-4"),
    "mix+memory": ("peel", CHEATER, "random", "random-2"),
    "peel+memory": ("peel", CHEATER, "peel-3", "peel-4"),
}
"""Each field's entrants at four seats; at three, the first three."""

_NO_TIME_LIMIT = TimeLimits(decision_ms=10**9)


def factory(name: str) -> Callable[[], Bot]:
    """The bots behind an entrant's name."""
    if name == CHEATER:
        return BoardMemoryBot
    return PeelBot if name.startswith("peel") else RandomBot


@dataclass(frozen=True, slots=True)
class Run:
    """One tournament's outcome: the bots flagged, the cheater's edge, and what it knew."""

    field: str
    seats: int
    run: int
    blocks: int
    seed: int
    flagged: tuple[str, ...]
    tested: int
    cheater_edge: float | None
    chips: float | None
    known: int
    asked: int


def one_run(args: argparse.Namespace, task: tuple[str, int, int]) -> Run:
    """Play one tournament of ``field`` at ``seats`` seats, ``blocks`` blocks, and read its standings."""
    name, seats, run = task
    MEMORY.clear()
    entrants = FIELDS[name][:seats]
    factories = {entrant: factory(entrant) for entrant in entrants}
    seed = args.seed * 1_000_003 + run
    results = []
    for block in schedule(entrants, table_size=seats, sessions=args.blocks * seats, seed=seed):
        spec = BlockRun(
            tournament=run,
            index=block.index,
            board_seed=block.board_seed,
            bots=block.bots,
            profile=DEFAULT_PROFILE,
            time_limits=_NO_TIME_LIMIT,
            rotations=tuple(block.rotations),
        )
        results += [done.result for done in play_block_in_process(spec, factories)]
    standings = compute_standings(results)
    cheater = standings.bot(CHEATER) if CHEATER in entrants else None
    return Run(
        field=name,
        seats=seats,
        run=run,
        blocks=args.blocks,
        seed=args.seed,
        flagged=tuple(line.bot for line in standings.bots if line.rotation_flagged),
        tested=sum(
            line.rotation_edge is not None
            and line.rotation_edge.n >= MIN_BLOCKS
            and bool(line.rotation_edge.sd)
            for line in standings.bots
        ),
        cheater_edge=None if cheater is None or cheater.rotation_edge is None else cheater.rotation_edge.mean,
        chips=None if cheater is None else cheater.chips.mean,
        known=MEMORY.known,
        asked=MEMORY.asked,
    )


def logged_runs(args: argparse.Namespace, tasks: list[tuple[str, int, int]]) -> list[Run]:
    """The runs of ``tasks``: those in ``args.log`` read back, the others played (and appended)."""
    path: Path | None = args.log
    done: dict[tuple[str, int, int], Run] = {}
    if path is not None and path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            run = Run(**{**row, "flagged": tuple(row["flagged"])})
            if (run.blocks, run.seed) == (args.blocks, args.seed):
                done[run.field, run.seats, run.run] = run
    todo = [task for task in tasks if task not in done]
    with multiprocessing.Pool(args.jobs) as pool:
        for run in pool.imap_unordered(partial(one_run, args), todo, chunksize=1):
            done[run.field, run.seats, run.run] = run
            if path is not None:
                with path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(dataclasses.asdict(run)) + "\n")
    return [done[task] for task in tasks]


def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a binomial rate ``hits / n``."""
    rate = hits / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(hits: int, n: int) -> str:
    low, high = wilson(hits, n)
    return f"{hits}/{n} = {100 * hits / n:.1f}% (95% CI {100 * low:.1f}-{100 * high:.1f}%)"


def report(runs: list[Run]) -> None:
    groups: dict[tuple[str, int], list[Run]] = defaultdict(list)
    for run in runs:
        groups[run.field, run.seats].append(run)
    for (name, seats), group in sorted(groups.items(), key=lambda item: (item[0][1], item[0][0])):
        n = len(group)
        tested = statistics.mean(run.tested for run in group)
        head = f"{seats} seats, {name:<11} ({', '.join(FIELDS[name][:seats])}): {n} tournaments"
        if CHEATER not in FIELDS[name][:seats]:
            hits = sum(bool(run.flagged) for run in group)
            print(f"{head}; any bot flagged: {rate(hits, n)}; bots tested per tournament {tested:.2f}")
            continue
        caught = sum(CHEATER in run.flagged for run in group)
        wrong = sum(any(bot != CHEATER for bot in run.flagged) for run in group)
        edges = [run.cheater_edge for run in group if run.cheater_edge is not None]
        chips = [run.chips for run in group if run.chips is not None]
        known = sum(run.known for run in group) / max(1, sum(run.asked for run in group))
        print(
            f"{head}; cheater flagged: {rate(caught, n)}; an honest bot flagged: {rate(wrong, n)}; "
            f"cheater's rotation edge {statistics.mean(edges):+.2f} chips a session "
            f"(sd over tournaments {statistics.stdev(edges) if len(edges) > 1 else 0.0:.2f}), "
            f"its chips {statistics.mean(chips):+.2f} a session; it knew every hand in {100 * known:.0f}% "
            "of the deals it was asked in"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tournaments", type=int, default=10, help="tournaments per field and table size")
    parser.add_argument("--blocks", type=int, default=40, help="blocks per tournament")
    parser.add_argument("--seats", type=int, nargs="+", default=[3, 4], help="table sizes")
    parser.add_argument("--fields", nargs="+", default=list(FIELDS), choices=list(FIELDS), help="fields")
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    parser.add_argument("--seed", type=int, default=0, help="base of the tournament seeds")
    parser.add_argument("--log", type=Path, default=None, help="JSON lines of the runs, resumed from")
    args = parser.parse_args()
    tasks = [
        (name, seats, run) for seats in args.seats for name in args.fields for run in range(args.tournaments)
    ]
    print(
        f"rotation check: one-sided t test at {ALPHA:.0%} over all bots, from {MIN_BLOCKS} complete blocks; "
        f"{args.tournaments} tournaments of {args.blocks} blocks per field and table size, seed {args.seed}"
    )
    started = time.perf_counter()
    runs = logged_runs(args, tasks)
    report(runs)
    print(f"{len(runs)} tournaments in {time.perf_counter() - started:.0f} s (those in --log read back)")


if __name__ == "__main__":
    main()
