"""A person at the table: sessions against bots, played through a page, stored like any other.

:func:`play_at_table` starts a referee with the bots (isolated as in a tournament, one
process each) and the person's seat, a remote bot of the referee
(:class:`~tournaments.play.host.Hosting`) that this process connects with its token
through the SDK's stream (:class:`~tournaments.web.seat.PersonSeat`). The page, served on
127.0.0.1 under a secret token (:class:`~tournaments.web.server.PageServer`), talks only
to that seat, so the referee alone decides what it sees.

The sessions are stored as a tournament of their own, ``sessions`` blocks each played
once (rotation 0), so that the person keeps the seat asked for and never sees a board
twice: the database, the session logs (``nap log verify``, ``nap log html``) and the
standings are those of any tournament. A session is played to its end whatever the
person does: a seat whose clock ran out with no tab open leaves, the referee plays the
rest of that session by its fault policy, it is stored, and no further session starts.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import structlog

from clients.sdk.connection import Connection
from clients.sdk.options import Options
from referee.server import ServerLimits, TimeLimits
from tournaments.errors import PlayError
from tournaments.plan.config import TournamentConfig
from tournaments.plan.isolation import BotLimits
from tournaments.plan.scheduler import check_table_size, derive_seed
from tournaments.play.blocks import BlockRun, FinishedSession
from tournaments.play.bots import new_token
from tournaments.play.host import BlockHost, Hosting, remote_bot
from tournaments.play.locks import tournament_lock
from tournaments.play.runner import register_entries
from tournaments.play.sandbox import INSTALL_BWRAP, SandboxSpec, choose_sandbox
from tournaments.store.logs import encode_log
from tournaments.web.seat import PersonSeat, SeatDispatcher, Seating
from tournaments.web.server import PageServer, static_folder
from tournaments.web.table import policy_note

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from referee.rules import Profile
    from tournaments.plan.entries import BotEntry
    from tournaments.store.database import Store

__all__ = ["PAGE_FILES", "Played", "TableSpec", "play_at_table", "seating_of", "told_everything"]

_log = structlog.get_logger("nap.play")

PAGE_FILES: Final = {"": "play.html", "play.css": "play.css", "play.js": "play.js"}
"""The play page's files (in ``tournaments/web/static``), by their path under the token."""
HUMAN_DECISION_MS: Final = 60_000
"""A person's decision clock by default: a minute."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSpec:
    """What ``nap play`` plays: the person, the bots in seat order, and the tournament's terms.

    ``seat`` is the person's seat (the bots fill the others in order); ``wait_s`` is how
    long the first tab may take to open the page.
    """

    person: str
    bots: tuple[BotEntry, ...]
    profile: Profile
    seed: int
    seat: int = 0
    sessions: int = 1
    time_limits: TimeLimits = field(default_factory=lambda: TimeLimits(decision_ms=HUMAN_DECISION_MS))
    sandbox: str = "auto"
    bot_limits: BotLimits = field(default_factory=BotLimits)
    wait_s: float = 300.0
    connect_timeout_s: float = 30.0

    @property
    def table_size(self) -> int:
        """The person and every bot."""
        return len(self.bots) + 1


@dataclass(frozen=True, slots=True)
class Played:
    """What :func:`play_at_table` played: the tournament, its sessions' ids, and whether the person left."""

    tournament: int
    sessions: tuple[int, ...]
    planned: int
    left: bool


def seating_of(spec: TableSpec) -> tuple[str, ...]:
    """Who sits where: the person at ``spec.seat``, the bots in the other seats in their order.

    Raises PlayError (one line) for a seat, name or table size that cannot be.
    """
    size, profile = spec.table_size, spec.profile
    if not spec.bots:
        msg = "nap play needs bots to play against: --bot peel --bot pimc, say"
        raise PlayError(msg)
    try:
        check_table_size(size, profile)
    except ValueError as exc:
        msg = f"{len(spec.bots)} bots and you make {size} players: {exc}"
        raise PlayError(msg) from None
    if not 0 <= spec.seat < size:
        msg = f"--seat must be 0 to {size - 1} at a table of {size}, not {spec.seat}"
        raise PlayError(msg)
    names = [bot.name for bot in spec.bots]
    if spec.person in names:
        msg = f"{spec.person!r} is also a bot's name: choose another --name"
        raise PlayError(msg)
    if not spec.person.strip():
        msg = "--name must not be empty"
        raise PlayError(msg)
    return (*names[: spec.seat], spec.person, *names[spec.seat :])


def _config(spec: TableSpec, seating: Sequence[str]) -> TournamentConfig:
    bots = {bot.name: bot for bot in spec.bots}
    return TournamentConfig(
        name=f"{spec.person} at the table with {', '.join(bot.name for bot in spec.bots)}",
        bots=tuple(bots[name] if name in bots else remote_bot(name) for name in seating),
        table_size=spec.table_size,
        sessions=spec.sessions,
        seed=spec.seed,
        profile=spec.profile,
        concurrency=1,
        time_limits=spec.time_limits,
        connect_timeout_s=spec.connect_timeout_s,
        workers=1,
        sandbox=spec.sandbox,
        bot_limits=spec.bot_limits,
        person=spec.person,
    )


