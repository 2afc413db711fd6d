"""The replay page of ``nap log html SESSION``: one self-contained HTML file.

The page embeds, as JSON, every step of the session (each deal as dealt, then after each
action), built here in Python by replaying the record through the rules engine
(:func:`tournaments.report.session_text.walk`). A step holds the table's state (every seat's unplayed
cards), each seat's own part of its view (its hand and legal actions; never another seat's
cards) and the public part that every seat's view shares. The page's script only draws
that data: it never works out a rule. The HTML, CSS and script are ``replay.html``,
``replay.css`` and ``replay.js`` in :mod:`tournaments.report.templates`; nothing is loaded from the
network.

The page also carries the session's faults (:func:`fault_markers`), marked on the steps
their decisions led to, and links for its header (back to the standings, when published
with them). The page reads its starting point from the URL hash, ``#view=seat1&deal=0&step=5``
(``view=table`` for every hand; ``step`` 0 is the deal as dealt), and keeps the hash up to
date, so a link shows a given moment to a given seat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from referee.rules import (
    AllPassed,
    AuctionWon,
    Card,
    DealSettled,
    Exchange,
    Peep,
    Penalty,
    PoolClaimed,
    PoolReturned,
    SeatEliminated,
    SeatRebought,
    SessionOver,
    TakeWidow,
    TrickWon,
    TrumpChosen,
)
from tournaments.errors import writing
from tournaments.report.session_text import (
    Step,
    bid_label,
    contract_label,
    decision_note,
    exchange_words,
    paid,
    pretty,
    signed,
    walk,
)
from tournaments.report.templates import render

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from referee.match.faults import Fault
    from referee.rules import Event, Profile, SeatView, SessionRecord

DATA_ID = "nap-replay-data"
"""The id of the ``<script type="application/json">`` element holding the steps (``replay.js`` reads it)."""


def render_replay_html(  # noqa: PLR0913 - the record and keyword-only options
    record: SessionRecord,
    *,
    bots: Sequence[str],
    title: str,
    decisions: Sequence[Sequence[Mapping[str, object]]] | None = None,
    faults: Sequence[Fault] = (),
    links: Sequence[tuple[str, str]] = (),
) -> str:
    """The replay page of ``record`` as one HTML document (inline CSS and script only).

    ``bots`` names the bot at each seat; ``decisions`` (a log's ``decisions``) adds each
    action's decision time to the step captions. ``faults`` (a log's faults) are
    marked at their decisions (:func:`fault_markers`); ``links`` are ``(text, href)``
    pairs shown in the header, e.g. back to the standings.
    """
    data = {
        **replay_data(record, bots=bots, decisions=decisions),
        "faults": fault_markers(faults),
        "links": [{"text": text, "href": href} for text, href in links],
    }
    return render("replay.html", title=title, data_id=DATA_ID, data=data)


def fault_markers(faults: Sequence[Fault]) -> list[dict[str, Any]]:
    """A log's faults as the page marks them: each at the step its decision led to.

    A fault at deal ``d``, decision ``i`` (counted from 0, as in the log) is marked on step
    ``i + 1`` of deal ``d``, the step that shows what was played in its place; a fault not
    tied to one decision (``decision`` null) on the deal's step 0; one at no deal is not
    marked.
    """
    return [
        {
            "deal": fault.deal,
            "step": 0 if fault.decision is None else fault.decision + 1,
            "decision": fault.decision,
            "seat": fault.seat,
            "bot": fault.bot,
            "kind": str(fault.kind),
            "elapsed_ms": fault.elapsed_ms,
            "detail": fault.detail,
        }
        for fault in faults
        if fault.deal is not None
    ]


def write_replay(path: Path, page: str) -> Path:
    """Write a page made by :func:`render_replay_html` to ``path`` (UTF-8) and return the path.

    Makes the folder if needed.
    """
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
    return path


def replay_data(
    record: SessionRecord,
    *,
    bots: Sequence[str],
    decisions: Sequence[Sequence[Mapping[str, object]]] | None = None,
) -> dict[str, Any]:
    """The JSON the page embeds: the seats, then per deal its steps.

    Cards are written as in records (``"QH"``). Each step is
    ``{"caption", "actor", "action", "public", "table": {"hands", "widow", "caption"},
    "views": [{"seat", "hand", "legal", "drawn", "discarded", "widow"}]}``; ``public`` is what
    every seat's view shows alike (bids, tricks, trump, balances, how many cards each seat
    holds, the pool, who exchanged how many cards and who peeped), taken from the engine's
    seat views. ``caption`` and ``action`` are public too: an exchange or a widow taken
    says how many cards, never which (``"exchange:3"``, ``"widow:taken"``); the table's
    caption names them. A view's ``drawn``, ``discarded`` and ``widow`` are what that seat
    may see of the pool variants' hidden cards (its own exchange, the widow once it
    peeped or took it).
    """
    if len(bots) != record.table_size:
        msg = f"{len(bots)} bot names for a table of {record.table_size}"
        raise ValueError(msg)
    deals: list[dict[str, Any]] = []
    winners: tuple[int, ...] = ()
    balances = (0,) * record.table_size
    for step in walk(record):
        if step.index < 0:
            view = step.views[0]
            deals.append(
                {
                    "number": step.deal,
                    "dealer": view.dealer,
                    "seats": list(view.seats_in_play),
                    "tie_break": step.deal >= record.profile.deals_per_session,
                    "steps": [],
                }
            )
        deal_decisions = decisions[step.deal] if decisions is not None and step.deal < len(decisions) else ()
        decision = deal_decisions[step.index] if 0 <= step.index < len(deal_decisions) else None
        deals[-1]["steps"].append(_step_data(step, record.profile, bots, decision))
        balances = step.balances
        winners = next((e.winners for e in step.events if isinstance(e, SessionOver)), winners)
    return {
        "format": "nap-replay",
        "profile": record.profile.name,
        "table_size": record.table_size,
        "seed": record.seed,
        "hand_size": record.profile.hand_size,
        "bots": list(bots),
        "deals": deals,
        "balances": list(balances),
        "winners": list(winners),
    }


def _cards(cards: Sequence[Card]) -> list[str]:
    return [card.text for card in cards]


def _public(view: SeatView, profile: Profile, settled: DealSettled | None) -> dict[str, Any]:
    """What every seat sees alike; read from one seat's view."""
    plays = [play for trick in view.tricks for play in trick.plays] + list(view.trick)
    in_play = set(view.seats_in_play)
    held = [
        profile.hand_size - sum(1 for s, _ in plays if s == seat) if seat in in_play else 0
        for seat in range(view.table_size)
    ]
    return {
        "phase": str(view.phase),
        "to_act": view.to_act,
        "dealer": view.dealer,
        "bids": [[seat, bid_label(profile, bid)] for seat, bid in view.bids],
        "declarer": view.declarer,
        "contract": None if view.contract is None else contract_label(profile, view.contract),
        "trump": None if view.trump is None else view.trump.letter,
        "trump_text": _trump_text(view, profile),
        "trick": [[seat, card.text] for seat, card in view.trick],
        "tricks": [
            {"winner": t.winner, "plays": [[seat, card.text] for seat, card in t.plays]} for t in view.tricks
        ],
        "tricks_won": list(view.tricks_won),
        "balances": list(view.balances),
        "held": held,
        "settled": None
        if settled is None
        else {"result": deal_result(settled, profile), "payments": list(settled.payments)},
        "pool": view.pool if profile.has_pool else None,
        "exchanged": list(view.exchanged),
        "peeked": list(view.peeked),
        "widow_taken": view.widow_taken,
    }


