"""Showing a session to a person: the text of ``nap log show SESSION [--seat N]``.

Everything shown comes from replaying the session record through the rules engine, one
action at a time (:func:`walk`), and reading the seats' views (:func:`referee.rules.seat_view`)
after each step. With ``seat`` given, the text is built from that seat's views only, so it
never holds another seat's unplayed cards nor the undealt stock; the table's text joins
every seat's view. This module is pure: it returns text and the CLI prints it.

In the pool variants a deal also shows its exchanges (each seat's count and fee; the
cards given up and drawn for the table, and for a seat its own), the peeps, the
declarer's widow (the card for the table, the declarer and the seats that peeped) and
the pool after the deal, claimed by a Nap or returned at the session's end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.rules import (
    Bid,
    Card,
    ChipsPaid,
    DealSettled,
    DealStarted,
    Exchange,
    Peep,
    Penalty,
    PoolClaimed,
    PoolReturned,
    SeatEliminated,
    SeatRebought,
    Session,
    SessionOver,
    TakeWidow,
    fresh_session,
    replay,
    seat_view,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from referee.rules import Action, Event, Profile, SeatView, SessionRecord


@dataclass(frozen=True, slots=True)
class Step:
    """One moment of a replayed session: a deal as dealt, or just after one of its actions.

    ``index`` is the action's position in the deal's record (-1 for the deal as dealt);
    ``seat`` is the seat that acted (for a penalty, the seat that faulted). ``views`` holds
    every seat's view of this deal after the step, seat 0 first; ``hands`` is the table's
    state, every seat's unplayed cards (empty for seats out of play), and ``widow`` the
    deal's widow card (None without one), both for showing the whole table only.
    ``balances`` are the session's net chips after the step, ``pool`` the chips in the pool.
    """

    deal: int
    index: int
    seat: int | None
    action: Action | None
    events: tuple[Event, ...]
    views: tuple[SeatView, ...]
    hands: tuple[tuple[Card, ...], ...]
    balances: tuple[int, ...]
    widow: Card | None = None
    pool: int = 0

    @property
    def actor(self) -> int:
        """The seat that acted: every step but the deal as dealt has one."""
        if self.seat is None:
            msg = f"deal {self.deal} as dealt: no seat acted"
            raise ValueError(msg)
        return self.seat


def walk(record: SessionRecord) -> Iterator[Step]:
    """Replay ``record`` through the engine and yield every step of every deal, in order.

    The record is first checked with :func:`referee.rules.replay`, so a record that does not
    replay raises :class:`referee.rules.RecordError` saying where, before anything is yielded.
    """
    replay(record)
    session = fresh_session(record)
    for number, deal_record in enumerate(record.deals):
        deal = session.deals[number]

        opening = session.opening if number == 0 else (DealStarted(number, deal.dealer, deal.seats),)
        yield _step(session, number, None, None, opening)
        for action in deal_record.actions:
            seat = action.seat if isinstance(action, Penalty) else deal.to_act
            events = session.apply(action)
            yield _step(session, number, seat, action, events)


def _step(
    session: Session, number: int, seat: int | None, action: Action | None, events: tuple[Event, ...]
) -> Step:
    """The step just reached in deal ``number`` of ``session`` (which may have moved on)."""
    deal = session.deals[number]
    index = len(deal.actions) - 1
    balances = tuple(session.balances)
    pool = session.pool
    views = tuple(
        seat_view(
            deal,
            s,
            deal_number=number,
            deals_in_session=session.deals_in_session,
            balances=balances,
            pool=pool,
        )
        for s in range(session.table_size)
    )
    hands = tuple(tuple(hand) for hand in deal.hands)
    return Step(number, index, seat, action, events, views, hands, balances, deal.widow, pool)


def bot_names(bots: Sequence[Mapping[str, object]], table_size: int) -> list[str]:
    """The bot at each seat from a log's ``bots`` list (``[{"seat": 0, "bot": "greedy"}, ...]``)."""
    names = [f"seat {seat}" for seat in range(table_size)]
    for entry in bots:
        names[int(str(entry["seat"]))] = str(entry["bot"])
    return names


def pretty(cards: Sequence[Card]) -> str:
    """Cards for people: ``Q♥ 10♠``."""
    return " ".join(card.pretty for card in cards)


def signed(amount: int) -> str:
    """Chips with their sign: ``+9``, ``-3``, ``0``."""
    return f"{amount:+d}" if amount else "0"


def contract_label(profile: Profile, name: str | None) -> str:
    """A contract's label as the profile writes it (``Nap``), or ``-`` when nobody declared."""
    return "-" if name is None else profile.contract(name).label


def bid_label(profile: Profile, bid: Bid) -> str:
    """A bid for people: ``pass`` or the contract's label (``Misère``)."""
    return "pass" if bid.is_pass else contract_label(profile, bid.name)


def paid(events: Sequence[Event]) -> int:
    """The chips paid into the pool by a step's events."""
    return sum(event.amount for event in events if isinstance(event, ChipsPaid))


