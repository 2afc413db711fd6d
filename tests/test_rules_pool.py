"""Golden tests of the pool variants (seed 001: Purchase, Écarté and Peep Nap) from the seed's sentences.

"Purchase Nap: before the bids, each player may pay a stake to exchange a fixed number
of cards with the unseen cards of the pack." "Écarté Nap: before the bids, the players
pay per card to exchange unwanted cards for new ones." "Peep Nap: an extra card is dealt
face down; the players pay to look at it before bidding, and the winner of the auction
may exchange one of their cards for it." The pool, its claim by the next Nap and its
return at the session's end are our readings (docs/rules.md).
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from referee.rules import (
    CARDS,
    DECLINE_EXCHANGE,
    DECLINE_WIDOW,
    PASS,
    PEEP,
    PROFILES,
    Bid,
    Card,
    CardsExchanged,
    ChipsPaid,
    Deal,
    DealSettled,
    Exchange,
    IllegalActionError,
    Peep,
    Phase,
    PoolClaimed,
    PoolReturned,
    Session,
    SessionOver,
    SessionRecord,
    TakeWidow,
    WidowPeeked,
    WidowTaken,
    deal_deck,
    fallback_action,
    parse_action,
    parse_cards,
    record_of,
    verify,
)

if TYPE_CHECKING:
    from referee.rules import Event, Profile

PURCHASE = PROFILES["purchase"]
ECARTE = PROFILES["ecarte"]
PEEP_NAP = PROFILES["peep"]

# Three seats, dealer 2: seat 0 is the eldest hand, then seats 1 and 2.
HEARTS_SWEEP = {0: "AH KH QH JH 10H", 1: "2C 3C 4C 5C 6C", 2: "2D 3D 4D 5D 6D"}


def _deck(
    profile: Profile, hands: dict[int, str], *, dealer: int, widow: str | None = None
) -> tuple[Card, ...]:
    """The deck that deals ``hands`` (and ``widow``); the stock is the rest of the pack in pack order."""
    return Deal.from_hands(
        profile,
        {seat: parse_cards(text) for seat, text in hands.items()},
        dealer=dealer,
        table_size=len(hands),
        widow=Card(widow) if widow else None,
    ).deck


def _session(profile: Profile, *first: tuple[Card, ...], dealer: int) -> Session:
    """A session of three whose first deals are ``first`` (``dealer`` deals first), the rest from seed 5."""
    decks = [*first, *(deal_deck(5, number, pack=profile.pack) for number in range(len(first), 9))]
    return Session(profile, table_size=3, seed=5, dealer=dealer, decks=decks)


def _apply(session: Session, actions: str) -> list[Event]:
    events: list[Event] = []
    for text in actions.split():
        events.extend(session.apply(parse_action(text)))
    return events


class TestPurchase:
    """Purchase Nap: one chip into the pool per exchange, 1 to 3 cards, drawn from the top of the stock."""

    def test_a_purchase_costs_one_chip_and_draws_from_the_top_of_the_stock(self) -> None:
        """The stock after three hands of five is 7C 8C 9C ...: each purchase draws the next cards."""
        session = _session(PURCHASE, _deck(PURCHASE, HEARTS_SWEEP, dealer=2), dealer=2)
        deal = session.deal
        assert session.view(0).phase is Phase.EXCHANGE
        assert deal.stock[:4] == parse_cards("7C 8C 9C 10C")
        assert session.apply(DECLINE_EXCHANGE) == (CardsExchanged(0, 0),)
        assert session.apply(Exchange(parse_cards("2C"))) == (CardsExchanged(1, 1), ChipsPaid(1, 1))
        assert session.apply(parse_action("exchange:3D,2D")) == (CardsExchanged(2, 2), ChipsPaid(2, 1))
        assert deal.hands[1] == list(parse_cards("3C 4C 5C 6C 7C"))
        assert deal.hands[2] == list(parse_cards("8C 9C 4D 5D 6D"))
        assert deal.stock[0] == Card("10C")
        assert (session.balances, session.pool, session.pool_paid) == ((0, -1, -1), 2, (0, 1, 1))
        assert deal.phase is Phase.BIDDING
        assert deal.to_act == 0
        mine, theirs = session.view(2), session.view(0)
        assert (mine.drawn, mine.discarded) == (parse_cards("8C 9C"), parse_cards("2D 3D"))
        assert (theirs.drawn, theirs.discarded, theirs.hand) == ((), (), parse_cards("10H JH QH KH AH"))
        assert mine.exchanged == theirs.exchanged == (0, 1, 2)
        assert mine.pool == theirs.pool == 2
        assert mine.balances == (0, -1, -1)

    def test_the_exchange_round_offers_every_set_of_up_to_three_cards_declining_first(self) -> None:
        """Legal exchanges: decline, then 5 single cards, 10 pairs, 10 triples, each in pack order."""
        deal = Deal(PURCHASE, deck=CARDS, dealer=2, table_size=3)
        legal = deal.legal_actions()
        assert legal[0] == DECLINE_EXCHANGE
        assert [len(action.cards) for action in legal] == [0] + [1] * 5 + [2] * 10 + [3] * 10  # type: ignore[union-attr]
        assert legal[1:3] == (Exchange(parse_cards("2C")), Exchange(parse_cards("3C")))
        assert legal[6] == Exchange(parse_cards("2C 3C"))
        with pytest.raises(IllegalActionError, match="a purchase exchanges at most 3 cards"):
            deal.apply(Exchange(tuple(deal.hands[0][:4])))
        with pytest.raises(IllegalActionError, match="card not in hand: AS"):
            deal.apply(parse_action("exchange:AS"))
        with pytest.raises(IllegalActionError, match="the exchange is on: give up cards or decline"):
            deal.apply(PASS)
        assert fallback_action(legal) == DECLINE_EXCHANGE

    def test_a_short_stock_lets_a_seat_exchange_only_as_many_cards_as_remain(self) -> None:
        """Seven hands of five leave 17 cards: after five purchases of three, 2 remain, then none."""
        deal = Deal(PURCHASE, deck=CARDS, dealer=6, table_size=7)
        assert len(deal.stock) == 17
        for seat in range(5):
            deal.apply(Exchange(tuple(deal.hands[seat][:3])))
        assert deal.stock == parse_cards("KS AS")
        assert max(len(action.cards) for action in deal.legal_actions()) == 2  # type: ignore[union-attr]
        with pytest.raises(IllegalActionError, match="the stock holds only 2 cards"):
            deal.check(Exchange(tuple(deal.hands[5][:3])), seat=5)
        assert deal.apply(Exchange(tuple(deal.hands[5][:2]))) == (CardsExchanged(5, 2), ChipsPaid(5, 1))
        assert all(len(hand) == 5 for hand in deal.hands)
        assert deal.legal_actions() == (DECLINE_EXCHANGE,)
        deal.apply(DECLINE_EXCHANGE)
        assert deal.phase is Phase.BIDDING
        assert deal.exchanged == (3, 3, 3, 3, 3, 2, 0)
        assert deal.fees == (1, 1, 1, 1, 1, 1, 0)


class TestEcarte:
    """Écarté Nap: one chip per card exchanged, any number up to the whole hand."""

    def test_ecarte_costs_one_chip_per_card(self) -> None:
        """Four cards cost four chips; the whole hand may go, for five."""
        session = _session(ECARTE, _deck(ECARTE, HEARTS_SWEEP, dealer=2), dealer=2)
        assert session.apply(parse_action("exchange:10H,JH,QH,KH")) == (CardsExchanged(0, 4), ChipsPaid(0, 4))
        assert session.deal.hands[0] == list(parse_cards("7C 8C 9C 10C AH"))
        legal = session.legal_actions()
        assert len(legal) == 2**5  # declining and every non-empty set of the five cards
        assert session.apply(parse_action("exchange:2C,3C,4C,5C,6C")) == (
            CardsExchanged(1, 5),
            ChipsPaid(1, 5),
        )
        assert session.view(1).drawn == tuple(session.deal.hands[1]) == parse_cards("JC QC KC AC 7D")
        assert (session.balances, session.pool) == ((-4, -5, 0), 9)

    def test_a_seat_cannot_pay_for_more_cards_than_its_chips(self) -> None:
        """With 3 chips, 4 cards cannot be bought: the legal exchanges stop at three cards."""
        poor = replace(ECARTE, name="poor-ecarte", starting_chips=3)
        session = _session(poor, _deck(poor, HEARTS_SWEEP, dealer=2), dealer=2)
        assert max(len(action.cards) for action in session.legal_actions()) == 3  # type: ignore[union-attr]
        with pytest.raises(IllegalActionError, match="cannot pay 4 chips: 3 left"):
            session.apply(parse_action("exchange:10H,JH,QH,KH"))
        session.apply(parse_action("exchange:10H,JH,QH"))
        assert session.stack(0) == 0


class TestPeep:
    """Peep Nap: a widow dealt face down; a peep costs one chip and shows it only to the payer."""

    WIDOW = "7C"

    def _session(self) -> Session:
        return _session(PEEP_NAP, _deck(PEEP_NAP, HEARTS_SWEEP, dealer=2, widow=self.WIDOW), dealer=2)

    def test_a_peep_costs_one_chip_and_shows_the_widow_only_to_the_payer(self) -> None:
        """Seat 1 pays and sees 7C; seats 0 and 2 see only that seat 1 peeped. Then it still bids."""
        session = self._session()
        deal = session.deal
        assert deal.widow == Card("7C")
        assert deal.stock[0] == Card("8C")
        assert deal.phase is Phase.BIDDING
        assert session.legal_actions()[-1] is PEEP
        assert fallback_action(session.legal_actions()) is PASS
        session.apply(Bid("three"))
        assert session.apply(PEEP) == (WidowPeeked(1), ChipsPaid(1, 1))
        assert deal.to_act == 1
        assert PEEP not in session.legal_actions()
        with pytest.raises(IllegalActionError, match="already peeped this deal"):
            session.apply(PEEP)
        assert session.view(1).widow == Card("7C")
        assert session.view(0).widow is None
        assert session.view(2).widow is None
        assert session.view(0).peeked == session.view(2).peeked == (1,)
        assert (session.balances, session.pool) == ((0, -1, 0), 1)
        assert not session.view(0).visible_cards & {Card("7C")}
        session.apply(PASS)
        assert deal.to_act == 2
        assert PEEP in session.legal_actions()  # each seat may peep once

    def test_the_declarer_may_swap_a_card_for_the_widow(self) -> None:
        """After the auction the declarer gives up a card face down for the widow; its Nap takes the pool."""
        session = self._session()
        _apply(session, "nap peep pass pass")
        deal = session.deal
        assert session.view(0).phase is Phase.WIDOW
        assert deal.to_act == 0
        legal = session.legal_actions()
        assert legal[0] == DECLINE_WIDOW
        assert legal[1:] == tuple(TakeWidow(card) for card in parse_cards("10H JH QH KH AH"))
        assert fallback_action(legal) == DECLINE_WIDOW
        with pytest.raises(IllegalActionError, match="the widow is the declarer's to take"):
            session.check(DECLINE_WIDOW, seat=1)
        with pytest.raises(IllegalActionError, match="card not in hand: 2C"):
            session.apply(TakeWidow(Card("2C")))
        assert session.apply(parse_action("widow:10H")) == (WidowTaken(0, taken=True),)
        assert deal.hands[0] == list(parse_cards("7C JH QH KH AH"))
        declarer, peeper, other = session.view(0), session.view(1), session.view(2)
        assert (declarer.widow, declarer.discarded) == (Card("7C"), (Card("10H"),))
        assert (peeper.widow, peeper.discarded) == (Card("7C"), ())
        assert other.widow is None
        assert declarer.widow_taken is other.widow_taken is True
        assert deal.phase is Phase.PLAY
        events = _apply(session, "AH 2C 2D  KH 3C 3D  QH 4C 4D  JH 5C 5D  7C 6C 6D")
        settled = next(e for e in events if isinstance(e, DealSettled))
        assert (settled.made, settled.payments) == (True, (20, -10, -10))
        assert events[events.index(settled) + 1] == PoolClaimed(0, 1)
        assert (session.balances, session.pool, session.pool_paid) == ((21, -11, -10), 0, (0, 0, 0))

    def test_the_declarer_may_decline_the_widow_and_all_passed_asks_nothing(self) -> None:
        """Declining keeps the hand; when all pass there is no widow decision at all."""
        session = self._session()
        _apply(session, "four pass pass")
        assert session.apply(DECLINE_WIDOW) == (WidowTaken(0, taken=False),)
        assert session.deal.hands[0] == list(parse_cards("10H JH QH KH AH"))
        assert session.view(0).widow is None  # it neither peeped nor took it
        passed = self._session()
        events = _apply(passed, "pass pass pass")
        assert passed.deals[0].phase is Phase.OVER
        assert not any(isinstance(e, WidowTaken) for e in events)

    def test_a_seat_with_no_chips_left_cannot_pay_to_peep(self) -> None:
        """A seat whose stack is spent (on a purchase, in house rules with both) is not offered the peep."""
        both = replace(PURCHASE, name="purchase-and-peep", widow=True, starting_chips=1)
        session = _session(both, _deck(both, HEARTS_SWEEP, dealer=2, widow="7C"), dealer=2)
        _apply(session, "exchange:10H exchange:none exchange:none")
        assert session.stack(0) == 0
        assert session.deal.phase is Phase.BIDDING
        assert PEEP not in session.legal_actions()
        with pytest.raises(IllegalActionError, match="cannot pay 1 chip: 0 left"):
            session.apply(PEEP)
        session.apply(PASS)
        assert session.legal_actions()[-1] is PEEP
        deal = Deal(PEEP_NAP, deck=session.deal.deck, dealer=2, table_size=3, stacks=(0, 5, 5))
        with pytest.raises(IllegalActionError, match="cannot pay 1 chip: 0 left"):
            deal.check(PEEP)

    def test_no_peep_without_a_widow(self) -> None:
        """In a profile without a widow, peeping is refused with the reason."""
        deal = Deal(PROFILES["full-ladder"], deck=CARDS, dealer=2, table_size=3)
        with pytest.raises(IllegalActionError, match="there is no widow to peep at in the full-ladder rules"):
            deal.apply(PEEP)


class TestPool:
    """The pool: the next Nap (or higher) made takes it; what is left goes back to its payers at the end."""

    def test_the_pool_goes_to_the_next_nap_made_not_to_a_four(self) -> None:
        """Deal 0: two purchases, a Four made: the pool stays. Deal 1: one more, a Nap made takes all 3."""
        # deal 1 is dealt by seat 0: seat 1 is its eldest hand, and holds the hearts
        second = _deck(PURCHASE, {1: "AH KH QH JH 10H", 2: "2C 3C 4C 5C 6C", 0: "2D 3D 4D 5D 6D"}, dealer=0)
        session = _session(PURCHASE, _deck(PURCHASE, HEARTS_SWEEP, dealer=2), second, dealer=2)
        events = _apply(session, "exchange:none exchange:2C exchange:2D,3D four pass pass")
        events += _apply(session, "AH 3C 4D  KH 4C 5D  QH 5C 6D  JH 6C 8C  10H 7C 9C")
        assert not any(isinstance(e, PoolClaimed) for e in events)
        assert (session.balances, session.pool) == ((8, -5, -5), 2)
        events = _apply(session, "exchange:none exchange:2C exchange:none nap pass pass")
        events += _apply(session, "AH 3C 2D  KH 4C 3D  QH 5C 4D  JH 6C 5D  10H 7C 6D")
        settled = next(e for e in events if isinstance(e, DealSettled))
        assert settled.payments == (-10, 20, -10)
        assert events[events.index(settled) + 1] == PoolClaimed(1, 3)
        assert (session.balances, session.pool, session.pool_paid) == ((-2, 18, -16), 0, (0, 0, 0))

    def test_misere_is_below_nap_and_does_not_take_the_pool(self) -> None:
        """Misère made (below Nap on the ladder) leaves the pool where it is."""
        hands = {0: "2H 3C 4D 5S 6H", 1: "AH AC AD AS KH", 2: "KC KD KS QH QC"}
        session = _session(PURCHASE, _deck(PURCHASE, hands, dealer=2), dealer=2)
        events = _apply(session, "exchange:none exchange:none exchange:QC misere pass pass")
        events += _apply(session, "2H AH QH  AS KS 5S  AC KC 3C  AD KD 4D  KH 2C 6H")
        settled = next(e for e in events if isinstance(e, DealSettled))
        assert (settled.contract, settled.made) == ("misere", True)
        assert not any(isinstance(e, PoolClaimed) for e in events)
        assert session.pool == 1

    def test_an_unclaimed_pool_goes_back_to_its_payers_at_the_end(self) -> None:
        """Nobody makes Nap: at the session's end each seat gets back what it paid in; it all sums to zero.

        Seats 0 and 2 buy one card in each deal, and everyone passes: eight deals, then a
        tie-break deal among all four (level once the pool is counted back), nine chips each.
        """
        session = Session(PURCHASE, table_size=4, seed=3)
        events: list[Event] = []
        while not session.over:
            deal = session.deal
            if deal.phase is Phase.EXCHANGE:
                seat = deal.to_act or 0
                legal = session.legal_actions()
                events += session.apply(legal[1] if seat % 2 == 0 else legal[0])
            else:
                events += session.apply(PASS)
        returned = [e for e in events if isinstance(e, PoolReturned)]
        assert len(returned) == 1
        assert returned[0].refunds == (9, 0, 9, 0)
        assert len(session.deals) == 9
        assert events[-2] == returned[0]
        assert isinstance(events[-1], SessionOver)
        assert events[-1].balances == session.balances == (0, 0, 0, 0)
        assert session.pool == 0

    def test_tied_leaders_are_told_apart_with_the_pool_back_in_their_hands(self) -> None:
        """The tie-break deal is among the seats that would lead were the pool returned: all three here."""
        session = Session(PURCHASE, table_size=3, seed=4)
        session.apply(session.legal_actions()[1])
        while len(session.deals) < 9:
            deal = session.deal
            session.apply(DECLINE_EXCHANGE if deal.phase is Phase.EXCHANGE else PASS)
        assert session.deal.seats == (0, 1, 2)
        assert sum(session.balances) == -1
        while not session.over:
            session.apply(DECLINE_EXCHANGE if session.deal.phase is Phase.EXCHANGE else PASS)
        assert session.balances == (0, 0, 0)
        assert session.winners == (0, 1, 2)


class TestActionsAndRecords:
    """The new decisions are text on records and the wire, and a pool session replays exactly."""

    @pytest.mark.parametrize(
        "text", ["exchange:2C,9H", "exchange:none", "exchange:10S", "peep", "widow:QH", "widow:none"]
    )
    def test_every_new_action_reads_back_from_its_text_and_repr(self, text: str) -> None:
        """``str()`` is the record's text, ``parse_action`` reads it, ``repr()`` reads back as Python."""
        action = parse_action(text)
        assert str(action) == text
        assert parse_action(str(action)) == action
        assert eval(repr(action)) == action  # noqa: S307 - repr must read back

    def test_exchanged_cards_are_kept_in_pack_order(self) -> None:
        """The same cards in any order are one exchange; the peep is a singleton."""
        assert (
            parse_action("exchange:9H,2C")
            == Exchange((Card("2C"), Card("9H")))
            == Exchange((Card("9H"), Card("2C")))
        )
        assert str(parse_action("EXCHANGE:9h,2c")) == "exchange:2C,9H"
        assert Peep() is PEEP

    @pytest.mark.parametrize(
        "text", ["exchange:", "exchange:2C,,3D", "exchange:1X", "widow:", "widow:ZZ", "peek"]
    )
    def test_a_bad_action_text_is_refused(self, text: str) -> None:
        """Malformed exchange and widow texts are not actions."""
        with pytest.raises(ValueError, match="not an action"):
            parse_action(text)

    def test_a_pool_session_record_replays_and_verifies(self) -> None:
        """The record holds exchange, peep and widow texts; replay gives its balances, refunds included."""
        session = Session(PEEP_NAP, table_size=4, seed=9)
        rng = random.Random(9)
        while not session.over:
            session.apply(rng.choice(session.legal_actions()))
        data = json.loads(json.dumps(record_of(session).to_json()))
        actions = [text for deal in data["deals"] for text in deal["actions"]]
        assert "peep" in actions
        assert any(text.startswith("widow:") for text in actions)
        assert data["rules"]["widow"] is True
        assert data["rules"]["pool_claim"] == "nap"
        record = SessionRecord.from_json(data)
        assert record.profile is PEEP_NAP
        assert verify(record) == []
        lying = dict(
            data,
            balances=[b + (1 if i == 0 else -1 if i == 1 else 0) for i, b in enumerate(data["balances"])],
        )
        assert any("balances" in problem for problem in verify(SessionRecord.from_json(lying)))

    def test_profiles_without_a_pool_keep_their_parameters_as_they_were(self) -> None:
        """The pool parameters appear only in profiles that use them: other records are unchanged."""
        assert not any(
            key in PROFILES["heather"].to_json() for key in ("exchange_max", "widow", "pool_claim")
        )
        assert PURCHASE.to_json()["exchange_max"] == 3
        assert ECARTE.to_json()["exchange_fee_per_card"] is True
