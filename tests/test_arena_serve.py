"""``nap arena serve`` for real: people submit over HTTP, the ladder ranks the anchors, kill -9 loses nothing.

The arena runs as its own process (the command a host types), its bots in the sandbox
where bubblewrap is installed; people are added and bots submitted through its HTTP API,
as ``nap arena`` and ``nap bot submit --arena`` do. The leaderboard is read from the API;
what was played is checked against the store.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from tournaments.arena.client import ArenaClient, Connection
from tournaments.plan.manifest import scaffold
from tournaments.plan.versions import pack

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

pytestmark = pytest.mark.slow

_STARTED = re.compile(r"^arena (?:created|started): (http://\S+) ")
_TOKEN = re.compile(r"^admin token \(shown once, keep it\): (nap_\S+)$")
_PATIENCE_S = 900.0
"""How long the ladder may take to rank the anchors on a loaded two-core machine (about 2 min quiet)."""


class Arena:
    """A running ``nap arena serve`` and what it printed."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        self.url = ""
        self.admin_token: str | None = None
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if found := _STARTED.match(line):
                self.url = found.group(1)
            if found := _TOKEN.match(line.strip()):
                self.admin_token = found.group(1)
            if line.startswith("stop it with"):
                self._ready.set()
        self._ready.set()

    def stop(self) -> int | None:
        """SIGTERM, as a host stops it; its exit status (None: it had to be killed after a minute)."""
        process = self.process
        status: int | None = process.poll()
        if status is None:
            process.send_signal(signal.SIGTERM)
            try:
                status = process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self._reader.join(30)
        assert process.stdout is not None
        process.stdout.close()
        return status

    def wait_ready(self) -> None:
        assert self._ready.wait(120), self.lines
        assert self.url, self.lines

    def client(self, token: str) -> ArenaClient:
        return ArenaClient(Connection(url=self.url.rstrip("/"), token=token, token_source="the test"))  # noqa: S106 - where, not a secret


@contextmanager
def serving(db: Path, *extra: str) -> Iterator[Arena]:
    """``nap arena serve`` on a free port, until the test ends (SIGTERM, then SIGKILL if need be)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tournaments.cli", "arena", "serve", "--db", str(db), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        start_new_session=True,
    )
    arena = Arena(process)
    try:
        arena.wait_ready()
        yield arena
    finally:
        arena.stop()


def until(what: str, found: Callable[[], bool], *, seconds: float = _PATIENCE_S) -> None:
    """Wait until ``found()`` (checked every second); fail naming ``what`` after ``seconds``."""
    end = time.monotonic() + seconds
    while not found():
        assert time.monotonic() < end, f"not within {seconds:g} s: {what}"
        time.sleep(1.0)


def bot_pack(folder: Path, name: str, *, body: str | None = None) -> bytes:
    """A bot folder made as ``nap bot new`` makes it (its play changed by ``body``), packed."""
    made = scaffold(folder, name)
    if body is not None:
        (made / "bot.py").write_text(body, encoding="utf-8")
    return pack(made)


CRASHES = "import sys\nsys.exit('this bot crashes at start')\n"


def stored(db: Path) -> dict[int, tuple[int, int]]:
    """Each ladder block's seats and sessions stored, read straight from the database."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT b.idx, json_array_length(b.bots), count(s.id) FROM blocks b"
            " LEFT JOIN sessions s ON s.tournament_id = b.tournament_id AND s.block_idx = b.idx"
            " GROUP BY b.idx"
        ).fetchall()
    return {index: (seats, sessions) for index, seats, sessions in rows}


