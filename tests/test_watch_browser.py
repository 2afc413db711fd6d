"""Watching a real tournament in a real browser: standings as sessions commit, a table as it is played.

A small tournament (two blocks of three sessions on two worker processes: the tables'
events come over the workers' pipes) runs ``nap tournament run --watch --no-browser``.
One bot holds every table still at two points while files say so (in the
first trick; then once a deal is settled and the next has a trick played): so the page
is looked at while tables are in play, whatever the machine's speed, and the tables go
on when the test removes a file (each worker plays one block, so a held bot process
holds one table). Headless Chromium (Debian's,
through Playwright's ``executable_path``) follows a table; every card it shows is checked
against the stored log: the cards of a deal, in page order, are the first cards played
in it, so none comes from a hand. At the end the page's standings are the store's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from referee.rules import DEFAULT_PROFILE, Card, SessionRecord
from tournaments.plan.scheduler import schedule
from tournaments.stats.standings import standings_of
from tournaments.store.database import Store
from tournaments.store.logs import decode_log

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Browser, Page


pytestmark = pytest.mark.slow


HELD_BOT = '''"""Random, but holds still where the files say: in its first trick, then after a deal."""

import random
import time
from pathlib import Path

from clients.sdk import Bot, run

GATES = Path("GATES")
FIRST, LATER, SEAT = GATES / "hold-first", GATES / "hold-later", GATES / "hold-seat"


def wait(gate):
    while gate.exists():
        time.sleep(0.02)


class Held(Bot):
    def decide(self, view):
        if view.deal_number == 0 and view.trick:  # a card on the table, the hands still full
            wait(FIRST)
        if view.deal_number >= 1 and view.tricks:  # a deal settled, a trick of the next one played
            wait(LATER)
            if SEAT.exists() and SEAT.read_text() == str(view.seat):  # only where it sits at that seat
                wait(SEAT)
        key = (self.table, self.seat, view.deal_number, len(view.tricks), len(view.trick))
        return random.Random(str(key)).choice(view.legal_actions)


if __name__ == "__main__":
    run(Held, name="held", version="1")
'''


class Run:
    """The tournament being watched: its process, its page's address, its store and the held bot's gate."""

    def __init__(self, root: Path, gates_set: dict[str, str]) -> None:
        bot = root / "held"
        bot.mkdir()
        gates = root / "gates"  # outside the bot's folder, whose content is the bot's version
        gates.mkdir()
        (bot / "bot.py").write_text(HELD_BOT.replace('"GATES"', repr(str(gates))), encoding="utf-8")
        (bot / "nap-bot.toml").write_text(
            'name = "held"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n', encoding="utf-8"
        )
        self.gates = {name: gates / f"hold-{name}" for name in gates_set}
        for name, gate in self.gates.items():
            gate.write_text(gates_set[name], encoding="utf-8")
        self.db = root / "nap.db"
        args = [
            sys.executable, "-m", "tournaments.cli", "tournament", "run",
            "-b", str(bot), "-b", "random", "-b", "r2=random", "-n", "6", "--workers", "2",
            "--seed", str(SEED), "--decision-ms", "60000", "--sandbox", "off",
            "--watch", "--no-browser", "--db", str(self.db), "--out", str(root / "out"),
        ]  # fmt: skip
        self.output = root / "output.txt"
        with self.output.open("wb") as sink:
            self.process = subprocess.Popen(
                args, stdout=sink, stderr=subprocess.STDOUT, cwd=root, env={**os.environ, "COLUMNS": "200"}
            )
        self.url = self._url()

    def _url(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for line in self.output.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("watch it live at "):
                    return line.removeprefix("watch it live at ").strip()
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        pytest.fail(f"no address printed: {self.output.read_text(encoding='utf-8', errors='replace')}")

    def release(self, gate: str) -> None:
        self.gates[gate].unlink(missing_ok=True)

    def stop(self) -> None:
        for gate in self.gates:
            self.release(gate)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def run(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Run]:
    """The tournament, its tables held where the gates (the indirect parameter) say: by default twice."""
    started = Run(tmp_path, getattr(request, "param", {"first": "", "later": ""}))
    yield started
    started.stop()


NAMES = ("held", "random", "r2")
SEED = 11


def second_rotation_seat() -> str:
    """The seat of held in block 0's rotation 1: hold there, and block 0's rotation 0 is committed first."""
    blocks = schedule(list(NAMES), table_size=3, sessions=6, seed=SEED, profile=DEFAULT_PROFILE)
    return str(blocks[0].seating(1).index("held"))


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    opened = browser.new_page(viewport={"width": 1100, "height": 1000})
    opened.set_default_timeout(60_000)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    opened.close()
    assert not errors, f"script errors on the page: {errors}"


def shown_cards(page: Page) -> dict[str, Any]:
    """The followed table's block and rotation, its cards by deal in page order, the deals not over."""
    found: dict[str, Any] = page.evaluate(
        """() => {
            const table = document.getElementById('table');
            const cards = {};
            for (const node of table.querySelectorAll('[data-card]')) {
                (cards[node.dataset.deal] = cards[node.dataset.deal] || []).push(node.dataset.card);
            }
            const live = [...table.querySelectorAll('.deal:not(.over)')].map(n => n.dataset.deal);
            return {block: Number(table.dataset.block), rotation: Number(table.dataset.rotation),
                    over: table.dataset.over, cards, live};
        }"""
    )
    return found