def _trump_text(view: SeatView, profile: Profile) -> str:
    if view.trump is not None:
        return view.trump.symbol
    if view.contract is not None and profile.contract(view.contract).misere:
        return "none (mis\u00e8re)"
    return "not chosen yet" if view.contract is not None else "-"


def _step_data(
    step: Step, profile: Profile, bots: Sequence[str], decision: Mapping[str, object] | None
) -> dict[str, Any]:
    settled = next((e for e in step.events if isinstance(e, DealSettled)), None)
    note = decision_note(decision)
    return {
        "caption": _caption(step, profile, bots) + note,
        "actor": step.seat,
        "action": _public_action(step),
        "public": _public(step.views[0], profile, settled),
        "table": {
            "hands": [_cards(hand) for hand in step.hands],
            "widow": None if step.widow is None else step.widow.text,
            "caption": _caption(step, profile, bots, table=True) + note,
        },
        "views": [
            {
                "seat": view.seat,
                "hand": _cards(view.hand),
                "legal": [str(a) for a in view.legal_actions],
                "drawn": _cards(view.drawn),
                "discarded": _cards(view.discarded),
                "widow": None if view.widow is None else view.widow.text,
            }
            for view in step.views
        ],
    }


def _public_action(step: Step) -> str | None:
    """The step's action as every seat may know it: an exchange's count, whether the widow was taken."""
    action = step.action
    if isinstance(action, Exchange):
        return f"exchange:{len(action.cards)}"
    if isinstance(action, TakeWidow):
        return "widow:none" if action.card is None else "widow:taken"
    return None if action is None else str(action)


