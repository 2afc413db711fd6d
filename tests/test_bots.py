"""The example bots, played in-process through ``referee.rules.Session`` (no network)."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from clients.bots.hand_value import beats, best_trump, holding_chance, misere_hand, trick_winner
from clients.bots.peel import PeelBot, choose_bid, choose_card
from clients.bots.random_bot import RandomBot
from clients.bots.table_rules import table_rules
from clients.sdk import PASS, Bid, Bot, Card, SeatView
from clients.sdk.local import play_local
from referee.rules import (
    PACKS_BY_TABLE,
    PROFILES,
    Action,
    Deal,
    Phase,
    Profile,
    ProfileError,
    Session,
    get_profile,
    pack_of,
    parse_action,
    parse_cards,
    record_of,
    seat_view,
)

if TYPE_CHECKING:
    from pathlib import Path

HEATHER = get_profile("heather")
FULL_LADDER = get_profile("full-ladder")
SEVEN_CARD = get_profile("seven-card")
PACK_32 = replace(FULL_LADDER, name="pack-32", source="tests: house rules", pack_size=32, max_players=6)
"""House rules: full-ladder with a 32-card pack (Ace down to 7), so at most six seats."""


def _bots(kinds: str, seed: int, profile: Profile | None = None) -> list[Bot]:
    """``"prpr"``: a Peel bot for each p, a random bot (seeded per seat) for each r.

    ``profile`` is given to the Peel bots (house rules are not built in).
    """
    return [
        PeelBot(profile=profile) if kind == "p" else RandomBot(seed=seed * 10 + seat)
        for seat, kind in enumerate(kinds)
    ]


class Watch(Bot):
    """Wraps a bot and checks an invariant on each of its decisions."""

    def __init__(self, inner: Bot, check: object) -> None:
        self.inner = inner
        self.check = check
        self.decisions = 0

    def decide(self, view: SeatView) -> Action:
        action = self.inner.decide(view)
        assert action in view.legal_actions, (view, action)
        self.check(view, action)  # type: ignore[operator]
        self.decisions += 1
        return action


@pytest.mark.slow
class TestEveryDecisionIsLegal:
    @pytest.mark.parametrize("profile", [*sorted(PROFILES), PACK_32.name])
    def test_thousands_of_seeded_deals(self, profile: str) -> None:
        """Peel and random bots, every table size of every profile: no illegal action ever.

        Seven-card Nap, a 32-card pack and the pool variants (exchanges, peeps, the widow)
        included. ``play_local`` raises IllegalActionError at the first illegal answer.
        """
        rules = PROFILES.get(profile, PACK_32)
        deals = 0
        for seats in range(rules.min_players, rules.max_players + 1):
            for seed in range(40):
                kinds = "".join("pr"[(seed + seat) % 2] for seat in range(seats))
                session = play_local(_bots(kinds, seed, rules), seed=seed, profile=rules)
                assert session.over
                assert sum(session.balances) == 0
                deals += len(session.deals)
        assert deals >= 1000


@pytest.mark.slow
class TestPeelBeatsRandom:
    def test_mean_result_at_four_seats(self) -> None:
        """One Peel bot against three random bots, Peel's seat rotating: Peel wins chips.

        Seeded, so not flaky; the margin is three standard errors above zero and a
        floor of 10 chips a session (observed: about 45).
        """
        results = []
        for seed in range(400):
            seat = seed % 4
            kinds = "rrrr"[:seat] + "p" + "rrrr"[seat + 1 :]
            session = play_local(_bots(kinds, seed), seed=seed, profile=HEATHER)
            results.append(session.balances[seat])
        mean = statistics.fmean(results)
        error = statistics.stdev(results) / math.sqrt(len(results))
        assert mean > 10
        assert mean - 3 * error > 0

    @pytest.mark.parametrize("profile", ["full-ladder", "two-to-five", "seven-card", PACK_32.name])
    def test_also_under_the_other_profiles(self, profile: str) -> None:
        """Seven-card Nap and a 32-card pack too (observed: about 78 and 46 chips a session)."""
        rules = PROFILES.get(profile, PACK_32)
        results = []
        for seed in range(200):
            seat = seed % 4
            kinds = "rrrr"[:seat] + "p" + "rrrr"[seat + 1 :]
            session = play_local(_bots(kinds, seed, rules), seed=seed, profile=rules)
            results.append(session.balances[seat])
        mean = statistics.fmean(results)
        error = statistics.stdev(results) / math.sqrt(len(results))
        assert mean > 10
        assert mean - 3 * error > 0


def _dealt(hands: dict[int, str], *, dealer: int = 3) -> Deal:
    return Deal.from_hands(
        HEATHER,
        {seat: parse_cards(text) for seat, text in hands.items()},
        dealer=dealer,
        table_size=len(hands),
    )


def _apply(deal: Deal, *actions: str) -> None:
    for text in actions:
        deal.apply(parse_action(text))


HANDS = {  # seat 0 declares; seats 1-3 defend
    0: "AH KH 7H 4H 2C",
    1: "9D 3S 4S 5S 6S",
    2: "KD 3D 7C 8C 9C",
    3: "8D 10C JC QC KC",
}


class TestPeelDefends:
    def test_never_overtakes_a_fellow_defenders_winning_card(self) -> None:
        """Seat 1 (a defender) is winning with 9D; seat 2 holds KD and 3D: it plays 3D."""
        deal = _dealt({0: "2D AH KH 7H 4H", 1: "9D 3S 4S 5S 6S", 2: "KD 3D 7C 8C 9C", 3: "8D 10C JC QC KC"})
        _apply(deal, "three", "pass", "pass", "pass", "AH", "3S", "7C", "10C")
        # the declarer won trick 1 (hearts trump); it leads 2D, seat 1 wins it so far with 9D
        _apply(deal, "2D", "9D")
        view = seat_view(deal, 2)
        assert set(view.legal_actions) == {Card("KD"), Card("3D")}
        assert choose_card(view) == Card("3D")

    def test_wins_cheaply_over_the_declarer(self) -> None:
        """The declarer's 8D is winning; seat 2 holds KD, 9D: it wins with the 9D."""
        deal = _dealt({0: "8D AH KH 7H 4H", 1: "2D 3S 4S 5S 6S", 2: "KD 9D 7C 8C 9C", 3: "3D 10C JC QC KC"})
        _apply(deal, "three", "pass", "pass", "pass", "AH", "3S", "7C", "10C", "8D", "2D")
        assert choose_card(seat_view(deal, 2)) == Card("9D")

    def test_discards_low_rather_than_trumping_a_partner(self) -> None:
        """Void in the suit led, with a fellow defender winning: the lowest side card, no trump."""
        deal = _dealt({0: "2D AH KH 7H 4H", 1: "9D 3S 4S 5S 6S", 2: "5H 6H 7C 8C 9C", 3: "8D 10C JC QC KC"})
        _apply(deal, "three", "pass", "pass", "pass", "AH", "3S", "5H", "10C", "2D", "9D")
        view = seat_view(deal, 2)
        assert Card("6H") in view.legal_actions
        assert choose_card(view) == Card("7C")

    @pytest.mark.slow
    def test_the_rule_holds_in_every_position_of_many_sessions(self) -> None:
        """Whenever a fellow defender is winning and Peel can stay under, it stays under."""
        checked = 0

        def check(view: SeatView, action: Action) -> None:
            nonlocal checked
            if (
                view.phase is not Phase.PLAY
                or not view.trick
                or view.declarer == view.seat
                or view.contract == "misere"
            ):
                return
            winner, best = trick_winner(view.trick, view.trump)
            if winner == view.declarer:
                return
            under = [c for c in view.legal_actions if isinstance(c, Card) and not beats(c, best, view.trump)]
            if under:
                checked += 1
                assert isinstance(action, Card)
                assert not beats(action, best, view.trump), view

        for seed in range(150):
            bots: list[Bot] = [Watch(PeelBot(), check) for _ in range(4)]
            play_local(bots, seed=seed, profile=HEATHER)
        assert checked > 100


