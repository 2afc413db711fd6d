"""Running tournaments: blocks of sessions on a referee, committed one session at a time.

Two layers:

* :func:`run_block` plays one duplicate block (its rotations one after another, so no bot
  ever holds two hands of one board set at once) on a given referee and returns each
  session's :class:`FinishedSession`: the :class:`~tournaments.results.SessionResult` and
  the log payload. It is a function of its :class:`BlockRun` and a referee only, so a
  worker elsewhere (Ray) can run it with its own referee and bot processes.
  :func:`play_block_in_process` plays the same block with the bots' policies called
  directly, without gRPC, for comparison.
* :func:`run_tournament` / :func:`resume_tournament` own the IO: an in-process referee on
  ``127.0.0.1:0``, one process per bot entry (each serving many tables), the schedule,
  the store and the log files. Blocks run concurrently (``concurrency`` in flight); each
  finished session's log is written first, then the session is committed in one
  transaction, so a tournament killed at any moment resumes with nothing lost, nothing
  played twice and the same deals (the board seeds come from the stored blocks).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from clients.sdk.bot import Bot, lowest_action
from referee.rules import (
    Action,
    DealSettled,
    FaultPolicy,
    Profile,
    Session,
    SessionRecord,
    get_profile,
    record_of,
)
from referee.server import Decision, Referee, ServerLimits, SessionSpec, TimeLimits
from tournaments.bots import BotEntry, BotProcess, RunnerError, new_token
from tournaments.logfiles import remove_temporaries, write_log
from tournaments.results import Declaration, FaultRecord, SeatResult, SessionResult
from tournaments.scheduler import BlockSpec, schedule
from tournaments.standings import Standings, compute_standings

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence

    from referee.server import Fault
    from tournaments.store import Store

__all__ = [
    "BlockRun", "FinishedSession", "RunnerError", "TournamentConfig", "TournamentInterrupted",
    "finish_session", "play_block_in_process", "progress_columns", "resume_tournament",
    "resume_tournament_async", "run_block", "run_tournament", "run_tournament_async",
]

_log = structlog.get_logger("nap.runner")

DEFAULT_CONCURRENCY = 256
"""Blocks in flight by default: enough tables for full batches to every bot (bench/tournament.py)."""


class TournamentInterrupted(RunnerError):  # noqa: N818 - a stop the user asked for, not a bug
    """The tournament was stopped (SIGINT/SIGTERM) before the end; it can be resumed."""

    def __init__(self, message: str, *, tournament: int) -> None:
        super().__init__(message)
        self.tournament = tournament


# ---------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """Everything that defines a tournament; stored with it, so a resume needs only its id.

    ``sessions`` is rounded up to whole blocks of ``table_size`` sessions. ``concurrency``
    is the number of blocks in flight at once (each plays its rotations in turn); many
    tables in flight let the referee batch many decisions per message to each bot.
    ``ask_forced`` False (the default): a seat whose only legal action is forced is not
    asked; the referee plays it (see docs/protocol.md).
    ``max_restarts`` bounds the restarts of each bot process after a crash.
    ``connect_timeout_s`` is how long a bot process may take to connect.
    """

    name: str
    bots: tuple[BotEntry, ...]
    table_size: int
    sessions: int
    seed: int
    profile: str = "heather"
    concurrency: int = DEFAULT_CONCURRENCY
    time_limits: TimeLimits = field(default_factory=TimeLimits)
    max_restarts: int = 3
    connect_timeout_s: float = 30.0
    fault_policy: FaultPolicy | None = None
    ask_forced: bool = False

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            msg = f"concurrency must be at least 1, got {self.concurrency}"
            raise RunnerError(msg)
        if self.max_restarts < 0:
            msg = f"max_restarts must not be negative, got {self.max_restarts}"
            raise RunnerError(msg)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data, as the store keeps it."""
        return {
            "name": self.name,
            "bots": [bot.to_json() for bot in self.bots],
            "table_size": self.table_size,
            "sessions": self.sessions,
            "seed": self.seed,
            "profile": self.profile,
            "concurrency": self.concurrency,
            "time_limits": {"decision_ms": self.time_limits.decision_ms,
                            "session_bank_ms": self.time_limits.session_bank_ms},
            "max_restarts": self.max_restarts,
            "connect_timeout_s": self.connect_timeout_s,
            "fault_policy": None if self.fault_policy is None else self.fault_policy.value,
            "ask_forced": self.ask_forced,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TournamentConfig:
        """Read a config written by :meth:`to_json`."""
        limits = data.get("time_limits") or {}
        policy = data.get("fault_policy")
        return cls(
            name=str(data["name"]),
            bots=tuple(BotEntry.from_json(bot) for bot in data["bots"]),
            table_size=int(data["table_size"]),
            sessions=int(data["sessions"]),
            seed=int(data["seed"]),
            profile=str(data.get("profile", "heather")),
            concurrency=int(data.get("concurrency", DEFAULT_CONCURRENCY)),
            time_limits=TimeLimits(**limits),
            max_restarts=int(data.get("max_restarts", 3)),
            connect_timeout_s=float(data.get("connect_timeout_s", 30.0)),
            fault_policy=None if policy is None else FaultPolicy(policy),
            ask_forced=bool(data.get("ask_forced", False)),
        )


# ---------------------------------------------------------------------------- one block


@dataclass(frozen=True, slots=True)
class BlockRun:
    """One block to play, self-contained so that any worker with a referee can play it.

    ``bots`` is the seat order of rotation 0; ``rotations`` are the rotations still to play
    (all of them, unless resuming). ``ask_forced`` as in :class:`TournamentConfig`.
    """

    tournament: int
    index: int
    board_seed: int
    bots: tuple[str, ...]
    profile: Profile
    time_limits: TimeLimits
    rotations: tuple[int, ...]
    fault_policy: FaultPolicy | None = None
    ask_forced: bool = False

    @property
    def block(self) -> BlockSpec:
        """The scheduler's view of the block (for its seatings)."""
        return BlockSpec(index=self.index, board_seed=self.board_seed, bots=self.bots)

    def table(self, rotation: int) -> str:
        """The referee's table id for one rotation: unique across tournaments and blocks."""
        return f"t{self.tournament}-b{self.index}-r{rotation}"


@dataclass(frozen=True, slots=True)
class FinishedSession:
    """A played session: its result for the store and its log payload for the log file."""

    result: SessionResult
    log: dict[str, Any]


async def run_block(
    spec: BlockRun,
    referee: Referee,
    *,
    on_session: Callable[[FinishedSession], Awaitable[None]] | None = None,
) -> list[FinishedSession]:
    """Play the block's remaining rotations one after another on ``referee``.

    ``on_session`` (if given) is awaited with each session as soon as it is over, before
    the next rotation starts: the tournament commits there, so a crash loses at most the
    sessions in flight. Every bot of ``spec.bots`` must be registered with ``referee``.
    """
    finished = []
    block = spec.block
    for rotation in spec.rotations:
        seating = block.seating(rotation)
        outcome = await referee.play_session(SessionSpec(
            table=spec.table(rotation), profile=spec.profile, seed=spec.board_seed,
            seats=seating, time_limits=spec.time_limits, fault_policy=spec.fault_policy,
            ask_forced=spec.ask_forced,
        ))
        session = finish_session(spec, rotation, outcome.record, outcome.decisions,
                                 [_fault_record(fault, seating) for fault in outcome.faults],
                                 disqualified=outcome.disqualified,
                                 settled=outcome.settlements or None)
        if on_session is not None:
            await on_session(session)
        finished.append(session)
    return finished


def _fault_record(fault: Fault, seating: Sequence[str]) -> FaultRecord:
    """The referee's fault as stored: a missing seat is the bot's seat, other gaps are -1."""
    seat = fault.seat
    if seat is None:
        seat = seating.index(fault.bot) if fault.bot in seating else -1
    return FaultRecord(
        kind=str(fault.kind), bot=fault.bot, seat=seat,
        deal=-1 if fault.deal is None else fault.deal,
        decision=-1 if fault.decision is None else fault.decision,
        elapsed_ms=0.0 if fault.elapsed_ms is None else float(fault.elapsed_ms),
        detail=fault.detail,
    )


def settlements(record: SessionRecord) -> list[DealSettled]:
    """Replay ``record`` and return each deal's settlement, in order."""
    session = Session(record.profile, table_size=record.table_size, seed=record.seed,
                      dealer=record.first_dealer, decks=[d.deck for d in record.deals])
    settled: list[DealSettled] = []
    for deal in record.deals:
        for action in deal.actions:
            settled.extend(e for e in session.apply(action) if isinstance(e, DealSettled))
    return settled


def finish_session(  # noqa: PLR0913 - the parts of a played session, all keywords but the key
    spec: BlockRun,
    rotation: int,
    record: SessionRecord,
    decisions: Iterable[Iterable[Decision]],
    faults: Sequence[FaultRecord],
    *,
    disqualified: Sequence[int] = (),
    settled: Sequence[DealSettled] | None = None,
) -> FinishedSession:
    """Build a played session's result and log payload (pure).

    Chips are the seats' final balances; each of w winners gets win share 1/w; each deal
    a seat declared in adds a declaration (contract, made or failed). ``settled`` are the
    deals' settlements when the caller has them (the referee's outcome does); otherwise
    they come from replaying ``record``.
    """
    seating = spec.block.seating(rotation)
    declared: list[list[Declaration]] = [[] for _ in seating]
    for settled_deal in settlements(record) if settled is None else settled:
        if settled_deal.declarer is not None and settled_deal.contract is not None:
            declared[settled_deal.declarer].append(
                Declaration(settled_deal.contract, bool(settled_deal.made)))
    share = 1 / len(record.winners) if record.winners else 0.0
    seats = tuple(
        SeatResult(seat=seat, bot=bot, chips=record.balances[seat],
                   win_share=share if seat in record.winners else 0.0,
                   declarations=tuple(declared[seat]),
                   faults=sum(1 for fault in faults if fault.seat == seat))
        for seat, bot in enumerate(seating)
    )
    result = SessionResult(tournament=spec.tournament, block=spec.index, rotation=rotation,
                           board_seed=spec.board_seed, seats=seats, faults=tuple(faults))
    log = {
        "board_seed": spec.board_seed,
        "profile": spec.profile.name,
        "bots": [{"seat": seat, "bot": bot} for seat, bot in enumerate(seating)],
        "record": record.to_json(),
        "decisions": [
            [_decision_json(decision) for decision in deal] for deal in decisions
        ],
        "faults": [
            {"kind": f.kind, "bot": f.bot, "seat": f.seat, "deal": f.deal,
             "decision": f.decision, "elapsed_ms": f.elapsed_ms, "detail": f.detail}
            for f in faults
        ],
        "disqualified": list(disqualified),
        "result": {
            "seats": [
                {"seat": s.seat, "bot": s.bot, "chips": s.chips, "win_share": s.win_share,
                 "faults": s.faults,
                 "declarations": [{"contract": d.contract, "made": d.made}
                                  for d in s.declarations]}
                for s in seats
            ],
            "winners": list(record.winners),
        },
    }
    return FinishedSession(result=result, log=log)


def _decision_json(decision: Decision) -> dict[str, Any]:
    item: dict[str, Any] = {"action": decision.action, "seat": decision.seat,
                            "latency_ms": round(decision.latency_ms, 3)}
    if decision.fault is not None:
        item["fault"] = decision.fault
    if decision.forced:
        item["forced"] = True
    return item


def play_block_in_process(
    spec: BlockRun, bots: Mapping[str, Callable[[], Bot]]
) -> list[FinishedSession]:
    """Play the block with each bot's policy called directly: no referee, no gRPC, no clock.

    ``bots`` maps each bot name to a factory of :class:`clients.sdk.Bot` (one instance per
    seat and session, as the SDK makes them). A bot that raises or answers an illegal
    action is faulted (``crash`` / ``illegal``) and the lowest legal action is played.
    Each bot's ``table`` is the same id the referee would use, and forced moves are asked
    or not as the referee would (``spec.ask_forced``), so seeded bots choose the same
    actions here as over gRPC.
    """
    finished = []
    block = spec.block
    for rotation in spec.rotations:
        seating = block.seating(rotation)
        session = Session(spec.profile, table_size=len(seating), seed=spec.board_seed)
        players = []
        for place, name in enumerate(seating):
            bot = bots[name]()
            bot.table, bot.seat = spec.table(rotation), place
            players.append(bot)
        listeners = [bot for bot in players if type(bot).on_event is not Bot.on_event]
        _tell(listeners, session.opening)
        decisions: list[list[Decision]] = [[]]
        faults: list[FaultRecord] = []
        settled: list[DealSettled] = []
        while not session.over:
            to_act = session.to_act
            assert to_act is not None  # noqa: S101 - a session not over has a seat to act
            seat: int = to_act
            deal_number = len(session.deals) - 1
            decision, action, detail = _decide_in_process(session, players[seat], seat,
                                                          ask_forced=spec.ask_forced)
            if decision.fault is not None:
                faults.append(FaultRecord(decision.fault, seating[seat], seat, deal_number,
                                          len(session.deal.actions), decision.latency_ms,
                                          detail))
            decisions[deal_number].append(decision)
            events = session.apply(action)
            settled.extend(e for e in events if isinstance(e, DealSettled))
            if len(session.deals) > len(decisions):
                decisions.append([])
            _tell(listeners, events)
        finished.append(finish_session(spec, rotation, record_of(session),
                                       [d for d in decisions if d], faults, settled=settled))
    return finished


def _decide_in_process(session: Session, bot: Bot, seat: int, *, ask_forced: bool,
                       ) -> tuple[Decision, Action, str]:
    """The seat's decision, the action played, and the fault's detail if the bot faulted."""
    legal = session.legal_actions()
    if not ask_forced and len(legal) == 1:
        return Decision(seat, str(legal[0]), 0.0, None, forced=True), legal[0], ""
    view = session.view(seat)
    start = time.perf_counter()
    fault: tuple[str, str] | None = None
    try:
        action = bot.decide(view)
    except Exception as exc:  # noqa: BLE001 - a bot's failure is a fault, not ours
        action, fault = lowest_action(legal), ("crash", repr(exc))
    else:
        if action not in legal:
            fault = ("illegal", f"{action} is not among the legal actions")
            action = lowest_action(legal)
    elapsed = (time.perf_counter() - start) * 1000
    decision = Decision(seat, str(action), elapsed, None if fault is None else fault[0])
    return decision, action, "" if fault is None else fault[1]


def _tell(listeners: Sequence[Bot], events: Iterable[object]) -> None:
    for event in events:
        for bot in listeners:
            bot.on_event(event)


# ---------------------------------------------------------------------------- progress


class SpeedColumn(ProgressColumn):
    """Sessions per second, from rich's moving estimate."""

    def render(self, task: Task) -> Text:
        """The speed as ``123.4 sessions/s`` (blank until there is an estimate)."""
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.1f} sessions/s", style="progress.data.speed")


