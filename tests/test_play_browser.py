"""``nap play`` in a real browser: a person plays whole sessions against random bots, seeing only their cards.

Each test starts the real command (``python -m tournaments.cli play --no-browser``) and
drives its page in headless Chromium (the Debian package through Playwright's
``executable_path``; no browser is downloaded). The person clicks only what the page
offers (a seeded random choice among its enabled actions: a click, or a card's number
key) until every deal is over; the stored session then verifies (``nap log verify``).
After every change of the page, every card in its document (``data-card``) must be one the
seat may see at that moment of the deal, rebuilt from the stored log
(:func:`tests.play_helpers.visible_by_moment`); every table message the page received is
checked the same way. Once the page says it is done, it shows the session's last trick,
its last settlement and its winners, as stored, and no clock runs. Also: a wrong or
missing token is refused, a second tab (420 px
wide) takes over, a tab closed mid-deal leaves the seat to the fault policy with the
session still stored, and a page never opened plays nothing. Timeouts are generous; no
outcome hangs on timing.
"""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest
from click.testing import CliRunner

from referee.rules import SessionRecord, fresh_session
from tests.play_helpers import cards_drawn, visible_by_moment
from tournaments.cli import main
from tournaments.store.database import Store
from tournaments.store.logs import decode_log
from tournaments.web.server import REFUSED
from tournaments.web.table import cards_in

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Locator, Page, WebSocket


pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
WAIT_MS = 120_000
"""Generous: the page waits this long for the next decision (random bots take milliseconds)."""

WATCH_CARDS = """
window.__seen = [];
new MutationObserver(() => {
  const body = document.body;
  if (!body || body.dataset.deal === undefined) return;
  window.__seen.push({
    session: body.dataset.session, deal: Number(body.dataset.deal), played: Number(body.dataset.played),
    cards: [...document.querySelectorAll("[data-card]")].map((node) => node.dataset.card),
  });
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""
"""Run before the page's script: after each change of the document, its cards and where the deal is."""


TAKEN = "([request]) => document.body.dataset.deciding !== 'yes' || document.body.dataset.request !== request"
"""The page took the choice made for ``request``: nothing to decide, or another decision."""


class Played(NamedTuple):
    url: str
    db: Path
    process: subprocess.Popen[str]
    lines: queue.Queue[str]
    reader: threading.Thread


@contextmanager
def nap_play(root: Path, *args: str) -> Iterator[Played]:
    """The real ``nap play`` command, its page's address read from what it prints; stopped at the end."""
    db = root / "nap.db"
    command = [sys.executable, "-m", "tournaments.cli", "play", "--no-browser", "--sandbox", "off"]
    command += ["--db", str(db), "--out", str(root / "out"), *args]
    process = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ)
    )
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    out = process.stdout

    def read() -> None:
        with out:
            for line in out:
                lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        url = ""
        while not url:
            line = lines.get(timeout=60)
            url = next((word for word in line.split() if word.startswith("http://127.0.0.1:")), "")
        yield Played(url, db, process, lines, reader)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)
        reader.join(timeout=30)


def finished(played: Played) -> str:
    """Wait for the command to end (successfully); what it printed."""
    assert played.process.wait(timeout=120) == 0
    return "".join(iter_lines(played))


