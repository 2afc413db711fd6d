"""The arena's pages in a real browser: the leaderboard, an entry, a replay, and what one person may see.

The arena (:func:`tests.arena_web_helpers.build_arena`: blocks played for real in process)
is served by :func:`tournaments.arena.web.make_app` on 127.0.0.1 from a thread of its own,
whose loop alone touches the arena (its SQLite connection is that thread's). Headless
Chromium (Debian's, through Playwright's ``executable_path``) opens the pages; a test
completes a block in that thread while the leaderboard is open, and the page shows it.
"""

from __future__ import annotations

import asyncio
import re
import threading
from typing import TYPE_CHECKING, TypeVar

import pytest
from aiohttp import web

from tests.arena_helpers import played_block
from tests.arena_web_helpers import (
    ENTRY,
    OWN_LOG,
    POLICIES,
    SEATS,
    SETTINGS,
    Built,
    build_arena,
    cards_in,
    in_play,
)
from tournaments.arena.service import open_arena
from tournaments.arena.web import make_app

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from playwright.sync_api import Browser, Page

    from tournaments.arena.service import Arena

pytestmark = pytest.mark.slow

T = TypeVar("T")
WAIT_MS = 30_000
"""How long a page may take to show what the test waits for: a bound reached only when it is broken."""


class Served:
    """An arena served on 127.0.0.1 by a loop in a thread of its own; :meth:`call` runs code on that loop."""

    def __init__(self, built: Built) -> None:
        self.built = built
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="arena server", daemon=True)
        self._thread.start()
        self.arena: Arena = self.call(lambda: open_arena(built.folder / "arena.db", SETTINGS).arena)
        self._runner = web.AppRunner(make_app(self.arena), handle_signals=False, shutdown_timeout=1.0)
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=60)

    async def _start(self) -> str:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        return f"http://{host}:{port}"

    def call(self, work: Callable[[], T]) -> T:
        """``work()``, run on the server's loop (the arena's thread)."""

        async def run() -> T:
            return work()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=120)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=60)
        self.call(self.arena.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=60)
        self._loop.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    built = build_arena(tmp_path)
    server = Served(built)
    yield server
    server.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context's page; any script error or refused script fails the test."""
    context = browser.new_context()
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    yield opened
    context.close()
    assert [p for p in problems if "Failed to load resource" not in p] == []


def sign_in(page: Page, url: str, token: str) -> None:
    page.goto(f"{url}/login")
    page.fill("input[name=token]", token)
    page.click("form.login button[type=submit]")
    page.wait_for_selector("#signed-in", timeout=WAIT_MS)


def test_the_leaderboard_an_entry_and_a_replay_render(served: Served, page: Page) -> None:
    page.goto(served.url + "/")
    rows = page.locator("table.board tbody tr")
    assert sorted(rows.evaluate_all("rows => rows.map(row => row.dataset.entry)")) == sorted(SEATS)
    # the arena's seed is secret, so the boards differ each run: an entry's two blocks may
    # happen to give it the same chips, and then its rating says so instead of an interval
    two_blocks = r"[+-]\d+\.\d\d( ± \d+\.\d\d \(only 2 blocks\)| \(no variation over 2 blocks\))"
    for rating in page.locator("table.board td.rating").all_inner_texts():
        assert re.fullmatch(two_blocks, rating), rating
    page.click(f"a[href='/entries/{ENTRY}']")
    page.wait_for_url(f"**/entries/{ENTRY}")
    assert page.inner_text("h1") == ENTRY
    assert page.locator("table.versus tbody tr").count() == 3
    page.click("ul.sessions a >> nth=0")
    page.wait_for_url("**/sessions/*")
    page.wait_for_selector("[data-card]", timeout=WAIT_MS)  # the replay's script ran: its hash let it
    assert page.inner_text("#caption").startswith("Deal 1 dealt by seat")  # deals counted from 1 for people
    assert page.title().startswith("Session ")


def test_another_person_never_sees_alices_bot_log_nor_a_card_in_play(served: Served, page: Page) -> None:
    built = served.built
    served.call(lambda: setattr(served.arena, "tables", in_play(served.arena, built)))
    sign_in(page, served.url, built.bob)
    assert page.inner_text("#signed-in") == "bob"
    seen = []
    log = page.goto(f"{served.url}/entries/{ENTRY}/log")
    assert log is not None
    assert log.status == 403
    assert page.inner_text("#message") == f"the log of {ENTRY} is its owner's"
    seen.append(page.content())
    unfinished = page.goto(f"{served.url}/sessions/{built.unfinished}")
    assert unfinished is not None
    assert unfinished.status == 404
    assert "is not public until every rotation of its block has been played" in page.inner_text("#message")
    seen.append(page.content())
    page.goto(f"{served.url}/live")
    assert "rotation 0: deal " in page.inner_text("#tables")
    page.wait_for_timeout(2500)  # the page fetches itself again every two seconds: look after it did
    live = page.content()
    assert cards_in(live) == []
    for path in ("/", f"/entries/{ENTRY}", "/me"):
        page.goto(served.url + path)
        seen.append(page.content())
    answer = page.evaluate(f"fetch('/api/v1/entries/{ENTRY}/log').then(r => r.status)")
    assert answer == 403
    for shown in seen:
        assert OWN_LOG not in shown
    assert cards_in(seen[1]) == []


def test_the_leaderboard_shows_a_block_as_it_completes(served: Served, page: Page) -> None:
    page.goto(served.url + "/")
    page.wait_for_selector("body[data-live=open]", timeout=WAIT_MS)
    assert page.inner_text("#blocks") == "2"
    served.call(lambda: played_block(served.arena, SEATS, policies=POLICIES))
    page.wait_for_selector('#blocks:text-is("3")', timeout=WAIT_MS)
    ratings = page.locator("table.board td.rating").all_inner_texts()
    assert all(re.search(r"\((only|no variation over) 3 blocks\)$", rating) for rating in ratings), ratings
