"""The live view of a table in play, from its public events, without a single card (pure).

A ladder's table is one rotation of a block still in play, and a block's cards become
public only once every rotation is played (docs/arena.md): another rotation of the same
board is dealt the same cards. So the live page shows what a spectator may know of a
deal without seeing it: the seats, which deal of how many, the bids, the contract and
trump, how many tricks each seat has won and how many cards lie in the current trick,
and the balances. The public events hold cards in exactly two places (``CardPlayed.card``
and ``TrickWon.plays``); :func:`table_view` reads neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.rules import (
    AllPassed,
    AuctionWon,
    BidMade,
    CardPlayed,
    ChipsPaid,
    DealSettled,
    DealStarted,
    Penalized,
    PoolClaimed,
    PoolReturned,
    SessionOver,
    TrickWon,
    TrumpChosen,
)
from tournaments.report.replay_page import deal_result
from tournaments.report.session_text import bid_label, contract_label

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules import Event, Profile
    from tournaments.play.tables import TableInPlay

__all__ = ["LiveTable", "table_view"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveTable:
    """A table in play as the live page shows it: the deal in play so far, and the session's balances.

    ``deal`` counts from 1 (0: not dealt yet) of ``deals``; ``bids`` are (seat, label) in
    order; ``declarer`` and ``contract`` once the auction is won; ``trump`` the suit's
    sign once chosen; ``tricks_won`` per seat in this deal; ``trick_cards`` how many cards
    lie in the trick being played; ``last_result`` how the previous deal ended.
    """

    block: int
    rotation: int
    entries: tuple[str, ...]
    deal: int
    deals: int
    dealer: int | None
    bids: tuple[tuple[int, str], ...]
    all_passed: bool
    declarer: int | None
    contract: str | None
    trump: str | None
    tricks_won: tuple[int, ...]
    trick_cards: int
    penalized: int | None
    balances: tuple[int, ...]
    last_result: str | None
    over: bool
    winners: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        """The table as the API serves it (a list per seat, in seat order)."""
        return {
            "block": self.block,
            "rotation": self.rotation,
            "seats": [
                {"seat": seat, "entry": entry, "tricks_won": won, "balance": balance}
                for seat, (entry, won, balance) in enumerate(
                    zip(self.entries, self.tricks_won, self.balances, strict=True)
                )
            ],
            "deal": self.deal,
            "deals": self.deals,
            "dealer": self.dealer,
            "bids": [[seat, label] for seat, label in self.bids],
            "all_passed": self.all_passed,
            "declarer": self.declarer,
            "contract": self.contract,
            "trump": self.trump,
            "trick_cards": self.trick_cards,
            "penalized": self.penalized,
            "last_result": self.last_result,
            "over": self.over,
            "winners": list(self.winners),
        }


def table_view(table: TableInPlay, events: Sequence[Event], *, profile: Profile) -> LiveTable:  # noqa: C901, PLR0912 - one case per kind of event
    """``table`` after its public ``events`` (all of them, from the session's start)."""
    seats = len(table.bots)
    deal, dealer = 0, None
    bids: list[tuple[int, str]] = []
    all_passed = False
    declarer: int | None = None
    contract: str | None = None
    trump: str | None = None
    won = [0] * seats
    trick_cards = 0
    penalized: int | None = None
    balances = [0] * seats
    last_result: str | None = None
    over = False
    winners: tuple[int, ...] = ()
    for event in events:
        match event:
            case DealStarted(deal=number, dealer=first):
                deal, dealer = number + 1, first
                bids, all_passed, declarer, contract, trump = [], False, None, None, None
                won, trick_cards, penalized = [0] * seats, 0, None
            case BidMade(seat=seat, bid=bid):
                bids.append((seat, bid_label(profile, bid)))
            case AuctionWon(declarer=seat, contract=name):
                declarer, contract = seat, contract_label(profile, name)
            case AllPassed():
                all_passed = True
            case TrumpChosen(suit=suit):
                trump = suit.symbol
            case CardPlayed():  # which card is left out
                trick_cards += 1
            case TrickWon(winner=winner):  # its plays are left out
                won[winner] += 1
                trick_cards = 0
            case Penalized(seat=seat):
                penalized = seat
            case ChipsPaid(seat=seat, amount=amount):
                balances[seat] -= amount
            case DealSettled(payments=payments):
                balances = [b + p for b, p in zip(balances, payments, strict=True)]
                last_result = deal_result(event, profile)
            case PoolClaimed(seat=seat, amount=amount):
                balances[seat] += amount
            case PoolReturned(refunds=refunds):
                balances = [b + r for b, r in zip(balances, refunds, strict=True)]
            case SessionOver(balances=final, winners=best):
                balances, over, winners = list(final), True, best
            case _:  # exchanges, peeps, the widow, eliminations and rebuys: no figure shown moves
                pass
    return LiveTable(
        block=table.block,
        rotation=table.rotation,
        entries=table.bots,
        deal=deal,
        deals=table.deals,
        dealer=dealer,
        bids=tuple(bids),
        all_passed=all_passed,
        declarer=declarer,
        contract=contract,
        trump=trump,
        tricks_won=tuple(won),
        trick_cards=trick_cards,
        penalized=penalized,
        balances=tuple(balances),
        last_result=last_result,
        over=over,
        winners=tuple(winners),
    )
