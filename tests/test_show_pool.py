"""The pool variants on every display: `nap log show` (and `--seat`), the replay page, `nap rules show`.

A seat sees its own exchange (the cards it gave up and drew), the widow once it peeped or
took it, and of the others only what is public: how many cards they exchanged, what they
paid, that they peeped, that the declarer took the widow.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from clients.bots.peel import PeelBot
from clients.bots.peel_pool import PoolPolicy
from clients.bots.random_bot import RandomBot
from clients.sdk.local import play_local
from referee.rules import (
    PEEP,
    Card,
    Exchange,
    PoolClaimed,
    PoolReturned,
    SessionRecord,
    TakeWidow,
    get_profile,
    record_of,
    replay,
    seat_view,
)
from tests.test_replay_page import cards_within, dump_dom, embedded
from tournaments.cli import main
from tournaments.report.replay_page import render_replay_html, replay_data
from tournaments.report.session_text import render_session, walk

if TYPE_CHECKING:
    from pathlib import Path

    from referee.rules import Deal

BOTS = ["peel", "random", "peel", "random"]
PRETTY = re.compile(r"(10|[2-9JQKA])([♣♦♥♠])")
LETTER = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
TRICK_LINE = re.compile(r"^    \d+\. ")


PINNED = PoolPolicy(exchange_below=4.3, paid_cards=3, peep_margin=1.5, blind_widow=True)
"""Peel's pool policy for these sessions, pinned so that retuning Peel leaves them as they are."""


def _record(profile: str, seed: int) -> SessionRecord:
    """A whole session of Peel and random bots (both exchange, peep and take the widow)."""
    bots = [PeelBot(policy=PINNED), RandomBot(seed=seed), PeelBot(policy=PINNED), RandomBot(seed=seed + 1)]
    return record_of(play_local(bots, seed=seed, profile=get_profile(profile)))


@pytest.fixture(scope="module")
def records() -> dict[str, SessionRecord]:
    """Seeds in which a Nap takes the pool (and, in Purchase and Écarté, a pool goes back at the end)."""
    seeds = {"purchase": 4, "ecarte": 8, "peep": 10}
    return {profile: _record(profile, seed) for profile, seed in seeds.items()}


def _cards_in(text: str) -> set[Card]:
    return {Card(rank + LETTER[suit]) for rank, suit in PRETTY.findall(text)}


def _deal_blocks(text: str) -> list[str]:
    """The text of each deal, trick lines left out (they show cards as played, seen by all)."""
    blocks = re.split(r"\n(?=Deal \d+)", text)[1:]
    return ["\n".join(line for line in block.splitlines() if not TRICK_LINE.match(line)) for block in blocks]


def _final(record: SessionRecord) -> list[Deal]:
    return list(replay(record).deals)