RECORDER = """
window.seenCards = [];
document.addEventListener('DOMContentLoaded', () => {
  const table = document.getElementById('table');
  new MutationObserver(() => {
    const cards = {};
    for (const node of table.querySelectorAll('[data-card]')) {
      (cards[node.dataset.deal] = cards[node.dataset.deal] || []).push(node.dataset.card);
    }
    const where = {block: Number(table.dataset.block), rotation: Number(table.dataset.rotation)};
    window.seenCards.push({...where, cards});
  }).observe(table, {childList: true, subtree: true});
});
"""
"""Records the cards of the followed table at every change of the page (a leak may not last)."""


def played_cards(db: Path, block: int, rotation: int) -> list[list[str]]:
    """The cards played in each deal of a stored session, in order."""
    with Store.open(db) as store:
        [row] = [
            row
            for row in store.sessions_by_id(store.session_ids(tournament=1))
            if (row.block, row.rotation) == (block, rotation)
        ]
        log = decode_log(store.log(row.id), name="log")
    record = SessionRecord.from_json(log["record"])  # type: ignore[arg-type]
    return [[str(action) for action in deal.actions if isinstance(action, Card)] for deal in record.deals]


LIVE_DEAL_WITH_CARDS = (
    "() => [...document.querySelectorAll('#table .deal:not(.over)')]"
    ".some(d => d.querySelector('[data-card]'))"
)
"""The followed table has a deal in play with cards on it."""
SETTLED_DEAL = "() => document.querySelector('#table .deal.over .settled') !== null"


WIDE_STANDINGS = """() => showStandings({bots: [
  {rank: "1=", bot: "pimc-the-reference-bot", sessions: 1200, chips: "+155.25 \u00b1 12.50 (only 4 blocks)",
   win_share: "0.625 \u00b1 0.125", los_next: "99.9%", faults: 1234, rating: "+1234", chips_mean: 155.25},
  {rank: "2", bot: "random-2", sessions: 1200, chips: "-155.25 \u00b1 12.50", win_share: "0.000 (n/a)",
   los_next: "", faults: 0, rating: "-1234", chips_mean: -155.25}]})"""
"""Standings as wide as they get, shown by the page's own function."""

NARROW_CUT = """() => [...document.querySelectorAll("#standings td")].filter((td) => {
  const box = td.getBoundingClientRect();
  return box.right > window.innerWidth || box.width === 0;
}).length"""
"""The standings' cells outside a narrow page, or given no room."""


def check_narrow(browser: Browser, url: str) -> None:
    """At 420 px nothing scrolls sideways, and every figure of the standings is in sight, named."""
    narrow = browser.new_page(viewport={"width": 420, "height": 900})
    try:
        narrow.goto(url)
        narrow.wait_for_selector('#progress[data-total="6"]')
        narrow.wait_for_selector("#table [data-card]")
        narrow.evaluate(WIDE_STANDINGS)  # as wide as standings get, whatever this run has committed yet
        assert narrow.evaluate("document.documentElement.scrollWidth") <= 420
        assert narrow.evaluate(NARROW_CUT) == 0, "every figure of the standings in sight, none cut"
        scroller = "document.querySelector('#standings-section .scroll')"
        assert narrow.evaluate(f"{scroller}.scrollWidth <= {scroller}.clientWidth"), "nothing to scroll to"
        named = narrow.eval_on_selector(
            "#standings tbody td:nth-child(4)", "td => getComputedStyle(td, '::before').content"
        )
        assert "chips/session" in named, "each figure is named by its column"
    finally:
        narrow.close()


