"""Perfect-Information Monte Carlo: sample the hidden hands, solve each sample exactly.

Play: for each sample of the unseen cards (:mod:`clients.bots.pimc.sampling`), the
double-dummy solver (:mod:`clients.bots.pimc.solver`) says, for each legal card, whether
the contract is made with best play after it; the bot plays the card with the best
(weighted) chance for its side, the declarer's to make the contract, the defenders' to
break it. Ties go to the better mean of the declarer's tricks (more for the declarer of a
trick contract, fewer for its defenders, the other way round in a misère) when time
allows, else to the lowest card.

Bidding: for each sample of the other hands (weighted by how well they fit the auction),
the solver finds how many tricks the seat would take as declarer with its best first lead
(the lead chooses trump), and whether it would make a misère; each legal contract is then
worth ``opponents * (p * win - (1 - p) * lose)`` chips, with ``p`` the chance of making it
less a ``caution`` margin. The bot bids the contract worth the most when that beats
passing, which is worth nothing, or less when the standing contract is likely to be made
(:meth:`PimcBot.bid`).

The margin is measured, not guessed: ``bench/pimc.py --match`` prints the estimated chance
of every contract the bot declared against how often it was made. Double dummy flatters
the declarer, who plays blind, but it flatters its defenders as much, and against Peel
and random defenders (heather, 4 seats) the contracts were made about 7 points more often
than estimated; so the default margin is negative.

A decision's budget is counted (:class:`~clients.bots.pimc.budget.Budget`): a number of
samples, each solve bounded by a number of nodes, so with a fixed seed the bot makes the
same choices on any machine under any load. The time cap is only a safety cap, far above
what the samples take, and it counts the CPU seconds of the thread that decides
(``time.thread_time``), not the wall clock: other processes busy on the machine do not
make it bite. A decision past it stops (after ``min_samples``) and each solve with it (or
a floor of about 30 ms once it is spent: from the first lead, seven cards at seven seats
can take seconds to solve, ``bench/pimc.py``); such decisions are counted in
:attr:`PimcBot.capped`, said at the session's end on stderr (the bot's log), and a
measurement should see none.

The pool variants (Purchase, Écarté, Peep Nap): the exchange, the peep and the widow are
decided by Peel's rules (:mod:`clients.bots.peel_pool`), whose thresholds were measured
in seeded playouts (``bench/peel_pool.py``); the samples then agree with what the seat
saw (:mod:`clients.bots.pimc.sampling`: drawn and discarded cards, a widow peeped at),
and a seat that peeped bids on its hand with the widow swapped in as Peel would swap it
as declarer. Simulating every exchange (up to 32 in Écarté) would cost that many times a
bid's solves, each over hands whose drawn cards are themselves sampled.

The table's rules (hand size, pack, ladder) come from
:func:`clients.bots.table_rules.table_rules`: the hidden cards are guessed from the
table's pack, 52 cards or a short pack.
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from clients.bots import peel_pool
from clients.bots.pimc.budget import BATCH, Batch, Budget, Clock, Deadline
from clients.bots.pimc.sampling import Knowledge, bid_weight
from clients.bots.pimc.solver import SUIT_MASKS, Position, SearchAbortedError, Solver, mask_of
from clients.bots.table_rules import table_rules
from clients.sdk import PASS, Bid, Bot, Card
from referee.rules import Contract, DealSettled, Exchange, Profile, SessionOver, TakeWidow
from referee.rules.deal import deal_order

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from referee.rules import Action, SeatView

NAME: Final = "pimc"
VERSION: Final = "1.0"

CAUTION: Final = -0.07
"""Taken off each double-dummy chance of making a contract when bidding (see the module notes)."""

_PRIOR_DEALS: Final = 2.0
"""How many deals' worth of evidence the sampled chance of another seat's contract counts
for, against that seat's record as declarer in the session."""


