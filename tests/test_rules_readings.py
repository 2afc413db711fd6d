"""Golden tests of seed 001's readings that docs/rules.md states, each from the seed's sentence.

Finite chips and the rebuy ("Um jogador que ficar sem fichas é eliminado (ou pode fazer uma
nova aposta inicial para voltar ao jogo, mediante acordo do grupo)"), the pool variants'
edge cases (a defender's revoke under a Nap, the tie-break deal, a seat eliminated with
chips in the pool, Purchase's "um número determinado de cartas", a fault during the widow
decision) and short packs sized by the table ("28 a 40 cartas dependendo do número de
jogadores").
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from itertools import combinations
from typing import TYPE_CHECKING

import pytest

from referee.rules import (
    CARDS,
    DECLINE_EXCHANGE,
    DECLINE_WIDOW,
    PACKS_BY_TABLE,
    PASS,
    PEEP,
    PROFILES,
    Bid,
    Card,
    CardsExchanged,
    ChipsPaid,
    Deal,
    DealSettled,
    DealStarted,
    Exchange,
    IllegalActionError,
    Penalty,
    Phase,
    PoolClaimed,
    PoolReturned,
    Rank,
    RecordError,
    SeatEliminated,
    SeatRebought,
    Session,
    SessionOver,
    SessionRecord,
    deal_deck,
    first_dealer,
    load_profile,
    pack_of,
    parse_action,
    parse_cards,
    record_of,
    verify,
)
from referee.rules.cards import cards_text

if TYPE_CHECKING:
    from pathlib import Path

    from referee.rules import Action, Event, Profile

PURCHASE = PROFILES["purchase"]
ECARTE = PROFILES["ecarte"]
PEEP_NAP = PROFILES["peep"]


def _accepted(deal: Deal, action: Action) -> bool:
    """Whether ``deal`` accepts ``action`` from the seat to act (its check, the gate of ``apply``)."""
    try:
        deal.check(action, seat=deal.to_act)
    except IllegalActionError:
        return False
    return True


def _verifies(session: Session) -> list[str]:
    """What ``verify`` says of the session's record, through its JSON text as a log stores it."""
    return verify(SessionRecord.from_json(json.loads(json.dumps(record_of(session).to_json()))))


