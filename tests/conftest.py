"""What every test runs with.

Without ``--seed`` a tournament draws a secret random seed (docs/security.md); the tests
that check outcomes want the same deals every run, so the suite gives the command line a
seed through ``$NAP_SEED``. The tests of the secret default seed take it away again
(``monkeypatch.delenv``).

A test not marked ``slow`` starts no process: `tox -e quick` runs exactly those tests
and promises no bot, CLI, worker or Ray process. While such a test (its fixtures
included) runs, every way Python has to start a process is replaced by one that
records the attempt and raises; the test then fails, even if the code under test caught
the error, with a message saying to mark it ``slow``. This holds in every run, the
whole suite's too, so a new test cannot slip a process into the quick run unnoticed.
Threads (an in-process gRPC server on 127.0.0.1:0) are allowed.

Whether bubblewrap can make a sandbox here is a fact of the machine that the command
line and the runner ask for (:func:`~tournaments.play.sandbox.sandbox_problem`, cached per
process): it is asked once as the session starts, before any test, so that the answer,
which starts one probe process, is never charged to the quick test that first needs it
(run alone, a test's file would fail otherwise).

A test marked ``heavy`` (thousands of deals or simulated matches, checked by invariants
or statistics) is slow as well, and runs with coverage paused (tox's py env measures the
rest in the same run), so that its workers fill the time the process tests spend waiting.
"""

from __future__ import annotations

import _posixsubprocess
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import coverage
import pytest

from tournaments.play.sandbox import sandbox_problem

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from playwright.sync_api import Browser


def pytest_sessionstart(session: pytest.Session) -> None:
    """Probe the sandbox once, before any test runs (see the module's docstring)."""
    del session
    sandbox_problem()


@pytest.fixture(autouse=True, scope="session")
def _seeded() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NAP_SEED", os.environ.get("NAP_TEST_SEED", "1"))
        yield


PROCESS_STARTERS: tuple[tuple[object, str], ...] = (
    # subprocess.Popen (and so subprocess.run, asyncio's subprocesses, os.popen) ends in
    # subprocess's own name for _posixsubprocess.fork_exec, unless it takes its posix_spawn
    # path; multiprocessing's spawn and forkserver call fork_exec itself.
    (subprocess, "_fork_exec"),
    (_posixsubprocess, "fork_exec"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    # multiprocessing's fork, os.spawn*, pty.fork.
    (os, "fork"),
    (os, "forkpty"),
    (os, "system"),
)
"""Every function through which Python code starts a process, as (module, name)."""

STARTED_KEY = pytest.StashKey[list[str]]()
"""The processes a test not marked slow tried to start: the function and its first argument."""


def _refusing(name: str, attempts: list[str]) -> object:
    def refuse(*args: object, **_: object) -> NoReturn:
        attempts.append(f"{name}({args[0]!r}, ...)" if args else f"{name}()")
        message = f"a test not marked slow started a process through {name}: mark the test slow"
        raise PermissionError(message)

    return refuse


@contextmanager
def _untraced() -> Iterator[None]:
    """Coverage paused in this process, and not started in the processes it starts, meanwhile.

    Under ``coverage run`` (tox's py env) a pytest-xdist worker measures itself and, through
    ``COVERAGE_PROCESS_CONFIG`` (coverage's ``patch = subprocess``), every Python process it
    starts; outside it there is nothing to pause.
    """
    current = coverage.Coverage.current()
    if current is None:
        yield
        return
    config = os.environ.pop("COVERAGE_PROCESS_CONFIG", None)
    current.stop()
    try:
        yield
    finally:
        current.start()
        if config is not None:
            os.environ["COVERAGE_PROCESS_CONFIG"] = config


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """Guard a test that is not marked slow, from its fixtures' setup to their teardown.

    A heavy test runs untraced (:func:`_untraced`): its checks are invariants and statistics
    over thousands of deals, which tracing made several times slower, and the code they play
    is covered by the other tests.
    """
    del nextitem
    if item.get_closest_marker("heavy") is not None:
        with _untraced():
            return (yield)
    if item.get_closest_marker("slow") is not None:
        return (yield)
    attempts = item.stash.setdefault(STARTED_KEY, [])
    with pytest.MonkeyPatch.context() as patch:
        for module, name in PROCESS_STARTERS:
            if hasattr(module, name):
                patch.setattr(module, name, _refusing(name, attempts))
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, object, object]:
    """Fail a phase (setup, call, teardown) in which the test tried to start a process, caught or not."""
    report = yield
    attempts = item.stash.get(STARTED_KEY, [])
    if attempts and isinstance(report, pytest.TestReport):
        if not report.failed:  # passed or skipped with the error caught: fail it all the same
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} is not marked slow but started a process in its {call.when}: "
                f"{'; '.join(attempts)}. Mark it @pytest.mark.slow (tox -e quick runs no process)."
            )
        attempts.clear()
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A heavy test is a slow one: `-m "not slow"` leaves it out, and it may start processes."""
    for item in items:
        if item.get_closest_marker("heavy") is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


CHROMIUM = "/usr/bin/chromium"
"""Debian's Chromium, which the browser tests drive (.ci/run installs it); no browser is downloaded."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium through Playwright (``executable_path``); the test is skipped without either."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra")
    found = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if found is None:
        pytest.skip("chromium not installed: apt-get install chromium")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=found, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        yield launched
        launched.close()
