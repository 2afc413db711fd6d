"""The replay page of ``nap log html``: self-contained, and a seat's view shows only what it may see."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from referee.match.faults import Fault, FaultKind
from referee.rules import PASS, PROFILES, Phase, Session, SessionRecord, record_of, replay
from tests.rules_helpers import contract_session
from tournaments.report.replay_page import (
    DATA_ID,
    fault_markers,
    render_replay_html,
    replay_data,
    write_replay,
)

BOTS = ["greedy", "pimc", "random", "</script><script>alert(1)</script>"]
CHROMIUM = "/usr/bin/chromium"
CARD = re.compile(r"^(?:10|[2-9JQKA])[CDHS]$")


def played_record(seed: int = 3) -> SessionRecord:
    """A whole heather session at four seats under a seeded random policy that passes often."""
    rng = random.Random(seed)
    session = Session(PROFILES["heather"], table_size=4, seed=seed)
    while not session.over:
        bidding = session.deal.phase is Phase.BIDDING
        session.apply(PASS if bidding and rng.random() < 0.7 else rng.choice(session.legal_actions()))
    return record_of(session)


@pytest.fixture(scope="module")
def record() -> SessionRecord:
    return played_record()


@pytest.fixture(scope="module")
def page(record: SessionRecord) -> str:
    return render_replay_html(record, bots=BOTS, title="t3 <b12-r1>")


def embedded(page: str) -> dict[str, Any]:
    match = re.search(rf'<script type="application/json" id="{DATA_ID}">(.*?)</script>', page, re.DOTALL)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def cards_within(value: object) -> set[str]:
    """Every card text anywhere inside a JSON value."""
    if isinstance(value, str):
        return {value} if CARD.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(cards_within(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(cards_within(v) for v in value))
    return set()


def test_page_is_self_contained(page: str) -> None:
    """No network address, no external script or stylesheet; the title is escaped."""
    assert "http://" not in page
    assert "https://" not in page
    assert "<script src" not in page
    assert "<link" not in page
    assert "<title>t3 &lt;b12-r1&gt;</title>" in page
    assert page.count("</script>") == 2, "a bot name closed the data script early"


def test_embedded_steps_follow_the_engine(record: SessionRecord, page: str) -> None:
    """One step per action plus the deal as dealt; hands as dealt and payments as the engine says."""
    data = embedded(page)
    assert data == {**replay_data(record, bots=BOTS), "faults": [], "links": []}
    deals = replay(record).deals
    assert len(data["deals"]) == len(deals)
    for deal, shown in zip(deals, data["deals"], strict=True):
        assert len(shown["steps"]) == len(deal.actions) + 1
        assert [step["action"] for step in shown["steps"][1:]] == [str(a) for a in deal.actions]
        final = shown["steps"][-1]["public"]
        assert final["settled"]["payments"] == list(deal.payments or ())
        assert [t["winner"] for t in final["tricks"]] == [t.winner for t in deal.tricks]
    assert data["balances"] == list(record.balances)
    assert data["winners"] == list(record.winners)


def test_deals_are_counted_from_one_as_on_every_page(page: str) -> None:
    """The caption of each deal as dealt says ``Deal 1`` for the first, as the play and watch pages do."""
    data = embedded(page)
    captions = [shown["steps"][0]["caption"] for shown in data["deals"]]
    assert [caption.split(" dealt by")[0] for caption in captions] == [
        f"Deal {number}" for number in range(1, len(captions) + 1)
    ]
    assert '"Deal " + (deal.number + 1)' in page, "the deal picker counts from 1 too"


@pytest.fixture(scope="module")
def seven_record() -> SessionRecord:
    """A seven-card session at five seats: Six, Seven and Nap declared in turn."""
    session = contract_session(
        PROFILES["seven-card"], table_size=5, seed=4, contracts=("six", "seven", "nap")
    )
    return record_of(session)


@pytest.fixture(scope="module")
def seven_page(seven_record: SessionRecord) -> str:
    return render_replay_html(seven_record, bots=[*BOTS, "peel"], title="seven cards")


@pytest.mark.slow
@pytest.mark.parametrize("which", ["page", "seven_page"])
def test_seat_views_never_hold_another_seats_unplayed_card(
    which: str, request: pytest.FixtureRequest
) -> None:
    """In every step, a seat's view holds its own hand only and the public part only played cards.

    Five-card heather and seven-card Nap alike.
    """
    page: str = request.getfixturevalue(which)
    for deal in embedded(page)["deals"]:
        for step in deal["steps"]:
            hands = step["table"]["hands"]
            unplayed = {card for hand in hands for card in hand}
            assert not cards_within(step["public"]) & unplayed
            assert sum(len(hand) for hand in hands) == sum(step["public"]["held"])
            for view in step["views"]:
                others = unplayed - set(hands[view["seat"]])
                assert view["hand"] == hands[view["seat"]]
                assert not cards_within(view) & others


def test_seven_card_hands_tricks_and_contracts(seven_record: SessionRecord, seven_page: str) -> None:
    """Seven cards a hand, seven tricks a deal, and Six and Seven in the captions and results."""
    data = embedded(seven_page)
    assert data == {**replay_data(seven_record, bots=[*BOTS, "peel"]), "faults": [], "links": []}
    assert data["hand_size"] == 7
    deals = replay(seven_record).deals
    labels = set()
    for deal, shown in zip(deals, data["deals"], strict=True):
        dealt = shown["steps"][0]
        assert [len(hand) for hand in dealt["table"]["hands"]] == [7] * 5
        assert dealt["public"]["held"] == [7] * 5
        final = shown["steps"][-1]["public"]
        assert deal.contract is not None
        label = deal.contract.label
        labels.add(label)
        assert final["contract"] == label
        assert len(final["tricks"]) == 7
        assert all(len(trick["plays"]) == 5 for trick in final["tricks"])
        assert final["settled"]["result"].startswith(f"{label} ")
        captions = " ".join(step["caption"] for step in shown["steps"])
        assert f"bids {label}" in captions
        assert f"declares {label}" in captions
        assert "trick 7 to seat" in captions
    assert labels == {"Six", "Seven", "Nap"}


def test_write_replay_writes_utf8(tmp_path: Path, page: str) -> None:
    path = write_replay(tmp_path / "replays" / "s.html", page)
    assert path.read_text(encoding="utf-8") == page


def test_faults_are_marked_on_the_step_their_decision_led_to() -> None:
    """Decision i of a deal is step i + 1 (step 0 is the deal as dealt); none (-1 in older logs) marks step 0.

    A fault at no deal is not marked.
    """
    logged = [
        {"kind": "late", "bot": "pimc", "seat": 1, "deal": 2, "decision": 4, "elapsed_ms": 1032.5,
         "detail": "slow"},
        {"kind": "disconnect", "bot": "random", "seat": 2, "deal": 0, "decision": -1, "detail": "gone"},
        {"kind": "late", "bot": "pimc", "seat": 1, "deal": None, "decision": 3},
    ]  # fmt: skip
    assert fault_markers([Fault.from_json(fault) for fault in logged]) == [
        {"deal": 2, "step": 5, "decision": 4, "seat": 1, "bot": "pimc", "kind": "late", "elapsed_ms": 1032.5,
         "detail": "slow"},
        {"deal": 0, "step": 0, "decision": None, "seat": 2, "bot": "random", "kind": "disconnect",
         "elapsed_ms": None, "detail": "gone"},
    ]  # fmt: skip


def test_faults_and_links_are_embedded_safely(record: SessionRecord) -> None:
    """The page carries its fault markers and header links; neither can close the data script."""
    fault = Fault(
        kind=FaultKind.LATE,
        bot=BOTS[3],
        table="t",
        seat=3,
        deal=0,
        decision=0,
        elapsed_ms=5.0,
        detail="</script>",
    )
    page = render_replay_html(
        record, bots=BOTS, title="t", faults=[fault], links=[("standings", "../standings.html")]
    )
    assert page.count("</script>") == 2
    data = embedded(page)
    assert data["faults"] == fault_markers([fault])
    assert data["links"] == [{"text": "standings", "href": "../standings.html"}]


def test_a_comment_opener_cannot_keep_the_data_script_open(record: SessionRecord) -> None:
    """A bot named ``<!--<script>`` would make the browser read the rest of the page as the data."""
    bots = [*BOTS[:3], "<!--<script>"]
    page = render_replay_html(record, bots=bots, title="t")
    assert "<!--" not in page
    assert embedded(page)["bots"] == bots


# -- the page in a real browser -------------------------------------------------------------


class _Hands(HTMLParser):
    """The cards of each ``class="hand" data-seat="N"`` element, and every ``data-card`` drawn."""

    VOID = frozenset({"meta", "br", "input", "img", "hr"})

    def __init__(self) -> None:
        super().__init__()
        self.hands: dict[int, list[str]] = {}
        self.shown: list[str] = []
        self._stack: list[tuple[str, int | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        seat = self._stack[-1][1] if self._stack else None
        if "hand" in (found.get("class") or "").split() and found.get("data-seat") is not None:
            seat = int(found["data-seat"] or 0)
            self.hands[seat] = []
        card = found.get("data-card")
        if card is not None:
            self.shown.append(card)
            if seat is not None:
                self.hands[seat].append(card)
        if tag not in self.VOID:
            self._stack.append((tag, seat))

    def handle_endtag(self, tag: str) -> None:
        while self._stack and self._stack.pop()[0] != tag:
            pass


def dump_dom(tmp_path: Path, page: str, fragment: str) -> _Hands:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("chromium not installed: apt-get install chromium")
    browser = CHROMIUM if Path(CHROMIUM).exists() else str(shutil.which("chromium"))
    path = write_replay(tmp_path / "session.html", page)
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=2000",
        "--dump-dom",
        f"{path.as_uri()}#{fragment}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    parser = _Hands()
    parser.feed(done.stdout)
    assert parser.hands, f"no hands drawn for #{fragment}: {done.stdout[:500]}"
    return parser


def mid_play(data: dict[str, Any]) -> tuple[int, int]:
    """A deal with a contract and a step two cards into its second trick."""
    for number, deal in enumerate(data["deals"]):
        steps = deal["steps"]
        bids = len(steps[-1]["public"]["bids"])
        if steps[-1]["public"]["declarer"] is not None and len(steps) > bids + 6:
            return number, bids + len(deal["seats"]) + 2
    pytest.fail("the sample session has no played deal")


@pytest.mark.slow
def test_browser_shows_a_seat_only_its_own_hand(tmp_path: Path, page: str) -> None:
    """Opened at ``#view=seat1``, the page draws seat 1's cards and card backs for the others."""
    data = embedded(page)
    number, index = mid_play(data)
    for step_index in (0, index):
        dom = dump_dom(tmp_path, page, f"view=seat1&deal={number}&step={step_index}")
        step = data["deals"][number]["steps"][step_index]
        hands = step["table"]["hands"]
        assert dom.hands[1] == hands[1]
        assert all(dom.hands[seat] == [] for seat in dom.hands if seat != 1)
        others = {card for seat, hand in enumerate(hands) if seat != 1 for card in hand}
        assert not set(dom.shown) & others
        assert len(dom.shown) == len(set(dom.shown))


