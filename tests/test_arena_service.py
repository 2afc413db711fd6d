"""The arena service in process: its first start, people and tokens, what each person may see, the board."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from referee.match.faults import Fault, FaultKind
from referee.rules import PROFILES
from tests.arena_helpers import admitted, new_arena, played_block
from tournaments.arena import service
from tournaments.arena.errors import (
    ForbiddenError,
    NameTakenError,
    NotFoundError,
    NotPublicError,
    QuotaError,
    UnauthorizedError,
)
from tournaments.arena.people import Caller, digest
from tournaments.arena.service import open_arena
from tournaments.arena.settings import ArenaSettings
from tournaments.errors import RunnerError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tournaments.arena.service import Arena


QUICK = {"pimc": "peel"}
"""pimc's seat played by peel's policy: the same board in a fraction of the time (pimc searches)."""


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    opened = new_arena(tmp_path)
    yield opened.arena
    opened.arena.close()


class TestFirstStart:
    """The first start creates the arena and its admin; later starts keep its rules."""

    def test_the_first_start_gives_the_admin_token_once_and_keeps_only_its_digest(
        self, tmp_path: Path
    ) -> None:
        first = new_arena(tmp_path)
        token = first.admin_token
        assert token is not None
        assert first.created
        admin = first.arena.caller(token)
        assert admin is not None
        assert admin.admin
        assert first.arena.store.token(digest(token)) is not None
        stored = (tmp_path / "arena.db").read_bytes()
        assert token.encode() not in stored
        first.arena.close()
        again = open_arena(tmp_path / "arena.db", ArenaSettings(sandbox="off"))
        assert again.admin_token is None
        assert again.arena.meta == first.arena.meta
        again.arena.close()

    def test_a_later_start_with_other_rules_is_refused_in_one_line(self, tmp_path: Path) -> None:
        new_arena(tmp_path).arena.close()
        other = ArenaSettings(sandbox="off", profile=PROFILES["full-ladder"], table_sizes=(3,))
        with pytest.raises(
            RunnerError,
            match=r"arena of other rules \(profile: heather, not full-ladder; table_sizes: 4, not 3\)",
        ):
            open_arena(tmp_path / "arena.db", other)

    def test_a_later_start_may_change_the_house_rules(self, tmp_path: Path) -> None:
        new_arena(tmp_path).arena.close()
        again = open_arena(tmp_path / "arena.db", ArenaSettings(sandbox="off", keep=3, quota=20))
        assert (again.arena.settings.keep, again.arena.settings.quota) == (3, 20)
        again.arena.close()


class TestPeople:
    """Tokens are checked, scoped and revocable; only an admin adds people."""

    def test_an_admin_adds_a_person_whose_token_may_submit_but_not_administer(self, tmp_path: Path) -> None:
        opened = new_arena(tmp_path)
        arena = opened.arena
        admin = arena.caller(opened.admin_token)
        token = arena.add_person(admin, "alice")
        alice = arena.caller(token)
        assert alice is not None
        assert alice.may_submit()
        assert not alice.admin
        with pytest.raises(ForbiddenError):
            arena.add_person(alice, "mallory")
        with pytest.raises(NameTakenError):
            arena.add_person(admin, "alice")
        arena.close()

    def test_a_wrong_or_revoked_token_names_nobody(self, tmp_path: Path) -> None:
        opened = new_arena(tmp_path)
        arena = opened.arena
        admin = arena.caller(opened.admin_token)
        token = arena.add_person(admin, "bob")
        assert arena.caller(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
        assert arena.caller("not a token") is None
        assert arena.caller(None) is None
        assert arena.revoke(admin, "bob") == 1
        assert arena.caller(token) is None
        fresh = arena.new_token(admin, "bob")
        assert arena.caller(fresh) is not None
        with pytest.raises(UnauthorizedError):
            arena.me(None)
        arena.close()


class TestWhatEachPersonSees:
    """Each person sees their own submissions and bot logs; nobody sees a block still in play."""

    def test_another_owners_submission_and_log_are_refused(self, tmp_path: Path) -> None:
        opened = new_arena(tmp_path)
        arena = opened.arena
        admin = arena.caller(opened.admin_token)
        alice = arena.caller(arena.add_person(admin, "alice"))
        bob = arena.caller(arena.add_person(admin, "bob"))
        mine = admitted(arena, "alice", bot="ace")
        assert mine.entry is not None
        assert arena.submission(alice, mine.id)[0].id == mine.id
        with pytest.raises(ForbiddenError):
            arena.submission(bob, mine.id)
        with pytest.raises(ForbiddenError):
            arena.entry_log(bob, mine.entry)
        with pytest.raises(UnauthorizedError):
            arena.entry_log(None, mine.entry)
        assert arena.entry_log(alice, mine.entry)["entry"] == mine.entry
        assert arena.entry_log(admin, mine.entry)["entry"] == mine.entry
        assert [s.id for s in arena.submissions(bob)] == []
        arena.close()

    def test_an_owners_log_shows_the_faults_of_complete_blocks_at_their_decisions(self, arena: Arena) -> None:
        mine = admitted(arena, "alice", bot="ace")
        name = mine.entry
        assert name is not None
        late = Fault(
            kind=FaultKind.LATE,
            bot=name,
            table="t",
            seat=3,
            deal=2,
            decision=5,
            elapsed_ms=1500.0,
            detail="late",
        )
        seats = ("random", "peel", "pimc", name)
        index = played_block(
            arena, seats, policies={name: "peel", **QUICK}, rotations=(0,), faults={0: [late]}
        )
        assert arena.entry_log(_owner("alice"), name)["faults"] == []  # its block is still in play
        played_block(arena, seats, policies={name: "peel", **QUICK}, rotations=(1, 2, 3), index=index)
        [fault] = arena.entry_log(_owner("alice"), name)["faults"]
        assert (fault["kind"], fault["deal"], fault["decision"], fault["elapsed_ms"]) == (
            "late",
            2,
            5,
            1500.0,
        )
        assert fault["replay"] == f"/sessions/{fault['session']}#view=seat3&deal=2&step=6"

    def test_a_session_is_public_only_once_its_block_is_complete(self, arena: Arena) -> None:
        index = played_block(arena, ("random", "peel", "pimc"), policies=QUICK, rotations=(0,))
        [row] = arena.store.find_sessions(tournament=arena.ladder)
        with pytest.raises(NotPublicError, match="not public until every rotation of its block"):
            arena.session_log(row.id)
        played_block(arena, ("random", "peel", "pimc"), policies=QUICK, rotations=(1, 2), index=index)
        assert arena.session_log(row.id)
        with pytest.raises(NotFoundError):
            arena.session_log(row.id + 1000)

    def test_the_quota_counts_the_last_24_hours(self, tmp_path: Path) -> None:
        opened = open_arena(tmp_path / "arena.db", ArenaSettings(sandbox="off", quota=2))
        arena = opened.arena
        alice = arena.caller(arena.add_person(arena.caller(opened.admin_token), "alice"))
        assert alice is not None
        arena.store.add_submission("alice", upload=b"one", digest="d1")
        arena.store.add_submission("alice", upload=b"two", digest="d2")
        with pytest.raises(QuotaError, match="2 submissions in the last 24 hours"):
            arena.submit(alice, b"\x1f\x8b three")
        arena.close()


def _owner(name: str) -> Caller:
    return Caller(name=name, scopes=frozenset({"submit"}))


class TestBoard:
    """The leaderboard is recomputed from the store: complete blocks only, rated against the anchors."""

    def test_the_anchors_are_ranked_by_their_chips_and_only_complete_blocks_count(self, arena: Arena) -> None:
        admitted(arena, "alice", bot="ace")
        ace = "ace.1"
        for _ in range(6):
            played_block(arena, ("random", "peel", "pimc", ace), policies={ace: "peel", **QUICK})
        played_block(
            arena, ("random", "peel", "pimc", ace), policies={ace: "peel", **QUICK}, rotations=(0, 1)
        )
        board = arena.leaderboard()
        assert board.blocks == 6
        rows = {row.entry: row for row in board.rows}
        assert rows["pimc"].rating is not None
        assert rows["random"].rating is not None
        assert rows["pimc"].rating.mean > rows["random"].rating.mean  # peel's play in pimc's seat
        assert rows[ace].owner == "alice"
        assert rows[ace].blocks == 6
        assert rows[ace].sessions == 26
        anchors = [rows[name].rating for name in ("random", "peel", "pimc")]
        assert sum(r.mean for r in anchors if r is not None) == pytest.approx(0.0, abs=1e-9)
        assert board.rows[-1].entry == "random"

    def test_a_retired_entry_is_shown_apart_and_still_rated(self, arena: Arena) -> None:
        old = admitted(arena, "alice", bot="ace")
        admitted(arena, "alice", bot="ace")
        for _ in range(3):
            played_block(arena, ("random", "peel", "pimc", "ace.1"), policies={"ace.1": "random", **QUICK})
            played_block(arena, ("random", "peel", "pimc", "ace.2"), policies={"ace.2": "peel", **QUICK})
        played_block(
            arena, ("random", "peel", "pimc", "ace.2"), policies={"ace.2": "peel", **QUICK}, rotations=(0,)
        )
        arena.store.update_submission(old.id, status="retired", reason="newer versions")
        arena.block_done()
        board = arena.leaderboard()
        assert "ace.1" not in {row.entry for row in board.rows}
        [retired] = board.retired
        assert retired.entry == "ace.1"
        assert retired.rank is None
        assert retired.rating is not None
        record, _ = arena.entry("ace.2")
        assert [v.entry for v in record.versions] == ["ace.1", "ace.2"]
        assert {h.opponent: h.difference.n for h in record.versus} == {"random": 3, "peel": 3, "pimc": 3}


class TestBoardCost:
    """A large board is computed again at most every twenty times what it takes (simulated time)."""

    def test_a_slow_board_waits_a_while_before_it_is_computed_again(
        self, arena: Arena, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        clock = [100.0]
        computed: list[int] = []

        def slow_board(_store: object, ladder: int) -> object:
            clock[0] += 1.0  # one second a board
            computed.append(ladder)
            return object()

        monkeypatch.setattr(service, "monotonic", lambda: clock[0])
        monkeypatch.setattr(service, "leaderboard", slow_board)
        first = arena.leaderboard()
        arena.block_done()
        assert arena.leaderboard() is first  # 1 s to compute: not again for 20 s
        clock[0] += 19.0
        assert arena.leaderboard() is first
        clock[0] += 1.0
        assert arena.leaderboard() is not first
        assert len(computed) == 2
        assert arena.leaderboard() is arena.leaderboard()  # nothing new: not computed again
        assert len(computed) == 2