class TestPeelDeclares:
    def test_leads_the_strongest_suit_then_trumps_from_the_top(self) -> None:
        deal = _dealt({0: "AH KH 7H 4H 2C", 1: "9D 3S 4S 5S 6S", 2: "KD 3D 7C 8C 9C", 3: "8D 10C JC QC KC"})
        _apply(deal, "four", "pass", "pass", "pass")
        view = seat_view(deal, 0)
        assert best_trump(view.hand, opponents=3)[0].letter == "H"
        assert choose_card(view) == Card("AH")
        _apply(deal, "AH", "3S", "3D", "10C")
        assert choose_card(seat_view(deal, 0)) == Card("KH")
        _apply(deal, "KH", "4S", "7C", "JC")
        assert choose_card(seat_view(deal, 0)) == Card("7H")

    def test_bids_the_highest_contract_it_expects_to_make(self) -> None:
        deal = _dealt({0: "AH KH QH JH 10H", 1: "9D 3S 4S 5S 6S", 2: "KD 3D 7C 8C 9C", 3: "8D 10C JC QC KC"})
        assert choose_bid(seat_view(deal, 0)) == Bid("nap")
        weak = _dealt({0: "2H 5D 7S 2C 4C", 1: "9D 3S 4S 5S 6S", 2: "KD 3D 7C 8C 9C", 3: "8D 10C JC QC KC"})
        assert choose_bid(seat_view(weak, 0)) is PASS

    def test_bids_misere_on_a_very_low_hand_where_the_profile_has_it(self) -> None:
        hands = {0: "2H 3D 4S 2C 6H", 1: "9D 3S 10S 5S 6S", 2: "KD 3C 7C 8C 9C", 3: "8D 10C JC QC KC"}
        full = Deal.from_hands(
            FULL_LADDER, {s: parse_cards(t) for s, t in hands.items()}, dealer=3, table_size=4
        )
        assert choose_bid(seat_view(full, 0)) == Bid("misere")
        heather = _dealt(hands)
        assert choose_bid(seat_view(heather, 0)) is PASS

    @pytest.mark.slow
    def test_every_trump_lead_after_the_first_is_the_highest_trump(self) -> None:
        """In many sessions: while trumps are out, a Peel declarer leads its highest trump."""
        checked = 0

        def check(view: SeatView, action: Action) -> None:
            nonlocal checked
            if view.phase is not Phase.PLAY or view.trick or view.declarer != view.seat or view.trump is None:
                return
            trumps = [c for c in view.hand if c.suit is view.trump]
            out = 13 - len(trumps) - sum(1 for c in view.played if c.suit is view.trump)
            if trumps and out:
                checked += 1
                assert action == max(trumps, key=lambda c: c.rank)

        for seed in range(150):
            play_local([Watch(PeelBot(), check) for _ in range(4)], seed=seed, profile=HEATHER)
        assert checked > 100