def exchange_words(count: int, fee: int) -> str:
    """An exchange for people, public part only: ``exchanges 3 cards (pays 1)``, ``declines the exchange``."""
    if not count:
        return "declines the exchange"
    cards = "card" if count == 1 else "cards"
    return f"exchanges {count} {cards} (pays {fee})"


def decision_note(decision: Mapping[str, object] | None) -> str:
    """How long the bot took, the CPU it was charged, its fault: `` (0.8 ms, CPU 0.5 ms)``.

    The CPU appears where the bot was on the CPU clock (the log's ``cpu_ms``).
    """
    if decision is None:
        return ""
    latency = decision.get("latency_ms")
    parts = [f"{float(str(latency)):.1f} ms"] if latency is not None else []
    cpu = decision.get("cpu_ms")
    if cpu is not None:
        parts.append(f"CPU {float(str(cpu)):.1f} ms")
    fault = decision.get("fault")
    if fault:
        parts.append(f"fault: {fault}")
    return f" ({', '.join(parts)})" if parts else ""


def render_session(
    record: SessionRecord,
    *,
    bots: Sequence[str],
    seat: int | None = None,
    decisions: Sequence[Sequence[Mapping[str, object]]] | None = None,
) -> str:
    """The session as text: per deal the hands, bids, contract, tricks and settlement.

    ``bots`` names the bot at each seat. With ``seat``, only that seat's hand is shown and
    every line comes from that seat's views. ``decisions`` (a log's ``decisions``: per deal,
    one entry per action with ``latency_ms``) adds each action's decision time.
    """
    if len(bots) != record.table_size:
        msg = f"{len(bots)} bot names for a table of {record.table_size}"
        raise ValueError(msg)
    if seat is not None and not 0 <= seat < record.table_size:
        msg = f"no seat {seat} at a table of {record.table_size}"
        raise ValueError(msg)
    text = _Text(record.profile, bots)
    text.header(record, seat)
    by_deal: dict[int, list[Step]] = {}
    winners: tuple[int, ...] = ()
    for step in walk(record):
        by_deal.setdefault(step.deal, []).append(step)
        winners = next((e.winners for e in step.events if isinstance(e, SessionOver)), winners)
    for number, steps in by_deal.items():
        deal_decisions = decisions[number] if decisions is not None and number < len(decisions) else ()
        text.deal(steps, seat, deal_decisions, tie_break=number >= record.profile.deals_per_session)
    last = by_deal[max(by_deal)][-1] if by_deal else None
    text.footer(last.balances if last else (0,) * record.table_size, winners)
    return "\n".join(text.lines) + "\n"