class PimcBot(Bot):
    """The PIMC bot; one instance per (table, seat), as the SDK makes them."""

    def __init__(  # noqa: PLR0913 - every option keyword-only, with a default
        self,
        *,
        budget: Budget | None = None,
        seed: int = 0,
        profile: Profile | None = None,
        caution: float = CAUTION,
        clock: Callable[[], float] = time.thread_time,
        batch: Batch | None = None,
    ) -> None:
        self.budget = budget if budget is not None else Budget()
        self.seed = seed
        self.profile = profile
        self.caution = caution
        self._now = clock
        self._batch = batch if batch is not None else BATCH
        self._rng: random.Random | None = None
        self.last_chance: float | None = None
        """The double-dummy chance of the contract last bid (None after a pass), for calibration."""
        self._declared: dict[int, tuple[int, int]] = {}
        """Per seat, its contracts declared and made in this session (see :meth:`on_event`)."""
        self._rules: Profile | None = None
        self.capped = 0
        """Decisions that the wall-clock cap cut short (their choice depended on the machine)."""

    # ------------------------------------------------------------------ helpers

    def _random(self) -> random.Random:
        rng = self._rng
        if rng is None:
            rng = self._rng = random.Random(f"{self.seed}/{self.table}/{self.seat}")
        return rng

    def _profile(self, view: SeatView) -> Profile:
        rules = self._rules
        if rules is None or rules.name != view.profile:
            rules = self._rules = table_rules(view, given=self.profile or self.rules)
        return rules

    def _clock(self) -> Clock:
        now = self._now()
        budget = self.budget
        seconds = budget.seconds
        if seconds is not None and budget.batch_seconds is not None:
            used = self._batch.begin(self.table, now, size=budget.batch_size)
            seconds = max(0.0, min(seconds, budget.batch_seconds - used))
        return Clock(seconds, self._now, now)

    def decide(self, view: SeatView) -> Action:
        """Bid or play (:meth:`bid`, :meth:`play`), noting when the decision ends for :class:`Batch`."""
        try:
            return super().decide(view)
        finally:
            self._batch.end = self._now()

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
        knowledge = Knowledge.of(view, pack=profile.pack)
        score = dict.fromkeys(legal, 0.0)
        solvers: list[tuple[float, Solver]] = []
        total = 0.0
        capped = False
        for number in range(self.budget.samples):
            if number >= self.budget.min_samples and clock.left() <= 0:
                capped = True
                break
            hands = knowledge.sample(rng)
            weight = bid_weight(view, hands, pack_size=profile.pack_size)
            solver = Solver(
                Position.from_view(view, profile, hands),
                node_limit=self.budget.nodes,
                deadline=clock.deadline(),
            )
            try:
                made = {card: solver.makes_after(card.index) for card in legal}
            except SearchAbortedError:
                capped = capped or clock.left() <= 0
                continue
            for card, result in made.items():
                if result == declarer_side:
                    score[card] += weight
            total += weight
            solvers.append((weight, solver))
        if not solvers:
            self.capped += capped
            return min(legal, key=_low)
        best = max(score.values())
        tied = [card for card in legal if score[card] >= best - 1e-9 * total]
        if len(tied) > 1:
            tied = self._tie_break(tied, solvers, clock, more=declarer_side != misere)
            capped = capped or clock.left() <= 0
        self.capped += capped
        return min(tied, key=_low)

    def _tie_break(
        self, tied: list[Card], solvers: list[tuple[float, Solver]], clock: Clock, *, more: bool
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

    # ------------------------------------------------------------------ the pool variants

    def exchange(self, view: SeatView) -> Exchange:
        """Peel's exchange (:func:`peel_pool.choose_exchange`)."""
        return peel_pool.choose_exchange(view, self._profile(view))

    def peep(self, view: SeatView) -> bool:
        """Peel's peep (:func:`peel_pool.wants_peep`)."""
        return peel_pool.wants_peep(view, self._profile(view))

    def take_widow(self, view: SeatView) -> TakeWidow:
        """Peel's widow (:func:`peel_pool.choose_widow`)."""
        return peel_pool.choose_widow(view, self._profile(view))

    # ------------------------------------------------------------------ bidding

    def bid(self, view: SeatView) -> Bid:
        """The legal contract worth the most chips over the samples, else pass.

        Passing is worth nothing, or less when the standing contract (another seat's
        highest bid) is expected to be made: then it costs this seat as a defender, and
        a contract worth a little less than nothing may still be the better choice. An
        expected failure of the standing contract does not make passing worth more: a
        failed declarer pays every defender alike, which moves none of them ahead of
        another, while a contract of this seat's own moves it ahead of all of them.
        """
        self.last_chance = None
        profile = self._profile(view)
        contracts = [
            profile.contract(action.name)
            for action in view.legal_actions
            if isinstance(action, Bid) and action is not PASS and profile.has(action.name)
        ]
        if not contracts:
            return PASS
        standing = _standing_bid(view, profile)
        estimate = self.estimate(
            view,
            [c.tricks for c in contracts if not c.misere],
            misere=any(c.misere for c in contracts),
            standing=standing,
        )
        if estimate is None:
            return PASS
        opponents = len(view.seats_in_play) - 1
        value = 0.0
        if standing is not None and estimate.standing is not None:
            seat, contract = standing
            chance = self._record(seat, self.calibrated(estimate.standing))
            value = min(0.0, (1 - chance) * contract.lose - chance * contract.win)
        choice = PASS
        for contract in contracts:
            raw = estimate.chances["misere" if contract.misere else str(contract.tricks)]
            chance = self.calibrated(raw)
            worth = opponents * (chance * contract.win - (1 - chance) * contract.lose)
            if worth > value:
                choice, value, self.last_chance = Bid(contract.name), worth, raw
        return choice

    def on_event(self, event: object) -> None:
        """Keep each seat's record as declarer in this session; at its end, say if the cap bit.

        A decision the cap cut short depended on the machine: the bot's log says how many,
        so that a measurement can tell (it should see none).
        """
        if isinstance(event, DealSettled) and event.declarer is not None and event.made is not None:
            declared, made = self._declared.get(event.declarer, (0, 0))
            self._declared[event.declarer] = (declared + 1, made + event.made)
        elif isinstance(event, SessionOver) and self.capped:
            print(  # noqa: T201 - to the bot's log
                f"pimc: the time cap cut {self.capped} decision{'s' if self.capped > 1 else ''} short "
                f"at table {self.table}, seat {self.seat} (--seconds {self.budget.seconds}): they depended "
                "on the machine",
                file=sys.stderr,
                flush=True,
            )

    def _record(self, seat: int, chance: float) -> float:
        """``chance`` that ``seat`` makes a contract, revised by its record as declarer so far.

        The estimate counts as ``_PRIOR_DEALS`` deals' worth of evidence: a seat that bids
        and fails deal after deal (a random bot, say) is soon trusted to fail again.
        """
        declared, made = self._declared.get(seat, (0, 0))
        return (_PRIOR_DEALS * chance + made) / (_PRIOR_DEALS + declared)

    def calibrated(self, chance: float) -> float:
        """A double-dummy chance of making a contract, made honest: less ``caution``, within [0, 1]."""
        return min(1.0, max(0.0, chance - self.caution))

    def chances(self, view: SeatView, targets: Sequence[int], *, misere: bool) -> dict[str, float] | None:
        """The chances, as declarer with the best first lead, of each contract (None: no sample solved).

        Keys ``"3"``, ``"5"``...: taking at least that many tricks (the lead chooses
        trump); ``"misere"`` (when asked): taking none.
        """
        estimate = self.estimate(view, targets, misere=misere, standing=None)
        return None if estimate is None else estimate.chances

    def estimate(
        self,
        view: SeatView,
        targets: Sequence[int],
        *,
        misere: bool,
        standing: tuple[int, Contract] | None,
    ) -> _Estimate | None:
        """Double-dummy chances over weighted samples of the other hands (None: no sample solved).

        ``chances`` as in :meth:`chances`; ``standing`` the chance that ``standing``'s
        seat makes its contract if this seat passes (None when not asked).
        """
        clock = self._clock()
        rng = self._random()
        profile = self._profile(view)
        knowledge = Knowledge.of(view, pack=profile.pack)
        order = deal_order(view.dealer, view.seats_in_play, view.table_size)
        targets = sorted(set(targets))
        keys = [str(t) for t in targets] + (["misere"] if misere else [])
        sums = dict.fromkeys(keys, 0.0)
        standing_sum = 0.0
        total = 0.0
        mine = mask_of(_hand_to_declare(view, profile))
        capped = False
        for number in range(self.budget.samples):
            if number >= self.budget.min_samples and clock.left() <= 0:
                capped = True
                break
            sample = knowledge.sample(rng)
            weight = bid_weight(view, sample, pack_size=profile.pack_size)
            hands = {seat: mask_of(cards) for seat, cards in sample.items()}
            hands[view.seat] = mine
            try:
                made, theirs = self._solve_opening(
                    view,
                    order,
                    hands,
                    targets,
                    misere=misere,
                    standing=standing,
                    limit=self.budget.nodes,
                    deadline=clock.deadline(),
                )
            except SearchAbortedError:
                capped = capped or clock.left() <= 0
                continue
            for key in made:
                sums[key] += weight
            standing_sum += weight * theirs
            total += weight
        self.capped += capped
        if not total:
            return None
        return _Estimate(
            chances={key: value / total for key, value in sums.items()},
            standing=None if standing is None else standing_sum / total,
        )

    @staticmethod
    def _solve_opening(  # noqa: PLR0913 - one sample's questions, asked of one set of hands
        view: SeatView,
        order: Sequence[int],
        hands: dict[int, int],
        targets: Sequence[int],
        *,
        misere: bool,
        standing: tuple[int, Contract] | None,
        limit: int,
        deadline: Deadline | None,
    ) -> tuple[list[str], bool]:
        """On one sample: the contracts this seat would make as declarer, and the standing one's fate.

        The second item says whether the standing contract's seat would make it (False
        when there is none). The sample's solves share ``limit`` nodes (each solver gets
        what the ones before it left) and stop at ``deadline``, so one sample never
        searches longer than the time left allows: a whole deal searched from its first
        lead grows fast with the tricks and the seats (seven cards at seven seats: about
        1.7 million nodes, 14 s, for a misère).
        """
        made: list[str] = []
        left = limit
        if targets:
            solver = Solver(
                Position.opening(order, hands, declarer=view.seat, target=targets[0], misere=False),
                node_limit=left,
                deadline=deadline,
            )
            for target in targets:
                if not solver.reaches(target):
                    break
                made.append(str(target))
            left -= solver.nodes
        if misere:
            solver = Solver(
                Position.opening(order, hands, declarer=view.seat, target=0, misere=True),
                node_limit=left,
                deadline=deadline,
            )
            if solver.can_make():
                made.append("misere")
            left -= solver.nodes
        theirs = False
        if standing is not None:
            seat, contract = standing
            theirs = Solver(
                Position.opening(order, hands, declarer=seat, target=contract.tricks, misere=contract.misere),
                node_limit=left,
                deadline=deadline,
            ).can_make()
        return made, theirs


@dataclass(frozen=True, slots=True)
class _Estimate:
    chances: dict[str, float]
    standing: float | None


def _standing_bid(view: SeatView, profile: Profile) -> tuple[int, Contract] | None:
    """The highest bid so far and its seat, None when all have passed."""
    best: tuple[int, Contract] | None = None
    for seat, bid in view.bids:
        if bid is not PASS and profile.has(bid.name):
            best = (seat, profile.contract(bid.name))
    return best


def _hand_to_declare(view: SeatView, profile: Profile) -> tuple[Card, ...]:
    """The hand this seat would declare with: its own, or with the widow it saw swapped in as Peel would."""
    widow = view.widow
    if widow is None or view.widow_taken is not None:
        return view.hand
    _, given = peel_pool.widow_worth(view, profile, widow)
    if given is None:
        return view.hand
    return tuple(widow if card == given else card for card in view.hand)


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