def test_a_tournament_watched_live(run: Run, page: Page, browser: Browser) -> None:
    """Standings update as sessions commit; a followed table shows only cards already played."""
    page.add_init_script(RECORDER)
    page.goto(run.url)
    page.wait_for_selector('#progress[data-total="6"]')
    assert page.get_attribute("#progress", "data-done") == "0"  # every table is held
    page.wait_for_function("() => document.querySelectorAll('#tables option:not([value=\"\"])').length >= 2")
    last = page.eval_on_selector_all("#tables option", "nodes => nodes.map(n => n.value)")[-1]
    page.select_option("#tables", last)
    page.wait_for_function(f"() => document.getElementById('table').dataset.table === '{last}'")
    page.wait_for_function(LIVE_DEAL_WITH_CARDS)  # held in its first trick
    first = shown_cards(page)
    assert first["over"] == "false"
    assert page.locator("#table .bids").count() >= 1

    run.release("first")  # on to a deal settled and the next one's first trick
    page.wait_for_function(SETTLED_DEAL)
    page.wait_for_function(LIVE_DEAL_WITH_CARDS)
    later = shown_cards(page)
    assert later["over"] == "false"
    page.screenshot(path=run.db.parent / "watch.png")  # kept in the test's folder, to look at

    check_narrow(browser, run.url)

    run.release("later")
    assert run.process.wait(timeout=120) == 0, run.output.read_text(encoding="utf-8", errors="replace")
    page.wait_for_selector('#state[data-state="finished"]')
    assert page.get_attribute("#progress", "data-done") == "6"

    seen = page.evaluate("() => window.seenCards")
    played_at: dict[tuple[int, int], list[list[str]]] = {}
    for shown in [*seen, first, later]:
        key = (shown["block"], shown["rotation"])
        played = played_at.get(key) or played_at.setdefault(key, played_cards(run.db, *key))
        for deal, cards in shown["cards"].items():
            assert cards == played[int(deal)][: len(cards)], f"{key} deal {deal}: {cards}, played {played}"
    for shown in (first, later):
        played = played_at[shown["block"], shown["rotation"]]
        held = [deal for deal in shown["live"] if shown["cards"].get(deal)]
        assert held, shown
        for deal in held:  # a deal in play shows fewer cards than it plays: the rest are in hands
            assert len(shown["cards"][deal]) < len(played[int(deal)])

    with Store.open(run.db) as store:
        standings = standings_of(store.tally([1]))
    rows = page.eval_on_selector_all(
        "#standings tbody tr",
        "rows => rows.map(r => [r.dataset.bot, Number(r.dataset.sessions), Number(r.dataset.chips)])",
    )
    assert [row[0] for row in rows] == [line.bot for line in standings.bots]
    for (bot, sessions, chips), line in zip(rows, standings.bots, strict=True):
        assert (bot, sessions) == (line.bot, line.sessions)
        assert chips == pytest.approx(line.chips.mean)


@pytest.mark.parametrize("run", [{"seat": second_rotation_seat()}], indirect=True, ids=["held-once"])
def test_a_watched_tournament_killed_resumes_exactly(run: Run, page: Page) -> None:
    """``kill -9`` of a watched run with tables in play: what was committed stays, resume plays the rest."""
    page.goto(run.url)
    page.wait_for_function("() => Number(document.getElementById('progress').dataset.done) >= 1")
    page.wait_for_function(LIVE_DEAL_WITH_CARDS)  # a table followed, held in play
    with Store.open(run.db) as store:
        before = {key: store.log(session) for key, session in _sessions(store).items()}
    assert 1 <= len(before) < 6
    run.process.kill()
    run.process.wait(timeout=30)
    for gate in run.gates:
        run.release(gate)
    resumed = subprocess.run(
        [sys.executable, "-m", "tournaments.cli", "tournament", "resume", "1", "--db", str(run.db),
         "--out", str(run.db.parent / "out")],
        capture_output=True, text=True, timeout=180, check=False, cwd=run.db.parent,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    verified = subprocess.run(
        [sys.executable, "-m", "tournaments.cli", "log", "verify", "--db", str(run.db)],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
    with Store.open(run.db) as store:
        assert store.tournament(1).status == "finished"
        after = _sessions(store)
        assert len(after) == 6
        assert {key: store.log(after[key]) for key in before} == before  # kept as they were


def _sessions(store: Store) -> dict[tuple[int, int], int]:
    """The stored sessions' ids by (block, rotation)."""
    rows = store.sessions_by_id(store.session_ids(tournament=1))
    return {(row.block, row.rotation): row.id for row in rows}
