"""Practice sessions for one bot against the built-in bots: ``nap bot check``.

The bot plays a small tournament in which it sits at every table (against ``random`` and
``peel``), in a throw-away database. The report counts its decisions, its latency
percentiles and its faults by kind; the verdict is ``pass`` only with no fault at all.
"""

from __future__ import annotations

import statistics
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE
from tournaments.bots import BUILTIN_BOTS, RunnerError
from tournaments.config import TournamentConfig
from tournaments.logfiles import read_log
from tournaments.runner import RunOptions, run_tournament
from tournaments.store import Store

if TYPE_CHECKING:
    from tournaments.bots import BotEntry

OPPONENTS = ("peel", "random")


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What a practice run showed about one bot.

    ``latency_ms`` holds the p50, p90, p99 and max of its decision latency in
    milliseconds (empty when it made no decision); ``error`` is set when the bot could not
    be run at all (no such command, never connected).
    """

    bot: str
    sessions: int
    decisions: int
    latency_ms: dict[str, float] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)
    chips_per_session: float = 0.0
    error: str | None = None

    @property
    def passed(self) -> bool:
        """True when the bot ran every session without a fault."""
        return self.error is None and self.sessions > 0 and not self.faults


def check_bot(  # noqa: PLR0913 - keyword options of `nap bot check`
    entry: BotEntry,
    *,
    sessions: int = 8,
    table_size: int = 3,
    profile: str = DEFAULT_PROFILE.name,
    seed: int = 1,
    decision_ms: int = 1000,
    progress: Any = None,  # noqa: ANN401 - a rich Progress, owned by the CLI
) -> CheckReport:
    """Play practice sessions with ``entry`` seated at every table; report its behaviour."""
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
    )
    with tempfile.TemporaryDirectory(prefix="nap-check-") as scratch:
        root = Path(scratch)
        with Store.open(root / "check.db") as store:
            try:
                tournament = run_tournament(
                    config, store=store, logs_root=root / "logs", options=RunOptions(progress=progress)
                )
            except RunnerError as exc:
                return CheckReport(entry.name, 0, 0, error=str(exc))
            return _report(entry.name, store, tournament)


def _report(bot: str, store: Store, tournament: int) -> CheckReport:
    latencies: list[float] = []
    faults: Counter[str] = Counter()
    chips = 0
    rows = store.find_sessions(tournament=tournament)
    for row in rows:
        seat = row.bots.index(bot)
        log = read_log(row.log_path)
        for deal in cast("list[list[dict[str, Any]]]", log["decisions"]):
            latencies.extend(
                float(d["latency_ms"]) for d in deal if d["seat"] == seat and not d.get("forced")
            )
    for result in store.session_results(tournament):
        chips += next(seat.chips for seat in result.seats if seat.bot == bot)
        faults.update(fault.kind for fault in result.faults if fault.bot == bot)
    latency: dict[str, float] = {}
    if latencies:
        latencies.sort()
        cut = (
            statistics.quantiles(latencies, n=100, method="inclusive")
            if len(latencies) > 1
            else latencies * 99
        )
        latency = {"p50": cut[49], "p90": cut[89], "p99": cut[98], "max": latencies[-1]}
    return CheckReport(
        bot, len(rows), len(latencies), latency, dict(faults), chips / len(rows) if rows else 0.0
    )
