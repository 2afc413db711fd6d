"""What a tournament measured, as data: the record beside its standings and behind ``nap tournament status``.

Standings mean nothing without what produced them: which bots (each version and content
hash), under which rules (the profile with its house-rule overrides), at what table
size, seed, number of sessions and blocks, time limits and executor, when, and by which
Nap Arena. :func:`describe_tournament` gathers that from the store's rows into plain
JSON-ready data; it reads no clock, and no file but the installed package's metadata (its
version). ``docs/standings.md`` documents the keys.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from referee.rules import DEFAULT_PROFILE
from tournaments.errors import RunnerError
from tournaments.plan.config import stored_profile, time_limits_from_json
from tournaments.plan.isolation import LOCAL_ON_THE_WALL, BotLimits
from tournaments.store.schema import UNCONTAINED_BEFORE

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tournaments.play.executors.base import Usage
    from tournaments.stats.load_check import LateFaults
    from tournaments.store.database import TournamentRow

__all__ = [
    "TOURNAMENT_FORMAT",
    "arena_version",
    "describe_tournament",
    "isolation_record",
    "profile_record",
    "shown_seed",
]

TOURNAMENT_FORMAT = "nap-arena-tournament/2"
"""Identifies the layout of :func:`describe_tournament`'s data; bumped whenever a key changes
meaning or disappears (keys may be added without a bump)."""


def arena_version() -> str:
    """The installed Nap Arena's version, or ``unknown`` when it runs from an uninstalled tree."""
    try:
        return version("nap-arena")
    except PackageNotFoundError:
        return "unknown"


def profile_record(config: Mapping[str, Any]) -> dict[str, Any]:
    """The rules as played, from a stored config: the profile's name, source and every parameter.

    The tournament stored its rules as a value (:class:`~tournaments.plan.config.TournamentConfig`),
    so this reads no file (but the house-rules file a tournament stored by an older Nap
    Arena named instead); rules that cannot be read back leave ``error`` with the reason.
    """
    try:
        rules = stored_profile(config.get("profile", DEFAULT_PROFILE.name))
    except RunnerError as exc:
        return {"error": str(exc)}
    return {"name": rules.name, "source": rules.source, "parameters": rules.to_json()}


def isolation_record(row: TournamentRow) -> dict[str, Any]:
    """Whether every run of the tournament isolated its bots (docs/security.md), as asked and as done.

    ``sandbox`` is the ``--sandbox`` mode asked for, ``bot_limits`` each isolated bot
    process's limits; ``isolated`` is false once a run played a bot without isolation
    (a remote bot, ``--sandbox off``, no bubblewrap), ``reason`` says why. ``contained``
    is false once a run played a local bot outside a cgroup of its own or a remote bot,
    ``containment`` says why; ``clocks`` is each bot's clock (:func:`bot_clocks`).
    """
    config: Mapping[str, Any] = row.config
    return {
        "isolated": row.unisolated is None,
        "reason": row.unisolated,
        "sandbox": config.get("sandbox", "auto"),
        "bot_limits": BotLimits.from_json(config.get("bot_limits")).to_json(),
        "contained": row.uncontained is None,
        "containment": row.uncontained,
        "clocks": bot_clocks(row),
    }


def bot_clocks(row: TournamentRow) -> dict[str, str]:
    """The clock each bot's decisions ran on (``cpu`` or ``wall``), in every run of ``row``'s tournament.

    A remote bot is on the wall clock; a local bot on its own CPU unless a run could not
    read it (:data:`~tournaments.plan.isolation.LOCAL_ON_THE_WALL`), or the tournament
    was played before bots were clocked in their CPU (its file upgraded).
    """
    uncontained = row.uncontained or ""
    local = "wall" if uncontained == UNCONTAINED_BEFORE or LOCAL_ON_THE_WALL in uncontained else "cpu"
    config: Mapping[str, Any] = row.config
    return {str(bot.get("name")): local if bot.get("command") else "wall" for bot in config.get("bots", [])}


def shown_seed(row: TournamentRow) -> int | None:
    """The tournament's seed once it has finished; None before: the seed gives every card away.

    While a tournament may still be played (running, or interrupted and resumable), a
    bot that learned its seed would know every deal to come.
    """
    return row.seed if row.status == "finished" else None


def describe_tournament(  # noqa: PLR0913 - each a separate fact from the store
    row: TournamentRow,
    *,
    played: int,
    planned: int,
    blocks: int,
    faults: int,
    usage: Usage | None,
    late: LateFaults | None = None,
) -> dict[str, Any]:
    """Everything that says what ``row``'s tournament measured, as JSON-ready data.

    ``played`` and ``planned`` count sessions, ``blocks`` the duplicate blocks scheduled;
    ``usage`` is the executor recorded for its latest run (None when there is no record);
    ``late`` its late faults, which say whether the machine was too busy for the clock
    (:mod:`tournaments.stats.load_check`; None: not counted).
    Times are the store's: ISO 8601 in UTC; ``finished_at`` is None until it finishes.
    """
    config: Mapping[str, Any] = row.config
    limits = time_limits_from_json(config.get("time_limits"))
    bots = config.get("bots", [])
    return {
        "format": TOURNAMENT_FORMAT,
        "id": row.id,
        "name": row.name,
        "status": row.status,
        "started_at": row.created_at,
        "finished_at": row.finished_at,
        "seed": shown_seed(row),
        "table_size": config.get("table_size"),
        "sessions": {"played": played, "planned": planned},
        "blocks": blocks,
        "faults": faults,
        "profile": profile_record(config),
        "time_limits": {
            "decision_ms": limits.decision_ms,
            "session_bank_ms": limits.session_bank_ms,
            "margin_ms": limits.margin_ms,
            "backstop_ms": limits.backstop,
        },
        "executor": None
        if usage is None
        else {
            "executor": usage.executor,
            "workers": usage.workers,
            "description": usage.description,
            "lost": usage.lost,
        },
        "workers_asked": config.get("workers"),
        "concurrency": config.get("concurrency"),
        "max_restarts": config.get("max_restarts"),
        "connect_timeout_s": config.get("connect_timeout_s"),
        "fault_policy": config.get("fault_policy"),
        "isolation": isolation_record(row),
        "load": None if late is None else late.to_json(),
        "bots": [
            {
                "name": bot.get("name"),
                "version": bot.get("version"),
                "content_hash": bot.get("content_hash"),
                "remote": not bot.get("command"),
            }
            for bot in bots
        ],
        "match": config.get("match"),
        "nap_arena_version": arena_version(),
    }