def progress_columns() -> tuple[ProgressColumn, ...]:
    """Columns for a tournament's ``rich`` progress bar: done/total, speed, time left."""
    return (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        SpeedColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )


def standings_table(standings: Standings, *, title: str = "Standings") -> Table:
    """A compact ``rich`` table of live standings (chips per session with 95% interval)."""
    table = Table(title=title)
    for header in ("#", "bot", "sessions", "chips/session", "95% CI", "win share", "faults"):
        table.add_column(header, justify="left" if header == "bot" else "right")
    for rank, line in enumerate(standings.bots, start=1):
        half = line.chips.half_width
        table.add_row(str(rank), line.bot, str(line.sessions), f"{line.chips.mean:+.2f}",
                      "n/a" if half is None else f"±{half:.2f}",
                      f"{line.win_share:.3f}", str(line.faults))
    return table


# ---------------------------------------------------------------------------- tournaments


def _quiet_logger() -> Any:  # noqa: ANN401 - a structlog bound logger
    """The referee's logger during a tournament: warnings and worse only (faults, crashes)."""
    return structlog.wrap_logger(
        structlog.PrintLogger(file=sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        processors=[structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="iso", utc=True),
                    structlog.dev.ConsoleRenderer(colors=False)],
    )


def _check_commands(bots: Sequence[BotEntry]) -> None:
    """Fail early, before anything is stored, when a bot's program does not exist."""
    for bot in bots:
        if not bot.command:
            msg = f"bot {bot.name} has an empty command"
            raise RunnerError(msg)
        program = bot.command[0]
        if "/" in program:
            path = Path(program)
            if not path.is_absolute() and bot.cwd is not None:
                path = bot.cwd / path
            found = path.is_file()
        else:
            found = shutil.which(program) is not None
        if not found:
            where = "" if bot.cwd is None else f" (in {bot.cwd})"
            msg = f"bot {bot.name}: command not found: {program}{where}"
            raise RunnerError(msg)
        if bot.cwd is not None and not bot.cwd.is_dir():
            msg = f"bot {bot.name}: folder not found: {bot.cwd}"
            raise RunnerError(msg)