class TestLogShow:
    def test_the_table_shows_each_exchange_with_its_cards(self, records: dict[str, SessionRecord]) -> None:
        """How many cards, the fee, the cards given up and those drawn; declining too."""
        for profile in ("purchase", "ecarte"):
            record = records[profile]
            for deal, block in zip(
                _final(record), _deal_blocks(render_session(record, bots=BOTS)), strict=True
            ):
                lines = [line for line in block.splitlines() if "exchange" in line]
                assert len(lines) == len(deal.seats)
                for seat in deal.seats:
                    [line] = [line for line in lines if line.startswith(f"    seat {seat} (")]
                    count = deal.exchanged[seat]
                    if not count:
                        assert "declines the exchange" in line
                        continue
                    given = " ".join(card.pretty for card in deal.discarded[seat][:count])
                    drawn = " ".join(card.pretty for card in deal.drawn[seat])
                    fee = count if profile == "ecarte" else 1
                    assert f"exchanges {count} card{'s' if count > 1 else ''} (pays {fee}): " in line
                    assert f"gives up {given}, draws {drawn}" in line

    def test_the_table_shows_the_widow_each_peep_and_the_declarers_choice(
        self, records: dict[str, SessionRecord]
    ) -> None:
        record = records["peep"]
        taken = 0
        for deal, block in zip(_final(record), _deal_blocks(render_session(record, bots=BOTS)), strict=True):
            assert deal.widow is not None
            assert f"Widow (face down): {deal.widow.pretty}" in block
            assert block.count("peeps at the widow (pays 1)") == len(deal.peeked)
            if deal.widow_taken:
                taken += 1
                given = deal.discarded[deal.declarer or 0][-1]
                assert f"takes the widow ({deal.widow.pretty}), gives up {given.pretty}" in block
            elif deal.widow_taken is False:
                assert "leaves the widow" in block
        assert taken

    def test_the_pool_after_each_deal_claimed_and_returned(self, records: dict[str, SessionRecord]) -> None:
        for record in records.values():
            text = render_session(record, bots=BOTS)
            events = [event for step in walk(record) for event in step.events]
            claims = [event for event in events if isinstance(event, PoolClaimed)]
            assert claims
            for claim in claims:
                assert f"seat {claim.seat} ({BOTS[claim.seat]}) takes the pool: {claim.amount} chips" in text
            returned = [event for event in events if isinstance(event, PoolReturned)]
            assert ("The pool goes back to those who paid it in" in text) == bool(returned)
            assert text.count("  Pool: ") == len(record.deals)

    @pytest.mark.slow
    @pytest.mark.parametrize("seat", range(4))
    def test_a_seat_sees_only_its_own_exchange_and_a_widow_it_may_see(
        self, records: dict[str, SessionRecord], seat: int
    ) -> None:
        """Outside the tricks, the only cards a seat's text names are its own: dealt, drawn, given
        up, and the widow when it peeped or took it. Every other seat's exchange is a count."""
        for record in records.values():
            text = render_session(record, bots=BOTS, seat=seat)
            assert "Widow (face down)" not in text
            for deal, block in zip(_final(record), _deal_blocks(text), strict=True):
                view = seat_view(deal, seat)
                dealt = {card for card in deal.deck if card in _dealt_to(deal, seat)}
                allowed = dealt | set(view.drawn) | set(view.discarded)
                if view.widow is not None:
                    allowed.add(view.widow)
                assert _cards_in(block) <= allowed, block
                for line in block.splitlines():
                    if "exchanges" in line and not line.startswith(f"    seat {seat} ("):
                        assert "gives up" not in line

    def test_a_seat_that_peeped_sees_the_widow_in_its_peep(self, records: dict[str, SessionRecord]) -> None:
        record = records["peep"]
        number, deal = next((n, d) for n, d in enumerate(_final(record)) if d.peeked)
        peeper = deal.peeked[0]
        block = _deal_blocks(render_session(record, bots=BOTS, seat=peeper))[number]
        assert f"seat {peeper} peeps at the widow (pays 1): {deal.widow.pretty}" in block  # type: ignore[union-attr]
        others = [s for s in deal.seats if s not in deal.peeked and s != deal.declarer]
        if others:
            hidden = _deal_blocks(render_session(record, bots=BOTS, seat=others[0]))[number]
            assert f"peeps at the widow (pays 1): {deal.widow.pretty}" not in hidden  # type: ignore[union-attr]


def _dealt_to(deal: Deal, seat: int) -> set[Card]:
    """The cards ``seat`` was dealt: its hand, those it played and gave up, less those it drew or took."""
    held = set(deal.hands[seat])
    held |= {card for trick in deal.tricks for who, card in trick.plays if who == seat}
    held |= {card for who, card in deal.trick if who == seat}
    held |= set(deal.discarded[seat])
    held -= set(deal.drawn[seat])
    if deal.widow_taken and deal.declarer == seat and deal.widow is not None:
        held.discard(deal.widow)
    return held


