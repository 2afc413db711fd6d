"""Watching a real tournament in a real browser: standings as sessions commit, a table as it is played.

A small tournament (two blocks of three sessions on two worker processes: the tables'
events come over the workers' pipes) runs ``nap tournament run --watch --no-browser``.
One bot holds every table still once its second deal has a trick played, while a file
``hold`` is in its folder: so the page is looked at while tables are in play, whatever
the machine's speed, and released by removing the file. Headless Chromium (Debian's,
through Playwright's ``executable_path``) follows a table; every card it shows is checked
against the stored log: the cards of a deal, in page order, are the first cards played
in it, so none comes from a hand. At the end the page's standings are the store's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from referee.rules import Card, SessionRecord
from tournaments.stats.standings import standings_of
from tournaments.store.database import Store
from tournaments.store.logs import decode_log

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Page

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra")

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[1]
DOCS_SHOT = ROOT / "docs" / "watch.png"
"""Written when NAP_WATCH_SCREENSHOT=1 (the picture in docs/watch.md)."""

HELD_BOT = '''"""Random, but holds still from its second deal's second trick while the file hold exists."""

import random
import time
from pathlib import Path

from clients.sdk import Bot, run

HOLD = Path("hold")


class Held(Bot):
    def decide(self, view):
        if view.deal_number >= 1 and view.tricks and HOLD.exists():
            while HOLD.exists():
                time.sleep(0.02)
        key = (self.table, self.seat, view.deal_number, len(view.tricks), len(view.trick))
        return random.Random(str(key)).choice(view.legal_actions)


if __name__ == "__main__":
    run(Held, name="held", version="1")
'''


def chromium() -> str:
    found = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if found is None:
        pytest.skip("chromium not installed: apt-get install chromium")
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = chromium()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        yield launched
        launched.close()


class Run:
    """The tournament being watched: its process, its page's address, its store and the held bot's gate."""

    def __init__(self, root: Path) -> None:
        bot = root / "held"
        bot.mkdir()
        (bot / "bot.py").write_text(HELD_BOT, encoding="utf-8")
        (bot / "nap-bot.toml").write_text(
            'name = "held"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n', encoding="utf-8"
        )
        self.hold = bot / "hold"
        self.hold.touch()
        self.db = root / "nap.db"
        args = [
            sys.executable, "-m", "tournaments.cli", "tournament", "run",
            "-b", str(bot), "-b", "random", "-b", "r2=random", "-n", "6", "--workers", "2",
            "--seed", "11", "--decision-ms", "60000", "--sandbox", "off",
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

    def release(self) -> None:
        self.hold.unlink(missing_ok=True)

    def stop(self) -> None:
        self.release()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    started = Run(tmp_path)
    yield started
    started.stop()


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


def test_a_tournament_watched_live(run: Run, page: Page, browser: Browser) -> None:
    """Standings update as sessions commit; a followed table shows only cards already played."""
    page.goto(run.url)
    page.wait_for_selector('#progress[data-total="6"]')
    assert int(page.get_attribute("#progress", "data-done") or "0") < 6  # a table is held
    page.wait_for_function("() => document.querySelectorAll('#tables option:not([value=\"\"])').length >= 2")
    last = page.eval_on_selector_all("#tables option", "nodes => nodes.map(n => n.value)")[-1]
    page.select_option("#tables", last)
    page.wait_for_function(f"() => document.getElementById('table').dataset.table === '{last}'")
    # held: the second deal (or a later one) has a trick and is not over
    page.wait_for_function(
        "() => [...document.querySelectorAll('#table .deal:not(.over)')].some(d => d.querySelector('[data-card]'))"
    )
    live = shown_cards(page)
    assert live["over"] == "false"
    if os.environ.get("NAP_WATCH_SCREENSHOT"):
        page.screenshot(path=DOCS_SHOT, full_page=False)

    narrow = browser.new_page(viewport={"width": 420, "height": 900})
    try:
        narrow.goto(run.url)
        narrow.wait_for_selector('#progress[data-total="6"]')
        narrow.wait_for_selector("#table [data-card]")
        assert narrow.evaluate("document.documentElement.scrollWidth") <= 420
    finally:
        narrow.close()

    run.release()
    assert run.process.wait(timeout=120) == 0, run.output.read_text(encoding="utf-8", errors="replace")
    page.wait_for_selector('#state[data-state="finished"]')
    assert page.get_attribute("#progress", "data-done") == "6"

    played = played_cards(run.db, live["block"], live["rotation"])
    for deal, cards in live["cards"].items():
        assert cards == played[int(deal)][: len(cards)], f"deal {deal}: {cards} vs played {played[int(deal)]}"
    held = [deal for deal in live["live"] if live["cards"].get(deal)]
    assert held, live
    for deal in held:
        assert len(live["cards"][deal]) < len(played[int(deal)]), (
            "a live deal shows fewer cards than it plays"
        )

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