def _validate(config: TournamentConfig) -> None:
    names = [bot.name for bot in config.bots]
    if len(set(names)) != len(names):
        msg = f"bot names must be unique: {', '.join(names)}"
        raise RunnerError(msg)
    try:
        get_profile(config.profile)
    except (ValueError, OSError) as exc:
        msg = f"profile {config.profile}: {exc}"
        raise RunnerError(msg) from exc


@dataclass(slots=True)
class _Options:
    progress: Progress | None
    standings_every: float | None
    on_standings: Callable[[Standings], None] | None
    limits: ServerLimits


async def run_tournament_async(  # noqa: PLR0913 - keyword options of the CLI
    config: TournamentConfig,
    *,
    store: Store,
    logs_root: Path,
    progress: Progress | None = None,
    standings_every: float | None = None,
    on_standings: Callable[[Standings], None] | None = None,
    limits: ServerLimits | None = None,
) -> int:
    """Schedule, store and play a new tournament; return its id.

    Raises RunnerError (one line) when a bot cannot start or connect, and
    :class:`TournamentInterrupted` on SIGINT/SIGTERM; either way the sessions finished so
    far are kept and the tournament is marked ``interrupted``, ready to resume.
    """
    _validate(config)
    _check_commands(config.bots)
    try:
        blocks = schedule([bot.name for bot in config.bots], table_size=config.table_size,
                          sessions=config.sessions, seed=config.seed)
    except ValueError as exc:
        raise RunnerError(str(exc)) from exc
    for bot in config.bots:
        store.register_bot(name=bot.name, version=bot.version, command=bot.command,
                           language=None, folder=None if bot.cwd is None else str(bot.cwd),
                           content_hash=bot.content_hash or "unknown")
    tournament = store.create_tournament(
        name=config.name, config=config.to_json(), seed=config.seed,
        blocks=[(block.index, block.board_seed, block.bots) for block in blocks],
    )
    options = _Options(progress, standings_every, on_standings, limits or ServerLimits())
    await _play(tournament, config, blocks, set(), store=store, logs_root=logs_root,
                options=options)
    return tournament