def test_people_submit_the_ladder_ranks_the_anchors_and_kill_9_loses_no_block(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    settings = ("-k", "3", "--tables", "6", "--placement", "2", "--workers", "2")
    with serving(db, *settings) as arena:
        assert arena.admin_token is not None
        admin = arena.client(arena.admin_token)
        people = {name: arena.client(admin.add_person(name)) for name in ("alice", "bob", "carol")}
        alice = people["alice"].submit(bot_pack(tmp_path / "a", "ace"))
        bob = people["bob"].submit(bot_pack(tmp_path / "b", "bee"))
        broken = people["carol"].submit(bot_pack(tmp_path / "c", "cee", body=CRASHES))
        assert {alice.status, bob.status, broken.status} == {"queued"}

        until("carol's bot refused", lambda: people["carol"].submission(broken.id).status == "refused")
        refused = people["carol"].submission(broken.id)
        assert refused.reason is not None
        assert "check failed" in refused.reason
        assert any(
            "this bot crashes at start" in step.text for step in refused.steps or ()
        )  # her log says why
        until(
            "alice's and bob's placed",
            lambda: all(
                people[n].submission(s.id).status == "placed" for n, s in (("alice", alice), ("bob", bob))
            ),
        )

        def ranked() -> bool:
            rows = {row["entry"]: row for row in admin.leaderboard()["entries"]}
            ranks = [rows[name]["rank"] for name in ("pimc", "peel", "random")]
            return None not in ranks and ranks[0] < ranks[1] < ranks[2]

        until("pimc ranked above peel above random", ranked)
        board = {row["entry"]: row for row in admin.leaderboard()["entries"]}
        assert (
            board["pimc"]["rating"]["mean"]
            > board["peel"]["rating"]["mean"]
            > board["random"]["rating"]["mean"]
        )
        assert all(board[name]["rating"]["half_width"] > 0 for name in board)
        assert "cee.3" not in board

        os.killpg(arena.process.pid, signal.SIGKILL)
        arena.process.wait()
    before = stored(db)
    complete = {index for index, (seats, sessions) in before.items() if sessions == seats}
    partial = {index for index, (seats, sessions) in before.items() if 0 < sessions < seats}
    assert complete

    with serving(db) as again:
        assert again.admin_token is None  # shown once, at the first start
        until(
            "the blocks left partial finished",
            lambda: all(stored(db)[index][1] == stored(db)[index][0] for index in partial),
        )
    after = stored(db)
    for index in complete:
        assert after[index] == before[index]  # nothing counted twice: the same sessions
    assert all(sessions <= seats for seats, sessions in after.values())


@pytest.mark.xdist_group("ray")
def test_the_ladder_plays_on_ray_workers_and_places_a_submission(tmp_path: Path) -> None:
    """--executor ray: a local Ray instance's workers start a new entry on demand and play its blocks."""
    db = tmp_path / "arena.db"
    with serving(
        db, "-k", "3", "--tables", "4", "--placement", "2", "--executor", "ray", "--workers", "2"
    ) as arena:
        assert arena.admin_token is not None
        admin = arena.client(arena.admin_token)
        alice = arena.client(admin.add_person("alice"))
        submitted = alice.submit(bot_pack(tmp_path / "a", "ace"))
        until("alice's bot placed on Ray workers", lambda: alice.submission(submitted.id).status == "placed")
        until("ten complete blocks", lambda: admin.leaderboard()["blocks"] >= 10)
        board = {row["entry"]: row for row in admin.leaderboard()["entries"]}
        assert board["ace.1"]["blocks"] >= 2
        assert board["ace.1"]["rating"] is not None
    assert all(sessions <= seats for seats, sessions in stored(db).values())


def test_sigterm_while_a_bot_is_checked_stops_the_arena_and_the_next_start_admits_it(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with serving(db, "-k", "3", "--tables", "4", "--placement", "2") as arena:
        assert arena.admin_token is not None
        token = arena.client(arena.admin_token).add_person("alice")
        alice = arena.client(token)
        submitted = alice.submit(bot_pack(tmp_path / "a", "ace"))
        until("its check running", lambda: alice.submission(submitted.id).status == "checking")
        assert arena.stop() == 0
        assert any(line.startswith("arena stopped (SIGTERM)") for line in arena.lines), arena.lines[-30:]
    with serving(db) as again:
        alice = again.client(token)
        until(
            "admitted again from the top, and placed",
            lambda: alice.submission(submitted.id).status == "placed",
        )