class TestRebuy:
    """Seed 001: a seat out of chips is eliminated, "or may make a new initial stake to return to the game".

    Our reading: with ``rebuy`` the seat comes back into the game with chips. A seat that
    one stake leaves still at zero or below has not come back, so it stakes again, as many
    times as it takes (each stake the starting chips, one :class:`SeatRebought` each).
    """

    RULES = replace(PURCHASE, name="pub", source="tests: house rules", starting_chips=6, rebuy=True)

    def _deep_in_debt(self) -> tuple[Session, list[Event]]:
        """The issue's table, 3 seats and seed 1: a defender's revoke under seat 2's Nap costs seat 0 20."""
        session = Session(self.RULES, table_size=3, seed=1)
        assert session.deal.order == (2, 0, 1)
        events: list[Event] = []
        for action in (DECLINE_EXCHANGE,) * 3 + (Bid("nap"), PASS, PASS, Penalty(0)):
            events += session.apply(action)
        return session, events

    def test_a_seat_far_below_zero_buys_as_many_stakes_as_bring_it_back_with_chips(self) -> None:
        """-20 with stakes of 6: three stakes (6 x 4 - 20 = 4 chips), then it is dealt in with 4 to pay."""
        session, events = self._deep_in_debt()
        assert session.balances == (-20, 0, 20)
        assert [e for e in events if isinstance(e, SeatRebought)] == [SeatRebought(0, 6)] * 3
        assert session.rebuys == [3, 0, 0]
        assert session.stack(0) == 4
        assert isinstance(events[-1], DealStarted)
        assert session.deal.stacks == (4, 6, 26)

    def test_the_seat_back_in_is_offered_what_it_can_pay_and_every_offer_is_accepted(self) -> None:
        """Deal 1: seat 0 may decline or buy up to three cards (1 chip); each offer passes the check."""
        session, _ = self._deep_in_debt()
        deal = session.deal
        assert deal.to_act == 0
        legal = session.legal_actions()
        assert legal[0] == DECLINE_EXCHANGE
        assert max(len(action.cards) for action in legal) == 3  # type: ignore[union-attr]
        for action in legal:
            session.check(action, seat=0)
            deal.copy().apply(action)
        session.apply(DECLINE_EXCHANGE)
        while not session.over:
            session.apply(session.legal_actions()[0])
        assert _verifies(session) == []

    def test_a_deal_given_a_stack_below_zero_still_lets_the_seat_decline(self) -> None:
        """A search may build a deal from guessed stacks: declining costs nothing, offered and accepted."""
        deal = Deal(PURCHASE, deck=CARDS, dealer=2, table_size=3, stacks=(-8, 5, 5))
        assert deal.to_act == 0
        assert deal.legal_actions() == (DECLINE_EXCHANGE,)
        deal.check(DECLINE_EXCHANGE, seat=0)
        deal.check(Exchange(()), seat=0)  # equal, not the same object: the checked path
        with pytest.raises(IllegalActionError, match="cannot pay 1 chip: 0 left"):
            deal.check(Exchange((deal.hands[0][0],)), seat=0)
        assert deal.copy().apply(Exchange(())) == deal.apply(DECLINE_EXCHANGE)

    @pytest.mark.parametrize("stack", range(-3, 7))
    @pytest.mark.parametrize("rules", [PURCHASE, ECARTE], ids=lambda p: p.name)
    def test_the_exchanges_offered_are_exactly_those_accepted(self, rules: Profile, stack: int) -> None:
        """Every set of cards of the hand, whatever the stack: offered if and only if the check accepts it."""
        deal = Deal(rules, deck=CARDS, dealer=2, table_size=3, stacks=(stack, 5, 5))
        hand = deal.hands[0]
        every = [Exchange(cards) for size in range(len(hand) + 1) for cards in combinations(hand, size)]
        assert [action for action in every if _accepted(deal, action)] == list(deal.legal_actions())

    @pytest.mark.parametrize("fee", [0, 1, 2])
    @pytest.mark.parametrize("stack", range(-2, 4))
    def test_the_peep_is_offered_exactly_when_it_is_accepted(self, stack: int, fee: int) -> None:
        """A peep of ``fee`` chips with a stack of ``stack``: offered if and only if the check accepts it."""
        rules = replace(PEEP_NAP, name="peep-fee", source="tests: house rules", peep_fee=fee)
        deal = Deal(rules, deck=CARDS, dealer=2, table_size=3, stacks=(stack, 5, 5))
        assert (PEEP in deal.legal_actions()) == _accepted(deal, PEEP) == (fee == 0 or stack >= fee)


# Three seats, dealer 2: seat 0 is the eldest hand, then seats 1 and 2.
HEARTS_SWEEP = {0: "AH KH QH JH 10H", 1: "2C 3C 4C 5C 6C", 2: "2D 3D 4D 5D 6D"}
SWEEP_PLAY = "AH 2C 2D  KH 3C 3D  QH 4C 4D  JH 5C 5D  10H 6C 6D"
"""Seat 0's hearts take all five tricks (the others follow with their lowest cards, never a heart)."""


def _deck(profile: Profile, hands: dict[int, str], *, dealer: int) -> tuple[Card, ...]:
    """The deck that deals ``hands``; the stock is the rest of the pack in pack order."""
    return Deal.from_hands(
        profile,
        {seat: parse_cards(text) for seat, text in hands.items()},
        dealer=dealer,
        table_size=len(hands),
    ).deck


def _session(profile: Profile, *first: tuple[Card, ...], dealer: int, table_size: int = 3) -> Session:
    """A session whose first deals are ``first`` (``dealer`` deals first), the rest from seed 5."""
    pack = profile.pack_at(table_size)
    decks = [*first, *(deal_deck(5, number, pack=pack) for number in range(len(first), 12))]
    return Session(profile, table_size=table_size, seed=5, dealer=dealer, decks=decks)


def _apply(session: Session, actions: str) -> list[Event]:
    events: list[Event] = []
    for text in actions.split():
        events += session.apply(parse_action(text))
    return events


