"""The rules of Nap as a pure, replayable engine (standard library only).

The public API, for the referee and for bot authors who want to search:

- cards: :class:`Card` (interned; ``Card("QH")``), :class:`Suit`, :class:`Rank`, ``CARDS``,
  :func:`pack_of` (a short pack: ``pack_of(32)`` is Ace down to 7)
- profiles: :class:`Profile` (``profile.pack`` is its cards), :class:`Contract`,
  ``PROFILES``, :func:`get_profile` (a built-in name or a house-rules ``.toml``),
  ``DEFAULT_PROFILE``, ``PACK_SIZES``
- actions: :class:`Bid` (``Bid("nap")``, ``PASS``), cards, :class:`Penalty`;
  :func:`parse_action`; :func:`fallback_action` (pass, else the lowest legal card: what a
  seat plays when its bot did not decide) and :func:`lowest_card`
- :class:`Deal`: one deal; ``legal_actions()``, ``check(action, seat=)``,
  ``apply(action) -> events``, ``copy()``, ``Deal.from_hands(...)``
- :class:`Session`: the deals of a sitting, balances and winners; same methods
- views: :class:`SeatView`, :func:`seat_view`, :func:`deal_from_view`; :class:`ViewFields`
  and :func:`view_fields` (a view's fields as a named tuple, for the referee's encoder);
  :class:`SeatEvent` and :func:`seat_events` (an event as one seat is told it)
- records: :class:`SessionRecord`, :func:`record_of`, :func:`replay`, :func:`verify`

Nothing here does IO, reads a clock or uses the global random generator: chance comes
in as a seed or a deck order. See ``docs/rules.md``.
"""

from referee.rules.actions import (
    BID_NAMES,
    PASS,
    Action,
    Bid,
    Penalty,
    fallback_action,
    lowest_card,
    parse_action,
)
from referee.rules.cards import CARDS, Card, Rank, Suit, pack_of, parse_card, parse_cards, shuffled_deck
from referee.rules.deal import Deal, IllegalActionError, Phase
from referee.rules.events import (
    AllPassed,
    AuctionWon,
    BidMade,
    CardPlayed,
    DealSettled,
    DealStarted,
    Event,
    Penalized,
    SeatEliminated,
    SeatRebought,
    SessionOver,
    TrickWon,
    TrumpChosen,
)
from referee.rules.profiles import (
    DEFAULT_PROFILE,
    PACK_SIZES,
    PROFILES,
    Contract,
    FaultPolicy,
    Profile,
    ProfileError,
    get_profile,
    load_profile,
)
from referee.rules.record import (
    DealRecord,
    RecordError,
    SessionRecord,
    fresh_session,
    record_of,
    replay,
    verify,
)
from referee.rules.session import Session, deal_deck, first_dealer
from referee.rules.view import (
    SeatEvent,
    SeatView,
    ViewFields,
    deal_from_view,
    seat_events,
    seat_view,
    view_fields,
)

__all__ = [
    "BID_NAMES",
    "CARDS",
    "DEFAULT_PROFILE",
    "PACK_SIZES",
    "PASS",
    "PROFILES",
    "Action",
    "AllPassed",
    "AuctionWon",
    "Bid",
    "BidMade",
    "Card",
    "CardPlayed",
    "Contract",
    "Deal",
    "DealRecord",
    "DealSettled",
    "DealStarted",
    "Event",
    "FaultPolicy",
    "IllegalActionError",
    "Penalized",
    "Penalty",
    "Phase",
    "Profile",
    "ProfileError",
    "Rank",
    "RecordError",
    "SeatEliminated",
    "SeatEvent",
    "SeatRebought",
    "SeatView",
    "Session",
    "SessionOver",
    "SessionRecord",
    "Suit",
    "TrickWon",
    "TrumpChosen",
    "ViewFields",
    "deal_deck",
    "deal_from_view",
    "fallback_action",
    "first_dealer",
    "fresh_session",
    "get_profile",
    "load_profile",
    "lowest_card",
    "pack_of",
    "parse_action",
    "parse_card",
    "parse_cards",
    "record_of",
    "replay",
    "seat_events",
    "seat_view",
    "shuffled_deck",
    "verify",
    "view_fields",
]
