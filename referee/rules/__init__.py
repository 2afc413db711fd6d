"""The rules of Nap as a pure, replayable engine (standard library only).

The public API, for the referee and for bot authors who want to search:

- cards: :class:`Card` (interned; ``Card("QH")``), :class:`Suit`, :class:`Rank`, ``CARDS``,
  :func:`pack_of` (a short pack: ``pack_of(32)`` is Ace down to 7)
- profiles: :class:`Profile` (``profile.pack`` is its cards; ``profile.at_table(n)`` the
  rules a table of n seats plays, with its pack when ``pack_sizes`` sizes it by the
  table), :class:`Contract`, ``PROFILES``, :func:`get_profile` (a built-in name or a
  house-rules ``.toml``), ``DEFAULT_PROFILE``, ``PACK_SIZES``, ``PACKS_BY_TABLE``,
  ``POOL_PARAMETERS``
- actions: :class:`Bid` (``Bid("nap")``, ``PASS``), cards; in the pool variants
  :class:`Exchange` (``DECLINE_EXCHANGE``), ``PEEP`` (:class:`Peep`) and
  :class:`TakeWidow` (``DECLINE_WIDOW``); :class:`Penalty`; :func:`parse_action`;
  :func:`fallback_action` (decline or pass, else the lowest legal card: what a seat
  plays when its bot did not decide) and :func:`lowest_card`
- :class:`Deal`: one deal; ``legal_actions()``, ``check(action, seat=)``,
  ``apply(action) -> events``, ``copy()``, ``Deal.from_hands(...)``
- :class:`Session`: the deals of a sitting, balances, the pool and winners; same methods
- views: :class:`SeatView`, :func:`seat_view`, :func:`deal_from_view`; :class:`ViewFields`
  and :func:`view_fields` (a view's fields as a named tuple, for the referee's encoder);
  :class:`SeatEvent` and :func:`seat_events` (an event as one seat is told it)
- records: :class:`SessionRecord`, :func:`record_of`, :func:`replay`, :func:`verify`
- errors: :class:`RulesError`, the base of what the engine raises for what its user asked
  (:class:`ProfileError`, :class:`IllegalActionError`, :class:`RecordError`, text that
  names no card or action, a table the rules do not seat); any other ValueError is a bug

Nothing here does IO, reads a clock or uses the global random generator: chance comes
in as a seed or a deck order. See ``docs/rules.md``.
"""

from referee.rules.actions import (
    BID_NAMES,
    DECLINE_EXCHANGE,
    DECLINE_WIDOW,
    PASS,
    PEEP,
    Action,
    Bid,
    Exchange,
    Peep,
    Penalty,
    TakeWidow,
    fallback_action,
    lowest_card,
    parse_action,
)
from referee.rules.cards import CARDS, Card, Rank, Suit, pack_of, parse_card, parse_cards, shuffled_deck
from referee.rules.deal import Deal, IllegalActionError, Phase
from referee.rules.errors import RulesError
from referee.rules.events import (
    AllPassed,
    AuctionWon,
    BidMade,
    CardPlayed,
    CardsExchanged,
    ChipsPaid,
    DealSettled,
    DealStarted,
    Event,
    Penalized,
    PoolClaimed,
    PoolReturned,
    SeatEliminated,
    SeatRebought,
    SessionOver,
    TrickWon,
    TrumpChosen,
    WidowPeeked,
    WidowTaken,
)
from referee.rules.profiles import (
    DEFAULT_PROFILE,
    PACK_SIZES,
    PACKS_BY_TABLE,
    POOL_PARAMETERS,
    PROFILES,
    Contract,
    FaultPolicy,
    Profile,
    ProfileError,
    get_profile,
    load_profile,
)
from referee.rules.rebuild import deal_from_view
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
    seat_events,
    seat_view,
    view_fields,
)

__all__ = [
    "BID_NAMES",
    "CARDS",
    "DECLINE_EXCHANGE",
    "DECLINE_WIDOW",
    "DEFAULT_PROFILE",
    "PACKS_BY_TABLE",
    "PACK_SIZES",
    "PASS",
    "PEEP",
    "POOL_PARAMETERS",
    "PROFILES",
    "Action",
    "AllPassed",
    "AuctionWon",
    "Bid",
    "BidMade",
    "Card",
    "CardPlayed",
    "CardsExchanged",
    "ChipsPaid",
    "Contract",
    "Deal",
    "DealRecord",
    "DealSettled",
    "DealStarted",
    "Event",
    "Exchange",
    "FaultPolicy",
    "IllegalActionError",
    "Peep",
    "Penalized",
    "Penalty",
    "Phase",
    "PoolClaimed",
    "PoolReturned",
    "Profile",
    "ProfileError",
    "Rank",
    "RecordError",
    "RulesError",
    "SeatEliminated",
    "SeatEvent",
    "SeatRebought",
    "SeatView",
    "Session",
    "SessionOver",
    "SessionRecord",
    "Suit",
    "TakeWidow",
    "TrickWon",
    "TrumpChosen",
    "ViewFields",
    "WidowPeeked",
    "WidowTaken",
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