class TestDeterminism:
    def test_same_seed_same_session(self) -> None:
        """Random bots replay exactly from their seed; Peel is deterministic outright."""
        first = record_of(play_local(_bots("prpr", 7), seed=7, profile=HEATHER))
        again = record_of(play_local(_bots("prpr", 7), seed=7, profile=HEATHER))
        assert first == again

    def test_play_local_takes_a_profile_by_name_as_the_command_line_does(self, tmp_path: Path) -> None:
        """`profile="peep"` plays Peep Nap; a house-rules file too; an unknown name lists the known ones."""
        peep = play_local(_bots("rrrr", 3), seed=3, profile="peep")
        assert peep.profile is PROFILES["peep"]
        assert record_of(peep) == record_of(play_local(_bots("rrrr", 3), seed=3, profile=PROFILES["peep"]))
        house = tmp_path / "pub.toml"
        house.write_text('name = "pub"\nbase = "heather"\ndeals_per_session = 2\n', encoding="utf-8")
        assert len(play_local(_bots("prp", 5), seed=5, profile=str(house)).deals) == 2
        with pytest.raises(ProfileError, match=r"unknown rules profile 'peeps' \(built in: heather, "):
            play_local(_bots("rrr", 1), seed=1, profile="peeps")

    def test_random_bot_seeds_per_table_and_seat(self) -> None:
        deal = _dealt(HANDS)
        view = seat_view(deal, 0)
        choices = set()
        for table in "abcdefgh":
            bot = RandomBot(seed=1)
            bot.table, bot.seat = table, 0
            choices.add(tuple(bot.decide(view) for _ in range(5)))
        assert len(choices) > 1