async def resume_tournament_async(  # noqa: PLR0913 - keyword options of the CLI
    tournament: int,
    *,
    store: Store,
    logs_root: Path,
    progress: Progress | None = None,
    standings_every: float | None = None,
    on_standings: Callable[[Standings], None] | None = None,
    limits: ServerLimits | None = None,
    bots: Sequence[BotEntry] | None = None,
) -> int:
    """Play the sessions of a stored tournament that are not recorded yet; return its id.

    The blocks (and so the board seeds) come from the store. ``bots`` replaces the stored
    bot entries by name (say, to fix a command); the names must be the same set.
    """
    row = store.tournament(tournament)
    config = TournamentConfig.from_json(row.config)
    if bots is not None:
        if {b.name for b in bots} != {b.name for b in config.bots}:
            msg = "the bots given to resume must have the names of the stored entries"
            raise RunnerError(msg)
        config = TournamentConfig.from_json({**config.to_json(),
                                             "bots": [b.to_json() for b in bots]})
    _check_commands(config.bots)
    blocks = [BlockSpec(index=b.index, board_seed=b.board_seed, bots=b.bots)
              for b in store.blocks(tournament)]
    finished = store.finished_keys(tournament)
    with contextlib.suppress(OSError):
        remove_temporaries(logs_root)
    if row.status != "running":
        store.set_status(tournament, "running")
    options = _Options(progress, standings_every, on_standings, limits or ServerLimits())
    await _play(tournament, config, blocks, finished, store=store, logs_root=logs_root,
                options=options)
    return tournament


