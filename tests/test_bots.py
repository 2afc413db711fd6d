"""The example bots, played in-process through ``referee.rules.Session`` (no network)."""

from __future__ import annotations

import math
import statistics

import pytest

from clients.bots.peel import (
    PeelBot,
    beats,
    best_trump,
    choose_bid,
    choose_card,
    trick_winner,
)
from clients.bots.random_bot import RandomBot
from clients.sdk import PASS, Bid, Bot, Card, SeatView
from clients.sdk.local import play_local
from referee.rules import (
    PROFILES,
    Action,
    Deal,
    Phase,
    get_profile,
    parse_action,
    parse_cards,
    record_of,
    seat_view,
)

HEATHER = get_profile("heather")
FULL_LADDER = get_profile("full-ladder")


def _bots(kinds: str, seed: int) -> list[Bot]:
    """``"prpr"``: a Peel bot for each p, a random bot (seeded per seat) for each r."""
    return [PeelBot() if kind == "p" else RandomBot(seed=seed * 10 + seat) for seat, kind in enumerate(kinds)]


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
    @pytest.mark.parametrize("profile", sorted(PROFILES))
    def test_thousands_of_seeded_deals(self, profile: str) -> None:
        """Peel and random bots, every table size of every profile: no illegal action ever.

        ``play_local`` raises IllegalActionError at the first illegal answer.
        """
        rules = PROFILES[profile]
        deals = 0
        for seats in range(rules.min_players, rules.max_players + 1):
            for seed in range(40):
                kinds = "".join("pr"[(seed + seat) % 2] for seat in range(seats))
                session = play_local(_bots(kinds, seed), seed=seed, profile=rules)
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

    @pytest.mark.parametrize("profile", ["full-ladder", "two-to-five"])
    def test_also_under_the_other_profiles(self, profile: str) -> None:
        results = []
        for seed in range(200):
            seat = seed % 4
            kinds = "rrrr"[:seat] + "p" + "rrrr"[seat + 1 :]
            session = play_local(_bots(kinds, seed), seed=seed, profile=PROFILES[profile])
            results.append(session.balances[seat])
        assert statistics.fmean(results) > 10


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

    def test_random_bot_seeds_per_table_and_seat(self) -> None:
        deal = _dealt(HANDS)
        view = seat_view(deal, 0)
        choices = set()
        for table in "abcdefgh":
            bot = RandomBot(seed=1)
            bot.table, bot.seat = table, 0
            choices.add(tuple(bot.decide(view) for _ in range(5)))
        assert len(choices) > 1