class _Text:
    """Lines of the text, added deal by deal."""

    def __init__(self, profile: Profile, bots: Sequence[str]) -> None:
        self.profile = profile
        self.bots = bots
        self.lines: list[str] = []

    def who(self, seat: int) -> str:
        return f"seat {seat} ({self.bots[seat]})"

    def per_seat(self, amounts: Sequence[int], seats: Sequence[int]) -> str:
        return " | ".join(f"seat {s} {signed(amounts[s])}" for s in seats)

    def header(self, record: SessionRecord, seat: int | None) -> None:
        self.lines += [
            (
                f"Nap session: {record.profile.name}, {record.table_size} seats, "
                f"seed {record.seed}, {len(record.deals)} deals"
            ),
            "Seats: " + " | ".join(f"{s} {name}" for s, name in enumerate(self.bots)),
            "Shown: the table (every hand)"
            if seat is None
            else f"Shown: as {self.who(seat)} saw it (its own hand only)",
        ]

    def deal(
        self,
        steps: Sequence[Step],
        seat: int | None,
        decisions: Sequence[Mapping[str, object]],
        *,
        tie_break: bool,
    ) -> None:
        first, last = steps[0], steps[-1]
        start = first.views[0]
        seats = start.seats_in_play
        shown = seats if seat is None else (seat,)

        def note(index: int) -> str:
            return decision_note(decisions[index] if index < len(decisions) else None)

        extra = " (tie-break)" if tie_break else ""
        self.lines += ["", f"Deal {first.deal + 1}{extra}: dealer {self.who(start.dealer)}"]
        self.hands(first, shown)
        exchanges = [step for step in steps if isinstance(step.action, Exchange)]
        if exchanges:
            self.lines.append("  Exchanges:")
            self.lines += [
                f"    {self.exchange(step, step.action, seat)}{note(step.index)}"
                for step in exchanges
                if isinstance(step.action, Exchange)
            ]
        end = last.views[seat if seat is not None else seats[0]]
        calls = ", ".join(
            f"{self.call(step, seat)}{note(step.index)}"
            for step in steps
            if isinstance(step.action, (Bid, Peep))
        )
        self.lines.append(f"  Bids: {calls}")
        for step in steps:
            if isinstance(step.action, TakeWidow):
                self.lines.append(f"  Widow: {self.widow(step, step.action, seat)}{note(step.index)}")
        if end.declarer is None:
            self.lines.append("  All passed: the deal scores zero.")
        else:
            trump = end.trump.symbol if end.trump is not None else "none"
            label = contract_label(self.profile, end.contract)
            self.lines.append(f"  Contract: {self.who(end.declarer)} declares {label}, trump {trump}")
            first_card = next((step.index for step in steps if isinstance(step.action, Card)), len(end.bids))
            self.tricks(end, first_card, note)
        for step in steps:
            self.events(step, seats, note)
        if self.profile.has_pool:
            self.lines.append(f"  Pool: {last.pool} chips")

    def hands(self, first: Step, shown: Sequence[int]) -> None:
        """The hands as dealt (those of ``shown``; the others as counts), and the widow for the table."""
        self.lines.append("  Hands:")
        seats = first.views[0].seats_in_play
        width = max(len(self.who(s)) for s in range(len(self.bots)))
        for s in seats:
            hand = pretty(first.views[s].hand) if s in shown else f"{len(first.views[s].hand)} cards, hidden"
            self.lines.append(f"    {self.who(s):<{width}}  {hand}")
        out = [s for s in range(len(self.bots)) if s not in seats]
        if out:
            self.lines.append("    out of play: " + ", ".join(self.who(s) for s in out))
        if len(shown) > 1 and first.widow is not None:
            self.lines.append(f"  Widow (face down): {first.widow.pretty}")

    def exchange(self, step: Step, action: Exchange, seat: int | None) -> str:
        """One seat's exchange: how many cards and the fee for all; which cards for the table and itself."""
        actor = step.actor
        count = len(action.cards)
        text = f"{self.who(actor)} {exchange_words(count, paid(step.events))}"
        if count and seat in (None, actor):
            view = step.views[actor]
            text += f": gives up {pretty(view.discarded[:count])}, draws {pretty(view.drawn)}"
        return text

    def call(self, step: Step, seat: int | None) -> str:
        """A bid, or a peep at the widow (with the card, for the seat that peeped)."""
        actor = step.actor
        if isinstance(step.action, Bid):
            return f"seat {actor} {bid_label(self.profile, step.action)}"
        text = f"seat {actor} peeps at the widow (pays {paid(step.events)})"
        widow = step.views[actor].widow
        if seat == actor and widow is not None:
            text += f": {widow.pretty}"
        return text

    def widow(self, step: Step, action: TakeWidow, seat: int | None) -> str:
        """The declarer's widow decision; the cards only where the shown seat may see them."""
        actor = step.actor
        given = action.card
        if given is None:
            return f"{self.who(actor)} leaves the widow"
        text = f"{self.who(actor)} takes the widow"
        widow = step.widow if seat is None else step.views[seat].widow
        if widow is not None:
            text += f" ({widow.pretty})"
        if seat in (None, actor):
            text += f", gives up {given.pretty}"
        return text

    def tricks(self, view: SeatView, first_index: int, note: Callable[[int], str]) -> None:
        index = first_index
        self.lines.append("  Tricks:")

        def plays(cards: Sequence[tuple[int, Card]], first: int) -> str:
            return ", ".join(f"seat {s} {card.pretty}{note(first + i)}" for i, (s, card) in enumerate(cards))

        for trick in view.tricks:
            self.lines.append(f"    {trick.number + 1}. {plays(trick.plays, index)} -> seat {trick.winner}")
            index += len(trick.plays)
        if view.trick:
            self.lines.append(f"    {len(view.tricks) + 1}. {plays(view.trick, index)} (unfinished)")

    def events(self, step: Step, seats: Sequence[int], note: Callable[[int], str]) -> None:
        if isinstance(step.action, Penalty):
            self.lines.append(f"  Penalty: {self.who(step.action.seat)} faulted{note(step.index)}")
        for event in step.events:
            if isinstance(event, DealSettled):
                self.lines.append(f"  Result: {self.result(event)}")
                self.lines.append(f"  Payments: {self.per_seat(event.payments, seats)}")
                self.lines.append(f"  Balances: {self.per_seat(step.balances, range(len(self.bots)))}")
            elif isinstance(event, SeatEliminated):
                self.lines.append(f"  {self.who(event.seat)} is out of chips and leaves the session")
            elif isinstance(event, SeatRebought):
                self.lines.append(f"  {self.who(event.seat)} buys in again for {event.chips}")
            elif isinstance(event, PoolClaimed):
                self.lines.append(f"  {self.who(event.seat)} takes the pool: {event.amount} chips")
            elif isinstance(event, PoolReturned):
                refunds = self.per_seat(event.refunds, [s for s, r in enumerate(event.refunds) if r])
                self.lines.append(f"  The pool goes back to those who paid it in: {refunds}")

    def result(self, settled: DealSettled) -> str:
        if settled.declarer is None:
            return "no contract"
        label = contract_label(self.profile, settled.contract)
        outcome = "made" if settled.made else "failed"
        tricks = "trick" if settled.tricks == 1 else "tricks"
        return f"{label} {outcome}, declarer took {settled.tricks} {tricks}"

    def footer(self, balances: Sequence[int], winners: Sequence[int]) -> None:
        shown = " | ".join(f"{self.who(s)} {signed(b)}" for s, b in enumerate(balances))
        names = ", ".join(self.who(s) for s in winners) or "none yet (the session is unfinished)"
        self.lines += ["", f"Final balances: {shown}", f"Winners: {names}"]