def run_tournament(config: TournamentConfig, *, store: Store, logs_root: Path,
                   progress: Progress | None = None, **options: Any) -> int:  # noqa: ANN401
    """:func:`run_tournament_async` in a fresh event loop (for the CLI and scripts)."""
    return asyncio.run(run_tournament_async(config, store=store, logs_root=logs_root,
                                            progress=progress, **options))


def resume_tournament(tournament: int, *, store: Store, logs_root: Path,
                      progress: Progress | None = None, **options: Any) -> int:  # noqa: ANN401
    """:func:`resume_tournament_async` in a fresh event loop (for the CLI and scripts)."""
    return asyncio.run(resume_tournament_async(tournament, store=store, logs_root=logs_root,
                                               progress=progress, **options))


async def _play(  # noqa: PLR0913 - the pieces of one run
    tournament: int,
    config: TournamentConfig,
    blocks: Sequence[BlockSpec],
    finished: set[tuple[int, int]],
    *,
    store: Store,
    logs_root: Path,
    options: _Options,
) -> None:
    """Start the referee and the bots, play what is left, and leave the status right."""
    profile = get_profile(config.profile)
    runs = [
        BlockRun(tournament=tournament, index=block.index, board_seed=block.board_seed,
                 bots=block.bots, profile=profile, time_limits=config.time_limits,
                 rotations=tuple(r for r in block.rotations if (block.index, r) not in finished),
                 fault_policy=config.fault_policy, ask_forced=config.ask_forced)
        for block in blocks
    ]
    runs = [run for run in runs if run.rotations]
    total = sum(block.table_size for block in blocks)
    done = total - sum(len(run.rotations) for run in runs)
    log = _log.bind(tournament=tournament)
    signalled: list[str] = []
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGTERM, _on_signal, signalled, main)
    referee = Referee(limits=options.limits, logger=_quiet_logger(), profile=profile,
                      time_limits=config.time_limits)
    processes: list[BotProcess] = []
    progress = options.progress
    commit = _Committer(store, logs_root, tournament, progress,
                        None if progress is None else
                        progress.add_task(config.name, total=total, completed=done))
    commit.count = done
    try:
        if runs:
            port = await referee.start(host="127.0.0.1", port=0)
            processes = await _start_bots(referee, config, tournament, logs_root, port)
            watcher = (asyncio.create_task(_show_standings(store, tournament, options))
                       if options.standings_every else None)
            try:
                await _run_blocks(runs, referee, commit, concurrency=config.concurrency)
            finally:
                if watcher is not None:
                    watcher.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await watcher
        store.set_status(tournament, "finished")
        log.info("tournament finished", sessions=commit.count)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            store.set_status(tournament, "interrupted")
        if isinstance(exc, asyncio.CancelledError) and signalled:
            if main is not None:
                main.uncancel()
            msg = (f"tournament {tournament} interrupted by {signalled[0]} after {commit.count} of "
                   f"{total} sessions; resume it to play the rest")
            raise TournamentInterrupted(msg, tournament=tournament) from None
        if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
            msg = (f"tournament {tournament} interrupted after {commit.count} of {total} "
                   "sessions; resume it to play the rest")
            raise TournamentInterrupted(msg, tournament=tournament) from exc
        raise
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGTERM)
        await _shutdown(referee, processes)