def open_page(browser: Browser, url: str, frames: list[dict[str, Any]], width: int = 1280) -> Page:
    # the page's own policy forbids evaluating strings, which Playwright's waits do: bypassed for the test
    page = browser.new_page(viewport={"width": width, "height": 900}, bypass_csp=True)
    page.set_default_timeout(WAIT_MS)
    page.add_init_script(WATCH_CARDS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("websocket", lambda socket: _listen(socket, frames))
    page.goto(url)
    page.wait_for_function("document.getElementById('who').textContent !== ''")
    assert not errors, errors
    return page


def _listen(socket: WebSocket, frames: list[dict[str, Any]]) -> None:
    def received(payload: str | bytes) -> None:
        message = json.loads(payload)
        if message["type"] == "table":
            frames.append(message)

    socket.on("framereceived", received)


def play_to_the_end(page: Page, rng: random.Random) -> int:
    """Make a random offered choice (a click, or a card's number key) at each decision, until done.

    Returns how many; each choice must be taken (the decision over) before the next is made.
    """
    clicks = 0
    while True:
        page.wait_for_function(
            "document.body.dataset.deciding === 'yes' || document.body.dataset.ended !== undefined"
        )
        if page.evaluate("document.body.dataset.ended") is not None:
            return clicks
        request = page.evaluate("document.body.dataset.request")
        cards = page.locator("#hand .card.legal:not([disabled])").count()
        picks = page.locator("#hand [aria-pressed]")  # an exchange: cards to pick, then its button
        if picks.count() and rng.random() < 0.7 and _exchanged(page, picks, rng):
            pass
        elif cards and rng.random() < 0.3:  # by the keys: the n-th playable card
            page.keyboard.press(str(rng.randrange(min(cards, 9)) + 1))
        else:
            choices = page.locator("[data-action]:not([disabled])")
            count = choices.count()
            assert count > 0, "a decision offers at least one action"
            choices.nth(rng.randrange(count)).click()
        page.wait_for_function(TAKEN, arg=[request])
        clicks += 1


def _exchanged(page: Page, picks: Locator, rng: random.Random) -> bool:
    """Pick one to three cards of the hand and press the exchange button, if the page enables it."""
    for index in rng.sample(range(picks.count()), rng.randint(1, min(3, picks.count()))):
        picks.nth(index).click()
    button = page.locator("#actions button", has_text="Exchange the")
    if not button.is_enabled():  # not an exchange the rules allow: the test keeps its hand instead
        return False
    button.click()
    return True


def stored_record(db: Path, session: int = 1) -> SessionRecord:
    with Store.open(db) as store:
        payload = decode_log(store.log(session), name=f"session {session}")
    record = payload["record"]
    assert isinstance(record, dict)
    return SessionRecord.from_json(record)


def check_hidden(
    record: SessionRecord, seat: int, seen: list[dict[str, Any]], frames: list[dict[str, Any]]
) -> None:
    """Every card shown (the document after each change) and sent (each table message) is the seat's."""
    allowed = visible_by_moment(record, seat)
    assert seen, "the page was watched"
    for snapshot in seen:
        moment = (snapshot["deal"], snapshot["played"])
        leaked = set(snapshot["cards"]) - allowed.get(moment, frozenset())
        assert not leaked, f"the page showed {sorted(leaked)} at deal {moment[0]} after {moment[1]} cards"
    for frame in frames:
        moment = (frame["deal"], frame["played"])
        leaked = cards_in(frame) - allowed.get(moment, frozenset())
        assert not leaked, f"the page was sent {sorted(leaked)} at deal {moment[0]} after {moment[1]} cards"


READ_THE_END = """() => {
  const text = (selector) => {
    const node = document.querySelector(selector);
    return node ? node.textContent : "";
  };
  return {
    where: {...document.body.dataset},
    last_trick: [...document.querySelectorAll("#lasttrick [data-card]")].map((node) => node.dataset.card),
    last_trick_title: text("#lasttrick > div:first-child"),
    settled_title: text("#settled h2"),
    settled_rows: [...document.querySelectorAll("#settled tbody tr")].map(
      (row) => [...row.cells].map((cell) => cell.textContent)),
    session_over: text("#sessionover"),
    clock_hidden: document.getElementById("clock").hidden,
    clock_text: text("#clocktext"),
    playable: document.querySelectorAll("[data-action]:not([disabled])").length,
  };
}"""
"""What the page shows, read at once (no waiting for an element that may never come)."""


class EndShown(NamedTuple):
    """What the page shows once it says it is done, read twice (a running clock would change between)."""

    first: dict[str, Any]
    later: dict[str, Any]


def the_end_shown(page: Page) -> EndShown:
    """Read the last trick, the last settlement, the winners and the clock off a page that says it is done."""
    first = page.evaluate(READ_THE_END)
    page.wait_for_timeout(300)  # three of the page's clock ticks: a running clock would change its text
    return EndShown(first, page.evaluate(READ_THE_END))


def check_the_end(end: EndShown, record: SessionRecord, seat: int, names: list[str]) -> None:
    """The page shows the stored session's last trick, last settlement and winners, and no clock runs."""
    shown, later = end
    session = fresh_session(record)
    for deal_record in record.deals:
        for action in deal_record.actions:
            session.apply(action)
    last = session.deals[-1]
    where = shown["where"]
    assert where["phase"] == "session-over", shown
    assert int(where["deal"]) == len(record.deals) - 1, shown
    assert int(where["played"]) == sum(len(trick.plays) for trick in last.tricks) + len(last.trick), shown
    if last.tricks:
        final = last.tricks[-1]
        assert shown["last_trick"] == [card.text for _, card in final.plays], shown
        assert shown["last_trick_title"].startswith(f"Trick {final.number + 1} to "), shown
    else:  # everyone passed: no trick was played in the last deal
        assert shown["last_trick"] == [], shown
    assert shown["settled_title"].startswith(f"Deal {len(record.deals)}: "), shown
    assert [int(row[1]) for row in shown["settled_rows"]] == list(last.payments or ()), shown
    assert [int(row[2]) for row in shown["settled_rows"]] == list(record.balances), shown
    winners = ["You" if winner == seat else names[winner] for winner in record.winners]
    verb = "wins" if len(winners) == 1 else "win"
    assert shown["session_over"] == f"Session over: {', '.join(winners)} {verb}.", shown
    assert shown["clock_hidden"], "no clock is shown once the session is over"
    assert shown["clock_text"] == later["clock_text"], "no clock runs once the session is over"
    assert shown["playable"] == 0, "nothing is playable once the session is over"


def verified(db: Path) -> None:
    result = CliRunner().invoke(main, ["log", "verify", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "0 mismatch" in result.output


@pytest.mark.parametrize(("profile", "seat"), [("heather", 1), ("peep", 0), ("purchase", 2)])
def test_a_person_plays_a_whole_session(tmp_path: Path, browser: Browser, profile: str, seat: int) -> None:
    """Clicking only what the page offers finishes every deal; the page never shows another seat's card."""
    frames: list[dict[str, Any]] = []
    args = ["-b", "random", "-b", "r2=random", "-p", profile, "--seat", str(seat), "--name", "ann"]
    with nap_play(tmp_path, *args, "--decision-ms", "60000") as played:
        page = open_page(browser, played.url, frames)
        clicks = play_to_the_end(page, random.Random(f"{profile}-{seat}"))
        assert page.evaluate("document.body.dataset.ended") == "done"
        seen = page.evaluate("window.__seen")
        end = the_end_shown(page)
        page.close()
        said = finished(played)
    assert "sessions stored: 1" in said
    record = stored_record(played.db)
    bots = ["random", "r2"]
    check_the_end(end, record, seat, [*bots[:seat], "ann", *bots[seat:]])
    assert len(record.deals) == record.profile.deals_per_session
    assert clicks > 0
    check_hidden(record, seat, seen, frames)
    with Store.open(played.db) as store:
        [row] = store.sessions_by_id([1])
        [result] = store.results_of([1]).values()
    assert row.bots[seat] == "ann"
    assert not result.faults, "every decision was made in time"
    if record.profile.exchange_max:  # the pool's exchanges: some made by picking cards on the page
        assert cards_drawn(record, seat) > 0
    verified(played.db)
    listed = CliRunner().invoke(main, ["tournament", "list", "--json", "--db", str(played.db)])
    [tournament] = json.loads(listed.stdout)["tournaments"]
    assert (tournament["status"], tournament["sessions"]) == ("finished", {"played": 1, "planned": 1})


def test_tokens_tabs_and_a_tab_closed_mid_deal(tmp_path: Path, browser: Browser) -> None:
    """A wrong or missing token is 403; a second tab takes over; a tab closed mid-deal faults, stored."""
    frames: list[dict[str, Any]] = []
    args = ["-b", "random", "-b", "r2=random", "--name", "ann", "--sessions", "2", "--decision-ms", "1500"]
    with nap_play(tmp_path, *args) as played:
        base, token = played.url.rstrip("/").rsplit("/", 1)
        for address in (base + "/", f"{base}/not-the-token/", f"{base}/{token}x/", f"{base}/{token[:-1]}/ws"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(address, timeout=30)  # noqa: S310 - http://127.0.0.1 only
            assert refused.value.code == 403
            assert refused.value.read().decode().strip() == REFUSED
        first = open_page(browser, played.url, frames)
        second = open_page(browser, played.url, frames, width=420)
        first.wait_for_function("document.body.dataset.ended === 'replaced'")
        assert "another tab" in first.inner_text("#notice")
        assert first.evaluate("document.getElementById('clock').hidden"), "a replaced tab runs no clock"
        play_one = second.locator("[data-action]:not([disabled])")
        second.wait_for_function("document.body.dataset.deciding === 'yes'")
        assert second.evaluate("document.documentElement.scrollWidth") <= 420, "nothing scrolls sideways"
        play_one.first.click()
        second.close()
        first.close()
        said = finished(played)
    assert "the page was closed" in said
    assert "1 of 2 sessions played" in said
    with Store.open(played.db) as store:
        [result] = store.results_of([1]).values()
        assert store.tournament(1).status == "finished"
    kinds = {fault.kind for fault in result.faults if fault.bot == "ann"}
    assert kinds & {"late", "disconnect"}, result.faults
    verified(played.db)


def test_a_page_never_opened_plays_nothing(tmp_path: Path) -> None:
    """Nobody opens the page within --wait: one line, exit 1, no session stored, nothing left running."""
    with nap_play(tmp_path, "-b", "random", "-b", "r2=random", "--name", "ann", "--wait", "1") as played:
        assert played.process.wait(timeout=120) == 1
        said = "".join(iter_lines(played))
    assert "Error: nobody opened the page within 1 s; nothing was played" in said
    with Store.open(played.db) as store:
        assert store.tally([1]).sessions == 0
        assert store.tournament(1).status == "interrupted"
    status = CliRunner().invoke(main, ["tournament", "status", "1", "--db", str(played.db)])
    assert status.exit_code == 0, status.output
    assert "resume with" not in status.output
    resumed = subprocess.run(  # a process: the browser's event loop runs in this one
        [sys.executable, "-m", "tournaments.cli", "tournament", "resume", "1", "--db", played.db],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert resumed.returncode == 1
    assert resumed.stderr.splitlines() == [
        "Error: tournament 1 was ann's at the table (nap play): it is not resumed; play again with nap play"
    ]


def iter_lines(played: Played) -> list[str]:
    """What the command printed (once it has ended)."""
    played.reader.join(timeout=30)
    lines = []
    while not played.lines.empty():
        lines.append(played.lines.get())
    return lines
