"""Practice sessions for one bot against the built-in bots: ``nap bot check``.

The bot plays a small tournament in which it sits at every table (against ``random`` and
``peel``), in a throw-away database. The report counts its decisions, its latency
percentiles and its faults by kind, names its opponents, and keeps the exit status and
last output lines of a bot that died; the verdict is ``pass`` only with no fault and no
exit at all. The same deals are then played by a reference bot (``peel``) in its seat,
so that its score reads against the reference's on the same cards.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE, Profile
from tournaments.errors import RunnerError, TournamentInterrupted
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import BUILTIN_BOTS
from tournaments.plan.isolation import BotLimits
from tournaments.play.botlogs import bot_output
from tournaments.play.runner import RunOptions, run_tournament_async
from tournaments.stats.estimates import Estimate, estimate
from tournaments.store.database import Store
from tournaments.store.logs import decode_log

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tournaments.plan.entries import BotEntry
    from tournaments.play.observers import RunObserver
    from tournaments.results import SessionResult

OPPONENTS = ("peel", "random")
BASELINE = "peel"
"""The reference bot whose score on the same practice deals gives a bot's score a meaning."""


@dataclass(frozen=True, slots=True)
class BaselineScore:
    """The practice deals played again with ``bot`` (the reference) in the checked bot's seat.

    ``difference`` is the checked bot's chips per session minus the reference's, session
    by session on the same deals and seats, averaged per block, with its 95% interval
    over blocks (None when the baseline could not be played: ``error`` says why).
    """

    bot: str
    chips_per_session: float = 0.0
    difference: Estimate | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data, as ``nap bot check --json`` prints it."""
        return {
            "bot": self.bot,
            "chips_per_session": self.chips_per_session,
            "difference": None if self.difference is None else self.difference.to_json(),
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What a practice run showed about one bot.

    ``latency_ms`` holds the p50, p90, p99 and max of its decision latency in
    milliseconds (empty when it made no decision), ``cpu_ms`` the same of the CPU its
    decisions were charged on the CPU clock (empty when none was on it: where the
    referee cannot read its CPU); ``error`` is set when the bot could not
    be run at all (no such command, never connected). ``exits`` are the exit statuses of
    its process when it ended on its own, ``last_output`` the last lines it wrote (stdout
    and stderr), ``opponents`` who sat with it, ``baseline`` the reference's score.
    """

    bot: str
    sessions: int
    decisions: int
    latency_ms: dict[str, float] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)
    chips_per_session: float = 0.0
    error: str | None = None
    opponents: tuple[str, ...] = ()
    exits: tuple[int, ...] = ()
    last_output: tuple[str, ...] = ()
    baseline: BaselineScore | None = None
    exit_reasons: tuple[str, ...] = ()
    """Why each exit happened, where its status or last lines said (a limit reached): "" otherwise."""
    cpu_ms: dict[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when the bot played its sessions with no fault, no exit of its process and no error.

        The score, and the baseline's on the same deals, are no part of it.
        """
        return self.error is None and self.sessions > 0 and not self.faults and not self.exits

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data, as ``nap bot check --json`` prints it."""
        return {
            "format": "nap-arena-check/1",
            "bot": self.bot,
            "passed": self.passed,
            "sessions": self.sessions,
            "decisions": self.decisions,
            "latency_ms": self.latency_ms,
            "cpu_ms": self.cpu_ms,
            "faults": self.faults,
            "chips_per_session": self.chips_per_session,
            "error": self.error,
            "opponents": list(self.opponents),
            "exits": list(self.exits),
            "exit_reasons": list(self.exit_reasons),
            "last_output": list(self.last_output),
            "baseline": None if self.baseline is None else self.baseline.to_json(),
        }


async def check_bot_async(  # noqa: PLR0913 - keyword options of `nap bot check`
    entry: BotEntry,
    *,
    sessions: int = 8,
    table_size: int = 3,
    profile: Profile = DEFAULT_PROFILE,
    seed: int = 1,
    decision_ms: int = 1000,
    baseline: str | None = BASELINE,
    observers: tuple[RunObserver, ...] = (),
    sandbox: str = "auto",
    bot_limits: BotLimits | None = None,
    signals: bool = True,
) -> CheckReport:
    """Play practice sessions with ``entry`` seated at every table; report its behaviour.

    With ``baseline`` (a built-in bot), the same sessions are played again with that bot
    in ``entry``'s seat, against the same opponents on the same deals, and the report
    gives both scores and their difference. ``sandbox`` and ``bot_limits`` isolate the bots
    as in a tournament (:class:`~tournaments.plan.config.TournamentConfig`). ``observers``
    follow both runs (:mod:`tournaments.play.observers`: the command line's progress line).
    On the caller's event loop (an arena admits submissions while its ladder plays, and
    keeps its signals: ``signals=False``); :func:`check_bot` runs it in a fresh one.
    """
    opponents = [BUILTIN_BOTS[name] for name in OPPONENTS if name != entry.name]
    while len(opponents) < table_size - 1:
        base = BUILTIN_BOTS[OPPONENTS[len(opponents) % len(OPPONENTS)]]
        opponents.append(base.renamed(f"{base.name}-{len(opponents) + 1}"))
    entrants = (entry, *opponents[: table_size - 1])
    config = TournamentConfig(
        name=f"check {entry.name}",
        bots=entrants,
        table_size=table_size,
        sessions=sessions,
        seed=seed,
        profile=profile,
        concurrency=4,
        max_restarts=0,
        time_limits=TimeLimits(decision_ms=decision_ms),
        sandbox=sandbox,
        bot_limits=bot_limits or BotLimits(),
    )
    with tempfile.TemporaryDirectory(prefix="nap-check-") as scratch:
        root = Path(scratch)
        options = RunOptions(observers=observers, signals=signals)
        report, results = await _practice(config, entry.name, root / "bot", options)
        if baseline is None or report.error is not None or not results:
            return report
        reference = replace(
            config,
            name=f"check {entry.name}: {baseline} in its seat",
            bots=(BUILTIN_BOTS[baseline].renamed(entry.name), *entrants[1:]),
        )
        again, reference_results = await _practice(reference, entry.name, root / "baseline", options)
        return replace(report, baseline=_compare(baseline, entry.name, results, again, reference_results))


def check_bot(  # noqa: PLR0913 - keyword options of `nap bot check`
    entry: BotEntry,
    *,
    sessions: int = 8,
    table_size: int = 3,
    profile: Profile = DEFAULT_PROFILE,
    seed: int = 1,
    decision_ms: int = 1000,
    baseline: str | None = BASELINE,
    observers: tuple[RunObserver, ...] = (),
    sandbox: str = "auto",
    bot_limits: BotLimits | None = None,
) -> CheckReport:
    """:func:`check_bot_async` in a fresh event loop (for the command line)."""
    return asyncio.run(
        check_bot_async(
            entry,
            sessions=sessions,
            table_size=table_size,
            profile=profile,
            seed=seed,
            decision_ms=decision_ms,
            baseline=baseline,
            observers=observers,
            sandbox=sandbox,
            bot_limits=bot_limits,
        )
    )


async def _practice(
    config: TournamentConfig, bot: str, root: Path, options: RunOptions
) -> tuple[CheckReport, list[SessionResult]]:
    """Play ``config`` in a throw-away database under ``root``; the report on ``bot`` and the results."""
    opponents = tuple(entry.name for entry in config.bots if entry.name != bot)
    logs = root / "logs"
    root.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 - one local folder, made at once
    with Store.open(root / "check.db") as store:
        try:
            tournament = await run_tournament_async(config, store=store, logs_root=logs, options=options)
        except RunnerError as exc:
            # what stopped it, without the resume hint: the practice database is thrown away
            reason = exc.__cause__ if isinstance(exc, TournamentInterrupted) and exc.__cause__ else exc
            said = bot_output(logs.glob("t*/bots"), bot)
            failed = CheckReport(
                bot,
                0,
                0,
                error=str(reason),
                opponents=opponents,
                exits=said.exits,
                last_output=said.last_lines,
                exit_reasons=said.reasons,
            )
            return failed, []
        report = _report(bot, store, tournament)
        results = store.session_results(tournament)
    said = bot_output(logs.glob("t*/bots"), bot)
    report = replace(
        report, opponents=opponents, exits=said.exits, last_output=said.last_lines, exit_reasons=said.reasons
    )
    return report, results


def _compare(
    reference: str,
    bot: str,
    results: Sequence[SessionResult],
    again: CheckReport,
    reference_results: Sequence[SessionResult],
) -> BaselineScore:
    """The reference's score and the bot's edge over it, paired session by session."""
    if again.error is not None or not reference_results:
        return BaselineScore(reference, error=again.error or "no session played")
    theirs = {(r.block, r.rotation): _chips(r, bot) for r in reference_results}
    by_block: dict[int, list[float]] = {}
    for result in results:
        key = (result.block, result.rotation)
        if key in theirs:
            by_block.setdefault(result.block, []).append(_chips(result, bot) - theirs[key])
    if not by_block:
        return BaselineScore(reference, again.chips_per_session, error="no session in common")
    difference = estimate([statistics.fmean(values) for values in by_block.values()])
    return BaselineScore(reference, again.chips_per_session, difference)


def _chips(result: SessionResult, bot: str) -> int:
    return next(seat.chips for seat in result.seats if seat.bot == bot)


def _report(bot: str, store: Store, tournament: int) -> CheckReport:
    latencies: list[float] = []
    cpu: list[float] = []
    faults: Counter[str] = Counter()
    chips = 0
    rows = store.find_sessions(tournament=tournament)
    for row in rows:
        seat = row.bots.index(bot)
        log = decode_log(store.log(row.id), name=f"the log of session {row.id}")
        for deal in cast("list[list[dict[str, Any]]]", log["decisions"]):
            asked = [d for d in deal if d["seat"] == seat and not d.get("forced")]
            latencies.extend(float(d["latency_ms"]) for d in asked)
            cpu.extend(float(d["cpu_ms"]) for d in asked if d.get("cpu_ms") is not None)
    for result in store.session_results(tournament):
        chips += _chips(result, bot)
        faults.update(fault.kind for fault in result.faults if fault.bot == bot)
    return CheckReport(
        bot,
        len(rows),
        len(latencies),
        _spread(latencies),
        dict(faults),
        chips / len(rows) if rows else 0.0,
        cpu_ms=_spread(cpu),
    )


def _spread(values: list[float]) -> dict[str, float]:
    """The p50, p90, p99 and max of ``values`` (none when there are none)."""
    if not values:
        return {}
    values = sorted(values)
    cut = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else values * 99
    return {"p50": cut[49], "p90": cut[89], "p99": cut[98], "max": values[-1]}
