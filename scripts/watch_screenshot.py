"""Take docs/watch.png: the watch page of a real tournament (peel, random, pimc) while it plays.

Runs ``nap tournament run --watch --no-browser`` in a temporary folder, opens the page in
headless Chromium (Debian's ``/usr/bin/chromium``, through Playwright: no browser is
downloaded), waits until sessions are committed and the followed table has a deal in
play and one settled, takes the picture, and stops the run.

    python scripts/watch_screenshot.py [--out docs/watch.png] [--width 1000] [--height 1250]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
READY = (
    "() => Number(document.getElementById('progress').dataset.done) >= 20"
    " && document.querySelector('#table .deal.over') !== null"
    " && [...document.querySelectorAll('#table .deal:not(.over)')]"
    ".some(d => d.querySelectorAll('[data-card]').length >= 4)"
)


def main() -> None:
    """Take the picture."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "watch.png")
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--height", type=int, default=1250)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nap-watch-shot-") as folder:
        root = Path(folder)
        output = root / "output.txt"
        command = [
            sys.executable, "-m", "tournaments.cli", "tournament", "run",
            "-b", "peel", "-b", "random", "-b", "pimc", "-n", "90", "--workers", "2", "--seed", "5",
            "--watch", "--no-browser", "--db", str(root / "nap.db"), "--out", str(root / "out"),
        ]  # fmt: skip
        with output.open("wb") as sink:
            run = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, cwd=root)  # noqa: S603 - our own command
        try:
            url = _address(output, run)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=options.chromium, args=["--no-sandbox", "--disable-dev-shm-usage"]
                )
                page = browser.new_page(viewport={"width": options.width, "height": options.height})
                page.goto(url)
                page.wait_for_function(READY, timeout=300_000)
                page.screenshot(path=options.out)
                browser.close()
        finally:
            run.terminate()
            run.wait(timeout=60)
    print(f"wrote {options.out}")


def _address(output: Path, run: subprocess.Popen[bytes]) -> str:
    """The page's address, once the run has printed it."""
    while run.poll() is None:
        found = re.search(r"watch it live at (\S+)", output.read_text(encoding="utf-8", errors="replace"))
        if found:
            return found.group(1)
        time.sleep(0.2)
    sys.exit(f"the run stopped before printing its address:\n{output.read_text(encoding='utf-8')}")


if __name__ == "__main__":
    main()
