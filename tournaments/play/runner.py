"""Running tournaments: blocks of sessions on referees, committed one session at a time.

The unit of work is one duplicate block (:mod:`tournaments.play.blocks`);
:func:`run_tournament` / :func:`resume_tournament` own the schedule and the store. What a
tournament is comes in as a :class:`~tournaments.plan.config.TournamentConfig` (stored with
it); how this run goes (who follows it, server limits, where the referee listens, where
the blocks are played) as one :class:`RunOptions`, which is not stored. The blocks are
played by an executor (:mod:`tournaments.play.executors`): by default worker processes,
one per two cores, each with its own referee on ``127.0.0.1:0`` and one process per bot
entry, each serving many tables (:mod:`tournaments.play.executors.workers`), or with one
worker, or with remote bots, a referee in this process (:mod:`tournaments.play.host`); or
Ray workers on a cluster, each the same referee and bot processes. Blocks run
concurrently (``concurrency`` in flight on each referee); each finished session is
committed by this process with its log in one transaction, so a tournament killed at any
moment resumes with nothing lost, nothing played twice and the same deals (the board
seeds come from the stored blocks). One process plays a tournament at a time
(:mod:`tournaments.play.locks`). Whatever stops a run (a signal, a bot, a worker, the
store, a log) ends it with one line that says how far it got and ends with the command
that plays the rest (:func:`~tournaments.play.commands.resume_command`).

The runner prints nothing: it tells its observers (:mod:`tournaments.play.observers`) how
the run goes, and they print, serve or write what they will.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from referee.server import ServerLimits
from tournaments.errors import ArenaError, LogError, RunnerError, StoreError, TournamentInterrupted
from tournaments.plan.candidate_match import MatchMonitor
from tournaments.plan.config import TournamentConfig
from tournaments.plan.isolation import LOCAL_ON_THE_WALL
from tournaments.plan.scheduler import BlockSpec, check_table_size, match_schedule, schedule
from tournaments.play.blocks import BlockRun
from tournaments.play.commands import resume_command
from tournaments.play.containment import containment_problem, cpu_from_proc
from tournaments.play.entrants import recheck
from tournaments.play.executors.base import Executor, PlayContext, play_blocks
from tournaments.play.executors.local import LocalExecutor, default_workers
from tournaments.play.executors.record import record_usage
from tournaments.play.host import Hosting, WorkerSetup
from tournaments.play.locks import tournament_lock
from tournaments.play.observers import RunEnd, RunObserver, RunProgress, RunStart
from tournaments.play.sandbox import INSTALL_BWRAP, SandboxSpec, choose_sandbox
from tournaments.stats.load_check import LateFaults
from tournaments.stats.standings import standings_of

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterator, Sequence

    from referee.rules import Profile
    from tournaments.plan.entries import BotEntry
    from tournaments.play.tables import TableSource
    from tournaments.results import SessionResult
    from tournaments.store.database import Store

__all__ = [
    "RunOptions",
    "TournamentInterrupted",
    "default_workers",
    "resume_tournament",
    "resume_tournament_async",
    "run_tournament",
    "run_tournament_async",
    "uncontained",
]

_log = structlog.get_logger("nap.runner")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """How one run of a tournament goes, as opposed to what the tournament is (not stored).

    ``observers`` are told how the run goes (:mod:`tournaments.play.observers`): the
    console, a watch page, the standings files; none by default, and the runner prints
    nothing itself. ``limits`` are the referee's limits on each bot connection;
    ``hosting`` says where it listens and gives remote bots' tokens. ``executor`` plays the
    blocks: local worker processes by default, or Ray workers
    (:class:`~tournaments.play.executors.RayExecutor`). ``signals``: SIGTERM stops the run as
    Ctrl-C does, and either ends it as :class:`TournamentInterrupted` (the default); a run
    inside a process that owns its signals (an arena's practice sessions) leaves them to it,
    and a cancellation of the run is raised as it is, once the tournament is marked
    interrupted.
    """

    observers: tuple[RunObserver, ...] = ()
    limits: ServerLimits = field(default_factory=ServerLimits)
    hosting: Hosting = field(default_factory=Hosting)
    executor: Executor = field(default_factory=LocalExecutor)
    signals: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class _Run:
    """One run of a stored tournament: what it plays, where it keeps it, and how it goes."""

    tournament: int
    config: TournamentConfig
    store: Store
    logs_root: Path
    options: RunOptions

    def tables(self, source: TableSource) -> None:
        """Hand the source of the tables in play to every observer."""
        for observer in self.options.observers:
            observer.tables(source)


# ---------------------------------------------------------------------------- tournaments


def _check_commands(bots: Sequence[BotEntry]) -> None:
    """Fail early, before anything is stored, when a bot's program does not exist."""
    for bot in bots:
        if not bot.command:
            continue  # a remote bot: it connects by itself (see Hosting)
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


def _validate(config: TournamentConfig) -> Profile:
    """The tournament's rules profile, once the config is checked against it (one-line RunnerError)."""
    names = [bot.name for bot in config.bots]
    if len(set(names)) != len(names):
        msg = f"bot names must be unique: {', '.join(names)}"
        raise RunnerError(msg)
    try:
        check_table_size(config.table_size, config.profile)
    except ValueError as exc:
        raise RunnerError(str(exc)) from exc
    return config.profile


def register_entries(store: Store, config: TournamentConfig) -> None:
    """Register the bots of a tournament's entries in the store's bots (a known one is left as it is).

    An alias registers the bot it enters again (``peel`` for ``peel-2``), and the person
    of ``nap play`` is no bot: ``nap bot list`` lists bots.
    """
    for bot in config.bots:
        if bot.name == config.person:
            continue
        store.register_bot(
            name=bot.alias_of or bot.name,
            version=bot.version,
            command=bot.command,
            language=None,
            folder=None if bot.cwd is None else str(bot.cwd),
            content_hash=bot.content_hash or "unknown",
        )


async def run_tournament_async(
    config: TournamentConfig, *, store: Store, logs_root: Path, options: RunOptions | None = None
) -> int:
    """Schedule, store and play a new tournament; return its id.

    Raises RunnerError (one line) when the tournament cannot start (a bot's command is
    missing), and :class:`TournamentInterrupted` when it stops once stored (SIGINT/SIGTERM,
    a bot that cannot start or connect, a dead worker, a store or log failure): the
    sessions finished so far are kept and the tournament is marked ``interrupted`` (when
    the store still allows it), ready to resume.
    """
    profile = _validate(config)
    _check_commands(config.bots)
    choose_sandbox(config.sandbox)  # --sandbox on where it cannot be: refused before anything is stored
    names = [bot.name for bot in config.bots]
    size, sessions, seed = config.table_size, config.sessions, config.seed
    try:
        if config.match is None:
            blocks = schedule(names, table_size=size, sessions=sessions, seed=seed, profile=profile)
        else:
            candidate = config.match.candidate
            opponents = [name for name in names if name != candidate]
            blocks = match_schedule(
                candidate, opponents, table_size=size, sessions=sessions, seed=seed, profile=profile
            )
    except ValueError as exc:
        raise RunnerError(str(exc)) from exc
    register_entries(store, config)
    tournament = store.create_tournament(
        name=config.name,
        config=config.to_json(),
        seed=config.seed,
        blocks=[(block.index, block.board_seed, block.bots) for block in blocks],
    )
    with tournament_lock(store.path, tournament):
        run = _Run(
            tournament=tournament,
            config=config,
            store=store,
            logs_root=logs_root,
            options=options or RunOptions(),
        )
        await _play(run, blocks, set())
    return tournament


async def resume_tournament_async(  # noqa: PLR0913 - keywords, each a part of the run
    tournament: int,
    *,
    store: Store,
    logs_root: Path,
    options: RunOptions | None = None,
    bots: Sequence[BotEntry] | None = None,
    sandbox: str | None = None,
) -> int:
    """Play the sessions of a stored tournament that are not recorded yet; return its id.

    The blocks (and so the board seeds) come from the store. ``bots`` replaces the stored
    bot entries by name (say, to fix a command); the names must be the same set. Every
    entry must still play the content it played (:func:`~tournaments.play.entrants.recheck`):
    a bot whose folder changed is refused in one line.
    ``sandbox`` replaces the stored ``--sandbox`` mode (say, ``off`` on a machine without
    bubblewrap). A tournament that another live process is playing is refused with
    :class:`~tournaments.play.locks.TournamentBusyError` before anything is touched.
    """
    store.tournament(tournament)
    with tournament_lock(store.path, tournament):
        row = store.tournament(tournament)  # as the last run left it
        config = TournamentConfig.from_json(row.config)
        if config.person is not None:
            msg = (
                f"tournament {tournament} was {config.person}'s at the table (nap play): it is not resumed; "
                "play again with nap play"
            )
            raise RunnerError(msg)
        if bots is not None:
            if {b.name for b in bots} != {b.name for b in config.bots}:
                msg = "the bots given to resume must have the names of the stored entries"
                raise RunnerError(msg)
            config = TournamentConfig.from_json({**config.to_json(), "bots": [b.to_json() for b in bots]})
        if sandbox is not None:
            config = dataclasses.replace(config, sandbox=sandbox)
        config = dataclasses.replace(config, bots=recheck(config.bots, tournament=tournament, store=store))
        _check_commands(config.bots)
        choose_sandbox(config.sandbox)
        blocks = [
            BlockSpec(index=b.index, board_seed=b.board_seed, bots=b.bots) for b in store.blocks(tournament)
        ]
        finished = store.finished_keys(tournament)
        run = _Run(
            tournament=tournament,
            config=config,
            store=store,
            logs_root=logs_root,
            options=options or RunOptions(),
        )
        await _play(run, blocks, finished)
    return tournament


def run_tournament(
    config: TournamentConfig, *, store: Store, logs_root: Path, options: RunOptions | None = None
) -> int:
    """:func:`run_tournament_async` in a fresh event loop (for the CLI and scripts)."""
    return asyncio.run(run_tournament_async(config, store=store, logs_root=logs_root, options=options))


def resume_tournament(  # noqa: PLR0913 - as resume_tournament_async
    tournament: int,
    *,
    store: Store,
    logs_root: Path,
    options: RunOptions | None = None,
    bots: Sequence[BotEntry] | None = None,
    sandbox: str | None = None,
) -> int:
    """:func:`resume_tournament_async` in a fresh event loop (for the CLI and scripts)."""
    return asyncio.run(
        resume_tournament_async(
            tournament, store=store, logs_root=logs_root, options=options, bots=bots, sandbox=sandbox
        )
    )


def _runs_left(run: _Run, blocks: Sequence[BlockSpec], finished: set[tuple[int, int]]) -> list[BlockRun]:
    """The blocks with rotations still to play, each with only those rotations."""
    config = run.config
    runs = (
        BlockRun(
            tournament=run.tournament,
            index=block.index,
            board_seed=block.board_seed,
            bots=block.bots,
            profile=config.profile,
            time_limits=config.time_limits,
            rotations=tuple(r for r in block.rotations if (block.index, r) not in finished),
            fault_policy=config.fault_policy,
            ask_forced=config.ask_forced,
        )
        for block in blocks
    )
    return [block for block in runs if block.rotations]


def _starts(store: Store, tournament: int, *, runs: bool) -> bool:
    """Mark the tournament ``running`` now that its run starts; False when there is nothing to play.

    Until here a resume leaves the stored status as it was: one refused earlier (a bot
    changed, no sandbox) does not turn a finished tournament into a running one, and a
    finished one resumed with nothing left keeps its status and its time.
    """
    status = store.tournament(tournament).status
    if runs and status != "running":
        store.set_status(tournament, "running")
    return runs or status != "finished"


async def _play(run: _Run, blocks: Sequence[BlockSpec], finished: set[tuple[int, int]]) -> None:
    """Start the referee and the bots, play what is left, leave the status right, and tell the observers.

    Anything that stops the run once it has started becomes :class:`TournamentInterrupted`
    (one line), except a bug's own exception, which is raised as it is; either way the
    observers are told the run ended, and why.
    """
    tournament, config, store = run.tournament, run.config, run.store
    runs = _runs_left(run, blocks, finished)
    monitor = None
    if config.match is not None:  # a match stops once its test decides, also on a resume
        monitor = MatchMonitor(config.match, store.session_results(tournament) if finished else ())
        runs = [] if monitor.decided else runs
    total = sum(block.table_size for block in blocks)
    commit = _Committer(
        run,
        total=total,
        recorded=total - sum(len(block.rotations) for block in runs),
        monitor=monitor,
        late=store.late_faults(tournament) if finished else None,
    )
    resume = resume_command(
        tournament, db=store.path, logs_root=run.logs_root, flags=run.options.executor.resume_flags()
    )
    start = RunStart(tournament=tournament, name=config.name, resume=resume, progress=commit.progress())
    for observer in run.options.observers:
        observer.started(start)
    try:
        if _starts(store, tournament, runs=bool(runs)):
            await _play_to_the_end(run, runs, commit, resume=resume)
    except BaseException as exc:
        _ended(run, commit, stopped=_why(exc))
        raise
    _ended(run, commit, stopped=None)


def _why(exc: BaseException) -> str:
    """Why ``exc`` stopped the run, in one line: an ArenaError's own, else its kind and its first line."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    if isinstance(exc, ArenaError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _ended(run: _Run, commit: _Committer, *, stopped: str | None) -> None:
    """Tell every observer that the run is over (``stopped``: why, in one line; None: it finished)."""
    end = RunEnd(
        tournament=run.tournament, progress=commit.progress(), stopped=stopped, late=commit.late_summary()
    )
    for observer in run.options.observers:
        observer.ended(end)


async def _play_to_the_end(run: _Run, runs: Sequence[BlockRun], commit: _Committer, *, resume: str) -> None:
    """Play ``runs`` and mark the tournament ``finished``; what stops it marks it ``interrupted``.

    What stops the run becomes :class:`TournamentInterrupted` (one line ending with
    ``resume``), except a bug's own exception, which is raised as it is.
    """
    tournament, store = run.tournament, run.store
    main = asyncio.current_task()
    with _sigterm_cancels(main if run.options.signals else None) as signalled:
        try:
            if runs:
                await _play_watched(run, runs, commit)
            store.set_status(tournament, "finished")
            _log.info("tournament finished", tournament=tournament, sessions=commit.count)
        except BaseException as exc:
            with contextlib.suppress(Exception):  # a full or damaged store may refuse even this
                store.set_status(tournament, "interrupted")
            so_far = f"after {commit.count} of {commit.total} sessions; to play the rest: {resume}"
            if isinstance(exc, asyncio.CancelledError) and signalled:
                if main is not None:
                    main.uncancel()
                msg = f"tournament {tournament} interrupted by {signalled[0]} {so_far}"
                raise TournamentInterrupted(msg, tournament=tournament) from None
            if isinstance(exc, asyncio.CancelledError) and not run.options.signals:
                raise  # the process that cancels the run owns its stop: it is told as it asked
            if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
                msg = f"tournament {tournament} interrupted {so_far}"
                raise TournamentInterrupted(msg, tournament=tournament) from exc
            if isinstance(exc, RunnerError | StoreError | LogError):
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                msg = f"{reason}; tournament {tournament} stopped {so_far}"
                raise TournamentInterrupted(msg, tournament=tournament) from exc
            raise


async def _play_watched(run: _Run, runs: Sequence[BlockRun], commit: _Committer) -> None:
    """Play ``runs`` until done (or a match decides), handing live standings to the observers that ask."""
    reporters = [
        asyncio.create_task(_report_standings(run, observer))
        for observer in run.options.observers
        if observer.standings_every
    ]
    try:
        await _until_decided(_run_blocks(run, runs, commit), commit)
    finally:
        for reporter in reporters:
            reporter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reporter


async def _run_blocks(run: _Run, runs: Sequence[BlockRun], commit: _Committer) -> None:
    """Play ``runs`` with the run's executor; who plays is recorded beside the database (for status).

    An executor that returns with sessions unplayed (a bug: a match's test that decided
    stops a run early on purpose) is a RunnerError, so that the run ends resumable rather
    than ``finished`` with sessions missing.
    """
    options, store, tournament = run.options, run.store, run.tournament
    _contain(run)
    context = PlayContext(
        setup=WorkerSetup(
            run.config,
            tournament,
            run.logs_root,
            options.limits,
            log_level=_log.bind().get_effective_level(),
            sandbox=_isolate(run),
        ),
        hosting=options.hosting,
        report=lambda usage: record_usage(store.path, tournament, usage),
        tables=run.tables,
    )
    recorded = commit.count
    await play_blocks(options.executor, runs, commit, context=context)
    unplayed = sum(len(block.rotations) for block in runs) - (commit.count - recorded)
    if unplayed > 0 and (commit.monitor is None or not commit.monitor.decided):
        msg = f"the {options.executor.name} executor returned with {unplayed} sessions unplayed"
        raise RunnerError(msg)


def uncontained(bots: Sequence[BotEntry], problem: str | None, *, proc: bool) -> str | None:
    """What a run of ``bots`` neither contains nor clocks in its CPU, and why (None: nothing).

    ``problem`` is why no cgroup can be made here (:func:`containment_problem`; None when
    one can); ``proc`` whether a process tree's CPU can be read from ``/proc`` instead.
    Local bots not contained keep each process's own limits and are clocked in their CPU
    from ``/proc`` (on the wall where there is none); remote bots are neither contained nor
    clocked in their CPU: they are on the wall clock.
    """
    remote = [bot.name for bot in bots if not bot.command]
    reasons = []
    if problem is not None and len(remote) < len(bots):
        clock = "their CPU read from /proc" if proc else LOCAL_ON_THE_WALL
        reasons.append(f"bots not contained ({problem}): each process has its own limits, {clock}")
    if remote:
        reasons.append(f"remote bots are not contained, and clocked on the wall: {', '.join(remote)}")
    return "; ".join(reasons) or None


def _contain(run: _Run) -> None:
    """Say once, and record in the store, what this run neither contains nor clocks in its CPU."""
    problem = containment_problem()
    reason = uncontained(run.config.bots, problem, proc=cpu_from_proc())
    if problem is not None and any(bot.command for bot in run.config.bots):
        _log.warning(f"bots not contained: {problem} (docs/security.md)")
    if reason is not None:
        run.store.mark_uncontained(run.tournament, reason)


def _isolate(run: _Run) -> SandboxSpec | None:
    """How this run isolates the bots (None: it does not); a run that does not says so, and the store why.

    Remote bots run elsewhere: they are never isolated, whatever the mode.
    """
    config, store = run.config, run.store
    problem = choose_sandbox(config.sandbox)
    remote = [bot.name for bot in config.bots if not bot.command]
    reasons = [
        *([] if problem is None else [problem]),
        *([f"remote bots cannot be isolated: {', '.join(remote)}"] if remote else []),
    ]
    if reasons:
        store.mark_unisolated(run.tournament, "; ".join(reasons))
    if problem is not None and problem != "--sandbox off":
        _log.warning(f"bots not isolated: {problem}; {INSTALL_BWRAP} (docs/security.md)")
    if problem is not None:
        return None
    return SandboxSpec(limits=config.bot_limits, hidden=(store.path, run.logs_root))


async def _until_decided(play: Coroutine[Any, Any, None], commit: _Committer) -> None:
    """Await ``play``; once a match's test decides, what is left of it is cancelled, as a normal end."""
    monitor = commit.monitor
    if monitor is None:
        await play
        return
    task = asyncio.ensure_future(play)
    commit.on_decided = task.cancel
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if not monitor.decided or (current is not None and current.cancelling() > 0):
            raise


def machine_loaded() -> bool:
    """Whether the machine's one-minute load average exceeds its cores (False where unknown)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False
    return load > (os.cpu_count() or 1)


def machine_load() -> str:
    """``load 5.2 on 2 cores``: the one-minute load average and the cores; empty where unknown."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return ""
    return f"load {load:.1f} on {os.cpu_count() or 1} cores"


class _Committer:
    """Commits each finished session with its log and tells the observers.

    In a match, each session also goes to the match's ``monitor``, and ``on_decided`` is
    called once its test has decided. ``late`` counts the late faults (those of earlier
    runs to begin with), each session's with whether the machine was loaded then: once
    they say the machine is busy, the progress told to the observers says so, and the
    run's end carries their one-line summary.
    """

    def __init__(
        self,
        run: _Run,
        *,
        total: int,
        recorded: int,
        monitor: MatchMonitor | None = None,
        late: LateFaults | None = None,
    ) -> None:
        self.store = run.store
        self.observers = run.options.observers
        self.total = total
        """All the tournament's sessions."""
        self.monitor = monitor
        self.late = LateFaults() if late is None else late
        self.on_decided: Callable[[], object] | None = None
        self.count = recorded
        """Sessions of the tournament recorded so far (including earlier runs)."""

    def __call__(self, result: SessionResult, log: bytes) -> None:
        self.store.record_session(result, log=log)
        self.count += 1
        self.late.add(result, loaded=LateFaults.late_in(result) and machine_loaded())
        monitor = self.monitor
        was_decided = monitor is not None and monitor.decided
        if monitor is not None:
            monitor.add(result)
        progress = self.progress()
        for observer in self.observers:
            observer.committed(result, progress)
        if monitor is not None and monitor.decided and not was_decided and self.on_decided is not None:
            self.on_decided()

    def progress(self) -> RunProgress:
        """How far the tournament is now."""
        monitor = self.monitor
        test = None
        if monitor is not None and monitor.plan.sprt is not None:
            test = f"{monitor.plan.candidate}: {monitor.describe()}"
        return RunProgress(
            recorded=self.count,
            sessions=self.total,
            test=test,
            busy=self.late.busy,
            decided=monitor is not None and monitor.decided,
        )

    def late_summary(self) -> str | None:
        """The one line on the late faults so far, with the machine's load now (None: there were none)."""
        return self.late.summary(load=machine_load())


@contextlib.contextmanager
def _sigterm_cancels(task: asyncio.Task[Any] | None) -> Iterator[list[str]]:
    """While open, SIGTERM cancels ``task`` as Ctrl-C would, and is named in the list yielded.

    Where the event loop cannot take signals (not the main thread, Windows), or with no
    ``task``, nothing changes.
    """
    signalled: list[str] = []
    if task is None:  # the process's own signals are someone else's
        yield signalled
        return

    def cancel() -> None:
        signalled.append("SIGTERM")
        task.cancel()

    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGTERM, cancel)
    try:
        yield signalled
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGTERM)


async def _report_standings(run: _Run, observer: RunObserver) -> None:
    """Every ``observer.standings_every`` seconds, hand it the standings so far (once there are any)."""
    every = observer.standings_every or 0.0
    has_pool = run.config.profile.has_pool  # the declarers' pool records show
    while True:
        await asyncio.sleep(every)
        tally = run.store.tally([run.tournament])
        if tally.sessions:
            observer.standings(standings_of(tally, has_pool=has_pool))
