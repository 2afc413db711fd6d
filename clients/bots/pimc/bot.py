"""Perfect-Information Monte Carlo: sample the hidden hands, solve each sample exactly.

Play: for each sample of the unseen cards (:mod:`clients.bots.pimc.sampling`), the
double-dummy solver (:mod:`clients.bots.pimc.solver`) says, for each legal card, whether
the contract is made with best play after it; the bot plays the card with the best
(weighted) chance for its side, the declarer's to make the contract, the defenders' to
break it. Ties go to the better mean of the declarer's tricks (more for the declarer of a
trick contract, fewer for its defenders, the other way round in a misère) when time
allows, else to the lowest card.

Bidding: for each sample of the other hands, the solver finds how many tricks the seat
would take as declarer with its best first lead (the lead chooses trump), and whether it
would make a misère; each legal contract is then worth ``opponents * (p * win - (1 - p)
* lose)`` chips, with ``p`` the chance of making it less a ``caution`` margin (double
dummy flatters the declarer, who in truth does not see the cards). The bot bids the
contract worth the most, or passes when none is worth more than nothing.

A decision stops at the sample budget or the time budget, whichever comes first; with a
fixed seed and the sample budget binding, the bot is reproducible.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from clients.bots.pimc.sampling import Knowledge, bid_weight
from clients.bots.pimc.solver import SUIT_MASKS, Position, SearchAbortedError, Solver, mask_of
from clients.sdk import PASS, Bid, Bot, Card
from referee.rules import DEFAULT_PROFILE, Profile, ProfileError, get_profile
from referee.rules.deal import deal_order

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from referee.rules import SeatView

NAME: Final = "pimc"
VERSION: Final = "1.0"

_SOLVER_NODES_PER_SECOND: Final = 60_000
"""A cautious estimate of trick boundaries the solver visits per second, to turn the time
left into a node limit so that no single sample overruns the decision's budget."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much thinking one decision may do.

    ``samples`` bounds the deals sampled, ``seconds`` the wall time (``None``: no time
    limit, so that a seeded bot is reproducible); at least ``min_samples`` are tried when
    time runs out first. ``nodes`` bounds the trick boundaries one sample's solve may
    visit (less when the time left allows fewer): a sample too hard to solve in time is
    skipped.
    """

    samples: int = 400
    seconds: float | None = 0.2
    min_samples: int = 2
    nodes: int = 50_000


@dataclass(slots=True)
class _Clock:
    """The time budget of one decision."""

    budget: Budget
    now: Callable[[], float]
    start: float

    def left(self) -> float:
        if self.budget.seconds is None:
            return float("inf")
        return self.budget.seconds - (self.now() - self.start)

    def node_limit(self, *, floor: int = 2_000) -> int:
        left = self.left()
        if left == float("inf"):
            return self.budget.nodes
        return min(self.budget.nodes, max(floor, int(left * _SOLVER_NODES_PER_SECOND)))


class PimcBot(Bot):
    """The PIMC bot; one instance per (table, seat), as the SDK makes them."""

    def __init__(
        self,
        *,
        budget: Budget | None = None,
        seed: int = 0,
        profile: Profile | None = None,
        caution: float = 0.05,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.budget = budget if budget is not None else Budget()
        self.seed = seed
        self.profile = profile
        self.caution = caution
        self._now = clock
        self._rng: random.Random | None = None

    # ------------------------------------------------------------------ helpers

    def _random(self) -> random.Random:
        rng = self._rng
        if rng is None:
            rng = self._rng = random.Random(f"{self.seed}/{self.table}/{self.seat}")
        return rng

    def _profile(self, view: SeatView) -> Profile:
        if self.profile is not None and self.profile.name == view.profile:
            return self.profile
        try:
            return get_profile(view.profile)
        except ProfileError:
            return self.profile if self.profile is not None else DEFAULT_PROFILE

    def _clock(self) -> _Clock:
        return _Clock(self.budget, self._now, self._now())

    # ------------------------------------------------------------------ play

    def play(self, view: SeatView) -> Card:
        """The legal card with the best chance for this seat's side over the samples."""
        legal = [action for action in view.legal_actions if isinstance(action, Card)]
        if not legal:
            msg = "no legal card to play"
            raise ValueError(msg)
        profile = self._profile(view)
        if len(legal) == 1 or _decided(view, profile) or _all_equivalent(view, legal):
            return min(legal, key=_low)
        declarer_side = view.declarer == view.seat
        misere = profile.contract(view.contract).misere if view.contract else False
        clock = self._clock()
        rng = self._random()
        knowledge = Knowledge.of(view)
        score = dict.fromkeys(legal, 0.0)
        solvers: list[tuple[float, Solver]] = []
        total = 0.0
        for number in range(self.budget.samples):
            if number >= self.budget.min_samples and clock.left() <= 0:
                break
            hands = knowledge.sample(rng)
            weight = bid_weight(view, hands)
            solver = Solver(Position.from_view(view, profile, hands), node_limit=clock.node_limit())
            try:
                made = {card: solver.makes_after(card.index) for card in legal}
            except SearchAbortedError:
                continue
            for card, result in made.items():
                if result == declarer_side:
                    score[card] += weight
            total += weight
            solvers.append((weight, solver))
        if not solvers:
            return min(legal, key=_low)
        best = max(score.values())
        tied = [card for card in legal if score[card] >= best - 1e-9 * total]
        if len(tied) > 1:
            tied = self._tie_break(tied, solvers, clock, more=declarer_side != misere)
        return min(tied, key=_low)

    def _tie_break(
        self, tied: list[Card], solvers: list[tuple[float, Solver]], clock: _Clock, *, more: bool
    ) -> list[Card]:
        """The tied cards with the best mean of the declarer's tricks, on the samples time allows."""
        sums = dict.fromkeys(tied, 0.0)
        for weight, solver in solvers:
            if clock.left() <= 0:
                break
            try:
                values = {card: solver.tricks_after(card.index) for card in tied}
            except SearchAbortedError:
                break
            for card, value in values.items():
                sums[card] += weight * (value if more else -value)
        best = max(sums.values())
        return [card for card in tied if sums[card] >= best - 1e-9]

    # ------------------------------------------------------------------ bidding

    def bid(self, view: SeatView) -> Bid:
        """The legal contract with the best expected payment over the samples, else pass."""
        profile = self._profile(view)
        contracts = [
            profile.contract(action.name)
            for action in view.legal_actions
            if isinstance(action, Bid) and action is not PASS and profile.has(action.name)
        ]
        if not contracts:
            return PASS
        made = self.chances(view, [c.tricks for c in contracts if not c.misere],
                            misere=any(c.misere for c in contracts))
        if made is None:
            return PASS
        opponents = len(view.seats_in_play) - 1
        choice, value = PASS, 0.0
        for contract in contracts:
            chance = made["misere"] if contract.misere else made[str(contract.tricks)]
            chance = max(0.0, chance - self.caution)
            worth = opponents * (chance * contract.win - (1 - chance) * contract.lose)
            if worth > value:
                choice, value = Bid(contract.name), worth
        return choice

    def chances(self, view: SeatView, targets: Sequence[int], *, misere: bool) -> dict[str, float] | None:
        """The chances, as declarer with the best first lead, of each contract (None: no sample solved).

        Keys ``"3"``, ``"5"``...: taking at least that many tricks (the lead chooses
        trump); ``"misere"`` (when asked): taking none.
        """
        clock = self._clock()
        rng = self._random()
        knowledge = Knowledge.of(view)
        order = deal_order(view.dealer, view.seats_in_play, view.table_size)
        targets = sorted(set(targets))
        counts = dict.fromkeys([str(t) for t in targets] + (["misere"] if misere else []), 0)
        solved = 0
        mine = mask_of(view.hand)
        for number in range(self.budget.samples):
            if number >= self.budget.min_samples and clock.left() <= 0:
                break
            hands = {seat: mask_of(cards) for seat, cards in knowledge.sample(rng).items()}
            hands[view.seat] = mine
            made: list[str] = []
            try:
                limit = clock.node_limit()
                if targets:
                    solver = Solver(Position.opening(order, hands, declarer=view.seat, target=targets[0],
                                                     misere=False), node_limit=limit)
                    for target in targets:
                        if not solver.reaches(target):
                            break
                        made.append(str(target))
                if misere and Solver(Position.opening(order, hands, declarer=view.seat, target=0,
                                                      misere=True), node_limit=limit).can_make():
                    made.append("misere")
            except SearchAbortedError:
                continue
            for key in made:
                counts[key] += 1
            solved += 1
        if not solved:
            return None
        return {key: count / solved for key, count in counts.items()}


def _low(card: Card) -> tuple[int, int]:
    return (card.rank, card.suit)


def _decided(view: SeatView, profile: Profile) -> bool:
    """Whether the contract's fate is already sealed (then every card is as good)."""
    if view.contract is None or view.declarer is None:
        return False
    contract = profile.contract(view.contract)
    won = view.tricks_won[view.declarer]
    if contract.misere:
        return won > 0
    left = profile.hand_size - len(view.tricks)
    return won >= contract.tricks or won + left < contract.tricks


def _all_equivalent(view: SeatView, legal: Sequence[Card]) -> bool:
    """Whether the legal cards form one run of one suit with no card that may be in play between."""
    if len({card.suit for card in legal}) > 1:
        return False
    played = mask_of(view.played) & ~mask_of(card for _, card in view.trick)
    mine = mask_of(legal)
    low = mine & -mine
    span = ((1 << mine.bit_length()) - low) & SUIT_MASKS[legal[0].suit]
    return not span & ~mine & ~played