@pytest.mark.slow
def test_browser_shows_the_table_every_hand(tmp_path: Path, page: str) -> None:
    """Opened at ``#view=table``, the page draws every seat's unplayed cards."""
    data = embedded(page)
    number, index = mid_play(data)
    dom = dump_dom(tmp_path, page, f"view=table&deal={number}&step={index}")
    hands = data["deals"][number]["steps"][index]["table"]["hands"]
    assert dom.hands == dict(enumerate(hands))


@pytest.mark.slow
def test_browser_shows_a_seat_its_seven_cards(tmp_path: Path, seven_page: str) -> None:
    """Seven-card Nap at five seats: seat 3 sees its seven cards, the table sees all 35."""
    data = embedded(seven_page)
    dealt = data["deals"][1]["steps"][0]["table"]["hands"]
    dom = dump_dom(tmp_path, seven_page, "view=seat3&deal=1&step=0")
    assert dom.hands[3] == dealt[3]
    assert len(dom.hands[3]) == 7
    assert all(dom.hands[seat] == [] for seat in dom.hands if seat != 3)
    table = dump_dom(tmp_path, seven_page, "view=table&deal=1&step=0")
    assert table.hands == dict(enumerate(dealt))
    assert sum(len(hand) for hand in table.hands.values()) == 35