SEVEN_HANDS = {  # the other hands of a 4-seat seven-card deal (seat 0 speaks first)
    1: "2D 3D 4D 5D 6D 7D 8D",
    2: "2H 3H 4H 5H 6H 7H 8H",
    3: "4C 5C 6C 7C 8C 9C 10C",
}


def _seven_card_view(hand: str) -> SeatView:
    hands = {0: parse_cards(hand), **{seat: parse_cards(text) for seat, text in SEVEN_HANDS.items()}}
    return seat_view(Deal.from_hands(SEVEN_CARD, hands, dealer=3, table_size=4), 0)


class TestPeelAtSevenCards:
    """Seven cards each: the estimate and the thresholds reach Six and Seven."""

    @pytest.mark.parametrize(
        ("hand", "bid"),
        [
            ("AS KS QS JS 10S 9S 8S", "seven"),
            ("AS KS QS JS 10S 9S 2C", "six"),
            ("AS KS QS 7S AH 2C 3C", "nap"),
            ("10S 9S 2S 9H 10D 2C 3C", "pass"),
        ],
    )
    def test_bids_what_the_hand_is_worth(self, hand: str, bid: str) -> None:
        view = _seven_card_view(hand)
        assert {Bid("six"), Bid("seven")} <= set(view.legal_actions)
        assert choose_bid(view) == (PASS if bid == "pass" else Bid(bid))

    def test_the_same_five_cards_never_reach_past_nap(self) -> None:
        """Five top trumps are a Nap with five cards, and only worth a Nap with seven cards."""
        assert choose_bid(seat_view(_dealt({**HANDS, 0: "AS KS QS JS 10S"}), 0)) == Bid("nap")
        assert best_trump(parse_cards("AS KS QS JS 10S"), opponents=3)[1] == 5.0

    def test_holding_chance_counts_the_hands_and_the_pack(self) -> None:
        assert holding_chance(3) == pytest.approx(15 / 47)
        assert holding_chance(3, hand_size=7) == pytest.approx(21 / 45)
        assert holding_chance(3, pack_size=32) == pytest.approx(15 / 27)


class TestPeelWithAShortPack:
    """A 32-card pack (Ace down to 7) changes what is still out and what is low."""

    def test_stops_drawing_trumps_once_the_packs_trumps_are_all_out(self) -> None:
        """All eight hearts of the 32 cards seen: the declarer cashes a side Ace, not the QH.

        Read as a 52-card pack, the 6H down to 2H would still be out, and it would lead trumps.
        """
        hands = {0: "AH KH QH AC KC", 1: "JH 10H 7C 8C 9C", 2: "9H 8H 7D 8D 9D", 3: "7H 10C JC QC 10D"}
        deal = Deal.from_hands(PACK_32, {s: parse_cards(t) for s, t in hands.items()}, dealer=3, table_size=4)
        _apply(deal, "three", "pass", "pass", "pass", "AH", "JH", "9H", "7H", "KH", "10H", "8H", "10C")
        view = seat_view(deal, 0)
        assert choose_card(view, PACK_32) == Card("AC")
        assert choose_card(view, FULL_LADDER) == Card("QH")
        assert PeelBot(profile=PACK_32).decide(view) == Card("AC")

    def test_misere_is_low_for_the_pack(self) -> None:
        sevens = parse_cards("7C 8D 9H 7S 8C")
        assert misere_hand(sevens, pack=PACK_32.pack)
        assert not misere_hand(sevens)
        assert misere_hand(parse_cards("JC 7D 8H 7S 8C"), pack=PACK_32.pack)
        assert not misere_hand(parse_cards("QC 7D 8H 7S 8C"), pack=PACK_32.pack)
        assert misere_hand(parse_cards("2C 3D 4H 5S 9C"))

    def test_bids_misere_on_such_a_hand(self) -> None:
        hands = {0: "7C 8D 9H 7S 8C", 1: "AS KS QS JS 10S", 2: "AH KH QH JH 10H", 3: "AD KD QD JD 10D"}
        deal = Deal.from_hands(PACK_32, {s: parse_cards(t) for s, t in hands.items()}, dealer=3, table_size=4)
        assert choose_bid(seat_view(deal, 0), PACK_32) == Bid("misere")