class TestPoolReadings:
    """The pool (ours: the next Nap made takes it, the rest goes back at the end) by seed 001's sentences."""

    def test_a_defenders_revoke_under_a_nap_claims_the_pool_for_the_declarer(self) -> None:
        """Seed 001: a revoking defender pays "como se o declarante tivesse vencido a declaração".

        As if the Nap were made: the declarer collects what both defenders would have paid
        (from the revoker alone) and takes the pool, as a Nap made does.
        """
        session = _session(PURCHASE, _deck(PURCHASE, HEARTS_SWEEP, dealer=2), dealer=2)
        _apply(session, "exchange:none exchange:2C exchange:2D nap pass pass AH")
        assert session.pool == 2
        events = session.apply(Penalty(1))
        settled = next(e for e in events if isinstance(e, DealSettled))
        assert (settled.contract, settled.made, settled.payments) == ("nap", True, (20, -20, 0))
        assert events[events.index(settled) + 1] == PoolClaimed(0, 2)
        assert (session.balances, session.pool) == ((22, -21, -1), 0)

    def test_a_declarers_revoke_under_a_nap_leaves_the_pool(self) -> None:
        """Seed 001: a declarer who revokes "paga aos adversários como se tivesse perdido a declaração"."""
        session = _session(PURCHASE, _deck(PURCHASE, HEARTS_SWEEP, dealer=2), dealer=2)
        _apply(session, "exchange:none exchange:2C exchange:2D nap pass pass AH")
        events = session.apply(Penalty(0))
        settled = next(e for e in events if isinstance(e, DealSettled))
        assert (settled.made, settled.payments) == (False, (-10, 5, 5))
        assert not any(isinstance(e, PoolClaimed) for e in events)
        assert session.pool == 2

    def test_the_tie_break_deal_is_among_the_leaders_with_the_pool_counted_back_and_may_claim_it(
        self,
    ) -> None:
        """Seed 001: tied players play "uma mão extra somente entre os jogadores empatados".

        Ours: tied as they would stand were the pool returned then. One deal a session:
        seat 0 buys a card (balance -1, 1 in the pool) and all pass; counted back, all
        three are level, so all three play the extra deal; seat 1's Nap in it takes the
        pool, and seat 1 wins.
        """
        rules = replace(PURCHASE, name="one-deal", source="tests: house rules", deals_per_session=1)
        tie_break = _deck(rules, {1: "AH KH QH JH 10H", 2: "2C 3C 4C 5C 6C", 0: "2D 3D 4D 5D 6D"}, dealer=0)
        session = _session(rules, _deck(rules, HEARTS_SWEEP, dealer=2), tie_break, dealer=2)
        events = _apply(session, "exchange:10H exchange:none exchange:none pass pass pass")
        assert session.balances == (-1, 0, 0)
        assert events[-1] == DealStarted(1, 0, (0, 1, 2))
        assert session.deals_in_session == 2
        events = _apply(session, "exchange:none exchange:none exchange:none nap pass pass")
        events += _apply(session, "AH 2C 2D  KH 3C 3D  QH 4C 4D  JH 5C 5D  10H 6C 6D")
        assert PoolClaimed(1, 1) in events
        assert not any(isinstance(e, PoolReturned) for e in events)
        assert events[-1] == SessionOver((-11, 21, -10), (1,))

    def test_a_seat_eliminated_with_chips_in_the_pool_gets_them_back_at_the_end_and_cannot_win(self) -> None:
        """Seed 001: "Um jogador que ficar sem fichas é eliminado"; ours: the pool is on the table.

        Seat 0 (5 chips) buys a card, then revokes as Nap declarer: 15 to pay, its stack
        falls below zero and it leaves, its chip still in the pool for the next Nap. Nobody
        makes one: at the end the pool goes back to seat 0, which is not among the winners.
        """
        rules = replace(
            PURCHASE, name="short", source="tests: house rules", starting_chips=5, deals_per_session=2
        )
        hands = {0: "AH KH QH JH 10H", 1: "2C 3C 4C 5C 6C", 2: "2D 3D 4D 5D 6D", 3: "2S 3S 4S 5S 6S"}
        session = _session(rules, _deck(rules, hands, dealer=3), dealer=3, table_size=4)
        _apply(session, "exchange:10H exchange:none exchange:none exchange:none nap pass pass pass AH")
        events = session.apply(Penalty(0))
        assert SeatEliminated(0) in events
        assert (session.balances, session.pool, session.pool_paid) == ((-16, 5, 5, 5), 1, (1, 0, 0, 0))
        assert session.in_play == [1, 2, 3]
        while not session.over:
            events = session.apply(session.legal_actions()[0])  # decline, pass: nobody declares
        assert events[-2:] == (PoolReturned((1, 0, 0, 0)), SessionOver((-15, 5, 5, 5), (1, 2, 3)))
        assert _verifies(session) == []


