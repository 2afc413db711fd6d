"""A full deal rebuilt from one seat's view and a guess of what it cannot see (for search).

A bot that searches (Monte Carlo sampling, PIMC) guesses the other seats' cards, then
plays on from its view's moment in a :class:`~referee.rules.Deal` built by
:func:`deal_from_view`: its legal actions and ``apply()`` are the real ones from there.

The deal is rebuilt by making a deck whose deal, replayed with the view's public actions
(exchanges, peeps, bids, the widow decision, the cards played), ends in the view's
position. What the view does not show and the future does not depend on is made up
(which cards another seat gave up and drew); what the future does depend on (the other
hands, an unseen widow, the stock still to be drawn from) is the caller's guess.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Final

from referee.rules.actions import PEEP, Exchange, TakeWidow
from referee.rules.deal import Deal, Phase, deal_order

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from referee.rules.cards import Card
    from referee.rules.profiles import Profile
    from referee.rules.view import SeatView

_BY_INDEX: Final = attrgetter("index")


def deal_from_view(  # noqa: PLR0913 - the view, the guesses, keywords
    view: SeatView,
    profile: Profile,
    hands: Mapping[int, Iterable[Card]],
    *,
    widow: Card | None = None,
    stock: Sequence[Card] = (),
    stacks: Sequence[int] | None = None,
) -> Deal:
    """A full deal consistent with ``view``, in which the other seats hold ``hands``.

    ``hands`` gives each other seat in play its unplayed cards now (a guess): as many as
    that seat still holds, after its exchange and the widow. The cards it may guess from
    are the table's pack (``profile.pack_at(view.table_size)``) less ``view.visible_cards``.

    In the pool variants, this seat's exchange is its own (``view.drawn``,
    ``view.discarded``); another seat's is made up, since only its count is public: the
    cards it drew are the highest of its hand (pack order), those it gave up the highest
    of the cards left over (those nobody is seen or guessed to hold). Which ones changes
    nothing from the view's moment on. What can change the play is guessed from the
    cards left over: ``widow``, the widow while this seat has not seen it (by default the
    lowest card left over; when another declarer took it unseen, a card of that
    declarer's hand, its highest by default), and ``stock``, the top of the stock for the
    exchanges still to come (the rest of it, all of it by default, in pack order). A
    sampling search passes its own draws. ``stacks``: what each seat can pay now, by
    default the profile's starting chips plus the seat's balance (exact without
    rebuys; a guess below zero counts as none); unlimited when the profile's chips are.
    """
    profile = profile.at_table(view.table_size)
    now: dict[int, list[Card]] = {seat: list(cards) for seat, cards in hands.items()}
    now[view.seat] = list(view.hand)
    plays = [play for trick in view.tricks for play in trick.plays] + list(view.trick)
    for seat, card in plays:
        now.setdefault(seat, []).append(card)
    missing = set(view.seats_in_play) - set(now)
    if missing:
        msg = f"no hand given for seats {sorted(missing)}"
        raise ValueError(msg)
    if profile.has_pool:
        deal = _pool_deal(view, profile, now, widow=widow, stock=stock, stacks=stacks)
    else:
        deal = Deal.from_hands(profile, now, dealer=view.dealer, table_size=view.table_size)
        for _, bid in view.bids:
            deal.apply(bid)
    for _, card in plays:
        deal.apply(card)
    return deal


def _pool_deal(  # noqa: PLR0913 - the view, the hands and the guesses, keywords
    view: SeatView,
    profile: Profile,
    now: dict[int, list[Card]],
    *,
    widow: Card | None,
    stock: Sequence[Card],
    stacks: Sequence[int] | None,
) -> Deal:
    """:func:`deal_from_view` up to its first card, in a profile with exchanges or a widow.

    ``now`` is each seat's hand after the exchange and the widow: its unplayed and played
    cards together.
    """
    held = {card for cards in now.values() for card in cards}
    left = [card for card in profile.pack if card not in held and card not in view.discarded]
    widow = _the_widow(view, profile, now, left, widow)
    if widow in left:
        left.remove(widow)
    for card in stock:
        if card not in left:
            msg = f"{card} cannot be in the stock: it is held, seen or the widow"
            raise ValueError(msg)
        left.remove(card)
    order = deal_order(view.dealer, view.seats_in_play, view.table_size)
    first, draws, exchanges, for_widow = _made_up_exchanges(view, order, now, left, widow)
    deal = Deal.from_hands(
        profile,
        first,
        dealer=view.dealer,
        table_size=view.table_size,
        widow=widow,
        stock=[*draws, *stock],
        stacks=_stacks_at_start(view, profile, stacks),
    )
    if profile.exchange_max:
        done = order if view.phase is not Phase.EXCHANGE else order[: order.index(view.to_act)]
        for seat in done:
            deal.apply(exchanges[seat])
    peeked = set(view.peeked)
    for seat, bid in view.bids:
        if seat in peeked:
            deal.apply(PEEP)
            peeked.discard(seat)
        deal.apply(bid)
    if peeked:  # the seat to act peeped and has not bid yet
        deal.apply(PEEP)
    if view.widow_taken is not None:
        deal.apply(TakeWidow(for_widow))
    return deal


def _made_up_exchanges(
    view: SeatView,
    order: Sequence[int],
    now: Mapping[int, list[Card]],
    left: list[Card],
    widow: Card | None,
) -> tuple[dict[int, list[Card]], list[Card], dict[int, Exchange], Card | None]:
    """The hands as dealt, the cards drawn (in order), the exchanges, and the card given for the widow.

    This seat's are its own; the others' are made up (their highest cards drawn, the
    highest of ``left`` given up, taken off ``left``).
    """
    taker = view.declarer if view.widow_taken else None
    dealt: dict[int, list[Card]] = {}
    draws: list[Card] = []
    exchanges: dict[int, Exchange] = {}
    for_widow: Card | None = None
    for seat in order:
        hand = now[seat]
        if seat == taker:
            for_widow = view.discarded[-1] if seat == view.seat else left.pop()
            hand = [card for card in hand if card is not widow] + [for_widow]
        count = view.exchanged[seat]
        if seat == view.seat:
            drawn, given = view.drawn, view.discarded[:count]
        else:
            drawn = tuple(sorted(hand, key=_BY_INDEX)[len(hand) - count :]) if count else ()
            given = tuple(left.pop() for _ in range(count))
        dealt[seat] = [card for card in hand if card not in drawn] + list(given)
        draws += drawn
        exchanges[seat] = Exchange(given)
    return dealt, draws, exchanges, for_widow


def _the_widow(
    view: SeatView,
    profile: Profile,
    now: Mapping[int, list[Card]],
    left: list[Card],
    guess: Card | None,
) -> Card | None:
    """The widow of the rebuilt deal: seen by this seat, else ``guess``, else a default."""
    if not profile.widow:
        return None
    widow = view.widow or guess
    taker = view.declarer if view.widow_taken else None
    if taker is None:
        return widow if widow is not None else left[0]
    if widow is None:
        return max(now[taker], key=_BY_INDEX)
    if widow not in now[taker]:
        msg = f"the widow {widow} must be in the hand of seat {taker}, the declarer who took it"
        raise ValueError(msg)
    return widow


def _stacks_at_start(
    view: SeatView, profile: Profile, stacks: Sequence[int] | None
) -> tuple[int, ...] | None:
    """What each seat could pay when the deal began: what it can pay now plus the fees it paid since.

    A seat never holds less than nothing once it paid (it pays only what it has): a stack
    guessed below zero (the default's, for a seat that rebought) counts as none, so the
    fees the view shows paid replay.
    """
    if stacks is None:
        if profile.starting_chips is None:
            return None
        stacks = [profile.starting_chips + balance for balance in view.balances]
    paid = [profile.exchange_cost(count) for count in view.exchanged]
    for seat in view.peeked:
        paid[seat] += profile.peep_fee
    return tuple(max(stack, 0) + fee for stack, fee in zip(stacks, paid, strict=True))
