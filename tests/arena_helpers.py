"""Arenas for tests: opened on a temporary database, with ladder blocks played for real in process.

:func:`played_block` adds a block to an arena's ladder and plays it on the referee's match
core with the built-in bots' in-process policies (no process, no gRPC): genuine results
and logs, recorded as the ladder records them. A submitted entry is played by the policy
of the built-in bot :func:`admitted` names for it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from referee.match import TimeLimits
from tournaments.arena.admission import entry_name
from tournaments.arena.people import digest, new_token
from tournaments.arena.service import open_arena
from tournaments.arena.settings import ArenaSettings
from tournaments.plan.entries import BUILTIN_BOTS
from tournaments.plan.scheduler import derive_seed
from tournaments.play.blocks import BlockRun, play_block_in_process
from tournaments.store.logs import encode_log

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from referee.match import Fault
    from tournaments.arena.service import Arena, Opened
    from tournaments.store.arena import BlockKind, Submission, SubmissionStatus


def new_arena(folder: Path, settings: ArenaSettings | None = None) -> Opened:
    """A new arena in ``folder`` (sandbox off unless asked: nothing is built or run here)."""
    return open_arena(folder / "arena.db", settings or ArenaSettings(sandbox="off"))


def admitted(arena: Arena, owner: str, *, bot: str, status: SubmissionStatus = "placed") -> Submission:
    """A submission of ``owner``'s bot ``bot`` taken straight to ``status``, its entry registered.

    Its games are played by a built-in bot: :func:`played_block`'s ``policies`` says which.
    """
    store = arena.store
    if owner not in {person.name for person in store.people()}:
        store.add_person(owner, admin=False, token_digest=digest(new_token()), scopes=("submit",))
    submission = store.add_submission(owner, upload=f"{owner}/{bot}".encode(), digest=f"{owner}-{bot}-upload")
    name = entry_name(bot, submission.id)
    store.register_bot(
        name=name,
        version="1.0",
        command=("python3", "bot.py"),
        language="python",
        folder=None,
        content_hash=f"h-{name}",
    )
    return store.update_submission(
        submission.id,
        status=status,
        name=bot,
        version="1.0",
        language="python",
        command=["python3", "bot.py"],
        content_hash=f"h-{name}",
        entry=name,
    )


def played_block(
    arena: Arena,
    bots: Sequence[str],
    *,
    policies: Mapping[str, str] | None = None,
    rotations: Sequence[int] | None = None,
    faults: Mapping[int, Sequence[Fault]] | None = None,
    kind: BlockKind = "ladder",
    placing: str | None = None,
    index: int | None = None,
) -> int:
    """Add a block at a table of ``bots`` to the ladder and record the sessions of ``rotations`` (all).

    ``policies`` maps a submitted entry to the built-in bot that plays it; ``faults`` adds
    faults to the sessions of some rotations (the built-in bots make none). Returns the
    block's index; ``index`` gives more rotations of a block already added.
    """
    store = arena.store
    ladder = arena.ladder
    if index is None:
        index = max((b.index for b in store.ladder_blocks(ladder)), default=-1) + 1
        store.add_ladder_blocks(
            ladder, [(index, derive_seed(arena.meta.seed, "board", index), tuple(bots), kind, placing)]
        )
    names = dict(policies or {})
    run = BlockRun(
        tournament=ladder,
        index=index,
        board_seed=derive_seed(arena.meta.seed, "board", index),
        bots=tuple(bots),
        profile=arena.settings.profile,
        time_limits=TimeLimits(decision_ms=60_000),
        rotations=tuple(range(len(bots))) if rotations is None else tuple(rotations),
    )
    factories = {name: BUILTIN_BOTS[names.get(name, name)].make_bot() for name in bots}
    for session in play_block_in_process(run, factories):
        key = session.result
        added = tuple((faults or {}).get(key.rotation, ()))
        if added:
            key = dataclasses.replace(key, faults=(*key.faults, *added))
        store.record_session(
            key, log=encode_log(session.log, tournament=ladder, block=key.block, rotation=key.rotation)
        )
    arena.block_done()
    return index