class TestPurchaseUpToN:
    """Seed 001's Purchase Nap: "pagar uma aposta para trocar um número determinado de cartas".

    Ours: the number the table determined (``exchange_max``, 3) is the most; a seat gives
    up 1 to that many, for the one stake, whatever the count.
    """

    @pytest.mark.parametrize("given", ["10H", "10H,JH", "10H,JH,QH"])
    def test_one_two_or_three_cards_cost_the_same_one_stake(self, given: str) -> None:
        session = _session(PURCHASE, _deck(PURCHASE, HEARTS_SWEEP, dealer=2), dealer=2)
        count = given.count(",") + 1
        assert session.apply(parse_action(f"exchange:{given}")) == (CardsExchanged(0, count), ChipsPaid(0, 1))

    def test_more_than_the_number_determined_is_refused(self) -> None:
        session = _session(PURCHASE, _deck(PURCHASE, HEARTS_SWEEP, dealer=2), dealer=2)
        sizes = {len(action.cards) for action in session.legal_actions()}  # type: ignore[union-attr]
        assert sizes == {0, 1, 2, 3}
        with pytest.raises(IllegalActionError, match="a purchase exchanges at most 3 cards"):
            session.apply(parse_action("exchange:10H,JH,QH,KH"))
        two = replace(PURCHASE, name="two", source="tests: house rules", exchange_max=2)
        session = _session(two, _deck(two, HEARTS_SWEEP, dealer=2), dealer=2)
        assert {len(action.cards) for action in session.legal_actions()} == {0, 1, 2}  # type: ignore[union-attr]
        with pytest.raises(IllegalActionError, match="a purchase exchanges at most 2 cards"):
            session.apply(parse_action("exchange:10H,JH,QH"))


class TestPenaltyDuringTheWidowDecision:
    """Seed 001: "Deixar de seguir o naipe quando se tem cartas desse naipe é uma revogação".

    Ours: a revoke is a card played, so the revoke penalty settles only during the play.
    At the widow decision the engine refuses it, and the referee's revoke policy plays the
    fallback for a faulting declarer there (declining the widow; tests/test_match.py).
    """

    def test_a_penalty_is_refused_at_the_widow_and_accepted_once_the_play_begins(self) -> None:
        deck = Deal.from_hands(
            PEEP_NAP,
            {seat: parse_cards(text) for seat, text in HEARTS_SWEEP.items()},
            dealer=2,
            table_size=3,
            widow=Card("7C"),
        ).deck
        session = _session(PEEP_NAP, deck, dealer=2)
        _apply(session, "nap pass pass")
        assert session.deal.phase is Phase.WIDOW
        for seat in (0, 1):
            with pytest.raises(
                IllegalActionError, match="a penalty settles a declared contract: only during the play"
            ):
                session.check(Penalty(seat))
        assert session.legal_actions()[0] == DECLINE_WIDOW
        session.apply(DECLINE_WIDOW)
        assert session.view(1).phase is Phase.PLAY
        session.check(Penalty(1))


