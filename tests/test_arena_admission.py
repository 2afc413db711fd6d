"""A submission's way in, for real: unpacked and built in the sandbox, checked in practice, or refused.

Each bad submission is refused with one line its owner reads (no path of the host's in
it) and the details in its owner's private log; a good one is placing, its folder
unpacked, its version registered. Where bubblewrap is installed the sandbox is the one
used (as CI has it); elsewhere these tests run without it.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
from typing import TYPE_CHECKING

import pytest

from tests.arena_helpers import new_arena
from tournaments.arena.admission import admit
from tournaments.arena.people import digest, new_token
from tournaments.arena.settings import ArenaSettings
from tournaments.plan.manifest import scaffold
from tournaments.plan.versions import pack
from tournaments.play.sandbox import sandbox_problem

if TYPE_CHECKING:
    from pathlib import Path

    from tournaments.arena.service import Arena
    from tournaments.store.arena import Submission

pytestmark = pytest.mark.slow


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    sandbox = "off" if sandbox_problem() is not None else "on"
    opened = new_arena(
        tmp_path / "arena", ArenaSettings(sandbox=sandbox, table_sizes=(3,), build_timeout_s=3.0)
    )
    opened.arena.store.add_person("alice", admin=False, token_digest=digest(new_token()), scopes=("submit",))
    return opened.arena


def submitted(arena: Arena, data: bytes) -> Submission:
    return arena.store.add_submission("alice", upload=data, digest=hashlib.sha256(data).hexdigest())


def admitted(arena: Arena, data: bytes) -> Submission:
    submission = submitted(arena, data)
    return asyncio.run(admit(submission, store=arena.store, settings=arena.settings, folder=arena.folder))


def bot(tmp_path: Path, name: str, *, manifest: str = "", files: dict[str, str] | None = None) -> bytes:
    """``nap bot new``'s bot, with lines added to its manifest and files replaced, packed."""
    folder = scaffold(tmp_path / "made", name)
    if manifest:
        with (folder / "nap-bot.toml").open("a", encoding="utf-8") as handle:
            handle.write(manifest)
    for path, text in (files or {}).items():
        (folder / path).write_text(text, encoding="utf-8")
    return pack(folder)


def private(arena: Arena, submission: Submission) -> str:
    return "\n".join(text for _, _, text in arena.store.steps(submission.id, private=True))


def test_a_good_bot_is_unpacked_checked_and_placing(arena: Arena, tmp_path: Path) -> None:
    placing = admitted(arena, bot(tmp_path, "ace"))
    assert placing.status == "placing"
    assert placing.entry == "ace.1"
    assert (arena.folder / "bots" / "1" / "bot.py").is_file()
    assert arena.store.bot("ace.1").content_hash == placing.content_hash
    public = [step for _, step, _ in arena.store.steps(placing.id, private=False)]
    assert public == ["unpack", "build", "check", "placing"]


def test_a_build_that_fails_is_refused_with_its_last_line(arena: Arena, tmp_path: Path) -> None:
    data = bot(
        tmp_path,
        "bad",
        manifest='build = ["sh", "-c", "echo compiling; echo error: no such file >&2; exit 3"]\n',
    )
    refused = admitted(arena, data)
    assert refused.status == "refused"
    assert refused.reason == "build failed with status 3: error: no such file"
    assert "compiling" in private(arena, refused)


def test_a_build_that_hangs_is_stopped_and_refused(arena: Arena, tmp_path: Path) -> None:
    refused = admitted(arena, bot(tmp_path, "slow", manifest='build = ["sleep", "600"]\n'))
    assert refused.status == "refused"
    assert refused.reason == "build took longer than 3 s"


def test_a_bot_that_crashes_at_start_is_refused_by_its_check(arena: Arena, tmp_path: Path) -> None:
    data = bot(tmp_path, "boom", files={"bot.py": "raise SystemExit('boom at start')\n"})
    refused = admitted(arena, data)
    assert refused.status == "refused"
    assert refused.reason is not None
    assert refused.reason.startswith("its check failed: FAIL")
    assert "boom at start" in private(arena, refused)


def test_a_pack_that_is_not_a_tar_and_one_without_a_manifest_are_refused(
    arena: Arena, tmp_path: Path
) -> None:
    not_tar = admitted(arena, gzip.compress(b"plain text, not a tar archive" * 40))
    assert not_tar.status == "refused"
    assert not_tar.reason is not None
    assert not_tar.reason.startswith("not a bot pack")
    folder = scaffold(tmp_path / "made", "nameless")
    (folder / "nap-bot.toml").write_text('name = "nameless"\n', encoding="utf-8")
    no_command = admitted(arena, pack(folder))
    assert no_command.status == "refused"
    assert no_command.reason is not None
    assert str(arena.folder) not in no_command.reason
    assert str(tmp_path) not in no_command.reason


def test_the_same_content_again_is_refused_naming_the_first(arena: Arena, tmp_path: Path) -> None:
    data = bot(tmp_path, "ace")
    first = admitted(arena, data)
    assert first.status == "placing"
    again = admitted(arena, data)
    assert again.status == "refused"
    assert again.reason is not None
    assert "the same content as your submission 1 (ace.1)" in again.reason