async def play_at_table(
    spec: TableSpec,
    *,
    store: Store,
    logs_root: Path,
    on_url: Callable[[str], None],
    limits: ServerLimits | None = None,
) -> Played:
    """Serve the page, seat the person, play ``spec.sessions`` sessions one after another, store each.

    ``on_url`` is told the page's address (token included) once it is served. Raises
    PlayError when no tab opens the page within ``spec.wait_s`` (nothing is played then),
    RunnerError when a bot cannot start.
    """
    seating = seating_of(spec)
    config = _config(spec, seating)
    limits = limits or ServerLimits()
    register_entries(store, config)
    boards = tuple(derive_seed(spec.seed, "board", index) for index in range(spec.sessions))
    tournament = store.create_tournament(
        name=config.name,
        config=config.to_json(),
        seed=spec.seed,
        blocks=[(index, board, seating) for index, board in enumerate(boards)],
    )
    stored = _Stored(tournament, config, seating, boards)
    with tournament_lock(store.path, tournament):
        try:
            played = await _play(spec, stored, store=store, logs_root=logs_root, on_url=on_url, limits=limits)
        except BaseException:
            with contextlib.suppress(Exception):
                store.set_status(tournament, "interrupted")
            raise
        store.set_status(tournament, "finished")
    return played


@dataclass(frozen=True, slots=True)
class _Stored:
    """The tournament as stored: its id, config, seating and one board seed per session."""

    tournament: int
    config: TournamentConfig
    seating: tuple[str, ...]
    boards: tuple[int, ...]


async def _play(  # noqa: PLR0913 - keywords
    spec: TableSpec,
    stored: _Stored,
    *,
    store: Store,
    logs_root: Path,
    on_url: Callable[[str], None],
    limits: ServerLimits,
) -> Played:
    """Serve the page, start the referee, the bots and the seat, and play the sessions."""
    tournament, config, seating, boards = stored.tournament, stored.config, stored.seating, stored.boards
    token = new_token()
    connections: list[Connection] = []
    tasks: list[asyncio.Task[Any]] = []

    def leave() -> None:
        for connection in connections:
            connection.stop()

    policy = config.fault_policy or spec.profile.fault_policy
    seat = PersonSeat(
        hello={
            "name": spec.person,
            "seat": spec.seat,
            "profile": spec.profile.name,
            "decision_ms": spec.time_limits.decision_ms,
            "policy": policy_note(
                policy, decision_ms=spec.time_limits.decision_ms, fault_limit=limits.fault_limit
            ),
            "sessions": spec.sessions,
        },
        on_leave=leave,
    )

    def connect(port: int, tokens: Mapping[str, str]) -> None:
        del tokens
        options = Options(
            address=f"127.0.0.1:{port}",
            token=token,
            name=spec.person,
            version="person",
            max_batch=1,
            events=True,
        )
        connection = Connection(options, SeatDispatcher(seat), log=_log.info)
        connections.append(connection)
        tasks.append(asyncio.create_task(connection.serve()))

    host = BlockHost(
        config,
        tournament=tournament,
        logs_root=logs_root,
        limits=limits,
        hosting=Hosting(host="127.0.0.1", port=0, tokens={spec.person: token}, announce=connect),
        sandbox=_isolation(spec, tournament, store=store, logs_root=logs_root),
        lanes=1,
    )
    server = PageServer(folder=static_folder("play.html"), files=PAGE_FILES, handlers={"ws": seat.socket})
    ids: list[int] = []

    async def commit(session: FinishedSession) -> None:
        result = session.result
        data = encode_log(session.log, tournament=tournament, block=result.block, rotation=result.rotation)
        ids.append(store.record_session(result, log=data))
        seat.tell_page({"type": "stored", "session_id": ids[-1], "played": len(ids), "sessions": len(boards)})

    on_url(await server.start())
    try:
        await host.start()
        if not await seat.first_tab(spec.wait_s):
            msg = f"nobody opened the page within {spec.wait_s:g} s; nothing was played"
            raise PlayError(msg)
        for index, board in enumerate(boards):
            run = BlockRun(
                tournament=tournament,
                index=index,
                board_seed=board,
                bots=seating,
                profile=spec.profile,
                time_limits=spec.time_limits,
                rotations=(0,),
            )
            seat.expect(run.table(0), Seating(seating, spec.seat, index + 1, len(boards)))
            await host.play_block(run, commit)
            await told_everything(seat, run.table(0), connections=tasks)
            if seat.left:
                break
        seat.tell_page({"type": "done", "sessions": ids, "left": seat.left})
    finally:
        await seat.close_tabs()
        leave()
        await host.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.stop()
    return Played(tournament=tournament, sessions=tuple(ids), planned=len(boards), left=seat.left)


async def told_everything(
    seat: PersonSeat, table: str, *, connections: Sequence[asyncio.Future[Any]]
) -> None:
    """Wait until the seat has been told all of ``table`` (the referee closed it), or its stream ended.

    The referee hands the driver a finished session as soon as it is over, while its last
    events (the last trick, the settlement, the session's end) are still on their way to
    the seat; the page is told that it is done only after them. A seat that left has no
    stream to wait for.
    """
    closed = asyncio.ensure_future(seat.table_closed(table))
    try:
        await asyncio.wait([closed, *connections], return_when=asyncio.FIRST_COMPLETED)
    finally:
        closed.cancel()


def _isolation(spec: TableSpec, tournament: int, *, store: Store, logs_root: Path) -> SandboxSpec | None:
    """How the bots are isolated (None: not), as in a tournament; the store is told when they are not."""
    problem = choose_sandbox(spec.sandbox)
    if problem is None:
        return SandboxSpec(limits=spec.bot_limits, hidden=(store.path, logs_root))
    store.mark_unisolated(tournament, problem)
    if problem != "--sandbox off":
        _log.warning(f"bots not isolated: {problem}; {INSTALL_BWRAP} (docs/security.md)")
    return None
