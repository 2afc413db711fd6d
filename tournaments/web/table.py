"""What ``nap play``'s page is sent: one seat's table, built only from what that seat is told (pure).

A :class:`SeatTable` follows one table as one seat sees it: each decision request's
:class:`~referee.rules.SeatView` (:meth:`SeatTable.see`, which replaces everything: the
view is the referee's word) and each event told to the seat between requests
(:meth:`SeatTable.tell`: a :class:`~referee.rules.SeatEvent` with the seat's own hand on a
new deal, or a :class:`~referee.match.SeatPenalized`). :meth:`SeatTable.snapshot` is the
JSON the page renders. Nothing else goes in: no deal, no other hand, no seed; so the page
can show no card the seat may not see (``tests/test_play_table.py`` and the browser test
check it). The seats' names come from the seating, which is public.

Cards travel as their text (``"QH"``, ``"10S"``), actions as the referee spells them
(``"three"``, ``"exchange:2C,9H"``, ``"widow:QH"``), each with a label for its button.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from referee.match import SeatPenalized
from referee.rules import (
    PEEP,
    AllPassed,
    AuctionWon,
    Bid,
    BidMade,
    Card,
    CardPlayed,
    CardsExchanged,
    ChipsPaid,
    DealSettled,
    DealStarted,
    Exchange,
    FaultPolicy,
    Penalized,
    PoolClaimed,
    PoolReturned,
    SeatEliminated,
    SeatEvent,
    SeatRebought,
    SessionOver,
    TakeWidow,
    TrickWon,
    TrumpChosen,
    WidowPeeked,
    WidowTaken,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules import Action, Profile, SeatView, Suit

__all__ = ["Decision", "SeatTable", "action_entry", "cards_in", "policy_note", "seat_names"]

LOG_LINES: Final = 40
"""Lines of the table's log kept for the page (the newest last)."""


def policy_note(policy: FaultPolicy, *, decision_ms: int, fault_limit: int) -> str:
    """What happens at the deadline, in the page's words: the same fault policy as for bots."""
    seconds = f"{decision_ms / 1000:g} s"
    if policy is FaultPolicy.REVOKE:
        what = (
            "the deal stops and settles as a revoke (a declarer fails its contract; "
            "a defender alone pays the declarer as for a made contract)"
        )
    else:
        what = "the referee plays for you: pass or decline where you may, else your lowest legal card"
    limit = f"; after {fault_limit} faults in a session it plays for you to the end" if fault_limit else ""
    return f"You have {seconds} per decision. At the deadline it is a fault, as for any bot: {what}{limit}."


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision the seat is asked: the request's id, its view and its clock (ms from when it came)."""

    request_id: int
    view: SeatView
    deadline_ms: int
    texts: tuple[str, ...]
    """The legal actions as the referee spelled them (an answer is one of these)."""


def action_entry(text: str, action: Action, profile: Profile | None) -> dict[str, Any]:  # noqa: PLR0911 - one return per kind
    """One legal action as the page offers it: its text, kind, cards and label."""
    if isinstance(action, Card):
        return {"action": text, "kind": "card", "cards": [action.text], "label": _card_label(action)}
    if isinstance(action, Bid):
        return {"action": text, "kind": "bid", "cards": [], "label": _bid_label(action, profile)}
    if isinstance(action, Exchange):
        cards = [card.text for card in action.cards]
        label = f"Exchange {', '.join(_card_label(c) for c in action.cards)}" if cards else "Keep my hand"
        return {"action": text, "kind": "exchange", "cards": cards, "label": label}
    if action is PEEP:
        return {"action": text, "kind": "peep", "cards": [], "label": "Peep at the widow"}
    if isinstance(action, TakeWidow):
        if action.card is None:
            return {"action": text, "kind": "widow", "cards": [], "label": "Leave the widow"}
        label = f"Give {_card_label(action.card)} for the widow"
        return {"action": text, "kind": "widow", "cards": [action.card.text], "label": label}
    return {"action": text, "kind": "other", "cards": [], "label": text}


def _card_label(card: Card) -> str:
    return f"{card.text[:-1]}{card.suit.symbol}"