def deal_result(settled: DealSettled, profile: Profile) -> str:
    """How a deal ended, in words: ``Nap made (5 tricks)``, ``all passed: no score`` (public)."""
    if settled.declarer is None:
        return "all passed: no score"
    outcome = "made" if settled.made else "failed"
    return f"{contract_label(profile, settled.contract)} {outcome} ({settled.tricks} tricks)"


def _caption(step: Step, profile: Profile, bots: Sequence[str], *, table: bool = False) -> str:
    """One line saying what the step did, in the game's words.

    Public unless ``table``: an exchange says how many cards and the fee, a widow taken
    that it was; the table's caption also names the cards given up, drawn and taken.
    """

    def who(seat: int) -> str:
        return f"seat {seat} ({bots[seat]})"

    view = step.views[0]
    if step.action is None:
        return f"Deal {step.deal + 1} dealt by {who(view.dealer)}"  # counted from 1, as every page does
    if isinstance(step.action, Penalty):
        parts = [f"{who(step.action.seat)} faulted: penalty"]
    elif isinstance(step.action, Card):
        parts = [f"{who(step.seat or 0)} plays {step.action.pretty}"]
    elif isinstance(step.action, (Exchange, Peep, TakeWidow)):
        parts = [_pool_text(step, step.action, who(step.seat or 0), table=table)]
    else:
        bid = bid_label(profile, step.action)
        parts = [f"{who(step.seat or 0)} " + ("passes" if bid == "pass" else f"bids {bid}")]
    parts += [text for event in step.events if (text := _event_text(event, profile, who))]
    return "; ".join(parts)


def _pool_text(step: Step, action: Exchange | Peep | TakeWidow, actor: str, *, table: bool) -> str:
    """An exchange, a peep or the widow decision (``step``'s action), as :func:`_caption` says it."""
    if isinstance(action, Peep):
        return f"{actor} peeps at the widow (pays {paid(step.events)})"
    if isinstance(action, Exchange):
        text = f"{actor} {exchange_words(len(action.cards), paid(step.events))}"
        if table and action.cards:
            text += f": gives up {pretty(action.cards)}, draws {pretty(step.views[step.actor].drawn)}"
        return text
    given = action.card
    if given is None:
        return f"{actor} leaves the widow"
    if table and step.widow is not None:
        return f"{actor} takes the widow ({step.widow.pretty}), gives up {given.pretty}"
    return f"{actor} takes the widow"


def _pool_event_text(event: PoolClaimed | PoolReturned, who: Callable[[int], str]) -> str:
    if isinstance(event, PoolClaimed):
        return f"{who(event.seat)} takes the pool ({event.amount} chips)"
    back = ", ".join(f"{s} {signed(r)}" for s, r in enumerate(event.refunds) if r)
    return f"the pool goes back to those who paid it in: {back}"


def _event_text(event: Event, profile: Profile, who: Callable[[int], str]) -> str:
    text = ""
    match event:
        case AuctionWon(declarer=declarer, contract=contract):
            text = f"{who(declarer)} declares {contract_label(profile, contract)}"
        case AllPassed():
            text = "all passed"
        case TrumpChosen(suit=suit):
            text = f"trump {suit.symbol}"
        case TrickWon(number=number, winner=winner):
            text = f"trick {number + 1} to {who(winner)}"
        case DealSettled(payments=payments):
            paid = ", ".join(f"{s} {signed(p)}" for s, p in enumerate(payments) if p)
            text = deal_result(event, profile) + (f": {paid}" if paid else "")
        case SeatEliminated(seat=seat):
            text = f"{who(seat)} is out of chips"
        case SeatRebought(seat=seat):
            text = f"{who(seat)} buys in again"
        case PoolClaimed() | PoolReturned():
            text = _pool_event_text(event, who)
        case SessionOver(winners=winners):
            text = "session over, won by " + ", ".join(who(s) for s in winners)
    return text