class _Committer:
    """Writes each finished session's log (in a thread), then commits it to the store."""

    def __init__(self, store: Store, logs_root: Path, tournament: int,
                 progress: Progress | None, task_id: TaskID | None) -> None:
        self.store = store
        self.logs_root = logs_root
        self.tournament = tournament
        self.progress = progress
        self.task_id = task_id
        self.count = 0
        """Sessions of the tournament recorded so far (including earlier runs)."""

    async def __call__(self, session: FinishedSession) -> None:
        key = session.result
        path = await asyncio.to_thread(
            write_log, self.logs_root, tournament=self.tournament, block=key.block,
            rotation=key.rotation, payload=session.log)
        self.store.record_session(session.result, log_path=path)
        self.count += 1
        if self.progress is not None and self.task_id is not None:
            self.progress.advance(self.task_id)


def _on_signal(signalled: list[str], main: asyncio.Task[Any] | None) -> None:
    signalled.append("SIGTERM")
    if main is not None:
        main.cancel()


async def _start_bots(referee: Referee, config: TournamentConfig, tournament: int,
                      logs_root: Path, port: int) -> list[BotProcess]:
    """Register every entry with a fresh token and launch its process; all must connect."""
    processes = []
    for entry in config.bots:
        token = new_token()
        referee.add_bot(name=entry.name, token=token)
        processes.append(BotProcess(
            entry, address=f"127.0.0.1:{port}", token=token,
            log_path=logs_root / f"t{tournament}" / "bots" / f"{entry.name}.log",
            max_restarts=config.max_restarts,
        ))
    results = await asyncio.gather(
        *(p.start(referee, connect_timeout=config.connect_timeout_s) for p in processes),
        return_exceptions=True,
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        await asyncio.gather(*(p.stop() for p in processes), return_exceptions=True)
        first = errors[0]
        if isinstance(first, RunnerError):
            raise first
        raise RunnerError(str(first)) from first
    return processes


async def _run_blocks(runs: Sequence[BlockRun], referee: Referee,
                      commit: Callable[[FinishedSession], Awaitable[None]], *,
                      concurrency: int) -> None:
    """Run the blocks with at most ``concurrency`` in flight; the first error stops all."""
    queue = iter(runs)

    async def worker() -> None:
        for run in queue:
            await run_block(run, referee, on_session=commit)

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(runs))):
            group.create_task(worker())


async def _show_standings(store: Store, tournament: int, options: _Options) -> None:
    every = options.standings_every or 0.0
    console = options.progress.console if options.progress is not None else Console(stderr=True)
    while True:
        await asyncio.sleep(every)
        results = store.session_results(tournament)
        if not results:
            continue
        standings = compute_standings(results)
        if options.on_standings is not None:
            options.on_standings(standings)
        else:
            console.print(standings_table(standings, title=f"Standings after {len(results)} sessions"))


async def _shutdown(referee: Referee, processes: Sequence[BotProcess]) -> None:
    """Stop the bots first (so none is restarted), then the referee."""
    await asyncio.gather(*(p.stop() for p in processes), return_exceptions=True)
    with contextlib.suppress(Exception):
        await referee.stop(grace=0.5)


def blocks_needed(sessions: int, table_size: int) -> int:
    """How many blocks a tournament of ``sessions`` sessions plays (whole blocks)."""
    return math.ceil(sessions / table_size)