def _bid_label(bid: Bid, profile: Profile | None) -> str:
    if bid.is_pass:
        return "Pass"
    if profile is not None and profile.has(bid.name):
        return profile.contract(bid.name).label
    return bid.name.capitalize()


def _suit(suit: Suit | None) -> str | None:
    return None if suit is None else suit.letter


@dataclass(slots=True)
class SeatTable:
    """One table as ``seat`` sees it, folded from its views and the events it is told.

    ``names`` are the seats' players (the seating, public); ``rules`` the profile the
    referee announced (for the contracts' labels), None if it announced none.
    """

    seat: int
    names: tuple[str, ...]
    rules: Profile | None = None
    session: int = 1
    sessions: int = 1
    deal: int = 0
    deals: int = 0
    dealer: int | None = None
    in_play: tuple[int, ...] = ()
    phase: str = "waiting"
    hand: list[Card] = field(default_factory=list)
    bids: list[tuple[int, str]] = field(default_factory=list)
    declarer: int | None = None
    contract: str | None = None
    trump: str | None = None
    trick: list[tuple[int, Card]] = field(default_factory=list)
    played: int = 0
    """Cards played so far in this deal (where the deal stands, for the page and its tests)."""
    last_trick: TrickWon | None = None
    tricks_won: list[int] = field(default_factory=list)
    balances: list[int] = field(default_factory=list)
    pool: int = 0
    exchanged: list[int] = field(default_factory=list)
    peeked: list[int] = field(default_factory=list)
    widow: Card | None = None
    settled: dict[str, Any] | None = None
    """The last deal's settlement (shown until the next one)."""
    over: dict[str, Any] | None = None
    log: list[str] = field(default_factory=list)
    decision: Decision | None = None

    def __post_init__(self) -> None:
        size = len(self.names)
        self.tricks_won = self.tricks_won or [0] * size
        self.balances = self.balances or [0] * size
        self.exchanged = self.exchanged or [0] * size
        if self.rules is not None and not self.deals:
            self.deals = self.rules.deals_per_session

    # -- what comes in --------------------------------------------------------------

    def see(self, decision: Decision) -> None:
        """A decision request: its view replaces what the table knew; the seat is to act."""
        view = decision.view
        self.deal, self.deals, self.dealer = view.deal_number, view.deals_in_session, view.dealer
        self.in_play = view.seats_in_play
        self.phase = view.phase.value
        self.hand = list(view.hand)
        self.bids = [(seat, bid.name) for seat, bid in view.bids]
        self.declarer, self.contract, self.trump = view.declarer, view.contract, _suit(view.trump)
        self.trick = list(view.trick)
        self.played = sum(len(trick.plays) for trick in view.tricks) + len(view.trick)
        self.last_trick = view.tricks[-1] if view.tricks else None
        self.tricks_won = list(view.tricks_won)
        self.balances = list(view.balances)
        self.pool = view.pool
        self.exchanged = list(view.exchanged)
        self.peeked = list(view.peeked)
        self.widow = view.widow
        self.decision = decision

    def answered(self) -> None:
        """The seat answered (or its clock ran out): no decision is pending."""
        self.decision = None

    def tell(self, told: SeatEvent | SeatPenalized) -> None:  # noqa: C901 - one branch per event kind
        """An event told to the seat: the table moves on, and the log says what happened."""
        if isinstance(told, SeatPenalized):
            self._penalized(told)
            return
        event = told.event
        if isinstance(event, DealStarted):
            self._deal_started(event, told.hand)
        elif isinstance(event, BidMade):
            self.bids.append((event.seat, event.bid.name))
            self._say(f"{self._who(event.seat)}: {_bid_label(event.bid, self.rules)}")
        elif isinstance(event, AuctionWon):
            self.declarer, self.contract = event.declarer, event.contract
            self.phase = "widow" if self.rules is not None and self.rules.widow else "play"
            self._say(f"{self._does(event.declarer, 'declares')} {self._contract_label(event.contract)}")
        elif isinstance(event, AllPassed):
            self.phase = "over"
            self._say("Everyone passed: the deal scores zero")
        elif isinstance(event, CardPlayed):
            self._card_played(event)
        elif isinstance(event, TrumpChosen):
            self.trump = event.suit.letter
            self._say(f"Trump: {event.suit.symbol} {event.suit.name.lower()}")
        elif isinstance(event, TrickWon):
            self.trick = []
            self.last_trick = event
            self.tricks_won[event.winner] += 1
            self._say(f"Trick {event.number + 1} to {self._who(event.winner)}")
        elif isinstance(event, DealSettled):
            self._deal_settled(event, told)
        elif isinstance(event, SessionOver):
            self.phase = "session-over"
            self.balances = list(event.balances)
            self.over = {"balances": list(event.balances), "winners": list(event.winners)}
            winners = ", ".join(self._who(seat) for seat in event.winners)
            self._say(f"Session over: {winners} {'wins' if len(event.winners) == 1 else 'win'}")
        else:
            self._pool_event(event)

    def _deal_started(self, event: DealStarted, hand: tuple[Card, ...]) -> None:
        self.deal, self.dealer, self.in_play = event.deal, event.dealer, event.seats
        self.hand = list(hand)
        self.bids, self.trick, self.played = [], [], 0
        self.declarer = self.contract = self.trump = None
        self.last_trick = None
        self.tricks_won = [0] * len(self.names)
        self.exchanged = [0] * len(self.names)
        self.peeked, self.widow = [], None
        self.phase = "exchange" if self.rules is not None and self.rules.exchange_max else "bidding"
        self._say(f"Deal {event.deal + 1}: {self._does(event.dealer, 'deals')}")

    def _card_played(self, event: CardPlayed) -> None:
        self.phase = "play"
        self.trick.append((event.seat, event.card))
        self.played += 1
        if event.seat == self.seat and event.card in self.hand:
            self.hand.remove(event.card)
        self._say(f"{self._does(event.seat, 'plays')} {_card_label(event.card)}")

    def _deal_settled(self, event: DealSettled, told: SeatEvent) -> None:
        self.phase = "over"
        if told.balances:
            self.balances = list(told.balances)
        self.settled = {
            "deal": self.deal,
            "declarer": event.declarer,
            "contract": None if event.contract is None else self._contract_label(event.contract),
            "tricks": event.tricks,
            "made": event.made,
            "payments": list(event.payments),
            "faulting_seat": told.faulting_seat,
        }
        if event.declarer is None or event.contract is None:
            self._say("Deal settled: no contract, no chips")
            return
        verdict = "made" if event.made else "failed"
        paid = ", ".join(f"{self._who(s)} {p:+d}" for s, p in enumerate(event.payments) if p)
        self._say(
            f"{self._who(event.declarer)} {verdict} {self._contract_label(event.contract)} "
            f"with {event.tricks} tricks: {paid}"
        )

    def _pool_event(self, event: object) -> None:  # noqa: C901 - one branch per event kind
        if isinstance(event, CardsExchanged):
            self.exchanged[event.seat] = event.count
            what = f"exchanges {event.count}" if event.count else "keeps its hand"
            if event.seat == self.seat:
                what = f"exchange {event.count}" if event.count else "keep your hand"
            self._say(f"{self._who(event.seat)} {what}")
        elif isinstance(event, ChipsPaid):
            self.pool += event.amount
            self.balances[event.seat] -= event.amount
            self._say(f"{self._does(event.seat, 'pays')} {event.amount} into the pool")
        elif isinstance(event, WidowPeeked):
            self.peeked.append(event.seat)
            self._say(f"{self._does(event.seat, 'peeps')} at the widow")
        elif isinstance(event, WidowTaken):
            self.phase = "play"
            self._say(f"{self._does(event.seat, 'takes' if event.taken else 'leaves')} the widow")
        elif isinstance(event, PoolClaimed):
            self.pool -= event.amount
            self.balances[event.seat] += event.amount
            self._say(f"{self._does(event.seat, 'takes')} the pool: {event.amount}")
        elif isinstance(event, PoolReturned):
            self.pool = 0
            self._say("The pool goes back to those who paid in")
        elif isinstance(event, SeatEliminated):
            self._say(f"{self._does(event.seat, 'is')} out of chips")
        elif isinstance(event, SeatRebought):
            self._say(f"{self._does(event.seat, 'stakes')} {event.chips} chips again")
        elif isinstance(event, Penalized):
            self._say(f"{self._does(event.seat, 'is')} penalized")

    def _penalized(self, told: SeatPenalized) -> None:
        mine = told.seat == self.seat
        who = "Your" if mine else f"{self._who(told.seat)}'s"
        if told.substitute is None:
            self._say(f"{who} fault ({told.fault.value}): the deal stops and settles as a revoke")
        else:
            self._say(f"{who} fault ({told.fault.value}): the referee played {told.substitute} instead")
        if mine:
            self.decision = None

    # -- what goes out --------------------------------------------------------------

    def snapshot(self, *, remaining_ms: int | None = None) -> dict[str, Any]:
        """The page's whole table: JSON-ready, built from this seat's views and events only.

        ``remaining_ms`` is what is left of the pending decision's clock (None: its full clock).
        """
        decision = self.decision
        return {
            "type": "table",
            "seat": self.seat,
            "names": list(self.names),
            "session": self.session,
            "sessions": self.sessions,
            "deal": self.deal,
            "deals": self.deals,
            "dealer": self.dealer,
            "in_play": list(self.in_play),
            "phase": self.phase,
            "hand": [card.text for card in self.hand],
            "bids": [[seat, _bid_label(Bid(name), self.rules)] for seat, name in self.bids],
            "declarer": self.declarer,
            "contract": None if self.contract is None else self._contract_label(self.contract),
            "trump": self.trump,
            "trick": [[seat, card.text] for seat, card in self.trick],
            "played": self.played,
            "last_trick": None
            if self.last_trick is None
            else {
                "number": self.last_trick.number,
                "winner": self.last_trick.winner,
                "plays": [[seat, card.text] for seat, card in self.last_trick.plays],
            },
            "tricks_won": list(self.tricks_won),
            "balances": list(self.balances),
            "pool": self.pool,
            "has_pool": self.rules is not None and self.rules.has_pool,
            "exchanged": list(self.exchanged),
            "peeked": list(self.peeked),
            "widow": None if self.widow is None else self.widow.text,
            "settled": self.settled,
            "over": self.over,
            "log": list(self.log),
            "decision": None if decision is None else self._decision(decision, remaining_ms),
        }

    def _decision(self, decision: Decision, remaining_ms: int | None) -> dict[str, Any]:
        actions = decision.view.legal_actions
        return {
            "request": decision.request_id,
            "phase": decision.view.phase.value,
            "deadline_ms": decision.deadline_ms,
            "remaining_ms": decision.deadline_ms if remaining_ms is None else max(0, remaining_ms),
            "actions": [
                action_entry(text, action, self.rules)
                for text, action in zip(decision.texts, actions, strict=True)
            ],
        }

    # -- words ----------------------------------------------------------------------

    def _does(self, seat: int, verb: str) -> str:
        """``seat`` and ``verb`` as a sentence starts: "peel plays", "You play", "You are"."""
        if seat != self.seat:
            return f"{self.names[seat]} {verb}"
        return f"You {'are' if verb == 'is' else verb.removesuffix('s')}"

    def _who(self, seat: int) -> str:
        return "You" if seat == self.seat else self.names[seat]

    def _contract_label(self, name: str) -> str:
        if self.rules is not None and self.rules.has(name):
            return self.rules.contract(name).label
        return name.capitalize()

    def _say(self, line: str) -> None:
        self.log.append(line)
        del self.log[:-LOG_LINES]


def cards_in(snapshot: dict[str, Any]) -> set[str]:
    """Every card text a snapshot holds (what the hidden-information tests compare)."""
    found: set[str] = set(snapshot["hand"])
    found.update(card for _, card in snapshot["trick"])
    if snapshot["last_trick"] is not None:
        found.update(card for _, card in snapshot["last_trick"]["plays"])
    if snapshot["widow"] is not None:
        found.add(snapshot["widow"])
    decision = snapshot["decision"]
    if decision is not None:
        for entry in decision["actions"]:
            found.update(entry["cards"])
    return found


def seat_names(seating: Sequence[str], seat: int, person: str) -> tuple[str, ...]:
    """The seats' names as the page shows them: the person's own seat named ``person``."""
    return tuple(person if index == seat else name for index, name in enumerate(seating))
