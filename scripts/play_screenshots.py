"""The screenshots of docs/play.md: ``nap play``'s page in a real session, at 1280 and 420 px wide.

    .venv/bin/python scripts/play_screenshots.py [--out docs]

Starts ``nap play`` (peel and pimc, heather, seat 0) with a throwaway database, plays the
person with the first legal choice in Chromium (Debian's, through Playwright's
``executable_path``) until, in the second deal (the first one's settlement shown), a trick
is under way after another and it is the person's turn to play a card, and takes ``play-1280.png``;
then a 420 px tab takes the seat over and ``play-420.png`` is taken. The session is then
left to the fault policy and the command stopped.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"


def _at_a_card_decision(page: Page) -> None:
    """Answer decisions (the first choice) until, from the second deal on, a later trick is under way."""
    for _ in range(200):
        page.wait_for_function("document.body.dataset.deciding === 'yes'", timeout=120_000)
        trick = page.locator("#trick [data-card]").count()
        second_deal = page.evaluate("document.body.dataset.deal") != "0"
        last = page.locator("#lasttrick [data-card]").count()
        if second_deal and page.locator("#hand .card.legal").count() and trick and last:
            return
        page.locator("[data-action]:not([disabled])").first.click()
    message = "no card decision with a trick under way in 200 decisions"
    raise RuntimeError(message)


def main() -> None:
    """Take both screenshots into ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "tournaments.cli", "play", "--no-browser", "--sandbox", "off"]
        command += ["-b", "peel", "-b", "pimc", "-b", "random", "--name", "ann", "--seed", "4"]
        command += ["--db", f"{folder}/nap.db", "--out", f"{folder}/out"]
        process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)  # noqa: S603 - our command
        try:
            assert process.stdout is not None  # noqa: S101 - a pipe was asked for
            url = ""
            while not url:
                url = next((w for w in process.stdout.readline().split() if w.startswith("http://")), "")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
                )
                wide = browser.new_page(viewport={"width": 1280, "height": 860}, bypass_csp=True)
                wide.goto(url)
                _at_a_card_decision(wide)
                wide.wait_for_timeout(400)  # let the clock's bar move a little
                wide.screenshot(path=args.out / "play-1280.png", full_page=True)
                narrow = browser.new_page(viewport={"width": 420, "height": 900}, bypass_csp=True)
                narrow.goto(url)
                narrow.wait_for_function("document.body.dataset.deciding === 'yes'")
                narrow.wait_for_timeout(400)
                narrow.screenshot(path=args.out / "play-420.png", full_page=True)
                browser.close()
        finally:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