class TestTableRules:
    """A bot reads its table's profile from the view's name, else from what the view shows."""

    def test_a_built_in_name_is_that_profile(self) -> None:
        assert table_rules(_seven_card_view("AS KS QS JS 10S 9S 8S")) is SEVEN_CARD
        assert table_rules(_seven_card_view("AS KS QS JS 10S 9S 8S"), given=PACK_32) is SEVEN_CARD

    def test_house_rules_the_bot_was_given(self) -> None:
        """The bot's own house rules, whatever they are called, before anything read from the view."""
        hands = {0: "7C 8D 9H 7S 8C", 1: "AS KS QS JS 10S", 2: "AH KH QH JH 10H"}
        deal = Deal.from_hands(PACK_32, {s: parse_cards(t) for s, t in hands.items()}, dealer=2, table_size=3)
        assert table_rules(seat_view(deal, 0), given=PACK_32) is PACK_32
        elsewhere = replace(PACK_32, name="the-pub-next-door")
        assert table_rules(seat_view(deal, 0), given=elsewhere) is elsewhere

    def test_house_rules_with_packs_by_table_size_give_the_pack_of_the_views_table(self) -> None:
        """`pack_size = "by-table"`: a bot at a table of five plays its 32-card pack; Peel plays it out."""
        pub = replace(FULL_LADDER, name="pub", source="tests: house rules", pack_sizes=PACKS_BY_TABLE)
        session = Session(pub, table_size=5, seed=3)
        rules = table_rules(session.view(0), given=pub)
        assert rules is pub.at_table(5)
        assert rules.pack == pack_of(32)
        played = play_local([PeelBot(profile=pub) for _ in range(5)], seed=3, profile=pub)
        assert {len(deal.deck) for deal in played.deals} == {32}

    @pytest.mark.parametrize("base", ["heather", "full-ladder"])
    def test_house_rules_it_was_not_given_take_the_ladder_from_the_bids(self, base: str) -> None:
        """The bids legal or made tell the ladder: Misère is full-ladder's, not heather's."""
        pub = replace(PROFILES[base], name="pub", source="tests: house rules", pack_size=32, max_players=6)
        hands = {0: "7C 8D 9H 7S 8C", 1: "AS KS QS JS 10S", 2: "AH KH QH JH 10H"}
        deal = Deal.from_hands(pub, {s: parse_cards(t) for s, t in hands.items()}, dealer=2, table_size=3)
        assert table_rules(seat_view(deal, 0)) is PROFILES[base]
        deal.apply(Bid("three"))
        assert table_rules(seat_view(deal, deal.to_act)) is PROFILES[base]  # type: ignore[arg-type]

    def test_house_rules_it_was_not_given_take_the_hand_size_from_the_view(self) -> None:
        """Seven cards in hand and in play: a seven-card profile, whatever the house rules' name."""
        pub = replace(SEVEN_CARD, name="pub", source="tests: house rules", deals_per_session=4)
        session = play_local([PeelBot(profile=pub) for _ in range(3)], seed=4, profile=pub)
        deal = session.deals[-1]
        assert deal.tricks
        view = seat_view(deal, 1)
        assert not view.hand
        assert table_rules(view).hand_size == 7
        assert table_rules(view) is SEVEN_CARD