class TestShortPacksByTable:
    """Seed 001: "Algumas variações encurtam o baralho para 28 a 40 cartas dependendo do número de jogadores".

    Ours (``pack_size = "by-table"``): 28 cards for 3 or 4 players, then a rank (4 cards)
    more for each player more, 40 for 7; or the table's own ``[pack_sizes]``.
    """

    @staticmethod
    def _rules(tmp_path: Path, text: str) -> Profile:
        path = tmp_path / "pub.toml"
        path.write_text(f'name = "pub"\n{text}', encoding="utf-8")
        return load_profile(path)

    def test_by_table_deals_28_cards_to_three_or_four_and_a_rank_more_a_player_up_to_40(
        self, tmp_path: Path
    ) -> None:
        """Every deck, the first-dealer draw and the views come from the pack of the table's size."""
        rules = self._rules(tmp_path, 'base = "full-ladder"\npack_size = "by-table"\n')
        assert rules.pack_sizes == PACKS_BY_TABLE == ((3, 28), (4, 28), (5, 32), (6, 36), (7, 40))
        lowest = {28: Rank.EIGHT, 32: Rank.SEVEN, 36: Rank.SIX, 40: Rank.FIVE}
        for seats, cards in PACKS_BY_TABLE:
            session = Session(rules, table_size=seats, seed=seats)
            pack = rules.pack_at(seats)
            assert session.profile.pack == pack == pack_of(cards)
            assert min(card.rank for card in pack) is lowest[cards]
            assert session.first_dealer == first_dealer(seats, seats, pack=pack)
            assert session.deal.deck == deal_deck(seats, 0, pack=pack)
            assert sorted(session.deal.deck) == list(pack)
            assert session.view(0).visible_cards <= set(pack)

    def test_by_table_keeps_the_table_sizes_the_house_rules_seat(self, tmp_path: Path) -> None:
        rules = self._rules(tmp_path, 'base = "purchase"\npack_size = "by-table"\nmax_players = 5\n')
        assert rules.pack_sizes == ((3, 28), (4, 28), (5, 32))

    def test_a_table_of_sizes_in_house_rules_and_pack_size_for_the_others(self, tmp_path: Path) -> None:
        rules = self._rules(tmp_path, 'base = "heather"\npack_size = 36\n[pack_sizes]\n7 = 52\n3 = 32\n')
        assert rules.pack_sizes == ((3, 32), (7, 52))
        assert [rules.pack_size_at(seats) for seats in range(3, 8)] == [32, 36, 36, 36, 52]
        assert rules.at_table(4) is rules
        assert rules.at_table(7).pack_size == 52
        assert rules.at_table(7) is rules.at_table(7) is rules.at_table(7).at_table(7)

    def test_a_deal_plays_its_tables_pack(self) -> None:
        """A deal of a profile with pack_sizes plays it at its table; a card of another pack is refused."""
        rules = replace(PROFILES["heather"], name="by-table", source="tests", pack_sizes=PACKS_BY_TABLE)
        deal = Deal(rules, deck=pack_of(32), dealer=0, table_size=5)
        assert deal.profile is rules.at_table(5)
        assert deal.profile.pack_size == 32
        with pytest.raises(ValueError, match=r"7C is not in the 28-card pack of by-table \(Ace down to 8\)"):
            Deal(rules, deck=pack_of(32), dealer=0, table_size=4)
        hands = {seat: parse_cards(text) for seat, text in HEARTS_SWEEP.items()}
        with pytest.raises(ValueError, match=r"2C is not in the 28-card pack of by-table"):
            Deal.from_hands(rules, hands, dealer=2, table_size=3)
        hands = {
            0: parse_cards("AH KH QH JH 10H"),
            1: parse_cards("8C 9C 10C JC QC"),
            2: parse_cards("8D 9D 10D JD QD"),
        }
        assert len(Deal.from_hands(rules, hands, dealer=2, table_size=3).deck) == 28

    @pytest.mark.parametrize("seats", [3, 5, 7])
    def test_a_record_holds_the_tables_pack_and_the_rule_and_log_verify_replays_it(self, seats: int) -> None:
        """The rules of a record give this table's pack_size and the pack_sizes that chose it."""
        rules = replace(
            PURCHASE,
            name="pub",
            source="tests: house rules",
            pack_sizes=PACKS_BY_TABLE,
            starting_chips=6,
            rebuy=True,
        )
        session = Session(rules, table_size=seats, seed=seats)
        rng = random.Random(seats)
        while not session.over:
            session.apply(rng.choice(session.legal_actions()))
        data = json.loads(json.dumps(record_of(session).to_json()))
        cards = rules.pack_size_at(seats)
        assert data["rules"]["pack_size"] == cards
        assert data["rules"]["pack_sizes"] == {"3": 28, "4": 28, "5": 32, "6": 36, "7": 40}
        assert {len(deal["deck"].split()) for deal in data["deals"]} == {cards}
        record = SessionRecord.from_json(data)
        assert record.profile == rules.at_table(seats)
        assert verify(record) == []
        unresolved = dict(data, rules=dict(data["rules"], pack_size=52))  # the rule alone chooses the pack
        assert verify(SessionRecord.from_json(unresolved)) == []
        whole = json.loads(json.dumps(data))
        whole["deals"][0]["deck"] = cards_text(CARDS)
        with pytest.raises(RecordError, match=f"a deck must hold each of the {cards} cards of the pack once"):
            SessionRecord.from_json(whole)
