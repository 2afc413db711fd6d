"""Records: a deal is its deck order, dealer, seats in play and actions; a session is its deals.

Replaying a record through the engine reproduces every state, event and payment exactly.
This is what session logs store and what ``nap log verify`` checks. The JSON form
(documented in ``docs/rules.md``)::

    {"format": "nap-session-record", "version": 1,
     "profile": "heather", "rules": {...profile parameters...},
     "table_size": 4, "seed": 7, "first_dealer": 2,
     "deals": [{"dealer": 2, "seats": [0, 1, 2, 3],
                "deck": "QS JC KH ... (the pack's 52 cards, or a short pack's, top first)",
                "actions": ["pass", "three", "pass", "pass", "KH", "2H", ...]}],
     "balances": [12, -4, -4, -4], "winners": [0]}

Actions are written as text (:func:`~referee.rules.parse_action` reads them back): bids,
cards, the pool variants' ``exchange:2C,9H`` / ``exchange:none``, ``peep`` and
``widow:QH`` / ``widow:none``, and ``penalty:N``. The deck deals the hands, then the widow
(when the profile has one), then the stock that exchanges draw from.

``balances`` and ``winners`` are the outcome as recorded (fees paid into the pool, pools
taken and returned included); :func:`verify` replays the rest and checks them. ``rules``
holds every profile parameter, ``pack_size`` among them, so a short-pack session's decks
(fewer cards) are checked against its own pack. A record written before ``pack_size``
existed has none in its rules: its pack is the 52 cards. The pool parameters are there
only when one differs from its default (:meth:`~referee.rules.Profile.to_json`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.rules.actions import Action, parse_action
from referee.rules.cards import Card, cards_text, parse_cards
from referee.rules.errors import RulesError
from referee.rules.profiles import PROFILES, Profile, ProfileError
from referee.rules.session import Session

if TYPE_CHECKING:
    from collections.abc import Mapping

FORMAT = "nap-session-record"
VERSION = 1


class RecordError(RulesError):
    """A record that is malformed or does not replay to what it says."""


@dataclass(frozen=True, slots=True)
class DealRecord:
    """One deal: enough to replay it exactly."""

    dealer: int
    seats: tuple[int, ...]
    deck: tuple[Card, ...]
    actions: tuple[Action, ...]


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One session: its profile, table, seed and deals, and the outcome it claims."""

    profile: Profile
    table_size: int
    seed: int
    first_dealer: int
    deals: tuple[DealRecord, ...]
    balances: tuple[int, ...]
    winners: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "profile": self.profile.name,
            "rules": self.profile.to_json(),
            "table_size": self.table_size,
            "seed": self.seed,
            "first_dealer": self.first_dealer,
            "deals": [
                {
                    "dealer": d.dealer,
                    "seats": list(d.seats),
                    "deck": cards_text(d.deck),
                    "actions": [str(a) for a in d.actions],
                }
                for d in self.deals
            ],
            "balances": list(self.balances),
            "winners": list(self.winners),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionRecord:
        """Read a record from JSON data; RecordError names what is wrong."""
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            msg = f"not a {FORMAT} version {VERSION}"
            raise RecordError(msg)
        try:
            name = data["profile"]
            rules = data.get("rules")
            profile = _profile_of(name, rules)
            deals = tuple(
                DealRecord(
                    dealer=int(d["dealer"]),
                    seats=tuple(int(s) for s in d["seats"]),
                    deck=parse_cards(d["deck"]),
                    actions=tuple(parse_action(a) for a in d["actions"]),
                )
                for d in data["deals"]
            )
            table_size = int(data["table_size"])
            pack = frozenset(profile.pack_at(table_size))
            for number, deal in enumerate(deals):
                if len(deal.deck) != len(pack) or set(deal.deck) != pack:
                    msg = f"deal {number}: a deck must hold each of the {len(pack)} cards of the pack once"
                    raise RecordError(msg)
            return cls(
                profile=profile,
                table_size=table_size,
                seed=int(data["seed"]),
                first_dealer=int(data["first_dealer"]),
                deals=deals,
                balances=tuple(int(b) for b in data["balances"]),
                winners=tuple(int(w) for w in data["winners"]),
            )
        except (KeyError, TypeError, ValueError, ProfileError) as exc:
            msg = f"malformed record: {exc}"

            raise RecordError(msg) from None


def _profile_of(name: str, rules: object) -> Profile:
    """The record's profile: the built-in one when its rules are that profile's, else rebuilt."""
    builtin = PROFILES.get(name)
    if builtin is not None and (rules is None or rules == builtin.to_json()):
        return builtin
    profile = Profile.from_json(rules)
    return builtin if profile == builtin else profile


def record_of(session: Session) -> SessionRecord:
    """The record of a session (finished or not)."""
    return SessionRecord(
        profile=session.profile,
        table_size=session.table_size,
        seed=session.seed,
        first_dealer=session.first_dealer,
        deals=tuple(DealRecord(d.dealer, d.seats, d.deck, d.actions) for d in session.deals),
        balances=tuple(session.balances),
        winners=session.winners,
    )


def fresh_session(record: SessionRecord) -> Session:
    """A session at its start that deals the record's decks: apply its actions to replay it."""
    return Session(
        record.profile,
        table_size=record.table_size,
        seed=record.seed,
        dealer=record.first_dealer,
        decks=[d.deck for d in record.deals],
    )


def replay(record: SessionRecord) -> Session:
    """Replay a record through the engine and return the resulting session.

    Raises RecordError when an action is illegal, when the session deals a deal with a
    different dealer or seats than recorded, or when the record has actions left over.
    """
    session = fresh_session(record)
    for number, deal_record in enumerate(record.deals):
        if len(session.deals) != number + 1:
            msg = f"deal {number}: the session ended before it"
            raise RecordError(msg)
        deal = session.deal
        if (deal.dealer, deal.seats) != (deal_record.dealer, deal_record.seats):
            msg = (
                f"deal {number}: dealer {deal.dealer} seats {deal.seats} replayed, "
                f"{deal_record.dealer} {deal_record.seats} recorded"
            )
            raise RecordError(msg)
        for index, action in enumerate(deal_record.actions):
            try:
                session.apply(action)
            except ValueError as exc:
                msg = f"deal {number}, action {index} ({action}): {exc}"
                raise RecordError(msg) from None
    return session


def verify(record: SessionRecord) -> list[str]:
    """Replay ``record`` and list every way its claimed outcome differs (empty when it matches)."""
    try:
        session = replay(record)
    except RecordError as exc:
        return [str(exc)]
    problems = []
    if len(session.deals) != len(record.deals):
        problems.append(f"{len(session.deals)} deals replayed, {len(record.deals)} recorded")
    if tuple(session.balances) != record.balances:
        problems.append(f"balances {tuple(session.balances)} replayed, {record.balances} recorded")
    if session.winners != record.winners:
        problems.append(f"winners {session.winners} replayed, {record.winners} recorded")
    return problems