class TestReplayPage:
    @pytest.mark.slow
    def test_captions_say_what_happened_in_words(self, records: dict[str, SessionRecord]) -> None:
        """Exchanges as counts and fees, peeps, the widow taken, the pool claimed; no action's raw text."""
        for profile, record in records.items():
            data = replay_data(record, bots=BOTS)
            captions = [step["caption"] for deal in data["deals"] for step in deal["steps"]]
            joined = "\n".join(captions)
            assert "exchange:" not in joined
            assert "widow:" not in joined
            if profile == "peep":
                assert re.search(r"seat \d \(\w+\) peeps at the widow \(pays 1\)", joined)
                assert re.search(r"seat \d \(\w+\) (takes|leaves) the widow", joined)
            else:
                assert re.search(r"seat \d \(\w+\) exchanges \d cards? \(pays \d\)", joined)
            if profile == "purchase":
                assert re.search(r"seat \d \(\w+\) declines the exchange", joined)
        claims = [
            c for r in records.values() for d in replay_data(r, bots=BOTS)["deals"] for s in d["steps"]
            if "takes the pool (" in (c := s["caption"])
        ]  # fmt: skip
        assert claims

    @pytest.mark.slow
    def test_public_parts_hold_no_hidden_card_and_views_only_their_own(
        self, records: dict[str, SessionRecord]
    ) -> None:
        """The caption, the action and the public part name no card given up, drawn unseen or the
        widow; each view holds its own drawn and given-up cards and the widow only when the engine
        lets it see it; the table's caption names the cards."""
        for record in records.values():
            data = replay_data(record, bots=BOTS)
            steps = list(walk(record))
            shown = [step for deal in data["deals"] for step in deal["steps"]]
            table_named = False
            for step, drawn in zip(steps, shown, strict=True):
                hidden = {card.text for hand in step.hands for card in hand}
                for view in step.views:
                    hidden |= {card.text for card in (*view.discarded, *view.drawn)}
                if step.widow is not None:
                    hidden.add(step.widow.text)
                played = {card.text for card in step.views[0].played}
                assert not (cards_within(drawn["public"]) | cards_within([drawn["action"]])) & (
                    hidden - played
                )
                caption_cards = _cards_in(drawn["caption"])
                assert not {card.text for card in caption_cards} & (hidden - played)
                table_named = table_named or bool(_cards_in(drawn["table"]["caption"]) - caption_cards)
                for view, own in zip(step.views, drawn["views"], strict=True):
                    assert own["drawn"] == [c.text for c in view.drawn]
                    assert own["discarded"] == [c.text for c in view.discarded]
                    assert own["widow"] == (None if view.widow is None else view.widow.text)
                    mine = {*own["hand"], *own["drawn"], *own["discarded"]} | ({own["widow"]} - {None})
                    assert not cards_within(own) - mine
                if isinstance(step.action, Exchange | TakeWidow) or step.action is PEEP:
                    assert drawn["action"] in {"peep", "widow:taken", "widow:none"} or re.fullmatch(
                        r"exchange:\d", drawn["action"]
                    )
            assert table_named

    @pytest.mark.slow
    def test_the_browser_shows_a_seat_its_own_exchange_only(
        self, tmp_path: Path, records: dict[str, SessionRecord]
    ) -> None:
        """At the first bid of a Purchase deal, seat 1 sees its hand and the cards it drew and gave
        up; no other seat's card is drawn (the table view draws them all, and the widow)."""
        record = records["purchase"]
        page = render_replay_html(record, bots=BOTS, title="purchase")
        data = embedded(page)
        number, deal = next(
            (n, d) for n, d in enumerate(data["deals"]) if d["steps"][-1]["public"]["exchanged"][1]
        )
        index = next(i for i, s in enumerate(deal["steps"]) if s["public"]["phase"] == "bidding")
        step = deal["steps"][index]
        dom = dump_dom(tmp_path, page, f"view=seat1&deal={number}&step={index}")
        own = step["views"][1]
        assert dom.hands[1] == own["hand"]
        assert set(dom.shown) == {*own["hand"], *own["drawn"], *own["discarded"]}
        assert own["drawn"]
        peep_page = render_replay_html(records["peep"], bots=BOTS, title="peep")
        table = dump_dom(tmp_path, peep_page, "view=table&deal=0&step=0")
        widow = embedded(peep_page)["deals"][0]["steps"][0]["table"]["widow"]
        assert widow in table.shown


class TestRulesShow:
    def _show(self, name: str) -> str:
        result = CliRunner().invoke(main, ["rules", "show", name])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    def test_purchase_ecarte_and_peep_say_their_exchange_widow_fees_and_pool(self) -> None:
        purchase, ecarte, peep = self._show("purchase"), self._show("ecarte"), self._show("peep")
        assert (
            "may give up 1 to 3 cards face down and draw as many from the stock, for 1 chip per exchange"
            in purchase
        )
        assert (
            "may give up 1 to 5 cards face down and draw as many from the stock, for 1 chip per card"
            in ecarte
        )
        assert "Widow: one card dealt face down" in peep
        assert "may pay 1 chip to peep at it; the declarer may take it for a card of its hand" in peep
        for text in (purchase, ecarte, peep):
            assert "Pool: the fees go into the pool; the next declarer to make Nap or higher takes it" in text
        assert "Widow:" not in purchase
        assert "Exchange:" not in peep

    def test_profiles_without_a_pool_say_nothing_of_it(self) -> None:
        for name in ("heather", "full-ladder", "seven-card"):
            text = self._show(name)
            assert "Exchange:" not in text
            assert "Pool:" not in text
