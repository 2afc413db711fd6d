"""The linked pages in a real browser: from the standings to a session's replay and through it.

A tiny real tournament (three seats, three sessions, one bot that dies at its first card
so that there are faults) is published as ``nap tournament run`` publishes it; headless
Chromium (the Debian package, driven by Playwright with ``executable_path``: no browser
is downloaded) opens ``standings.html`` and follows links the way a person would.
Screenshots are kept in the test's temporary folder (``shots/``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import pytest
from click.testing import CliRunner

from tournaments.cli import main

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Browser, Page

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra")

pytestmark = pytest.mark.slow


DYING_BOT = '''"""Passes every bid, then dies at its first card."""

import os

from clients.sdk import Bot, run
from referee.rules import PASS, Bid, Card, SeatView


class Dying(Bot):
    def bid(self, view: SeatView) -> Bid:
        return PASS

    def play(self, view: SeatView) -> Card:
        os._exit(7)


if __name__ == "__main__":
    run(Dying, name="dying", version="1")
'''


class Published(NamedTuple):
    folder: Path
    """The tournament's folder, ``<out>/t1``."""
    shots: Path
    """Where the screenshots go."""


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Published:
    """A real three-session tournament with a bot that dies, published into ``out/t1``."""
    root = tmp_path_factory.mktemp("browser")
    bot = root / "dying"
    bot.mkdir()
    (bot / "bot.py").write_text(DYING_BOT, encoding="utf-8")
    (bot / "nap-bot.toml").write_text(
        'name = "dying"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n', encoding="utf-8"
    )
    args = [
        "tournament", "run", "-b", str(bot), "-b", "random", "-b", "r2=random", "-n", "3",
        "--decision-ms", "200", "--db", str(root / "nap.db"), "--out", str(root / "out"),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    shots = root / "shots"
    shots.mkdir()
    return Published(root / "out" / "t1", shots)


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    opened = browser.new_page(viewport={"width": 1200, "height": 900})
    opened.set_default_timeout(15_000)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    opened.close()
    assert not errors, f"script errors on the page: {errors}"


def position(page: Page) -> str:
    return page.inner_text("#position")


def drawn_cards(page: Page, seat: int) -> list[str]:
    """The cards face up in ``seat``'s hand (card backs have no ``data-card``)."""
    cards: list[str] = page.eval_on_selector_all(
        f'.hand[data-seat="{seat}"] [data-card]', "nodes => nodes.map(n => n.dataset.card)"
    )
    return cards


def test_from_the_standings_to_a_replay_and_through_it(published: Published, page: Page) -> None:
    """Standings -> a bot's sessions -> a replay; keys step, autoplay moves, a seat sees only its cards."""
    page.goto((published.folder / "standings.html").as_uri())
    page.screenshot(path=published.shots / "standings.png", full_page=True)
    page.locator("table").first.locator('a:text-is("random")').click()  # the ranking's bot column
    page.wait_for_url("**/sessions.html#bot=random")
    assert page.inner_text("#filter") == "Sessions of random: 3 of 3"
    page.screenshot(path=published.shots / "sessions.png", full_page=True)
    page.click("tbody tr:first-child a:text-is('replay')")
    page.wait_for_url("**/replays/s1.html*")
    assert page.inner_text("h1") == "Session 1: tournament 1, block 0, rotation 0"
    assert page.locator("#who [data-who]").count() == 3

    page.goto(page.url.split("#")[0] + "#view=table&deal=0&step=0")
    page.reload()
    assert position(page).startswith("step 0 /")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert position(page).startswith("step 2 /")
    assert "step=2" in page.url
    page.keyboard.press("ArrowLeft")
    assert position(page).startswith("step 1 /")

    page.select_option("#speed", "120")
    page.click("#play")
    assert page.get_attribute("#play", "aria-pressed") == "true"
    page.wait_for_function("!document.getElementById('position').textContent.startsWith('step 1 /')")
    page.click("#play")
    assert page.get_attribute("#play", "aria-pressed") == "false"
    page.screenshot(path=published.shots / "autoplay.png", full_page=True)

    page.goto(page.url.split("#")[0] + "#view=table&deal=0&step=0")
    page.reload()
    table = [drawn_cards(page, seat) for seat in range(3)]
    assert all(len(hand) == 5 for hand in table)
    page.select_option("#view", "seat1")
    assert drawn_cards(page, 1) == table[1]
    assert drawn_cards(page, 0) == []
    assert drawn_cards(page, 2) == []
    assert page.locator('.hand[data-seat="0"] .card.back').count() == 5
    shown = page.eval_on_selector_all("[data-card]", "nodes => nodes.map(n => n.dataset.card)")
    assert not set(shown) & (set(table[0]) | set(table[2]))
    page.screenshot(path=published.shots / "seat1.png", full_page=True)


def test_a_faulty_session_opens_at_its_fault(published: Published, page: Page) -> None:
    """The standings list the faulty sessions; each link opens its replay marked at the fault."""
    page.goto((published.folder / "standings.html").as_uri())
    page.click("li.fault a >> nth=0")
    page.wait_for_url("**/replays/s*.html#view=table&deal=*")
    assert page.is_visible("#fault")
    assert page.inner_text("#fault").startswith("\u26a0 fault: seat ")
    assert "(dying)" in page.inner_text("#fault")
    assert page.locator("#timeline .tick.fault.here").count() == 1
    assert page.locator(".panel .badge.fault").count() == 1
    page.screenshot(path=published.shots / "fault.png", full_page=True)
    page.keyboard.press("ArrowRight")
    sync_api.expect(page.locator("#timeline .tick.here:not(.fault)")).to_have_count(1)


def test_the_replay_fits_a_phone(published: Published, browser: Browser) -> None:
    """At 420 px wide nothing scrolls sideways, and the seats sit around the table in two columns."""
    narrow = browser.new_page(viewport={"width": 420, "height": 900})
    try:
        narrow.goto((published.folder / "replays" / "s1.html").as_uri() + "#view=seat0&deal=0&step=3")
        width = narrow.evaluate("document.documentElement.scrollWidth")
        assert width <= 420
        boxes = []
        for seat in range(3):
            box = narrow.locator(f'[data-panel="{seat}"]').bounding_box()
            assert box is not None
            assert box["width"] < 420
            boxes.append(box)
        bottom, left, right = boxes
        assert left["y"] < bottom["y"], "seat 0 (the viewer) sits at the bottom"
        assert right["y"] < bottom["y"], "seat 0 (the viewer) sits at the bottom"
        assert left["x"] < right["x"]
        assert bottom["width"] > 1.5 * left["width"], "the viewer's seat spans both columns"
        narrow.screenshot(path=published.shots / "replay-420.png", full_page=True)
    finally:
        narrow.close()


@pytest.mark.parametrize("name", ["standings.html", "sessions.html"])
def test_the_standings_and_sessions_fit_a_phone(published: Published, browser: Browser, name: str) -> None:
    """At 420 px wide the page does not scroll sideways: a wide table or chart scrolls in its own box."""
    narrow = browser.new_page(viewport={"width": 420, "height": 900})
    try:
        narrow.goto((published.folder / name).as_uri())
        width = narrow.evaluate("document.documentElement.scrollWidth")
        narrow.screenshot(path=published.shots / name.replace(".html", "-420.png"), full_page=True)
        assert width <= 420
    finally:
        narrow.close()
